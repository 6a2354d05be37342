//! What every reproduction does: load a scenario, simulate it beside its theory, and reduce the
//! results to per-class averages, time series and period means.

use std::collections::BTreeMap;
use std::path::Path;

use acclab_results::plot::{Chart, Series};
use acclab_results::samples::FlowSample;
use acclab_results::summary::FlowSummary;
use acclab_results::Summary;
use acclab_scenario::Scenario;
use acclab_sim::Simulator;
use acclab_theory::Equilibrium;

use crate::{Ctx, ReproError};

/// Puts the theory beside a run's measurements (the one implementation, in acclab-study).
pub use acclab_study::attach_theory;

/// Bit/s to Mb/s.
pub fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// A linear chart with the usual axes.
pub fn chart(title: String, x: &str, y: &str, series: Vec<Series>) -> Chart {
    Chart {
        title,
        x_label: x.into(),
        y_label: y.into(),
        series,
        ..Chart::default()
    }
}

/// A finished run with its prediction.
pub struct Run {
    pub sim: Simulator,
    pub summary: Summary,
    pub eq: Option<Equilibrium>,
    /// The model tier's samples, where the scenario is in its domain.
    pub model: Option<acclab_model::Memory>,
}

impl Run {
    /// The model's time series of the mean of `f` over flows `idx` (as [`flow_series`]).
    pub fn model_flow_series(
        &self,
        idx: &[usize],
        f: impl Fn(&acclab_model::integrator::FlowRow) -> Option<f64>,
    ) -> Option<Vec<(f64, f64)>> {
        let m = self.model.as_ref()?;
        Some(mean_per_time(
            m.flows
                .iter()
                .filter(|r| idx.contains(&(r.flow as usize)))
                .filter_map(|r| f(r).map(|v| (r.t_s, v))),
        ))
    }

    /// Packets the model's flows lost between `t0` and `t1` s (its samples' cumulative counts,
    /// at the last sample at or before each), summed over the flows.
    pub fn model_lost_between(&self, t0: f64, t1: f64) -> Option<f64> {
        let m = self.model.as_ref()?;
        let mut at0 = std::collections::BTreeMap::new();
        let mut at1 = std::collections::BTreeMap::new();
        for r in &m.flows {
            if r.t_s <= t0 + 1e-9 {
                at0.insert(r.flow, r.lost_packets);
            }
            if r.t_s <= t1 + 1e-9 {
                at1.insert(r.flow, r.lost_packets);
            }
        }
        Some(at1.values().sum::<f64>() - at0.values().sum::<f64>())
    }

    /// The model's time series of a link's `f` (as [`queue_series`] for the queue).
    pub fn model_link_series(
        &self,
        link: usize,
        f: impl Fn(&acclab_model::integrator::LinkRow) -> f64,
    ) -> Option<Vec<(f64, f64)>> {
        let m = self.model.as_ref()?;
        Some(
            m.links
                .iter()
                .filter(|r| r.link as usize == link)
                .map(|r| (r.t_s, f(r)))
                .collect(),
        )
    }
}

/// Simulates `sc`, attaches the theory's prediction where it has one, and writes the standard
/// outputs (summary.json, flows.csv, links.csv) into `ctx.out/label`.
pub fn simulate(ctx: &Ctx, label: &str, sc: Scenario) -> Result<Run, ReproError> {
    let eq = acclab_theory::predict(&sc).ok();
    let total = sc.duration.0.max(1) as f64;
    // (On $ACCLAB_THREADS threads if set: the golden suite runs the reproductions in parallel.)
    let threads = acclab_study::default_threads(&sc)?;
    let (sim, summary) = acclab_sim::run_on(sc, threads, &mut |t| {
        (ctx.progress)(label, t.0 as f64 / total)
    });
    finish(ctx, label, sim, summary, eq)
}

/// Simulates every (label, scenario) case in parallel, as [`simulate`] does one, and returns
/// the runs in the order given (or the first case's error, in that order).
pub fn simulate_all<const N: usize>(
    ctx: &Ctx,
    cases: [(&str, Scenario); N],
) -> Result<[Run; N], ReproError> {
    use rayon::prelude::*;
    let runs: Vec<Result<Run, ReproError>> = cases
        .into_par_iter()
        .map(|(label, sc)| simulate(ctx, label, sc))
        .collect();
    let runs: Vec<Run> = runs.into_iter().collect::<Result<_, _>>()?;
    runs.try_into()
        .map_err(|_| ReproError::Other("a parallel run went missing".into()))
}

/// Runs `sc` live (real sockets through the router emulator, `time_scale` scenario seconds per
/// wall second), attaches the theory's prediction, and writes the standard outputs into
/// `ctx.out/label`, like [`simulate`].
pub fn run_live(ctx: &Ctx, label: &str, sc: Scenario, time_scale: f64) -> Result<Run, ReproError> {
    run_live_on(ctx, label, sc, time_scale, acclab_live::Network::loopback())
}

