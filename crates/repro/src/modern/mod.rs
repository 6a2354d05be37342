//! modern-comparison: ACC among today's schemes — not a paper figure; its claims are acclab's own.
//!
//! Monaco (ACC-P, 000 §IV-B), Vegas (002), Reno, CUBIC (RFC 9438), BBR v1 and DCTCP (RFC 8257),
//! each alone (Vegas with α = β) on a dumbbell with mixed round trips and on a parking lot, behind DropTail, CoDel
//! (RFC 8289), FQ-CoDel (RFC 8290) and AVD (000 §IV-D): one run per (scheme, queue), the two
//! networks side by side in one scenario (`scenarios/repro/modern-comparison.toml`).
//!
//! Per (network, queue, scheme) it measures utilisation, queueing delay (mean and 95th
//! percentile of the sampled bottleneck queue, in time at the link's rate), Jain's index, RTT
//! unfairness (dumbbell: throughput of the 24 ms flow over the 162 ms one; parking lot: a cross
//! flow's mean over the long flow's) and the drop rate, with the theory's equilibrium (000 §III,
//! 002 Theorem 1: proportional fairness for Monaco and Vegas) beside Monaco's and Vegas's rows.
//! Files: `table-<queue>.csv` (one table per bottleneck type), `flows.csv` (every flow of every
//! run, with its prediction) and `<queue>.svg` (per-flow throughput against base RTT on the
//! dumbbell, one series per scheme, the theory's allocation as a reference line).

use acclab_core::config::{
    AvqMode, AvqParams, BbrParams, CodelParams, CubicParams, DctcpParams, DroptailParams,
    FqCodelParams, QueueConfig, RenoParams, SchemeConfig, VegasParams,
};
use acclab_core::{Duration, Limit};
use acclab_scenario::Scenario;
use rayon::prelude::*;

use crate::common::{self, simulate};
use crate::{Exp, Report, ReproError, Spec};

mod claims;
mod metrics;
mod tables;

use metrics::{flows_of, metrics, FlowRow, Outcome};

pub const COMPARISON: Spec = spec!(
    "modern-comparison",
    "ACC among today's schemes: Monaco, Vegas, Reno, CUBIC, BBR, DCTCP over DropTail, CoDel, FQ-CoDel, AVD",
    quick,
    modern_comparison
);

/// The schemes compared, each at its defaults but Vegas: α = β = 3 packets (Linux's 2 and 4
/// bracket it), the unique equilibrium 002 §3 analyses and the theory predicts.
const SCHEMES: [&str; 6] = ["monaco", "vegas", "reno", "cubic", "bbr", "dctcp"];

/// The bottleneck disciplines compared.
const QUEUES: [&str; 4] = ["droptail", "codel", "fq-codel", "avd"];

/// The dumbbell's bottleneck and the parking lot's three links.
const DUMBBELL: &str = "db-r1->db-r2";
const PARKING_LOT: [&str; 3] = ["pl-r1->pl-r2", "pl-r2->pl-r3", "pl-r3->pl-r4"];

pub(crate) fn scheme(name: &str) -> SchemeConfig {
    match name {
        "monaco" => SchemeConfig::Monaco(Box::default()),
        "vegas" => SchemeConfig::Vegas(Box::new(VegasParams {
            alpha: 3.0,
            beta: 3.0,
            ..VegasParams::default()
        })),
        "reno" => SchemeConfig::Reno(RenoParams::default()),
        "cubic" => SchemeConfig::Cubic(CubicParams::default()),
        "bbr" => SchemeConfig::Bbr(BbrParams::default()),
        "dctcp" => SchemeConfig::Dctcp(DctcpParams::default()),
        other => unreachable!("no scheme {other} in SCHEMES"),
    }
}

