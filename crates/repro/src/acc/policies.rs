//! 000 Fig. 2: the three ACC policies on a parking lot, one equilibrium.

use acclab_core::config::AccPolicyName;
use acclab_results::plot::Series;

use crate::checks::{FlowCheck, Flows, Test, Units, THROUGHPUT_MBPS};
use crate::common::{self, mbps};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::{monaco, throughput_series, with_scheme};

/// 000 Fig. 2: three ACC policies, one equilibrium.
pub const FIG2: Spec = spec!(
    "acc-fig2",
    "000 Fig. 2: ACC-AIAD, ACC-MW, ACC-P on a 2×9 Mb/s parking lot reach long 3, shorts 6 Mb/s",
    quick,
    acc_fig2
);

/// What 000 Fig. 2 shows for every policy: the long flow at 3 Mb/s, the short ones at 6 (each
/// within 10% of the theory's weighted-PF rate, which is the same).
const FIG2_CHECKS: [FlowCheck; 3] = [
    FlowCheck {
        flows: Flows::Id("long"),
        quantity: &THROUGHPUT_MBPS,
        paper: Some(3.0),
        test: Test::Close(0.10),
    },
    FlowCheck {
        flows: Flows::Id("short1"),
        quantity: &THROUGHPUT_MBPS,
        paper: Some(6.0),
        test: Test::Close(0.10),
    },
    FlowCheck {
        flows: Flows::Id("short2"),
        quantity: &THROUGHPUT_MBPS,
        paper: Some(6.0),
        test: Test::Close(0.10),
    },
];

fn acc_fig2(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let policies = [
        ("acc-aiad", AccPolicyName::AccAiad),
        ("acc-mw", AccPolicyName::AccMw),
        ("acc-p", AccPolicyName::AccP),
    ];
    let runs = common::simulate_all(
        ctx,
        policies.map(|(label, p)| (label, with_scheme(&base, &monaco(p)))),
    )?;
    let mut report = e.report();
    let mut longs = Vec::new();
    for ((label, _), run) in policies.iter().zip(runs) {
        let units = Units {
            packet_bytes: f64::from(run.sim.scenario().packet_size),
        };
        for check in &FIG2_CHECKS {
            report
                .rows
                .push(check.row(&format!("{label}: "), &run.summary, &units));
        }
        if let Some(long) = run.summary.flows.iter().find(|f| f.id == "long") {
            longs.push(mbps(long.throughput_bps));
        }
        report.rows.push(Row::at_most(
            format!("{label}: lost packets"),
            Some(0.0),
            None,
            run.summary
                .flows
                .iter()
                .map(|f| f.lost_packets as f64)
                .sum(),
            0.0,
        ));
        // Each flow's packet-level goodput, the model tier's trajectory (dashed) and the
        // theory's equilibrium (dotted), as 000 Fig. 2 sets the policies against one equilibrium.
        let end = run.summary.sim_time_s;
        let mut series = Vec::new();
        for (i, s) in throughput_series(&run).into_iter().enumerate() {
            let f = &run.summary.flows[i];
            series.push(s);
            if let Some(m) = run.model_flow_series(&[i], |r| Some(mbps(r.throughput_bps))) {
                series.push(
                    Series::new(format!("{} (model)", f.id), m)
                        .as_dashed()
                        .unlisted(),
                );
            }
            if let Some(t) = &f.theory {
                let level = mbps(t.throughput_bps);
                series
                    .push(Series::level(format!("{} (theory)", f.id), level, 0.0, end).unlisted());
            }
        }
        series.push(Series::key("dashed: model tier", true, false));
        series.push(Series::key("dotted: theory (weighted PF)", false, true));
        e.draw(
            &mut report,
            &format!("throughput-{label}"),
            format!(
                "{label}: goodput per {} sample",
                run.sim.scenario().output.sample_interval
            ),
            "time (s)",
            "goodput (Mb/s)",
            series,
        )?;
    }
    let spread = longs.iter().cloned().fold(f64::MIN, f64::max)
        / longs.iter().cloned().fold(f64::MAX, f64::min)
        - 1.0;
    report.notes.push(format!(
        "long-flow throughput differs by {:.1}% between the policies",
        spread * 100.0
    ));
    Ok(report)
}
