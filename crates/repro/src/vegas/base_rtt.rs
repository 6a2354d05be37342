//! 002 Tables V and VI (Fig. 6): sources starting serially — baseRTT error and persistent
//! congestion, fixed against discovered baseRTT.

use acclab_core::config::{BaseRttParam, SchemeConfig};
use acclab_core::Duration;
use acclab_results::plot::{write_chart, Series};
use acclab_theory::equilibrium::propagation_delay;
use acclab_theory::num::{self, Problem};
use acclab_theory::vegas_error::serial_arrivals;

use crate::checks::kbps;
use crate::common::{self, flow_series, period_mean, queue_series};
use crate::{Exp, Report, ReproError, Row, Spec};

use super::BOTTLENECK;

/// The paper's Table V model column: rates (KB/s) of the active sources and the queue, per period.
const TABLE5_RATES: [&[f64]; 5] = [
    &[6000.0],
    &[2000.0, 4000.0],
    &[940.0, 1490.0, 3570.0],
    &[500.0, 730.0, 1350.0, 3390.0],
    &[290.0, 400.0, 670.0, 1300.0, 3340.0],
];
const TABLE5_QUEUES: [f64; 5] = [20.0, 60.0, 127.0, 238.0, 416.0];
const TABLE6_BASE_RTT_MS: [f64; 5] = [10.18, 13.51, 20.18, 31.2, 49.80];

/// 002 Tables V and VI (and Fig. 6): baseRTT error and persistent congestion.
pub const TABLE5: Spec = spec!(
    "vegas-table5",
    "002 Tables V–VI / Fig. 6: 5 Vegas sources starting serially; fixed vs discovered baseRTT",
    vegas_table5
);

fn vegas_table5(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    // 48 Mb/s for 100 s runs in well under a second: the quick variant is the full one.
    let discovered = e.scenario()?;
    let mut fixed = discovered.clone();
    for f in fixed.flows.written_mut() {
        if let SchemeConfig::Vegas(p) = &mut f.scheme {
            p.base_rtt = BaseRttParam::Fixed(Duration::from_millis(10));
        }
    }
    let bottleneck = common::link(&discovered, BOTTLENECK)?;
    let bits = 8.0 * discovered.packet_size as f64;
    let c = discovered.links[bottleneck].rate.as_f64() / bits;
    let d = propagation_delay(&discovered, &discovered.flows.get(0));
    let period = discovered.flows.get(1).start.as_secs_f64();
    let (alpha, alpha_unit) = match &discovered.flows.get(0).scheme {
        SchemeConfig::Vegas(p) => match p.per {
            acclab_core::config::PerUnit::Time(u) => (p.alpha, u.as_secs_f64()),
            acclab_core::config::PerUnit::Rtt => (p.alpha, d),
        },
        _ => return Err(ReproError::Other("vegas-table5 needs Vegas flows".into())),
    };
    let alpha_rate = alpha / alpha_unit; // packets per second
    let [fixed_run, found_run] =
        common::simulate_all(ctx, [("fixed", fixed), ("discovered", discovered)])?;

    let mut report = e.report();
    // (a) fixed baseRTT = 10 ms: each source keeps α·10 ms = 20 packets; theory per period
    // from the NUM problem with n identical sources (baseRTT error 10 ms − d, 002 Theorem 3).
    // Each period is measured over its last quarter: the newest source raises its window by
    // one packet per RTT and needs most of the period to reach its equilibrium.
    let q_fixed = queue_series(&fixed_run.sim, bottleneck);
    for n in 1..=5 {
        let (t0, t1) = (period * (n as f64 - 0.25), period * n as f64);
        let base = 0.010;
        let p = Problem {
            capacity: vec![c],
            routes: vec![vec![0]; n],
            weight: vec![alpha_rate * base; n],
            linear: vec![base - d; n],
            min_rate: vec![],
        };
        let sol = num::solve(&p)?;
        report.rows.push(Row::close(
            format!("(a) fixed baseRTT: queue with {n} sources (pkts)"),
            Some(20.0 * n as f64),
            Some(sol.price[0] * c),
            period_mean(&q_fixed, t0, t1),
            0.05,
        ));
    }
    // (b) discovered baseRTT: the serial-arrival recursion (002 eqs. 27–29).
    let (model, base_rtts) = serial_arrivals(c, alpha_rate, d, 5);
    let q_found = queue_series(&found_run.sim, bottleneck);
    let q_fluid = found_run.model_link_series(bottleneck, |r| r.queue_pkts);
    for (t, m) in model.iter().enumerate() {
        let (t0, t1) = (period * (t as f64 + 0.75), period * (t as f64 + 1.0));
        report.rows.push(
            Row::close(
                format!("(b) queue, period {} (pkts)", t + 1),
                Some(TABLE5_QUEUES[t]),
                Some(m.queue_pkts),
                period_mean(&q_found, t0, t1),
                0.05,
            )
            .with_model(q_fluid.as_ref().map(|q| period_mean(q, t0, t1))),
        );
        for (n, x) in m.rates.iter().enumerate() {
            let series = flow_series(&found_run.sim, &[n], |f| Some(kbps(f.throughput_bps)));
            let fluid = found_run.model_flow_series(&[n], |f| Some(kbps(f.throughput_bps)));
            report.rows.push(
                Row::close(
                    format!("(b) period {}: host{}a rate (KB/s)", t + 1, n + 1),
                    Some(TABLE5_RATES[t][n]),
                    Some(x * bits / 8000.0),
                    period_mean(&series, t0, t1),
                    0.05,
                )
                .with_model(fluid.as_ref().map(|s| period_mean(s, t0, t1))),
            );
        }
    }
    for (n, b) in base_rtts.iter().enumerate() {
        report.rows.push(Row::close(
            format!("(b) host{}a baseRTT (ms)", n + 1),
            Some(TABLE6_BASE_RTT_MS[n]),
            Some(b * 1e3),
            found_run.summary.flows[n].base_rtt_s.unwrap_or(f64::NAN) * 1e3,
            0.05,
        ));
    }
    let queue_chart = |what: &str, stem: &str, q: Vec<(f64, f64)>| {
        write_chart(
            &ctx.out,
            stem,
            &common::chart(
                format!("{}: queue, {what} (Fig. 6)", e.id()),
                "time (s)",
                "queue (packets)",
                vec![Series::new("queue at router 1", q)],
            ),
        )
    };
    report.files.extend(queue_chart(
        "baseRTT fixed at 10 ms",
        "queue-fixed",
        q_fixed,
    )?);
    report.files.extend(queue_chart(
        "baseRTT discovered",
        "queue-discovered",
        q_found,
    )?);
    let rates: Vec<Series> = (0..5)
        .map(|n| {
            Series::new(
                format!("host{}a", n + 1),
                flow_series(&found_run.sim, &[n], |f| Some(kbps(f.throughput_bps))),
            )
        })
        .collect();
    e.draw(
        &mut report,
        "rates-discovered",
        "rates with discovered baseRTT",
        "time (s)",
        "sending rate (KB/s)",
        rates,
    )?;
    report.notes.push(format!(
        "theory uses the simulated path's d = {:.3} ms (propagation + transmission); the paper's model uses 10 ms",
        d * 1e3
    ));
    Ok(report)
}