/// [`run_live`] on `network`. A machine that cannot build the network (namespaces without
/// root) makes the experiment [`ReproError::Unavailable`] rather than failed.
pub fn run_live_on(
    ctx: &Ctx,
    label: &str,
    sc: Scenario,
    time_scale: f64,
    network: acclab_live::Network,
) -> Result<Run, ReproError> {
    let eq = acclab_theory::predict(&sc).ok();
    let total = sc.duration.0.max(1) as f64;
    // The run's directory takes what the run writes as it goes (programs' output, a trace).
    let dir = ctx.out.join(label);
    std::fs::create_dir_all(&dir)?;
    let opts = acclab_live::LiveOptions {
        time_scale,
        network,
        files: Some(dir),
        ..acclab_live::LiveOptions::default()
    };
    let (sim, summary) = acclab_live::run(sc, &opts, &mut |t| {
        (ctx.progress)(label, t.0 as f64 / total)
    })
    .map_err(|e| {
        use acclab_live::netns::NetnsError;
        match e {
            acclab_live::LiveError::Netns(
                n @ (NetnsError::NoIp | NetnsError::Command { .. } | NetnsError::Unsupported),
            ) => ReproError::Unavailable(format!("live run: {n}")),
            e => ReproError::Other(format!("live run: {e}")),
        }
    })?;
    finish(ctx, label, sim, summary, eq)
}

/// Runs `sc` twice, simulated and live (at `time_scale`), into `ctx.out/simulation` and
/// `ctx.out/live`, and draws every flow's throughput from both in one chart, `throughput`.
pub fn simulated_and_live(
    ctx: &Ctx,
    id: &str,
    sc: &Scenario,
    time_scale: f64,
    files: &mut Vec<String>,
) -> Result<(Run, Run), ReproError> {
    let sim = simulate(ctx, "simulation", sc.clone())?;
    let live = run_live(ctx, "live", sc.clone(), time_scale)?;
    // Colour for the flow, line style for the tier: simulated solid, live dashed.
    let mut series = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let trace = |run: &Run| flow_series(&run.sim, &[i], |s| Some(mbps(s.throughput_bps)));
        series.push(Series::new(f.id.clone(), trace(&sim)));
        series.push(Series::new(format!("{} (live)", f.id), trace(&live)).as_dashed());
    }
    files.extend(acclab_results::plot::write_chart(
        &ctx.out,
        "throughput",
        &chart(
            format!("{id}: throughput, simulated (solid) and live (dashed)"),
            "time (s)",
            "throughput (Mb/s)",
            series,
        ),
    )?);
    Ok((sim, live))
}

/// The live run's counters as a report row (the router rejected nothing) and a note.
pub fn live_rows(report: &mut crate::Report, label: &str, live: &Run, time_scale: f64) {
    let Some(l) = &live.summary.live else {
        return;
    };
    report.rows.push(crate::Row::at_most(
        format!("{label}: datagrams the router rejected"),
        None,
        None,
        (l.router_rejected_malformed
            + l.router_rejected_forged
            + l.router_rejected_replayed
            + l.router_rejected_foreign) as f64,
        0.0,
    ));
    report.notes.push(format!(
        "{label} at time scale {time_scale}: {:.1} s wall; router forwarded {} datagrams, lag mean {:.3} ms / max {:.3} ms of scenario time; endpoints sent {}, received {}",
        l.wall_duration_s,
        l.router_accepted,
        l.router_mean_lag_s * 1e3,
        l.router_max_lag_s * 1e3,
        l.endpoint_sent,
        l.endpoint_received
    ));
    for why in &l.degraded {
        report.notes.push(format!("{label} run DEGRADED: {why}"));
    }
}

/// The equilibrium the theory predicts over [t0, t1] (the flows active then).
pub fn phase_theory(sc: &Scenario, t0: f64, t1: f64) -> Option<Equilibrium> {
    let mut sc = sc.clone();
    sc.output.window = (
        acclab_core::Time::from_secs_f64(t0),
        acclab_core::Time::from_secs_f64(t1),
    );
    acclab_theory::predict(&sc).ok()
}

/// Attaches the prediction and fairness indices to a finished run and writes its outputs into
/// `ctx.out/label`: the common tail of [`simulate`] and [`run_live`].
fn finish(
    ctx: &Ctx,
    label: &str,
    sim: Simulator,
    mut summary: Summary,
    eq: Option<Equilibrium>,
) -> Result<Run, ReproError> {
    attach_theory(sim.scenario(), eq.clone(), &mut summary);
    // The model tier beside the run, where the scenario is in its domain (its window means go
    // to summary.json's "model" entries and, where an experiment asks, comparison.csv).
    let model = acclab_model::run_in_memory(sim.scenario(), acclab_model::Settings::default())
        .ok()
        .map(|(model, samples)| {
            summary.attach_model(&model);
            samples
        });
    let dir = ctx.out.join(label);
    std::fs::create_dir_all(&dir)?;
    acclab_sim::output::write_files(&dir, &sim, &summary)?;
    Ok(Run {
        sim,
        summary,
        eq,
        model,
    })
}

/// Writes the scenario text an experiment used next to its results.
pub fn keep_scenario(dir: &Path, name: &str, text: &str) -> Result<(), ReproError> {
    Ok(std::fs::write(dir.join(name), text)?)
}

