//! One run on many cores (issue 56 §2): a conservative parallel engine whose results are the
//! serial engine's, byte for byte.
//!
//! **Partitions.** The network's nodes are split into partitions
//! ([`Partitioning::by_racks`](crate::parallelism::Partitioning::by_racks): racks whole, pods
//! together). A partition holds every entity of its nodes (`events.rs`): the sending side of
//! the links out of them, the receiving side of the links into them, the endpoints on them.
//! Each partition runs on its own thread, in a **replica**: a simulator built from the whole
//! scenario (so every random draw at build is the same; one scenario shared by all, not a copy
//! each) whose event queue keeps only the events
//! of entities it holds (a flow's start goes to both its sender's and its receiver's
//! partitions: the receiver's opens the flow's endpoints there), and which touches only what
//! it holds.
//!
//! **Windows.** Time is cut into windows one *lookahead* long: the smallest propagation delay
//! of a link between two partitions (over the run: a scenario event that shortens one counts).
//! A packet that a partition puts on such a link at time t reaches the far end at t + delay or
//! later, so a window's packets into another partition are due in a later window: each is
//! posted as a message ([`Msg`]: the packet, its route, its arrival time and next hop) and, at
//! the window's end, the receiving partition puts it in its own copy of the link's pipe and
//! schedules its arrival. The sending partition keeps the packet in its pipe too (a link that
//! departs at enqueue holds its queue there) and frees it once its arrival time has passed.
//!
//! **Why the results are the serial run's.** Every event an entity handles, and every event it
//! schedules, is the serial run's in the serial order: the event queue's tie rule uses only
//! what the scheduling entity knows, and an arrival's key depends on its time and link alone
//! (`events.rs`), so the receiving partition schedules it with the key the serial run gives it.
//! The run's own events (samples, the measurement window's edges, scenario events) are in
//! every replica; each partition stops after one, and the coordinator (the calling thread,
//! which also runs partition 0) lets the run's monitor see the whole network then: each link
//! from the partition of its sending side, each flow's sender and receiver from theirs
//! ([`Joined`]), the partitions' counts pulled into the run's monitor (`Monitor::pull`).
//! A transmission on a link that departs at enqueue is reported to the monitor when its
//! partition next reads the queue rather than at the far end's arrival: the link's reports are
//! the same, in the same order, and the monitor keeps them per link.
//!
//! **Retirement.** A finite flow is retired once nothing of it is left (`endpoints.rs`): a
//! fact about two partitions, so the sender's partition tells the coordinator when the
//! transfer is complete (with the place of that event in the run's order: its key, or for
//! an arrival over a link without delay its cause's, `EventQueue::position`), and the
//! coordinator looks at the flows at a window's end: one with none of its packets in the
//! network and neither endpoint with a timer is retired. Retirement changes nothing the run
//! does (a retired flow's statistics are kept), but it is when a streamed flow's delay
//! histogram goes to delays.csv, so it happens in the serial run's order: each partition
//! keeps, per flow, the place of the last event that left less of it (a packet delivered or
//! dropped, an endpoint left without a timer), and from the latest of these the coordinator
//! works out the serial run's retirement — at the completing event if nothing was left then,
//! else at the first of the checks the serial run makes every round trip after it
//! (`Simulator::retire`), whose keys are known ([`retirement_key`]) — and retires the flows
//! due by the window's end in that order, keeping the others for a later window.
//!
//! **Jitter.** A link with jitter draws each packet's delay where the packet leaves, in its
//! sending side's partition, from the link's own random stream, as the serial run does; on a
//! link between partitions the lookahead is the shortest delay its jitter can draw
//! (`Jitter::min_delay`: none for the distributions unbounded below, which leaves the run
//! serial).
//!
//! **Observers beside the monitor** (a packet trace, an observer of the library's user) hear
//! the serial run's reports in its order: each partition records its per-packet reports with
//! their events' keys, and the coordinator replays them merged (`replay.rs`) at each of the
//! run's own events, every 64 windows and at the end; it calls the run's hooks (samples, the
//! window's edges) at the run's own events with the network joined, after the records so far,
//! and a flow's end when it retires the flow, after the records up to its retirement (it
//! retires flows at each of the run's own events too, those the serial run retires before).
//!
//! **In-band telemetry** (HPCC, `telemetry.rs`): a data packet's records are kept beside it,
//! in its partition's store. A packet posted into another partition goes without them; they
//! follow in the window's mail once the link between the partitions has written its own, at
//! the transmission's start (on a link that departs at enqueue, whose transmissions are
//! reported lazily, each window's are reported at its end: `start_posted`), a lookahead or
//! more before the packet arrives there, where they pair with it by the link's order. Records
//! delivered to a receiver whose flow's sender is in another partition go there in the
//! window's mail, before the ACK that echoes them can arrive (a lookahead later at least).
//! That ACK passes over older records and takes its own; the sender's partition holds every
//! record delivered a lookahead before it, which is all it looks at when each flow's packets
//! arrive in the order sent — so with jitter that reorders, or dualpi2 queues, the run stays
//! serial.
//!
//! **Not yet parallel** (the run is serial, and [`Simulator::run_parallel`] says why): in-band
//! telemetry with packets that may be reordered, jitter that reorders on a link between
//! partitions (each packet lands with an event of the sending side's), endpoints given from
//! outside (live mode), and networks with one partition or no lookahead.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use acclab_core::config::QueueConfig;
use acclab_core::packet::Payload;
use acclab_core::queue::QueueState;
use acclab_core::telemetry::Telemetry;
use acclab_core::transport::{EndpointSlot, EndpointStats, Side};
use acclab_core::{Duration, FlowId, Packet, Time};
use acclab_scenario::{EventAction, LinkId, Scenario};

