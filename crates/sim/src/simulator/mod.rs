//! The packet-level discrete-event simulator: the driver that moves core packets between core
//! endpoints through core queue disciplines.
//!
//! Design, after htsim:
//! - A link is a queue discipline, a transmitter and a propagation pipe. Each link has at most
//!   one pending `TxDone` (its head packet's serialisation) and one pending `Arrive` (the first
//!   packet in its pipe), however many packets it holds, so the heap stays small.
//! - On a single-band tail-drop link whose rate and delay stay (nearly every link of most
//!   scenarios; a step-marking `step-ecn` link too, every fabric link of a DCTCP study;
//!   [`Link::departs_at_enqueue`]) a packet's departure is fixed when it is
//!   enqueued — it starts when the packet ahead is done, or at once — so it goes into the pipe
//!   then, with its arrival time at the far end, and the link needs no `TxDone`: one event per
//!   hop instead of two. Its queue is brought up to date (packets whose transmission has
//!   started taken out, each transmission reported at its start) whenever it is read: before
//!   an arrival at the link, a sample, the window's edges and the end. The tie rule this
//!   implies: on such a link, a transmission that starts at time t is taken from the queue
//!   before anything else that happens at t is let in (elsewhere equal-time events follow the
//!   event queue's tie rule, `events.rs`).
//! - Packets are `Copy` values stored inline in queues (ring buffers that keep their capacity)
//!   and, while they propagate, in one slab shared by every link's pipe whose freed slots are
//!   reused first (`pipes.rs`), so the hot path never allocates and writes where it just read.
//! - Endpoint timers are lazy: an endpoint's heap entry is replaced only when its deadline moves
//!   earlier; a deadline that moves later (the RTO, on every ACK) costs nothing until the old
//!   entry fires and re-arms. Cancelled entries are recognised by a generation number.
//! - Every route is in one table: forward packets follow their flow's `forward`, ACKs and
//!   reverse control packets its `reverse`. A packet's pipe slot keeps where its route
//!   begins, so that a hop reads the table and nothing of the flow; what an endpoint's packet
//!   touches of its flow (where its routes begin, the packet counts, the endpoints' timers)
//!   is one cache line, the flow's [`Books`].
//!
//! Where each part is: `build.rs` makes a simulator from a scenario; `engine.rs` is the event
//! loop and the hot path (dispatch, endpoints' timers, a packet queued, serialised, propagated,
//! delivered); `link.rs` a link and its discipline; `books.rs` what is kept per flow;
//! `observers.rs` what observers are told and may read.

use acclab_core::queue::shared_buffer::SharedBuffer;
use acclab_core::queue::Dropped;
use acclab_core::transport::EndpointStats;
use acclab_core::{FlowId, Packet, Time};
use endpoints::Endpoints;

use crate::events::{Entities, Entity, EventQueue};
use crate::monitor::Monitor;
use crate::observe::{NetworkView, Observer};
use crate::pipes::Slab;
use crate::routes::Routes;
use crate::telemetry::IntStore;
use acclab_scenario::Scenario;
use books::{FlowTimes, Ledger};
use link::Link;
use observers::{Observers, View};
use std::sync::Arc;

pub use books::PacketCounts;

/// The [`View`] of a simulator `$s`, borrowing only its links, flows and endpoints (so that its
/// observers can be borrowed mutably beside it).
macro_rules! view {
    ($s:expr) => {
        View {
            links: &$s.links,
            flows: &$s.flows,
            endpoints: &$s.endpoints,
        }
    };
}

mod books;
mod build;
mod endpoints;
mod engine;
pub use engine::EventProbe;
mod link;
mod observers;
mod pages;
mod parallel;
mod replay;

pub struct Simulator {
    /// Shared with the partitions' replicas of a parallel run (a workload's scenario holds
    /// every flow, ~0.5 KB each).
    scenario: Arc<Scenario>,
    now: Time,
    end: Time,
    events: EventQueue,
    /// Who schedules, for the event queue's tie rule.
    entities: Entities,
    links: Vec<Link>,
    /// The pools of the shared-buffer switches, in the scenario's order.
    pools: Vec<SharedBuffer>,
    /// The packets in every link's pipe.
    slab: Slab,
    /// Each flow's times.
    flows: FlowTimes,
    /// Each open flow's [`books::Books`] and drop counts.
    ledger: Ledger,
    routes: Routes,
    /// Each flow's endpoints, at their [`EndpointSlot`], and their lives.
    endpoints: Endpoints,
    observers: Observers,
    event_count: u64,
    packet_hops: u64,
    time_went_backwards: bool,
    /// Scratch for the packets a queue drops at its head during one dequeue.
    head_drops: Vec<Dropped>,
    /// The in-band telemetry of the flows that want it (HPCC); `None` in a run without.
    telemetry: Option<Box<IntStore>>,
    /// Told of every event, during `run_probed` only.
    probe: Option<Box<dyn EventProbe>>,
    /// In a partition of a parallel run, what it holds and sends (`parallel.rs`).
    part: Option<Box<parallel::Part>>,
}

