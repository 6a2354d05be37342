//! The event loop and the hot path: events popped in time order and dispatched; endpoints
//! serviced and their timers kept; a packet injected, queued at a link (or dropped),
//! serialised, propagated, and on arrival sent on to the next link or delivered to its endpoint.
//! (One module, so that the loop and the hop it runs are compiled in one unit and inlined
//! into one another as the compiler sees fit.)

use acclab_core::queue::{Backlog, DropReason, QueueState};
use acclab_core::transport::{Endpoint, EndpointSlot, Side};
use acclab_core::{Duration, FlowId, Packet, Reciprocal, Time};

use super::books::Books;
use super::observers::View;
use super::Simulator;
use crate::events::{Entity, Event};
use crate::observe::{Observer, Transmit};
use crate::pipes::{prefetch, prefetch_bytes};
use crate::routes::Routes;
use crate::telemetry::Delivered;
use acclab_scenario::{EventAction, LinkId};

/// Told of every event as it is dispatched (an analysis of the run's events, such as
/// [`crate::parallelism`]).
pub trait EventProbe: std::any::Any + Send {
    fn on_event(&mut self, t: Time, ev: Event);
    /// The event's key (its place in the run's order: `EventQueue::popped`), told first.
    fn on_key(&mut self, _key: u128) {}
}

impl Simulator {
    /// The event loop. A run with a probe (`run_probed`) tells it of each event first: one
    /// loop for both, the probe a field tested per event and called out of line (a second,
    /// generic copy of the loop made the compiler stop inlining the handlers, +4% instructions
    /// on the ordinary run; a probe passed as an argument, +1.9%).
    pub(super) fn run_until(&mut self, limit: Time, progress: &mut dyn FnMut(Time)) {
        self.run_span(limit, progress);
        self.now = self.now.max(limit);
        self.start_all_due(self.now);
    }

