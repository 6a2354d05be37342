//! cellular-comparison: Pantheon's question on acclab's terms — not a paper figure; its claims
//! are acclab's own.
//!
//! Every scheme over cellular links whose capacity follows measured (or synthetic) traces:
//! Reno, CUBIC (with HyStart++, as Linux runs it), BBR v1 and v3, Vegas, Copa, PCC Vivace,
//! Monaco (ACC-P), TCP Prague behind DualPI2, and LEDBAT; one flow and three flows of a scheme
//! at a time, over each trace pair (`NAME.down` for the base station's downlink, `NAME.up` for the uplink). Per run it
//! measures the throughput, the downlink's utilisation (bytes sent over the bytes its trace
//! offered), the 95th-percentile one-way delay (Pantheon's delay axis), the mean one-way delay,
//! Jain's index and the loss rate; `table.csv` has one row per run, and one figure per trace and
//! flow count plots throughput against the 95th-percentile delay, a point per scheme (the mean
//! over seeds) with the 1-σ ellipse of its seeds, as Pantheon draws them.
//!
//! The traces come from `--traces DIR` (every `NAME.down` with its `NAME.up`); without it, the
//! synthetic pair shipped in `scenarios/traces/` (made by `acclab capacity markov`).

use std::path::Path;
use std::sync::Arc;

use acclab_core::config::{
    BbrParams, CopaParams, CubicParams, DroptailParams, DualPi2Params, LedbatParams, PragueParams,
    QueueConfig, RenoParams, SchemeConfig,
};
use acclab_core::link::CapacityTrace;
use acclab_core::Limit;
use acclab_results::plot::{Chart, Series};
use acclab_scenario::{CapacityTraceDef, Scenario};
use rayon::prelude::*;

use crate::common::{self, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

pub const COMPARISON: Spec = spec!(
    "cellular-comparison",
    "Schemes over cellular links (capacity traces): throughput against 95th-percentile one-way delay, as Pantheon",
    quick,
    cellular_comparison
);

/// The schemes compared.
pub(crate) const SCHEMES: [&str; 10] = [
    "reno", "cubic", "bbr", "bbr3", "vegas", "copa", "vivace", "monaco", "prague", "ledbat",
];

/// Flows of one scheme per run.
const FLOWS: [usize; 2] = [1, 3];

/// The cellular links.
const DOWNLINK: &str = "bs->ue";
const UPLINK: &str = "ue->bs";

/// The synthetic pair shipped with acclab, the default.
const SYNTHETIC: (&str, &str, &str) = (
    "markov-lte",
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/traces/markov-lte.down"
    )),
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/traces/markov-lte.up"
    )),
);

/// A recording's two directions.
pub(crate) struct TracePair {
    pub name: String,
    pub down: Arc<CapacityTrace>,
    pub up: Arc<CapacityTrace>,
}

/// The trace pairs to run: every `NAME.down` with a `NAME.up` in `dir`, by name, or the
/// synthetic pair.
pub(crate) fn trace_pairs(dir: Option<&Path>) -> Result<Vec<TracePair>, ReproError> {
    let parse = |file: &str, text: &str| {
        CapacityTrace::parse(text)
            .map(Arc::new)
            .map_err(|e| ReproError::Other(format!("capacity trace {file}: {e}")))
    };
    let Some(dir) = dir else {
        let (name, down, up) = SYNTHETIC;
        return Ok(vec![TracePair {
            name: name.into(),
            down: parse("markov-lte.down", down)?,
            up: parse("markov-lte.up", up)?,
        }]);
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| ReproError::Other(format!("--traces {}: {e}", dir.display())))?
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".down").map(String::from)
        })
        .filter(|n| dir.join(format!("{n}.up")).is_file())
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(ReproError::Other(format!(
            "--traces {}: no trace pairs there (NAME.down with NAME.up, Mahimahi's format)",
            dir.display()
        )));
    }
    names
        .into_iter()
        .map(|name| {
            let read = |suffix: &str| {
                let file = dir.join(format!("{name}.{suffix}"));
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| ReproError::Other(format!("{}: {e}", file.display())))?;
                parse(&file.display().to_string(), &text)
            };
            Ok(TracePair {
                down: read("down")?,
                up: read("up")?,
                name,
            })
        })
        .collect()
}

