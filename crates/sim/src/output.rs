//! Results of a run: `summary.json` (SPEC §7 contract), `flows.csv`, `links.csv`.
//!
//! Window semantics: throughputs, utilisations and means are over the measurement window; a flow
//! that starts, stops or completes inside the window is averaged over its own active part of it.
//! Counters (`sent_bytes`, `delivered_bytes`, `lost_packets`, `drops`, `marks`) are totals over
//! the whole run; `drops_in_window` gives the window's share.

use std::path::Path;

use serde::Serialize;

use crate::monitor::{FlowSample, LinkSample, Monitor, SampleSink};
use crate::observe::NetworkView;
use crate::simulator::Simulator;
use acclab_scenario::LinkId;

/// `summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    /// "simulation", or "live" for a run over real sockets (`acclab live run`).
    pub mode: String,
    pub seed: u64,
    pub sim_time_s: f64,
    /// Wall-clock time of the event loop: the only field that differs between identical runs.
    pub wall_time_s: f64,
    pub events: u64,
    /// Packet transmissions over all links.
    pub packet_hops: u64,
    pub window: WindowSummary,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    pub fairness: Fairness,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theory: Option<TheorySummary>,
    /// How a live run went: its time scale and what its router and endpoints rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveSummary>,
}

/// The live-mode part of `summary.json`. In a live run every time in the file is scenario time:
/// wall-clock time multiplied by `time_scale`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LiveSummary {
    /// Scenario seconds per wall-clock second.
    pub time_scale: f64,
    /// Where the sockets were: `"local"` (this machine's addresses, loopback by default) or
    /// `"netns"` (router and endpoint hosts in network namespaces, joined by veth pairs).
    pub network: String,
    /// Wall-clock length of the run, s.
    pub wall_duration_s: f64,
    /// Datagrams the router accepted from endpoints and forwarded into the emulated network.
    pub router_accepted: u64,
    /// Datagrams the router delivered to endpoints.
    pub router_delivered: u64,
    /// Datagrams the router dropped because they did not decode (wrong magic, version, length…).
    pub router_rejected_malformed: u64,
    /// Well-formed datagrams the router dropped: unknown flow, or a sender that is not the
    /// endpoint the scenario names for that flow and direction.
    pub router_rejected_foreign: u64,
    /// Datagrams whose authenticator did not verify under the run's key, and authentic ones
    /// seen before (replays): both dropped.
    pub router_rejected_forged: u64,
    pub router_rejected_replayed: u64,
    /// Datagrams the endpoints sent (to the router) and accepted (from it). Sent − accepted by
    /// the router, plus delivered − received, is what the host's sockets lost, not the emulation.
    pub endpoint_sent: u64,
    pub endpoint_received: u64,
    /// Datagrams endpoints received and dropped (malformed, or not for them).
    pub endpoint_rejected: u64,
    /// Of those, the forged or replayed.
    pub endpoint_rejected_unauthentic: u64,
    /// How far behind its emulated clock the router ran, scenario seconds: the mean lag of its
    /// timer wake-ups, and the largest lag of a wake-up or of a packet handed out of the
    /// emulated network (written to its endpoint after the time the network delivered it).
    pub router_mean_lag_s: f64,
    pub router_max_lag_s: f64,
    /// Packets the router handed out over a millisecond late (of `router_delivered` and
    /// `ip.delivered`): each is a stall of the router seen by the endpoints.
    pub router_late_deliveries: u64,
    /// Whether the router's thread ran with real-time priority (Linux, root or CAP_SYS_NICE):
    /// without it, other work on the machine can hold the router off a core and distort the run.
    pub router_realtime: bool,
    /// Datagrams the kernel dropped at the router's socket and at the endpoints' sockets
    /// because their receive buffers were full — lost outside the emulated network.
    pub socket_drops_router: u64,
    pub socket_drops_endpoints: u64,
    /// Real stacks' IP packets (`kernel-tcp` and `command` flows), when the run had any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<LiveIpSummary>,
    /// Why the run's numbers may not be the emulated network's (empty when nothing was seen):
    /// see `acclab_live::run::degradation`.
    pub degraded: Vec<String>,
}

