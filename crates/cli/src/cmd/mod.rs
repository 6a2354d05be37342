//! The commands, each in its own file beside its arguments; `main.rs` only dispatches.

pub mod bench;
pub mod capacity;
pub mod check;
pub mod demo;
pub mod live;
pub mod model;
pub mod params;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod show;
pub mod sweep;
pub mod theory;
