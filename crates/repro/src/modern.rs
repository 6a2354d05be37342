//! modern-comparison: ACC among today's schemes — not a paper figure; its claims are acclab's own.
//!
//! Monaco (ACC-P, 000 §IV-B), Vegas (002), Reno, CUBIC (RFC 9438), BBR v1 and DCTCP (RFC 8257),
//! each alone (Vegas with α = β) on a dumbbell with mixed round trips and on a parking lot, behind DropTail, CoDel
//! (RFC 8289), FQ-CoDel (RFC 8290) and AVD (000 §IV-D): one run per (scheme, queue), the two
//! networks side by side in one scenario (`scenarios/repro/modern-comparison.toml`).
//!
//! Per (network, queue, scheme) it measures utilisation, queueing delay (mean and 95th
//! percentile of the sampled bottleneck queue, in time at the link's rate), Jain's index, RTT
//! unfairness (dumbbell: throughput of the 24 ms flow over the 162 ms one; parking lot: a cross
//! flow's mean over the long flow's) and the drop rate, with the theory's equilibrium (000 §III,
//! 002 Theorem 1: proportional fairness for Monaco and Vegas) beside Monaco's and Vegas's rows.
//! Files: `table-<queue>.csv` (one table per bottleneck type), `flows.csv` (every flow of every
//! run, with its prediction) and `<queue>.svg` (per-flow throughput against base RTT on the
//! dumbbell, one series per scheme, the theory's allocation as a reference line).

use std::fmt::Write as _;

use acclab_core::config::{
    AvqMode, AvqParams, BbrParams, CodelParams, CubicParams, DctcpParams, DroptailParams,
    FqCodelParams, MonacoParams, QueueConfig, RenoParams, SchemeConfig, VegasParams,
};
use acclab_core::{Duration, Limit};
use acclab_results::plot::Series;
use acclab_scenario::Scenario;
use rayon::prelude::*;

use crate::common::{self, mbps, simulate, Run};
use crate::{Exp, Report, ReproError, Row, Spec};

pub const COMPARISON: Spec = spec!(
    "modern-comparison",
    "ACC among today's schemes: Monaco, Vegas, Reno, CUBIC, BBR, DCTCP over DropTail, CoDel, FQ-CoDel, AVD",
    quick,
    modern_comparison
);

/// The schemes compared, each at its defaults but Vegas: α = β = 3 packets (Linux's 2 and 4
/// bracket it), the unique equilibrium 002 §3 analyses and the theory predicts.
const SCHEMES: [&str; 6] = ["monaco", "vegas", "reno", "cubic", "bbr", "dctcp"];

/// The bottleneck disciplines compared.
const QUEUES: [&str; 4] = ["droptail", "codel", "fq-codel", "avd"];

/// The dumbbell's bottleneck and the parking lot's three links.
const DUMBBELL: &str = "db-r1->db-r2";
const PARKING_LOT: [&str; 3] = ["pl-r1->pl-r2", "pl-r2->pl-r3", "pl-r3->pl-r4"];

pub(crate) fn scheme(name: &str) -> SchemeConfig {
    match name {
        "monaco" => SchemeConfig::Monaco(MonacoParams::default()),
        "vegas" => SchemeConfig::Vegas(VegasParams {
            alpha: 3.0,
            beta: 3.0,
            ..VegasParams::default()
        }),
        "reno" => SchemeConfig::Reno(RenoParams::default()),
        "cubic" => SchemeConfig::Cubic(CubicParams::default()),
        "bbr" => SchemeConfig::Bbr(BbrParams::default()),
        "dctcp" => SchemeConfig::Dctcp(DctcpParams::default()),
        other => unreachable!("no scheme {other} in SCHEMES"),
    }
}