use super::books::PacketCounts;
use super::observers::View;
use super::replay::{replay, replay_until, Recorded, Recorder, Stamp};
use super::Simulator;
use crate::events::{retirement_key, Event, END_KEY};
use crate::monitor::Monitor;
use crate::observe::{NetworkView, Observer};
use crate::parallelism::Partitioning;
use crate::pipes::Pipe;

/// Which partition holds what.
pub(super) struct Plan {
    parts: usize,
    /// The partition of each link's sending side, and of its receiving side.
    sender: Vec<u32>,
    receiver: Vec<u32>,
    /// The partition of each flow's sender, and of its receiver.
    tx: Vec<u32>,
    rx: Vec<u32>,
    /// Each shared buffer's partition (its switch's).
    pools: Vec<u32>,
    lookahead: Duration,
    /// Each partition's records of what it reported, when the run has observers beside the
    /// monitor (`replay.rs`); empty otherwise.
    recorded: Vec<Arc<Recorded>>,
}

impl Plan {
    /// Whether partition `me` holds flow `f`'s sender or receiver (and so starts and retires
    /// it).
    fn holds(&self, me: u32, f: usize) -> bool {
        self.tx[f] == me || self.rx[f] == me
    }

    /// `parts` partitions of `sc` and their lookahead, or why it cannot run in parallel.
    fn of(sc: &Scenario, parts: usize) -> Result<Plan, String> {
        let p = Partitioning::by_racks(sc, parts as u32);
        let node = |n: acclab_scenario::NodeId| p.of_node[n.0 as usize];
        let sender: Vec<u32> = sc.links.iter().map(|l| node(l.from)).collect();
        let receiver: Vec<u32> = sc.links.iter().map(|l| node(l.to)).collect();
        // The lookahead: the shortest delay a packet can have on a link between partitions
        // (its delay events' and its jitter's too), and the first such link.
        let mut lookahead: Option<(Duration, usize)> = None;
        for (i, l) in sc.links.iter().enumerate() {
            if sender[i] == receiver[i] {
                continue;
            }
            let mut d = l.delay;
            for e in &sc.events {
                if let EventAction::SetDelay { link, delay } = e.action {
                    if link.0 as usize == i {
                        d = d.min(delay);
                    }
                }
            }
            if let Some(j) = &l.jitter {
                if j.reorder {
                    // Its packets land each with an event of the sending side's (`Event::Land`).
                    return Err(format!(
                        "link {} between partitions has jitter that reorders (not parallel yet)",
                        l.name
                    ));
                }
                d = j.min_delay(d);
            }
            if lookahead.is_none_or(|(x, _)| d < x) {
                lookahead = Some((d, i));
            }
        }
        let used = {
            let mut u: Vec<u32> = p.of_node.clone();
            u.sort_unstable();
            u.dedup();
            u.len()
        };
        let Some((lookahead, shortest)) = lookahead.filter(|_| used > 1) else {
            return Err("the network has a single partition".into());
        };
        if lookahead.0 == 0 {
            return Err(format!(
                "link {} between partitions can have no propagation delay (no lookahead{})",
                sc.links[shortest].name,
                if sc.links[shortest].jitter.is_some() {
                    ": its jitter reaches zero"
                } else {
                    ""
                }
            ));
        }
        Ok(Plan {
            parts,
            sender,
            receiver,
            tx: (0..sc.flows.len())
                .map(|i| node(sc.flows.ends(i).0))
                .collect(),
            rx: (0..sc.flows.len())
                .map(|i| node(sc.flows.ends(i).1))
                .collect(),
            pools: sc.shared_buffers.iter().map(|b| node(b.node)).collect(),
            lookahead,
            recorded: Vec::new(),
        })
    }
}

