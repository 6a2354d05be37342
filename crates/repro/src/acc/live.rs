//! 000 Fig. 11: the Linux implementation's two-bottleneck run, simulated and live over UDP.

use acclab_scenario::Scenario;

use crate::common::{self, flow_series, mbps, period_mean};
use crate::{Exp, Report, ReproError, Row, Spec};

/// 000 Fig. 11: the Linux implementation's two-bottleneck run, here in simulation and live.
pub const FIG11: Spec = spec!("acc-fig11", "000 Fig. 11: two 1 Mb/s bottlenecks, long flows coming and going — live over UDP and simulated", quick, acc_fig11);

/// Live time scale of the quick variant: real time, as the full run. At 5 this 2-core VM's
/// vCPU stalls (up to ~15 ms of wall time, 75 ms of scenario time) failed a ±15% row in one of
/// three `reproduce all --quick` runs on 2026-11-23; the quick variant is shorter, not faster.
const FIG11_QUICK_SCALE: f64 = 1.0;

/// The three phases (one long flow, both, the other one) from the long flows' start and stop
/// times, each measured over its second half.
fn fig11_phases(sc: &Scenario) -> Result<[(&'static str, f64, f64); 3], ReproError> {
    let time = |id: &str, start: bool| {
        sc.flows
            .iter()
            .find(|f| f.id == id)
            .and_then(|f| if start { Some(f.start) } else { f.stop })
            .map(|t| t.as_secs_f64())
            .ok_or_else(|| ReproError::Other(format!("acc-fig11 needs flow {id}")))
    };
    let b = [
        time("long1", true)?,
        time("long2", true)?,
        time("long1", false)?,
        time("long2", false)?,
    ];
    let second_half = |a: f64, z: f64| ((a + z) / 2.0, z);
    let (p1, p2, p3) = (
        second_half(b[0], b[1]),
        second_half(b[1], b[2]),
        second_half(b[2], b[3]),
    );
    Ok([
        ("long1 alone", p1.0, p1.1),
        ("both long flows", p2.0, p2.1),
        ("long2 alone", p3.0, p3.1),
    ])
}

fn acc_fig11(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let sc = e.scenario()?;
    let scale = if ctx.quick { FIG11_QUICK_SCALE } else { 1.0 };
    let phases = fig11_phases(&sc)?;
    let mut report = e.report();
    let (sim, live) = common::simulated_and_live(ctx, e.id(), &sc, scale, &mut report.files)?;
    let (shorts, longs): (Vec<usize>, Vec<usize>) =
        (0..sc.flows.len()).partition(|&i| sc.flows.get(i).id.starts_with("short"));
    for (label, run) in [("simulation", &sim), ("live", &live)] {
        for &(phase, t0, t1) in &phases {
            let eq = common::phase_theory(&sc, t0, t1);
            let predicted = |i: usize| {
                eq.as_ref()
                    .and_then(|e| e.flows[i].as_ref())
                    .map(|p| mbps(p.throughput_bps))
            };
            let series = |i: usize| flow_series(&run.sim, &[i], |s| Some(mbps(s.throughput_bps)));
            let active: Vec<usize> = longs
                .iter()
                .copied()
                .filter(|&i| predicted(i).is_some_and(|x| x > 0.0))
                .collect();
            let (paper_long, paper_short) = if active.len() == 2 {
                (0.25, 0.5)
            } else {
                (0.33, 0.67)
            };
            for (group, members, paper) in [
                ("long", &active, paper_long),
                ("short", &shorts, paper_short),
            ] {
                let n = members.len().max(1) as f64;
                let measured = members
                    .iter()
                    .map(|&i| period_mean(&series(i), t0, t1))
                    .sum::<f64>()
                    / n;
                let theory = members.iter().map(|&i| predicted(i)).sum::<Option<f64>>();
                // The model tier's run of the scenario (beside the simulated one), both rows.
                let fluid = members
                    .iter()
                    .map(|&i| {
                        let m = sim.model_flow_series(&[i], |r| Some(mbps(r.throughput_bps)))?;
                        Some(period_mean(&m, t0, t1))
                    })
                    .sum::<Option<f64>>();
                report.rows.push(
                    Row::close(
                        format!("{label}, {phase} ({t0:.0}–{t1:.0} s): {group} flow Mb/s"),
                        Some(paper),
                        theory.map(|t| t / n),
                        measured,
                        0.15,
                    )
                    .with_model(fluid.map(|m| m / n)),
                );
            }
        }
        for name in ["r1->r2", "r2->r3"] {
            let l = &run.summary.links[common::link(&sc, name)?];
            report.rows.push(Row::at_most(
                format!("{label}: {} largest queue, packets", l.id),
                None,
                None,
                l.max_queue_pkts as f64,
                100.0,
            ));
        }
    }
    common::live_rows(&mut report, "live", &live, scale);
    report
        .notes
        .push(format!("simulation: {}", common::speed(&sim.summary)));
    Ok(report)
}
