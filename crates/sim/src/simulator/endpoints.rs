//! Every flow's endpoints, and for a workload's short flows their lives: built when the flow
//! starts, freed once it is done, so that a run of a million short flows holds the endpoints
//! of the few thousand open at once, not of all it has seen (issue 56: flow state from a
//! slab, finished flows' memory reused — the allocator's for the endpoints, and their slots in
//! pages freed with their last flow, `pages.rs`).
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
use acclab_core::{Duration, FlowId, Time};
use acclab_scenario::Scenario;

use super::books::PacketCounts;
use super::pages::Pages;

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
    /// Each flow's sender and receiver (its [`EndpointSlot`]s), in [`Pages`]: made when the
    /// first flow of the page starts, freed when its last is retired; [`Closed`] (which takes
    /// no memory) at a flow's place before it starts and after it is retired.
    slots: Pages<[Box<dyn Endpoint>; 2]>,
    life: Vec<Life>,
    /// The sender's and receiver's statistics of each retired flow.
    retired: Archive,
    /// Endpoints alive now (for the memory test and the run's record).
    live: usize,
    /// Whether the endpoints were given (live mode's stand-ins).
    outside: bool,
}

impl Endpoints {
    /// The endpoints given, each at its [`EndpointSlot`], alive from the outset to the end.
    pub(super) fn given(endpoints: Vec<Box<dyn Endpoint>>) -> Endpoints {
        let flows = endpoints.len() / 2;
        let mut slots = Pages::new(flows);
        let mut given = endpoints.into_iter();
        for i in 0..flows {
            slots.open(i, |_| [closed(), closed()]);
            *slots.at_mut(i) = [0, 1].map(|_| given.next().expect("two endpoints a flow"));
        }
        Endpoints {
            live: 2 * flows,
            slots,
            life: vec![Life::Always; flows],
            retired: Archive::default(),
            outside: true,
        }
    }

    /// The endpoints of `scenario`'s flows: those with a finite transfer lazy, the others
    /// built now.
    pub(super) fn of(scenario: &Scenario) -> Endpoints {
        let n = scenario.flows.len();
        let mut e = Endpoints {
            slots: Pages::new(n),
            life: Vec::with_capacity(n),
            retired: Archive::default(),
            live: 0,
            outside: false,
        };
        for i in 0..n {
            if scenario.flows.size(i).is_some() {
                e.life.push(Life::Waiting);
            } else {
                let (tx, rx) = scenario.build_flow_endpoints(i);
                e.slots.open(i, |_| [closed(), closed()]);
                *e.slots.at_mut(i) = [tx, rx];
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
            self.slots.open(i, |_| [closed(), closed()]);
            *self.slots.at_mut(i) = [tx, rx];
            self.life[i] = Life::Open;
            self.live += 2;
        }
    }

    /// Whether flow `f`'s endpoints live from the outset to the end (they are not lazy).
    pub(super) fn lives_throughout(&self, f: FlowId) -> bool {
        self.life[f.0 as usize] == Life::Always
    }

    /// The endpoint at slot index `e` (alive whenever a packet or a timer of its flow exists,
    /// or its flow has started).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, e: usize) -> &mut dyn Endpoint {
        &mut *self.slots.at_mut(e / 2)[e % 2]
    }

    /// The endpoint at slot index `e`, if there is such a slot (for prefetches: the slot
    /// itself, the box, is fetched as well as the endpoint it points to).
    #[inline(always)]
    #[allow(clippy::borrowed_box)]
    pub(super) fn peek(&self, e: usize) -> Option<&Box<dyn Endpoint>> {
        self.slots.get(e / 2).map(|pair| &pair[e % 2])
    }

    /// Flow `f`'s sender was found without a timer: if the flow is lazy and its transfer is
    /// complete, it is now closing — true the first time, when a retirement check is to be
    /// scheduled.
    pub(super) fn closes(&mut self, f: FlowId) -> bool {
        let i = f.0 as usize;
        if self.life[i] != Life::Open {
            return false;
        }
        let done = self.slots.at_mut(i)[0].stats().completed_at.is_some();
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
        let i = slot.flow().0 as usize;
        self.slots
            .get(i)
            .is_none_or(|pair| pair[slot.index() % 2].poll_timeout().is_none())
    }

