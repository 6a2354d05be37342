//! The BAT / CLCC experiments of 004 (Pletka et al. — Closed-loop congestion control for mixed
//! responsive and non-responsive traffic).

use acclab_core::config::{ClccParams, QueueConfig, RatioParam, RenoParams, SchemeConfig};
use acclab_core::{Duration, Rate};
use acclab_results::plot::{write_chart, Chart, Series};
use acclab_scenario::{Scenario, ScenarioBuilder, ScenarioSpec};
use acclab_theory::maxmin::weighted_fairness;
use rayon::prelude::*;

use crate::common::{self, chart, simulate, Run};
use crate::{Ctx, Exp, Report, ReproError, Row, Spec};

/// The BAT parameters of the scenario's bottleneck r1->r2.
fn bat_mut(sc: &mut Scenario) -> Result<&mut acclab_core::config::BatParams, ReproError> {
    let l = common::link(sc, "r1->r2")?;
    match &mut sc.links[l].queue {
        QueueConfig::Bat(p) => Ok(p),
        _ => Err(ReproError::Other(
            "the bottleneck r1->r2 must be a bat queue".into(),
        )),
    }
}

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

/// `template` with `n` Reno flows `tcp-{i}` from hosts `tcp{i}`, each on its own 1 Gb/s access
/// link to r1, to `sink`; flow i's round-trip propagation delay is `rtt_ms(i)`, and each starts
/// in the first second.
fn with_tcp_flows(
    template: ScenarioSpec,
    n: usize,
    rtt_ms: impl Fn(usize) -> f64,
) -> Result<ScenarioSpec, ReproError> {
    let mut b = ScenarioBuilder::new(template);
    for i in 0..n {
        // Round trip = 2 × (access + 0.5 ms bottleneck + 0.25 ms sink access), to the µs.
        let access = Duration::from_micros(((rtt_ms(i) / 2.0 - 0.75) * 1e3).round() as u64);
        let host = format!("tcp{i}");
        b = b
            .duplex(&host, "r1", Rate::from_mbps(1000), access)
            .flow(
                &format!("tcp-{i}"),
                SchemeConfig::Reno(RenoParams::default()),
            )
            .from(&host)
            .to("sink")
            .start_jitter(Duration::from_secs(1));
    }
    Ok(b.into_def()?)
}

/// The scenario `text` with 004 §V's 100 Reno flows, RTTs 2–200 ms evenly spread, added; kept as
/// `scenario.toml` beside the results.
fn with_hundred_tcp_flows(ctx: &Ctx, text: &str, id: &str) -> Result<Scenario, ReproError> {
    let n = 100;
    let def = with_tcp_flows(acclab_scenario::parse_spec(text, id)?, n, |i| {
        2.0 + 198.0 * i as f64 / (n - 1) as f64
    })?;
    common::keep_scenario(&ctx.out, "scenario.toml", &def.to_toml())?;
    Ok(def.build()?)
}

/// UDP/TCP serviced ratio over the window, and its per-second series.
fn ratios(run: &Run) -> (f64, Vec<(f64, f64)>) {
    let udp = run
        .summary
        .flows
        .iter()
        .filter(|f| f.kind == "cbr")
        .map(|f| f.throughput_bps)
        .sum::<f64>();
    let tcp = run
        .summary
        .flows
        .iter()
        .filter(|f| f.kind != "cbr")
        .map(|f| f.throughput_bps)
        .sum::<f64>();
    let mut per_t: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for s in &run.sim.monitor().flow_samples {
        let e = per_t.entry((s.t_s * 10.0).round() as u64).or_default();
        if run.summary.flows[s.flow as usize].kind == "cbr" {
            e.0 += s.throughput_bps;
        } else {
            e.1 += s.throughput_bps;
        }
    }
    let series = per_t
        .into_iter()
        .map(|(t, (u, c))| (t as f64 / 10.0, u / c.max(1.0)))
        .collect();
    (udp / tcp.max(1.0), series)
}

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

/// CLCC on the bottleneck with reference `r_ref`, bound and preemption as given.
fn add_clcc(
    sc: &mut Scenario,
    r_ref: f64,
    bound: bool,
    preemption: bool,
) -> Result<(), ReproError> {
    bat_mut(sc)?.clcc = Some(ClccParams {
        r_ref: RatioParam::Fixed(r_ref),
        udp_class: "udp".into(),
        tcp_class: "tcp".into(),
        d_max: None,
        betas: None,
        bound,
        preemption,
    });
    Ok(())
}

/// A column of the bottleneck's AQM state over time.
fn aqm_series(run: &Run, column: &str) -> Vec<(f64, f64)> {
    let m = run.sim.monitor();
    let Some(k) = m.aqm_columns.iter().position(|c| c == column) else {
        return Vec::new();
    };
    let Ok(l) = common::link(run.sim.scenario(), "r1->r2") else {
        return Vec::new();
    };
    m.link_samples
        .iter()
        .filter(|s| s.link as usize == l)
        .filter_map(|s| s.aqm[k].map(|v| (s.t_s, v)))
        .collect()
}

/// Seconds after `from` until a one-second mean of the ratio is within `tol` of `r_ref`.
fn recovery(series: &[(f64, f64)], from: f64, r_ref: f64, tol: f64) -> f64 {
    let end = series.last().map_or(from, |p| p.0);
    let mut t = from;
    while t + 1.0 <= end {
        if (common::period_mean(series, t, t + 1.0) - r_ref).abs() <= tol * r_ref {
            return t + 1.0 - from;
        }
        t += 0.1;
    }
    f64::INFINITY
}

/// Runs two variants of a Fig. 6 / Fig. 7 scenario in parallel.
fn pair(
    ctx: &Ctx,
    base: Scenario,
    variants: [(&str, bool, bool); 2],
    r_ref: f64,
) -> Result<(Run, Run), ReproError> {
    let mut cases = variants.map(|(label, ..)| (label, base.clone()));
    for ((_, sc), (_, bound, preemption)) in cases.iter_mut().zip(variants) {
        add_clcc(sc, r_ref, bound, preemption)?;
    }
    let [a, b] = common::simulate_all(ctx, cases)?;
    Ok((a, b))
}

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

type Points = Vec<(f64, f64)>;

/// Figs. 6 and 7: the UDP/TCP ratio against its reference (`label`, value, until t) and D_UDP on
/// a log axis, each for the two runs named in `runs`.
fn ratio_and_d_udp_charts(
    ctx: &Ctx,
    id: &str,
    (label, r_ref, until): (&str, f64, f64),
    runs: [&str; 2],
    ratio: [Points; 2],
    d_udp: [Points; 2],
) -> Result<Vec<String>, ReproError> {
    let mut ref_line = Series::level(label, r_ref, 0.0, until);
    ref_line.reference = true;
    let [ra, rb] = ratio;
    let ratio_series = vec![Series::new(runs[0], ra), Series::new(runs[1], rb), ref_line];
    let mut files = write_chart(
        &ctx.out,
        "ratio",
        &chart(
            format!("{id}: UDP/TCP ratio"),
            "time (s)",
            "ratio",
            ratio_series,
        ),
    )?;
    let [da, db] = d_udp;
    let d_series = vec![Series::new(runs[0], da), Series::new(runs[1], db)];
    files.extend(write_chart(
        &ctx.out,
        "d_udp",
        &Chart {
            log_y: true,
            ..chart(format!("{id}: D_UDP"), "time (s)", "D_UDP", d_series)
        },
    )?);
    Ok(files)
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
    ));
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
                .filter(|f| f.kind == "reno")
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