/// What a replica knows of its partition.
pub(super) struct Part {
    me: u32,
    plan: Arc<Plan>,
    /// The packets put this window on links into other partitions, per partition.
    out: Vec<Vec<Msg>>,
    /// Flows whose sender (held here) completed its transfer, for the coordinator, with the
    /// place of the event at which it did (where the serial run first checks whether anything
    /// of the flow is left).
    pub(super) closing: Vec<(FlowId, u128)>,
    /// For each flow, the place of the last event here that left less of it in the network: one
    /// of its packets delivered or dropped, one of its endpoints left without a timer (0:
    /// none). Once nothing of a flow is left, the latest of the partitions' is when that
    /// became so.
    touched: Vec<u128>,
    /// Whether each flow's sender and receiver, if held here, had a timer when last serviced.
    timed: Vec<[bool; 2]>,
    /// In a run with in-band telemetry: the links into other partitions that depart at
    /// enqueue and have posted a packet with records whose transmission may not have been
    /// reported yet (`Simulator::start_posted`), and which links are listed.
    unstarted: Vec<u32>,
    listed: Vec<bool>,
}

impl Part {
    /// Whether a packet put on link `l` goes to another partition.
    #[inline(always)]
    pub(super) fn posts(&self, l: usize) -> bool {
        self.plan.receiver[l] != self.me
    }

    /// Whether flow `f`'s sender is held here.
    pub(super) fn holds_sender(&self, f: u32) -> bool {
        self.plan.tx[f as usize] == self.me
    }

    /// Whether flow `f`'s sender or receiver is held here (it is retired here).
    pub(super) fn holds(&self, f: usize) -> bool {
        self.plan.holds(self.me, f)
    }

    /// Less of flow `f` is left in the network after the event at place `key` (the latest so
    /// far here): one of its packets was delivered or dropped.
    #[inline(always)]
    pub(super) fn touched(&mut self, f: FlowId, key: u128) {
        self.touched[f.0 as usize] = key;
    }

    /// The endpoint at `slot` has a timer (`timed`) after the event at place `key`; losing
    /// its last is a step towards the flow's retirement.
    #[inline(always)]
    pub(super) fn timer_is(&mut self, slot: EndpointSlot, timed: bool, key: u128) {
        let f = slot.flow();
        let was = &mut self.timed[f.0 as usize][usize::from(slot.side() == Side::Receiver)];
        let lost = *was && !timed;
        *was = timed;
        if lost {
            self.touched(f, key);
        }
    }
}

/// A packet on its way into another partition: its link, where its route begins, where it
/// goes at the far end, when it gets there.
#[derive(Clone, Copy)]
pub(super) struct Msg {
    l: u32,
    route: u32,
    next_hop: u32,
    arrival: Time,
    pkt: Packet,
}

impl Simulator {
    /// The packet in slot `i`, just put in link `l`'s pipe (due at the far end at `arrival`,
    /// then going to `next_hop`), is posted to the partition of the link's far end. The pipe
    /// keeps it (its queue, on a link that departs at enqueue); the packets ahead of it that
    /// have arrived by now are freed.
    #[cold]
    #[inline(never)]
    pub(super) fn post(&mut self, l: usize, i: u32, arrival: Time, next_hop: u32) {
        let (pkt, route) = self.slab.packet_and_route(i);
        let part = self.part.as_mut().expect("posting in a partition");
        if self.telemetry.is_some()
            && matches!(pkt.payload, Payload::Telemetry(_))
            && self.links[l].eager()
            && !part.listed[l]
        {
            // Its records go once its transmission has started (`start_posted`).
            part.listed[l] = true;
            part.unstarted.push(l as u32);
        }
        let to = part.plan.receiver[l] as usize;
        part.out[to].push(Msg {
            l: l as u32,
            route,
            next_hop,
            arrival,
            pkt: *pkt,
        });
        let now = self.now;
        let pipe = &mut self.links[l].pipe;
        while !self.slab.front_is_queued(pipe)
            && self.slab.front_arrival(pipe).is_some_and(|a| a <= now)
        {
            let (j, _) = self.slab.take_front(pipe).expect("a front");
            self.slab.free(j);
        }
    }

    /// This partition has handled one of the run's own events, which every partition
    /// handles: partition 0 counts it.
    pub(super) fn stop_at_run_event(&mut self) {
        if self.part.as_ref().is_some_and(|p| p.me != 0) {
            self.event_count -= 1;
        }
    }

