//! A link of the simulator: its queue discipline, transmitter and propagation pipe, laid out
//! for the cache.

use acclab_core::config::QueueConfig;
use acclab_core::link::{CapacityTrace, Jitter, LossProcess, TraceTransmitter};
use acclab_core::queue::droptail::{DropTail, TailDropLedger};
use acclab_core::queue::shared_buffer::{SharedBuffer, SharedPort};
use acclab_core::queue::{
    Backlog, Dequeued, Dropped, Enqueued, QueueDiscipline, QueueState, QueueStats,
};
use acclab_core::{rng, Duration, Packet, Rate, Reciprocal, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::pipes::{Pipe, Slab};
use acclab_scenario::{EventAction, Scenario};

/// One unidirectional link. Laid out for the cache (at 1000 flows a hop rarely finds its link
/// in it): 128 bytes, two lines — the fields every hop reads in the first, the ledger (its
/// admission, transmission, drop and mark counters) in the second; a sample reads both. A link that does not [depart at enqueue](Link::departs_at_enqueue) keeps its
/// discipline and the packet it serialises in a box of their own ([`Held`]), so that the links
/// of the common case stay small.
#[repr(C, align(64))]
pub(super) struct Link {
    /// Packets propagating, with their arrival times (non-decreasing), in the simulator's
    /// [`Slab`]. On a link that departs at enqueue, every packet accepted and not yet arrived:
    /// the queued ones too.
    pub(super) pipe: Pipe,
    /// On a link that departs at enqueue with packets queued: how long their transmissions
    /// take, in ns — so the first of them starts at `tail_done` less this — or `UNKNOWN` if
    /// that does not fit. So a queue brought up to date reads a queued packet's slot only when
    /// its transmission starts, not to learn that it has not (on a fabric, two lines missed
    /// a hop: `Simulator::start_due`). (In the 4 bytes after the pipe: the link stays two
    /// lines.)
    pub(super) queued_for: u32,
    /// The link's rate, with its reciprocal: a transmission time without a division (and
    /// without a branch on the size: fabric links carry data and ACKs mixed).
    pub(super) rate: Reciprocal,
    pub(super) delay: Duration,
    /// On a link that departs at enqueue: when the transmission of the last packet it
    /// accepted is done — the next one starts then, or when it arrives if that is later. (A
    /// link whose pipe is empty has it in the past.) It is the pipe's last arrival less the
    /// delay, kept here so that an enqueue reads neither that packet's slot nor whether there
    /// is one (a miss and a mispredicted branch a hop on a fabric).
    pub(super) tail_done: Time,
    /// Random loss, jitter and a capacity trace, on a link with any of them.
    pub(super) extra: Option<Box<Extra>>,
    /// The discipline holding the link's packets; `None` on a link that departs at enqueue,
    /// whose packets are in its pipe and whose queue is `ledger`.
    pub(super) held: Option<Box<Held>>,
    /// Tail drop's (or step marking's) admission and counters, on a link that departs at
    /// enqueue (unused on the others).
    pub(super) ledger: TailDropLedger,
}

/// What a link has besides a fixed rate, a fixed delay and a queue ([`acclab_core::link`]):
/// kept apart, so that the common link stays two cache lines.
#[derive(Default)]
pub(super) struct Extra {
    /// Random loss before the queue, and its stream.
    pub(super) loss: Option<(LossProcess, rng::Rng)>,
    /// Delay variation, and its stream.
    pub(super) jitter: Option<(Jitter, rng::Rng)>,
    /// The capacity trace the transmitter follows instead of the rate.
    pub(super) capacity: Option<(Arc<CapacityTrace>, TraceTransmitter)>,
    /// On a link whose jitter reorders, its propagating packets (which are in no pipe), by
    /// arrival and then by the order they were sent: (arrival, number sent, slab slot, where
    /// it goes after the link).
    pub(super) unordered: BinaryHeap<Reverse<(Time, u64, u32, u32)>>,
    pub(super) sent: u64,
}

impl Extra {
    /// The extras of link `l` named `name` in a run seeded with `seed`; `None` if it has none.
    pub(super) fn of(l: &acclab_scenario::LinkDef, seed: u64) -> Option<Box<Extra>> {
        let stream = |what: &str| rng::stream(seed, &format!("link:{}:{what}", l.name));
        let x = Extra {
            // The loss stream's name is the one Bernoulli loss always had.
            loss: (!l.loss.is_none()).then(|| (LossProcess::new(l.loss), stream("loss"))),
            jitter: l.jitter.map(|j| (j, stream("jitter"))),
            capacity: l
                .capacity
                .as_ref()
                .map(|c| (c.trace.clone(), TraceTransmitter::default())),
            ..Extra::default()
        };
        let any = x.loss.is_some() || x.jitter.is_some() || x.capacity.is_some();
        any.then(|| Box::new(x))
    }
}

/// What a link that does not [depart at enqueue](Link::departs_at_enqueue) has besides: its
/// discipline and the packet it is serialising.
pub(super) struct Held {
    pub(super) queue: Discipline,
    /// The packet being serialised.
    pub(super) transmitting: Option<Packet>,
    /// The discipline may push a queued packet out on an arrival (FQ-CoDel).
    pub(super) pushes_out: bool,
}

impl Link {
    /// How long serialising `size` bytes takes at the link's rate (`Rate::tx_time`).
    #[inline(always)]
    pub(super) fn tx_time(&self, size: u32) -> Duration {
        self.rate.tx_time(size)
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): a packet of `size` bytes,
    /// just admitted at `now`, is transmitted when those ahead of it are, or now if the link
    /// is idle. Returns when its transmission starts and when it is done.
    #[inline(always)]
    pub(super) fn schedule(&mut self, size: u32, now: Time) -> (Time, Time) {
        let start = now.max(self.tail_done);
        let done = start + self.tx_time(size);
        self.tail_done = done;
        (start, done)
    }

    /// [`queued_for`](Link::queued_for) when it is not known.
    pub(super) const UNKNOWN: u32 = u32::MAX;

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): a packet whose
    /// transmission starts at `start` and is done at `done` (the link's `tail_done` now) joins
    /// its queued packets (`first`: it is the first).
    #[inline(always)]
    pub(super) fn queue_for(&mut self, start: Time, done: Time, first: bool) {
        let tx = Link::known(done - start);
        self.queued_for = match first {
            true => tx,
            false => self.queued_for.saturating_add(tx),
        };
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): the first queued packet's
    /// transmission, done at `done`, has started; the next one's starts then.
    #[inline(always)]
    pub(super) fn started_until(&mut self, done: Time) {
        self.queued_for = Link::known(self.tail_done - done);
    }

    /// `d` as [`queued_for`](Link::queued_for) keeps it.
    #[inline(always)]
    fn known(d: Duration) -> u32 {
        u32::try_from(d.0).unwrap_or(Link::UNKNOWN)
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue) with packets queued: when
    /// the first of them starts its transmission, if known without reading its slot.
    #[inline(always)]
    pub(super) fn queued_start(&self) -> Option<Time> {
        (self.queued_for != Link::UNKNOWN)
            .then(|| Time(self.tail_done.0 - u64::from(self.queued_for)))
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): when the packet that
    /// arrives at the far end at `arrival`, of `size` bytes, started its transmission.
    #[inline(always)]
    pub(super) fn started(&self, size: u32, arrival: Time) -> Time {
        Time(arrival.0 - self.delay.0 - self.tx_time(size).0)
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): the oldest packet in its
    /// ledger, of `size` bytes, starts its transmission. Returns the backlog left.
    #[inline(always)]
    pub(super) fn start_sending(&mut self, size: u32) -> Backlog {
        self.ledger.sent(size);
        self.ledger.backlog()
    }

    /// On a link that [departs at enqueue](Link::departs_at_enqueue): when the last
    /// transmission reported started is done (the first still queued starts then).
    pub(super) fn started_done(&self, slab: &Slab) -> Time {
        match slab.first_queued(&self.pipe) {
            Some((pkt, _, arrival)) => self.started(pkt.size, arrival),
            None => self.tail_done,
        }
    }

    /// Whether a packet's departure is computed when it is enqueued, so that a hop costs one
    /// event (its arrival at the far end) instead of two: the link is a single-band tail-drop
    /// FIFO of its own, or one marking at a step threshold on arrival (`step-ecn`: whether it
    /// marks is known from the queue it finds), not sharing a switch's buffer (the order
    /// packets leave in is the order they came in, and none leaves but by transmission), whose
    /// rate and delay no scenario event changes (a packet's departure is then fixed once the
    /// packets ahead of it are: it starts when the one ahead is done, or when it arrives if the
    /// link is idle), and that serialises at its rate (no capacity trace) and delays every
    /// packet alike (no jitter).
    /// `pooled`: the link's queue draws on its switch's shared buffer.
    pub(super) fn departs_at_enqueue(
        l: &acclab_scenario::LinkDef,
        i: usize,
        scenario: &Scenario,
        pooled: bool,
    ) -> bool {
        let fifo = match &l.queue {
            QueueConfig::Droptail(p) => !p.priority,
            // Marks on arrival, from the queue it finds (RFC 8257 §3.1): known at enqueue.
            QueueConfig::StepEcn(p) => !p.priority,
            _ => false,
        } && !pooled;
        let plain = l.capacity.is_none() && l.jitter.is_none();
        let fixed = !scenario.events.iter().any(|e| match e.action {
            EventAction::SetDelay { link, .. } | EventAction::SetRate { link, .. } => {
                link.0 as usize == i
            }
        });
        fifo && fixed && plain
    }

    /// Whether the link [departs at enqueue](Link::departs_at_enqueue): its queue is its ledger.
    #[inline(always)]
    pub(super) fn eager(&self) -> bool {
        self.held.is_none()
    }

    /// The link's queue, as observers read it.
    pub(super) fn queue(&self) -> &dyn QueueState {
        match &self.held {
            Some(h) => &h.queue,
            None => &self.ledger,
        }
    }

    /// The link's queue's backlog.
    #[inline]
    pub(super) fn backlog(&self) -> Backlog {
        match &self.held {
            Some(h) => h.queue.backlog(),
            None => self.ledger.backlog(),
        }
    }
}

