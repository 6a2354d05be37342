//! The packet-level discrete-event simulator: the driver that moves core packets between core
//! endpoints through core queue disciplines.
//!
//! Design, after htsim:
//! - A link is a queue discipline, a transmitter and a propagation pipe. Each link has at most
//!   one pending `TxDone` (its head packet's serialisation) and one pending `Arrive` (the first
//!   packet in its pipe), however many packets it holds, so the heap stays small.
//! - On a single-band tail-drop link whose rate and delay stay (nearly every link of most
//!   scenarios; [`Link::departs_at_enqueue`]) a packet's departure is fixed when it is
//!   enqueued — it starts when the packet ahead is done, or at once — so it goes into the pipe
//!   then, with its arrival time at the far end, and the link needs no `TxDone`: one event per
//!   hop instead of two. Its queue is brought up to date (packets whose transmission has
//!   started taken out, each transmission reported at its start) whenever it is read: before
//!   an arrival at the link, a sample, the window's edges and the end. The tie rule this
//!   implies: on such a link, a transmission that starts at time t is taken from the queue
//!   before anything else that happens at t is let in (elsewhere equal-time events keep the
//!   order they were scheduled in).
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

use acclab_core::config::{QueueConfig, QueueContext};
use acclab_core::queue::droptail::{DropTail, TailDropLedger};
use acclab_core::queue::{
    Backlog, Dequeued, DropReason, Dropped, Enqueued, QueueDiscipline, QueueState, QueueStats,
};
use acclab_core::transport::{Endpoint, EndpointSlot, EndpointStats, Side};
use acclab_core::{rng, Duration, FlowId, Limit, Packet, Rate, Time};
use rand::RngExt;

use crate::events::{Event, EventQueue};
use crate::monitor::Monitor;
use crate::observe::{NetworkView, Observer, Transmit};
use crate::pipes::{prefetch, prefetch_bytes, Pipe, Slab};
use crate::routes::Routes;
use acclab_scenario::{EventAction, LinkId, Scenario};

/// One unidirectional link. Laid out for the cache (at 1000 flows a hop rarely finds its link
/// in it): 128 bytes, two lines — the fields every hop reads in the first, tail drop's ledger
/// in the second. A link that does not [depart at enqueue](Link::departs_at_enqueue) keeps its
/// discipline and the packet it serialises in a box of their own ([`Held`]), so that the links
/// of the common case stay small.
#[repr(C, align(64))]
struct Link {
    /// Packets propagating, with their arrival times (non-decreasing), in the simulator's
    /// [`Slab`]. On a link that departs at enqueue, every packet accepted and not yet arrived:
    /// the queued ones too.
    pipe: Pipe,
    /// The last packet size serialised, and (`tx_memo_time`) its transmission time at `rate`:
    /// a link carries mostly one size (data one way, ACKs the other), so the division is
    /// rarely needed.
    tx_memo_size: u32,
    delay: Duration,
    /// On a link that departs at enqueue: when the last packet taken from the queue is done
    /// (the next one starts then, or when it was enqueued if that is later).
    dequeued_done: Time,
    tx_memo_time: Duration,
    rate: Rate,
    /// Random loss probability and its stream (None when the link is lossless).
    loss: Option<Box<(f64, rng::Rng)>>,
    /// The discipline holding the link's packets; `None` on a link that departs at enqueue,
    /// whose packets are in its pipe and whose queue is `ledger`.
    held: Option<Box<Held>>,
    /// Tail drop's admission and counters, on a link that departs at enqueue (unused on the
    /// others).
    ledger: TailDropLedger,
}

/// What a link that does not [depart at enqueue](Link::departs_at_enqueue) has besides: its
/// discipline and the packet it is serialising.
struct Held {
    queue: Discipline,
    /// The packet being serialised.
    transmitting: Option<Packet>,
    /// The discipline may push a queued packet out on an arrival (FQ-CoDel).
    pushes_out: bool,
}

