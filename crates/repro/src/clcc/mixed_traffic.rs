//! 100 Reno flows with UDP beside them (004 Figs. 8, 9): BAT alone against BAT+CLCC, and
//! CLCC following UDP that alternates every 5 s.

use acclab_results::plot::Series;
use acclab_theory::maxmin::weighted_fairness;

use crate::common::{self, simulate};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{add_clcc, ratios, with_hundred_tcp_flows};

/// 004 Fig. 8: BAT alone vs BAT + CLCC with 90 Mb/s UDP and greedy TCP.
pub const FIG8: Spec = spec!(
    "clcc-fig8",
    "004 Fig. 8: 100 Reno flows (RTT 2–200 ms) + 90 Mb/s CBR; BAT alone vs BAT+CLCC, r_ref = 30/70",
    clcc_fig8
);

fn clcc_fig8(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // 100 flows at 100 Mb/s for 100 s run in about a second: quick is the full run (with
    // 20 flows the bound D_UDP ≤ 1/ΣO binds and the claim changes).
    let base = with_hundred_tcp_flows(ctx, e.text, e.id())?;
    let r_ref = 30.0 / 70.0;
    let mut with_clcc = base.clone();
    add_clcc(&mut with_clcc, r_ref, true, true)?;
    let [bat, clcc] = common::simulate_all(ctx, [("bat", base), ("bat-clcc", with_clcc)])?;
    let (r_bat, s_bat) = ratios(&bat);
    let (r_clcc, s_clcc) = ratios(&clcc);
    let fairness = |r: f64| {
        weighted_fairness(&[r / (1.0 + r), 1.0 / (1.0 + r)], &[0.3, 0.7]).unwrap_or(f64::NAN)
    };
    let mut report = e.report();
    report.rows.push(Row::at_least(
        "BAT alone: UDP/TCP ratio over the window (far above r_ref)",
        None,
        Some(r_ref),
        r_bat,
        2.0 * r_ref,
    ));
    report.rows.push(Row::close(
        "BAT + CLCC: UDP/TCP ratio over the window",
        Some(r_ref),
        Some(r_ref),
        r_clcc,
        0.10,
    ));
    report.rows.push(Row::at_least(
        "BAT + CLCC: weighted fairness index",
        Some(1.0),
        None,
        fairness(r_clcc),
        0.98,
    ));
    report.notes.push(format!(
        "BAT alone: weighted fairness index {:.3}",
        fairness(r_bat)
    ));
    // 004 Fig. 8(b): the weighted fairness index of each 100 ms sample.
    let over_time = |s: &[(f64, f64)]| s.iter().map(|&(t, r)| (t, fairness(r))).collect();
    let (f_bat, f_clcc) = (over_time(&s_bat), over_time(&s_clcc));
    let ref_line = Series::level("r_ref = 30/70", r_ref, 0.0, bat.summary.sim_time_s);
    e.draw(
        &mut report,
        "ratio",
        "UDP/TCP ratio (100 ms samples)",
        "time (s)",
        "ratio",
        vec![
            Series::new("BAT alone", s_bat),
            Series::new("BAT+CLCC", s_clcc),
            ref_line,
        ],
    )?;
    e.draw(
        &mut report,
        "fairness",
        "weighted fairness index, weights 0.3 (UDP) and 0.7 (TCP) (100 ms samples)",
        "time (s)",
        "fairness index",
        vec![
            Series::new("BAT alone", f_bat),
            Series::new("BAT+CLCC", f_clcc),
        ],
    )?;
    Ok(report)
}

/// 004 Fig. 9: CLCC with a UDP load alternating 50 / 120 Mb/s every 5 s.
pub const FIG9: Spec = spec!(
    "clcc-fig9",
    "004 Fig. 9: BAT+CLCC, 100 Reno flows + UDP alternating 50/120 Mb/s every 5 s, r_ref = 0.4",
    clcc_fig9
);

fn clcc_fig9(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // As clcc-fig8, the full run takes about a second: quick is the full run.
    let mut sc = with_hundred_tcp_flows(ctx, e.text, e.id())?;
    let r_ref = 0.4;
    add_clcc(&mut sc, r_ref, true, true)?;
    let run = simulate(ctx, "bat-clcc", sc)?;
    let (overall, series) = ratios(&run);
    let mut report = e.report();
    report.rows.push(Row::close(
        "UDP/TCP ratio over the window",
        Some(r_ref),
        Some(r_ref),
        overall,
        0.10,
    ));
    // After each change the ratio returns to r_ref: the mean over the last 2 s of each 5 s
    // half-period (from 20 s on), high and low UDP load separately.
    let end = run.summary.sim_time_s;
    for (label, phase) in [("50 Mb/s", 0.0), ("120 Mb/s", 5.0)] {
        let mut means = Vec::new();
        let mut t = 20.0 + phase;
        while t + 5.0 <= end {
            means.push(common::period_mean(&series, t + 3.0, t + 5.0));
            t += 10.0;
        }
        let m = means.iter().sum::<f64>() / means.len().max(1) as f64;
        report.rows.push(Row::close(
            format!("ratio at the end of the {label} half-periods (mean)"),
            Some(r_ref),
            Some(r_ref),
            m,
            0.20,
        ));
    }
    let mut ref_line = Series::level("r_ref = 0.4", r_ref, 0.0, end);
    ref_line.reference = true;
    e.draw(
        &mut report,
        "ratio",
        "UDP/TCP ratio (100 ms samples)",
        "time (s)",
        "ratio",
        vec![Series::new("BAT + CLCC", series), ref_line],
    )?;
    Ok(report)
}