    /// At a window's end in a run with in-band telemetry: every transmission due by `limit`
    /// on the links into other partitions that depart at enqueue is reported now (as the
    /// serial run would when it next read the queue: nothing has been queued there since),
    /// so that the links' records go with the window's mail, ahead of their packets' arrival
    /// in the other partition (one lookahead or more after the transmission's start).
    fn start_posted(&mut self, limit: Time) {
        let Some(part) = self.part.as_mut() else {
            return;
        };
        let mut links = std::mem::take(&mut part.unstarted);
        let mut k = 0;
        while k < links.len() {
            let l = links[k] as usize;
            self.start_due(l, limit);
            if self.links[l].pipe.has_queued() {
                k += 1;
            } else {
                self.part.as_mut().expect("a partition").listed[l] = false;
                links.swap_remove(k);
            }
        }
        self.part.as_mut().expect("a partition").unstarted = links;
    }

    /// A packet from another partition enters this one's copy of its link's pipe.
    fn ingest(&mut self, m: &Msg) {
        let mut pkt = m.pkt;
        if let Some(t) = &mut self.telemetry {
            t.packet_from(m.l, &mut pkt);
        }
        let i = self.slab.alloc(pkt, m.route);
        let pipe = &mut self.links[m.l as usize].pipe;
        let (arrival, alone) = self.slab.link_back(pipe, i, m.arrival, None, m.next_hop);
        if alone {
            self.events.schedule_arrival(arrival, m.l, i, m.next_hop);
        }
    }

