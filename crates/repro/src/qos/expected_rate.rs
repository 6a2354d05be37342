//! 003 Fig. 4: the expected-minimum-rate service on one bottleneck — a rate r with an
//! accumulation limit A, without and with AVQ+VD.

use acclab_core::config::MonacoParams;
use acclab_core::{Bytes, Rate};
use acclab_results::plot::{write_chart, Series};

use crate::common::chart;
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{
    avd_queue_row, bottleneck, long_run, single, sweep, utilization_row, Point, SINGLE,
    SINGLE_QUICK,
};

/// qos-fig4: the expected-minimum-rate service on one bottleneck.
pub const FIG4: Spec = Spec {
    id: "qos-fig4",
    title: "003 Fig. 4: an expected minimum rate r (0…110 Mb/s) with limits A = 15, 30, 3000 KB, without and with AVQ+VD",
    scenario: SINGLE,
    quick: Some(SINGLE_QUICK),
    reproduce: qos_fig4,
};

/// 003 §IV-B: the largest rate flow 0 can get with limit A against nine loops of a* = 3 KB is
/// the weighted share A/(A + 27 KB) of 100 Mb/s.
const LIMITS_KB: [(u32, f64); 3] = [(15, 35.7), (30, 52.6), (3000, 99.1)];

fn qos_fig4(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let template = e.def()?;
    let rates: Vec<u32> = if ctx.quick {
        vec![0, 50, 90, 110]
    } else {
        vec![0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100, 110]
    };
    let limits: Vec<(u32, f64)> = if ctx.quick {
        vec![LIMITS_KB[0], LIMITS_KB[2]]
    } else {
        LIMITS_KB.to_vec()
    };
    let mut keys = Vec::new();
    let mut cases = Vec::new();
    for avd in [false, true] {
        for &(a, _) in &limits {
            for &r in &rates {
                // Flow 0 follows 003 Algorithm 1, without eq. (2)'s increase cap; r = 0:
                // no expected rate, only the limit (a rate must be positive).
                let params = MonacoParams {
                    expected_rate: (r > 0).then(|| Rate::from_mbps(r as u64)),
                    limit: Some(Bytes(a as u64 * 1000)),
                    ..MonacoParams::default()
                };
                let label = format!("{}-a{a}kb-r{r}", if avd { "avd" } else { "fifo" });
                let long = long_run(ctx, a, avd);
                let case = single(&template, &label, params, avd, long)?;
                cases.push((label, case));
                keys.push((avd, a, r));
            }
        }
    }
    let points = sweep(ctx, &cases)?;
    let mut report = e.report();
    let mut thr_series = [Vec::new(), Vec::new()];
    let mut queue_series_ = Vec::new();
    for avd in [false, true] {
        let mut all = Vec::new();
        for &(a, paper_max) in &limits {
            let case = format!("A = {a} KB, {}", bottleneck(avd));
            let sel: Vec<(u32, &Point)> = keys
                .iter()
                .zip(&points)
                .filter(|((v, k, _), _)| *v == avd && *k == a)
                .map(|((_, _, r), p)| (*r, p))
                .collect();
            let worst = sel
                .iter()
                .filter_map(|(_, p)| p.x0_theory.map(|t| (p.x0 - t).abs() / t))
                .fold(0.0, f64::max);
            report.rows.push(Row::at_most(
                format!("{case}: flow 0 throughput, largest error against theory over r"),
                None,
                Some(0.0),
                worst,
                0.05,
            ));
            let (r_top, top) = sel.last().expect("a sweep has points");
            report.rows.push(
                Row::close(
                    format!("{case}: largest satisfiable rate (flow 0 at r = {r_top} Mb/s)"),
                    (!avd).then_some(paper_max),
                    top.x0_theory,
                    top.x0,
                    0.03,
                )
                .with_model(top.x0_model),
            );
            if !avd {
                report.rows.push(
                    Row::close(
                        format!("{case}: mean queue at r = {r_top} Mb/s (pkts)"),
                        None,
                        top.queue_theory,
                        top.queue,
                        0.25,
                    )
                    .with_model(top.queue_model)
                    // A 3000 KB accumulation takes about 330 s to build at this rate.
                    .full_run_only(
                        ctx.quick && a >= 3000,
                        "a 3000 KB queue takes about 330 s to build; the full run gives it 600 s",
                    ),
                );
                let first = sel.iter().find(|(_, p)| p.at_limit).map(|(r, _)| *r);
                report.notes.push(format!(
                    "{case}: theory puts flow 0 at its limit from r = {} Mb/s",
                    first.map_or("beyond the sweep".into(), |r| r.to_string())
                ));
            }
            thr_series[avd as usize].push(
                Series::new(
                    format!("A = {a} KB"),
                    sel.iter().map(|(r, p)| (*r as f64, p.x0)).collect(),
                )
                .with_markers(),
            );
            let mut th = Series::new(
                format!("A = {a} KB, theory"),
                sel.iter()
                    .filter_map(|(r, p)| p.x0_theory.map(|t| (*r as f64, t)))
                    .collect(),
            );
            th.reference = true;
            thr_series[avd as usize].push(th);
            queue_series_.push(
                Series::new(
                    format!("A = {a} KB, {}", bottleneck(avd)),
                    sel.iter()
                        .map(|(r, p)| (*r as f64, p.queue.max(0.01)))
                        .collect(),
                )
                .with_markers(),
            );
            all.extend(sel.iter().map(|(_, p)| *p));
        }
        let case = bottleneck(avd);
        utilization_row(&mut report, case, avd, &all);
        if avd {
            avd_queue_row(&mut report, case, &all);
        }
    }
    for (avd, series) in [false, true].into_iter().zip(thr_series) {
        let stem = if avd { "throughput-avd" } else { "throughput" };
        report.files.extend(write_chart(
            &ctx.out,
            stem,
            &chart(
                format!(
                    "{}: flow 0 against its expected rate, {}",
                    e.id(),
                    bottleneck(avd)
                ),
                "expected minimum rate r (Mb/s)",
                "flow 0 throughput (Mb/s)",
                series,
            ),
        )?);
    }
    let mut queue = chart(
        format!("{}: bottleneck queue against r", e.id()),
        "expected minimum rate r (Mb/s)",
        "mean queue (packets, log)",
        queue_series_,
    );
    queue.log_y = true;
    report.files.extend(write_chart(&ctx.out, "queue", &queue)?);
    Ok(report)
}