    /// The end of a parallel run: flow `f`'s statistics are `stats` (its sender's as its
    /// sender's partition has them, its receiver's as its receiver's has them) and its counts
    /// `counts` (the partitions' summed), kept as a retired flow's are; its endpoints here are
    /// freed.
    pub(super) fn freeze(
        &mut self,
        f: FlowId,
        stats: (EndpointStats, EndpointStats),
        counts: [PacketCounts; 2],
    ) {
        let i = f.0 as usize;
        self.retired.keep(i, self.life.len(), stats, counts);
        if let Some(pair) = self.slots.get_mut(i) {
            *pair = [closed(), closed()];
        }
        if matches!(self.life[i], Life::Open | Life::Closing | Life::Always) {
            self.live -= 2;
        }
        if self.life[i] != Life::Retired {
            self.slots.retire(i);
        }
        self.life[i] = Life::Retired;
    }

    /// Retires closing flow `f`: its statistics and its `counts` kept, its endpoints freed.
    pub(super) fn retire(&mut self, f: FlowId, counts: [PacketCounts; 2]) {
        let i = f.0 as usize;
        // (Open in the partition of a parallel run that holds only its receiver: the
        // coordinator found it done.)
        debug_assert!(matches!(self.life[i], Life::Closing | Life::Open));
        let stats = self.stats(f);
        self.retired.keep(i, self.life.len(), stats, counts);
        *self.slots.at_mut(i) = [closed(), closed()];
        self.slots.retire(i);
        self.life[i] = Life::Retired;
        self.live -= 2;
    }

    /// The statistics of flow `f`'s sender and receiver: their own while they are alive, as
    /// they were at retirement after, the default before a lazy flow starts.
    pub(super) fn stats(&self, f: FlowId) -> (EndpointStats, EndpointStats) {
        let i = f.0 as usize;
        if self.life[i] == Life::Retired {
            return self.retired.stats(i);
        }
        match self.slots.get(i) {
            Some([tx, rx]) => (tx.stats(), rx.stats()),
            None => (Closed.stats(), Closed.stats()),
        }
    }

    /// Only the flows `holds` names are retired here (a partition's: [`Pages::hold_only`]).
    pub(super) fn hold_only(&mut self, holds: impl Fn(usize) -> bool) {
        self.slots.hold_only(holds);
    }

    /// Whether flow `f` is retired (its endpoints gone, their slots' page perhaps too).
    pub(super) fn is_retired(&self, f: FlowId) -> bool {
        self.life[f.0 as usize] == Life::Retired
    }

    /// The packet counts retired flow `f` was retired with (`None` if it is not retired).
    pub(super) fn retired_counts(&self, f: FlowId) -> Option<[PacketCounts; 2]> {
        self.is_retired(f)
            .then(|| self.retired.counts(f.0 as usize))
    }