    /// Why this run cannot be parallel, if it cannot.
    fn not_parallel(&self) -> Option<&'static str> {
        if self.telemetry.is_some() && self.may_reorder() {
            Some("in-band telemetry (HPCC) with packets that may arrive out of order (reordering jitter, dualpi2) is not parallel yet")
        } else if self.endpoints.are_given() {
            Some("endpoints given from outside (live mode) are not parallel")
        } else if self.event_count != 0 {
            Some("the run has started")
        } else {
            None
        }
    }

    /// Whether a flow's packets may arrive out of order: a link whose jitter reorders, a queue
    /// that may put a flow's packets in two queues (dualpi2: a classic packet marked CE
    /// upstream goes to the L4S queue). (The scenario refuses HPCC with packet spraying.) In-band
    /// telemetry is parallel only without: an ACK takes the records of the packet it echoes
    /// and passes over older ones at the sender (`telemetry.rs`), which in a parallel run
    /// holds every record delivered a lookahead or more before — all it needs when the
    /// records come in the order sent, not when a record delivered since (not there yet) is
    /// older than the echo.
    fn may_reorder(&self) -> bool {
        let sc = &self.scenario;
        sc.links.iter().any(|l| {
            l.jitter.is_some_and(|j| j.reorder) || matches!(l.queue, QueueConfig::DualPi2(_))
        })
    }

    /// Runs to the end as [`run`](Self::run) does, on `threads` partitions each on its own
    /// thread (the calling thread among them), with the serial run's results byte for byte.
    /// Returns `Err` with the reason, having run nothing, when the run cannot be parallel; the
    /// caller runs it serially then.
    pub fn run_parallel(
        &mut self,
        threads: usize,
        progress: &mut dyn FnMut(Time),
    ) -> Result<(), String> {
        if threads < 2 {
            return Err("one thread".into());
        }
        if let Some(why) = self.not_parallel() {
            return Err(why.into());
        }
        let mut plan = Plan::of(&self.scenario, threads)?;
        if self.observers.has_extra() {
            plan.recorded = (0..threads).map(|_| Arc::default()).collect();
        }
        let plan = Arc::new(plan);
        let replicas: Vec<Replica> = (0..threads)
            .map(|me| {
                Replica(Mutex::new(Simulator::replica(
                    &self.scenario,
                    me as u32,
                    &plan,
                )))
            })
            .collect();
        let mail: Vec<Mutex<Vec<Msg>>> = (0..2 * threads * threads)
            .map(|_| Mutex::new(Vec::new()))
            .collect();
        let int_mail: Vec<Mutex<IntMail>> = (0..2 * threads * threads)
            .map(|_| Mutex::default())
            .collect();
        let barrier = SpinBarrier::new(threads);
        let run = Shared {
            plan: &plan,
            replicas: &replicas,
            mail: &mail,
            int_mail: &int_mail,
            barrier: &barrier,
            end: self.end,
        };
        std::thread::scope(|s| {
            for me in 1..threads {
                let run = &run;
                s.spawn(move || run.partition(me, None));
            }
            run.partition(0, Some((self, progress)));
        });
        let mut replicas: Vec<Simulator> = replicas
            .into_iter()
            .map(|m| m.0.into_inner().expect("no partition panicked"))
            .collect();
        replay(&plan.recorded, &mut self.observers.extra);
        self.absorb(&mut replicas, &plan);
        self.observers.monitor.samples_over();
        progress(self.end);
        Ok(())
    }

    /// Runs to the end on `threads` threads: in parallel ([`run_parallel`](Self::run_parallel))
    /// when `threads` > 1 and the run can be, serially otherwise. Returns why a run asked to
    /// be parallel was serial, if it was.
    pub fn run_on(&mut self, threads: usize, progress: &mut dyn FnMut(Time)) -> Option<String> {
        let why = match threads {
            0 | 1 => None,
            n => match self.run_parallel(n, progress) {
                Ok(()) => return None,
                Err(why) => Some(why),
            },
        };
        self.run(progress);
        why
    }

    /// Partition `me`'s replica of `scenario` under `plan`.
    fn replica(scenario: &Arc<Scenario>, me: u32, plan: &Arc<Plan>) -> Simulator {
        let mut sim = Simulator::new(scenario.clone());
        sim.observers.monitor.counts_only();
        // Its pages freed once the flows it retires (those it holds) are: a flow that lives to
        // the end, never retired, keeps its page.
        let endpoints = &sim.endpoints;
        let kept: Vec<bool> = (0..scenario.flows.len())
            .map(|f| plan.holds(me, f) || endpoints.lives_throughout(FlowId(f as u32)))
            .collect();
        sim.endpoints.hold_only(|f| kept[f]);
        sim.ledger.hold_only(|f| kept[f]);
        sim.events.retain(|ev| match *ev {
            Event::FlowStart(f) => plan.holds(me, f as usize),
            Event::FlowStop(f) => plan.tx[f as usize] == me,
            _ => true,
        });
        sim.part = Some(Box::new(Part {
            me,
            plan: plan.clone(),
            out: vec![Vec::new(); plan.parts],
            closing: Vec::new(),
            touched: vec![0; scenario.flows.len()],
            timed: vec![[false; 2]; scenario.flows.len()],
            unstarted: Vec::new(),
            listed: vec![false; scenario.links.len()],
        }));
        if let Some(t) = &mut sim.telemetry {
            t.partition(
                (0..scenario.links.len())
                    .map(|l| plan.sender[l] == me && plan.receiver[l] != me)
                    .collect(),
                plan.tx.iter().map(|&p| p != me).collect(),
            );
        }
        if let Some(r) = plan.recorded.get(me as usize) {
            sim.observers.extra.push(Box::new(Recorder(r.clone())));
            sim.probe = Some(Box::new(Stamp(r.clone())));
        }
        sim
    }

    /// The run's own event `ev`, which every partition has just handled: the run's monitor
    /// sees the whole network.
    fn coordinate(
        &mut self,
        ev: Event,
        pending: &mut Vec<(FlowId, u128)>,
        parts: &mut [MutexGuard<'_, Simulator>],
        plan: &Plan,
    ) {
        self.now = parts[0].now;
        // The flows the serial run retires before this event, in its order among the records.
        let key = parts[0].events.position();
        self.retire_done(pending, parts, plan, key.saturating_sub(1));
        replay(&plan.recorded, &mut self.observers.extra);
        if let Event::Scheduled(i) = ev {
            self.apply_event(i as usize);
            return;
        }
        self.pull(parts, plan, false);
        let joined = Joined { parts, plan };
        let o = &mut self.observers;
        match ev {
            Event::Sample => o.on_sample(self.now, &joined),
            Event::WindowStart => o.on_window_start(self.now, &joined),
            Event::WindowEnd => o.on_window_end(self.now, &joined),
            _ => {}
        }
    }

    /// The partitions' monitors' counts into the run's.
    fn pull(&mut self, parts: &mut [MutexGuard<'_, Simulator>], plan: &Plan, last: bool) {
        let mut monitors: Vec<&mut Monitor> =
            parts.iter_mut().map(|p| &mut p.observers.monitor).collect();
        self.observers
            .monitor
            .pull(&mut monitors, &plan.sender, &plan.rx, last);
    }

    /// With every partition past the event with key `bound` (at a window's end, or at one of
    /// the run's own events, just before it): the flows the partitions found complete are
    /// retired once nothing of them is left (none of their packets in the network, neither
    /// endpoint with a timer) — each at the instant the serial run retires it, in the serial
    /// order, so that the monitor sees them done (and streams their delays) as it does there,
    /// and the other observers hear of it among the partitions' records as there.
    fn retire_done(
        &mut self,
        pending: &mut Vec<(FlowId, u128)>,
        parts: &mut [MutexGuard<'_, Simulator>],
        plan: &Plan,
        bound: u128,
    ) {
        for p in parts.iter_mut() {
            if let Some(part) = &mut p.part {
                pending.append(&mut part.closing);
            }
        }
        let mut done = Vec::new();
        pending.retain(|&(f, closed)| {
            let i = f.0 as usize;
            let quiet = counted(parts.iter().map(|p| &**p), i)
                .iter()
                .all(|c| c.injected == c.arrived + c.dropped)
                && parts[plan.tx[i] as usize]
                    .endpoints
                    .idle_at(EndpointSlot::sender(f))
                && parts[plan.rx[i] as usize]
                    .endpoints
                    .idle_at(EndpointSlot::receiver(f));
            if !quiet {
                return true;
            }
            let last = parts
                .iter()
                .filter_map(|p| p.part.as_ref().map(|part| part.touched[i]))
                .max()
                .unwrap_or(0);
            let at = self.retirement(f, closed, last);
            if at > bound {
                return true; // the serial run retires it later, or not at all
            }
            done.push((at, f));
            false
        });
        // In the serial order: by the place of the retirement, and of two at one place (two
        // flows done in one event and the arrival it caused over a link without delay, both
        // of one partition), in the order the partition found them done.
        done.sort_by_key(|&(at, _)| at);
        for (at, f) in done {
            let i = f.0 as usize;
            let mut monitors: Vec<&mut Monitor> =
                parts.iter_mut().map(|p| &mut p.observers.monitor).collect();
            self.observers
                .monitor
                .take_delays(&mut monitors, &plan.rx, i);
            replay_until(&plan.recorded, &mut self.observers.extra, at);
            self.observers.on_flow_done(Time((at >> 64) as u64), f.0);
            let (a, b) = (plan.tx[i] as usize, plan.rx[i] as usize);
            parts[a].retire_now(f);
            if b != a {
                parts[b].retire_now(f);
            }
        }
    }

    /// The key of the event at which the serial run retires closing flow `f`, whose sender
    /// completed its transfer at the event with key `closed` and of which nothing was left
    /// after the event with key `last`. The serial run looks at the flow then (`closed`: the
    /// flow retires there if nothing is left, `last` ≤ `closed`), and then every round trip
    /// (`Simulator::retire`: checks with keys of their own), retiring it at the first check
    /// after `last`.
    fn retirement(&self, f: FlowId, closed: u128, last: u128) -> u128 {
        if last <= closed {
            return closed;
        }
        let rtt = self.scenario.base_rtt(f.0 as usize).max(Duration(1)).0;
        let sender = self.entities.endpoint(EndpointSlot::sender(f).index());
        let (t0, tl) = ((closed >> 64) as u64, (last >> 64) as u64);
        let mut k = (tl - t0).div_ceil(rtt).max(1);
        loop {
            let t = t0 + k * rtt;
            let key = retirement_key(Time(t - rtt), Time(t), sender);
            if key > last {
                return key;
            }
            k += 1;
        }
    }

    /// The end of a parallel run: the partitions' state, each part from the partition that
    /// held it, becomes this simulator's, so that its summary and files are the run's.
    /// (Packets still in the network at the end are not moved: this simulator's pipes are
    /// empty, [`packets_in_network`](Self::packets_in_network) reads none.)
    fn absorb(&mut self, parts: &mut [Simulator], plan: &Plan) {
        for (l, &p) in plan.sender.iter().enumerate() {
            std::mem::swap(&mut self.links[l], &mut parts[p as usize].links[l]);
            self.links[l].pipe = Pipe::default();
        }
        for (b, &p) in plan.pools.iter().enumerate() {
            std::mem::swap(&mut self.pools[b], &mut parts[p as usize].pools[b]);
        }
        for f in 0..self.flows.len() {
            let id = FlowId(f as u32);
            let tx = parts[plan.tx[f] as usize].endpoints.stats(id).0;
            let rx = parts[plan.rx[f] as usize].endpoints.stats(id).1;
            // (Copied: the partitions' are packed too, ~50 bytes a flow, and go with them.)
            self.endpoints
                .freeze(id, (tx, rx), counted(parts.iter(), f));
        }
        let mut guards: Vec<&mut Monitor> =
            parts.iter_mut().map(|p| &mut p.observers.monitor).collect();
        self.observers
            .monitor
            .pull(&mut guards, &plan.sender, &plan.rx, true);
        self.event_count = parts.iter().map(|p| p.event_count).sum();
        self.packet_hops = parts.iter().map(|p| p.packet_hops).sum();
        self.time_went_backwards = parts.iter().any(|p| p.time_went_backwards);
        self.now = self.end;
    }
}

/// Flow `f`'s packets (data and ACKs) injected, arrived and dropped (packets, bytes), summed
/// over the partitions: each partition counts those its own entities sent, received, dropped.
fn counted<'a>(parts: impl Iterator<Item = &'a Simulator>, f: usize) -> [PacketCounts; 2] {
    let mut sum = [PacketCounts::default(); 2];
    for p in parts {
        for (s, c) in sum.iter_mut().zip(p.packet_counts(f)) {
            s.injected += c.injected;
            s.arrived += c.arrived;
            s.dropped += c.dropped;
            s.dropped_bytes += c.dropped_bytes;
        }
    }
    sum
}

/// What every partition's thread shares.
struct Shared<'a> {
    plan: &'a Plan,
    replicas: &'a [Replica],
    /// Window k's messages from partition a to b: `mail[(k % 2) * n * n + a * n + b]`.
    mail: &'a [Mutex<Vec<Msg>>],
    /// Window k's in-band telemetry records from partition a to b, likewise.
    int_mail: &'a [Mutex<IntMail>],
    barrier: &'a SpinBarrier,
    end: Time,
}

