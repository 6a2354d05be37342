//! 003 Fig. 5: the weighted-rate service on one bottleneck — flow 0 of weight w against nine
//! loops of weight 1, without and with AVQ+VD.

use acclab_core::config::MonacoParams;
use acclab_results::plot::{write_chart, Series};

use crate::common::chart;
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{
    avd_queue_row, bottleneck, long_run, single, sweep, utilization_row, Point, SINGLE,
    SINGLE_QUICK,
};

/// qos-fig5: the weighted-rate service on one bottleneck.
pub const FIG5: Spec = Spec {
    id: "qos-fig5",
    title: "003 Fig. 5: flow 0 of weight w = 1…10⁴ against nine loops of weight 1, without and with AVQ+VD",
    scenario: SINGLE,
    quick: Some(SINGLE_QUICK),
    reproduce: qos_fig5,
};

fn qos_fig5(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let template = e.def()?;
    let weights: Vec<u32> = if ctx.quick {
        vec![1, 10, 100]
    } else {
        vec![1, 3, 10, 30, 100, 300, 1000, 3000, 10000]
    };
    let mut keys = Vec::new();
    let mut cases = Vec::new();
    for avd in [false, true] {
        for &w in &weights {
            let label = format!("{}-w{w}", if avd { "avd" } else { "fifo" });
            // An eq. (2) loop: its increase is bounded to one MTU per RTT (003 §II).
            let params = MonacoParams {
                weight: w as f64,
                increase_cap: true,
                ..MonacoParams::default()
            };
            let long = long_run(ctx, 3 * w, avd);
            let case = single(&template, &label, params, avd, long)?;
            cases.push((label, case));
            keys.push((avd, w));
        }
    }
    let points = sweep(ctx, &cases)?;
    let mut report = e.report();
    let mut ratio_series = Vec::new();
    let mut queue_series_ = Vec::new();
    let mut utilisation_series = Vec::new();
    for avd in [false, true] {
        let case = bottleneck(avd);
        let sel: Vec<(u32, &Point)> = keys
            .iter()
            .zip(&points)
            .filter(|((v, _), _)| *v == avd)
            .map(|((_, w), p)| (*w, p))
            .collect();
        for (w, p) in &sel {
            let ratio = p.x0 / p.others;
            let theory = p.x0_theory.zip(p.others_theory).map(|(a, b)| a / b);
            // 003 §V-A: accurate over the whole range without AQM; with AVQ+VD up to a few
            // hundred, then below the weight.
            if avd && *w > 300 {
                // What this row establishes: the heavy flow never gets more than its weight.
                // The paper's fall below the weight is the next row's check.
                report.rows.push(Row::at_most(
                    format!("{case}, w = {w}: throughput ratio ÷ w, never above the weight"),
                    None,
                    None,
                    ratio / *w as f64,
                    1.0,
                ));
            } else {
                report.rows.push(
                    Row::close(
                        format!("{case}, w = {w}: throughput ratio"),
                        Some(*w as f64),
                        theory,
                        ratio,
                        0.10,
                    )
                    .with_model(p.x0_model.zip(p.others_model).map(|(a, b)| a / b)),
                );
            }
        }
        if !avd {
            let (w, top) = sel.last().expect("a sweep has points");
            report.rows.push(
                Row::close(
                    format!("{case}, w = {w}: mean queue (pkts), linear in w"),
                    None,
                    top.queue_theory,
                    top.queue,
                    0.25,
                )
                .with_model(top.queue_model),
            );
        } else {
            let low: Vec<&Point> = sel
                .iter()
                .filter(|(w, _)| *w <= 300)
                .map(|(_, p)| *p)
                .collect();
            avd_queue_row(&mut report, &format!("{case}, w ≤ 300"), &low);
        }
        if avd {
            // 003 §V-A: with AVQ+VD accurate up to a few hundred, then below the weight.
            let within =
                |(w, p): &&(u32, &Point)| (p.x0 / p.others / *w as f64 - 1.0).abs() <= 0.10;
            let accurate_to = sel.iter().take_while(within).last().map(|(w, _)| *w);
            let (w_top, top) = sel.last().expect("a sweep has points");
            if *w_top > 300 {
                report.rows.push(Row::at_most(
                    format!("{case}, w = {w_top}: throughput ratio ÷ w, below the weight (the paper: below from a few hundred)"),
                    None,
                    None,
                    top.x0 / top.others / *w_top as f64,
                    0.9,
                ));
            }
            report.notes.push(format!(
                "{case}: throughput ratio within 10% of w up to w = {}",
                accurate_to.map_or("none".into(), |w| w.to_string())
            ));
        }
        let all: Vec<&Point> = sel.iter().map(|(_, p)| *p).collect();
        utilization_row(&mut report, case, avd, &all);
        utilisation_series.push(
            Series::new(
                case,
                sel.iter()
                    .map(|(w, p)| (*w as f64, p.utilization))
                    .collect(),
            )
            .with_markers(),
        );
        let (x0, x1) = (weights[0] as f64, *weights.last().unwrap_or(&1) as f64);
        utilisation_series.push(Series::level(
            if avd { "AVQ target 0.98" } else { "capacity" },
            if avd { 0.98 } else { 1.0 },
            x0,
            x1,
        ));
        ratio_series.push(
            Series::new(
                case,
                sel.iter()
                    .map(|(w, p)| (*w as f64, p.x0 / p.others))
                    .collect(),
            )
            .with_markers(),
        );
        queue_series_.push(
            Series::new(
                case,
                sel.iter()
                    .map(|(w, p)| (*w as f64, p.queue.max(0.01)))
                    .collect(),
            )
            .with_markers(),
        );
    }
    let mut ideal = Series::new(
        "ratio = w",
        weights.iter().map(|&w| (w as f64, w as f64)).collect(),
    );
    ideal.reference = true;
    ratio_series.push(ideal);
    let mut ratio = chart(
        format!("{}: throughput ratio against weight", e.id()),
        "weight w of flow 0 (log)",
        "flow 0 ÷ mean of the others (log)",
        ratio_series,
    );
    ratio.log_x = true;
    ratio.log_y = true;
    report.files.extend(write_chart(&ctx.out, "ratio", &ratio)?);
    let mut queue = chart(
        format!("{}: bottleneck queue against weight", e.id()),
        "weight w of flow 0 (log)",
        "mean queue (packets, log)",
        queue_series_,
    );
    queue.log_x = true;
    queue.log_y = true;
    report.files.extend(write_chart(&ctx.out, "queue", &queue)?);
    // 003 Fig. 5(c).
    let mut utilisation = chart(
        format!("{}: bottleneck utilisation against weight", e.id()),
        "weight w of flow 0 (log)",
        "utilisation (fraction of capacity)",
        utilisation_series,
    );
    utilisation.log_x = true;
    report
        .files
        .extend(write_chart(&ctx.out, "utilisation", &utilisation)?);
    Ok(report)
}
