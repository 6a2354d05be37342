//! The closed-loop QoS experiments of 003 (Chen, Xu, Kalyanaraman — Closed-loop QoS services
//! with accumulation-based congestion control): expected minimum rates (Fig. 4), weighted rates
//! (Fig. 5) and their multiplexing with web traffic over three bottlenecks (Fig. 6).
//!
//! One file per figure: [`expected_rate`] (Fig. 4), [`weighted_rate`] (Fig. 5), [`web_mix`]
//! (Fig. 6), [`live`] (Fig. 7); here, the single-bottleneck template Figs. 4 and 5 share.

mod expected_rate;
mod live;
mod web_mix;
mod weighted_rate;

pub use expected_rate::FIG4;
pub use live::FIG7;
pub use web_mix::FIG6;
pub use weighted_rate::FIG5;

use acclab_core::config::{MonacoParams, SchemeConfig};
use acclab_core::Duration;
use acclab_scenario::ScenarioSpec;
use rayon::prelude::*;

use crate::common::{self, mbps, simulate, Run};
use crate::{Ctx, Report, ReproError, Row};

pub(super) const SINGLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/repro/qos-single.toml"
));
pub(super) const SINGLE_QUICK: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/repro/qos-single.quick.toml"
));

/// The single-bottleneck scenario with flow 0's parameters `flow0`, over AVQ+VD when `avd`,
/// lasting `seconds` (and measuring its last `LONG_WINDOW_S`) instead of the template's length
/// when given.
pub(super) fn single(
    template: &ScenarioSpec,
    name: &str,
    flow0: MonacoParams,
    avd: bool,
    seconds: Option<u64>,
) -> Result<ScenarioSpec, ReproError> {
    let mut def = template.clone();
    def.name = name.to_string();
    if let Some(d) = seconds {
        let s = Duration::from_secs;
        def.duration = s(d);
        def.output.window = Some([s(d - LONG_WINDOW_S), s(d)]);
        if d > LONG_SAMPLING_FROM_S {
            def.output.sample_interval = Some(s(1));
        }
    }
    def.flows[0].scheme = SchemeConfig::Monaco(Box::new(flow0));
    if avd {
        for link in ["r1->r2", "r2->r1"] {
            def.set_str(
                &format!("link.\"{link}\".queue"),
                r#"{ kind = "avq", mode = "delay", limit = "100000pkt", priority = true }"#,
            )?;
        }
    }
    Ok(def)
}

pub(super) fn bottleneck(avd: bool) -> &'static str {
    if avd {
        "AVQ+VD"
    } else {
        "FIFO"
    }
}

/// What one single-bottleneck run gives: flow 0's throughput and the others' mean, measured and
/// predicted, and the bottleneck's queue and utilisation.
pub(super) struct Point {
    x0: f64,
    x0_theory: Option<f64>,
    others: f64,
    others_theory: Option<f64>,
    queue: f64,
    queue_theory: Option<f64>,
    /// The model tier's values, where the scenario is in its domain.
    x0_model: Option<f64>,
    others_model: Option<f64>,
    queue_model: Option<f64>,
    utilization: f64,
    at_limit: bool,
}

fn point(run: &Run) -> Point {
    let s = &run.summary;
    let thr = |f: &acclab_results::summary::FlowSummary| mbps(f.throughput_bps);
    let theory = |i: usize| s.flows[i].theory.as_ref().map(|t| mbps(t.throughput_bps));
    let model = |i: usize| s.flows[i].model.as_ref().map(|m| mbps(m.throughput_bps));
    let n = s.flows.len();
    let others: Vec<usize> = (1..n).collect();
    let bottleneck = &s.links[0];
    Point {
        x0: thr(&s.flows[0]),
        x0_theory: theory(0),
        others: others.iter().map(|&i| thr(&s.flows[i])).sum::<f64>() / (n - 1) as f64,
        others_theory: others
            .iter()
            .map(|&i| theory(i))
            .sum::<Option<f64>>()
            .map(|t| t / (n - 1) as f64),
        queue: bottleneck.mean_queue_pkts,
        queue_theory: bottleneck.theory.as_ref().map(|t| t.queue_pkts),
        x0_model: model(0),
        others_model: others
            .iter()
            .map(|&i| model(i))
            .sum::<Option<f64>>()
            .map(|m| m / (n - 1) as f64),
        queue_model: bottleneck.model.as_ref().map(|m| m.mean_queue_pkts),
        utilization: bottleneck.utilization,
        at_limit: run
            .eq
            .as_ref()
            .and_then(|e| e.flows[0].as_ref())
            .and_then(|f| f.at_limit)
            .unwrap_or(false),
    }
}

/// Runs every (label, scenario) in parallel.
pub(super) fn sweep(ctx: &Ctx, cases: &[(String, ScenarioSpec)]) -> Result<Vec<Point>, ReproError> {
    for (label, def) in cases {
        common::keep_scenario(&ctx.out, &format!("scenario-{label}.toml"), &def.to_toml())?;
    }
    cases
        .par_iter()
        .map(|(label, def)| Ok(point(&simulate(ctx, label, def.build()?)?)))
        .collect()
}