    /// Flow `f`'s sender's congestion-control state (none once retired or before a lazy flow
    /// starts).
    pub(super) fn cc_state(&self, f: FlowId) -> acclab_core::transport::CcState {
        match self.slots.get(f.0 as usize) {
            Some([tx, _]) => tx.cc_state(),
            None => Closed.cc_state(),
        }
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

/// What the retired flows keep of their endpoints' statistics: each one's sender's and
/// receiver's [`EndpointStats`] and the simulator's [`PacketCounts`] of it (its books go with
/// their page, `books.rs`), packed ([`pack`]) one flow after another into pages of
/// [`Archive::PAGE`] bytes. A finished transfer's two are ~40 bytes packed, against 304 as
/// structs (and the ~200 bytes a boxed record of the sender's and the receiver's counters took
/// before, with its box: issue 56, a finished flow's memory). Lossless: a flow's statistics read
/// back are exactly those it retired with.
#[derive(Default)]
struct Archive {
    pages: Vec<Vec<u8>>,
    /// Where each flow's statistics begin: page × [`Archive::PAGE`] + offset (only a retired
    /// flow's is read). Empty until the first flow retires.
    at: Vec<u64>,
}

impl Archive {
    /// The bytes of one page: a flow's record fits many times (at most 2 × [`MAX_PACKED`] and
    /// eight varints).
    const PAGE: usize = 1 << 16;

    /// Keeps flow `i`'s statistics and counts (one of `flows`).
    fn keep(
        &mut self,
        i: usize,
        flows: usize,
        (tx, rx): (EndpointStats, EndpointStats),
        counts: [PacketCounts; 2],
    ) {
        if self.at.is_empty() {
            self.at = vec![0; flows];
        }
        let mut buf = [0u8; 2 * MAX_PACKED + 8 * 10];
        let n = pack(&tx, &mut buf);
        let mut n = n + pack(&rx, &mut buf[n..]);
        for c in counts {
            for v in [c.injected, c.arrived, c.dropped, c.dropped_bytes] {
                n += leb128(v, &mut buf[n..]);
            }
        }
        if self.pages.last().is_none_or(|p| p.len() + n > Self::PAGE) {
            self.pages.push(Vec::with_capacity(Self::PAGE));
        }
        let page = self.pages.len() - 1;
        let p = &mut self.pages[page];
        self.at[i] = (page * Self::PAGE + p.len()) as u64;
        p.extend_from_slice(&buf[..n]);
    }

    /// Flow `i`'s statistics, as [`keep`](Self::keep) was given them.
    fn stats(&self, i: usize) -> (EndpointStats, EndpointStats) {
        self.record(i).0
    }

    /// Flow `i`'s counts, as [`keep`](Self::keep) was given them.
    fn counts(&self, i: usize) -> [PacketCounts; 2] {
        self.record(i).1
    }

    fn record(&self, i: usize) -> ((EndpointStats, EndpointStats), [PacketCounts; 2]) {
        let at = self.at[i] as usize;
        let bytes = &self.pages[at / Self::PAGE][at % Self::PAGE..];
        let (tx, n) = unpack(bytes);
        let (rx, m) = unpack(&bytes[n..]);
        let mut at = n + m;
        let mut next = || {
            let (v, k) = unleb128(&bytes[at..]);
            at += k;
            v
        };
        let counts = [(); 2].map(|_| PacketCounts {
            injected: next(),
            arrived: next(),
            dropped: next(),
            dropped_bytes: next(),
        });
        ((tx, rx), counts)
    }
}

/// The fields of [`EndpointStats`], in the order [`pack`] writes them: a plain counter is
/// `None` when zero, an optional field `None` when it is.
const FIELDS: usize = 14;

/// The most bytes [`pack`] writes: a mask of [`FIELDS`] bits and every field, each a LEB128
/// varint of at most 10 bytes.
const MAX_PACKED: usize = 3 + 10 * FIELDS;

fn fields(s: &EndpointStats) -> [Option<u64>; FIELDS] {
    let counter = |v: u64| (v != 0).then_some(v);
    [
        counter(s.sent_bytes),
        counter(s.sent_packets),
        counter(s.retransmits),
        counter(s.retransmits_in_avoidance),
        counter(s.timeouts),
        counter(s.detected_losses),
        counter(s.delivered_bytes),
        s.cwnd_bytes,
        s.srtt.map(|d| d.0),
        counter(s.rtt_sum.0),
        counter(s.rtt_samples),
        s.accumulation_bytes.map(f64::to_bits),
        s.base_rtt.map(|d| d.0),
        s.completed_at.map(|t| t.0),
    ]
}

/// The statistics of `fields` (the inverse of [`fields`]). Every field named: a field added to
/// [`EndpointStats`] fails to compile here until it is packed too.
fn of_fields(v: [Option<u64>; FIELDS]) -> EndpointStats {
    let counter = |k: usize| v[k].unwrap_or(0);
    EndpointStats {
        sent_bytes: counter(0),
        sent_packets: counter(1),
        retransmits: counter(2),
        retransmits_in_avoidance: counter(3),
        timeouts: counter(4),
        detected_losses: counter(5),
        delivered_bytes: counter(6),
        cwnd_bytes: v[7],
        srtt: v[8].map(Duration),
        rtt_sum: Duration(counter(9)),
        rtt_samples: counter(10),
        accumulation_bytes: v[11].map(f64::from_bits),
        base_rtt: v[12].map(Duration),
        completed_at: v[13].map(Time),
    }
}

/// Writes `s` into `out` (at least [`MAX_PACKED`] bytes): the mask of its fields present, then
/// each present one, as LEB128 varints. Returns the bytes written.
fn pack(s: &EndpointStats, out: &mut [u8]) -> usize {
    let v = fields(s);
    let mask = v
        .iter()
        .enumerate()
        .fold(0u64, |m, (k, x)| m | (u64::from(x.is_some()) << k));
    let mut n = leb128(mask, out);
    for x in v.into_iter().flatten() {
        n += leb128(x, &mut out[n..]);
    }
    n
}

/// The statistics [`pack`] wrote at the start of `bytes`, and the bytes it took.
fn unpack(bytes: &[u8]) -> (EndpointStats, usize) {
    let (mask, mut n) = unleb128(bytes);
    let mut v = [None; FIELDS];
    for (k, x) in v.iter_mut().enumerate() {
        if mask >> k & 1 == 1 {
            let (value, m) = unleb128(&bytes[n..]);
            *x = Some(value);
            n += m;
        }
    }
    (of_fields(v), n)
}

/// `v` as an unsigned LEB128 varint into `out`; the bytes written.
fn leb128(mut v: u64, out: &mut [u8]) -> usize {
    let mut n = 0;
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[n] = low;
            return n + 1;
        }
        out[n] = low | 0x80;
        n += 1;
    }
}

