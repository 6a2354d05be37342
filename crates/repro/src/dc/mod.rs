//! dc-comparison: datacenter schemes on a fat-tree under a measured workload — acclab's own
//! experiment (issue 51), not a paper figure; its claims are stated with their reasons below.
//!
//! Monaco (ACC, 000 §IV-B), Vegas (002), Swift (Kumar et al. 2020), HPCC (Li et al. 2019),
//! DCTCP (RFC 8257) and CUBIC (RFC 9438), each alone on the fat-tree of `scenarios/repro/dc-comparison.toml`: web-search
//! flows (DCTCP paper) all-to-all at 30% and 60% load, with a periodic incast on top. One run
//! per (scheme, load). Per run: flow-completion-time slowdown (FCT over the ideal, unloaded FCT)
//! at p50 and p99 in each size bucket and overall, the flows left unfinished, the fabric's mean
//! and largest queue (over the links that carried traffic), drops and retransmission timeouts.
//! Files: `table.csv` (one row per scheme, load and bucket), `queues.csv` (per scheme and load)
//! and `slowdown-<load>.svg` (p99 slowdown by size bucket, one series per scheme).
//!
//! Every scheme runs with a 10-segment initial window and a 1 ms minimum RTO, as datacenter
//! stacks are configured (Linux's 200 ms is a WAN default; the DCTCP paper lowered it to 10 ms),
//! except HPCC, which starts at line rate (its W_init = B·T) as the paper's does.

use std::fmt::Write as _;

use acclab_core::config::{
    CubicParams, DctcpParams, HpccParams, MonacoParams, SchemeConfig, SwiftParams, VegasParams,
};
use acclab_core::{Bytes, Duration};
use acclab_results::fct::{summarise, FctBucket};
use acclab_results::plot::Series;
use rayon::prelude::*;

use crate::common::simulate;
use crate::{Exp, Report, ReproError, Row, Spec};

pub const COMPARISON: Spec = spec!(
    "dc-comparison",
    "Datacenter schemes on a k = 8 fat-tree: Monaco, Vegas, Swift, HPCC, DCTCP, CUBIC under web search at 30% and 60% load with incast",
    quick,
    dc_comparison
);

const SCHEMES: [&str; 6] = ["monaco", "vegas", "swift", "hpcc", "dctcp", "cubic"];
const LOADS: [f64; 2] = [0.3, 0.6];

/// Scheme `name` as the datacenter runs it: 10 segments (15 KB) initially, 1 ms minimum RTO.
fn scheme(name: &str, mss: u64) -> SchemeConfig {
    let (iw, min_rto) = (10, Duration::from_millis(1));
    match name {
        "monaco" => SchemeConfig::Monaco(Box::new(MonacoParams {
            initial_window: Bytes(iw * mss),
            initial_rtt: Duration::from_micros(20),
            min_rto,
            ..MonacoParams::default()
        })),
        "vegas" => SchemeConfig::Vegas(Box::new(VegasParams {
            initial_window: iw,
            min_rto,
            ..VegasParams::default()
        })),
        "swift" => SchemeConfig::Swift(Box::new(SwiftParams {
            initial_window: iw,
            min_rto,
            ..SwiftParams::default()
        })),
        "hpcc" => SchemeConfig::Hpcc(HpccParams {
            min_rto,
            ..HpccParams::default()
        }),
        "dctcp" => SchemeConfig::Dctcp(DctcpParams {
            initial_window: iw,
            min_rto,
            ..DctcpParams::default()
        }),
        "cubic" => SchemeConfig::Cubic(CubicParams {
            initial_window: iw,
            min_rto,
            ..CubicParams::default()
        }),
        other => unreachable!("no scheme {other} in SCHEMES"),
    }
}

/// What one (scheme, load) run measured.
struct Outcome {
    scheme: &'static str,
    load: f64,
    /// The web-search flows per size bucket, and overall (last).
    buckets: Vec<FctBucket>,
    /// The incast responses' slowdown, p50 and p99.
    incast: (Option<f64>, Option<f64>),
    /// Mean and largest queue (packets) over the links that carried traffic.
    mean_queue: f64,
    max_queue: u64,
    drops: u64,
    timeouts: u64,
    /// The CDF of the ToR downlinks' (edge→host) queue samples in the window: (packets,
    /// fraction of samples at or below).
    tor_queue: Vec<(f64, f64)>,
}