/// What live mode's router did with real stacks' IP packets (`acclab_live::ipflows`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LiveIpSummary {
    /// Packets read from the hosts' TUN devices into the emulated network, and written out.
    pub accepted: u64,
    pub delivered: u64,
    /// Not IPv4 (or truncated), and IPv4 between hosts no flow joins: dropped.
    pub rejected_malformed: u64,
    pub rejected_foreign: u64,
    /// Packets a destination's device refused (its kernel's backlog full): lost outside the
    /// emulated network.
    pub write_failures: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WindowSummary {
    pub from_s: f64,
    pub to_s: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: String,
    pub kind: String,
    pub src: String,
    pub dst: String,
    /// Receiver goodput over the flow's active part of the window, bit/s.
    pub throughput_bps: f64,
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    /// Data packets of this flow dropped in the network.
    pub lost_packets: u64,
    pub mean_rtt_s: Option<f64>,
    pub mean_cwnd_bytes: Option<f64>,
    pub mean_accumulation_bytes: Option<f64>,
    /// The scheme's baseRTT estimate at the end of the run (Vegas), s.
    pub base_rtt_s: Option<f64>,
    pub retransmits: u64,
    pub retransmits_in_window: u64,
    /// Retransmissions repairing losses detected in congestion avoidance (not slow start).
    pub retransmits_in_avoidance: u64,
    pub timeouts: u64,
    /// Length of the flow's active part of the window, s.
    pub active_in_window_s: f64,
    /// When a finite transfer completed, s.
    pub completed_s: Option<f64>,
    /// The theory's prediction for this flow, when it is in the theory's domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theory: Option<FlowTheory>,
    /// The model tier's values over the same window (`acclab run --model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<FlowModel>,
}

/// A flow's window means in the model tier's run of the same scenario.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowModel {
    pub throughput_bps: f64,
    pub mean_rtt_s: Option<f64>,
    pub mean_cwnd_bytes: Option<f64>,
    pub mean_accumulation_bytes: Option<f64>,
}

/// A link's window means in the model tier's run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkModel {
    pub utilization: f64,
    pub mean_queue_pkts: f64,
}

/// Predicted equilibrium values of a flow, to set beside the measured ones.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowTheory {
    pub throughput_bps: f64,
    pub rtt_s: f64,
    pub cwnd_bytes: f64,
    pub queueing_delay_s: f64,
    pub base_rtt_s: f64,
}

/// Predicted equilibrium values of a link.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkTheory {
    /// Link price: the equilibrium queueing delay, s.
    pub price_s: f64,
    pub queue_pkts: f64,
    pub utilization: f64,
}

/// What the theory tier said about the run as a whole.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TheorySummary {
    pub model: String,
    /// Flows outside the theory's domain, with the reason.
    pub outside: Vec<(String, String)>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub id: String,
    pub rate_bps: u64,
    pub utilization: f64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: u64,
    pub drops: u64,
    pub marks: u64,
    pub drops_in_window: u64,
    pub marks_in_window: u64,
    /// Packets the link lost at random (its `loss` probability), not counted in `drops`.
    pub random_losses: u64,
    pub transmitted_packets: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theory: Option<LinkTheory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<LinkModel>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Fairness {
    /// Jain's index over the throughputs of flows active in the window.
    pub jain: Option<f64>,
    /// 004 eq. (2) against the max-min fair allocation (filled in by the theory tier).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_max_min: Option<f64>,
}

/// Jain's fairness index (Σx)² / (n·Σx²); `None` for no flows or all-zero rates.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && s2 > 0.0).then(|| s * s / (xs.len() as f64 * s2))
}

impl Summary {
    /// Puts a model run's window means (its own summary, of the same scenario) beside this
    /// run's values.
    pub fn attach_model(&mut self, model: &Summary) {
        for (f, m) in self.flows.iter_mut().zip(&model.flows) {
            f.model = Some(FlowModel {
                throughput_bps: m.throughput_bps,
                mean_rtt_s: m.mean_rtt_s,
                mean_cwnd_bytes: m.mean_cwnd_bytes,
                mean_accumulation_bytes: m.mean_accumulation_bytes,
            });
        }
        for (l, m) in self.links.iter_mut().zip(&model.links) {
            l.model = Some(LinkModel {
                utilization: m.utilization,
                mean_queue_pkts: m.mean_queue_pkts,
            });
        }
    }