/// In-band telemetry records for another partition (`telemetry.rs`): those of packets
/// posted to it (by link), and those delivered for senders there (by flow).
#[derive(Default)]
struct IntMail {
    posted: Vec<(u32, Telemetry)>,
    delivered: Vec<(FlowId, Time, Telemetry)>,
}

/// Windows between retirement checks (a retired flow's memory comes back this late).
const RETIRE_EVERY: u64 = 64;

impl Shared<'_> {
    fn lock(&self, p: usize) -> MutexGuard<'_, Simulator> {
        self.replicas[p].0.lock().expect("no partition panicked")
    }

    fn lock_all(&self) -> Vec<MutexGuard<'_, Simulator>> {
        (0..self.replicas.len()).map(|p| self.lock(p)).collect()
    }

    /// The window's in-band telemetry records from partition `sim` to the others, whose
    /// mail boxes begin at `first` (partition b's is `first + b`).
    fn post_records(&self, sim: &mut Simulator, first: usize) {
        let Some(x) = sim.telemetry.as_mut().and_then(|t| t.exchange()) else {
            return;
        };
        for (l, int) in x.posted.drain(..) {
            let to = self.plan.receiver[l as usize] as usize;
            let mut m = self.int_mail[first + to].lock().expect("mail");
            m.posted.push((l, int));
        }
        for (f, sent_at, int) in x.delivered.drain(..) {
            let to = self.plan.tx[f.0 as usize] as usize;
            let mut m = self.int_mail[first + to].lock().expect("mail");
            m.delivered.push((f, sent_at, int));
        }
    }

    /// Partition `me`'s thread; the coordinator's too, with the run's simulator and its
    /// progress report.
    fn partition(
        &self,
        me: usize,
        mut coordinator: Option<(&mut Simulator, &mut dyn FnMut(Time))>,
    ) {
        let _fail = FailOnPanic(self.barrier);
        let n = self.replicas.len();
        let step = self.plan.lookahead.0;
        let mut pending = Vec::new();
        let (mut from, mut k) = (0u64, 0u64);
        loop {
            let limit = Time((from + step - 1).min(self.end.0));
            // The window, stopping at each of the run's own events for the coordinator.
            loop {
                // (The replica's lock is let go before the coordinator takes them all.)
                let stopped = self.lock(me).run_span(limit, &mut |_| {});
                let Some(ev) = stopped else { break };
                self.barrier.wait();
                if let Some((sim, _)) = &mut coordinator {
                    sim.coordinate(ev, &mut pending, &mut self.lock_all(), self.plan);
                }
                self.barrier.wait();
            }
            // Its packets into other partitions, then theirs into this one.
            let box_of = |a: usize, b: usize| ((k % 2) as usize) * n * n + a * n + b;
            {
                let mut sim = self.lock(me);
                if sim.telemetry.is_some() {
                    sim.start_posted(limit);
                    self.post_records(&mut sim, box_of(me, 0));
                }
                let part = sim.part.as_mut().expect("a partition");
                for (to, out) in part.out.iter_mut().enumerate() {
                    if !out.is_empty() {
                        let mut m = self.mail[box_of(me, to)].lock().expect("mail");
                        std::mem::swap(&mut *m, out);
                    }
                }
            }
            self.barrier.wait();
            {
                let mut sim = self.lock(me);
                for from in 0..n {
                    let mut m = self.mail[box_of(from, me)].lock().expect("mail");
                    for msg in m.iter() {
                        sim.ingest(msg);
                    }
                    m.clear();
                    if let Some(t) = &mut sim.telemetry {
                        let mut m = self.int_mail[box_of(from, me)].lock().expect("mail");
                        for (l, int) in m.posted.drain(..) {
                            t.records_from(l, int);
                        }
                        for (f, sent_at, int) in m.delivered.drain(..) {
                            t.delivered_elsewhere(f, sent_at, int);
                        }
                    }
                }
            }
            let last = limit >= self.end;
            if last || k % RETIRE_EVERY == RETIRE_EVERY - 1 {
                self.barrier.wait();
                if let Some((sim, progress)) = &mut coordinator {
                    let mut all = self.lock_all();
                    let bound = (u128::from(limit.0) << 64) | u128::from(u64::MAX);
                    sim.retire_done(&mut pending, &mut all, self.plan, bound);
                    replay(&self.plan.recorded, &mut sim.observers.extra);
                    progress(limit);
                }
                self.barrier.wait();
            }
            if last {
                break;
            }
            from = limit.0 + 1;
            k += 1;
        }
        let mut sim = self.lock(me);
        sim.now = sim.now.max(self.end);
        let now = sim.now;
        if let Some(r) = self.plan.recorded.get(me) {
            r.set_key(END_KEY);
        }
        sim.start_all_due(now);
    }
}