impl Link {
    /// How long serialising `size` bytes takes at the link's rate (`Rate::tx_time`, memoised).
    #[inline]
    fn tx_time(&mut self, size: u32) -> Duration {
        if self.tx_memo_size != size {
            self.tx_memo_size = size;
            self.tx_memo_time = self.rate.tx_time(u64::from(size));
        }
        self.tx_memo_time
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): the oldest packet in its
    /// ledger, of `size` bytes, starts its transmission at `start`. Returns the backlog left
    /// and when the transmission is done.
    #[inline(always)]
    fn start_sending(&mut self, size: u32, start: Time) -> (Backlog, Time) {
        self.ledger.sent(size);
        let done = start + self.tx_time(size);
        self.dequeued_done = done;
        (self.ledger.backlog(), done)
    }

    /// Whether a packet's departure is computed when it is enqueued, so that a hop costs one
    /// event (its arrival at the far end) instead of two: the link is a single-band tail-drop
    /// FIFO (the order packets leave in is the order they came in, and none leaves but by
    /// transmission) whose rate and delay no scenario event changes (a packet's departure is
    /// then fixed once the packets ahead of it are: it starts when the one ahead is done, or
    /// when it arrives if the link is idle).
    fn departs_at_enqueue(l: &acclab_scenario::LinkDef, i: usize, scenario: &Scenario) -> bool {
        let fifo = matches!(&l.queue, QueueConfig::Droptail(p) if !p.priority);
        let fixed = !scenario.events.iter().any(|e| match e.action {
            EventAction::SetDelay { link, .. } | EventAction::SetRate { link, .. } => {
                link.0 as usize == i
            }
        });
        fifo && fixed
    }

    /// Whether the link [departs at enqueue](Link::departs_at_enqueue): its queue is its ledger.
    #[inline(always)]
    fn eager(&self) -> bool {
        self.held.is_none()
    }

    /// The link's queue, as observers read it.
    fn queue(&self) -> &dyn QueueState {
        match &self.held {
            Some(h) => &h.queue,
            None => &self.ledger,
        }
    }

    /// The link's queue's backlog.
    #[inline]
    fn backlog(&self) -> Backlog {
        match &self.held {
            Some(h) => h.queue.backlog(),
            None => self.ledger.backlog(),
        }
    }
}

/// A discipline that holds its packets. Tail drop, the default (on links whose rate or delay
/// an event changes, or with a priority band), is called directly; any other behind the
/// trait. (Each call through the box first waited for the box's cache line: at 1000 flows,
/// 4002 links' queues are rarely in cache.)
enum Discipline {
    TailDrop(DropTail),
    Other(Box<dyn QueueDiscipline>),
}

/// `$body` with `$q` bound to discipline `$d`, statically typed for tail drop.
macro_rules! with_discipline {
    ($d:expr, $q:ident => $body:expr) => {
        match $d {
            Discipline::TailDrop($q) => $body,
            Discipline::Other($q) => $body,
        }
    };
}

impl QueueState for Discipline {
    #[inline]
    fn backlog(&self) -> Backlog {
        with_discipline!(self, q => q.backlog())
    }
    fn stats(&self) -> QueueStats {
        with_discipline!(self, q => q.stats())
    }
    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        with_discipline!(self, q => q.aqm_state(out))
    }
}

impl QueueDiscipline for Discipline {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: &Packet) -> Result<Enqueued, Dropped> {
        with_discipline!(self, q => q.enqueue(now, pkt))
    }
    #[inline]
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        with_discipline!(self, q => q.dequeue(now, dropped))
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        with_discipline!(self, q => q.for_each_packet(f))
    }
    fn pushes_out(&self) -> bool {
        with_discipline!(self, q => q.pushes_out())
    }
    fn pushed_out(&mut self, out: &mut Vec<Dropped>) {
        with_discipline!(self, q => q.pushed_out(out))
    }
    fn set_rate(&mut self, rate: Rate) {
        with_discipline!(self, q => q.set_rate(rate))
    }
}

/// Packet counts of one flow in one direction, for conservation checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    pub injected: u64,
    pub arrived: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
}