/// Discipline `name` with the buffer `limit` the scenario gives the link. CoDel and FQ-CoDel mark
/// ECN-capable packets (Linux's fq_codel default; only DCTCP's are), and every discipline that
/// has one gives Monaco's control packets the priority band its estimator needs (000 §IV-B).
pub(crate) fn queue(name: &str, limit: Limit) -> QueueConfig {
    match name {
        "droptail" => QueueConfig::Droptail(DroptailParams {
            limit,
            priority: true,
        }),
        "codel" => QueueConfig::Codel(CodelParams {
            limit,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            priority: true,
        }),
        "fq-codel" => QueueConfig::FqCodel(FqCodelParams {
            limit,
            ecn: true,
            ..FqCodelParams::default()
        }),
        "avd" => QueueConfig::Avq(AvqParams {
            mode: AvqMode::Delay,
            priority: true,
            ..AvqParams::new(limit)
        }),
        other => unreachable!("no queue {other} in QUEUES"),
    }
}

/// The scenario with every flow running `scheme_name` and every bottleneck behind `queue_name`.
fn case(base: &Scenario, bottlenecks: &[usize], scheme_name: &str, queue_name: &str) -> Scenario {
    let mut sc = base.clone();
    for f in &mut sc.flows {
        f.scheme = scheme(scheme_name);
    }
    for &l in bottlenecks {
        let limit = match &sc.links[l].queue {
            QueueConfig::Droptail(p) => p.limit,
            other => unreachable!("the scenario's bottlenecks are droptail, not {other:?}"),
        };
        sc.links[l].queue = queue(queue_name, limit);
    }
    sc
}

