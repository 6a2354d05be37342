//! A packet run's results, in `acclab_results`' shapes: its summary, built from the monitor's
//! records of the measurement window and the endpoints' and queues' own counters, and its
//! `flows.csv`, `links.csv` and packet trace.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use acclab_results::fct::{summarise, write_fct_csv, FctRecord};
use acclab_results::samples::{write_csvs, CsvSamples, Names};
use acclab_results::summary::{
    jain, Fairness, FlowSummary, LinkSummary, SharedBufferSummary, Summary, WindowSummary,
};
use acclab_scenario::LinkId;

use crate::observe::NetworkView;
use crate::simulator::Simulator;

/// The summary of a finished run.
/// `name` as one of `names`, added if it is not there yet (a run has a handful of schemes).
fn shared(names: &mut Vec<Arc<str>>, name: &str) -> Arc<str> {
    match names.iter().find(|n| &***n == name) {
        Some(n) => n.clone(),
        None => {
            names.push(Arc::from(name));
            names[names.len() - 1].clone()
        }
    }
}

pub fn summary(sim: &Simulator, wall_time_s: f64) -> Summary {
    let sc = sim.scenario();
    let m = sim.monitor();
    let net = sim.network();
    let (from, to) = sc.output.window;
    let [w0, w1] = m.window_edges();
    let (w0, w1) = (w0.unwrap_or(from), w1.unwrap_or(to));
    let window_ns = (w1 - w0).0.max(1) as f64;
    // The flows summary.json lists (`[output] flow_summaries`); the fairness indices count all.
    let listed = sc.listed_flows();
    let mut flows = Vec::with_capacity(listed);
    let mut active_rates = Vec::new();
    let nodes: Vec<Arc<str>> = sc.nodes.iter().map(|n| Arc::from(n.as_str())).collect();
    let mut kinds: Vec<Arc<str>> = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let (tx, rx) = net.endpoint_stats(i);
        let (start, stop) = net.flow_times(i);
        let end = [Some(w1), stop, tx.completed_at]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(w1);
        let active = end - w0.max(start);
        let throughput = acclab_core::Rate::of(m.window_delivered(i), active);
        if active.0 > 0 {
            active_rates.push(throughput);
        }
        if i >= listed {
            continue;
        }
        let w = m
            .flow_window(i)
            .expect("the monitor keeps the listed flows' windows");
        flows.push(FlowSummary {
            id: f.id.clone(),
            kind: shared(&mut kinds, f.scheme.kind()),
            src: nodes[f.src.0 as usize].clone(),
            dst: nodes[f.dst.0 as usize].clone(),
            throughput_bps: throughput,
            received_bps: acclab_core::Rate::of(w.received_bytes, active),
            sent_bytes: tx.sent_bytes,
            delivered_bytes: rx.delivered_bytes,
            lost_packets: m.lost_data(i),
            mean_rtt_s: (w.rtt_samples > 0)
                .then(|| w.rtt_sum_ns as f64 / w.rtt_samples as f64 / 1e9),
            mean_cwnd_bytes: w.mean_cwnd_bytes,
            mean_accumulation_bytes: w.mean_accumulation_bytes,
            base_rtt_s: tx.base_rtt.map(|d| d.as_secs_f64()),
            retransmits: tx.retransmits,
            retransmits_in_window: w.retransmits,
            retransmits_in_avoidance: tx.retransmits_in_avoidance,
            timeouts: tx.timeouts,
            active_in_window_s: active.as_secs_f64(),
            completed_s: tx.completed_at.map(|t| t.as_secs_f64()),
            one_way_delay: m.one_way_delay(i),
            theory: None,
            model: None,
        });
    }
    let links = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let w = m.link_window(i);
            let st = net.queue(LinkId(i as u32)).stats();
            LinkSummary {
                id: l.name.clone(),
                rate_bps: l.rate.bps(),
                utilization: match &l.capacity {
                    // The bytes sent over those the trace offered in the window.
                    Some(c) => {
                        let (a, b) = sc.output.window;
                        let offered = c.trace.bytes_by(b) - c.trace.bytes_by(a);
                        w.transmitted_bytes as f64 / offered.max(1) as f64
                    }
                    None => w.busy_ns as f64 / window_ns,
                },
                mean_queue_pkts: w.queue_area as f64 / window_ns,
                max_queue_pkts: w.max_queue_pkts,
                drops: st.dropped_packets,
                marks: st.marked_packets,
                drops_in_window: w.drops,
                marks_in_window: w.marks,
                random_losses: m.random_losses(i),
                transmitted_packets: st.dequeued_packets,
                queueing_delay: m.queueing_delay(i),
                theory: None,
                model: None,
            }
        })
        .collect();
    Summary {
        scenario: sc.name.clone(),
        mode: "simulation".into(),
        seed: sc.seed,
        sim_time_s: sim.now().as_secs_f64(),
        wall_time_s,
        events: sim.events_processed(),
        packet_hops: sim.packet_hops(),
        window: WindowSummary {
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
        },
        unlisted_flows: (sc.flows.len() - listed) as u64,
        flows,
        links,
        shared_buffers: sc
            .shared_buffers
            .iter()
            .zip(sim.shared_buffers())
            .map(|(b, pool)| SharedBufferSummary {
                node: sc.nodes[b.node.0 as usize].clone(),
                size_bytes: b.params.size.0,
                alpha: b.params.alpha,
                peak_bytes: pool.peak(),
                end_bytes: pool.used(),
            })
            .collect(),
        fairness: Fairness {
            jain: jain(&active_rates),
            weighted_max_min: None,
        },
        theory: None,
        live: None,
        fct: fct_records(sim).map(|r| summarise(r, &sc.output.fct_buckets)),
        provenance: None,
    }
}