fn scheme(name: &str) -> SchemeConfig {
    match name {
        "reno" => SchemeConfig::Reno(RenoParams::default()),
        "cubic" => SchemeConfig::Cubic(CubicParams {
            hystart: true,
            ..CubicParams::default()
        }),
        "bbr" => SchemeConfig::Bbr(BbrParams::default()),
        "bbr3" => SchemeConfig::Bbr3(Box::default()),
        "vegas" => SchemeConfig::Vegas(Box::default()),
        "copa" => SchemeConfig::Copa(CopaParams::default()),
        "vivace" => SchemeConfig::Vivace(Box::default()),
        "monaco" => SchemeConfig::Monaco(Box::default()),
        "prague" => SchemeConfig::Prague(PragueParams::default()),
        "ledbat" => SchemeConfig::Ledbat(LedbatParams::default()),
        other => unreachable!("no scheme {other} in SCHEMES"),
    }
}

/// One run: `n` flows of `scheme_name` over `pair`, seeded `seed`.
fn case(base: &Scenario, pair: &TracePair, scheme_name: &str, n: usize, seed: u64) -> Scenario {
    let mut sc = base.clone();
    sc.seed = seed;
    sc.flows.written_mut().truncate(n);
    for f in sc.flows.written_mut() {
        f.scheme = scheme(scheme_name);
    }
    for l in &mut sc.links {
        let (trace, suffix) = match l.name.as_str() {
            DOWNLINK => (&pair.down, "down"),
            UPLINK => (&pair.up, "up"),
            _ => continue,
        };
        l.rate = trace.mean_rate();
        l.capacity = Some(CapacityTraceDef {
            file: format!("{}.{suffix}", pair.name),
            trace: trace.clone(),
        });
        if scheme_name == "prague" && l.name == DOWNLINK {
            let limit = match &l.queue {
                QueueConfig::Droptail(DroptailParams { limit, .. }) => *limit,
                _ => Limit::Packets(250),
            };
            l.queue = QueueConfig::DualPi2(DualPi2Params {
                limit: Some(limit),
                ..DualPi2Params::default()
            });
        }
    }
    sc
}

/// What one run measured.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub trace: String,
    pub scheme: &'static str,
    pub flows: usize,
    pub seed: u64,
    pub throughput_mbps: f64,
    pub utilization: f64,
    /// The flows' 95th-percentile one-way delays, averaged over the flows, ms.
    pub p95_delay_ms: f64,
    pub mean_delay_ms: f64,
    pub jain: f64,
    pub loss_pct: f64,
}

fn cellular_comparison(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    for name in [DOWNLINK, UPLINK] {
        common::link(&base, name)?;
    }
    if base.flows.len() < *FLOWS.iter().max().unwrap_or(&1) {
        return Err(ReproError::Other(
            "cellular-comparison needs three flows in its scenario".into(),
        ));
    }
    let pairs = trace_pairs(ctx.traces.as_deref())?;
    let seeds: Vec<u64> = if ctx.quick { vec![1] } else { vec![1, 2, 3] };
    let mut cases = Vec::new();
    for p in 0..pairs.len() {
        for &s in &SCHEMES {
            for &n in &FLOWS {
                for &seed in &seeds {
                    cases.push((p, s, n, seed));
                }
            }
        }
    }
    let outcomes: Vec<Result<Outcome, ReproError>> = cases
        .par_iter()
        .map(|&(p, s, n, seed)| {
            let pair = &pairs[p];
            let label = format!("{}-{s}-{n}-{seed}", pair.name);
            let run = simulate(ctx, &label, case(&base, pair, s, n, seed))?;
            Ok(measure(&run.summary, &pair.name, s, n, seed))
        })
        .collect();
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect::<Result<_, _>>()?;

    let mut report = e.report();
    write_table(e, &outcomes, &mut report)?;
    for pair in &pairs {
        for n in FLOWS {
            draw(e, &outcomes, &pair.name, n, &mut report)?;
        }
    }
    claims(&outcomes, &pairs, &mut report);
    report.notes.push(format!(
        "trace pairs: {} ({})",
        pairs
            .iter()
            .map(|p| format!(
                "{} {:.2}/{:.2} Mb/s",
                p.name,
                p.down.mean_rate().as_f64() / 1e6,
                p.up.mean_rate().as_f64() / 1e6
            ))
            .collect::<Vec<_>>()
            .join(", "),
        if ctx.traces.is_some() {
            "from --traces"
        } else {
            "the synthetic pair shipped in scenarios/traces/; give --traces DIR for measured ones"
        }
    ));
    Ok(report)
}

