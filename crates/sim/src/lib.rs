//! acclab-sim: the packet-level discrete-event simulator.
//!
//! It runs an [`acclab_scenario::Scenario`] (the scenario model and its TOML front end live in
//! that crate).
//!
//! - [`simulator`]: the event loop driving `acclab-core` endpoints and queues.
//! - [`monitor`]: periodic samples and measurement-window snapshots, reading the simulator's
//!   links and flows through [`observe`]'s probe traits.
//! - [`output`]: the run's summary, `flows.csv` and `links.csv`, in `acclab_results`' shapes.
//! - [`events`]: the event queue; `pipes`: the packets propagating on every link;
//!   `telemetry`: the in-band telemetry queues write for the flows that want it (HPCC).

pub mod cost;
pub mod events;
pub mod monitor;
pub mod observe;
pub mod output;
pub mod parallelism;
mod pipes;
mod routes;
pub mod simulator;
mod telemetry;
pub mod trace;

pub use simulator::Simulator;

/// Simulates `scenario` to its end and returns the finished simulator with its summary.
/// `progress` is told the simulated time now and then (for progress bars).
pub fn run(
    scenario: acclab_scenario::Scenario,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> (Simulator, acclab_results::Summary) {
    run_on(scenario, 1, progress)
}

/// [`run`] on `threads` threads ([`Simulator::run_on`]).
pub fn run_on(
    scenario: acclab_scenario::Scenario,
    threads: usize,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> (Simulator, acclab_results::Summary) {
    let mut sim = Simulator::new(scenario);
    let t0 = std::time::Instant::now();
    sim.run_on(threads, progress);
    let wall = t0.elapsed().as_secs_f64();
    let summary = output::summary(&sim, wall);
    (sim, summary)
}