/// What the simulator reads and writes of a flow for each of its packets, in one cache line:
/// where its routes begin, its packets injected and arrived, and its endpoints' timers. (At
/// 10,000 flows, the route table's index, the counts and the timers were a miss each.) In
/// each pair, [0] is for forward packets (data, OB, IB) or the sender, [1] for backward ones
/// (ACKs, reverse control) or the receiver. The counts are the simulator's own bookkeeping,
/// checked against the packets found in the network.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Books {
    route: [u32; 2],
    injected: [u64; 2],
    arrived: [u64; 2],
    /// When each endpoint's timer entry in the event queue is due ([`Books::UNARMED`] if it
    /// has none), and the generation that entry carries: an entry of another generation was
    /// replaced (it moved earlier) and is ignored when it comes.
    armed: [Time; 2],
    generation: [u32; 2],
}

impl Books {
    /// No timer entry: a deadline at the end of time is never scheduled, since it never comes.
    const UNARMED: Time = Time(u64::MAX);
}

/// The rest of a flow's state, read at samples and drops.
struct FlowState {
    start: Time,
    stop: Option<Time>,
    /// Packets dropped and their bytes, forward and backward (as in [`Books`]).
    dropped: [(u64, u64); 2],
}

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

/// What an observer reads of the simulator: borrowed parts of its state.
struct View<'a> {
    links: &'a [Link],
    flows: &'a [FlowState],
    endpoints: &'a [Box<dyn Endpoint>],
}

impl NetworkView for View<'_> {
    fn link_count(&self) -> usize {
        self.links.len()
    }
    fn queue(&self, l: LinkId) -> &dyn QueueState {
        self.links[l.0 as usize].queue()
    }
    fn flow_count(&self) -> usize {
        self.flows.len()
    }
    fn flow_times(&self, f: usize) -> (Time, Option<Time>) {
        (self.flows[f].start, self.flows[f].stop)
    }
    fn endpoint_stats(&self, f: usize) -> (EndpointStats, EndpointStats) {
        let f = FlowId(f as u32);
        (
            self.endpoints[EndpointSlot::sender(f).index()].stats(),
            self.endpoints[EndpointSlot::receiver(f).index()].stats(),
        )
    }
}

/// Whom the simulator reports to: the monitor, then every observer added, in order.
struct Observers {
    monitor: Monitor,
    extra: Vec<Box<dyn Observer>>,
}

impl Observers {
    /// The observers added, for the per-packet hooks: out of line, so that a run with the
    /// monitor alone keeps its hot path as tight as if there were no others (an inline loop
    /// over an empty list cost 8% on the 10-flow bench: its arguments had to be kept in
    /// memory for the calls in it).
    #[cold]
    #[inline(never)]
    fn extra(&mut self) -> &mut [Box<dyn Observer>] {
        &mut self.extra
    }
}

impl Observers {
    /// Whether observers were added beside the monitor.
    #[inline]
    fn has_extra(&self) -> bool {
        !self.extra.is_empty()
    }
}

impl Observer for Observers {
    fn on_enqueue(&mut self, now: Time, l: LinkId, p: &Packet, marked: bool, b: Backlog) {
        self.monitor.on_enqueue(now, l, p, marked, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_enqueue(now, l, p, marked, b);
            }
        }
    }
    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, b: Backlog) {
        self.monitor.on_transmit(now, l, p, tx, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_transmit(now, l, p, tx, b);
            }
        }
    }
    fn on_drop(&mut self, now: Time, l: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        self.monitor.on_drop(now, l, p, why, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_drop(now, l, p, why, b);
            }
        }
    }
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.monitor.on_deliver(now, p);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_deliver(now, p);
            }
        }
    }
    fn on_sample(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_sample(now, net);
        for o in &mut self.extra {
            o.on_sample(now, net);
        }
    }
    fn on_window_start(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_window_start(now, net);
        for o in &mut self.extra {
            o.on_window_start(now, net);
        }
    }
    fn on_window_end(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_window_end(now, net);
        for o in &mut self.extra {
            o.on_window_end(now, net);
        }
    }
    fn finish(&mut self) -> std::io::Result<()> {
        let mut first = self.monitor.finish();
        for o in &mut self.extra {
            let r = o.finish();
            first = first.and(r);
        }
        first
    }
}

