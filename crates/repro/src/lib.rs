//! acclab-repro: the paper experiments of EXPERIMENTS.md, one [`Experiment`] per ID.
//!
//! An experiment loads its scenario (or family of scenarios) from `scenarios/repro/` (compiled
//! in, so the binary works from any directory), runs it, computes the comparison rows (paper
//! value, theory value, measured value, tolerance, pass/fail) and draws its figure. `--quick`
//! runs the `<id>.quick.toml` variant, scaled down to run in seconds while checking the same
//! claim.
//!
//! Adding a reproduction: write its scenario files, implement [`Experiment`] (usually in the
//! module of its paper) and add one line to [`registry`].

pub mod acc;
pub mod clcc;
pub mod common;
pub mod qos;
pub mod report;
pub mod vegas;

use std::path::PathBuf;

pub use report::{Report, Row};

/// Why a reproduction could not run (as opposed to running and failing its checks).
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    #[error(transparent)]
    Scenario(#[from] acclab_scenario::ScenarioError),
    #[error("theory: {0}")]
    Theory(#[from] acclab_theory::num::NumError),
    #[error("writing results: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}

/// Where and how a reproduction runs.
pub struct Ctx<'a> {
    pub quick: bool,
    /// Directory for every file the experiment writes (created by the caller).
    pub out: PathBuf,
    /// Told (run label, fraction of simulated time done) now and then.
    pub progress: &'a (dyn Fn(&str, f64) + Sync),
}

/// One reproduced experiment.
pub trait Experiment: Sync {
    /// The ID of EXPERIMENTS.md, e.g. "vegas-table1".
    fn id(&self) -> &'static str;
    /// What it reproduces, in a line.
    fn title(&self) -> &'static str;
    /// Runs it and returns the comparison (its files are in `ctx.out`).
    fn run(&self, ctx: &Ctx) -> Result<Report, ReproError>;
}

/// Every reproduction, in EXPERIMENTS.md order.
pub fn registry() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(vegas::Table1),
        Box::new(vegas::Table2),
        Box::new(vegas::Fig5),
        Box::new(vegas::Table5),
        Box::new(vegas::Fig8),
        Box::new(vegas::RemFig7),
        Box::new(acc::Fig2),
        Box::new(acc::Fig4),
        Box::new(acc::Fig5),
        Box::new(acc::Fig6),
        Box::new(acc::Fig7),
        Box::new(acc::Fig8),
        Box::new(acc::Fig9),
        Box::new(acc::Fig10),
        Box::new(acc::Fig11),
        Box::new(qos::Fig4),
        Box::new(qos::Fig5),
        Box::new(qos::Fig6),
        Box::new(qos::Fig7),
        Box::new(clcc::Fig1),
        Box::new(clcc::Fig3),
        Box::new(clcc::Fig6),
        Box::new(clcc::Fig7),
        Box::new(clcc::Fig8),
        Box::new(clcc::Fig9),
    ]
}

/// The reproduction with this ID.
pub fn find(id: &str) -> Option<Box<dyn Experiment>> {
    registry().into_iter().find(|e| e.id() == id)
}
