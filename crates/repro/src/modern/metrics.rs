//! modern-comparison's measurements: one network's numbers in one run (utilisation, queueing
//! delay, Jain's index, RTT unfairness, drops), the theory's and the model tier's beside them.

use acclab_scenario::Scenario;

use crate::common::{self, Run};

/// One network's numbers in one run.
#[derive(Clone, Debug, Default)]
pub(super) struct Metrics {
    pub(super) utilization: f64,
    pub(super) delay_mean_ms: f64,
    pub(super) delay_p95_ms: f64,
    pub(super) jain: f64,
    pub(super) rtt_unfairness: f64,
    pub(super) drop_pct: f64,
    pub(super) marks_per_s: f64,
    pub(super) timeouts: u64,
    /// The theory's values where it predicts every flow of the network.
    pub(super) theory: Option<TheoryMetrics>,
    /// The model tier's, where the scenario is in its domain: utilisation, RTT unfairness.
    pub(super) model: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub(super) struct TheoryMetrics {
    pub(super) utilization: f64,
    pub(super) delay_ms: f64,
    pub(super) jain: f64,
    pub(super) rtt_unfairness: f64,
}

/// A flow of one run.
pub(super) struct FlowRow {
    pub(super) id: String,
    /// Base RTT, s.
    pub(super) rtt: f64,
    /// Goodput, b/s: measured, the theory's prediction, the model tier's (where in its domain).
    pub(super) measured: f64,
    pub(super) theory: Option<f64>,
    pub(super) model: Option<f64>,
}

pub(super) struct Outcome {
    pub(super) queue: &'static str,
    pub(super) scheme: &'static str,
    pub(super) dumbbell: Metrics,
    pub(super) parking_lot: Metrics,
    pub(super) flows: Vec<FlowRow>,
}

/// The queueing delay (ms) of link `l` at every sample: its queued bytes at the link's rate.
fn delay_series(run: &Run, l: usize) -> Vec<(f64, f64)> {
    let rate = run.sim.scenario().links[l].rate.as_f64();
    run.sim
        .monitor()
        .link_samples
        .iter()
        .filter(|s| s.link as usize == l)
        .map(|s| (s.t_s, s.queue_bytes as f64 * 8.0 / rate * 1e3))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The numbers of the network made of `links` and `flows` (indices), with `unfair` the pair of
/// flow groups whose mean throughputs make the RTT-unfairness ratio (favoured, penalised).
pub(super) fn metrics(
    run: &Run,
    links: &[usize],
    flows: &[usize],
    unfair: (&[usize], &[usize]),
) -> Metrics {
    let s = &run.summary;
    let sc = run.sim.scenario();
    let (from, to) = (s.window.from_s, s.window.to_s);
    let window = to - from;
    // The links' samples together: each link weighs the same.
    let delays: Vec<(f64, f64)> = links.iter().flat_map(|&l| delay_series(run, l)).collect();
    let mut delivered = 0.0;
    let mut drops = 0.0;
    let mut marks = 0.0;
    for &l in links {
        let ls = &s.links[l];
        delivered += ls.utilization * ls.rate_bps as f64 * window / (8.0 * sc.packet_size as f64);
        drops += ls.drops_in_window as f64;
        marks += ls.marks_in_window as f64;
    }
    let group_mean = |g: &[usize], x: &dyn Fn(usize) -> Option<f64>| -> Option<f64> {
        let v: Option<Vec<f64>> = g.iter().map(|&i| x(i)).collect();
        v.map(|v| mean(&v))
    };
    let measured = |i: usize| Some(s.flows[i].throughput_bps);
    let predicted = |i: usize| s.flows[i].theory.as_ref().map(|t| t.throughput_bps);
    let ratio = |x: &dyn Fn(usize) -> Option<f64>| -> Option<f64> {
        Some(group_mean(unfair.0, x)? / group_mean(unfair.1, x)?)
    };
    let theory = (|| {
        let thr: Option<Vec<f64>> = flows.iter().map(|&i| predicted(i)).collect();
        let thr = thr?;
        let mut util = 0.0;
        let mut delay = 0.0;
        for &l in links {
            let t = s.links[l].theory.as_ref()?;
            util += t.utilization;
            delay += t.queue_pkts * 8.0 * sc.packet_size as f64 / s.links[l].rate_bps as f64 * 1e3;
        }
        Some(TheoryMetrics {
            utilization: util / links.len() as f64,
            delay_ms: delay / links.len() as f64,
            jain: acclab_results::summary::jain(&thr)?,
            rtt_unfairness: ratio(&predicted)?,
        })
    })();
    let fluid = |i: usize| s.flows[i].model.as_ref().map(|m| m.throughput_bps);
    let model = (|| {
        let util: Option<Vec<f64>> = links
            .iter()
            .map(|&l| s.links[l].model.as_ref().map(|m| m.utilization))
            .collect();
        Some((mean(&util?), ratio(&fluid)?))
    })();
    let thr: Vec<f64> = flows.iter().map(|&i| s.flows[i].throughput_bps).collect();
    Metrics {
        utilization: links.iter().map(|&l| s.links[l].utilization).sum::<f64>()
            / links.len() as f64,
        delay_mean_ms: common::period_mean(&delays, from, to),
        delay_p95_ms: common::period_p95(&delays, from, to),
        jain: acclab_results::summary::jain(&thr).unwrap_or(f64::NAN),
        rtt_unfairness: ratio(&measured).unwrap_or(f64::NAN),
        drop_pct: 100.0 * drops / (drops + delivered).max(1.0),
        marks_per_s: marks / window.max(1e-9),
        timeouts: flows.iter().map(|&i| s.flows[i].timeouts).sum(),
        theory,
        model,
    }
}

/// Flow indices whose id starts with `prefix`.
pub(super) fn flows_of(sc: &Scenario, prefix: &str) -> Vec<usize> {
    (0..sc.flows.len())
        .filter(|&i| sc.flows.get(i).id.starts_with(prefix))
        .collect()
}

/// The run of scheme `s` behind queue `q`.
pub(super) fn outcome<'a>(outcomes: &'a [Outcome], q: &str, s: &str) -> &'a Outcome {
    outcomes
        .iter()
        .find(|o| o.queue == q && o.scheme == s)
        .expect("every (queue, scheme) case ran")
}