/// A discipline that holds its packets. Tail drop, the default (on links whose rate or delay
/// an event changes, or with a priority band), is called directly; any other behind the
/// trait. (Each call through the box first waited for the box's cache line: at 1000 flows,
/// 4002 links' queues are rarely in cache.) An output queue of a shared-buffer switch is
/// behind its pool's admission, the pool's index beside it.
pub(super) enum Discipline {
    TailDrop(DropTail),
    Other(Box<dyn QueueDiscipline>),
    Shared(SharedPort, u32),
}

/// `$body` with `$q` bound to discipline `$d`, statically typed for tail drop.
macro_rules! with_discipline {
    ($d:expr, $q:ident => $body:expr) => {
        match $d {
            Discipline::TailDrop($q) => $body,
            Discipline::Other($q) => $body,
            Discipline::Shared(port, _) => {
                let $q = port.discipline();
                $body
            }
        }
    };
}

impl QueueState for Discipline {
    #[inline]
    fn backlog(&self) -> Backlog {
        with_discipline!(self, q => q.backlog())
    }
    fn stats(&self) -> QueueStats {
        match self {
            // The pool's refusals are the port's drops.
            Discipline::Shared(port, _) => port.stats(),
            d => with_discipline!(d, q => q.stats()),
        }
    }
    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        with_discipline!(self, q => q.aqm_state(out))
    }
}

