//! Every flow's endpoints, and for a workload's short flows their lives: built when the flow
//! starts, freed once it is done, so that a run of a million short flows holds the endpoints
//! of the few thousand open at once, not of all it has seen (issue 56: flow state from a
//! slab, finished flows' memory reused — the allocator's, here).
//!
//! A flow with a finite transfer (a workload's, or a `[[flow]]` with a `size`) is **lazy**: its
//! endpoints are built from the scenario at its start, and it is **retired** once it is done —
//! its sender has completed the transfer and has no timer, its receiver has none either, and
//! none of its packets is left in the network. Nothing can then happen to it again (no packet
//! will arrive, no timer fire), so freeing it changes nothing the run does: its statistics are
//! kept, as they were at retirement, for the samples and the summary. Before its start a lazy
//! flow reports the default statistics (nothing sent, nothing received), which is what the
//! monitor reads of a flow that has not started. Other flows (bulk, on-off, CBR…) and any
//! endpoints handed to the simulator (live mode's stand-ins) live from the outset to the end.

use acclab_core::packet::Packet;
use acclab_core::transport::{Endpoint, EndpointSlot, EndpointStats};
use acclab_core::{FlowId, Time};
use acclab_scenario::Scenario;

/// Where a flow is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// Built at the outset; lives to the end.
    Always,
    /// Lazy, not started: no endpoints yet.
    Waiting,
    /// Lazy, started.
    Open,
    /// Lazy, its transfer complete: to be retired once nothing of it is left in the network
    /// (a retirement check is scheduled).
    Closing,
    /// Freed; its statistics kept.
    Retired,
}

pub(super) struct Endpoints {
    /// Each endpoint at its [`EndpointSlot`]; [`Closed`] (which takes no memory) before a
    /// lazy flow starts and after it is retired, so that the hot path reaches an endpoint
    /// exactly as if every one were always there.
    slots: Vec<Box<dyn Endpoint>>,
    life: Vec<Life>,
    /// The sender's and receiver's statistics of each retired flow.
    retired: Vec<Option<Box<Kept>>>,
    /// Endpoints alive now (for the memory test and the run's record).
    live: usize,
    /// Whether the endpoints were given (live mode's stand-ins).
    outside: bool,
}

impl Endpoints {
    /// The endpoints given, each at its [`EndpointSlot`], alive from the outset to the end.
    pub(super) fn given(endpoints: Vec<Box<dyn Endpoint>>) -> Endpoints {
        let flows = endpoints.len() / 2;
        Endpoints {
            live: endpoints.len(),
            slots: endpoints,
            life: vec![Life::Always; flows],
            retired: Vec::new(),
            outside: true,
        }
    }

    /// The endpoints of `scenario`'s flows: those with a finite transfer lazy, the others
    /// built now.
    pub(super) fn of(scenario: &Scenario) -> Endpoints {
        let n = scenario.flows.len();
        let mut e = Endpoints {
            slots: Vec::with_capacity(EndpointSlot::count(n)),
            life: Vec::with_capacity(n),
            retired: Vec::new(),
            live: 0,
            outside: false,
        };
        for (i, f) in scenario.flows.iter().enumerate() {
            if f.scheme.size().is_some() {
                e.slots.extend([closed(), closed()]);
                e.life.push(Life::Waiting);
            } else {
                let (tx, rx) = scenario.build_flow_endpoints(i);
                e.slots.extend([tx, rx]);
                e.life.push(Life::Always);
                e.live += 2;
            }
        }
        e
    }

    /// Flow `f` starts: a lazy flow's endpoints are built.
    pub(super) fn open(&mut self, f: FlowId, scenario: &Scenario) {
        let i = f.0 as usize;
        if self.life[i] == Life::Waiting {
            let (tx, rx) = scenario.build_flow_endpoints(i);
            self.slots[EndpointSlot::sender(f).index()] = tx;
            self.slots[EndpointSlot::receiver(f).index()] = rx;
            self.life[i] = Life::Open;
            self.live += 2;
        }
    }

