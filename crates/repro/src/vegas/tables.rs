//! 002 Tables I and II (Figs. 2, 3): five classes of Vegas flows on one link, per class rate,
//! RTT, window and baseRTT against the paper's model column.

use acclab_results::plot::{write_chart, Series};

use crate::checks::{
    kbps, FlowCheck, FlowQuantity, Flows, Test, Units, BASE_RTT_MS, RTT_MS, SENDING_RATE_KBPS,
    WINDOW_PKTS,
};
use crate::common::{self, classes, flow_series, mean_of, queue_series, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{window_kb, BOTTLENECK};

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
        &chart("sending rate", "sending rate (KB/s)", rates),
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
            "queue (packets)",
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