/// The unsigned LEB128 varint at the start of `bytes`, and its length.
fn unleb128(bytes: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (n, &b) in bytes.iter().enumerate() {
        v |= u64::from(b & 0x7f) << (7 * n);
        if b & 0x80 == 0 {
            return (v, n + 1);
        }
    }
    unreachable!("the archive holds only what pack wrote")
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

    /// Statistics come back exactly as they were kept, whatever fields are set (zero, absent,
    /// the largest values, an accumulation that is not an integer), over page boundaries.
    #[test]
    fn a_retired_flow_keeps_its_statistics_exactly() {
        let full = EndpointStats {
            sent_bytes: u64::MAX,
            sent_packets: 10,
            retransmits: 1,
            retransmits_in_avoidance: 1 << 35,
            timeouts: 3,
            detected_losses: 2,
            delivered_bytes: 14_000,
            cwnd_bytes: Some(0),
            srtt: Some(Duration::from_micros(12)),
            rtt_sum: Duration(123_456_789),
            rtt_samples: 99,
            accumulation_bytes: Some(-1.5e300),
            base_rtt: Some(Duration(1)),
            completed_at: Some(Time(u64::MAX - 1)),
        };
        let acks = EndpointStats {
            sent_bytes: 640,
            sent_packets: 10,
            delivered_bytes: 14_000,
            ..EndpointStats::default()
        };
        let kinds = [full, acks, EndpointStats::default()];
        let flows = 5_000;
        let mut archive = Archive::default();
        let of = |i: usize| (kinds[i % 3], kinds[(i / 3) % 3]);
        // Counts of every size, the largest too.
        let counts = |i: usize| {
            let v = |k: u64| match (i as u64 + k) % 4 {
                0 => 0,
                1 => i as u64,
                2 => 1 << (i % 64),
                _ => u64::MAX - k,
            };
            [0, 1].map(|d| PacketCounts {
                injected: v(4 * d),
                arrived: v(4 * d + 1),
                dropped: v(4 * d + 2),
                dropped_bytes: v(4 * d + 3),
            })
        };
        for i in (0..flows).rev() {
            archive.keep(i, flows, of(i), counts(i));
        }
        assert!(archive.pages.len() > 1, "over several pages");
        for i in 0..flows {
            assert_eq!(archive.stats(i), of(i), "flow {i}");
            assert_eq!(archive.counts(i), counts(i), "flow {i}");
        }
        // A finished transfer's statistics are a few dozen bytes.
        let mut buf = [0u8; MAX_PACKED];
        assert!(pack(&acks, &mut buf) <= 8);
        assert!(pack(&full, &mut buf) <= MAX_PACKED);
    }

    /// Every field of the statistics is packed: one set alone comes back alone.
    #[test]
    fn every_field_is_packed() {
        for k in 0..FIELDS {
            let mut v = [None; FIELDS];
            v[k] = Some(7);
            let s = of_fields(v);
            assert_eq!(fields(&s), v, "field {k}");
            let mut buf = [0u8; MAX_PACKED];
            let n = pack(&s, &mut buf);
            assert_eq!(unpack(&buf[..n]), (s, n), "field {k}");
        }
    }
}