    /// The endpoint at slot index `e` (alive whenever a packet or a timer of its flow exists,
    /// or its flow has started).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, e: usize) -> &mut dyn Endpoint {
        &mut *self.slots[e]
    }

    /// The endpoint at slot index `e`, if there is such a slot (for prefetches: the slot
    /// itself, the box, is fetched as well as the endpoint it points to).
    #[inline(always)]
    #[allow(clippy::borrowed_box)]
    pub(super) fn peek(&self, e: usize) -> Option<&Box<dyn Endpoint>> {
        self.slots.get(e)
    }

    /// Flow `f`'s sender was found without a timer: if the flow is lazy and its transfer is
    /// complete, it is now closing — true the first time, when a retirement check is to be
    /// scheduled.
    pub(super) fn closes(&mut self, f: FlowId) -> bool {
        let i = f.0 as usize;
        if self.life[i] != Life::Open {
            return false;
        }
        let done = self.slots[EndpointSlot::sender(f).index()]
            .stats()
            .completed_at
            .is_some();
        if done {
            self.life[i] = Life::Closing;
        }
        done
    }

    /// Whether closing flow `f`'s endpoints are both without a timer (the caller knows no
    /// packet of it is in the network).
    pub(super) fn idle(&self, f: FlowId) -> bool {
        self.idle_at(EndpointSlot::sender(f)) && self.idle_at(EndpointSlot::receiver(f))
    }

    /// Whether the endpoint at `slot` is without a timer.
    pub(super) fn idle_at(&self, slot: EndpointSlot) -> bool {
        self.slots[slot.index()].poll_timeout().is_none()
    }

    /// The end of a parallel run: flow `f`'s statistics are `stats` (its sender's as its
    /// sender's partition has them, its receiver's as its receiver's has them), kept as a
    /// retired flow's are; its endpoints here are freed.
    pub(super) fn freeze(&mut self, f: FlowId, stats: (EndpointStats, EndpointStats)) {
        let i = f.0 as usize;
        if self.retired.is_empty() {
            self.retired.resize_with(self.life.len(), || None);
        }
        self.retired[i] = Some(Box::new(Kept::of(stats)));
        self.slots[EndpointSlot::sender(f).index()] = closed();
        self.slots[EndpointSlot::receiver(f).index()] = closed();
        if matches!(self.life[i], Life::Open | Life::Closing | Life::Always) {
            self.live -= 2;
        }
        self.life[i] = Life::Retired;
    }

    /// Lets go of retired flow `f`'s statistics (a partition's, once the run's endpoints have
    /// taken them at the end of a parallel run: [`freeze`](Self::freeze)).
    pub(super) fn let_go(&mut self, f: FlowId) {
        if let Some(kept) = self.retired.get_mut(f.0 as usize) {
            *kept = None;
        }
    }

    /// Retires closing flow `f`: its statistics kept, its endpoints freed.
    pub(super) fn retire(&mut self, f: FlowId) {
        let i = f.0 as usize;
        // (Open in the partition of a parallel run that holds only its receiver: the
        // coordinator found it done.)
        debug_assert!(matches!(self.life[i], Life::Closing | Life::Open));
        let stats = self.stats(f);
        if self.retired.is_empty() {
            self.retired.resize_with(self.life.len(), || None);
        }
        self.retired[i] = Some(Box::new(Kept::of(stats)));
        self.slots[EndpointSlot::sender(f).index()] = closed();
        self.slots[EndpointSlot::receiver(f).index()] = closed();
        self.life[i] = Life::Retired;
        self.live -= 2;
    }

    /// The statistics of flow `f`'s sender and receiver: their own while they are alive, as
    /// they were at retirement after, the default before a lazy flow starts.
    pub(super) fn stats(&self, f: FlowId) -> (EndpointStats, EndpointStats) {
        let i = f.0 as usize;
        if let Some(kept) = self.retired.get(i).and_then(|r| r.as_deref()) {
            return kept.stats();
        }
        (
            self.slots[EndpointSlot::sender(f).index()].stats(),
            self.slots[EndpointSlot::receiver(f).index()].stats(),
        )
    }

    /// Flow `f`'s sender's congestion-control state (none once retired or before a lazy flow
    /// starts).
    pub(super) fn cc_state(&self, f: FlowId) -> acclab_core::transport::CcState {
        self.slots[EndpointSlot::sender(f).index()].cc_state()
    }

    /// Whether the endpoints were given from outside ([`Endpoints::given`]).
    pub(super) fn are_given(&self) -> bool {
        self.outside
    }

    /// Endpoints alive now.
    pub(super) fn live(&self) -> usize {
        self.live
    }
}

