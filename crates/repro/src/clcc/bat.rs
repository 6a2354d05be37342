//! BAT alone (004 §III): two CBR flows against their minimum guarantees (Fig. 1), and a CBR
//! flow against N Reno flows (Fig. 3).

use acclab_core::Rate;
use acclab_results::plot::Series;
use acclab_theory::maxmin::weighted_fairness;
use rayon::prelude::*;

use crate::common::simulate;
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{bat_mut, with_tcp_flows};

/// 004 Fig. 1: fairness of BAT between two CBR flows against their minimum guarantees.
pub const FIG1: Spec = spec!(
    "clcc-fig1",
    "004 Fig. 1: BAT with two 100 Mb/s CBR flows — fairness against their minimum guarantees",
    quick,
    clcc_fig1
);

fn clcc_fig1(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let grid: Vec<u64> = if ctx.quick {
        vec![0, 25, 50]
    } else {
        vec![0, 10, 20, 30, 40, 50]
    };
    let points: Vec<(u64, u64)> = grid
        .iter()
        .flat_map(|&a| grid.iter().map(move |&b| (a, b)))
        .collect();
    let results: Vec<Result<(u64, u64, f64), ReproError>> = points
        .par_iter()
        .map(|&(a, b)| {
            let mut sc = base.clone();
            let bat = bat_mut(&mut sc)?;
            for (c, m) in bat.classes.iter_mut().zip([a, b]) {
                c.f_min = (m > 0).then(|| Rate::from_mbps(m));
            }
            let run = simulate(ctx, &format!("fmin-{a}-{b}"), sc)?;
            let x: Vec<f64> = run.summary.flows.iter().map(|f| f.throughput_bps).collect();
            // Max-min fairness between two 100 Mb/s demands on 100 Mb/s: 50/50.
            let index = weighted_fairness(&x, &[50e6, 50e6]).unwrap_or(f64::NAN);
            Ok((a, b, index))
        })
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut report = e.report();
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let by_gap = |gap: u64| {
        mean(
            results
                .iter()
                .filter(|r| r.0.abs_diff(r.1) == gap)
                .map(|r| r.2)
                .collect(),
        )
    };
    let equal = by_gap(0);
    let apart = by_gap(50);
    report.rows.push(Row::at_least(
        "fairness index, equal minimum guarantees (mean)",
        None,
        None,
        equal,
        0.98,
    ));
    // The claim is the trend: fairness falls as the minima drift apart.
    report.rows.push(Row::at_most(
        "fairness index, minima 0 and 50 Mb/s apart (mean; below equal minima)",
        None,
        None,
        apart,
        equal - 1e-3,
    ));
    for &(a, b, f) in &results {
        if a == b || a.abs_diff(b) == 50 {
            report
                .notes
                .push(format!("f_min {a}/{b} Mb/s: index {f:.4}"));
        }
    }
    let series: Vec<Series> = grid
        .iter()
        .map(|&a| {
            Series::new(
                format!("f_min,1 = {a} Mb/s"),
                results
                    .iter()
                    .filter(|r| r.0 == a)
                    .map(|r| (r.1 as f64, r.2))
                    .collect(),
            )
            .with_markers()
        })
        .collect();
    e.draw(
        &mut report,
        "fairness",
        "weighted fairness index (004 eq. 2)",
        "f_min,2 (Mb/s)",
        "fairness index",
        series,
    )?;
    Ok(report)
}

/// 004 Fig. 3: BAT alone, one CBR flow against N Reno flows of equal RTT.
pub const FIG3: Spec = spec!("clcc-fig3", "004 Fig. 3: BAT with a 100 Mb/s CBR flow and N Reno flows — TCP share rises with N, falls with RTT", clcc_fig3);

fn clcc_fig3(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let template = e.def()?;
    let (ns, rtts): (Vec<usize>, Vec<u64>) = if ctx.quick {
        (vec![1, 20], vec![20, 200])
    } else {
        (vec![1, 5, 20], vec![20, 100, 200])
    };
    let points: Vec<(usize, u64)> = ns
        .iter()
        .flat_map(|&n| rtts.iter().map(move |&r| (n, r)))
        .collect();
    let results: Vec<Result<(usize, u64, f64), ReproError>> = points
        .par_iter()
        .map(|&(n, rtt)| {
            let def = with_tcp_flows(template.clone(), n, |_| rtt as f64)?;
            let run = simulate(ctx, &format!("n{n}-rtt{rtt}ms"), def.build()?)?;
            let tcp: f64 = run
                .summary
                .flows
                .iter()
                .filter(|f| &*f.kind == "reno")
                .map(|f| f.throughput_bps)
                .sum();
            let all: f64 = run.summary.flows.iter().map(|f| f.throughput_bps).sum();
            Ok((n, rtt, tcp / all.max(1.0)))
        })
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let share = |n: usize, r: u64| {
        results
            .iter()
            .find(|p| p.0 == n && p.1 == r)
            .map_or(f64::NAN, |p| p.2)
    };
    let mut report = e.report();
    for &r in &rtts {
        report.rows.push(Row::at_least(
            format!(
                "RTT {r} ms: TCP share with N = {} above N = {}",
                ns[ns.len() - 1],
                ns[0]
            ),
            None,
            None,
            share(ns[ns.len() - 1], r),
            share(ns[0], r),
        ));
    }
    for &n in &ns {
        report.rows.push(Row::at_most(
            format!(
                "N = {n}: TCP share at RTT {} ms below {} ms",
                rtts[rtts.len() - 1],
                rtts[0]
            ),
            None,
            None,
            share(n, rtts[rtts.len() - 1]),
            share(n, rtts[0]),
        ));
    }
    let max_tcp = results.iter().map(|p| p.2).fold(0.0, f64::max);
    // UDP takes more than its max-min 50% at every point (far more at long RTTs or few flows).
    report.rows.push(Row::at_most(
        "largest TCP share over the grid (max-min share 0.5)",
        Some(0.5),
        None,
        max_tcp,
        0.5,
    ));
    for &(n, r, s) in &results {
        report.notes.push(format!(
            "N = {n}, RTT {r} ms: TCP {:.1}%, UDP {:.1}%",
            100.0 * s,
            100.0 * (1.0 - s)
        ));
    }
    let series: Vec<Series> = ns
        .iter()
        .map(|&n| {
            Series::new(
                format!("N = {n}"),
                rtts.iter().map(|&r| (r as f64, share(n, r))).collect(),
            )
            .with_markers()
        })
        .collect();
    e.draw(
        &mut report,
        "tcp-share",
        "TCP share of the link",
        "RTT (ms)",
        "TCP share",
        series,
    )?;
    Ok(report)
}