/// A flow's class: its id up to the last '-' ("c3a-17" → "c3a").
pub fn class_of(id: &str) -> &str {
    id.rsplit_once('-').map_or(id, |(c, _)| c)
}

/// Flow indices grouped by class, classes in name order.
pub fn classes(s: &Summary) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in s.flows.iter().enumerate() {
        out.entry(class_of(&f.id).to_string()).or_default().push(i);
    }
    out
}

/// Mean of `f` over the flows `idx` that have a value.
pub fn mean_of(s: &Summary, idx: &[usize], f: impl Fn(&FlowSummary) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = idx.iter().filter_map(|&i| f(&s.flows[i])).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Index of the link called `name`.
pub fn link(sc: &Scenario, name: &str) -> Result<usize, ReproError> {
    sc.links
        .iter()
        .position(|l| l.name == name)
        .ok_or_else(|| ReproError::Other(format!("scenario {} has no link {name}", sc.name)))
}

/// Time series of the mean of `f` over flows `idx`, one point per sample time, over the
/// samples that cover some of each flow's active time (from its start to the first sample
/// after its stop): a flow that has not started or has stopped is left out of the mean, and a
/// series whose flows are all inactive has no point there, so a plot neither draws a window
/// frozen at its last value nor averages a set with flows that are not running.
pub fn flow_series(
    sim: &Simulator,
    idx: &[usize],
    f: impl Fn(&FlowSample) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let interval = sim.scenario().output.sample_interval.as_secs_f64();
    let active = |flow: usize, t: f64| {
        let (start, stop) = sim.flow_times(flow);
        t >= start.as_secs_f64() && stop.is_none_or(|s| t - interval < s.as_secs_f64())
    };
    mean_per_time(
        sim.monitor()
            .flow_samples
            .iter()
            .filter(|s| idx.contains(&(s.flow as usize)) && active(s.flow as usize, s.t_s))
            .filter_map(|s| f(s).map(|v| (s.t_s, v))),
    )
}

/// (time, value) points averaged per sample time, in time order.
fn mean_per_time(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut acc: BTreeMap<u64, (f64, u32)> = BTreeMap::new();
    for (t, v) in points {
        let e = acc.entry((t * 1e6).round() as u64).or_insert((0.0, 0));
        e.0 += v;
        e.1 += 1;
    }
    acc.into_iter()
        .map(|(t, (sum, n))| (t as f64 / 1e6, sum / n as f64))
        .collect()
}

/// Time series of a link's queue, packets.
pub fn queue_series(sim: &Simulator, link: usize) -> Vec<(f64, f64)> {
    sim.monitor()
        .link_samples
        .iter()
        .filter(|s| s.link as usize == link)
        .map(|s| (s.t_s, s.queue_pkts as f64))
        .collect()
}

/// How fast a run went, for a report's notes: "50.0 s simulated in 1.01 s wall (… events, … M
/// events/s)".
pub fn speed(s: &Summary) -> String {
    format!(
        "{:.1} s simulated in {:.2} s wall ({} events, {:.1} M events/s)",
        s.sim_time_s,
        s.wall_time_s,
        s.events,
        s.events as f64 / s.wall_time_s.max(1e-9) / 1e6
    )
}

/// The value of a sampled cumulative series at time `t` (its last sample at or before t).
pub fn value_at(series: &[(f64, f64)], t: f64) -> f64 {
    series.iter().rev().find(|p| p.0 <= t).map_or(0.0, |p| p.1)
}

/// The values of a series at samples with t in (t0, t1].
fn period_values(series: &[(f64, f64)], t0: f64, t1: f64) -> Vec<f64> {
    series
        .iter()
        .filter(|p| p.0 > t0 && p.0 <= t1)
        .map(|p| p.1)
        .collect()
}

/// Mean of a series over samples with t in (t0, t1].
pub fn period_mean(series: &[(f64, f64)], t0: f64, t1: f64) -> f64 {
    let v = period_values(series, t0, t1);
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Median of a series over samples with t in (t0, t1] (the upper one of an even count).
pub fn period_median(series: &[(f64, f64)], t0: f64, t1: f64) -> f64 {
    let mut v = period_values(series, t0, t1);
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The 95th percentile (nearest rank) of a series over samples with t in (t0, t1].
pub fn period_p95(series: &[(f64, f64)], t0: f64, t1: f64) -> f64 {
    let mut v = period_values(series, t0, t1);
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((0.95 * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_come_from_id_prefixes() {
        assert_eq!(class_of("c3a-17"), "c3a");
        assert_eq!(class_of("long-flow-2"), "long-flow");
        assert_eq!(class_of("solo"), "solo");
        assert_eq!(
            period_mean(&[(1.0, 2.0), (2.0, 4.0), (3.0, 9.0)], 1.0, 3.0),
            6.5
        );
        let ramp: Vec<(f64, f64)> = (1..=100).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(period_p95(&ramp, 0.0, 100.0), 95.0);
        assert_eq!(period_p95(&ramp, 90.0, 100.0), 100.0);
    }
}