/// One network's numbers in one run.
#[derive(Clone, Debug, Default)]
struct Metrics {
    utilization: f64,
    delay_mean_ms: f64,
    delay_p95_ms: f64,
    jain: f64,
    rtt_unfairness: f64,
    drop_pct: f64,
    marks_per_s: f64,
    timeouts: u64,
    /// The theory's values where it predicts every flow of the network.
    theory: Option<TheoryMetrics>,
    /// The model tier's, where the scenario is in its domain: utilisation, RTT unfairness.
    model: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
struct TheoryMetrics {
    utilization: f64,
    delay_ms: f64,
    jain: f64,
    rtt_unfairness: f64,
}

/// A flow of one run.
struct FlowRow {
    id: String,
    /// Base RTT, s.
    rtt: f64,
    /// Goodput, b/s: measured, the theory's prediction, the model tier's (where in its domain).
    measured: f64,
    theory: Option<f64>,
    model: Option<f64>,
}

struct Outcome {
    queue: &'static str,
    scheme: &'static str,
    dumbbell: Metrics,
    parking_lot: Metrics,
    flows: Vec<FlowRow>,
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
fn metrics(run: &Run, links: &[usize], flows: &[usize], unfair: (&[usize], &[usize])) -> Metrics {
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
fn flows_of(sc: &Scenario, prefix: &str) -> Vec<usize> {
    (0..sc.flows.len())
        .filter(|&i| sc.flows[i].id.starts_with(prefix))
        .collect()
}

fn modern_comparison(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let db_link = common::link(&base, DUMBBELL)?;
    let pl_links: Vec<usize> = PARKING_LOT
        .iter()
        .map(|n| common::link(&base, n))
        .collect::<Result<_, _>>()?;
    let bottlenecks: Vec<usize> = std::iter::once(db_link)
        .chain(pl_links.iter().copied())
        .collect();
    let db_flows = flows_of(&base, "db-");
    let pl_long = flows_of(&base, "pl-long");
    let pl_cross = flows_of(&base, "pl-cross");
    let pl_flows: Vec<usize> = pl_long.iter().chain(&pl_cross).copied().collect();
    let base_rtt: Vec<f64> = base
        .flows
        .iter()
        .map(|f| acclab_theory::equilibrium::propagation_delay(&base, f))
        .collect();
    // The dumbbell's shortest and longest round trips.
    let by_rtt = |best: bool| -> Vec<usize> {
        let pick = db_flows.iter().copied().reduce(|a, b| {
            let a_better = base_rtt[a] < base_rtt[b];
            if a_better == best {
                a
            } else {
                b
            }
        });
        pick.into_iter().collect()
    };
    let (db_short, db_long) = (by_rtt(true), by_rtt(false));
    if db_flows.is_empty() || pl_long.is_empty() || pl_cross.is_empty() {
        return Err(ReproError::Other(
            "modern-comparison needs flows db-*, pl-long and pl-cross*".into(),
        ));
    }

    let cases: Vec<(&'static str, &'static str)> = QUEUES
        .iter()
        .flat_map(|&q| SCHEMES.iter().map(move |&s| (q, s)))
        .collect();
    let outcomes: Vec<Result<Outcome, ReproError>> = cases
        .par_iter()
        .map(|&(q, s)| {
            let run = simulate(ctx, &format!("{q}-{s}"), case(&base, &bottlenecks, s, q))?;
            let flows = run
                .summary
                .flows
                .iter()
                .zip(&base_rtt)
                .map(|(f, &rtt)| FlowRow {
                    id: f.id.clone(),
                    rtt,
                    measured: f.throughput_bps,
                    theory: f.theory.as_ref().map(|t| t.throughput_bps),
                    model: f.model.as_ref().map(|m| m.throughput_bps),
                })
                .collect();
            Ok(Outcome {
                queue: q,
                scheme: s,
                dumbbell: metrics(&run, &[db_link], &db_flows, (&db_short, &db_long)),
                parking_lot: metrics(&run, &pl_links, &pl_flows, (&pl_cross, &pl_long)),
                flows,
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect::<Result<_, _>>()?;

    let mut report = e.report();
    write_tables(e, &outcomes, &mut report)?;
    for q in QUEUES {
        draw(e, &outcomes, q, &db_flows, &mut report)?;
    }
    check(&outcomes, &db_flows, &pl_long, &mut report);
    Ok(report)
}

fn get<'a>(outcomes: &'a [Outcome], q: &str, s: &str) -> &'a Outcome {
    outcomes
        .iter()
        .find(|o| o.queue == q && o.scheme == s)
        .expect("every (queue, scheme) case ran")
}

/// `table-<queue>.csv` per bottleneck type and `flows.csv`, and the tables as text in the notes.
fn write_tables(e: &Exp, outcomes: &[Outcome], report: &mut Report) -> Result<(), ReproError> {
    let out = &e.ctx.out;
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.4}"));
    let csv_err = |err: csv::Error| ReproError::Other(format!("writing a table: {err}"));
    for q in QUEUES {
        let name = format!("table-{q}.csv");
        let mut w = csv::Writer::from_path(out.join(&name)).map_err(csv_err)?;
        w.write_record([
            "network",
            "scheme",
            "utilization",
            "theory_utilization",
            "queue_delay_mean_ms",
            "theory_queue_delay_ms",
            "queue_delay_p95_ms",
            "jain",
            "theory_jain",
            "rtt_unfairness",
            "theory_rtt_unfairness",
            "drop_pct",
            "marks_per_s",
            "timeouts",
        ])
        .map_err(csv_err)?;
        let mut text = format!(
            "{q}: network/scheme: utilisation, queueing delay mean/p95 (ms), Jain, RTT unfairness, drops % [theory: utilisation, delay, Jain, unfairness]"
        );
        for s in SCHEMES {
            let o = get(outcomes, q, s);
            for (network, m) in [("dumbbell", &o.dumbbell), ("parking-lot", &o.parking_lot)] {
                let t = m.theory.as_ref();
                w.write_record([
                    network.to_string(),
                    s.to_string(),
                    format!("{:.4}", m.utilization),
                    opt(t.map(|t| t.utilization)),
                    format!("{:.3}", m.delay_mean_ms),
                    opt(t.map(|t| t.delay_ms)),
                    format!("{:.3}", m.delay_p95_ms),
                    format!("{:.4}", m.jain),
                    opt(t.map(|t| t.jain)),
                    format!("{:.3}", m.rtt_unfairness),
                    opt(t.map(|t| t.rtt_unfairness)),
                    format!("{:.4}", m.drop_pct),
                    format!("{:.1}", m.marks_per_s),
                    m.timeouts.to_string(),
                ])
                .map_err(csv_err)?;
                let _ = write!(
                    text,
                    "; {network}/{s}: {:.3}, {:.1}/{:.1}, {:.3}, {:.2}, {:.3}",
                    m.utilization,
                    m.delay_mean_ms,
                    m.delay_p95_ms,
                    m.jain,
                    m.rtt_unfairness,
                    m.drop_pct
                );
                if let Some(t) = t {
                    let _ = write!(
                        text,
                        " [{:.3}, {:.1}, {:.3}, {:.2}]",
                        t.utilization, t.delay_ms, t.jain, t.rtt_unfairness
                    );
                }
            }
        }
        w.flush()?;
        report.files.push(name);
        report.notes.push(text);
    }
    let mut w = csv::Writer::from_path(out.join("flows.csv")).map_err(csv_err)?;
    w.write_record([
        "queue",
        "scheme",
        "flow",
        "base_rtt_ms",
        "throughput_mbps",
        "theory_throughput_mbps",
        "model_throughput_mbps",
    ])
    .map_err(csv_err)?;
    let opt_mbps = |x: Option<f64>| x.map_or(String::new(), |v| format!("{:.4}", mbps(v)));
    for o in outcomes {
        for f in &o.flows {
            w.write_record([
                o.queue.to_string(),
                o.scheme.to_string(),
                f.id.clone(),
                format!("{:.3}", f.rtt * 1e3),
                format!("{:.4}", mbps(f.measured)),
                opt_mbps(f.theory),
                opt_mbps(f.model),
            ])
            .map_err(csv_err)?;
        }
    }
    w.flush()?;
    report.files.push("flows.csv".into());
    Ok(())
}

/// `<queue>.svg`: each scheme's dumbbell throughputs against base RTT, the theory's allocation for
/// Monaco as a reference line.
fn draw(
    e: &Exp,
    outcomes: &[Outcome],
    q: &str,
    db_flows: &[usize],
    report: &mut Report,
) -> Result<(), ReproError> {
    // The theory's line follows Monaco's (a reference takes the colour of the series before it).
    let mut series = Vec::new();
    for s in SCHEMES {
        let o = get(outcomes, q, s);
        let at = |i: usize| o.flows[i].rtt * 1e3;
        let points = db_flows
            .iter()
            .map(|&i| (at(i), mbps(o.flows[i].measured)))
            .collect();
        series.push(Series::new(s, points).with_markers());
        let theory: Option<Vec<(f64, f64)>> = db_flows
            .iter()
            .map(|&i| Some((at(i), mbps(o.flows[i].theory?))))
            .collect();
        if let (Some(points), "monaco") = (theory, s) {
            let mut t = Series::new("theory (proportional fairness)", points);
            t.reference = true;
            series.push(t);
        }
    }
    e.draw(
        report,
        q,
        format!("dumbbell behind {q}: throughput against base RTT"),
        "base round-trip time (ms)",
        "throughput (Mb/s)",
        series,
    )
}

/// The claims, each a row: what the theory predicts for Monaco and Vegas, and what each queue
/// is known to do to the others.
fn check(outcomes: &[Outcome], db_flows: &[usize], pl_long: &[usize], report: &mut Report) {
    // ACC and Vegas reach the proportionally fair allocation whatever the round trips (000 §III,
    // 002 Theorem 1): every flow within 10% (ACC) and 15% (Vegas) of the prediction.
    for (scheme, q, rel) in [
        ("monaco", "droptail", 0.10),
        ("monaco", "avd", 0.10),
        ("vegas", "droptail", 0.15),
    ] {
        let o = get(outcomes, q, scheme);
        for &i in db_flows.iter().chain(pl_long) {
            let f = &o.flows[i];
            report.rows.push(
                Row::close(
                    format!("{scheme} over {q}: {} throughput (Mb/s)", f.id),
                    None,
                    f.theory.map(mbps),
                    mbps(f.measured),
                    rel,
                )
                .with_model(f.model.map(mbps)),
            );
        }
    }
    // AVD moves Monaco's accumulation out of the buffer into the virtual delay (000 §IV-D).
    let dt = get(outcomes, "droptail", "monaco");
    let avd = get(outcomes, "avd", "monaco");
    report.rows.push(
        Row::close(
            "monaco over avd: dumbbell utilisation",
            None,
            avd.dumbbell.theory.as_ref().map(|t| t.utilization),
            avd.dumbbell.utilization,
            0.02,
        )
        .with_model(avd.dumbbell.model.map(|m| m.0)),
    );
    report.rows.push(Row::at_most(
        "monaco: dumbbell mean queueing delay, avd over droptail",
        None,
        None,
        avd.dumbbell.delay_mean_ms / dt.dumbbell.delay_mean_ms,
        0.5,
    ));
    // Loss-based TCP over tail drop fills the buffer and favours short round trips.
    let reno = get(outcomes, "droptail", "reno");
    report.rows.push(
        Row::at_least(
            "reno over droptail: dumbbell throughput, 24 ms flow over 162 ms flow",
            None,
            None,
            reno.dumbbell.rtt_unfairness,
            1.5,
        )
        .with_model(reno.dumbbell.model.map(|m| m.1)),
    );
    // CoDel holds the standing queue of loss-based senders near its 5 ms target (RFC 8289 §4.4)
    // where tail drop lets them fill the buffer.
    for s in ["reno", "cubic"] {
        report.rows.push(Row::at_most(
            format!("{s} over codel: dumbbell mean queueing delay (ms)"),
            None,
            None,
            get(outcomes, "codel", s).dumbbell.delay_mean_ms,
            10.0,
        ));
        report.rows.push(Row::at_least(
            format!("{s} over droptail: dumbbell mean queueing delay (ms)"),
            None,
            None,
            get(outcomes, "droptail", s).dumbbell.delay_mean_ms,
            30.0,
        ));
    }
    // DCTCP under marking AQMs loses nothing: ECN carries all its congestion signal.
    for q in ["codel", "fq-codel"] {
        let m = &get(outcomes, q, "dctcp").dumbbell;
        report.rows.push(Row::at_most(
            format!("dctcp over {q}: dumbbell drops (%)"),
            None,
            None,
            m.drop_pct,
            0.0,
        ));
    }
    // FQ-CoDel's round robin shares each link equally, whatever the scheme and round trip
    // (RFC 8290 §1.3): Jain ≥ 0.95 on the dumbbell, and per-link max-min on the parking lot
    // (cross over long flow ≤ 1.5, where proportional fairness gives 3). Not Monaco: FQ-CoDel
    // has no priority band, so its out-of-band and in-band control packets wait in the same
    // flow queue, the estimator sees no accumulation and the loop is driven by CoDel's drops.
    for s in SCHEMES.into_iter().filter(|&s| s != "monaco") {
        let o = get(outcomes, "fq-codel", s);
        report.rows.push(Row::at_least(
            format!("{s} over fq-codel: dumbbell Jain index"),
            None,
            None,
            o.dumbbell.jain,
            0.95,
        ));
        report.rows.push(Row::at_most(
            format!("{s} over fq-codel: parking lot, cross over long flow"),
            None,
            None,
            o.parking_lot.rtt_unfairness,
            1.5,
        ));
    }
    let m = &get(outcomes, "fq-codel", "monaco");
    report.notes.push(format!(
        "monaco over fq-codel (no priority band for its control packets): dumbbell utilisation {:.3}, Jain {:.3}, 24 ms over 162 ms {:.2}; parking lot cross over long {:.2} (theory 3, max-min 1)",
        m.dumbbell.utilization, m.dumbbell.jain, m.dumbbell.rtt_unfairness, m.parking_lot.rtt_unfairness
    ));
    // Every scheme keeps every bottleneck busy.
    let lowest = outcomes
        .iter()
        .flat_map(|o| [o.dumbbell.utilization, o.parking_lot.utilization])
        .fold(f64::INFINITY, f64::min);
    report.rows.push(Row::at_least(
        "lowest bottleneck utilisation of all runs",
        None,
        None,
        lowest,
        0.9,
    ));
}