/// What a retired flow keeps of its endpoints' statistics: the sender's whole, the receiver's
/// as the three counters a receiver of a transfer reports (ACKs sent, bytes delivered: 184 B
/// a flow, not 304), or whole if it reports more.
struct Kept {
    tx: EndpointStats,
    rx: KeptRx,
}

enum KeptRx {
    Counters {
        sent_bytes: u64,
        sent_packets: u64,
        delivered_bytes: u64,
    },
    Whole(Box<EndpointStats>),
}

impl Kept {
    fn of((tx, rx): (EndpointStats, EndpointStats)) -> Kept {
        let counters = EndpointStats {
            sent_bytes: rx.sent_bytes,
            sent_packets: rx.sent_packets,
            delivered_bytes: rx.delivered_bytes,
            ..EndpointStats::default()
        };
        let rx = if rx == counters {
            KeptRx::Counters {
                sent_bytes: rx.sent_bytes,
                sent_packets: rx.sent_packets,
                delivered_bytes: rx.delivered_bytes,
            }
        } else {
            KeptRx::Whole(Box::new(rx))
        };
        Kept { tx, rx }
    }

    fn stats(&self) -> (EndpointStats, EndpointStats) {
        let rx = match &self.rx {
            &KeptRx::Counters {
                sent_bytes,
                sent_packets,
                delivered_bytes,
            } => EndpointStats {
                sent_bytes,
                sent_packets,
                delivered_bytes,
                ..EndpointStats::default()
            },
            KeptRx::Whole(rx) => **rx,
        };
        (self.tx, rx)
    }
}

/// The stand-in at a slot whose endpoint does not exist (a lazy flow not started, or retired):
/// nothing reaches it (no packet or timer of such a flow exists) and it reports the default
/// statistics. A zero-sized type: its box allocates nothing.
struct Closed;

fn closed() -> Box<dyn Endpoint> {
    Box::new(Closed)
}

impl Endpoint for Closed {
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet) {
        debug_assert!(false, "a packet reached an endpoint that does not exist");
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn stats(&self) -> EndpointStats {
        EndpointStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::Duration;

    #[test]
    fn a_retired_flow_keeps_its_statistics_exactly() {
        let tx = EndpointStats {
            sent_bytes: 15_000,
            sent_packets: 10,
            retransmits: 1,
            cwnd_bytes: Some(30_000),
            srtt: Some(Duration::from_micros(12)),
            completed_at: Some(Time(5_000)),
            ..EndpointStats::default()
        };
        let acks = EndpointStats {
            sent_bytes: 640,
            sent_packets: 10,
            delivered_bytes: 14_000,
            ..EndpointStats::default()
        };
        let more = EndpointStats {
            detected_losses: 2,
            ..acks
        };
        for rx in [acks, more] {
            assert_eq!(Kept::of((tx, rx)).stats(), (tx, rx));
        }
        assert!(matches!(Kept::of((tx, acks)).rx, KeptRx::Counters { .. }));
    }
}
