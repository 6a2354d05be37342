//! The BAT / CLCC experiments of 004 (Pletka et al. — Closed-loop congestion control for mixed
//! responsive and non-responsive traffic).
//!
//! One file per group of figures: [`bat`] (Figs. 1, 3), [`mixed_traffic`] (Figs. 8, 9),
//! [`udp_bound`] (Figs. 6, 7); here, what they share.

mod bat;
mod mixed_traffic;
mod udp_bound;

pub use bat::{FIG1, FIG3};
pub use mixed_traffic::{FIG8, FIG9};
pub use udp_bound::{FIG6, FIG7};

use acclab_core::config::{ClccParams, QueueConfig, RatioParam, RenoParams, SchemeConfig};
use acclab_core::{Duration, Rate};
use acclab_results::plot::{write_chart, Chart, Series};
use acclab_scenario::{Scenario, ScenarioBuilder, ScenarioSpec};

use crate::common::{self, chart, Run};
use crate::{Ctx, ReproError};

/// The BAT parameters of the scenario's bottleneck r1->r2.
pub(super) fn bat_mut(
    sc: &mut Scenario,
) -> Result<&mut acclab_core::config::BatParams, ReproError> {
    let l = common::link(sc, "r1->r2")?;
    match &mut sc.links[l].queue {
        QueueConfig::Bat(p) => Ok(p),
        _ => Err(ReproError::Other(
            "the bottleneck r1->r2 must be a bat queue".into(),
        )),
    }
}

/// `template` with `n` Reno flows `tcp-{i}` from hosts `tcp{i}`, each on its own 1 Gb/s access
/// link to r1, to `sink`; flow i's round-trip propagation delay is `rtt_ms(i)`, and each starts
/// in the first second.
pub(super) fn with_tcp_flows(
    template: ScenarioSpec,
    n: usize,
    rtt_ms: impl Fn(usize) -> f64,
) -> Result<ScenarioSpec, ReproError> {
    let mut b = ScenarioBuilder::new(template);
    for i in 0..n {
        // Round trip = 2 × (access + 0.5 ms bottleneck + 0.25 ms sink access), to the µs.
        let access = Duration::from_micros(((rtt_ms(i) / 2.0 - 0.75) * 1e3).round() as u64);
        let host = format!("tcp{i}");
        b = b
            .duplex(&host, "r1", Rate::from_mbps(1000), access)
            .flow(
                &format!("tcp-{i}"),
                SchemeConfig::Reno(RenoParams::default()),
            )
            .from(&host)
            .to("sink")
            .start_jitter(Duration::from_secs(1));
    }
    Ok(b.into_def()?)
}

/// The scenario `text` with 004 §V's 100 Reno flows, RTTs 2–200 ms evenly spread, added; kept as
/// `scenario.toml` beside the results.
pub(super) fn with_hundred_tcp_flows(
    ctx: &Ctx,
    text: &str,
    id: &str,
) -> Result<Scenario, ReproError> {
    let n = 100;
    let def = with_tcp_flows(acclab_scenario::parse_spec(text, id)?, n, |i| {
        2.0 + 198.0 * i as f64 / (n - 1) as f64
    })?;
    common::keep_scenario(&ctx.out, "scenario.toml", &def.to_toml())?;
    Ok(def.build()?)
}

/// UDP/TCP serviced ratio over the window, and its per-second series.
pub(super) fn ratios(run: &Run) -> (f64, Vec<(f64, f64)>) {
    let udp = run
        .summary
        .flows
        .iter()
        .filter(|f| &*f.kind == "cbr")
        .map(|f| f.throughput_bps)
        .sum::<f64>();
    let tcp = run
        .summary
        .flows
        .iter()
        .filter(|f| &*f.kind != "cbr")
        .map(|f| f.throughput_bps)
        .sum::<f64>();
    let mut per_t: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for s in &run.sim.monitor().flow_samples {
        let e = per_t.entry((s.t_s * 10.0).round() as u64).or_default();
        if run.summary.flows[s.flow as usize].kind.as_ref() == "cbr" {
            e.0 += s.throughput_bps;
        } else {
            e.1 += s.throughput_bps;
        }
    }
    let series = per_t
        .into_iter()
        .map(|(t, (u, c))| (t as f64 / 10.0, u / c.max(1.0)))
        .collect();
    (udp / tcp.max(1.0), series)
}