impl Outcome {
    /// p99 slowdown of the bucket labelled `sizes`.
    fn p99(&self, sizes: &str) -> Option<f64> {
        self.buckets
            .iter()
            .find(|b| b.sizes == sizes)
            .and_then(|b| b.slowdown_p99)
    }
}

fn dc_comparison(e: &Exp) -> Result<Report, ReproError> {
    let def = e.def()?;
    let mss = e.scenario()?.packet_size as u64;
    let cases: Vec<(&'static str, f64)> = LOADS
        .iter()
        .flat_map(|&l| SCHEMES.iter().map(move |&s| (s, l)))
        .collect();
    let outcomes: Vec<Result<Outcome, ReproError>> = cases
        .par_iter()
        .map(|&(s, load)| {
            let mut spec = def.clone();
            for w in &mut spec.workloads {
                w.scheme = scheme(s, mss);
                if w.id == "ws" {
                    w.load = Some(load);
                }
            }
            let sc = spec.resolve().map_err(|f| {
                ReproError::Other(format!("{s} at load {load}: {}: {}", f.key, f.message))
            })?;
            let run = simulate(e.ctx, &format!("{s}-{load}"), sc)?;
            let sum = &run.summary;
            // The web-search flows' completion times by size, and the incast's apart (its
            // 64 KB responses share one receiver's link by design: their slowdown measures
            // the incast, not the size bucket they fall in).
            let records = acclab_sim::output::fct_records(&run.sim)
                .ok_or_else(|| ReproError::Other("a workload run has completion times".into()))?;
            let (incast, ws): (Vec<_>, Vec<_>) = records
                .into_iter()
                .partition(|r| r.id.starts_with("incast"));
            let fct = summarise(ws, &run.sim.scenario().output.fct_buckets);
            let incast = summarise(incast, &[]).overall;
            let busy: Vec<_> = sum.links.iter().filter(|l| l.utilization > 0.0).collect();
            let tor_queue = tor_queue_cdf(&run.sim);
            Ok(Outcome {
                scheme: s,
                load,
                buckets: fct
                    .buckets
                    .into_iter()
                    .chain(std::iter::once(fct.overall))
                    .collect(),
                incast: (incast.slowdown_p50, incast.slowdown_p99),
                mean_queue: busy.iter().map(|l| l.mean_queue_pkts).sum::<f64>()
                    / busy.len().max(1) as f64,
                max_queue: sum
                    .links
                    .iter()
                    .map(|l| l.max_queue_pkts)
                    .max()
                    .unwrap_or(0),
                drops: sum.links.iter().map(|l| l.drops).sum(),
                // Every flow's, the workloads' too (summary.json lists only `[[flow]]` tables').
                timeouts: (0..run.sim.scenario().flows.len())
                    .map(|i| run.sim.endpoint_stats(i).0.timeouts)
                    .sum(),
                tor_queue,
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect::<Result<_, _>>()?;
    let mut report = e.report();
    write_tables(e, &outcomes, &mut report)?;
    for load in LOADS {
        draw(e, &outcomes, load, &mut report)?;
        draw_tor_queues(e, &outcomes, load, &mut report)?;
    }
    claims(&outcomes, &mut report);
    Ok(report)
}

fn outcome<'o>(outcomes: &'o [Outcome], s: &str, load: f64) -> &'o Outcome {
    outcomes
        .iter()
        .find(|o| o.scheme == s && o.load == load)
        .expect("every (scheme, load) ran")
}

/// The claims, each with its reason. At 60% load (and the short flows' bucket, where queueing
/// delay, not bandwidth, sets the completion time):
/// - DCTCP's p99 slowdown of flows under 100 KB is below CUBIC's: marking at K = 20 packets keeps
///   the queues short flows wait behind near K, where CUBIC fills the 200-packet buffers until
///   they drop (the DCTCP paper's §4.2.3 result, here on a fat-tree);
/// - DCTCP's, Swift's, HPCC's and Vegas's mean fabric queues are below CUBIC's: each holds the
///   queue at a threshold, a delay or a utilisation target instead of filling it;
/// - HPCC's mean fabric queue is at most half DCTCP's: HPCC reads every queue's length and
///   transmitted bytes from the telemetry and aims at η = 95% of each link, below capacity, so
///   queues drain (the HPCC paper's "near-zero queues", §5.3), where DCTCP, which learns of a
///   queue only once it passes K, keeps it near K;
/// - no scheme leaves more than 10% of the flows unfinished at the end (the run's tail is for
///   them to drain), so the slowdowns compare like with like.
fn claims(outcomes: &[Outcome], report: &mut Report) {
    let hi = LOADS[1];
    let short = |s: &str| -> f64 {
        let o = outcome(outcomes, s, hi);
        // The short-flow buckets (< 10 KB and 10–100 KB): the larger p99 of the two.
        o.buckets
            .iter()
            .take(2)
            .filter_map(|b| b.slowdown_p99)
            .fold(f64::NAN, f64::max)
    };
    let (dctcp, cubic) = (short("dctcp"), short("cubic"));
    report.rows.push(Row::at_most(
        format!("load {hi}: p99 slowdown of flows < 100 KB, dctcp / cubic"),
        None,
        None,
        dctcp / cubic,
        1.0,
    ));
    let cubic_queue = outcome(outcomes, "cubic", hi).mean_queue;
    for s in ["dctcp", "swift", "hpcc", "vegas"] {
        report.rows.push(Row::at_most(
            format!("load {hi}: mean fabric queue, {s} / cubic"),
            None,
            None,
            outcome(outcomes, s, hi).mean_queue / cubic_queue,
            1.0,
        ));
    }
    report.rows.push(Row::at_most(
        format!("load {hi}: mean fabric queue, hpcc / dctcp"),
        None,
        None,
        outcome(outcomes, "hpcc", hi).mean_queue / outcome(outcomes, "dctcp", hi).mean_queue,
        0.5,
    ));
    for o in outcomes {
        let all = o.buckets.last().expect("the overall bucket");
        report.rows.push(Row::at_most(
            format!("load {}: {} flows unfinished, fraction", o.load, o.scheme),
            None,
            None,
            all.unfinished as f64 / all.flows.max(1) as f64,
            0.1,
        ));
    }
}

/// `table.csv` (scheme, load, bucket: flows, unfinished, p50, p99) and `queues.csv`; both as
/// text in the notes.
fn write_tables(e: &Exp, outcomes: &[Outcome], report: &mut Report) -> Result<(), ReproError> {
    let csv_err = |err: csv::Error| ReproError::Other(format!("writing a table: {err}"));
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.3}"));
    let mut w = csv::Writer::from_path(e.ctx.out.join("table.csv")).map_err(csv_err)?;
    w.write_record([
        "scheme",
        "load",
        "sizes",
        "flows",
        "unfinished",
        "slowdown_p50",
        "slowdown_p99",
    ])
    .map_err(csv_err)?;
    let mut text = String::from("scheme, load: p50/p99 slowdown per size bucket");
    for o in outcomes {
        let _ = write!(text, "\n  {:<7} {:.1}:", o.scheme, o.load);
        for b in &o.buckets {
            let (p50, p99) = (opt(b.slowdown_p50), opt(b.slowdown_p99));
            w.write_record([
                o.scheme.to_string(),
                format!("{}", o.load),
                b.sizes.clone(),
                b.flows.to_string(),
                b.unfinished.to_string(),
                p50.clone(),
                p99.clone(),
            ])
            .map_err(csv_err)?;
            let _ = write!(text, "  {} {p50}/{p99}", b.sizes);
        }
    }
    w.flush()?;
    report.notes.push(text);
    let mut w = csv::Writer::from_path(e.ctx.out.join("queues.csv")).map_err(csv_err)?;
    w.write_record([
        "scheme",
        "load",
        "mean_queue_pkts",
        "max_queue_pkts",
        "drops",
        "timeouts",
        "incast_slowdown_p50",
        "incast_slowdown_p99",
    ])
    .map_err(csv_err)?;
    let mut text = String::from(
        "scheme, load: mean/max fabric queue (packets), drops, timeouts, incast slowdown p50/p99",
    );
    for o in outcomes {
        w.write_record([
            o.scheme.to_string(),
            format!("{}", o.load),
            format!("{:.3}", o.mean_queue),
            o.max_queue.to_string(),
            o.drops.to_string(),
            o.timeouts.to_string(),
            opt(o.incast.0),
            opt(o.incast.1),
        ])
        .map_err(csv_err)?;
        let _ = write!(
            text,
            "\n  {:<7} {:.1}: {:.2} / {}, {} drops, {} timeouts, incast {}/{}",
            o.scheme,
            o.load,
            o.mean_queue,
            o.max_queue,
            o.drops,
            o.timeouts,
            opt(o.incast.0),
            opt(o.incast.1)
        );
    }
    w.flush()?;
    report.notes.push(text);
    report
        .files
        .extend(["table.csv".into(), "queues.csv".into()]);
    Ok(())
}

/// `slowdown-<load>.svg`: p99 slowdown by size bucket (the buckets' indices on x, named in the
/// axis label), one series per scheme.
/// The ToR downlinks' queue occupancy CDF of a run: its edge→host series of the fabric's
/// queue CDF (acclab_results::queues), from the link samples in the window.
fn tor_queue_cdf(sim: &acclab_sim::Simulator) -> Vec<(f64, f64)> {
    let sc = sim.scenario();
    let (from, to) = sc.output.window;
    let samples = sim.monitor().link_samples.iter().map(|s| {
        (
            sc.links[s.link as usize].name.clone(),
            s.t_s,
            s.queue_pkts as f64,
        )
    });
    acclab_results::queues::queue_cdf_chart(
        &sc.name,
        (from.as_secs_f64(), to.as_secs_f64()),
        &sc.output.sample_interval.to_string(),
        samples,
    )
    .and_then(|c| {
        c.series
            .into_iter()
            .find(|s| s.name.starts_with("edge→host"))
            .map(|s| s.points)
    })
    .unwrap_or_default()
}

/// The ToR downlinks' queue occupancy CDF at `load`, a line per scheme: where incasts and
/// many-to-one web-search traffic queue. Most samples find a port empty, so the figure is the
/// distribution of the non-empty ones on a log axis, each scheme's legend saying how often its
/// ports were non-empty.
fn draw_tor_queues(
    e: &Exp,
    outcomes: &[Outcome],
    load: f64,
    report: &mut Report,
) -> Result<(), ReproError> {
    let series = SCHEMES
        .iter()
        .map(|&s| {
            let cdf = &outcome(outcomes, s, load).tor_queue;
            let empty = cdf
                .iter()
                .take_while(|p| p.0 == 0.0)
                .last()
                .map_or(0.0, |p| p.1);
            let busy = 1.0 - empty;
            let points = cdf
                .iter()
                .filter(|p| p.0 > 0.0 && busy > 0.0)
                .map(|&(q, f)| (q, (f - empty) / busy))
                .collect();
            Series::new(format!("{s} (non-empty {:.1}%)", busy * 100.0), points)
        })
        .collect();
    let percent = (load * 100.0).round();
    let chart = acclab_results::plot::Chart {
        log_x: true,
        ..crate::common::chart(
            format!(
                "{}: ToR downlink (edge→host) queues when non-empty, {percent}% load, sampled every 100 µs",
                e.id()
            ),
            "queue (packets, log)",
            "fraction of non-empty samples at or below",
            series,
        )
    };
    report.files.extend(acclab_results::plot::write_chart(
        &e.ctx.out,
        &format!("queue-cdf-{percent}"),
        &chart,
    )?);
    Ok(())
}

fn draw(e: &Exp, outcomes: &[Outcome], load: f64, report: &mut Report) -> Result<(), ReproError> {
    let labels: Vec<String> = outcome(outcomes, SCHEMES[0], load)
        .buckets
        .iter()
        .map(|b| b.sizes.clone())
        .filter(|l| l != "all")
        .collect();
    let series = SCHEMES
        .iter()
        .map(|&s| {
            let o = outcome(outcomes, s, load);
            let points = labels
                .iter()
                .enumerate()
                .filter_map(|(i, l)| o.p99(l).map(|v| (i as f64, v)))
                .collect();
            Series {
                markers: true,
                ..Series::new(s, points)
            }
        })
        .collect();
    let named: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{i}: {l}"))
        .collect();
    let percent = (load * 100.0).round();
    e.draw(
        report,
        &format!("slowdown-{percent}"),
        format!("p99 slowdown, {percent}% load"),
        &format!("flow size bucket ({})", named.join(", ")),
        "p99 slowdown (FCT / ideal FCT)",
        series,
    )
}
