//! The packet-level discrete-event simulator: the driver that moves core packets between core
//! endpoints through core queue disciplines.
//!
//! Design, after htsim:
//! - A link is a queue discipline, a transmitter and a propagation pipe. Each link has at most
//!   one pending `TxDone` (its head packet's serialisation) and one pending `Arrive` (the first
//!   packet in its pipe), however many packets it holds, so the heap stays small.
//! - Packets are `Copy` values stored inline in queues and pipes (ring buffers that keep their
//!   capacity), so the hot path never allocates.
//! - Endpoint timers are lazy: an endpoint's heap entry is replaced only when its deadline moves
//!   earlier; a deadline that moves later (the RTO, on every ACK) costs nothing until the old
//!   entry fires and re-arms. Cancelled entries are recognised by a generation number.
//! - Flows reach their packets' routes by index: forward packets follow `forward`, ACKs and
//!   reverse control packets follow `reverse`.

use std::collections::VecDeque;

use acclab_core::config::{FlowContext, QueueContext};
use acclab_core::queue::QueueDiscipline;
use acclab_core::transport::{Endpoint, EndpointSlot};
use acclab_core::{rng, Duration, FlowId, Packet, Rate, Time};
use rand::RngExt;

use crate::events::{Event, EventQueue};
use crate::monitor::Monitor;
use crate::observe::{FlowProbe, LinkProbe};
use acclab_scenario::{EventAction, LinkId, Scenario};

/// One unidirectional link.
pub(crate) struct Link {
    pub rate: Rate,
    pub delay: Duration,
    pub queue: Box<dyn QueueDiscipline>,
    /// Random loss probability and its stream (None when the link is lossless).
    loss: Option<(f64, rng::Rng)>,
    /// Packets lost at random.
    pub random_losses: u64,
    /// The packet being serialised and when it started.
    transmitting: Option<(Packet, Time)>,
    /// Packets propagating, with their arrival times (non-decreasing).
    pipe: VecDeque<(Time, Packet)>,
    /// Serialisation time of finished packets, ns.
    busy_done: u64,
    /// ∫ queue length (packets) dt in packet·ns, up to `area_at`.
    queue_area: u128,
    area_at: Time,
    /// Largest backlog over the whole run, packets and bytes (for invariant checks).
    pub peak_backlog: (u64, u64),
    /// Largest backlog in packets since the measurement window opened.
    pub window_max_pkts: u64,
}

impl LinkProbe for Link {
    fn busy_ns(&self, now: Time) -> u64 {
        self.busy_done + self.transmitting.map_or(0, |(_, t)| (now - t).0)
    }

    fn queue_area(&self, now: Time) -> u128 {
        self.queue_area + self.queue.backlog().packets as u128 * (now - self.area_at).0 as u128
    }

    fn queue(&self) -> &dyn QueueDiscipline {
        &*self.queue
    }

    fn window_max_pkts(&self) -> u64 {
        self.window_max_pkts
    }
}

impl FlowProbe for FlowState {
    fn start(&self) -> Time {
        self.start
    }

    fn stop(&self) -> Option<Time> {
        self.stop
    }

    fn dropped_data(&self) -> u64 {
        self.counts[0].dropped_data
    }
}

impl Link {
    fn account_queue(&mut self, now: Time) {
        self.queue_area = self.queue_area(now);
        self.area_at = now;
    }

    fn note_backlog(&mut self) {
        let b = self.queue.backlog();
        self.peak_backlog = (
            self.peak_backlog.0.max(b.packets),
            self.peak_backlog.1.max(b.bytes),
        );
        self.window_max_pkts = self.window_max_pkts.max(b.packets);
    }
}

/// Packet counts of one flow in one direction, for conservation checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    pub injected: u64,
    pub arrived: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
    /// Dropped data packets (control packets and ACKs excluded).
    pub dropped_data: u64,
}

pub(crate) struct FlowState {
    pub forward: Box<[LinkId]>,
    pub reverse: Box<[LinkId]>,
    pub start: Time,
    pub stop: Option<Time>,
    /// [0] forward packets (data, OB, IB), [1] backward packets (ACKs, reverse control).
    pub counts: [PacketCounts; 2],
}

#[derive(Clone, Copy, Default)]
struct TimerSlot {
    armed: Option<Time>,
    generation: u32,
}