    /// Handles every event due by `limit`; in a partition of a parallel run, stops after one of
    /// the run's own events ([`Event::is_run`]), which every partition handles at the same
    /// place, and returns it (the coordinator then sees the whole network: `parallel.rs`).
    pub(super) fn run_span(
        &mut self,
        limit: Time,
        progress: &mut dyn FnMut(Time),
    ) -> Option<Event> {
        while let Some((t, ev)) = self.events.pop_until(limit) {
            if self.probe.is_some() {
                self.probe_event(t, ev);
            }
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
                    Routes::delivers_to(then).and_then(|e| self.endpoints.peek(e.index()))
                {
                    let first_lines: *const dyn Endpoint = &**e;
                    prefetch_bytes(first_lines.cast(), 128);
                }
            }
            self.dispatch(ev);
            if self.part.is_some() && ev.is_run() {
                self.stop_at_run_event();
                return Some(ev);
            }
        }
        None
    }

    #[cold]
    #[inline(never)]
    fn probe_event(&mut self, t: Time, ev: Event) {
        if let Some(p) = &mut self.probe {
            p.on_key(self.events.position());
            p.on_event(t, ev);
        }
    }

    /// Handles `ev`. Each arm first names the entity that handles it, to which the events
    /// scheduled meanwhile belong (the event queue's tie rule): a transmission its link's
    /// sending side, an arrival its link's receiving side, an endpoint's timer, start, stop or
    /// retirement that endpoint (a flow's start, stop and retirement its sender's), the rest
    /// the run. (In the arms, not in a match of its own: one jump a hop, not two.)
    pub(super) fn dispatch(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::TxDone(l) => {
                self.events.by(Entity::sender(l as usize), now);
                self.tx_done(l as usize)
            }
            Event::TxStart(l) => {
                self.events.by(Entity::sender(l as usize), now);
                self.start_due(l as usize, now)
            }
            Event::Arrive(l, slot, then) => {
                self.events.by(Entity::receiver(l as usize), now);
                self.arrive(l as usize, slot, then)
            }
            Event::Land(l) => {
                self.events.by(Entity::receiver(l as usize), now);
                self.land(l as usize)
            }
            Event::Timer {
                endpoint,
                generation,
            } => {
                self.by_endpoint(endpoint as usize);
                self.timer(endpoint as usize, generation)
            }
            _ => self.dispatch_rare(ev),
        }
    }

    /// [`dispatch`](Self::dispatch) of the events that are not a hop's or a timer's: a flow's
    /// start, stop and retirement and the run's own events. Out of line, so that the loop holds
    /// the hop's path alone (cachegrind at 1,000 flows: 1.9 instructions a hop fewer).
    #[cold]
    #[inline(never)]
    fn dispatch_rare(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::TxDone(_)
            | Event::TxStart(_)
            | Event::Arrive(..)
            | Event::Land(_)
            | Event::Timer { .. } => unreachable!("dispatch() handles hops and timers"),
            Event::FlowStart(f) => {
                let e = EndpointSlot::sender(FlowId(f)).index();
                self.by_endpoint(e);
                self.endpoints.open(FlowId(f), &self.scenario);
                self.ledger.open(f as usize);
                if self.part.as_ref().is_some_and(|p| !p.holds_sender(f)) {
                    // A partition that holds only its receiver: the sender's counts it.
                    self.event_count -= 1;
                    return;
                }
                self.service(e, |ep| ep.handle_start(now));
            }
            Event::FlowStop(f) => {
                let e = EndpointSlot::sender(FlowId(f)).index();
                self.by_endpoint(e);
                if self.endpoints.is_retired(FlowId(f)) {
                    return; // a flow already retired (its endpoints' page may be gone)
                }
                self.service(e, |ep| ep.handle_stop(now));
            }
            Event::Retire(f) => {
                self.by_endpoint(EndpointSlot::sender(FlowId(f)).index());
                self.event_count -= 1; // housekeeping, not counted
                self.retire(FlowId(f))
            }
            Event::Scheduled(i) => {
                self.events.by(Entity::RUN, now);
                self.apply_event(i as usize)
            }
            Event::Sample => {
                self.events.by(Entity::RUN, now);
                self.start_all_due(now);
                self.observers.on_sample(now, &view!(self));
                let next = now + self.scenario.output.sample_interval;
                if next <= self.end {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WindowStart => {
                self.events.by(Entity::RUN, now);
                self.start_all_due(now);
                self.observers.on_window_start(now, &view!(self))
            }
            Event::WindowEnd => {
                self.events.by(Entity::RUN, now);
                self.start_all_due(now);
                self.observers.on_window_end(now, &view!(self))
            }
        }
    }

    /// Names endpoint `e` as the entity handling the event (see [`dispatch`](Self::dispatch)).
    #[inline(always)]
    fn by_endpoint(&mut self, e: usize) {
        let entity = self.entities.endpoint(e);
        self.events.by(entity, self.now);
    }

    pub(super) fn apply_event(&mut self, i: usize) {
        match self.scenario.events[i].action {
            EventAction::SetDelay { link, delay } => self.links[link.0 as usize].delay = delay,
            EventAction::SetRate { link, rate } => {
                let l = &mut self.links[link.0 as usize];
                l.rate = Reciprocal::new(rate);
                if let Some(h) = &mut l.held {
                    h.queue.set_rate(rate); // a link whose rate changes holds a discipline
                }
            }
        }
    }

    /// Lets endpoint `e` take what happened to it (`first`: a packet, a timeout, its start or
    /// stop), transmit what it wants to now, then re-arms its timer. The endpoint is looked up
    /// once for `first`, the first transmission and its timer when it sends nothing, and once
    /// more after each packet it sends (which may change every other endpoint's state but not
    /// its own).
    #[inline(always)]
    pub(super) fn service(&mut self, e: usize, first: impl FnOnce(&mut dyn Endpoint)) {
        let now = self.now;
        let mut ep = self.endpoints.get_mut(e);
        first(ep);
        let timeout = loop {
            match ep.poll_transmit(now) {
                Some(pkt) => {
                    self.inject(pkt);
                    ep = self.endpoints.get_mut(e);
                }
                None => break ep.poll_timeout(),
            }
        };
        if let Some(p) = &mut self.part {
            p.timer_is(
                EndpointSlot::at(e),
                timeout.is_some(),
                self.events.position(),
            );
        }
        let Some(t) = timeout else {
            let slot = EndpointSlot::at(e);
            if slot.side() == Side::Sender {
                self.sender_idle(slot.flow());
            }
            return;
        };
        let t = t.max(now);
        let slot = EndpointSlot::at(e);
        let (b, side) = (
            self.ledger.books_mut(slot.flow().0 as usize),
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

    /// Flow `f`'s sender has no timer: if its finite transfer is complete, the flow is
    /// retired when nothing of it is left (`endpoints.rs`).
    #[cold]
    fn sender_idle(&mut self, f: FlowId) {
        if self.endpoints.closes(f) {
            match &mut self.part {
                None => self.retire(f),
                // Whether anything of it is left is for the coordinator to see.
                Some(p) => p.closing.push((f, self.events.position())),
            }
        }
    }

    pub(super) fn timer(&mut self, e: usize, generation: u32) {
        let slot = EndpointSlot::at(e);
        let side = usize::from(slot.side() == Side::Receiver);
        // (An entry may outlive its flow's books: those of a retired flow's page.)
        let Some(b) = self.ledger.get_mut(slot.flow().0 as usize) else {
            return;
        };
        if b.generation[side] != generation || b.armed[side] == Books::UNARMED {
            return; // cancelled
        }
        b.armed[side] = Books::UNARMED;
        let now = self.now;
        // (An entry left behind by a flow since retired finds its stand-in, without a timer.)
        self.service(e, |ep| {
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
        });
    }

    /// A packet leaves an endpoint: it enters the first link of its route.
    pub(super) fn inject(&mut self, mut pkt: Packet) {
        let b = self.ledger.books_mut(pkt.flow.0 as usize);
        let dir = usize::from(!pkt.kind.is_forward());
        b.injected[dir] += 1;
        // Endpoints make packets at hop 0. (Stored only when needed: a narrow store into a
        // packet about to be copied stalls the copy, which cannot take it from the store.)
        if pkt.hop != 0 {
            pkt.hop = 0;
        }
        let route = b.route[dir];
        if let Some(t) = &mut self.telemetry {
            // Fields by value: the packet's address does not escape into the cold call.
            if let Some(slot) = t.on_send(pkt.flow, pkt.kind) {
                pkt.payload = acclab_core::packet::Payload::Telemetry(slot);
            }
        }
        let first = self.routes.first(route, &pkt);
        let i = self.slab.alloc(pkt, route);
        self.enqueue(first, i);
    }

    /// The packet in slot `i` of the slab (in no pipe) reaches link `l`: it is queued there,
    /// and put in the link's pipe in the same slot, or dropped and its slot freed.
    pub(super) fn enqueue(&mut self, l: usize, i: u32) {
        let now = self.now;
        let link = &self.links[l];
        if link.eager() && link.pipe.has_queued() {
            // The queue as it is now: without the packets whose transmission has started.
            self.start_due(l, now);
        }
        let link = &mut self.links[l];
        let id = LinkId(l as u32);
        if let Some((process, rng)) = link.extra.as_mut().and_then(|x| x.loss.as_mut()) {
            if process.lose(rng) {
                let backlog = link.backlog();
                let pkt = self.slab.release(i);
                self.drop(id, &pkt, DropReason::LinkLoss, backlog);
                return;
            }
        }
        let Some(held) = &mut link.held else {
            match link.ledger.admit(self.slab.packet(i)) {
                Ok(marked) => {
                    let backlog = link.ledger.backlog();
                    let (start, done) = link.schedule(self.slab.packet(i).size, now);
                    if start == now {
                        self.send_now(l, i, backlog, marked, done);
                    } else {
                        self.admitted(l, i, backlog, marked);
                        self.send_later(l, i, start, done);
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
        match queue.enqueue(&mut self.pools, now, pkt) {
            Ok(e) => {
                let backlog = queue.backlog();
                let idle = held.transmitting.is_none();
                if held.pushes_out {
                    let mut out = std::mem::take(&mut self.head_drops);
                    queue.pushed_out(&mut self.pools, &mut out);
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

    /// The packet in slot `i` was admitted at link `l` that [departs at
    /// enqueue](Link::departs_at_enqueue), whose queue now holds `backlog`: observers are told
    /// of it as it arrived, and of its mark (`marked`), which it then carries.
    #[inline(always)]
    fn admitted(&mut self, l: usize, i: u32, backlog: Backlog, marked: bool) {
        self.observers.on_enqueue(
            self.now,
            LinkId(l as u32),
            self.slab.packet(i),
            marked,
            backlog,
        );
        if marked {
            self.slab.packet_mut(i).ecn.mark();
        }
    }

    /// The packet in slot `i`, just admitted at link `l` that [departs at
    /// enqueue](Link::departs_at_enqueue) (whose queue now holds `backlog`; `marked`: it is to
    /// be marked), finds the link idle: its transmission starts now, and is done at `done`.
    /// It is reported queued and started (what [`start_due`](Self::start_due) would report at
    /// once) and put in the pipe, started, with its arrival time at the far end.
    pub(super) fn send_now(
        &mut self,
        l: usize,
        i: u32,
        backlog: Backlog,
        marked: bool,
        done: Time,
    ) {
        let now = self.now;
        let id = LinkId(l as u32);
        self.admitted(l, i, backlog, marked);
        let pkt = self.slab.packet(i);
        let backlog = self.links[l].start_sending(pkt.size);
        self.packet_hops += 1;
        let tx = Transmit {
            sojourn: Duration::ZERO,
            marked: false, // marks are made on arrival
            done,
        };
        if let Some(t) = &mut self.telemetry {
            t.on_transmit(l, self.links[l].rate.rate(), now, pkt, backlog.bytes);
        }
        self.observers.on_transmit(now, id, pkt, tx, backlog);
        self.propagate(l, done, i, None);
    }

    /// The packet in slot `i`, just admitted at link `l` that [departs at
    /// enqueue](Link::departs_at_enqueue), waits for the packets ahead of it: its transmission
    /// starts at `start`, later than now, and is done at `done`. It is put in the pipe, queued,
    /// with its arrival time at the far end.
    pub(super) fn send_later(&mut self, l: usize, i: u32, start: Time, done: Time) {
        let now = self.now;
        let link = &mut self.links[l];
        link.queue_for(start, done, !link.pipe.has_queued());
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
    pub(super) fn start_due(&mut self, l: usize, t: Time) {
        let id = LinkId(l as u32);
        let link = &mut self.links[l];
        if !link.eager() {
            return;
        }
        // The queued packets are the pipe's last ones: each is read in place when its
        // transmission starts. Their starts and ends were fixed when they were queued
        // (`Link::schedule`): each starts when the one ahead is done (it was queued behind
        // it), so the first's start is the last's end less their transmissions' times
        // (`Link::queued_for`), or, where that was too long to keep, its own end less its
        // own.
        while link.pipe.has_queued() {
            let known = link.queued_start();
            if known.is_some_and(|start| start > t) {
                return;
            }
            let Some((pkt, queued_at, arrival)) = self.slab.first_queued(&link.pipe) else {
                unreachable!("the pipe has queued packets");
            };
            let start = known.unwrap_or_else(|| link.started(pkt.size, arrival));
            debug_assert_eq!(start, link.started(pkt.size, arrival));
            if start > t {
                return;
            }
            let backlog = link.start_sending(pkt.size);
            let done = Time(arrival.0 - link.delay.0);
            self.packet_hops += 1;
            let tx = Transmit {
                sojourn: start - queued_at,
                marked: false, // marks are made on arrival
                done,
            };
            if let Some(t) = &mut self.telemetry {
                t.on_transmit(l, link.rate.rate(), start, pkt, backlog.bytes);
            }
            self.observers.on_transmit(start, id, pkt, tx, backlog);
            self.slab.start_first_queued(&mut link.pipe);
            link.started_until(done);
        }
    }

    /// [`start_due`](Self::start_due) on every link that departs at enqueue.
    /// (Called by the run's own events and at the end of a stretch: each link's work is its
    /// sending side's, and what follows the run's.)
    pub(super) fn start_all_due(&mut self, t: Time) {
        for l in 0..self.links.len() {
            if self.links[l].eager() {
                self.events.by(Entity::sender(l), self.now);
                self.start_due(l, t);
            }
        }
        self.events.by(Entity::RUN, self.now);
    }

    /// `p` is lost at link `l`: counted for conservation, reported to the observers.
    pub(super) fn drop(&mut self, l: LinkId, p: &Packet, why: DropReason, backlog: Backlog) {
        if let Some(t) = &mut self.telemetry {
            t.on_drop(p);
        }
        let (f, dir) = (p.flow.0 as usize, usize::from(!p.kind.is_forward()));
        match &mut self.part {
            None => self.ledger.count_drop(f, dir, p.size as u64),
            Some(part) => {
                if part.holds(f) {
                    self.ledger.count_drop(f, dir, p.size as u64);
                } else {
                    self.ledger.count_stray_drop(f, dir, p.size as u64);
                }
                part.touched(p.flow, self.events.position());
            }
        }
        self.observers.on_drop(self.now, l, p, why, backlog);
    }

    pub(super) fn start_tx(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        let id = LinkId(l as u32);
        let Some(held) = &mut link.held else {
            return; // a link that departs at enqueue never serialises on its own
        };
        let queue = &mut held.queue;
        let next = queue.dequeue(&mut self.pools, now, &mut self.head_drops);
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
            let done = match link.extra.as_mut().and_then(|x| x.capacity.as_mut()) {
                // A trace's opportunities carry it, from those after it was queued.
                Some((trace, tx)) => tx.serve(trace, now, Time(now.0 - d.sojourn.0), d.packet.size),
                None => now + link.tx_time(d.packet.size),
            };
            if let Some(h) = &mut link.held {
                h.transmitting = Some(d.packet);
            }
            self.events.schedule(done, Event::TxDone(l as u32));
            let tx = Transmit {
                sojourn: d.sojourn,
                marked: d.marked,
                done,
            };
            if let Some(t) = &mut self.telemetry {
                t.on_transmit(l, self.links[l].rate.rate(), now, &d.packet, backlog.bytes);
            }
            self.observers.on_transmit(now, id, &d.packet, tx, backlog);
        }
    }

    pub(super) fn tx_done(&mut self, l: usize) {
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
            .alloc(pkt, self.ledger.route(pkt.flow.0 as usize, dir));
        let link = &mut self.links[l];
        match link.extra.as_mut().and_then(|x| x.jitter.as_mut()) {
            None => self.propagate(l, now, i, None),
            Some((j, rng)) => {
                let (reorder, arrival) = (j.reorder, now + j.delay(link.delay, rng));
                if reorder {
                    self.propagate_unordered(l, arrival, i);
                } else {
                    self.propagate_after(l, arrival, i, None);
                }
            }
        }
        self.start_tx(l);
    }

    /// The packet in slot `i`, serialised on link `l` whose jitter reorders, reaches the far
    /// end at `arrival`, whatever the packets ahead of it do: it waits in the link's heap of
    /// such packets, not in its pipe, with an event of its own.
    fn propagate_unordered(&mut self, l: usize, arrival: Time, i: u32) {
        let x = self.links[l]
            .extra
            .as_mut()
            .expect("a link with jitter has extras");
        let pkt = self.slab.packet_mut(i);
        pkt.hop += 1;
        let (pkt, route) = self.slab.packet_and_route(i);
        let next_hop = self.routes.next(route, pkt.hop, Some(l), pkt).0;
        x.sent += 1;
        x.unordered
            .push(std::cmp::Reverse((arrival, x.sent, i, next_hop)));
        self.events.schedule(arrival, Event::Land(l as u32));
    }

    /// The earliest packet propagating out of order on link `l` reaches its far end.
    fn land(&mut self, l: usize) {
        let x = self.links[l]
            .extra
            .as_mut()
            .expect("a link with jitter has extras");
        let std::cmp::Reverse((_, _, i, then)) = x.unordered.pop().expect("one packet per event");
        self.arrived(i, then);
    }

    /// The packet in slot `i`, serialised on link `l` by `done`, enters its pipe — still queued
    /// if `queued` is the time it was (on a link that departs at enqueue). There it already
    /// counts the hop: its `hop` is the index, in its route, of the link it enters next.
    #[inline(always)]
    pub(super) fn propagate(&mut self, l: usize, done: Time, i: u32, queued: Option<Time>) {
        let delay = self.links[l].delay;
        self.propagate_after(l, done + delay, i, queued)
    }

    /// [`propagate`](Self::propagate) of a packet due at the far end at `due` (its own
    /// propagation delay drawn, on a link with jitter), or with the packet ahead if later.
    #[inline(always)]
    pub(super) fn propagate_after(&mut self, l: usize, due: Time, i: u32, queued: Option<Time>) {
        let link = &mut self.links[l];
        self.slab.packet_mut(i).hop += 1;
        // Where it goes at the far end, read now, while its route is at hand.
        let (pkt, route) = self.slab.packet_and_route(i);
        let next_hop = self.routes.next(route, pkt.hop, Some(l), pkt).0;
        let (arrival, alone) = self
            .slab
            .link_back(&mut link.pipe, i, due, queued, next_hop);
        if self.part.as_ref().is_some_and(|p| p.posts(l)) {
            self.post(l, i, arrival, next_hop);
            return;
        }
        if alone {
            // The pipe's first packet: its arrival is the link's next event.
            self.events.schedule_arrival(arrival, l as u32, i, next_hop);
        }
    }

    /// When the cursor enters a new slot of the event queue, a few microseconds before its
    /// events (at 10,000 flows, some 30 of them): fetches, for each packet delivered in it,
    /// its flow's books and the entry that says where its endpoint is. At 10,000 flows they
    /// were last seen milliseconds ago, and the books were the slowest load of a delivery;
    /// one event ahead is too late for them.
    #[cold]
    pub(super) fn prefetch_deliveries(&self) {
        for ev in self.events.current() {
            if let Event::Arrive(_, _, then) = *ev {
                if let Some(e) = Routes::delivers_to(then) {
                    if let (Some(b), Some(entry)) = (
                        self.ledger.get(e.flow().0 as usize),
                        self.endpoints.peek(e.index()),
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
    pub(super) fn prefetch_link(&self, l: u32) {
        if let Some(link) = self.links.get(l as usize) {
            prefetch(link);
            self.observers.monitor.prefetch_link(l as usize);
        }
    }

    /// The first packet in link `l`'s pipe, in slot `slot`, reaches the far end, whence it goes
    /// to `then` (as [`Event::Arrive`] says).
    pub(super) fn arrive(&mut self, l: usize, slot: u32, then: u32) {
        if self.slab.front_is_queued(&self.links[l].pipe) {
            // Its transmission, done by now, is reported before it leaves (the queue was not
            // read since it started).
            self.start_due(l, self.now);
        }
        let link = &mut self.links[l];
        let Some((i, next)) = self.slab.take_front(&mut link.pipe) else {
            return;
        };
        debug_assert_eq!(i, slot, "an arrival names its link's first packet");
        if let Some((next, next_then)) = next {
            let head = link.pipe.head();
            self.events
                .schedule_arrival(next, l as u32, head, next_then);
            // The packet behind goes on to this link next, a link-event from now: at 10,000
            // flows an access link, last seen milliseconds ago.
            self.prefetch_link(next_then);
        }
        self.arrived(i, then);
    }

    /// The packet in slot `i`, out of its link's pipe, is at the link's far end: it moves on to
    /// its next link `then`, or is delivered to its endpoint.
    #[inline(always)]
    fn arrived(&mut self, i: u32, then: u32) {
        match then {
            // It moves on in its slot.
            hop if Routes::delivers_to(hop).is_none() => self.enqueue(hop as usize, i),
            _ => {
                let mut pkt = self.slab.release(i);
                let flow = pkt.flow.0 as usize;
                let dir = usize::from(!pkt.kind.is_forward());
                let b = self.ledger.books_mut(flow);
                b.arrived[dir] += 1;
                if let Some(p) = &mut self.part {
                    p.touched(pkt.flow, self.events.position());
                }
                // The endpoint nearly always answers (an ACK, or data for an ACK) on the
                // route back, whose first link, an access link at 10,000 flows last seen
                // milliseconds ago, is fetched while the endpoint works.
                let back = b.route[1 - dir];
                self.prefetch_link(self.routes.first_hint(back).0);
                let e = EndpointSlot::destination(&pkt).index();
                let now = self.now;
                if let Some(t) = &mut self.telemetry {
                    match t.on_deliver(pkt.flow, pkt.payload, pkt.sent_at) {
                        Delivered::Data => pkt.payload = acclab_core::packet::Payload::None,
                        // The records of the data packet this ACK echoes, before the ACK.
                        Delivered::Ack(int) => {
                            self.endpoints.get_mut(e).handle_telemetry(now, &int)
                        }
                        Delivered::Other => {}
                    }
                }
                self.observers.on_deliver(now, &pkt);
                self.service(e, |ep| ep.handle_packet(now, &pkt));
            }
        }
    }

    /// Flow `f`, of which nothing is left, is retired: its endpoints freed, their statistics and
    /// its counts kept, its books' page freed if it was the last of its flows there.
    pub(super) fn retire_now(&mut self, f: FlowId) {
        let counts = self.ledger.retire(f.0 as usize);
        self.endpoints.retire(f, counts);
    }

    /// Closing flow `f` is retired if nothing of it is left: no packet in the network, no
    /// timer at either end; otherwise it is looked at again a round trip later (an event not
    /// counted among the run's events: it is the simulator's housekeeping, and nearly every
    /// flow is retired at once, when its last ACK arrives).
    #[cold]
    pub(super) fn retire(&mut self, f: FlowId) {
        let i = f.0 as usize;
        let in_network = self
            .ledger
            .counts(i)
            .iter()
            .any(|c| c.injected != c.arrived + c.dropped);
        if in_network || !self.endpoints.idle(f) {
            let later = self.now + self.scenario.base_rtt(i).max(Duration(1));
            let sender = self.entities.endpoint(EndpointSlot::sender(f).index());
            self.events.schedule_retire(later, sender, f.0);
            return;
        }
        self.retire_now(f);
        self.observers.on_flow_done(self.now, f.0);
    }
}
