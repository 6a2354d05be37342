//! 003 Fig. 7: all services on two 1 Mb/s bottlenecks, simulated and live over UDP.

use crate::common::{self, flow_series, mbps, period_mean};
use crate::{Exp, Report, ReproError, Row, Spec};

/// 003 Fig. 7: all services on two 1 Mb/s bottlenecks, simulated and live.
pub const FIG7: Spec = spec!("qos-fig7", "003 Fig. 7: expected-rate, weighted (on-off) and plain loops on 2 bottlenecks — live over UDP and simulated", qos_fig7);

/// Live time scale of the quick variant: real time, as the full run. At 5 this 2-core VM's
/// vCPU stalls (up to ~15 ms of wall time, 75 ms of scenario time) failed a ±15% row in one of
/// three `reproduce all --quick` runs on 2026-11-23 (acc-fig11's); the quick variant is the full
/// run.
const FIG7_QUICK_SCALE: f64 = 1.0;

fn qos_fig7(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let sc = e.scenario()?;
    let scale = if ctx.quick { FIG7_QUICK_SCALE } else { 1.0 };
    let mut report = e.report();
    let (sim, live) = common::simulated_and_live(ctx, e.id(), &sc, scale, &mut report.files)?;
    // Each 10 s half-period of long loop 2, measured over its second half.
    let on = [(5.0, 10.0), (25.0, 30.0), (45.0, 50.0)];
    let off = [(15.0, 20.0), (35.0, 40.0), (55.0, 60.0)];
    for (label, run) in [("simulation", &sim), ("live", &live)] {
        for (state, periods) in [("long2 on", &on), ("long2 off", &off)] {
            let eqs: Vec<_> = periods
                .iter()
                .map(|&(a, b)| common::phase_theory(&sc, a, b))
                .collect();
            for (i, f) in sc.flows.iter().enumerate() {
                let predicted: Vec<f64> = eqs
                    .iter()
                    .filter_map(|e| e.as_ref()?.flows[i].as_ref())
                    .map(|p| mbps(p.throughput_bps))
                    .filter(|&x| x > 0.0)
                    .collect();
                // The periods in which the flow is active, and a series' mean over each.
                let active: Vec<(f64, f64)> = periods
                    .iter()
                    .zip(&eqs)
                    .filter(|(_, e)| {
                        e.as_ref()
                            .and_then(|e| e.flows[i].as_ref())
                            .is_some_and(|p| p.throughput_bps > 0.0)
                    })
                    .map(|(&p, _)| p)
                    .collect();
                let means = |series: &[(f64, f64)]| -> Vec<f64> {
                    active
                        .iter()
                        .map(|&(a, b)| period_mean(series, a, b))
                        .collect()
                };
                let series = flow_series(&run.sim, &[i], |s| Some(mbps(s.throughput_bps)));
                let measured = means(&series);
                if predicted.is_empty() || measured.is_empty() {
                    continue; // not active in these periods
                }
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                // The model tier's run of the scenario (beside the simulated one), same periods.
                let fluid = sim
                    .model_flow_series(&[i], |r| Some(mbps(r.throughput_bps)))
                    .map(|m| mean(&means(&m)));
                report.rows.push(
                    Row::close(
                        format!("{label}, {state}: {} Mb/s", f.id),
                        None,
                        Some(mean(&predicted)),
                        mean(&measured),
                        0.15,
                    )
                    .with_model(fluid),
                );
            }
        }
    }
    common::live_rows(&mut report, "live", &live, scale);
    report
        .notes
        .push(format!("simulation: {}", common::speed(&sim.summary)));
    Ok(report)
}