/// A worst-case check over a sweep: every point's bottleneck utilisation is 100% without AQM,
/// within half a percent of AVQ+VD's 98% target with it (003 §IV-B).
pub(super) fn utilization_row(report: &mut Report, case: &str, avd: bool, points: &[&Point]) {
    if avd {
        let worst = points
            .iter()
            .map(|p| (p.utilization - 0.98).abs())
            .fold(0.0, f64::max);
        report.rows.push(Row::at_most(
            format!("{case}: largest |utilisation − 0.98| over the sweep"),
            Some(0.005),
            None,
            worst,
            0.005,
        ));
    } else {
        let lowest = points
            .iter()
            .map(|p| p.utilization)
            .fold(f64::INFINITY, f64::min);
        report.rows.push(Row::at_least(
            format!("{case}: lowest utilisation over the sweep"),
            Some(1.0),
            None,
            lowest,
            0.99,
        ));
    }
}

/// The largest mean queue over a sweep must stay near zero with AVQ+VD.
pub(super) fn avd_queue_row(report: &mut Report, case: &str, points: &[&Point]) {
    let worst = points.iter().map(|p| p.queue).fold(0.0, f64::max);
    report.rows.push(Row::at_most(
        format!("{case}: largest mean queue over the sweep (pkts)"),
        None,
        Some(0.0),
        worst,
        5.0,
    ));
}

/// An accumulation of megabytes builds only over minutes to hours. Once slow start has ended, a
/// loop grows by at most one packet per period, and every packet it adds lengthens the period by
/// a packet time, so its queue Q (bytes) follows dQ/dt = MTU·C/Q: Q = √(2·MTU·C·t), and reaching
/// Q takes Q²/(2·MTU·C). On the 100 Mb/s template with 1000 B packets that is 360 s for 3 MB,
/// 3240 s for 9 MB and 36 000 s for 30 MB. Measured: qos-fig4's A = 3000 KB reached its limit at
/// ~330 s; qos-fig5's w = 3000 queue reached 9 MB at ~3400 s, and its w = 10⁴ queue was 27 244
/// packets at 30 000 s, where the formula says 27 386. A FIFO run whose flow 0 aims at
/// `LONG_ACCUMULATION_KB` or more therefore lasts 1.1 times that plus 200 s, rounded up to
/// 100 s, and measures its last `LONG_WINDOW_S` (about 15 s of wall time per simulated hour;
/// w = 10⁴ needs 11 hours, about 3 minutes). AVQ+VD keeps the physical queue, and so the
/// periods, short; its runs and the quick variants keep the template's length.
const LONG_ACCUMULATION_KB: u32 = 1000;
const LONG_WINDOW_S: u64 = 100;
/// Runs longer than this sample flows.csv / links.csv once a second (not every 100 ms).
const LONG_SAMPLING_FROM_S: u64 = 1000;
/// The template's bottleneck (bytes per second) and packet size (bytes).
const TEMPLATE_CAPACITY: f64 = 12.5e6;
const TEMPLATE_PACKET: f64 = 1000.0;

/// The length (s) of a run whose flow 0 aims at `accumulation_kb`, when it must be longer than
/// the template's: at a FIFO bottleneck, from `LONG_ACCUMULATION_KB` on, full size only.
pub(super) fn long_run(ctx: &Ctx, accumulation_kb: u32, avd: bool) -> Option<u64> {
    if accumulation_kb < LONG_ACCUMULATION_KB || avd || ctx.quick {
        return None;
    }
    Some(run_length_s(accumulation_kb))
}

/// 1.1 × Q²/(2·MTU·C) + 200 s, rounded up to 100 s: long enough to build `accumulation_kb` of
/// queue at one packet per period and then measure it.
pub(super) fn run_length_s(accumulation_kb: u32) -> u64 {
    let q = accumulation_kb as f64 * 1000.0;
    let build = q * q / (2.0 * TEMPLATE_PACKET * TEMPLATE_CAPACITY);
    ((1.1 * build + 200.0) / 100.0).ceil() as u64 * 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_last_until_the_queue_is_built() {
        // 3 MB builds in 360 s, 9 MB in 3240 s, 30 MB in 36 000 s.
        assert_eq!(run_length_s(3000), 600);
        assert_eq!(run_length_s(9000), 3800);
        assert_eq!(run_length_s(30_000), 39_800);
    }

    #[test]
    fn a_long_run_measures_its_last_stretch_and_samples_sparsely() {
        let t = acclab_scenario::parse_spec(SINGLE, "qos-single").unwrap();
        let w3000 = MonacoParams {
            weight: 3000.0,
            ..MonacoParams::default()
        };
        let def = single(&t, "x", w3000.clone(), false, Some(3800)).unwrap();
        let s = Duration::from_secs;
        assert_eq!(def.duration, s(3800));
        assert_eq!(def.output.window, Some([s(3700), s(3800)]));
        assert_eq!(def.output.sample_interval, Some(s(1)));
        assert_eq!(def.flows[0].scheme, SchemeConfig::Monaco(Box::new(w3000)));
        // The template's own length when none is given; AVQ+VD in both directions.
        let def = single(&t, "x", MonacoParams::default(), true, None).unwrap();
        assert_eq!(def.duration, s(100));
        let sc = def.build().unwrap();
        assert!(sc.links[..2]
            .iter()
            .all(|l| matches!(l.queue, acclab_core::config::QueueConfig::Avq(_))));
    }
}