/// Every finite flow's completion time (see [`acclab_results::fct`]), made one at a time;
/// `None` when the run has no finite flows.
pub fn fct_records(sim: &Simulator) -> Option<impl Iterator<Item = FctRecord<'_>>> {
    let sc = sim.scenario();
    let net = sim.network();
    let finite = |i: usize| sc.flows.size(i).is_some();
    (0..sc.flows.len()).any(finite).then(|| {
        (0..sc.flows.len()).filter_map(move |i| {
            let ideal = sc.ideal_fct(i)?;
            let (src, dst) = sc.flows.ends(i);
            let (start, _) = net.flow_times(i);
            let (tx, _) = net.endpoint_stats(i);
            Some(FctRecord {
                id: sc.flows.id(i),
                src: Cow::Borrowed(sc.nodes[src.0 as usize].as_str()),
                dst: Cow::Borrowed(sc.nodes[dst.0 as usize].as_str()),
                size_bytes: sc.flows.size(i).map_or(0, |b| b.0),
                start_s: start.as_secs_f64(),
                fct_s: tx.completed_at.map(|t| (t - start).as_secs_f64()),
                ideal_fct_s: ideal.as_secs_f64(),
                retransmits: tx.retransmits,
                timeouts: tx.timeouts,
            })
        })
    })
}

/// The flows' ids where the run's scenario keeps them, not copied
/// ([`acclab_results::samples::FlowIds`]).
struct ScenarioIds(Arc<acclab_scenario::Scenario>);

impl acclab_results::samples::FlowIds for ScenarioIds {
    fn id(&self, flow: usize) -> Cow<'_, str> {
        self.0.flows.id(flow)
    }
    fn count(&self) -> usize {
        self.0.flows.len()
    }
}

/// What `sim`'s files call its flows, links and AQM columns.
pub fn names(sim: &Simulator) -> Names {
    let sc = sim.scenario();
    Names {
        flows: Box::new(ScenarioIds(sim.shared_scenario())),
        links: sc.links.iter().map(|l| l.name.clone()).collect(),
        aqm_columns: sim.monitor().aqm_columns.clone(),
        cc_columns: sim.monitor().cc_columns.clone(),
    }
}

/// Writes `summary.json`, `flows.csv`, `links.csv` and, with finite flows, `fct.csv` (and
/// `traffic.txt`, those between hosts `h<N>`, in the HPCC format) into `dir` (which must exist). When the
/// run streamed its samples ([`stream_outputs`]), the two CSV files are already there.
pub fn write_files(dir: &Path, sim: &Simulator, summary: &Summary) -> std::io::Result<()> {
    acclab_results::summary::write_summary(dir, summary)?;
    if let Some(records) = fct_records(sim) {
        write_fct_csv(dir, records)?;
    }
    let traffic = sim.scenario().traffic();
    if !traffic.is_empty() {
        acclab_results::files::write_atomic_with(&dir.join("traffic.txt"), |w| {
            acclab_scenario::workload::write_flow_file(w, &traffic)
        })?;
    }
    if sim.monitor().streams() {
        return Ok(());
    }
    let m = sim.monitor();
    let names = names(sim);
    acclab_results::samples::write_delays_csv(
        dir,
        (0..names.flows.count()).map(|f| (names.flows.id(f), m.delay_histogram(f))),
    )?;
    write_csvs(dir, names, &m.flow_samples, &m.link_samples)
}

/// Writes `links.csv` alone into `dir` (the live router, which has no flow results of its own).
pub fn write_links_csv(dir: &Path, sim: &Simulator) -> std::io::Result<()> {
    acclab_results::samples::write_links_csv(dir, &names(sim), &sim.monitor().link_samples)
}

/// Streams a run's files into `dir` as it goes: `flows.csv` and `links.csv` (samples kept in
/// memory too only if `keep`), and the packet trace if the scenario asks for one. Call before
/// running `sim`; [`Simulator::finish_samples`] completes them.
pub fn stream_outputs(dir: &Path, sim: &mut Simulator, keep: bool) -> std::io::Result<()> {
    let samples = CsvSamples::create(dir, names(sim))?;
    sim.stream_samples(Box::new(samples), keep);
    if let Some(t) = crate::trace::Tracer::create(dir, sim.scenario())? {
        sim.observe(Box::new(t));
    }
    Ok(())
}
