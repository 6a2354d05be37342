//! acclab-model: the model tier (SPEC §1) — the dynamics the papers analyse, as equations, on a
//! scenario's own topology, written out with the simulator's file names and columns so that a
//! model trajectory can be set beside a packet-level one.
//!
//! - [`network`]: the scenario in the model's terms (capacities, buffers, each flow's hops and
//!   the delays between them and the source), and what is outside the domain;
//! - [`integrator`]: the integrator (method, step and order of a step in its header);
//! - [`history`]: the state history the delays read;
//! - source laws: [`acc`] (000 eqs. (3), (5), (6), (10); 003 Algorithm 1), [`vegas`] (002 eqs.
//!   (16)–(19); Vegas+REM, 002 §5), [`reno`] (Misra–Gong–Towsley), [`cbr`];
//! - queue laws: [`red`] (Hollot et al.), [`rem`] (002 eqs. (30)–(31)), [`avq`] (AVQ; AVD,
//!   000 §IV-D); a droptail or priority queue is the integrator's fluid FIFO;
//! - [`summary`]: the run's summary.json (its flows.csv and links.csv are written by
//!   `acclab_results::samples`, from [`Model::names`]).
//!
//! The links are fluid queues: the backlog b_l integrates arrivals less service at capacity
//! c_l, within [0, buffer]; the link price of 002 (eq. (16)) is the queueing delay b_l/c_l. A
//! flow's share of a queue is tracked per flow and link, so its accumulation is 000 eq. (1)
//! itself. Departures from the packet level common to every law: ACK traffic does not load the
//! reverse links (it has no queue of its own in the model); every packet has the data size. A
//! link whose arrivals can never exceed its capacity (`Network::cannot_queue`, e.g. an egress
//! access link behind a slower bottleneck) is integrated as the pure delay it is.

pub mod acc;
pub mod avq;
pub mod cbr;
pub mod classes;
pub mod cost;
pub mod feedback;
pub mod history;
pub mod integrator;
pub mod network;
pub mod red;
pub mod rem;
pub mod reno;
pub mod stability;
pub mod summary;
pub mod vegas;

pub use classes::Grouping;
pub use integrator::{parse_step, Memory, Model, Settings};
pub use network::Outside;

use std::path::Path;

/// Runs the model of `sc` and writes flows.csv, links.csv (into `dir`); returns the summary
/// (the caller writes summary.json, with whatever it adds). `progress` is told the model time
/// reached, 200 times over the run (as the simulator's `run` tells its time).
pub fn run_to(
    sc: &acclab_scenario::Scenario,
    settings: Settings,
    dir: &Path,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> Result<acclab_results::Summary, Box<dyn std::error::Error + Send + Sync>> {
    let mut m = Model::new(sc, settings)?;
    let mut sink = acclab_results::samples::CsvSamples::create(dir, m.names())?;
    let t0 = std::time::Instant::now();
    let end = sc.duration.0;
    // Running in stretches takes the same steps and samples as one run to the end.
    let stretch = (end / 200).max(1);
    let mut t = 0;
    while t < end {
        t = (t + stretch).min(end);
        m.run_until(t, &mut sink);
        progress(acclab_core::Time(t));
    }
    let wall = t0.elapsed().as_secs_f64();
    acclab_results::samples::SampleSink::<f64>::finish(&mut sink)?;
    Ok(summary::summary(&m, wall))
}

/// Runs the model of `sc` keeping its samples in memory.
pub fn run_in_memory(
    sc: &acclab_scenario::Scenario,
    settings: Settings,
) -> Result<(acclab_results::Summary, Memory), Outside> {
    let mut m = Model::new(sc, settings)?;
    let mut mem = Memory::default();
    let t0 = std::time::Instant::now();
    m.run(&mut mem);
    let wall = t0.elapsed().as_secs_f64();
    Ok((summary::summary(&m, wall), mem))
}

/// The model's equilibrium: its fixed point, where the theory has none as much as where it has.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedPoint {
    /// Each flow's rate, bit/s (0 for a flow not active at the end).
    pub throughput_bps: Vec<f64>,
    /// Each link's queue, packets, at the end.
    pub queue_pkts: Vec<f64>,
    /// Whether the rates settled: their means over successive 5 s stretches moved by less than
    /// 0.02% (sign laws such as Vegas' chatter about their equilibrium; a slow loop with a time
    /// constant τ is then within about 0.02%·τ/5 s of its end point).
    pub settled: bool,
}

/// The fixed point of `sc`'s model: the laws integrated without feedback delay (002's network
/// model is so written; the equilibrium does not depend on the delays, the dynamics do) to the
/// end of the measurement window, then on with the flows active then until the rates settle (at
/// most 600 s more). A law that holds over a range (Vegas with α < β) settles at the point its
/// trajectory reaches.
pub fn fixed_point(sc: &acclab_scenario::Scenario) -> Result<FixedPoint, Outside> {
    let mut m = Model::new(
        sc,
        Settings {
            instantaneous: true,
            ..Settings::default()
        },
    )?;
    m.run_until(sc.output.window.1 .0, &mut ());
    let (rates, settled) = m.settle(5.0, 2e-4, 600.0);
    let bits = 8.0 * m.net.packet_size;
    Ok(FixedPoint {
        throughput_bps: rates.iter().map(|x| x * bits).collect(),
        queue_pkts: m.backlog().to_vec(),
        settled,
    })
}
