//! What a run will cost, estimated from the scenario before it starts: events, output rows,
//! memory and wall time. `acclab check` prints it; `acclab run` prints it when a run is large and
//! refuses one whose memory estimate exceeds what the machine has free (issue 21 §1).
//!
//! The estimate is an upper bound of the usual case, not a promise:
//! - Each flow sends at most at its path's slowest link (a CBR flow at its rate, if lower); each
//!   link carries at most its rate. Every data packet costs at most two events per hop (arrival
//!   and end of transmission; one on a tail-drop link, whose departures are fixed at enqueue),
//!   and its ACK about as many on the way back: events ≤ 4 × Σ over links of the packets they
//!   carry. The wall-time estimate divides that bound by the events per second of the two-event
//!   engine, so it stays an upper bound on tail-drop links too.
//! - Memory: every buffer full (a limit in bytes counts packets of the scenario's size; an
//!   unlimited buffer counts one second of its link's rate) and every link's pipe full
//!   (rate × delay), at the simulator's 64 bytes per packet, plus the per-flow, per-link and
//!   per-web-user state.
//! - Output: one flows.csv row per flow and one links.csv row per link every sample interval.

use acclab_core::config::SchemeConfig;
use acclab_core::{Limit, Packet};
use acclab_scenario::Scenario;
use serde::Serialize;

/// Events per wall second this simulator sustains on the machines it is benchmarked on (a
/// 2-core machine: 11–18 M; `acclab bench`), for the wall-time estimate.
const EVENTS_PER_SECOND: f64 = 15e6;
/// Bytes of state per flow (endpoints, scoreboard, monitor), per link and per web user.
const FLOW_BYTES: f64 = 8192.0;
const LINK_BYTES: f64 = 2048.0;
const WEB_USER_BYTES: f64 = 512.0;
/// Bytes per output row (flows.csv and links.csv rows are 40–120 characters).
const ROW_BYTES: f64 = 80.0;

/// The estimate.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cost {
    pub events: f64,
    pub wall_s: f64,
    pub output_rows: f64,
    pub output_bytes: f64,
    pub memory_bytes: f64,
}

impl Cost {
    /// Whether the run is big enough to be worth saying so before it starts.
    pub fn is_large(&self) -> bool {
        self.wall_s > 60.0 || self.memory_bytes > 1e9 || self.output_bytes > 1e9
    }
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "about {} events (~{} wall), {} output rows ({}), {} of memory at most",
            count(self.events),
            seconds(self.wall_s),
            count(self.output_rows),
            bytes(self.output_bytes),
            bytes(self.memory_bytes)
        )
    }
}

/// A count for people: `1.5 M`.
pub fn count(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.1} G", x / 1e9),
        x if x >= 1e6 => format!("{:.1} M", x / 1e6),
        x if x >= 1e3 => format!("{:.1} k", x / 1e3),
        x => format!("{x:.0}"),
    }
}

fn bytes(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.1} GB", x / 1e9),
        x if x >= 1e6 => format!("{:.1} MB", x / 1e6),
        x => format!("{:.0} kB", x / 1e3),
    }
}

/// A duration for people.
pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 3600.0 => format!("{:.1} h", s / 3600.0),
        s if s >= 60.0 => format!("{:.1} min", s / 60.0),
        s => format!("{s:.1} s"),
    }
}

/// Estimates what running `sc` costs.
pub fn estimate(sc: &Scenario) -> Cost {
    let duration = sc.duration.as_secs_f64();
    let bits = 8.0 * sc.packet_size as f64;
    // Each link's load: what its flows can send, at most its rate.
    let mut offered = vec![0.0; sc.links.len()];
    let mut flow_state = 0.0;
    for f in &sc.flows {
        let path_rate = f
            .forward
            .iter()
            .map(|l| sc.links[l.0 as usize].rate.as_f64())
            .fold(f64::INFINITY, f64::min);
        let send = match &f.scheme {
            SchemeConfig::Cbr(p) => path_rate.min(p.rate.as_f64()),
            _ => path_rate,
        };
        for l in &f.forward {
            offered[l.0 as usize] += send;
        }
        flow_state += FLOW_BYTES
            + match &f.scheme {
                SchemeConfig::Web(w) => w.users as f64 * WEB_USER_BYTES,
                _ => 0.0,
            };
    }
    let mut packets = 0.0;
    let mut held = 0.0;
    for (l, load) in sc.links.iter().zip(&offered) {
        let r = l.rate.as_f64();
        packets += load.min(r) * duration / bits;
        let limit_pkts = |lim: Limit| match lim {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / sc.packet_size as f64,
            Limit::Unlimited => r / bits,
        };
        held += l.queue.limits().into_iter().map(limit_pkts).sum::<f64>();
        held += r * l.delay.as_secs_f64() / bits;
    }
    let events = 4.0 * packets;
    let rows = (sc.flows.len() + sc.links.len()) as f64 * duration
        / sc.output.sample_interval.as_secs_f64();
    Cost {
        events,
        wall_s: events / EVENTS_PER_SECOND,
        output_rows: rows,
        output_bytes: rows * ROW_BYTES,
        // A packet in a pipe, or queued at a link that departs at enqueue, takes a slab slot;
        // one held by a discipline takes a packet: the larger, for an upper bound.
        memory_bytes: held * crate::pipes::SLOT_BYTES.max(std::mem::size_of::<Packet>()) as f64
            + flow_state
            + sc.links.len() as f64 * LINK_BYTES,
    }
}

/// The memory this machine has available now (Linux's MemAvailable), if it says.
pub fn available_memory() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMBBELL: &str = r#"
name = "c"
duration = "10s"
[[link]]
between = ["a", "b"]
rate = "100Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "1000pkt" }
[[flow]]
count = 4
id = "f{i}"
kind = "reno"
from = "a"
to = "b"
"#;

    #[test]
    fn a_busy_bottleneck_costs_four_events_per_packet() {
        let sc = acclab_scenario::parse(DUMBBELL, "c.toml").unwrap();
        let c = estimate(&sc);
        // 100 Mb/s of 1000-byte packets for 10 s: 125,000 packets, 4 events each.
        assert!((c.events - 4.0 * 125_000.0).abs() < 1.0, "{c:?}");
        // 6 entities (4 flows, 2 links) × 100 samples.
        assert_eq!(c.output_rows, 600.0);
        // Buffers: 2 × 1000 packets, plus the pipes' 125 packets each way.
        let pkts = 2000.0 + 2.0 * 125.0;
        assert!(c.memory_bytes >= pkts * 64.0, "{c:?}");
        assert!(!c.is_large());
    }

    #[test]
    fn fine_sampling_and_long_runs_show_in_the_estimate() {
        let long = DUMBBELL.replace("\"10s\"", "\"36000s\"");
        let c = estimate(&acclab_scenario::parse(&long, "c.toml").unwrap());
        assert!(c.is_large(), "{c}");
        assert!(c.to_string().contains("G events") || c.to_string().contains("M events"));
    }
}