    /// Computes the summary of a finished run.
    pub fn of(sim: &Simulator, wall_time_s: f64) -> Summary {
        let sc = sim.scenario();
        let m: &Monitor = sim.monitor();
        let net = sim.network();
        let (from, to) = sc.output.window;
        let w0 = m.win_times[0].unwrap_or(from);
        let w1 = m.win_times[1].unwrap_or(to);
        let window_ns = (w1 - w0).0.max(1) as f64;
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut active_rates = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let (tx, rx) = net.endpoint_stats(i);
            let (start, stop) = net.flow_times(i);
            let end = [Some(w1), stop, tx.completed_at]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(w1);
            let begin = w0.max(start);
            let active = end - begin;
            let (a, b) = (m.win_flows[0][i], m.win_flows[1][i]);
            let throughput = acclab_core::Rate::of(b.delivered - a.delivered, active);
            if active.0 > 0 {
                active_rates.push(throughput);
            }
            let rtt_n = b.rtt_samples - a.rtt_samples;
            flows.push(FlowSummary {
                id: f.id.clone(),
                kind: f.scheme.kind().to_string(),
                src: sc.nodes[f.src.0 as usize].clone(),
                dst: sc.nodes[f.dst.0 as usize].clone(),
                throughput_bps: throughput,
                sent_bytes: tx.sent_bytes,
                delivered_bytes: rx.delivered_bytes,
                lost_packets: m.lost_data(i),
                mean_rtt_s: (rtt_n > 0)
                    .then(|| (b.rtt_sum_ns - a.rtt_sum_ns) as f64 / rtt_n as f64 / 1e9),
                mean_cwnd_bytes: m.mean_cwnd[i].get(),
                mean_accumulation_bytes: m.mean_accumulation[i].get(),
                base_rtt_s: tx.base_rtt.map(|d| d.as_secs_f64()),
                retransmits: tx.retransmits,
                retransmits_in_window: b.retransmits - a.retransmits,
                retransmits_in_avoidance: tx.retransmits_in_avoidance,
                timeouts: tx.timeouts,
                active_in_window_s: active.as_secs_f64(),
                completed_s: tx.completed_at.map(|t| t.as_secs_f64()),
                theory: None,
                model: None,
            });
        }
        let links = sc
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (a, b) = (m.win_links[0][i], m.win_links[1][i]);
                let st = net.queue(LinkId(i as u32)).stats();
                LinkSummary {
                    id: l.name.clone(),
                    rate_bps: l.rate.bps(),
                    utilization: (b.busy_ns - a.busy_ns) as f64 / window_ns,
                    mean_queue_pkts: (b.queue_area - a.queue_area) as f64 / window_ns,
                    max_queue_pkts: m.window_max_queue[i],
                    drops: st.dropped_packets,
                    marks: st.marked_packets,
                    drops_in_window: b.drops - a.drops,
                    marks_in_window: b.marks - a.marks,
                    random_losses: m.random_losses(i),
                    transmitted_packets: st.dequeued_packets,
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
            flows,
            links,
            fairness: Fairness {
                jain: jain(&active_rates),
                weighted_max_min: None,
            },
            theory: None,
            live: None,
        }
    }
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or(String::new(), |v| v.to_string())
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it, then renamed
/// (a full disk leaves no truncated file under the real name).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Writes `summary`, pretty, as `dir`/summary.json, whole or not at all.
pub fn write_summary(dir: &Path, summary: &Summary) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("summary.json"), (json + "\n").as_bytes())
}

/// Writes `summary.json`, `flows.csv` and `links.csv` into `dir` (which must exist). When the
/// run streamed its samples ([`CsvSamples`]), the two CSV files are already there.
pub fn write_files(dir: &Path, sim: &Simulator, summary: &Summary) -> std::io::Result<()> {
    write_summary(dir, summary)?;
    if sim.monitor().streams() {
        return Ok(());
    }
    let sc = sim.scenario();
    let m = sim.monitor();
    let mut w = csv::Writer::from_path(dir.join("flows.csv"))?;
    w.write_record(FLOW_COLUMNS)?;
    for s in &m.flow_samples {
        w.write_record(flow_record(s, &sc.flows[s.flow as usize].id))?;
    }
    w.flush()?;
    write_links_csv(dir, sim)
}

/// Writes `links.csv` alone into `dir` (the live router, which has no flow results of its own).
pub fn write_links_csv(dir: &Path, sim: &Simulator) -> std::io::Result<()> {
    let sc = sim.scenario();
    let m = sim.monitor();
    let mut w = csv::Writer::from_path(dir.join("links.csv"))?;
    w.write_record(link_columns(&m.aqm_columns))?;
    for s in &m.link_samples {
        w.write_record(link_record(s, &sc.links[s.link as usize].name))?;
    }
    w.flush()
}

/// The columns of `flows.csv`.
const FLOW_COLUMNS: [&str; 8] = [
    "time_s",
    "flow",
    "throughput_bps",
    "send_rate_bps",
    "cwnd_bytes",
    "srtt_s",
    "accumulation_bytes",
    "lost_packets",
];

/// A row of `flows.csv`.
fn flow_record(s: &FlowSample, id: &str) -> [String; 8] {
    [
        s.t_s.to_string(),
        id.to_string(),
        s.throughput_bps.to_string(),
        s.send_rate_bps.to_string(),
        opt(s.cwnd_bytes),
        opt(s.srtt_s),
        opt(s.accumulation_bytes),
        s.lost_packets.to_string(),
    ]
}

