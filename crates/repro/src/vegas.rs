//! The Vegas experiments of 002 (Low, Peterson, Wang — Understanding TCP Vegas: a duality model).

use acclab_core::config::{BaseRttParam, DroptailParams, QueueConfig, RenoParams, SchemeConfig};
use acclab_core::{Duration, Limit};
use acclab_results::plot::{write_chart, Series};
use acclab_scenario::Scenario;
use acclab_theory::equilibrium::propagation_delay;
use acclab_theory::num::{self, Problem};
use acclab_theory::vegas_error::serial_arrivals;
use rayon::prelude::*;

use crate::checks::{
    kbps, FlowCheck, FlowQuantity, Flows, Test, Units, BASE_RTT_MS, RTT_MS, SENDING_RATE_KBPS,
    WINDOW_PKTS,
};
use crate::common::{self, classes, flow_series, mean_of, period_mean, queue_series, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

const BOTTLENECK: &str = "r1->r2";

/// The paper's model column of Table I or II: per quantity checked, its value for each class
/// 1a…5a (each checked within 3% of the theory: [`single_link`]).
struct PaperTable {
    columns: [(&'static FlowQuantity, [f64; 5]); 4],
    queue_pkts: f64,
    /// Flows in the paper's run (to scale the queue for the quick variant).
    flows: usize,
}

const PAPER_TABLE1: PaperTable = PaperTable {
    columns: [
        (&SENDING_RATE_KBPS, [1200.0; 5]),
        (&RTT_MS, [16.84, 16.84, 21.84, 31.84, 41.84]),
        (&WINDOW_PKTS, [20.2, 20.2, 26.2, 38.2, 50.2]),
        (&BASE_RTT_MS, [15.17, 15.17, 20.17, 30.17, 40.17]),
    ],
    queue_pkts: 500.0,
    flows: 250,
};

const PAPER_TABLE2: PaperTable = PaperTable {
    columns: [
        (&SENDING_RATE_KBPS, [753.2, 753.2, 1001.0, 1498.0, 1994.0]),
        (&RTT_MS, [19.2, 19.2, 24.2, 34.2, 44.2]),
        (&WINDOW_PKTS, [14.5, 14.5, 24.2, 51.2, 88.2]),
        (&BASE_RTT_MS, [15.17, 15.17, 20.17, 30.17, 40.17]),
    ],
    queue_pkts: 1208.85,
    flows: 250,
};

/// Tables I and II: five classes on one link, per-class rate, RTT, window, baseRTT, and the queue.
fn single_link(e: &Exp, paper: &PaperTable) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let id = e.id();
    let sc = e.scenario()?;
    let pkt = sc.packet_size as f64;
    let queue_scale = sc.flows.len() as f64 / paper.flows as f64;
    let bottleneck = common::link(&sc, BOTTLENECK)?;
    let run = simulate(ctx, "run", sc)?;
    let s = &run.summary;
    let mut report = e.report();
    const TOL: f64 = 0.03;
    let groups = classes(s);
    let units = Units { packet_bytes: pkt };
    for (k, (class, _)) in groups.iter().enumerate().take(5) {
        for (quantity, column) in &paper.columns {
            let check = FlowCheck {
                flows: Flows::Class(class),
                quantity,
                paper: Some(column[k]),
                test: Test::Close(TOL),
            };
            report.rows.push(check.row("", s, &units));
        }
    }
    let q_label = if ctx.quick {
        "queue at router 1 (pkts; paper scaled to the flow count)"
    } else {
        "queue at router 1 (pkts)"
    };
    report.rows.push(
        Row::close(
            q_label,
            Some(paper.queue_pkts * queue_scale),
            s.links[bottleneck].theory.as_ref().map(|t| t.queue_pkts),
            s.links[bottleneck].mean_queue_pkts,
            TOL,
        )
        .with_model(
            s.links[bottleneck]
                .model
                .as_ref()
                .map(|m| m.mean_queue_pkts),
        ),
    );
    // Figures 2 and 3: class averages over time against the predicted levels.
    let end = s.sim_time_s;
    let mut rates = Vec::new();
    let mut windows = Vec::new();
    for (class, idx) in &groups {
        rates.push(Series::new(
            class.clone(),
            flow_series(&run.sim, idx, |f| Some(kbps(f.send_rate_bps))),
        ));
        windows.push(Series::new(
            class.clone(),
            flow_series(&run.sim, idx, |f| f.cwnd_bytes.map(|c| c as f64 / 1e3)),
        ));
        if let Some(t) = mean_of(s, idx, |x| {
            x.theory.as_ref().map(|t| kbps(t.throughput_bps))
        }) {
            rates.push(Series::level(format!("{class} predicted"), t, 0.0, end));
        }
        if let Some(t) = mean_of(s, idx, |x| x.theory.as_ref().map(|t| t.cwnd_bytes / 1e3)) {
            windows.push(Series::level(format!("{class} predicted"), t, 0.0, end));
        }
    }
    let chart = |what: &str, y: &str, series| {
        common::chart(
            format!("{id}: average {what} per class"),
            "time (s)",
            y,
            series,
        )
    };
    report.files.extend(write_chart(
        &ctx.out,
        "rates",
        &chart("sending rate", "KB/s", rates),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "windows",
        &chart("congestion window", &window_kb(pkt), windows),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "queue",
        &common::chart(
            format!("{id}: queue at router 1"),
            "time (s)",
            "packets",
            vec![Series::new("queue", queue_series(&run.sim, bottleneck))],
        ),
    )?);
    report
        .notes
        .push(format!("{} flows, {}", s.flows.len(), common::speed(s)));
    Ok(report)
}

/// 002 Table I.
pub const TABLE1: Spec = spec!(
    "vegas-table1",
    "002 Table I / Fig. 2: Vegas PF (α = β = 2 pkts per RTT), 5 classes × 50 flows on 2.4 Gb/s",
    quick,
    vegas_table1
);

fn vegas_table1(e: &Exp) -> Result<Report, ReproError> {
    single_link(e, &PAPER_TABLE1)
}

/// 002 Table II.
pub const TABLE2: Spec = spec!(
    "vegas-table2",
    "002 Table II / Fig. 3: Vegas WPF (α = β = 2 pkts per 10 ms), 5 classes × 50 flows on 2.4 Gb/s",
    quick,
    vegas_table2
);

fn vegas_table2(e: &Exp) -> Result<Report, ReproError> {
    single_link(e, &PAPER_TABLE2)
}

/// 002 Figure 5: elephants with mice.
pub const FIG5: Spec = spec!(
    "vegas-fig5",
    "002 Fig. 5: Vegas persistent flows with 20% on-off mice converge to (capacity − mice load)/N",
    quick,
    vegas_fig5
);

fn vegas_fig5(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let sc = e.scenario()?;
    let bottleneck = common::link(&sc, BOTTLENECK)?;
    let capacity_kbps = kbps(sc.links[bottleneck].rate.as_f64());
    let (from, to) = sc.output.window;
    let run = simulate(ctx, "run", sc)?;
    let s = &run.summary;
    let is_mouse = |i: usize| s.flows[i].kind == "onoff";
    let persistent: Vec<usize> = (0..s.flows.len()).filter(|&i| !is_mouse(i)).collect();
    let mice_kbps: f64 = (0..s.flows.len())
        .filter(|&i| is_mouse(i))
        .map(|i| kbps(s.flows[i].throughput_bps))
        .sum();
    let persistent_kbps: f64 = persistent
        .iter()
        .map(|&i| kbps(s.flows[i].throughput_bps))
        .sum();
    // Mice sent bytes over the whole run as a fraction of all bytes sent.
    let sent = |mice: bool| -> f64 {
        (0..s.flows.len())
            .filter(|&i| is_mouse(i) == mice)
            .map(|i| s.flows[i].sent_bytes as f64)
            .sum()
    };
    let mice_share = sent(true) / (sent(true) + sent(false));
    // Theory: persistent flows share what the mice leave, equally (same α, PF).
    let fair = (capacity_kbps - mice_kbps) / persistent.len() as f64;
    let mut report = e.report();
    report.rows.push(Row::close(
        "mice share of packets sent",
        Some(0.20),
        None,
        mice_share,
        0.5,
    ));
    for (class, idx) in classes(s).iter().filter(|(_, idx)| !is_mouse(idx[0])) {
        let measured = mean_of(s, idx, |f| Some(kbps(f.throughput_bps))).unwrap_or(f64::NAN);
        let fluid = mean_of(s, idx, |f| f.model.as_ref().map(|m| kbps(m.throughput_bps)));
        report.rows.push(
            Row::close(
                format!("{class} persistent rate (KB/s)"),
                Some(4800.0),
                Some(fair),
                measured,
                0.10,
            )
            .with_model(fluid),
        );
    }
    report.rows.push(
        Row::at_least(
            "bottleneck utilisation (mice leave gaps)",
            None,
            Some(1.0),
            s.links[bottleneck].utilization,
            0.9,
        )
        .with_model(s.links[bottleneck].model.as_ref().map(|m| m.utilization)),
    );
    let q = queue_series(&run.sim, bottleneck);
    let inside: Vec<f64> = q
        .iter()
        .filter(|p| p.0 > from.as_secs_f64() && p.0 <= to.as_secs_f64())
        .map(|p| p.1)
        .collect();
    let mean_q = inside.iter().sum::<f64>() / inside.len().max(1) as f64;
    let sd = (inside.iter().map(|x| (x - mean_q).powi(2)).sum::<f64>()
        / inside.len().max(1) as f64)
        .sqrt();
    report.rows.push(Row::at_least(
        "queue coefficient of variation (oscillates)",
        None,
        None,
        sd / mean_q.max(1e-9),
        0.1,
    ));
    report.notes.push(format!(
        "mice carried {mice_kbps:.0} KB/s and persistent flows {persistent_kbps:.0} KB/s of {capacity_kbps:.0} KB/s in the window"
    ));
    let end = s.sim_time_s;
    let mut rates: Vec<Series> = classes(s)
        .iter()
        .filter(|(_, idx)| !is_mouse(idx[0]))
        .map(|(c, idx)| {
            Series::new(
                c.clone(),
                flow_series(&run.sim, idx, |f| Some(kbps(f.send_rate_bps))),
            )
        })
        .collect();
    rates.push(Series::level("(capacity − mice)/N", fair, 0.0, end));
    e.draw(
        &mut report,
        "rates",
        "average sending rate of persistent flows",
        "time (s)",
        "KB/s",
        rates,
    )?;
    e.draw(
        &mut report,
        "queue",
        "queue at router 1",
        "time (s)",
        "packets",
        vec![Series::new("queue", q)],
    )?;
    Ok(report)
}

/// The paper's Table V model column: rates (KB/s) of the active sources and the queue, per period.
const TABLE5_RATES: [&[f64]; 5] = [
    &[6000.0],
    &[2000.0, 4000.0],
    &[940.0, 1490.0, 3570.0],
    &[500.0, 730.0, 1350.0, 3390.0],
    &[290.0, 400.0, 670.0, 1300.0, 3340.0],
];
const TABLE5_QUEUES: [f64; 5] = [20.0, 60.0, 127.0, 238.0, 416.0];
const TABLE6_BASE_RTT_MS: [f64; 5] = [10.18, 13.51, 20.18, 31.2, 49.80];

/// 002 Tables V and VI (and Fig. 6): baseRTT error and persistent congestion.
pub const TABLE5: Spec = spec!(
    "vegas-table5",
    "002 Tables V–VI / Fig. 6: 5 Vegas sources starting serially; fixed vs discovered baseRTT",
    vegas_table5
);

fn vegas_table5(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // 48 Mb/s for 100 s runs in well under a second: the quick variant is the full one.
    let discovered = e.scenario()?;
    let mut fixed = discovered.clone();
    for f in &mut fixed.flows {
        if let SchemeConfig::Vegas(p) = &mut f.scheme {
            p.base_rtt = BaseRttParam::Fixed(Duration::from_millis(10));
        }
    }
    let bottleneck = common::link(&discovered, BOTTLENECK)?;
    let bits = 8.0 * discovered.packet_size as f64;
    let c = discovered.links[bottleneck].rate.as_f64() / bits;
    let d = propagation_delay(&discovered, &discovered.flows[0]);
    let period = discovered.flows[1].start.as_secs_f64();
    let (alpha, alpha_unit) = match &discovered.flows[0].scheme {
        SchemeConfig::Vegas(p) => match p.per {
            acclab_core::config::PerUnit::Time(u) => (p.alpha, u.as_secs_f64()),
            acclab_core::config::PerUnit::Rtt => (p.alpha, d),
        },
        _ => return Err(ReproError::Other("vegas-table5 needs Vegas flows".into())),
    };
    let alpha_rate = alpha / alpha_unit; // packets per second
    let [fixed_run, found_run] =
        common::simulate_all(ctx, [("fixed", fixed), ("discovered", discovered)])?;

    let mut report = e.report();
    // (a) fixed baseRTT = 10 ms: each source keeps α·10 ms = 20 packets; theory per period
    // from the NUM problem with n identical sources (baseRTT error 10 ms − d, 002 Theorem 3).
    // Each period is measured over its last quarter: the newest source raises its window by
    // one packet per RTT and needs most of the period to reach its equilibrium.
    let q_fixed = queue_series(&fixed_run.sim, bottleneck);
    for n in 1..=5 {
        let (t0, t1) = (period * (n as f64 - 0.25), period * n as f64);
        let base = 0.010;
        let p = Problem {
            capacity: vec![c],
            routes: vec![vec![0]; n],
            weight: vec![alpha_rate * base; n],
            linear: vec![base - d; n],
            min_rate: vec![],
        };
        let sol = num::solve(&p)?;
        report.rows.push(Row::close(
            format!("(a) fixed baseRTT: queue with {n} sources (pkts)"),
            Some(20.0 * n as f64),
            Some(sol.price[0] * c),
            period_mean(&q_fixed, t0, t1),
            0.05,
        ));
    }
    // (b) discovered baseRTT: the serial-arrival recursion (002 eqs. 27–29).
    let (model, base_rtts) = serial_arrivals(c, alpha_rate, d, 5);
    let q_found = queue_series(&found_run.sim, bottleneck);
    let q_fluid = found_run.model_link_series(bottleneck, |r| r.queue_pkts);
    for (t, m) in model.iter().enumerate() {
        let (t0, t1) = (period * (t as f64 + 0.75), period * (t as f64 + 1.0));
        report.rows.push(
            Row::close(
                format!("(b) queue, period {} (pkts)", t + 1),
                Some(TABLE5_QUEUES[t]),
                Some(m.queue_pkts),
                period_mean(&q_found, t0, t1),
                0.05,
            )
            .with_model(q_fluid.as_ref().map(|q| period_mean(q, t0, t1))),
        );
        for (n, x) in m.rates.iter().enumerate() {
            let series = flow_series(&found_run.sim, &[n], |f| Some(kbps(f.throughput_bps)));
            let fluid = found_run.model_flow_series(&[n], |f| Some(kbps(f.throughput_bps)));
            report.rows.push(
                Row::close(
                    format!("(b) period {}: host{}a rate (KB/s)", t + 1, n + 1),
                    Some(TABLE5_RATES[t][n]),
                    Some(x * bits / 8000.0),
                    period_mean(&series, t0, t1),
                    0.05,
                )
                .with_model(fluid.as_ref().map(|s| period_mean(s, t0, t1))),
            );
        }
    }
    for (n, b) in base_rtts.iter().enumerate() {
        report.rows.push(Row::close(
            format!("(b) host{}a baseRTT (ms)", n + 1),
            Some(TABLE6_BASE_RTT_MS[n]),
            Some(b * 1e3),
            found_run.summary.flows[n].base_rtt_s.unwrap_or(f64::NAN) * 1e3,
            0.05,
        ));
    }
    let queue_chart = |what: &str, stem: &str, q: Vec<(f64, f64)>| {
        write_chart(
            &ctx.out,
            stem,
            &common::chart(
                format!("{}: queue, {what} (Fig. 6)", e.id()),
                "time (s)",
                "packets",
                vec![Series::new("queue at router 1", q)],
            ),
        )
    };
    report.files.extend(queue_chart(
        "baseRTT fixed at 10 ms",
        "queue-fixed",
        q_fixed,
    )?);
    report.files.extend(queue_chart(
        "baseRTT discovered",
        "queue-discovered",
        q_found,
    )?);
    let rates: Vec<Series> = (0..5)
        .map(|n| {
            Series::new(
                format!("host{}a", n + 1),
                flow_series(&found_run.sim, &[n], |f| Some(kbps(f.throughput_bps))),
            )
        })
        .collect();
    e.draw(
        &mut report,
        "rates-discovered",
        "rates with discovered baseRTT",
        "time (s)",
        "KB/s",
        rates,
    )?;
    report.notes.push(format!(
        "theory uses the simulated path's d = {:.3} ms (propagation + transmission); the paper's model uses 10 ms",
        d * 1e3
    ));
    Ok(report)
}

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
        for f in &mut sc.flows {
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
            report.rows.push(
                Row::at_least(
                    format!("Reno {what}"),
                    None,
                    None,
                    p.retransmits_steady,
                    1.0,
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
        &chart("retransmissions per flow", "packets per flow", &|p| {
            p.retransmits
        }),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "retransmissions-steady",
        &chart(
            "retransmissions after the start-up transient",
            "packets per flow",
            &|p| p.retransmits_steady,
        ),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "goodput",
        &chart("total goodput", "KB/s", &|p| p.goodput_kbps),
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

/// The paper's per-period utilisation (Fig. 7 caption) and Table VII's model baseRTTs.
const FIG7_UTILISATION: [f64; 5] = [0.90, 0.96, 0.93, 0.91, 0.90];
const TABLE7_BASE_RTT_MS: [f64; 5] = [10.18, 10.18, 20.18, 10.18, 30.18];

/// 002 Fig. 7 and Table VII: Vegas+REM.
pub const REM_FIG7: Spec = spec!("vegas-rem-fig7", "002 Fig. 7 / Table VII: Vegas+REM — weighted-PF shares, low queue, 90–96% utilisation, exact baseRTTs", vegas_rem_fig7);
fn vegas_rem_fig7(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // 48 Mb/s for 100 s runs in a third of a second: quick is the full run.
    let sc = e.scenario()?;
    let sc_packet_size = sc.packet_size as f64;
    let bottleneck = common::link(&sc, BOTTLENECK)?;
    let period = sc.flows[1].start.as_secs_f64();
    let run = simulate(ctx, "run", sc)?;
    let s = &run.summary;
    let mut report = e.report();
    let q = queue_series(&run.sim, bottleneck);
    let util: Vec<(f64, f64)> = run
        .sim
        .monitor()
        .link_samples
        .iter()
        .filter(|x| x.link as usize == bottleneck)
        .map(|x| (x.t_s, x.utilization))
        .collect();
    let util_fluid = run.model_link_series(bottleneck, |r| r.utilization);
    let q_fluid = run.model_link_series(bottleneck, |r| r.queue_pkts);
    for (t, paper) in FIG7_UTILISATION.iter().enumerate() {
        let (t0, t1) = (period * (t as f64 + 0.5), period * (t as f64 + 1.0));
        // The paper's claim is the range 90–96%; checked as 93% ± 5.5% (the range ± 2 points).
        report.rows.push(
            Row::close(
                format!(
                    "period {}: utilisation (paper {:.0}%, range 90–96%)",
                    t + 1,
                    paper * 100.0
                ),
                Some(0.93),
                None,
                period_mean(&util, t0, t1),
                0.055,
            )
            .with_model(util_fluid.as_ref().map(|u| period_mean(u, t0, t1))),
        );
        report.rows.push(
            Row::at_most(
                format!("period {}: mean queue (pkts; stays low)", t + 1),
                None,
                Some(0.0),
                period_mean(&q, t0, t1),
                5.0,
            )
            .with_model(q_fluid.as_ref().map(|q| period_mean(q, t0, t1))),
        );
    }
    // With all five active: each source's share of the throughput against weighted PF (the
    // shares, not the absolute rates: REM keeps the link ~90% busy, the model assumes 100%).
    let total: f64 = s.flows.iter().map(|f| f.throughput_bps).sum();
    let predicted: f64 = s
        .flows
        .iter()
        .filter_map(|f| f.theory.as_ref().map(|t| t.throughput_bps))
        .sum();
    let fluid_total: Option<f64> = s
        .flows
        .iter()
        .map(|f| f.model.as_ref().map(|m| m.throughput_bps))
        .sum();
    for f in &s.flows {
        let share = f.throughput_bps / total;
        let theory = f.theory.as_ref().map(|t| t.throughput_bps / predicted);
        let fluid = f
            .model
            .as_ref()
            .zip(fluid_total)
            .map(|(m, t)| m.throughput_bps / t);
        report.rows.push(
            Row::close(
                format!("{}: share of the throughput, all active", f.id),
                None,
                theory,
                share,
                0.05,
            )
            .with_model(fluid),
        );
    }
    for (f, paper) in s.flows.iter().zip(TABLE7_BASE_RTT_MS) {
        let theory = f.theory.as_ref().map(|t| t.base_rtt_s * 1e3);
        report.rows.push(Row::close(
            format!("{}: baseRTT (ms)", f.id),
            Some(paper),
            theory,
            f.base_rtt_s.unwrap_or(f64::NAN) * 1e3,
            0.01,
        ));
    }
    let windows: Vec<Series> = (0..s.flows.len())
        .map(|i| {
            Series::new(
                s.flows[i].id.clone(),
                flow_series(&run.sim, &[i], |f| f.cwnd_bytes.map(|c| c as f64 / 1000.0)),
            )
        })
        .collect();
    e.draw(
        &mut report,
        "windows",
        "congestion windows",
        "time (s)",
        &window_kb(sc_packet_size),
        windows,
    )?;
    e.draw(
        &mut report,
        "queue",
        "queue at router 1",
        "time (s)",
        "packets",
        vec![Series::new("queue", q)],
    )?;
    Ok(report)
}

/// The y label of a window plot: KB, as every window people read in acclab, with what a packet
/// is (002's tables count windows in packets).
fn window_kb(packet_bytes: f64) -> String {
    format!("KB (one packet = {} KB)", packet_bytes / 1e3)
}
