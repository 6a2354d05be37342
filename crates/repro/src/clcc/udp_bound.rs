//! CLCC's bound on UDP's drop probability D_UDP (004 Figs. 6, 7): with and without it when UDP
//! falls, and control preemption while UDP offers less than its share.

use crate::common::{self};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{aqm_series, pair, ratio_and_d_udp_charts, ratios, recovery, with_hundred_tcp_flows};

/// 004 Fig. 6: the bound on D_UDP shortens the recovery after a drop in UDP load.
pub const FIG6: Spec = spec!(
    "clcc-fig6",
    "004 Fig. 6: CLCC with and without the bound on D_UDP; UDP drops from 200 to 30 Mb/s at 30 s",
    clcc_fig6
);

fn clcc_fig6(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // About a second of wall time: quick is the full run.
    let base = with_hundred_tcp_flows(ctx, e.text, e.id())?;
    let r_ref = 0.15;
    let (bounded, unbounded) = pair(
        ctx,
        base,
        [("bounded", true, true), ("unbounded", false, true)],
        r_ref,
    )?;
    let (_, sb) = ratios(&bounded);
    let (_, su) = ratios(&unbounded);
    let (rb, ru) = (
        recovery(&sb, 30.0, r_ref, 0.2),
        recovery(&su, 30.0, r_ref, 0.2),
    );
    let mut report = e.report();
    report.rows.push(Row::at_most(
        "recovery after the drop with the bound (s; shorter than without)",
        None,
        None,
        rb,
        ru - 1.0,
    ));
    report.rows.push(Row::at_least(
        "recovery after the drop without the bound (s)",
        None,
        None,
        ru,
        rb,
    ));
    let (db, du) = (
        aqm_series(&bounded, "d_udp"),
        aqm_series(&unbounded, "d_udp"),
    );
    let peak = |s: &[(f64, f64)]| {
        s.iter()
            .filter(|p| p.0 <= 30.0)
            .map(|p| p.1)
            .fold(0.0, f64::max)
    };
    report.notes.push(format!(
        "D_UDP before the drop peaks at {:.3} with the bound, {:.3} without",
        peak(&db),
        peak(&du)
    ));
    report.files.extend(ratio_and_d_udp_charts(
        ctx,
        e.id(),
        ("r_ref = 0.15", r_ref, bounded.summary.sim_time_s),
        ["with bound", "without bound"],
        [sb, su],
        [db, du],
    )?);
    Ok(report)
}

/// 004 Fig. 7: control preemption while UDP offers less than its share.
pub const FIG7: Spec = spec!(
    "clcc-fig7",
    "004 Fig. 7: control preemption holds D_UDP while UDP offers less than its share (25–45 s)",
    clcc_fig7
);

fn clcc_fig7(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = with_hundred_tcp_flows(ctx, e.text, e.id())?;
    let r_ref = 30.0 / 70.0;
    let (pre, nopre) = pair(
        ctx,
        base,
        [("preemption", true, true), ("no-preemption", true, false)],
        r_ref,
    )?;
    let (_, sp) = ratios(&pre);
    let (_, sn) = ratios(&nopre);
    let (dp, dn) = (aqm_series(&pre, "d_udp"), aqm_series(&nopre, "d_udp"));
    let at = |s: &[(f64, f64)], t: f64| common::value_at(s, t);
    let mut report = e.report();
    report.rows.push(Row::at_least(
        "D_UDP at 45 s, with preemption ÷ without (no wind-up)",
        None,
        None,
        at(&dp, 45.0) / at(&dn, 45.0).max(1e-12),
        10.0,
    )
    .because("without preemption D_UDP winds up while UDP sends below its allocation; an order of magnitude apart at 45 s (004 Fig. 7)"));
    let (rp, rn) = (
        recovery(&sp, 45.0, r_ref, 0.2),
        recovery(&sn, 45.0, r_ref, 0.2),
    );
    report.rows.push(Row::at_most(
        "recovery after 45 s with preemption (s; ≤ 5 control periods)",
        None,
        None,
        rp,
        5.0,
    ));
    report
        .notes
        .push(format!("recovery after 45 s without preemption: {rn:.1} s"));
    report.files.extend(ratio_and_d_udp_charts(
        ctx,
        e.id(),
        ("r_ref = 30/70", r_ref, pre.summary.sim_time_s),
        ["with preemption", "without preemption"],
        [sp, sn],
        [dp, dn],
    )?);
    Ok(report)
}
