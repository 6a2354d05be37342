//! Monaco under dynamic demands (000 Figs. 6–8): flow sets coming and going over one
//! bottleneck, with enough buffer, too little, and an AVD router.

use acclab_results::plot::{write_chart, Series};

use crate::common::{self, chart, flow_series, mbps, period_mean, queue_series, simulate, Run};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::members;

/// The phases of Figs. 6 and 7: (from, to, active sets, expected per-flow Mb/s).
const PHASES: [(f64, f64, &[&str], f64); 5] = [
    (0.0, 10.0, &["set1"], 3.0),
    (10.0, 20.0, &["set1", "set2"], 2.0),
    (20.0, 30.0, &["set1", "set2", "set3"], 1.5),
    (30.0, 40.0, &["set2", "set3"], 3.0),
    (40.0, 50.0, &["set3"], 6.0),
];

/// Shared by Figs. 6 and 7: run, plot throughput per set, queue and utilisation.
fn dynamic_demands(e: &Exp) -> Result<(Run, usize, Report), ReproError> {
    let ctx = e.ctx;
    let id = e.id();
    let sc = e.scenario()?;
    let bottleneck = common::link(&sc, "r1->r2")?;
    let run = simulate(ctx, "run", sc)?;
    let mut report = e.report();
    let sets: Vec<Series> = ["set1", "set2", "set3"]
        .iter()
        .map(|s| {
            Series::new(
                *s,
                flow_series(&run.sim, &members(&run, s), |f| {
                    Some(mbps(f.throughput_bps))
                }),
            )
        })
        .collect();
    report.files.extend(write_chart(
        &ctx.out,
        "throughput",
        &chart(
            format!("{id}: mean throughput per set"),
            "time (s)",
            "throughput (Mb/s)",
            sets,
        ),
    )?);
    report.files.extend(write_chart(
        &ctx.out,
        "queue",
        &chart(
            format!("{id}: bottleneck queue"),
            "time (s)",
            "queue (packets)",
            vec![Series::new("r1->r2", queue_series(&run.sim, bottleneck))],
        ),
    )?);
    let util: Vec<(f64, f64)> = run
        .sim
        .monitor()
        .link_samples
        .iter()
        .filter(|x| x.link as usize == bottleneck)
        .map(|x| (x.t_s, x.utilization))
        .collect();
    report.files.extend(write_chart(
        &ctx.out,
        "utilisation",
        &chart(
            format!("{id}: bottleneck utilisation"),
            "time (s)",
            "utilisation",
            vec![Series::new("r1->r2", util)],
        ),
    )?);
    let cwnd: Vec<Series> = ["set1", "set2", "set3"]
        .iter()
        .map(|s| {
            Series::new(
                *s,
                flow_series(&run.sim, &members(&run, s), |f| {
                    f.cwnd_bytes.map(|c| c as f64 / 1000.0)
                }),
            )
        })
        .collect();
    report.files.extend(write_chart(
        &ctx.out,
        "cwnd",
        &chart(
            format!("{id}: mean window per set"),
            "time (s)",
            "mean window (KB)",
            cwnd,
        ),
    )?);
    Ok((run, bottleneck, report))
}

fn link_series(
    run: &Run,
    link: usize,
    f: impl Fn(&acclab_results::samples::LinkSample) -> f64,
) -> Vec<(f64, f64)> {
    run.sim
        .monitor()
        .link_samples
        .iter()
        .filter(|x| x.link as usize == link)
        .map(|x| (x.t_s, f(x)))
        .collect()
}

/// Per phase, each set's mean per-flow throughput over the phase's second half (when the loops
/// have settled) against the phase's proportionally fair share, within 10%.
fn phase_throughput_rows(run: &Run, report: &mut Report) {
    for &(t0, t1, sets, expected) in &PHASES {
        let (m0, m1) = ((t0 + t1) / 2.0, t1);
        for set in sets {
            let idx = members(run, set);
            let s = flow_series(&run.sim, &idx, |f| Some(mbps(f.throughput_bps)));
            let fluid = run.model_flow_series(&idx, |f| Some(mbps(f.throughput_bps)));
            report.rows.push(
                Row::close(
                    format!("{t0:.0}–{t1:.0} s: {set} throughput per flow (Mb/s)"),
                    Some(expected),
                    None,
                    period_mean(&s, m0, m1),
                    0.10,
                )
                .with_model(fluid.as_ref().map(|s| period_mean(s, m0, m1))),
            );
        }
    }
}

