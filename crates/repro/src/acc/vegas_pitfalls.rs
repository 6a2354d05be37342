//! Where Vegas goes wrong and Monaco does not: reverse-path congestion (000 Fig. 4) and a
//! jump of the propagation delay (000 Fig. 5).

use acclab_core::config::{AccPolicyName, SchemeConfig, VegasParams};
use acclab_results::plot::{write_chart, Series};
use rayon::prelude::*;

use crate::common::{self, chart, flow_series, period_mean, queue_series, simulate, Run};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{monaco, with_scheme, with_scheme_where};

/// 000 Fig. 4: reverse-path congestion.
pub const FIG4: Spec = spec!(
    "acc-fig4",
    "000 Fig. 4: forward utilisation under reverse-path congestion, Vegas vs Monaco",
    quick,
    acc_fig4
);
const FIG4_REVERSE_MBPS: [u64; 6] = [5, 10, 15, 20, 30, 45];
const FIG4_REVERSE_MBPS_QUICK: [u64; 3] = [5, 20, 45];

fn acc_fig4(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let forward = common::link(&base, "r1->r2")?;
    let reverse = common::link(&base, "r2->r1")?;
    let sweep: &[u64] = if ctx.quick {
        &FIG4_REVERSE_MBPS_QUICK
    } else {
        &FIG4_REVERSE_MBPS
    };
    let schemes = [
        ("vegas", SchemeConfig::Vegas(Box::default())),
        ("monaco", monaco(AccPolicyName::AccP)),
    ];
    let points: Vec<(u64, usize)> = sweep.iter().flat_map(|&r| [(r, 0), (r, 1)]).collect();
    // (reverse rate, scheme, forward utilisation measured, in the model)
    type Point = (u64, usize, f64, Option<f64>);
    let results: Vec<Result<Point, ReproError>> = points
        .par_iter()
        .map(|&(rev, k)| {
            // The reverse flows stay Reno (the scenario's cross traffic) in both arms.
            let mut sc = with_scheme_where(&base, &schemes[k].1, |id| id.starts_with("fwd-"));
            sc.links[reverse].rate = acclab_core::Rate::from_mbps(rev);
            let run = simulate(ctx, &format!("{}-reverse-{rev}Mbps", schemes[k].0), sc)?;
            let link = &run.summary.links[forward];
            Ok((
                rev,
                k,
                link.utilization,
                link.model.as_ref().map(|m| m.utilization),
            ))
        })
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut report = e.report();
    for &(rev, k, u, fluid) in &results {
        let row = if k == 0 {
            Row::at_most(
                format!("Vegas forward utilisation, reverse {rev} Mb/s (paper 10–60%)"),
                None,
                None,
                u,
                0.6,
            )
        } else {
            Row::at_least(
                format!("Monaco forward utilisation, reverse {rev} Mb/s"),
                None,
                None,
                u,
                0.95,
            )
        };
        report.rows.push(row.with_model(fluid));
    }
    let series = |k: usize| {
        results
            .iter()
            .filter(|r| r.1 == k)
            .map(|r| (r.0 as f64, r.2))
            .collect()
    };
    e.draw(
        &mut report,
        "utilisation",
        "forward bottleneck utilisation",
        "reverse bandwidth (Mb/s)",
        "utilisation",
        vec![
            Series::new("Vegas", series(0)).with_markers(),
            Series::new("Monaco", series(1)).with_markers(),
        ],
    )?;
    report
        .notes
        .push("paper: Vegas 10–60%, Monaco ≈ 100% at every reverse bandwidth".into());
    Ok(report)
}

/// 000 Fig. 5: a propagation-delay change.
pub const FIG5: Spec = spec!(
    "acc-fig5",
    "000 Fig. 5: Vegas, Vegas-k and Monaco when the propagation delay jumps from 12 to 52 ms",
    acc_fig5
);

