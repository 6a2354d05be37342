//! acclab-theory: what the allocation should be (SPEC §8).
//!
//! - [`equilibrium`]: a scenario's predicted equilibrium, for `acclab theory` and `acclab run`.
//! - [`expected`]: expected-minimum-rate services with accumulation limits (003 §IV).
//! - [`num`]: weighted proportional fairness (and its variants) with a conic solver.
//! - [`vegas_error`]: Vegas with baseRTT error, the serial-arrival recursion of 002 eqs. (27)–(29).

pub mod equilibrium;
pub mod expected;
pub mod maxmin;
pub mod num;
pub mod vegas_error;

pub use equilibrium::{predict, predict_listed, unlisted_note, Equilibrium};