/// 000 Fig. 6.
pub const FIG6: Spec = spec!(
    "acc-fig6",
    "000 Fig. 6: Monaco under dynamic demands, droptail bottleneck with enough buffer (90 pkt)",
    acc_fig6
);

fn acc_fig6(e: &Exp) -> Result<Report, ReproError> {
    // 30 Mb/s for 50 s runs in a fraction of a second: quick is the full run.
    let (run, b, mut report) = dynamic_demands(e)?;
    let q = queue_series(&run.sim, b);
    let u = link_series(&run, b, |x| x.utilization);
    let drops = link_series(&run, b, |x| x.drops as f64);
    let (q_fluid, u_fluid) = (
        run.model_link_series(b, |r| r.queue_pkts),
        run.model_link_series(b, |r| r.utilization),
    );
    phase_throughput_rows(&run, &mut report);
    for &(t0, t1, sets, _) in &PHASES {
        let (m0, m1) = ((t0 + t1) / 2.0, t1);
        let flows: usize = sets.iter().map(|s| members(&run, s).len()).sum();
        report.rows.push(
            Row::close(
                format!("{t0:.0}–{t1:.0} s: queue (pkts; 3 per flow)"),
                Some(3.0 * flows as f64),
                None,
                period_mean(&q, m0, m1),
                0.35,
            )
            .with_model(q_fluid.as_ref().map(|q| period_mean(q, m0, m1))),
        );
        report.rows.push(
            Row::at_least(
                format!("{t0:.0}–{t1:.0} s: utilisation"),
                Some(1.0),
                None,
                period_mean(&u, m0, m1),
                0.95,
            )
            .with_model(u_fluid.as_ref().map(|u| period_mean(u, m0, m1))),
        );
    }
    let total_drops = drops.last().map_or(0.0, |p| p.1);
    report.rows.push(Row::at_most(
        "packets dropped at the bottleneck",
        Some(0.0),
        None,
        total_drops,
        0.0,
    ));
    report.notes.push(common::speed(&run.summary));
    Ok(report)
}

/// 000 Fig. 7.
pub const FIG7: Spec = spec!("acc-fig7", "000 Fig. 7: the same with an underprovisioned buffer (55 pkt): losses at 20–30 s, link still full", acc_fig7);
fn acc_fig7(e: &Exp) -> Result<Report, ReproError> {
    let (run, b, mut report) = dynamic_demands(e)?;
    let drops = link_series(&run, b, |x| x.drops as f64);
    let at = |t: f64| common::value_at(&drops, t);
    report.rows.push(Row::at_least(
        "drops during 20–30 s (20 flows)",
        None,
        None,
        at(30.0) - at(20.0),
        1.0,
    )
    .because("20 flows × 3 packets of accumulation exceed the 55-packet buffer, so Monaco loses (000 Fig. 7)"));
    let halvings: f64 = (0..run.summary.flows.len())
        .map(|i| run.sim.endpoint_stats(i).0.detected_losses as f64)
        .sum();
    report.rows.push(
        Row::at_least("window halvings (loss flags)", None, None, halvings, 1.0)
            .because("each loss halves a window (000 Fig. 7)"),
    );
    report.rows.push(
        Row::at_least(
            "bottleneck utilisation over the run",
            Some(1.0),
            None,
            run.summary.links[b].utilization,
            0.95,
        )
        .with_model(run.summary.links[b].model.as_ref().map(|m| m.utilization)),
    );
    Ok(report)
}

/// 000 Fig. 8.
pub const FIG8: Spec = spec!(
    "acc-fig8",
    "000 Fig. 8: the same 55-packet buffer at an AVD bottleneck: low queue, ≈ 98% utilisation",
    acc_fig8
);

fn acc_fig8(e: &Exp) -> Result<Report, ReproError> {
    let (run, b, mut report) = dynamic_demands(e)?;
    phase_throughput_rows(&run, &mut report);
    let q = queue_series(&run.sim, b);
    let low = q.iter().filter(|&&(_, v)| v < 20.0).count() as f64 / q.len().max(1) as f64;
    report.rows.push(Row::at_least(
        "share of samples with the queue below 20 packets",
        None,
        None,
        low,
        0.8,
    ));
    report.rows.push(
        Row::close(
            "bottleneck utilisation over the run (AVD target 0.98)",
            Some(0.98),
            None,
            run.summary.links[b].utilization,
            0.02,
        )
        .with_model(run.summary.links[b].model.as_ref().map(|m| m.utilization)),
    );
    report.notes.push(format!(
        "{} packets dropped at the bottleneck",
        run.summary.links[b].drops
    ));
    Ok(report)
}
