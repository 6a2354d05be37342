//! acclab-theory: what the allocation should be.
//!
//! This crate will hold the network-utility-maximisation solver (weighted proportional fairness
//! with a convex solver) and the closed-form equilibria of the papers (SPEC §8). It is a skeleton
//! until the Vegas/theory work lands; `acclab theory` says so rather than printing a guess.

/// Whether the theory tier can predict anything yet.
pub const AVAILABLE: bool = false;