/// The calls of [`QueueDiscipline`] that change the queue, with the switches' pools (`pools`)
/// that a [`Discipline::Shared`] draws on.
impl Discipline {
    #[inline]
    pub(super) fn enqueue(
        &mut self,
        pools: &mut [SharedBuffer],
        now: Time,
        pkt: &Packet,
    ) -> Result<Enqueued, Dropped> {
        match self {
            Discipline::TailDrop(q) => q.enqueue(now, pkt),
            Discipline::Other(q) => q.enqueue(now, pkt),
            Discipline::Shared(port, pool) => port.enqueue(&mut pools[*pool as usize], now, pkt),
        }
    }
    #[inline]
    pub(super) fn dequeue(
        &mut self,
        pools: &mut [SharedBuffer],
        now: Time,
        dropped: &mut Vec<Dropped>,
    ) -> Option<Dequeued> {
        match self {
            Discipline::TailDrop(q) => q.dequeue(now, dropped),
            Discipline::Other(q) => q.dequeue(now, dropped),
            Discipline::Shared(port, pool) => {
                port.dequeue(&mut pools[*pool as usize], now, dropped)
            }
        }
    }
    pub(super) fn pushed_out(&mut self, pools: &mut [SharedBuffer], out: &mut Vec<Dropped>) {
        match self {
            Discipline::TailDrop(q) => q.pushed_out(out),
            Discipline::Other(q) => q.pushed_out(out),
            Discipline::Shared(port, pool) => port.pushed_out(&mut pools[*pool as usize], out),
        }
    }
    pub(super) fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        with_discipline!(self, q => q.for_each_packet(f))
    }
    pub(super) fn pushes_out(&self) -> bool {
        with_discipline!(self, q => q.pushes_out())
    }
    pub(super) fn set_rate(&mut self, rate: Rate) {
        match self {
            Discipline::TailDrop(q) => q.set_rate(rate),
            Discipline::Other(q) => q.set_rate(rate),
            Discipline::Shared(port, _) => port.discipline_mut().set_rate(rate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout the hot path is tuned for (see [`Link`]): a field added to a link costs a
    /// cache line per hop at 1000 flows.
    #[test]
    fn a_link_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Link>(), 128);
        assert_eq!(std::mem::align_of::<Link>(), 64);
        assert_eq!(std::mem::offset_of!(Link, ledger), 64);
        assert_eq!(std::mem::size_of::<TailDropLedger>(), 64);
    }
}