/// A simulation in progress.
pub struct Simulator {
    scenario: Scenario,
    now: Time,
    end: Time,
    events: EventQueue,
    links: Vec<Link>,
    /// The packets in every link's pipe.
    slab: Slab,
    flows: Vec<FlowState>,
    /// Each flow's [`Books`].
    books: Vec<Books>,
    routes: Routes,
    /// Each flow's endpoints, at their [`EndpointSlot`].
    endpoints: Vec<Box<dyn Endpoint>>,
    observers: Observers,
    event_count: u64,
    packet_hops: u64,
    time_went_backwards: bool,
    /// Scratch for the packets a queue drops at its head during one dequeue.
    head_drops: Vec<Dropped>,
}

impl Simulator {
    /// Builds every link, queue and endpoint of `scenario` and schedules its fixed events.
    pub fn new(scenario: Scenario) -> Simulator {
        let endpoints = scenario.build_endpoints();
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
            .enumerate()
            .map(|(i, l)| {
                let eager = Link::departs_at_enqueue(l, i, &scenario);
                let held = match &l.queue {
                    QueueConfig::Droptail(_) if eager => None,
                    QueueConfig::Droptail(p) => Some(Discipline::TailDrop(p.queue())),
                    q => Some(Discipline::Other(q.build(&QueueContext {
                        rate: l.rate,
                        seed,
                        name: format!("link:{}", l.name),
                        flow_classes: flow_classes.clone(),
                        packet_size: scenario.packet_size,
                    }))),
                };
                let limit = match &l.queue {
                    QueueConfig::Droptail(p) => p.limit,
                    _ => Limit::Unlimited, // the ledger is not used
                };
                Link {
                    rate: l.rate,
                    tx_memo_size: 0,
                    tx_memo_time: l.rate.tx_time(0),
                    delay: l.delay,
                    dequeued_done: Time::ZERO,
                    loss: (l.loss > 0.0).then(|| {
                        Box::new((l.loss, rng::stream(seed, &format!("link:{}:loss", l.name))))
                    }),
                    held: held.map(|queue| {
                        Box::new(Held {
                            pushes_out: queue.pushes_out(),
                            queue,
                            transmitting: None,
                        })
                    }),
                    ledger: TailDropLedger::new(limit),
                    pipe: Pipe::default(),
                }
            })
            .collect();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        let mut books = Vec::with_capacity(scenario.flows.len());
        let mut routes = Routes::default();
        let mut events = EventQueue::default();
        for (i, f) in scenario.flows.iter().enumerate() {
            let (start, _) = scenario.flow_times(i);
            events.schedule(start, Event::FlowStart(i as u32));
            if let Some(stop) = f.stop {
                events.schedule(stop.max(start), Event::FlowStop(i as u32));
            }
            books.push(Books {
                route: match f.spray {
                    false => [
                        routes.push(&f.forward, EndpointSlot::receiver(FlowId(i as u32))),
                        routes.push(&f.reverse, EndpointSlot::sender(FlowId(i as u32))),
                    ],
                    true => [
                        routes.push_sprayed(
                            &scenario,
                            f.src,
                            f.dst,
                            EndpointSlot::receiver(FlowId(i as u32)),
                            2 * i as u64,
                        ),
                        routes.push_sprayed(
                            &scenario,
                            f.dst,
                            f.src,
                            EndpointSlot::sender(FlowId(i as u32)),
                            2 * i as u64 + 1,
                        ),
                    ],
                },
                injected: [0; 2],
                arrived: [0; 2],
                armed: [Books::UNARMED; 2],
                generation: [0; 2],
            });
            flows.push(FlowState {
                start,
                stop: f.stop,
                dropped: [(0, 0); 2],
            });
        }
        for (i, e) in scenario.events.iter().enumerate() {
            events.schedule(e.at, Event::Scheduled(i as u32));
        }
        let (from, to) = scenario.output.window;
        events.schedule(from, Event::WindowStart);
        events.schedule(to, Event::WindowEnd);
        events.schedule(Time::ZERO + scenario.output.sample_interval, Event::Sample);
        let view = View {
            links: &links,
            flows: &flows,
            endpoints: &endpoints,
        };
        let monitor = Monitor::new(&scenario, &view);
        Simulator {
            end: Time(scenario.duration.0),
            scenario,
            now: Time::ZERO,
            events,
            links,
            slab: Slab::new(),
            flows,
            books,
            routes,
            endpoints,
            observers: Observers {
                monitor,
                extra: Vec::new(),
            },
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
            if self.events.take_refilled() {
                self.prefetch_deliveries();
            }
            if let Some(Event::Arrive(l, slot, then)) = self.events.peek_first() {
                // The next event's link and packet are rarely in cache at 1000 flows: they
                // are fetched while this one is handled, and so is the endpoint a delivery
                // goes to (its entry, fetched at the refill, says where it is).
                prefetch(&self.links[l as usize]);
                self.slab.prefetch(slot);
                if let Some(e) =
                    Routes::delivers_to(then).and_then(|e| self.endpoints.get(e.index()))
                {
                    let first_lines: *const dyn Endpoint = &**e;
                    prefetch_bytes(first_lines.cast(), 128);
                }
            }
            self.dispatch(ev);
        }
        self.now = self.now.max(limit);
        self.start_all_due(self.now);
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
            Event::TxStart(l) => self.start_due(l as usize, self.now),
            Event::Arrive(l, _, _) => self.arrive(l as usize),
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
                self.start_all_due(self.now);
                self.observers.on_sample(self.now, &view!(self));
                let next = self.now + self.scenario.output.sample_interval;
                if next <= self.end {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WindowStart => {
                self.start_all_due(self.now);
                self.observers.on_window_start(self.now, &view!(self))
            }
            Event::WindowEnd => {
                self.start_all_due(self.now);
                self.observers.on_window_end(self.now, &view!(self))
            }
        }
    }