/// A partition's replica, on cache lines of its own: each is written by its thread at every
/// event (its clock, its counts), and two replicas side by side in memory (the scenario they
/// share is not inline to pad them apart) would have each thread's writes evict the lines
/// the other reads (`part`, at every event): 2 threads took 1.25× as long on a k = 8 fabric.
#[repr(align(128))]
struct Replica(Mutex<Simulator>);

/// The whole network as the partitions hold it, for the run's monitor at one of the run's
/// own events: each link's queue from its sending side's partition, each flow's sender and
/// receiver from theirs.
struct Joined<'a, 'b> {
    parts: &'a [MutexGuard<'b, Simulator>],
    plan: &'a Plan,
}

impl Joined<'_, '_> {
    fn view(&self, p: u32) -> View<'_> {
        view!(self.parts[p as usize])
    }
}

impl NetworkView for Joined<'_, '_> {
    fn link_count(&self) -> usize {
        self.plan.sender.len()
    }
    fn queue(&self, l: LinkId) -> &dyn QueueState {
        self.parts[self.plan.sender[l.0 as usize] as usize].links[l.0 as usize].queue()
    }
    fn flow_count(&self) -> usize {
        self.plan.tx.len()
    }
    fn flow_times(&self, f: usize) -> (Time, Option<Time>) {
        self.view(0).flow_times(f)
    }
    fn endpoint_stats(&self, f: usize) -> (EndpointStats, EndpointStats) {
        (
            self.view(self.plan.tx[f]).endpoint_stats(f).0,
            self.view(self.plan.rx[f]).endpoint_stats(f).1,
        )
    }
    fn cc_state(&self, f: usize) -> acclab_core::transport::CcState {
        self.view(self.plan.tx[f]).cc_state(f)
    }
}