/// The sender and receiver of every flow of `scenario`, built from their scheme configurations:
/// `[sender 0, receiver 0, sender 1, …]`.
pub fn build_endpoints(scenario: &Scenario) -> Vec<Box<dyn Endpoint>> {
    let mut endpoints: Vec<Box<dyn Endpoint>> =
        Vec::with_capacity(EndpointSlot::count(scenario.flows.len()));
    for (i, f) in scenario.flows.iter().enumerate() {
        let (tx, rx) = f.scheme.build(&FlowContext {
            flow: FlowId(i as u32),
            packet_size: scenario.packet_size,
            ack_size: scenario.ack_size,
            seed: scenario.seed,
            name: f.id.clone(),
        });
        endpoints.push(tx);
        endpoints.push(rx);
    }
    endpoints
}

/// When flow `i` of `scenario` starts (its start jitter drawn from the run's seed) and stops.
pub fn flow_times(scenario: &Scenario, i: usize) -> (Time, Option<Time>) {
    let f = &scenario.flows[i];
    let jitter = if f.start_jitter.0 > 0 {
        let mut r = rng::stream(scenario.seed, &format!("flow:{}:start", f.id));
        Duration(r.random_range(0..f.start_jitter.0))
    } else {
        Duration::ZERO
    };
    (f.start + jitter, f.stop)
}

/// A simulation in progress.
pub struct Simulator {
    pub(crate) scenario: Scenario,
    pub(crate) now: Time,
    end: Time,
    events: EventQueue,
    pub(crate) links: Vec<Link>,
    pub(crate) flows: Vec<FlowState>,
    /// Endpoint 2f is flow f's sender, 2f+1 its receiver.
    pub(crate) endpoints: Vec<Box<dyn Endpoint>>,
    timers: Vec<TimerSlot>,
    pub(crate) monitor: Monitor,
    pub(crate) event_count: u64,
    pub(crate) packet_hops: u64,
    time_went_backwards: bool,
    /// Scratch for the packets a queue drops at its head during one dequeue.
    head_drops: Vec<acclab_core::queue::Dropped>,
}

impl Simulator {
    /// Builds every link, queue and endpoint of `scenario` and schedules its fixed events.
    pub fn new(scenario: Scenario) -> Simulator {
        let endpoints = build_endpoints(&scenario);
        Simulator::with_endpoints(scenario, endpoints)
    }

    /// Like [`Simulator::new`], with the endpoints given, each at its [`EndpointSlot`] (flow
    /// f's sender, then its receiver). Live mode's router passes stand-ins here for endpoints
    /// that run elsewhere, behind sockets.
    pub fn with_endpoints(scenario: Scenario, endpoints: Vec<Box<dyn Endpoint>>) -> Simulator {
        assert_eq!(
            endpoints.len(),
            EndpointSlot::count(scenario.flows.len()),
            "two endpoints per flow"
        );
        let seed = scenario.seed;
        let flow_classes: std::sync::Arc<[String]> =
            scenario.flows.iter().map(|f| f.class.clone()).collect();
        let links: Vec<Link> = scenario
            .links
            .iter()
            .map(|l| Link {
                rate: l.rate,
                delay: l.delay,
                queue: l.queue.build(&QueueContext {
                    rate: l.rate,
                    seed,
                    name: format!("link:{}", l.name),
                    flow_classes: flow_classes.clone(),
                    packet_size: scenario.packet_size,
                }),
                loss: (l.loss > 0.0)
                    .then(|| (l.loss, rng::stream(seed, &format!("link:{}:loss", l.name)))),
                random_losses: 0,
                transmitting: None,
                pipe: VecDeque::new(),
                busy_done: 0,
                queue_area: 0,
                area_at: Time::ZERO,
                peak_backlog: (0, 0),
                window_max_pkts: 0,
            })
            .collect();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        let mut events = EventQueue::default();
        for (i, f) in scenario.flows.iter().enumerate() {
            let (start, _) = flow_times(&scenario, i);
            events.schedule(start, Event::FlowStart(i as u32));
            if let Some(stop) = f.stop {
                events.schedule(stop.max(start), Event::FlowStop(i as u32));
            }
            flows.push(FlowState {
                forward: f.forward.clone().into(),
                reverse: f.reverse.clone().into(),
                start,
                stop: f.stop,
                counts: Default::default(),
            });
        }
        for (i, e) in scenario.events.iter().enumerate() {
            events.schedule(e.at, Event::Scheduled(i as u32));
        }
        let (from, to) = scenario.output.window;
        events.schedule(from, Event::WindowStart);
        events.schedule(to, Event::WindowEnd);
        events.schedule(Time::ZERO + scenario.output.sample_interval, Event::Sample);
        let timers = vec![TimerSlot::default(); endpoints.len()];
        let monitor = Monitor::new(&scenario, &links);
        Simulator {
            end: Time(scenario.duration.0),
            scenario,
            now: Time::ZERO,
            events,
            links,
            flows,
            endpoints,
            timers,
            monitor,
            event_count: 0,
            packet_hops: 0,
            time_went_backwards: false,
            head_drops: Vec::new(),
        }
    }

