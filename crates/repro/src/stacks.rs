//! real-stacks: Linux's TCP beside ACC — acclab's own experiment (issue 25), not a paper figure.
//!
//! Does AVD (000 §IV-D: AVQ's virtual queue, read by Monaco as a virtual delay added to its
//! accumulation) keep the queue low when the traffic is the kernel's TCP? One Monaco loop,
//! Linux CUBIC (from 5 s) and Linux BBR (from 10 s) share a 20 Mb/s bottleneck with a 200-packet
//! buffer (`scenarios/repro/real-stacks.toml`), behind AVD and behind tail drop. Five runs:
//! - `live-avd`, `live-droptail`: the kernel's CUBIC and BBR through the emulated bottleneck
//!   (`acclab live run --netns`: network namespaces, as root; elsewhere the experiment cannot
//!   run and says so);
//! - `sim-avd`, `sim-droptail`: the same, simulated, with acclab's CUBIC (RFC 9438) and BBR v1 in
//!   the kernel's place, with Linux's receive buffer — what acclab's models of those stacks
//!   predict;
//! - `sim-monaco-avd`: every flow a Monaco loop behind AVD, the traffic AVD was designed for.
//!
//! Claims (acclab's own, each able to fail): with Monaco loops only, AVD keeps the mean queue
//! under a tenth of the buffer; with Linux's TCP it does not (the mean queue stands above a
//! third of the buffer (0.3) behind AVD as behind tail drop: AVD marks no ECN and drops only at
//! the buffer's end, so loss-based and model-based TCP fill it); the emulated and the simulated
//! runs agree on the bottleneck's utilisation (within 5%) and its mean queue (within 25%; behind
//! AVD in the full run only: the quick one's window opens before that queue settles); Monaco,
//! whose delay-based loop backs off from the standing queue, is starved in both (under a tenth of
//! an equal share). Files: `table.csv` (every run's utilisation, queue, drops and per-flow
//! throughput), `queue.svg|png` (the bottleneck's queue in every run), `throughput-<run>` (each
//! flow's throughput in each live run, with the simulated stand-in dashed).

use std::fmt::Write as _;

use acclab_core::config::{BbrParams, CubicParams, QueueConfig, SchemeConfig};
use acclab_results::plot::Series;
use acclab_scenario::Scenario;

use crate::common::{self, mbps, Run};
use crate::{Exp, Report, ReproError, Row, Spec};

pub const REAL_STACKS: Spec = spec!(
    "real-stacks",
    "Linux CUBIC and BBR beside Monaco over AVD and tail drop, emulated and simulated: does AVD keep the queue low when the traffic is real TCP?",
    quick,
    real_stacks
);

/// The bottleneck.
const BOTTLENECK: &str = "r1->r2";

/// The two bottleneck disciplines.
const QUEUES: [&str; 2] = ["avd", "droptail"];

/// Packet size of the scenario, for the kernel's goodput as wire bytes.
const PACKET: u32 = 1500;

/// The scenario behind discipline `queue` (with the scenario's buffer), its kernel flows run by
/// acclab's scheme of the same name where `simulated`, every flow a Monaco loop where
/// `monaco_only`.
fn case(base: &Scenario, link: usize, queue: &str, simulated: bool, monaco_only: bool) -> Scenario {
    let mut sc = base.clone();
    let limit = match &sc.links[link].queue {
        QueueConfig::Avq(p) => p.limit,
        other => unreachable!("the scenario's bottleneck is AVD, not {other:?}"),
    };
    sc.links[link].queue = crate::modern::queue(queue, limit);
    for f in sc.flows.written_mut() {
        if monaco_only {
            f.scheme = crate::modern::scheme("monaco");
        } else if let (true, SchemeConfig::KernelTcp(k)) = (simulated, &f.scheme) {
            f.scheme = stand_in(&k.cc);
        }
    }
    sc
}

/// Linux's largest autotuned receive buffer (net.ipv4.tcp_rmem's default maximum, 6 MiB).
const LINUX_RECEIVE_BUFFER: u64 = 6 * 1024 * 1024;