/// A barrier for the partitions' threads at every window's end (a million windows in a
/// run): it spins, as a window's work is short, and yields the core after a while, so that a
/// busy machine (a partition's thread descheduled) costs time, not progress.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// Set when a partition's thread panicked: the others stop waiting for it and panic too,
    /// so that the run ends with the first panic rather than hanging.
    failed: std::sync::atomic::AtomicBool,
}

/// Marks the barrier failed if its thread unwinds.
struct FailOnPanic<'a>(&'a SpinBarrier);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Ordering::Release);
        }
    }
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            failed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if self.failed.load(Ordering::Acquire) {
                // Unwinds without a panic message of its own: the thread that failed said
                // why (or was interrupted, which is no failure to report).
                std::panic::resume_unwind(Box::new("another partition of the parallel run failed"));
            }
            if spins < 2_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The partitions' replicas share the run's scenario rather than each holding a copy (a
    /// workload's scenario holds every flow), and each replica is on cache lines of its own.
    #[test]
    fn replicas_share_the_scenario_and_no_cache_line() {
        let text = acclab_scenario::templates::fat_tree_websearch(4, 0.5, 1);
        let sim = Simulator::new(acclab_scenario::parse(&text, "k4.toml").unwrap());
        let plan = Arc::new(Plan::of(&sim.scenario, 2).unwrap());
        let replica = Simulator::replica(&sim.scenario, 1, &plan);
        assert!(Arc::ptr_eq(&sim.scenario, &replica.scenario));
        assert_eq!(std::mem::size_of::<Replica>() % 128, 0);
        assert_eq!(std::mem::align_of::<Replica>(), 128);
    }
}