fn measure(
    s: &acclab_results::Summary,
    trace: &str,
    scheme: &'static str,
    n: usize,
    seed: u64,
) -> Outcome {
    let down = s
        .links
        .iter()
        .find(|l| l.id == DOWNLINK)
        .expect("the scenario has its downlink");
    let rates: Vec<f64> = s.flows.iter().map(|f| f.throughput_bps).collect();
    let delays: Vec<_> = s.flows.iter().filter_map(|f| f.one_way_delay).collect();
    let mean = |xs: &mut dyn Iterator<Item = f64>| {
        let (sum, k) = xs.fold((0.0, 0usize), |(s, k), x| (s + x, k + 1));
        if k == 0 {
            f64::NAN
        } else {
            sum / k as f64
        }
    };
    let sent: u64 = s.flows.iter().map(|f| f.sent_bytes).sum::<u64>().max(1);
    let lost: u64 = s.flows.iter().map(|f| f.lost_packets).sum();
    Outcome {
        trace: trace.into(),
        scheme,
        flows: n,
        seed,
        throughput_mbps: rates.iter().sum::<f64>() / 1e6,
        utilization: down.utilization,
        p95_delay_ms: mean(&mut delays.iter().map(|d| d.p95_s * 1e3)),
        mean_delay_ms: mean(&mut delays.iter().map(|d| d.mean_s * 1e3)),
        jain: acclab_results::summary::jain(&rates).unwrap_or(f64::NAN),
        // Lost packets over packets sent (full-size packets).
        loss_pct: 100.0 * lost as f64 * 1500.0 / sent as f64,
    }
}

fn write_table(e: &Exp, outcomes: &[Outcome], report: &mut Report) -> Result<(), ReproError> {
    let mut w =
        csv::Writer::from_path(e.ctx.out.join("table.csv")).map_err(std::io::Error::from)?;
    w.write_record([
        "trace",
        "scheme",
        "flows",
        "seed",
        "throughput_mbps",
        "utilization",
        "p95_one_way_delay_ms",
        "mean_one_way_delay_ms",
        "jain",
        "loss_pct",
    ])
    .map_err(std::io::Error::from)?;
    for o in outcomes {
        w.write_record([
            o.trace.clone(),
            o.scheme.to_string(),
            o.flows.to_string(),
            o.seed.to_string(),
            format!("{:.4}", o.throughput_mbps),
            format!("{:.4}", o.utilization),
            format!("{:.3}", o.p95_delay_ms),
            format!("{:.3}", o.mean_delay_ms),
            format!("{:.4}", o.jain),
            format!("{:.4}", o.loss_pct),
        ])
        .map_err(std::io::Error::from)?;
    }
    w.flush()?;
    report.files.push("table.csv".into());
    Ok(())
}

/// The runs of one (trace, scheme, flows) over its seeds.
fn runs<'a>(outcomes: &'a [Outcome], trace: &str, scheme: &str, n: usize) -> Vec<&'a Outcome> {
    outcomes
        .iter()
        .filter(|o| o.trace == trace && o.scheme == scheme && o.flows == n)
        .collect()
}

/// The mean (p95 delay, throughput) of `rs`.
fn centre(rs: &[&Outcome]) -> (f64, f64) {
    let k = rs.len().max(1) as f64;
    (
        rs.iter().map(|o| o.p95_delay_ms).sum::<f64>() / k,
        rs.iter().map(|o| o.throughput_mbps).sum::<f64>() / k,
    )
}

/// The 1-σ ellipse of points `xy` (their covariance's), as a closed polygon; `None` for fewer
/// than two points.
fn ellipse(xy: &[(f64, f64)]) -> Option<Vec<(f64, f64)>> {
    if xy.len() < 2 {
        return None;
    }
    let k = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / k,
        xy.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let cov = |f: &dyn Fn(&(f64, f64)) -> f64| xy.iter().map(f).sum::<f64>() / (k - 1.0);
    let (sxx, syy, sxy) = (
        cov(&|p| (p.0 - mx).powi(2)),
        cov(&|p| (p.1 - my).powi(2)),
        cov(&|p| (p.0 - mx) * (p.1 - my)),
    );
    // Eigen-decomposition of the 2×2 covariance.
    let tr = sxx + syy;
    let det = sxx * syy - sxy * sxy;
    let gap = ((tr / 2.0).powi(2) - det).max(0.0).sqrt();
    let (l1, l2) = ((tr / 2.0 + gap).max(0.0), (tr / 2.0 - gap).max(0.0));
    let theta = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    Some(
        (0..=48)
            .map(|i| {
                let t = i as f64 / 48.0 * std::f64::consts::TAU;
                let (a, b) = (l1.sqrt() * t.cos(), l2.sqrt() * t.sin());
                (
                    (mx + a * theta.cos() - b * theta.sin()).max(1e-3),
                    my + a * theta.sin() + b * theta.cos(),
                )
            })
            .collect(),
    )
}

