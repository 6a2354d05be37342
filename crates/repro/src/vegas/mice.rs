//! 002 Fig. 5: persistent Vegas flows with 20% on-off mice.

use acclab_results::plot::Series;

use crate::checks::kbps;
use crate::common::{self, classes, flow_series, mean_of, queue_series, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::BOTTLENECK;

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
    let is_mouse = |i: usize| &*s.flows[i].kind == "onoff";
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
        "mean sending rate (KB/s)",
        rates,
    )?;
    e.draw(
        &mut report,
        "queue",
        "queue at router 1",
        "time (s)",
        "queue (packets)",
        vec![Series::new("queue", q)],
    )?;
    Ok(report)
}