/// acclab's scheme in the place of the kernel's `cc` (SACK on, as Linux and acclab's defaults),
/// with Linux's receive buffer: unbounded, acclab's receivers held what followed a long-lost
/// segment and counted it delivered when the hole filled (23.6 Mb/s over the 20 Mb/s link in
/// the tail-drop run's window).
fn stand_in(cc: &str) -> SchemeConfig {
    let rw = Some(acclab_core::Bytes(LINUX_RECEIVE_BUFFER));
    match crate::modern::scheme(cc) {
        SchemeConfig::Cubic(p) => SchemeConfig::Cubic(CubicParams {
            receive_window: rw,
            ..p
        }),
        SchemeConfig::Bbr(p) => SchemeConfig::Bbr(BbrParams {
            receive_window: rw,
            ..p
        }),
        other => other,
    }
}

/// A flow's throughput in Mb/s of wire bytes: a kernel flow's goodput with its segments'
/// headers added (acclab's flows count whole packets already).
fn wire_mbps(kind: &str, bps: f64) -> f64 {
    mbps(match kind {
        "kernel-tcp" => acclab_live::kernel::wire_bytes(bps, PACKET),
        _ => bps,
    })
}

/// One run's numbers over the window.
struct Outcome {
    label: String,
    utilization: f64,
    mean_queue: f64,
    p95_queue: f64,
    drops: u64,
    /// Per flow, wire bytes, Mb/s.
    throughput: Vec<f64>,
}

fn outcome(label: &str, run: &Run, link: usize) -> Outcome {
    let s = &run.summary;
    let l = &s.links[link];
    let (t0, t1) = (s.window.from_s, s.window.to_s);
    let throughput = s
        .flows
        .iter()
        .map(|f| wire_mbps(&f.kind, f.throughput_bps))
        .collect();
    Outcome {
        label: label.into(),
        utilization: l.utilization,
        mean_queue: l.mean_queue_pkts,
        p95_queue: common::period_p95(&common::queue_series(&run.sim, link), t0, t1),
        drops: l.drops_in_window,
        throughput,
    }
}

fn real_stacks(e: &Exp) -> Result<Report, ReproError> {
    let ctx = e.ctx;
    let base = e.scenario()?;
    let link = common::link(&base, BOTTLENECK)?;
    let buffer = match base.links[link].queue.limits().first() {
        Some(acclab_core::Limit::Packets(n)) => *n as f64,
        other => {
            return Err(ReproError::Other(format!(
                "the bottleneck's buffer must be in packets, not {other:?}"
            )))
        }
    };
    let mut report = e.report();
    // The simulated runs first, in parallel (seconds); then the live ones, one at a time (each
    // the scenario's length in real time).
    let [sim_avd, sim_droptail, sim_monaco] = common::simulate_all(
        ctx,
        [
            ("sim-avd", case(&base, link, "avd", true, false)),
            ("sim-droptail", case(&base, link, "droptail", true, false)),
            ("sim-monaco-avd", case(&base, link, "avd", true, true)),
        ],
    )?;
    let mut live = Vec::new();
    for q in QUEUES {
        let label = format!("live-{q}");
        let sc = case(&base, link, q, false, false);
        live.push(common::run_live_on(
            ctx,
            &label,
            sc,
            1.0,
            acclab_live::Network::Namespaces,
        )?);
    }
    let [live_avd, live_droptail]: [Run; 2] = live
        .try_into()
        .map_err(|_| ReproError::Other("a live run went missing".into()))?;
    let runs: [(&str, &Run); 5] = [
        ("live-avd", &live_avd),
        ("sim-avd", &sim_avd),
        ("live-droptail", &live_droptail),
        ("sim-droptail", &sim_droptail),
        ("sim-monaco-avd", &sim_monaco),
    ];
    let outcomes: Vec<Outcome> = runs.iter().map(|(l, r)| outcome(l, r, link)).collect();
    let get = |label: &str| {
        outcomes
            .iter()
            .find(|o| o.label == label)
            .expect("every run has an outcome")
    };

    report.rows.push(Row::at_most(
        "sim-monaco-avd: Monaco loops only behind AVD, mean queue / buffer",
        None,
        None,
        get("sim-monaco-avd").mean_queue / buffer,
        0.1,
    ));
    for q in QUEUES {
        let (l, s) = (get(&format!("live-{q}")), get(&format!("sim-{q}")));
        report.rows.push(Row::at_least(
            format!("live-{q}: Linux CUBIC + BBR beside Monaco, mean queue / buffer"),
            None,
            None,
            l.mean_queue / buffer,
            0.3,
        ));
        report.rows.push(Row::close_to(
            format!("live-{q}: bottleneck utilisation"),
            "sim",
            s.utilization,
            l.utilization,
            0.05,
        ));
        // The quick window opens 5 s after BBR joins, before the queue behind AVD settles
        // (122 packets live against 162 simulated in a quick run; 158 against 163 in a full one).
        report.rows.push(
            Row::close_to(
                format!("live-{q}: mean queue, packets"),
                "sim",
                s.mean_queue,
                l.mean_queue,
                0.25,
            )
            .full_run_only(
                e.ctx.quick && q == "avd",
                "15–30 s: behind AVD the queue has not settled 5 s after BBR joins",
            ),
        );
        let fair = 20.0 / base.flows.len() as f64;
        for o in [l, s] {
            report.rows.push(Row::at_most(
                format!("{}: Monaco's throughput / an equal share", o.label),
                None,
                None,
                o.throughput[0] / fair,
                0.1,
            ));
        }
    }
    write_table(e, &base, &outcomes, &mut report)?;
    draw(e, &base, link, &runs, &mut report)?;
    for (label, run) in [("live-avd", &live_avd), ("live-droptail", &live_droptail)] {
        common::live_rows(&mut report, label, run, 1.0);
        if let Some(ip) = run.summary.live.as_ref().and_then(|l| l.ip.as_ref()) {
            report.notes.push(format!(
                "{label}: real stacks' packets: {} carried in, {} delivered, {} foreign, {} refused by a host",
                ip.accepted, ip.delivered, ip.rejected_foreign, ip.write_failures
            ));
        }
    }
    Ok(report)
}

