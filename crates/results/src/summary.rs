//! `summary.json` (SPEC §7 contract): the run as a whole, its flows and links over the
//! measurement window, and what the theory and the model tier said beside them. Every tier
//! (packet, model, live) fills in the same summary.
//!
//! Window semantics: throughputs, utilisations and means are over the measurement window; a flow
//! that starts, stops or completes inside the window is averaged over its own active part of it.
//! Counters (`sent_bytes`, `delivered_bytes`, `lost_packets`, `drops`, `marks`) are totals over
//! the whole run; `drops_in_window` gives the window's share.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    /// The run's flows `flows` leaves out: a workload's, by default (`[output]
    /// flow_summaries`); fct.csv and `fct` have them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlisted_flows: u64,
    pub links: Vec<LinkSummary>,
    /// The pools of the shared-buffer switches (`[[shared_buffer]]`), when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_buffers: Vec<SharedBufferSummary>,
    pub fairness: Fairness,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theory: Option<TheorySummary>,
    /// How a live run went: its time scale and what its router and endpoints rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveSummary>,
    /// Flow completion times and slowdowns by size, when the run has finite flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fct: Option<crate::fct::FctSummary>,
    /// Where the run's effective scenario and provenance record are, when it wrote files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::ProvenanceRef>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The live-mode part of `summary.json`. In a live run every time in the file is scenario time:
/// wall-clock time multiplied by `time_scale`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<LiveIpSummary>,
    /// Why the run's numbers may not be the emulated network's (empty when nothing was seen):
    /// see `acclab_live::run::degradation`.
    pub degraded: Vec<String>,
}

/// What live mode's router did with real stacks' IP packets (`acclab_live::ipflows`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WindowSummary {
    pub from_s: f64,
    pub to_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowSummary {
    pub id: String,
    /// The scheme and the end nodes, shared between the flows that have the same (a
    /// workload's million flows hold one copy of each name, not one each).
    pub kind: std::sync::Arc<str>,
    pub src: std::sync::Arc<str>,
    pub dst: std::sync::Arc<str>,
    /// Receiver goodput over the flow's active part of the window, bit/s: data delivered in
    /// order. A repair that fills a hole releases at once the data received behind it (some of
    /// it before the window opened), so this can exceed the path's capacity; `received_bps`
    /// cannot.
    pub throughput_bps: f64,
    /// Data that reached the receiver over the same span, out of order and duplicates
    /// included, bit/s: what the path carried to it.
    pub received_bps: f64,
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
    /// The one-way delay of its data packets (datagrams for CBR) delivered in the window:
    /// mean, p50, p99, RFC 3550 jitter. Absent where no tier measures it (the model tier) or
    /// no packet arrived in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_delay: Option<crate::delay::DelayStats>,
    /// The theory's prediction for this flow, when it is in the theory's domain. (Boxed, as
    /// `model`: absent for nearly every flow of a workload, a million of them.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theory: Option<Box<FlowTheory>>,
    /// The model tier's values over the same window (`acclab run --model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<FlowModel>>,
}

/// A flow's window means in the model tier's run of the same scenario.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowModel {
    pub throughput_bps: f64,
    pub mean_rtt_s: Option<f64>,
    pub mean_cwnd_bytes: Option<f64>,
    pub mean_accumulation_bytes: Option<f64>,
}

/// A link's window means in the model tier's run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkModel {
    pub utilization: f64,
    pub mean_queue_pkts: f64,
}

/// Predicted equilibrium values of a flow, to set beside the measured ones.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowTheory {
    pub throughput_bps: f64,
    pub rtt_s: f64,
    pub cwnd_bytes: f64,
    pub queueing_delay_s: f64,
    pub base_rtt_s: f64,
}

/// Predicted equilibrium values of a link.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkTheory {
    /// Link price: the equilibrium queueing delay, s.
    pub price_s: f64,
    pub queue_pkts: f64,
    pub utilization: f64,
}

/// What the theory tier said about the run as a whole.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TheorySummary {
    pub model: String,
    /// Flows outside the theory's domain, with the reason.
    pub outside: Vec<(String, std::sync::Arc<str>)>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    /// How long the packets it transmitted in the window waited in its queue (their sojourn:
    /// arrival at the queue to the start of their transmission): mean, median, 95th and 99th
    /// percentiles, and how many did not wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queueing_delay: Option<crate::delay::QueueingStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theory: Option<LinkTheory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<LinkModel>,
}

/// A shared-buffer switch's pool over the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SharedBufferSummary {
    pub node: String,
    pub size_bytes: u64,
    pub alpha: f64,
    /// The most its output queues held together.
    pub peak_bytes: u64,
    /// What they hold at the end of the run.
    pub end_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fairness {
    /// Jain's index over the throughputs of flows active in the window.
    pub jain: Option<f64>,
    /// 004 eq. (2) against the max-min fair allocation (filled in by the theory tier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
            f.model = Some(Box::new(FlowModel {
                throughput_bps: m.throughput_bps,
                mean_rtt_s: m.mean_rtt_s,
                mean_cwnd_bytes: m.mean_cwnd_bytes,
                mean_accumulation_bytes: m.mean_accumulation_bytes,
            }));
        }
        for (l, m) in self.links.iter_mut().zip(&model.links) {
            l.model = Some(LinkModel {
                utilization: m.utilization,
                mean_queue_pkts: m.mean_queue_pkts,
            });
        }
    }
}

/// Writes `summary`, pretty, as `dir`/summary.json, whole or not at all.
pub fn write_summary(dir: &Path, summary: &Summary) -> std::io::Result<()> {
    crate::files::write_atomic_with(&dir.join("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, summary).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
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