impl Simulator {
    /// Builds every link, queue and endpoint of `scenario` and schedules its fixed events.
    /// A flow with a finite transfer has endpoints only from its start until it is done
    /// (`endpoints.rs`).
    pub fn new(scenario: impl Into<Arc<Scenario>>) -> Simulator {
        let scenario = scenario.into();
        let endpoints = Endpoints::of(&scenario);
        Simulator::build(scenario, endpoints)
    }

    /// Runs to the end of the scenario; `progress` is told the simulated time now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time)) {
        self.run_until(self.end, progress);
        self.observers.monitor.samples_over();
        progress(self.end);
    }

    /// Runs to the end as `run` does, telling `probe` of every event before it is handled.
    /// Returns the probe.
    pub fn run_probed<P: EventProbe>(&mut self, probe: P, progress: &mut dyn FnMut(Time)) -> P {
        self.probe = Some(Box::new(probe));
        self.run_until(self.end, progress);
        progress(self.end);
        let probe: Box<dyn std::any::Any> = self.probe.take().expect("the probe stays in place");
        *probe.downcast::<P>().expect("the probe put in place")
    }

    /// Processes every event due no later than `t` (capped at the scenario's end), then sets the
    /// clock to `t`. Live mode calls this with the wall clock; `run` with the end.
    pub fn advance(&mut self, t: Time) {
        self.run_until(t.min(self.end), &mut |_| {});
    }

    /// When the next event is due, if any is pending before the end.
    pub fn next_event_time(&self) -> Option<Time> {
        self.events.peek_time().filter(|&t| t <= self.end)
    }

    /// The scenario's end.
    pub fn end(&self) -> Time {
        self.end
    }

    /// A packet an endpoint outside the simulator sent (live mode) enters its flow's route now.
    /// The caller has checked that `pkt.flow` is a flow of this scenario.
    pub fn inject_external(&mut self, pkt: Packet) {
        self.events.by(Entity::RUN, self.now);
        self.inject(pkt);
    }

    /// When flow `f` starts (its start jitter drawn) and stops.
    pub fn flow_times(&self, f: usize) -> (Time, Option<Time>) {
        self.flows.get(f)
    }

    /// Simulated time now.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.event_count
    }

    /// Whether the event loop ever saw an event earlier than the one before (it must not).
    pub fn time_went_backwards(&self) -> bool {
        self.time_went_backwards
    }

    /// Packets of each flow still inside the network (queued, on the wire or propagating), per
    /// direction, found by walking every link — independent of the injection counters.
    pub fn packets_in_network(&self) -> Vec<[u64; 2]> {
        let mut out = vec![[0u64; 2]; self.flows.len()];
        let mut count = |p: &Packet| out[p.flow.0 as usize][usize::from(!p.kind.is_forward())] += 1;
        for l in &self.links {
            // A link that departs at enqueue holds its queued packets in its pipe.
            if let Some(h) = &l.held {
                h.queue.for_each_packet(&mut count);
                h.transmitting.iter().for_each(&mut count);
            }
            self.slab.iter(&l.pipe).for_each(|(_, p)| count(p));
            for r in l.extra.iter().flat_map(|x| &x.unordered) {
                count(self.slab.packet(r.0 .2));
            }
        }
        out
    }

    /// Endpoints alive now: those of flows without a finite transfer, and of finite ones
    /// started and not yet done.
    pub fn endpoints_alive(&self) -> usize {
        self.endpoints.live()
    }

    /// Telemetry records held by data packets in the network (one per data packet of a flow
    /// that wants them, [`acclab_core::telemetry`]); 0 in a run without such flows.
    pub fn telemetry_in_use(&self) -> usize {
        self.telemetry.as_ref().map_or(0, |t| t.in_use())
    }

    /// Injected / arrived / dropped counts of flow `f`, forward and backward (a retired
    /// flow's as they were at retirement).
    pub fn packet_counts(&self, f: usize) -> [PacketCounts; 2] {
        self.endpoints
            .retired_counts(FlowId(f as u32))
            .unwrap_or_else(|| self.ledger.counts(f))
    }

    /// Largest backlog each link's queue ever held, (packets, bytes), as the monitor saw it.
    pub fn peak_backlogs(&self) -> Vec<(u64, u64)> {
        self.observers.monitor.peak_backlogs()
    }

    /// The pools of the shared-buffer switches, in the order of the scenario's
    /// `shared_buffers`.
    pub fn shared_buffers(&self) -> &[SharedBuffer] {
        &self.pools
    }

    /// The sender's and receiver's statistics of flow `f`.
    pub fn endpoint_stats(&self, f: usize) -> (EndpointStats, EndpointStats) {
        self.network().endpoint_stats(f)
    }

    /// What observers read of the network: queues, endpoint statistics, flow times.
    pub fn network(&self) -> impl NetworkView + '_ {
        view!(self)
    }

    /// Adds an observer: from now on it is told of everything the monitor is told of (after
    /// the monitor), and finished with it.
    pub fn observe(&mut self, o: Box<dyn Observer>) {
        self.observers.extra.push(o);
    }

    /// Packets forwarded over one hop (transmissions completed), so far.
    pub fn packet_hops(&self) -> u64 {
        // A link that departs at enqueue counts a hop when the transmission starts (`start_due`);
        // its last may not be done yet.
        let now = self.now;
        self.packet_hops
            - self
                .links
                .iter()
                .filter(|l| l.eager() && l.started_done(&self.slab) > now)
                .count() as u64
    }

    /// Streams every sample to `sink` as it is taken, keeping them in memory too only if
    /// `keep` (plots and charts need them there). Call before [`run`](Self::run), then
    /// [`finish_samples`](Self::finish_samples) after it.
    pub fn stream_samples(
        &mut self,
        sink: Box<dyn acclab_results::samples::SampleSink>,
        keep: bool,
    ) {
        self.observers.monitor.stream_to(sink, keep);
    }

    /// Ends the run's outputs: the sample stream and every observer added (flushes and
    /// closes their files); the first error, if any.
    pub fn finish_samples(&mut self) -> std::io::Result<()> {
        self.observers.finish()
    }

    pub fn monitor(&self) -> &Monitor {
        &self.observers.monitor
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The scenario, shared (what the run's outputs read to the end without copying it).
    pub fn shared_scenario(&self) -> Arc<Scenario> {
        self.scenario.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which links compute departures at enqueue: single-band tail drop (lossy or not) whose
    /// rate and delay stay; not another discipline, a priority tail drop, or a link an event
    /// changes.
    #[test]
    fn departures_are_computed_at_enqueue_on_fixed_single_band_tail_drop_links() {
        let sc = acclab_scenario::parse(
            r#"
name = "links"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
[[link]]
between = ["b", "c"]
rate = "10Mbps"
delay = "1ms"
loss = 0.01
queue = { kind = "red", limit = "40pkt", min_th = "5pkt", max_th = "15pkt" }
[[link]]
between = ["c", "d"]
rate = "10Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = "40pkt", priority = true }
[[link]]
between = ["d", "e"]
rate = "10Mbps"
delay = "1ms"
[[link]]
between = ["e", "f"]
rate = "10Mbps"
delay = "1ms"
loss = 0.01
[[flow]]
id = "f"
kind = "reno"
from = "a"
to = "f"
[[event]]
at = "0.5s"
set_rate = { link = "d->e", rate = "5Mbps" }
"#,
            "links.toml",
        )
        .unwrap();
        let sim = Simulator::new(sc);
        let names: Vec<_> = sim.scenario.links.iter().map(|l| l.name.as_str()).collect();
        let eager: Vec<_> = names
            .iter()
            .zip(&sim.links)
            .filter(|(_, l)| l.eager())
            .map(|(n, _)| *n)
            .collect();
        // Reverse links (b->a, …) are plain tail drop too.
        assert!(
            eager.contains(&"a->b") && eager.contains(&"e->f"),
            "{eager:?}"
        );
        for n in ["b->c", "c->d", "d->e"] {
            assert!(!eager.contains(&n), "{n} in {eager:?}");
        }
    }

    /// A queue whose transmissions take longer than `Link::queued_for` can keep (2^32 ns,
    /// 4.3 s): the first queued packet's start is read from its slot then, and the link still
    /// sends back to back, one packet a transmission time from the first arrival on.
    #[test]
    fn a_queue_of_more_than_four_seconds_sends_back_to_back() {
        let sc = acclab_scenario::parse(
            r#"
name = "slow"
duration = "30s"
[defaults]
packet_size = "1000B"
[[link]]
between = ["a", "r"]
rate = "10Gbps"
delay = "0ms"
[[link]]
from = "r"
to = "b"
rate = "10kbps"
delay = "0ms"
queue = { kind = "droptail", limit = "100pkt" }
[[link]]
from = "b"
to = "r"
rate = "10Gbps"
delay = "0ms"
[[flow]]
id = "f"
kind = "cbr"
from = "a"
to = "b"
params = { rate = "100kbps" }
"#,
            "slow.toml",
        )
        .unwrap();
        let mut sim = Simulator::new(sc);
        let l = sim
            .scenario
            .links
            .iter()
            .position(|l| l.name == "r->b")
            .unwrap();
        assert!(sim.links[l].eager());
        let (mut unknown, mut known_long) = (0, 0);
        for ms in (100..=30_000).step_by(100) {
            sim.advance(Time(ms * 1_000_000));
            let link = &sim.links[l];
            if link.pipe.has_queued() {
                match link.queued_for {
                    Link::UNKNOWN => unknown += 1,
                    q if q > 1_000_000_000 => known_long += 1,
                    _ => {}
                }
            }
        }
        // 0.8 s a packet: the queue holds more than 4.3 s of them within a second, and keeps
        // between one and four seconds' worth for a moment after each of the first packets.
        assert!(unknown > 200 && known_long > 0, "{unknown} {known_long}");
        let s = crate::output::summary(&sim, 0.0);
        let sent = s.links.iter().find(|x| x.id == "r->b").unwrap();
        // The first packet arrives within microseconds of the start; a transmission is counted
        // when it starts: at 0.8 s intervals, 38 by 30 s.
        assert_eq!(sent.transmitted_packets, 38, "{sent:?}");
    }
}