/// Discipline `name` with the buffer `limit` the scenario gives the link. CoDel and FQ-CoDel mark
/// ECN-capable packets (Linux's fq_codel default; only DCTCP's are), and every discipline that
/// has one gives Monaco's control packets the priority band its estimator needs (000 §IV-B).
pub(crate) fn queue(name: &str, limit: Limit) -> QueueConfig {
    match name {
        "droptail" => QueueConfig::Droptail(DroptailParams {
            limit,
            priority: true,
        }),
        "codel" => QueueConfig::Codel(CodelParams {
            limit,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            priority: true,
        }),
        "fq-codel" => QueueConfig::FqCodel(FqCodelParams {
            limit,
            ecn: true,
            ..FqCodelParams::default()
        }),
        "avd" => QueueConfig::Avq(AvqParams {
            mode: AvqMode::Delay,
            priority: true,
            ..AvqParams::new(limit)
        }),
        other => unreachable!("no queue {other} in QUEUES"),
    }
}

/// The scenario with every flow running `scheme_name` and every bottleneck behind `queue_name`.
fn case(base: &Scenario, bottlenecks: &[usize], scheme_name: &str, queue_name: &str) -> Scenario {
    let mut sc = base.clone();
    for f in sc.flows.written_mut() {
        f.scheme = scheme(scheme_name);
    }
    for &l in bottlenecks {
        let limit = match &sc.links[l].queue {
            QueueConfig::Droptail(p) => p.limit,
            other => unreachable!("the scenario's bottlenecks are droptail, not {other:?}"),
        };
        sc.links[l].queue = queue(queue_name, limit);
    }
    sc
}

fn modern_comparison(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let db_link = common::link(&base, DUMBBELL)?;
    let pl_links: Vec<usize> = PARKING_LOT
        .iter()
        .map(|n| common::link(&base, n))
        .collect::<Result<_, _>>()?;
    let bottlenecks: Vec<usize> = std::iter::once(db_link)
        .chain(pl_links.iter().copied())
        .collect();
    let db_flows = flows_of(&base, "db-");
    let pl_long = flows_of(&base, "pl-long");
    let pl_cross = flows_of(&base, "pl-cross");
    let pl_flows: Vec<usize> = pl_long.iter().chain(&pl_cross).copied().collect();
    let base_rtt: Vec<f64> = base
        .flows
        .iter()
        .map(|f| acclab_theory::equilibrium::propagation_delay(&base, &f))
        .collect();
    // The dumbbell's shortest and longest round trips.
    let by_rtt = |best: bool| -> Vec<usize> {
        let pick = db_flows.iter().copied().reduce(|a, b| {
            let a_better = base_rtt[a] < base_rtt[b];
            if a_better == best {
                a
            } else {
                b
            }
        });
        pick.into_iter().collect()
    };
    let (db_short, db_long) = (by_rtt(true), by_rtt(false));
    if db_flows.is_empty() || pl_long.is_empty() || pl_cross.is_empty() {
        return Err(ReproError::Other(
            "modern-comparison needs flows db-*, pl-long and pl-cross*".into(),
        ));
    }

    let cases: Vec<(&'static str, &'static str)> = QUEUES
        .iter()
        .flat_map(|&q| SCHEMES.iter().map(move |&s| (q, s)))
        .collect();
    let outcomes: Vec<Result<Outcome, ReproError>> = cases
        .par_iter()
        .map(|&(q, s)| {
            let run = simulate(ctx, &format!("{q}-{s}"), case(&base, &bottlenecks, s, q))?;
            let flows = run
                .summary
                .flows
                .iter()
                .zip(&base_rtt)
                .map(|(f, &rtt)| FlowRow {
                    id: f.id.clone(),
                    rtt,
                    measured: f.throughput_bps,
                    theory: f.theory.as_ref().map(|t| t.throughput_bps),
                    model: f.model.as_ref().map(|m| m.throughput_bps),
                })
                .collect();
            Ok(Outcome {
                queue: q,
                scheme: s,
                dumbbell: metrics(&run, &[db_link], &db_flows, (&db_short, &db_long)),
                parking_lot: metrics(&run, &pl_links, &pl_flows, (&pl_cross, &pl_long)),
                flows,
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect::<Result<_, _>>()?;

    let mut report = e.report();
    tables::write_tables(e, &outcomes, &mut report)?;
    for q in QUEUES {
        tables::draw(e, &outcomes, q, &db_flows, &mut report)?;
    }
    claims::check(&outcomes, &db_flows, &pl_long, &mut report);
    Ok(report)
}
