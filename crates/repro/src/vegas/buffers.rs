//! 002 Fig. 8: retransmissions of Reno and Vegas against the buffer size.

use acclab_core::config::{DroptailParams, QueueConfig, RenoParams, SchemeConfig};
use acclab_core::Limit;
use acclab_results::plot::{write_chart, Series};
use acclab_scenario::Scenario;
use rayon::prelude::*;

use crate::common::{self, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::BOTTLENECK;

/// 002 Figure 8: retransmissions of Reno and Vegas against the buffer size.
pub const FIG8: Spec = spec!(
    "vegas-fig8",
    "002 Fig. 8: 100 flows, Reno vs Vegas (α 1, β 3) over bottleneck buffer sizes",
    quick,
    vegas_fig8
);

/// One point of the Figure 8 sweep.
struct Point {
    buffer: u64,
    reno: bool,
    retransmits: f64,
    /// Retransmissions inside the measurement window, after the start-up transient.
    retransmits_steady: f64,
    /// The model tier's packets lost per flow in the same stretch (each loss is retransmitted).
    model_lost_steady: Option<f64>,
    goodput_kbps: f64,
}

/// Buffer sizes swept (packets), full and quick.
const FIG8_BUFFERS: [u64; 8] = [25, 50, 100, 150, 200, 300, 400, 600];
const FIG8_BUFFERS_QUICK: [u64; 7] = [5, 10, 20, 40, 60, 90, 120];

fn with_buffer(sc: &Scenario, link: usize, buffer: u64, reno: bool) -> Scenario {
    let mut sc = sc.clone();
    sc.links[link].queue = QueueConfig::Droptail(DroptailParams {
        limit: Limit::Packets(buffer),
        priority: false,
    });
    if reno {
        for f in sc.flows.written_mut() {
            f.scheme = SchemeConfig::Reno(RenoParams::default());
        }
    }
    sc
}

fn vegas_fig8(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let bottleneck = common::link(&base, BOTTLENECK)?;
    let buffers: &[u64] = if ctx.quick {
        &FIG8_BUFFERS_QUICK
    } else {
        &FIG8_BUFFERS
    };
    let n = base.flows.len() as f64;
    // Vegas needs room for its backlog: between α and β packets per flow.
    let backlog_max = 3.0 * n;
    let points: Vec<(u64, bool)> = buffers
        .iter()
        .flat_map(|&b| [(b, false), (b, true)])
        .collect();
    let (w0, w1) = base.output.window;
    let results: Vec<Result<Point, ReproError>> = points
        .par_iter()
        .map(|&(buffer, reno)| {
            let label = format!("{}-{buffer}pkt", if reno { "reno" } else { "vegas" });
            let run = simulate(ctx, &label, with_buffer(&base, bottleneck, buffer, reno))?;
            let s = &run.summary;
            let per_flow = |f: &dyn Fn(&acclab_results::summary::FlowSummary) -> u64| {
                s.flows.iter().map(|x| f(x) as f64).sum::<f64>() / n
            };
            Ok(Point {
                buffer,
                reno,
                retransmits: per_flow(&|f| f.retransmits),
                retransmits_steady: per_flow(&|f| f.retransmits_in_window),
                model_lost_steady: run
                    .model_lost_between(w0.as_secs_f64(), w1.as_secs_f64())
                    .map(|l| l / n),
                goodput_kbps: s
                    .flows
                    .iter()
                    .map(|f| f.delivered_bytes as f64)
                    .sum::<f64>()
                    / s.sim_time_s
                    / 1000.0,
            })
        })
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut report = e.report();
    // The paper's claim is about the steady state: with room for its backlog Vegas settles
    // without loss, while Reno keeps probing into loss (002 §3.3, §6.4). The 100 flows start
    // together, and the burst of their first windows can overflow even a large buffer in the
    // first half second; those start-up losses are in the totals (retransmissions.png,
    // sweep.csv) but the checks count retransmissions inside the window, after 5 s.
    for p in &results {
        let b = p.buffer;
        let what = format!(
            "retransmissions per flow in {}–{} s, buffer {b} pkts",
            w0.as_secs_f64(),
            w1.as_secs_f64()
        );
        if p.reno {
            // The paper draws Reno's retransmissions without a value to compare with; its
            // claim about them, that they never stop, is the row after these.
            report.rows.push(
                Row::information(
                    format!("Reno {what}"),
                    None,
                    None,
                    p.retransmits_steady,
                    "002 Fig. 8 draws it; the claim is the fewest, below",
                )
                .with_model(p.model_lost_steady),
            );
        } else if b as f64 >= backlog_max {
            report.rows.push(
                Row::at_most(
                    format!("Vegas {what}"),
                    Some(0.0),
                    None,
                    p.retransmits_steady,
                    0.0,
                )
                .with_model(p.model_lost_steady),
            );
        }
    }
    let fewest = results
        .iter()
        .filter(|p| p.reno)
        .map(|p| p.retransmits_steady)
        .fold(f64::INFINITY, f64::min);
    if fewest.is_finite() {
        report.rows.push(
            Row::at_least(
                format!(
                    "Reno's fewest retransmissions per flow in {}–{} s, over every buffer",
                    w0.as_secs_f64(),
                    w1.as_secs_f64()
                ),
                None,
                None,
                fewest,
                1.0,
            )
            .because("Reno keeps retransmitting at every buffer size (002 Fig. 8)"),
        );
    }
    let series = |reno: bool, f: &dyn Fn(&Point) -> f64| -> Vec<(f64, f64)> {
        results
            .iter()
            .filter(|p| p.reno == reno)
            .map(|p| (p.buffer as f64, f(p)))
            .collect()
    };
    let chart = |what: &str, y: &str, f: &dyn Fn(&Point) -> f64| {
        common::chart(
            format!("{}: {what} against buffer size", e.id()),
            "buffer (packets)",
            y,
            vec![
                Series::new("Reno", series(true, f)).with_markers(),
                Series::new("Vegas", series(false, f)).with_markers(),
            ],
        )
    };
    report.files.extend(write_chart(
        &ctx.out,
        "retransmissions",
        &chart(
            "retransmissions per flow",
            "retransmissions (packets per flow)",
            &|p| p.retransmits,
        ),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "retransmissions-steady",
        &chart(
            "retransmissions after the start-up transient",
            "retransmissions (packets per flow)",
            &|p| p.retransmits_steady,
        ),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "goodput",
        &chart("total goodput", "total goodput (KB/s)", &|p| p.goodput_kbps),
    )?);
    let mut w = csv::Writer::from_path(ctx.out.join("sweep.csv")).map_err(std::io::Error::other)?;
    w.write_record([
        "buffer_pkts",
        "scheme",
        "retransmissions_per_flow",
        "retransmissions_in_window_per_flow",
        "goodput_kBps",
    ])
    .map_err(std::io::Error::other)?;
    for p in &results {
        w.write_record([
            p.buffer.to_string(),
            (if p.reno { "reno" } else { "vegas" }).into(),
            p.retransmits.to_string(),
            p.retransmits_steady.to_string(),
            p.goodput_kbps.to_string(),
        ])
        .map_err(std::io::Error::other)?;
    }
    w.flush()?;
    report.files.push("sweep.csv".into());
    report.notes.push(format!(
        "Vegas's backlog is between {} and {} packets (α·N … β·N)",
        n, backlog_max
    ));
    Ok(report)
}