/// CLCC on the bottleneck with reference `r_ref`, bound and preemption as given.
pub(super) fn add_clcc(
    sc: &mut Scenario,
    r_ref: f64,
    bound: bool,
    preemption: bool,
) -> Result<(), ReproError> {
    bat_mut(sc)?.clcc = Some(ClccParams {
        r_ref: RatioParam::Fixed(r_ref),
        udp_class: "udp".into(),
        tcp_class: "tcp".into(),
        d_max: None,
        betas: None,
        bound,
        preemption,
    });
    Ok(())
}

/// A column of the bottleneck's AQM state over time.
pub(super) fn aqm_series(run: &Run, column: &str) -> Vec<(f64, f64)> {
    let m = run.sim.monitor();
    let Some(k) = m.aqm_columns.iter().position(|c| c == column) else {
        return Vec::new();
    };
    let Ok(l) = common::link(run.sim.scenario(), "r1->r2") else {
        return Vec::new();
    };
    m.link_samples
        .iter()
        .filter(|s| s.link as usize == l)
        .filter_map(|s| s.aqm[k].map(|v| (s.t_s, v)))
        .collect()
}

/// Seconds after `from` until a one-second mean of the ratio is within `tol` of `r_ref`.
pub(super) fn recovery(series: &[(f64, f64)], from: f64, r_ref: f64, tol: f64) -> f64 {
    let end = series.last().map_or(from, |p| p.0);
    let mut t = from;
    while t + 1.0 <= end {
        if (common::period_mean(series, t, t + 1.0) - r_ref).abs() <= tol * r_ref {
            return t + 1.0 - from;
        }
        t += 0.1;
    }
    f64::INFINITY
}

/// Runs two variants of a Fig. 6 / Fig. 7 scenario in parallel.
pub(super) fn pair(
    ctx: &Ctx,
    base: Scenario,
    variants: [(&str, bool, bool); 2],
    r_ref: f64,
) -> Result<(Run, Run), ReproError> {
    let mut cases = variants.map(|(label, ..)| (label, base.clone()));
    for ((_, sc), (_, bound, preemption)) in cases.iter_mut().zip(variants) {
        add_clcc(sc, r_ref, bound, preemption)?;
    }
    let [a, b] = common::simulate_all(ctx, cases)?;
    Ok((a, b))
}

pub(super) type Points = Vec<(f64, f64)>;

/// Figs. 6 and 7: the UDP/TCP ratio against its reference (`label`, value, until t) and D_UDP on
/// a log axis, each for the two runs named in `runs`.
pub(super) fn ratio_and_d_udp_charts(
    ctx: &Ctx,
    id: &str,
    (label, r_ref, until): (&str, f64, f64),
    runs: [&str; 2],
    ratio: [Points; 2],
    d_udp: [Points; 2],
) -> Result<Vec<String>, ReproError> {
    let mut ref_line = Series::level(label, r_ref, 0.0, until);
    ref_line.reference = true;
    let [ra, rb] = ratio;
    let ratio_series = vec![Series::new(runs[0], ra), Series::new(runs[1], rb), ref_line];
    let mut files = write_chart(
        &ctx.out,
        "ratio",
        &chart(
            format!("{id}: UDP/TCP ratio"),
            "time (s)",
            "ratio",
            ratio_series,
        ),
    )?;
    let [da, db] = d_udp;
    let d_series = vec![Series::new(runs[0], da), Series::new(runs[1], db)];
    files.extend(write_chart(
        &ctx.out,
        "d_udp",
        &Chart {
            log_y: true,
            ..chart(format!("{id}: D_UDP"), "time (s)", "D_UDP", d_series)
        },
    )?);
    Ok(files)
}