fn draw(
    e: &Exp,
    outcomes: &[Outcome],
    trace: &str,
    n: usize,
    report: &mut Report,
) -> Result<(), ReproError> {
    let mut series = Vec::new();
    for s in SCHEMES {
        let rs = runs(outcomes, trace, s, n);
        if rs.is_empty() {
            continue;
        }
        series.push(Series::new(s, vec![centre(&rs)]).with_markers());
        let xy: Vec<(f64, f64)> = rs
            .iter()
            .map(|o| (o.p95_delay_ms, o.throughput_mbps))
            .collect();
        if let Some(points) = ellipse(&xy) {
            series.push(
                Series::new(format!("{s} (1σ over seeds)"), points)
                    .as_dashed()
                    .unlisted(),
            );
        }
    }
    let flows = if n == 1 {
        "1 flow".to_string()
    } else {
        format!("{n} flows")
    };
    let chart = Chart {
        title: format!("{}: {trace}, {flows} (better: up and left)", e.id()),
        x_label: "95th-percentile one-way delay (ms, log)".into(),
        y_label: "throughput (Mb/s)".into(),
        series,
        log_x: true,
        ..Chart::default()
    };
    let stem = format!(
        "{trace}-{}",
        if n == 1 {
            "1flow".into()
        } else {
            format!("{n}flows")
        }
    );
    report.files.extend(acclab_results::plot::write_chart(
        &e.ctx.out, &stem, &chart,
    )?);
    Ok(())
}

/// The claims, over every trace pair: each row counts the pairs on which the claim holds, and
/// passes when it holds on all of them (runs averaged over seeds).
fn claims(outcomes: &[Outcome], pairs: &[TracePair], report: &mut Report) {
    let total = pairs.len() as f64;
    let on_every = |quantity: &str, holds: &dyn Fn(&str) -> bool| {
        let n = pairs.iter().filter(|p| holds(&p.name)).count() as f64;
        Row::at_least(
            format!("{quantity} (trace pairs where it holds, of {total})"),
            None,
            None,
            n,
            total,
        )
        .because("on every trace pair")
    };
    let mean = |trace: &str, s: &str, n: usize, f: &dyn Fn(&Outcome) -> f64| {
        let rs = runs(outcomes, trace, s, n);
        rs.iter().map(|o| f(o)).sum::<f64>() / rs.len().max(1) as f64
    };
    let p95 = |t: &str, s: &str| mean(t, s, 1, &|o| o.p95_delay_ms);
    let util = |t: &str, s: &str| mean(t, s, 1, &|o| o.utilization);
    let jain = |t: &str, s: &str| mean(t, s, 3, &|o| o.jain);
    // A loss-based scheme fills the base station's buffer; a delay-based one keeps it short…
    report.rows.push(on_every(
        "CUBIC's p95 delay over twice Vegas's, one flow",
        &|t| p95(t, "cubic") > 2.0 * p95(t, "vegas"),
    ));
    // …and pays for it: a variable link's capacity is left unused while the delay it sees
    // says the queue is building.
    report.rows.push(on_every(
        "Vegas's downlink utilisation below CUBIC's, one flow",
        &|t| util(t, "vegas") < util(t, "cubic"),
    ));
    // L4S's aim: Prague behind DualPI2 keeps the queue near its 1 ms step.
    report.rows.push(on_every(
        "Prague+DualPI2's p95 delay under half CUBIC's, one flow",
        &|t| p95(t, "prague") < 0.5 * p95(t, "cubic"),
    ));
    // ACC and Vegas converge to proportional fairness (000 §III, 002 Theorem 1): equal
    // shares for flows of equal round trips, whatever the link does.
    report.rows.push(on_every(
        "three Monaco flows share fairly (Jain ≥ 0.95)",
        &|t| jain(t, "monaco") >= 0.95,
    ));
    report.rows.push(on_every(
        "three Vegas flows share fairly (Jain ≥ 0.95)",
        &|t| jain(t, "vegas") >= 0.95,
    ));
    // Whatever the scheme, a link carries no more than its trace offers: bytes sent over the
    // bytes offered, within the packet in service at the window's end.
    let max_util = outcomes.iter().map(|o| o.utilization).fold(0.0, f64::max);
    report.rows.push(Row::at_most(
        "highest downlink utilisation of any run (bytes sent over the trace's)",
        None,
        None,
        max_util,
        1.005,
    ));
}