fn acc_fig5(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // One 10 Mb/s flow for 60 s runs in a fraction of a second: quick is the full run.
    let base = e.scenario()?;
    let bottleneck = common::link(&base, "r1->r2")?;
    let vegas_k = SchemeConfig::Vegas(Box::new(VegasParams {
        k: Some(10),
        ..VegasParams::default()
    }));
    let variants = [
        ("vegas", SchemeConfig::Vegas(Box::default())),
        ("vegas-k", vegas_k),
        ("monaco", monaco(AccPolicyName::AccP)),
    ];
    let [vegas, vegas_k, monaco_run] = common::simulate_all(
        ctx,
        variants.map(|(label, s)| (label, with_scheme(&base, &s))),
    )?;
    let util = |run: &Run, t0: f64, t1: f64| {
        let s: Vec<(f64, f64)> = run
            .sim
            .monitor()
            .link_samples
            .iter()
            .filter(|x| x.link as usize == bottleneck)
            .map(|x| (x.t_s, x.utilization))
            .collect();
        period_mean(&s, t0, t1)
    };
    let lost_after = |run: &Run| -> f64 {
        // Losses of the flow after the change: the cumulative count at the end minus at 10 s.
        let s = flow_series(&run.sim, &[0], |f| Some(f.lost_packets as f64));
        common::value_at(&s, f64::MAX) - common::value_at(&s, 10.0)
    };
    let util_model = |run: &Run, t0: f64, t1: f64| {
        run.model_link_series(bottleneck, |r| r.utilization)
            .map(|s| period_mean(&s, t0, t1))
    };
    let mut report = e.report();
    let end = base.duration.as_secs_f64();
    report.rows.push(
        Row::at_most(
            "Vegas utilisation after the change (15 s – end)",
            Some(0.10),
            None,
            util(&vegas, 15.0, end),
            0.10,
        )
        .with_model(util_model(&vegas, 15.0, end)),
    );
    let kq = queue_series(&vegas_k.sim, bottleneck);
    let limit = match base.links[bottleneck].queue {
        acclab_core::config::QueueConfig::Droptail(acclab_core::config::DroptailParams {
            limit: acclab_core::Limit::Packets(n),
            ..
        }) => n as f64,
        _ => f64::NAN,
    };
    let kmax = kq
        .iter()
        .filter(|p| p.0 > 10.0)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    report.rows.push(
        Row::at_least(
            "Vegas-k: queue after the change reaches the buffer (pkts)",
            None,
            None,
            kmax,
            limit - 1.0,
        )
        .because("its queue grows to the buffer (000 Fig. 5)"),
    );
    report.rows.push(
        Row::at_least(
            "Vegas-k: packets lost after the change",
            None,
            None,
            lost_after(&vegas_k),
            1.0,
        )
        .because("Vegas-k's queue grows until loss (000 Fig. 5)"),
    );
    // Recovery: the first second-long stretch after the change averaging ≥ 95% utilisation.
    let recovered = (0..((end - 10.0) as usize))
        .map(|s| 10.0 + s as f64)
        .find(|&t| util(&monaco_run, t, t + 1.0) >= 0.95)
        .map_or(f64::INFINITY, |t| t + 1.0 - 10.0);
    report.rows.push(Row::at_most(
        "Monaco: time to regain ≥ 95% utilisation (s)",
        Some(3.0),
        None,
        recovered,
        4.0,
    ));
    report.rows.push(
        Row::at_least(
            "Monaco utilisation 20 s – end",
            None,
            Some(1.0),
            util(&monaco_run, 20.0, end),
            0.95,
        )
        .with_model(util_model(&monaco_run, 20.0, end)),
    );
    report.rows.push(Row::at_most(
        "Monaco packets lost",
        Some(0.0),
        None,
        monaco_run.summary.flows[0].lost_packets as f64,
        0.0,
    ));
    let util_series = |run: &Run, name: &str| {
        let s = run
            .sim
            .monitor()
            .link_samples
            .iter()
            .filter(|x| x.link as usize == bottleneck)
            .map(|x| (x.t_s, x.utilization))
            .collect();
        Series::new(name, s)
    };
    report.files.extend(write_chart(
        &ctx.out,
        "utilisation",
        &chart(
            format!(
                "{}: bottleneck utilisation (delay 12 → 52 ms at 10 s)",
                e.id()
            ),
            "time (s)",
            "utilisation",
            vec![
                util_series(&vegas, "Vegas"),
                util_series(&vegas_k, "Vegas-k"),
                util_series(&monaco_run, "Monaco"),
            ],
        ),
    )?);
    e.draw(
        &mut report,
        "queue",
        "bottleneck queue",
        "time (s)",
        "queue (packets)",
        vec![
            Series::new("Vegas", queue_series(&vegas.sim, bottleneck)),
            Series::new("Vegas-k", kq),
            Series::new("Monaco", queue_series(&monaco_run.sim, bottleneck)),
        ],
    )?;
    Ok(report)
}