/// `table.csv`: one row per run.
fn write_table(
    e: &Exp,
    base: &Scenario,
    outcomes: &[Outcome],
    report: &mut Report,
) -> Result<(), ReproError> {
    let mut t = String::from("run,utilization,mean_queue_pkts,p95_queue_pkts,drops");
    for f in &base.flows {
        write!(t, ",{}_mbps", f.id).expect("writing to a String");
    }
    t.push('\n');
    for o in outcomes {
        write!(
            t,
            "{},{:.4},{:.2},{:.1},{}",
            o.label, o.utilization, o.mean_queue, o.p95_queue, o.drops
        )
        .expect("writing to a String");
        for x in &o.throughput {
            write!(t, ",{x:.3}").expect("writing to a String");
        }
        t.push('\n');
    }
    std::fs::write(e.ctx.out.join("table.csv"), t)?;
    report.files.push("table.csv".into());
    Ok(())
}

/// The queue in every run; each live run's flows beside their simulated stand-ins.
fn draw(
    e: &Exp,
    base: &Scenario,
    link: usize,
    runs: &[(&str, &Run)],
    report: &mut Report,
) -> Result<(), ReproError> {
    let series = runs
        .iter()
        .map(|(label, run)| {
            let s = Series::new(*label, common::queue_series(&run.sim, link));
            if label.starts_with("sim") {
                s.as_dashed()
            } else {
                s
            }
        })
        .collect();
    e.draw(
        report,
        "queue",
        "the bottleneck's queue, live (solid) and simulated (dashed)",
        "time (s)",
        "queue (packets)",
        series,
    )?;
    for q in QUEUES {
        let find = |label: String| {
            runs.iter()
                .find(|(l, _)| *l == label)
                .map(|(_, r)| *r)
                .expect("every run is drawn")
        };
        let (live, sim) = (find(format!("live-{q}")), find(format!("sim-{q}")));
        let mut series = Vec::new();
        for (i, f) in base.flows.iter().enumerate() {
            let wire = |run: &Run| {
                let kind = &run.summary.flows[i].kind;
                common::flow_series(&run.sim, &[i], |s| Some(wire_mbps(kind, s.throughput_bps)))
            };
            series.push(Series::new(f.id.clone(), wire(live)));
            series.push(Series::new(format!("{} (sim)", f.id), wire(sim)).as_dashed());
        }
        e.draw(
            report,
            &format!("throughput-{q}"),
            format!("throughput behind {q}, live (solid) and simulated (dashed)"),
            "time (s)",
            "throughput (Mb/s)",
            series,
        )?;
    }
    Ok(())
}