/// The columns of `links.csv` with these AQM columns.
fn link_columns(aqm_columns: &[String]) -> Vec<String> {
    let mut header: Vec<String> = [
        "time_s",
        "link",
        "queue_pkts",
        "queue_bytes",
        "utilization",
        "drops",
        "marks",
    ]
    .map(String::from)
    .to_vec();
    header.extend(aqm_columns.iter().cloned());
    header
}

/// A row of `links.csv`.
fn link_record(s: &LinkSample, name: &str) -> Vec<String> {
    let mut row = vec![
        s.t_s.to_string(),
        name.to_string(),
        s.queue_pkts.to_string(),
        s.queue_bytes.to_string(),
        s.utilization.to_string(),
        s.drops.to_string(),
        s.marks.to_string(),
    ];
    row.extend(s.aqm.iter().map(|v| opt(*v)));
    row
}

/// Streams a run's files into `dir` as it goes: `flows.csv` and `links.csv` (samples kept in
/// memory too only if `keep`), and the packet trace if the scenario asks for one. Call before
/// running `sim`; [`Simulator::finish_samples`] completes them.
pub fn stream_outputs(dir: &Path, sim: &mut Simulator, keep: bool) -> std::io::Result<()> {
    let samples = CsvSamples::create(dir, sim)?;
    sim.stream_samples(Box::new(samples), keep);
    if let Some(t) = crate::trace::Tracer::create(dir, sim.scenario())? {
        sim.observe(Box::new(t));
    }
    Ok(())
}

/// `flows.csv` and `links.csv` being written: as `flows.csv.part` and `links.csv.part`, which
/// get their names only when [`SampleFiles::finish`] has written everything, so that a run that
/// dies leaves no file that looks complete. The first write error is kept and reported by
/// `finish`. The simulator's [`CsvSamples`] and the model tier write through it.
pub struct SampleFiles {
    dir: std::path::PathBuf,
    flows: csv::Writer<std::fs::File>,
    links: csv::Writer<std::fs::File>,
    error: Option<csv::Error>,
}

impl SampleFiles {
    /// Opens both files in `dir` with their headers (`aqm_columns` after the links' own).
    pub fn create(dir: &Path, aqm_columns: &[String]) -> std::io::Result<SampleFiles> {
        let mut flows = csv::Writer::from_path(dir.join("flows.csv.part"))?;
        flows.write_record(FLOW_COLUMNS)?;
        let mut links = csv::Writer::from_path(dir.join("links.csv.part"))?;
        links.write_record(link_columns(aqm_columns))?;
        Ok(SampleFiles {
            dir: dir.to_path_buf(),
            flows,
            links,
            error: None,
        })
    }

    fn note(&mut self, r: csv::Result<()>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    /// A row of flows.csv.
    pub fn flow<I: IntoIterator<Item = String>>(&mut self, row: I) {
        if self.error.is_none() {
            let r = self.flows.write_record(row);
            self.note(r);
        }
    }

    /// A row of links.csv.
    pub fn link<I: IntoIterator<Item = String>>(&mut self, row: I) {
        if self.error.is_none() {
            let r = self.links.write_record(row);
            self.note(r);
        }
    }

    /// Flushes both files and gives them their names.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        self.flows.flush()?;
        self.links.flush()?;
        for f in ["flows.csv", "links.csv"] {
            std::fs::rename(self.dir.join(format!("{f}.part")), self.dir.join(f))?;
        }
        Ok(())
    }
}

/// `flows.csv` and `links.csv` written as the run goes (a [`SampleSink`]), so that no sample
/// stays in memory.
pub struct CsvSamples {
    files: SampleFiles,
    flow_ids: Vec<String>,
    link_names: Vec<String>,
}

impl CsvSamples {
    /// Opens the two files in `dir` for the run of `sim` (not yet run).
    pub fn create(dir: &Path, sim: &Simulator) -> std::io::Result<CsvSamples> {
        let sc = sim.scenario();
        Ok(CsvSamples {
            files: SampleFiles::create(dir, &sim.monitor().aqm_columns)?,
            flow_ids: sc.flows.iter().map(|f| f.id.clone()).collect(),
            link_names: sc.links.iter().map(|l| l.name.clone()).collect(),
        })
    }
}

impl SampleSink for CsvSamples {
    fn flow(&mut self, s: &FlowSample) {
        self.files
            .flow(flow_record(s, &self.flow_ids[s.flow as usize]));
    }

    fn link(&mut self, s: &LinkSample) {
        self.files
            .link(link_record(s, &self.link_names[s.link as usize]));
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.files.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0]), Some(0.5));
        assert_eq!(jain(&[]), None);
    }
}