    /// Runs to the end of the scenario; `progress` is told the simulated time now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time)) {
        self.run_until(self.end, progress);
        progress(self.end);
    }

    /// Processes every event due no later than `t` (capped at the scenario's end), then sets the
    /// clock to `t`. Live mode calls this with the wall clock; `run` with the end.
    pub fn advance(&mut self, t: Time) {
        self.run_until(t.min(self.end), &mut |_| {});
    }

    fn run_until(&mut self, limit: Time, progress: &mut dyn FnMut(Time)) {
        while let Some((t, ev)) = self.events.pop_until(limit) {
            self.time_went_backwards |= t < self.now;
            self.now = t;
            self.event_count += 1;
            if self.event_count & 0xffff == 0 {
                progress(t);
            }
            self.dispatch(ev);
        }
        self.now = self.now.max(limit);
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
        self.inject(pkt);
    }

    /// When flow `f` starts (its start jitter drawn) and stops.
    pub fn flow_times(&self, f: usize) -> (Time, Option<Time>) {
        (self.flows[f].start, self.flows[f].stop)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => self.tx_done(l as usize),
            Event::Arrive(l) => self.arrive(l as usize),
            Event::Timer {
                endpoint,
                generation,
            } => self.timer(endpoint as usize, generation),
            Event::FlowStart(f) => {
                let now = self.now;
                let e = EndpointSlot::sender(FlowId(f)).index();
                self.endpoints[e].handle_start(now);
                self.service(e);
            }
            Event::FlowStop(f) => {
                let now = self.now;
                let e = EndpointSlot::sender(FlowId(f)).index();
                self.endpoints[e].handle_stop(now);
                self.service(e);
            }
            Event::Scheduled(i) => self.apply_event(i as usize),
            Event::Sample => {
                self.monitor
                    .sample(self.now, &self.links, &self.flows, &self.endpoints);
                let next = self.now + self.scenario.output.sample_interval;
                if next <= self.end {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WindowStart => {
                for l in &mut self.links {
                    l.window_max_pkts = l.queue.backlog().packets;
                }
                self.monitor
                    .window_start(self.now, &self.links, &self.flows, &self.endpoints);
            }
            Event::WindowEnd => {
                self.monitor
                    .window_end(self.now, &self.links, &self.flows, &self.endpoints)
            }
        }
    }

    fn apply_event(&mut self, i: usize) {
        match self.scenario.events[i].action {
            EventAction::SetDelay { link, delay } => self.links[link.0 as usize].delay = delay,
            EventAction::SetRate { link, rate } => {
                let l = &mut self.links[link.0 as usize];
                l.rate = rate;
                l.queue.set_rate(rate);
            }
        }
    }

    /// Lets endpoint `e` transmit what it wants to now, then re-arms its timer.
    fn service(&mut self, e: usize) {
        let now = self.now;
        while let Some(pkt) = self.endpoints[e].poll_transmit(now) {
            self.inject(pkt);
        }
        if let Some(t) = self.endpoints[e].poll_timeout() {
            let t = t.max(now);
            let slot = &mut self.timers[e];
            if slot.armed.is_none_or(|a| a > t) {
                slot.generation = slot.generation.wrapping_add(1);
                slot.armed = Some(t);
                let generation = slot.generation;
                self.events.schedule(
                    t,
                    Event::Timer {
                        endpoint: e as u32,
                        generation,
                    },
                );
            }
        }
    }

    fn timer(&mut self, e: usize, generation: u32) {
        let slot = &mut self.timers[e];
        if slot.generation != generation || slot.armed.is_none() {
            return; // cancelled
        }
        slot.armed = None;
        let now = self.now;
        if self.endpoints[e].poll_timeout().is_some_and(|t| t <= now) {
            self.endpoints[e].handle_timeout(now);
        }
        self.service(e);
    }

    /// A packet leaves an endpoint: it enters the first link of its route.
    fn inject(&mut self, mut pkt: Packet) {
        let f = &mut self.flows[pkt.flow.0 as usize];
        let dir = usize::from(!pkt.kind.is_forward());
        f.counts[dir].injected += 1;
        pkt.hop = 0;
        let first = if dir == 0 { f.forward[0] } else { f.reverse[0] };
        self.enqueue(first.0 as usize, pkt);
    }

    fn enqueue(&mut self, l: usize, pkt: Packet) {
        let now = self.now;
        let link = &mut self.links[l];
        if let Some((p, rng)) = &mut link.loss {
            if rng.random::<f64>() < *p {
                link.random_losses += 1;
                self.count_drop(&pkt);
                return;
            }
        }
        link.account_queue(now);
        match link.queue.enqueue(now, pkt) {
            Ok(_) => {
                link.note_backlog();
                if link.transmitting.is_none() {
                    self.start_tx(l);
                }
            }
            Err(d) => self.count_drop(&d.packet),
        }
    }

    /// Packets the queue dropped at its head while `start_tx` took the next one.
    fn count_head_drops(&mut self) {
        let mut dropped = std::mem::take(&mut self.head_drops);
        for d in dropped.drain(..) {
            self.count_drop(&d.packet);
        }
        self.head_drops = dropped;
    }

    fn count_drop(&mut self, p: &Packet) {
        let c = &mut self.flows[p.flow.0 as usize].counts[usize::from(!p.kind.is_forward())];
        c.dropped += 1;
        c.dropped_bytes += p.size as u64;
        c.dropped_data += u64::from(p.kind == acclab_core::PacketKind::Data);
    }

    fn start_tx(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        link.account_queue(now);
        if let Some(d) = link.queue.dequeue(now, &mut self.head_drops) {
            let done = now + link.rate.tx_time(d.packet.size as u64);
            link.transmitting = Some((d.packet, now));
            self.events.schedule(done, Event::TxDone(l as u32));
        }
        if !self.head_drops.is_empty() {
            self.count_head_drops();
        }
    }

    fn tx_done(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        let Some((pkt, started)) = link.transmitting.take() else {
            return;
        };
        link.busy_done += (now - started).0;
        self.packet_hops += 1;
        // FIFO propagation: a delay decrease never lets a packet overtake the one ahead.
        let arrival = (now + link.delay).max(link.pipe.back().map_or(Time::ZERO, |b| b.0));
        if link.pipe.is_empty() {
            self.events.schedule(arrival, Event::Arrive(l as u32));
        }
        link.pipe.push_back((arrival, pkt));
        self.start_tx(l);
    }

    fn arrive(&mut self, l: usize) {
        let link = &mut self.links[l];
        let Some((_, mut pkt)) = link.pipe.pop_front() else {
            return;
        };
        if let Some(&(next, _)) = link.pipe.front() {
            self.events.schedule(next, Event::Arrive(l as u32));
        }
        pkt.hop += 1;
        let flow = pkt.flow.0 as usize;
        let forward = pkt.kind.is_forward();
        let route = if forward {
            &self.flows[flow].forward
        } else {
            &self.flows[flow].reverse
        };
        match route.get(pkt.hop as usize) {
            Some(next) => {
                let next = next.0 as usize;
                self.enqueue(next, pkt);
            }
            None => {
                self.flows[flow].counts[usize::from(!forward)].arrived += 1;
                let e = EndpointSlot::destination(&pkt).index();
                let now = self.now;
                self.endpoints[e].handle_packet(now, &pkt);
                self.service(e);
            }
        }
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
            l.queue.for_each_packet(&mut count);
            l.transmitting.iter().for_each(|(p, _)| count(p));
            l.pipe.iter().for_each(|(_, p)| count(p));
        }
        out
    }

    /// Injected / arrived / dropped counts of flow `f`, forward and backward.
    pub fn packet_counts(&self, f: usize) -> [PacketCounts; 2] {
        self.flows[f].counts
    }

    /// Largest backlog each link's queue ever held, (packets, bytes).
    pub fn peak_backlogs(&self) -> Vec<(u64, u64)> {
        self.links.iter().map(|l| l.peak_backlog).collect()
    }

    /// The sender's and receiver's statistics of flow `f`.
    pub fn endpoint_stats(
        &self,
        f: usize,
    ) -> (
        acclab_core::transport::EndpointStats,
        acclab_core::transport::EndpointStats,
    ) {
        (
            self.endpoints[EndpointSlot::sender(FlowId(f as u32)).index()].stats(),
            self.endpoints[EndpointSlot::receiver(FlowId(f as u32)).index()].stats(),
        )
    }

    /// The samples and window snapshots taken so far.
    /// Streams every sample to `sink` as it is taken, keeping them in memory too only if
    /// `keep` (plots and charts need them there). Call before [`run`](Self::run), then
    /// [`finish_samples`](Self::finish_samples) after it.
    pub fn stream_samples(&mut self, sink: Box<dyn crate::monitor::SampleSink>, keep: bool) {
        self.monitor.stream_to(sink, keep);
    }

    /// Ends the sample stream (flushes and closes its files).
    pub fn finish_samples(&mut self) -> std::io::Result<()> {
        self.monitor.finish_stream()
    }

    pub fn monitor(&self) -> &Monitor {
        &self.monitor
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
}
