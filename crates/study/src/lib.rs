//! acclab-study: runs as data, and studies made of many runs.
//!
//! - [`run`]: one run of a scenario to its summary with the theory's prediction beside it.
//! - [`plan`]: a sweep (keys × values × seeds, [`acclab_scenario::sweep`]) as a list of runs,
//!   each with an id hashed from its effective scenario.
//! - [`store`]: a sweep's directory — one small record per finished run (so a sweep resumes),
//!   files written whole or not at all.
//! - [`table`]: the tidy table (a row per run and entity) and the aggregates over seeds.
//! - [`chart`]: each metric against each swept key, with confidence bars and the theory.
//! - [`sweep`]: running a plan's missing runs on a thread pool, and collecting.

pub mod chart;
pub mod plan;
pub mod run;
pub mod store;
pub mod sweep;
pub mod table;

pub use acclab_sim::parallelism::Threads;
pub use plan::{Plan, PlannedRun};
pub use run::{
    attach_theory, default_threads, env_threads, model_scenario, run_scenario, run_scenario_on,
    threads_or_default, Finished,
};

/// What can go wrong in a study beyond a bad scenario.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Scenario(#[from] acclab_scenario::ScenarioError),
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    /// Refused to go on, with the reason and what to do.
    #[error("{0}")]
    Refused(String),
}
