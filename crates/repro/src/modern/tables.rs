//! modern-comparison's files: a table per bottleneck type, every flow of every run, and the
//! dumbbell's throughput against base RTT per queue.

use std::fmt::Write as _;

use acclab_results::plot::Series;

use crate::common::mbps;
use crate::{Exp, Report, ReproError};

use super::metrics::{outcome, Outcome};
use super::{QUEUES, SCHEMES};

/// `table-<queue>.csv` per bottleneck type and `flows.csv`, and the tables as text in the notes.
pub(super) fn write_tables(
    e: &Exp,
    outcomes: &[Outcome],
    report: &mut Report,
) -> Result<(), ReproError> {
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
            let o = outcome(outcomes, q, s);
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
pub(super) fn draw(
    e: &Exp,
    outcomes: &[Outcome],
    q: &str,
    db_flows: &[usize],
    report: &mut Report,
) -> Result<(), ReproError> {
    // The theory's line follows Monaco's (a reference takes the colour of the series before it).
    let mut series = Vec::new();
    for s in SCHEMES {
        let o = outcome(outcomes, q, s);
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