    fn apply_event(&mut self, i: usize) {
        match self.scenario.events[i].action {
            EventAction::SetDelay { link, delay } => self.links[link.0 as usize].delay = delay,
            EventAction::SetRate { link, rate } => {
                let l = &mut self.links[link.0 as usize];
                l.rate = rate;
                l.tx_memo_time = rate.tx_time(u64::from(l.tx_memo_size));
                if let Some(h) = &mut l.held {
                    h.queue.set_rate(rate); // a link whose rate changes holds a discipline
                }
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
            let slot = EndpointSlot::at(e);
            let (b, side) = (
                &mut self.books[slot.flow().0 as usize],
                usize::from(slot.side() == Side::Receiver),
            );
            // Unarmed is later than any deadline.
            if b.armed[side] > t {
                b.generation[side] = b.generation[side].wrapping_add(1);
                b.armed[side] = t;
                let generation = b.generation[side];
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
        let slot = EndpointSlot::at(e);
        let (b, side) = (
            &mut self.books[slot.flow().0 as usize],
            usize::from(slot.side() == Side::Receiver),
        );
        if b.generation[side] != generation || b.armed[side] == Books::UNARMED {
            return; // cancelled
        }
        b.armed[side] = Books::UNARMED;
        let now = self.now;
        if self.endpoints[e].poll_timeout().is_some_and(|t| t <= now) {
            self.endpoints[e].handle_timeout(now);
        }
        self.service(e);
    }

    /// A packet leaves an endpoint: it enters the first link of its route.
    fn inject(&mut self, mut pkt: Packet) {
        let b = &mut self.books[pkt.flow.0 as usize];
        let dir = usize::from(!pkt.kind.is_forward());
        b.injected[dir] += 1;
        // Endpoints make packets at hop 0. (Stored only when needed: a narrow store into a
        // packet about to be copied stalls the copy, which cannot take it from the store.)
        if pkt.hop != 0 {
            pkt.hop = 0;
        }
        let route = b.route[dir];
        let first = self.routes.first(route, &pkt);
        let i = self.slab.alloc(pkt, route);
        self.enqueue(first, i);
    }

    /// The packet in slot `i` of the slab (in no pipe) reaches link `l`: it is queued there,
    /// and put in the link's pipe in the same slot, or dropped and its slot freed.
    fn enqueue(&mut self, l: usize, i: u32) {
        let now = self.now;
        let link = &self.links[l];
        if link.eager() && link.pipe.has_queued() {
            // The queue as it is now: without the packets whose transmission has started.
            self.start_due(l, now);
        }
        let link = &mut self.links[l];
        let id = LinkId(l as u32);
        if let Some(loss) = &mut link.loss {
            let (p, rng) = &mut **loss;
            if rng.random::<f64>() < *p {
                let backlog = link.backlog();
                let pkt = self.slab.release(i);
                self.drop(id, &pkt, DropReason::LinkLoss, backlog);
                return;
            }
        }
        let Some(held) = &mut link.held else {
            match link.ledger.admit(self.slab.packet(i)) {
                Ok(()) => {
                    let backlog = link.ledger.backlog();
                    // It starts when the packet ahead of it is done (that packet's arrival
                    // less the delay), or now if the link is idle.
                    let start = self
                        .slab
                        .back_arrival(&link.pipe)
                        .map_or(now, |ahead| now.max(Time(ahead.0 - link.delay.0)));
                    if start == now {
                        self.send_now(l, i, backlog);
                    } else {
                        // Tail drop never marks.
                        self.observers
                            .on_enqueue(now, id, self.slab.packet(i), false, backlog);
                        self.send_later(l, i, start);
                    }
                }
                Err(d) => {
                    let backlog = link.ledger.backlog();
                    self.slab.free(i);
                    self.drop(id, &d.packet, d.reason, backlog);
                }
            }
            return;
        };
        // The discipline keeps a copy of its own.
        let pkt = &self.slab.release(i);
        let queue = &mut held.queue;
        match queue.enqueue(now, pkt) {
            Ok(e) => {
                let backlog = queue.backlog();
                let idle = held.transmitting.is_none();
                if held.pushes_out {
                    let mut out = std::mem::take(&mut self.head_drops);
                    queue.pushed_out(&mut out);
                    self.observers.on_enqueue(now, id, pkt, e.marked, backlog);
                    for d in out.drain(..) {
                        self.drop(id, &d.packet, d.reason, backlog);
                    }
                    self.head_drops = out;
                    if idle {
                        self.start_tx(l);
                    }
                    return;
                }
                self.observers.on_enqueue(now, id, pkt, e.marked, backlog);
                if idle {
                    self.start_tx(l);
                }
            }
            Err(d) => {
                let backlog = queue.backlog();
                self.drop(id, &d.packet, d.reason, backlog);
            }
        }
    }

    /// The packet in slot `i`, just admitted at link `l` that [departs at
    /// enqueue](Link::departs_at_enqueue) (whose queue now holds `backlog`), finds the link
    /// idle: its transmission starts now. It is reported queued and started (what
    /// [`start_due`](Self::start_due) would report at once) and put in the pipe, started, with
    /// its arrival time at the far end.
    fn send_now(&mut self, l: usize, i: u32, backlog: Backlog) {
        let now = self.now;
        let id = LinkId(l as u32);
        let pkt = self.slab.packet(i);
        // Tail drop never marks.
        self.observers.on_enqueue(now, id, pkt, false, backlog);
        let (backlog, done) = self.links[l].start_sending(pkt.size, now);
        self.packet_hops += 1;
        let tx = Transmit {
            sojourn: Duration::ZERO,
            marked: false,
            done,
        };
        self.observers.on_transmit(now, id, pkt, tx, backlog);
        self.propagate(l, done, i, None);
    }

    /// The packet in slot `i`, just admitted at link `l` that [departs at
    /// enqueue](Link::departs_at_enqueue), waits for the packets ahead of it: its transmission
    /// starts at `start`, later than now. It is put in the pipe, queued, with its arrival time
    /// at the far end.
    fn send_later(&mut self, l: usize, i: u32, start: Time) {
        let now = self.now;
        let done = start + self.links[l].tx_time(self.slab.packet(i).size);
        self.propagate(l, done, i, Some(now));
        if self.observers.has_extra() {
            // Added observers hear of every transmission at its start, in time order.
            self.events.schedule(start, Event::TxStart(l as u32));
        }
    }

    /// Takes from the queue of link `l`, which [departs at enqueue](Link::departs_at_enqueue),
    /// every packet whose transmission starts by `t`, and reports each transmission at its
    /// start. The queue is brought up to date this way whenever it is read: before an arrival
    /// at the link, a sample, the window's edges and the end of a run.
    fn start_due(&mut self, l: usize, t: Time) {
        let id = LinkId(l as u32);
        let link = &mut self.links[l];
        if !link.eager() {
            return;
        }
        // The queued packets are the pipe's last ones: each is read in place.
        while let Some((pkt, queued_at)) = self.slab.first_queued(&link.pipe) {
            let start = queued_at.max(link.dequeued_done);
            if start > t {
                return;
            }
            let (backlog, done) = link.start_sending(pkt.size, start);
            self.packet_hops += 1;
            let tx = Transmit {
                sojourn: start - queued_at,
                marked: false, // tail drop never marks
                done,
            };
            self.observers.on_transmit(start, id, pkt, tx, backlog);
            self.slab.start_first_queued(&mut link.pipe);
        }
    }

    /// [`start_due`](Self::start_due) on every link that departs at enqueue.
    fn start_all_due(&mut self, t: Time) {
        for l in 0..self.links.len() {
            if self.links[l].eager() {
                self.start_due(l, t);
            }
        }
    }

    /// `p` is lost at link `l`: counted for conservation, reported to the observers.
    fn drop(&mut self, l: LinkId, p: &Packet, why: DropReason, backlog: Backlog) {
        let c = &mut self.flows[p.flow.0 as usize].dropped[usize::from(!p.kind.is_forward())];
        c.0 += 1;
        c.1 += p.size as u64;
        self.observers.on_drop(self.now, l, p, why, backlog);
    }

    fn start_tx(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        let id = LinkId(l as u32);
        let Some(held) = &mut link.held else {
            return; // a link that departs at enqueue never serialises on its own
        };
        let queue = &mut held.queue;
        let next = queue.dequeue(now, &mut self.head_drops);
        let backlog = queue.backlog();
        if !self.head_drops.is_empty() {
            let mut dropped = std::mem::take(&mut self.head_drops);
            for d in dropped.drain(..) {
                self.drop(id, &d.packet, d.reason, backlog);
            }
            self.head_drops = dropped;
        }
        if let Some(d) = next {
            let link = &mut self.links[l];
            let done = now + link.tx_time(d.packet.size);
            if let Some(h) = &mut link.held {
                h.transmitting = Some(d.packet);
            }
            self.events.schedule(done, Event::TxDone(l as u32));
            let tx = Transmit {
                sojourn: d.sojourn,
                marked: d.marked,
                done,
            };
            self.observers.on_transmit(now, id, &d.packet, tx, backlog);
        }
    }

    fn tx_done(&mut self, l: usize) {
        let now = self.now;
        let Some(pkt) = self.links[l]
            .held
            .as_mut()
            .and_then(|h| h.transmitting.take())
        else {
            return;
        };
        self.packet_hops += 1;
        let dir = usize::from(!pkt.kind.is_forward());
        let i = self
            .slab
            .alloc(pkt, self.books[pkt.flow.0 as usize].route[dir]);
        self.propagate(l, now, i, None);
        self.start_tx(l);
    }

    /// The packet in slot `i`, serialised on link `l` by `done`, enters its pipe — still queued
    /// if `queued` is the time it was (on a link that departs at enqueue). There it already
    /// counts the hop: its `hop` is the index, in its route, of the link it enters next.
    #[inline(always)]
    fn propagate(&mut self, l: usize, done: Time, i: u32, queued: Option<Time>) {
        let link = &mut self.links[l];
        // FIFO propagation: a delay decrease never lets a packet overtake the one ahead.
        let ahead = self.slab.back_arrival(&link.pipe);
        let arrival = (done + link.delay).max(ahead.unwrap_or(Time::ZERO));
        let pkt = self.slab.link_back(&mut link.pipe, i, arrival, queued);
        pkt.hop += 1;
        // Where it goes at the far end, read now, while its route is at hand.
        let (pkt, route) = self.slab.packet_and_route(i);
        let next_hop = self.routes.next(route, pkt.hop, Some(l), pkt).0;
        self.slab.set_next_hop(i, next_hop);
        if ahead.is_none() {
            let head = link.pipe.head();
            self.events
                .schedule(arrival, Event::Arrive(l as u32, head, next_hop));
        }
    }

    /// When the cursor enters a new slot of the event queue, a few microseconds before its
    /// events (at 10,000 flows, some 30 of them): fetches, for each packet delivered in it,
    /// its flow's books and the entry that says where its endpoint is. At 10,000 flows they
    /// were last seen milliseconds ago, and the books were the slowest load of a delivery;
    /// one event ahead is too late for them.
    #[cold]
    fn prefetch_deliveries(&self) {
        for ev in self.events.current() {
            if let Event::Arrive(_, _, then) = *ev {
                if let Some(e) = Routes::delivers_to(then) {
                    if let (Some(b), Some(entry)) = (
                        self.books.get(e.flow().0 as usize),
                        self.endpoints.get(e.index()),
                    ) {
                        prefetch(b);
                        prefetch(entry);
                    }
                }
            }
        }
    }

    /// Fetches link `l` — both its lines and its monitor track — into cache ahead of a
    /// packet's arrival there; nothing for an end marker ([`Routes::delivers_to`]).
    #[inline(always)]
    fn prefetch_link(&self, l: u32) {
        if let Some(link) = self.links.get(l as usize) {
            prefetch(link);
            self.observers.monitor.prefetch_link(l as usize);
        }
    }

    fn arrive(&mut self, l: usize) {
        if self.slab.front_is_queued(&self.links[l].pipe) {
            // Its transmission, done by now, is reported before it leaves (the queue was not
            // read since it started).
            self.start_due(l, self.now);
        }
        let link = &mut self.links[l];
        let Some((i, next)) = self.slab.take_front(&mut link.pipe) else {
            return;
        };
        if let Some(next) = next {
            let head = link.pipe.head();
            let then = self.slab.next_hop(head);
            self.events
                .schedule(next, Event::Arrive(l as u32, head, then));
            // The packet behind goes on to this link next, a link-event from now: at 10,000
            // flows an access link, last seen milliseconds ago.
            self.prefetch_link(then);
        }
        match self.slab.next_hop(i) {
            // It moves on in its slot.
            hop if Routes::delivers_to(hop).is_none() => self.enqueue(hop as usize, i),
            _ => {
                let pkt = self.slab.release(i);
                let flow = pkt.flow.0 as usize;
                let dir = usize::from(!pkt.kind.is_forward());
                let b = &mut self.books[flow];
                b.arrived[dir] += 1;
                // The endpoint nearly always answers (an ACK, or data for an ACK) on the
                // route back, whose first link, an access link at 10,000 flows last seen
                // milliseconds ago, is fetched while the endpoint works.
                let back = b.route[1 - dir];
                self.prefetch_link(self.routes.first_hint(back).0);
                let e = EndpointSlot::destination(&pkt).index();
                let now = self.now;
                self.observers.on_deliver(now, &pkt);
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
            // A link that departs at enqueue holds its queued packets in its pipe.
            if let Some(h) = &l.held {
                h.queue.for_each_packet(&mut count);
                h.transmitting.iter().for_each(&mut count);
            }
            self.slab.iter(&l.pipe).for_each(|(_, p)| count(p));
        }
        out
    }

    /// Injected / arrived / dropped counts of flow `f`, forward and backward.
    pub fn packet_counts(&self, f: usize) -> [PacketCounts; 2] {
        let (b, dropped) = (&self.books[f], &self.flows[f].dropped);
        [0, 1].map(|d| PacketCounts {
            injected: b.injected[d],
            arrived: b.arrived[d],
            dropped: dropped[d].0,
            dropped_bytes: dropped[d].1,
        })
    }

    /// Largest backlog each link's queue ever held, (packets, bytes), as the monitor saw it.
    pub fn peak_backlogs(&self) -> Vec<(u64, u64)> {
        self.observers.monitor.peak_backlogs()
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
                .filter(|l| l.eager() && l.dequeued_done > now)
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

    /// The layout the hot path is tuned for (see [`Link`]): a field added to a link costs a
    /// cache line per hop at 1000 flows.
    #[test]
    fn a_link_is_two_cache_lines_with_its_hot_fields_in_the_first() {
        assert_eq!(std::mem::size_of::<Link>(), 128);
        assert_eq!(std::mem::align_of::<Link>(), 64);
        assert_eq!(std::mem::offset_of!(Link, ledger), 64);
        assert_eq!(std::mem::size_of::<TailDropLedger>(), 64);
    }

    /// What a packet touches of its flow is one cache line (see [`Books`]).
    #[test]
    fn a_flows_books_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<Books>(), 64);
        assert_eq!(std::mem::align_of::<Books>(), 64);
    }
}
