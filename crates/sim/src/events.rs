//! The event queue: events in (time, time scheduled, scheduling entity, that entity's order)
//! order.
//!
//! **The tie rule.** Of events due at the same time, the one scheduled earlier comes first;
//! of those scheduled at the same instant, the one whose scheduling entity comes first — the
//! run itself (its samples, measurement window and scenario events), then the links by id (each
//! link's sending side, then its receiving side), then the endpoints by slot (a flow's start and
//! stop are its sender's) —; of one entity's, the one it scheduled first. Every part of the key
//! is known to the entity that schedules the event, so the order is a function of what each
//! entity did, never of how different entities' work interleaved: a parallel engine whose
//! partitions each hold whole entities orders them the same way with any partitioning (issue
//! 56). Until 2026-11 ties were broken by one global insertion sequence, which a partition
//! cannot know of another's; docs/performance.md, "The tie rule", says what changed. The
//! simulator says which entity is handling an event and when ([`EventQueue::by`]); every event
//! scheduled meanwhile is that entity's.
//!
//! Two kinds of event have keys of their own, for a partition must be able to place them
//! without knowing what another did (2026-11-28, issue 56):
//! - **An arrival** (a link's first packet in its pipe reaching the far end) counts as
//!   scheduled long ahead by its link's receiving side: arrivals due at a time come before
//!   everything else then except what the run and lower-numbered links scheduled long ahead
//!   (samples, scenario events), in link order. Who scheduled it — the sending side, when the
//!   packet found the pipe empty, or the receiving side at the arrival ahead of it — and when
//!   do not enter, so the receiving partition places an arrival from the packet's arrival time
//!   alone.
//! - **A retirement check** (`Endpoints`) is its flow's sender's, at the instant it was
//!   scheduled.
//!
//! Both take a count reserved for them, and neither moves the count of the entity handling an
//! event then: whether one is scheduled (whether a pipe was empty; whether a flow was found
//! quiet) depends on another partition's state, and must not shift the keys of the events that
//! entity schedules after it.
//!
//! The key is one 128-bit word, so that one comparison orders entries: the time (64 bits); how
//! long before it the event was scheduled, inverted so that longer comes first (24 bits,
//! saturating: events scheduled more than 16.8 ms ahead — flow starts, retransmission timers,
//! samples — count as scheduled 16.8 ms ahead, and among those the entity decides); the entity
//! (28 bits); the entity's count of the events it has scheduled at this instant (12 bits, of
//! which an entity's own events take the lower half; arrivals and retirement checks have two
//! reserved counts). So keys are distinct and in the entity's order unless it schedules more
//! than 2,048 events at one instant (none does: a handler schedules a few; flow starts are each
//! flow's own) — past that its count wraps, still a function of its own work alone.
//!
//! Entries are 32 bytes, aligned to 32 so that none straddles two cache lines; cancelled
//! timers are not removed but carry a generation number that the simulator checks when they
//! come out.
//!
//! Three parts (a timing wheel after Varghese and Lauck, SOSP 1987, with exact order within a
//! slot):
//! - **the current slot**: every event due before the end of the current slot (4,096 ns, or
//!   narrower where events are dense: see below), in a binary heap of its own (`Heap`), which
//!   gives the exact order; it holds few events;
//! - **the ring**: every event of the next 4,095 slots (16.8 ms of 4 µs slots: nearly every
//!   arrival and timer), filed without a comparison in its slot's list; the lists are threaded through
//!   one pool of nodes whose freed nodes are reused first, and a two-level bitmap finds the
//!   next occupied slot. When the current slot is empty the cursor moves there and the slot's
//!   events go to the heap;
//! - **far**: later events, in a heap, moved into the ring as the cursor comes within reach.
//!
//! The slot's width adapts to how dense the events are: a fabric at 10 Gb/s (a hundred links
//! and more, each an event per 1.2 µs) put ~1,800 events in each 4 µs slot, and the current
//! slot's heap, 11 levels deep, was a quarter of the run. Every 4,096 refills the mean number of
//! events a slot brought is looked at (or sooner, after 65,536 events): above 8 the slot
//! narrows four times (down to 4 ns), below 2 it widens four times (up to 4,096 ns), and the
//! pending events are filed again (a rare O(pending) step). Which width is used changes nothing
//! but speed.
//!
//! So an event is written once before the heap takes it. With a single binary heap, pop and
//! schedule were 37% of a 1000-flow run: ~1,700 pending events, 11 levels, a mispredicted
//! branch at each. A hierarchical wheel of 64-slot levels (the design before this one) filed
//! most events twice (level 1, then level 0) before the heap: 245 instructions per event in
//! the queue at 1000 flows on 1 Gb/s. The order is a function of the keys alone, which are
//! unique, so runs are the same with any exact queue.
//!
//! The heap is this file's own rather than `std::collections::BinaryHeap`: the standard one
//! writes a pushed entry to memory and reads it straight back to sift it up, and pops by sifting
//! a hole to the bottom and the last entry up again; here the entry being placed stays in
//! registers while the hole moves, and a pop sifts the last entry down from the root, stopping
//! as soon as it fits (keys are one 128-bit compare, so the extra comparisons cost less than the
//! memory traffic).

use acclab_core::Time;

/// Who schedules an event, for the tie rule (see the module's header): the run, a link's
/// sending or receiving side, an endpoint. Its number is its place in the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entity(u32);

impl Entity {
    /// The run itself: samples, the measurement window, scenario events (a flow's start and
    /// stop are its sender's).
    pub const RUN: Entity = Entity(0);

    /// Link `l`'s sending side (its queue and transmitter).
    #[inline(always)]
    pub fn sender(l: usize) -> Entity {
        Entity(1 + 2 * l as u32)
    }

    /// Link `l`'s receiving side (its far end, where a packet arrives).
    #[inline(always)]
    pub fn receiver(l: usize) -> Entity {
        Entity(2 + 2 * l as u32)
    }
}

/// The entities of a run: the endpoints' numbers follow the links'. At most 2^28.
#[derive(Clone, Copy, Debug)]
pub struct Entities {
    links: u32,
    count: u32,
}

/// The key's bits below the time: how long ahead, the entity, its count (module header).
const AHEAD_BITS: u32 = 24;
const ENTITY_BITS: u32 = 28;
const COUNT_BITS: u32 = 12;
const _: () = assert!(AHEAD_BITS + ENTITY_BITS + COUNT_BITS == 64);
/// The counts an entity's own events take (11 bits, wrapping); the counts above are reserved.
const COUNT_MASK: u32 = (1 << (COUNT_BITS - 1)) - 1;
/// The count of every arrival ([`EventQueue::schedule_arrival`]).
const ARRIVAL: u64 = (1 << COUNT_BITS) - 1;
/// The count of every retirement check ([`EventQueue::schedule_retire`]).
const RETIREMENT: u64 = (1 << COUNT_BITS) - 2;

/// How long before `time` an event scheduled at `at` is, saturating at 2^24 − 1 ns, inverted:
/// AHEAD_MAX − min(time − at, AHEAD_MAX), for time ≥ at (an event is never scheduled in the
/// past; if it were, it would count as scheduled at its time).
#[inline(always)]
fn inverse_ahead(at: Time, time: Time) -> u64 {
    const AHEAD_MAX: u64 = (1 << AHEAD_BITS) - 1;
    (at.0 + AHEAD_MAX).saturating_sub(time.0).min(AHEAD_MAX)
}

/// The key of the retirement check of a flow whose sender is `sender`, scheduled at `at` for
/// `time` ([`EventQueue::schedule_retire`]).
pub fn retirement_key(at: Time, time: Time, sender: Entity) -> u128 {
    let tie = (inverse_ahead(at, time) << (ENTITY_BITS + COUNT_BITS))
        | (u64::from(sender.0) << COUNT_BITS)
        | RETIREMENT;
    (u128::from(time.0) << 64) | u128::from(tie)
}

/// The key of what happens after the run's last event: links that depart at enqueue brought
/// up to date at its end (`Simulator::run_until`).
pub const END_KEY: u128 = u128::MAX;

/// Whether every partition of a parallel run handles the event with key `key`, each for its
/// own links: one of the run's own events (its entity is the run) or the run's end.
pub fn every_partition_handles(key: u128) -> bool {
    let entity = ((key as u64) >> COUNT_BITS) & ((1 << ENTITY_BITS) - 1);
    key == END_KEY || entity == u64::from(Entity::RUN.0)
}

impl Entities {
    /// The entities of a run with `links` links and `endpoints` endpoint slots. (A scenario
    /// with 134 million flows, about the fewest that would not fit, could not be held in
    /// memory: each flow's routes, books and endpoints take hundreds of bytes.)
    pub fn new(links: usize, endpoints: usize) -> Entities {
        let count = 1 + 2 * links as u64 + endpoints as u64;
        assert!(
            count <= 1 << ENTITY_BITS,
            "{links} links and {endpoints} endpoints: more entities than 2^{ENTITY_BITS}"
        );
        Entities {
            links: links as u32,
            count: count as u32,
        }
    }

    /// How many there are.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Endpoint slot `e`.
    #[inline(always)]
    pub fn endpoint(&self, e: usize) -> Entity {
        Entity(1 + 2 * self.links + e as u32)
    }
}

/// What happens at an event. Payloads are dense indices into the simulator's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serialising its head packet.
    TxDone(u32),
    /// A packet starts its transmission on a link that computed its departure when it was
    /// enqueued: scheduled only for observers added beside the monitor, so that they hear of
    /// transmissions in time order (the monitor is told when the queue is next read).
    TxStart(u32),
    /// The first packet propagating on a link reaches the link's far end: the link, the
    /// packet's slot in the pipes' slab, and where it goes next (the driver's word: a link, or
    /// the endpoint it is delivered to, `Routes::delivers_to`), fixed when it entered the link
    /// and told by the packet ahead as it left (`Slab::take_front`).
    Arrive(u32, u32, u32),
    /// A packet reaches the far end of a link whose jitter reorders (one event per packet:
    /// the link's earliest, `link::Extra::unordered`).
    Land(u32),
    /// An endpoint's timer, valid only if the generation still matches.
    Timer {
        endpoint: u32,
        generation: u32,
    },
    FlowStart(u32),
    FlowStop(u32),
    /// A closing flow is retired if nothing of it is left in the network (`Endpoints`).
    Retire(u32),
    /// A scenario event (delay or rate change), by index.
    Scheduled(u32),
    /// Take a monitoring sample.
    Sample,
    /// The measurement window opens or closes.
    WindowStart,
    WindowEnd,
}

impl Event {
    /// Whether it is one of the run's own events (a sample, the measurement window's edges, a
    /// scenario event), which see or change the whole network.
    #[inline(always)]
    pub fn is_run(&self) -> bool {
        matches!(
            self,
            Event::Scheduled(_) | Event::Sample | Event::WindowStart | Event::WindowEnd
        )
    }
}

/// A pending event. `key` is the time in its high 64 bits and the tie below (see the module's
/// header), so that one branch-free 128-bit comparison orders entries (a tuple compares in
/// several steps; the heap's sift-down does little else).
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    /// The entry of `event`, due at `time`, with tie `tie` (see [`EventQueue::schedule`]).
    #[inline(always)]
    fn new(time: Time, tie: u64, event: Event) -> Entry {
        Entry {
            key: (u128::from(time.0) << 64) | u128::from(tie),
            event,
        }
    }

    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }

    fn tie(&self) -> u64 {
        self.key as u64
    }
}

/// A binary min-heap of entries by key (`heap[0]` is the earliest).
#[derive(Default)]
struct Heap {
    heap: Vec<Entry>,
}

impl Heap {
    /// Entry `i`, which the caller knows is in the heap, read without a bounds check (the
    /// sift loops' indices are each checked against the length once, by the loop itself;
    /// the compiler could not see it, and checked every access again: 12 instructions a
    /// hop on the dumbbells, docs/performance.md, session 41).
    #[inline(always)]
    fn at(&self, i: usize) -> &Entry {
        debug_assert!(i < self.heap.len());
        // SAFETY: every caller has `i < self.heap.len()` (see each call).
        unsafe { self.heap.get_unchecked(i) }
    }

    /// Writes entry `i`, which the caller knows is in the heap (as [`at`](Self::at)).
    #[inline(always)]
    fn set(&mut self, i: usize, e: Entry) {
        debug_assert!(i < self.heap.len());
        // SAFETY: as in `at`.
        unsafe { *self.heap.get_unchecked_mut(i) = e }
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        // Sift up: move parents down into the hole until `e` fits, then write it once.
        let mut i = self.heap.len();
        self.heap.push(e);
        // In bounds: `i < len` from here on (it was the last place, and only falls to a
        // parent), and a parent is below its child.
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.at(parent).key <= e.key {
                break;
            }
            self.set(i, *self.at(parent));
            i = parent;
        }
        self.set(i, e);
    }

    /// Removes the earliest entry (which the caller has read with `first`). `BRANCHLESS`: the
    /// smaller child at each level is chosen without a branch. Where the heap's order gives
    /// that branch no pattern to learn, as in a fabric's narrow slots, it was mispredicted at
    /// about every other level (cachegrind's branch simulation, k = 8 permutation: 8.6
    /// mispredicted branches a packet-hop, 6.7 without the branch; 0.94x the time). Where it
    /// has one, as in a dumbbell's heap of far timers and a few near arrivals (the earlier
    /// child nearly always on the same side), the branch is predicted and the branchless
    /// choice only makes each level wait for the one above (with a bottom-up pop: 1.10x the
    /// time on 10 flows, 1.16x on 100; in every slot of the wheel: 1.02x on 1,000 at 1 Gb/s),
    /// so it is taken only where slots have narrowed ([`EventQueue::pop_until`]).
    #[inline(always)]
    fn remove_first<const BRANCHLESS: bool>(&mut self) {
        let Some(last) = self.heap.pop() else {
            return;
        };
        let n = self.heap.len();
        if n > 0 {
            // Sift `last` down from the root: move the smaller child up into the hole until
            // `last` fits.
            // In bounds: `n` is the length; `left < n` is checked before it is read, `right`
            // only when `right < n`; the child taken is one of them, and `i` is 0 (< n) or
            // a child taken.
            let mut i = 0;
            loop {
                let left = 2 * i + 1;
                if left >= n {
                    break;
                }
                let right = left + 1;
                let child = if BRANCHLESS {
                    if right < n {
                        left + usize::from(self.at(right).key < self.at(left).key)
                    } else {
                        left
                    }
                } else if right < n && self.at(right).key < self.at(left).key {
                    right
                } else {
                    left
                };
                if last.key <= self.at(child).key {
                    break;
                }
                self.set(i, *self.at(child));
                i = child;
            }
            self.set(i, last);
        }
    }

    #[inline(always)]
    fn first(&self) -> Option<&Entry> {
        self.heap.first()
    }
}

/// The widest slot, and the first: 2^MAX_SLOT_BITS ns. 4,096 ns rather than 1,024: at 1,000
/// flows on 1 Gb/s (under one event per microsecond) nearly every 1 µs slot was a refill for a
/// single event; 4 µs slots took 0.965x the time there and 0.94x at 1,000 flows on 10 Gb/s,
/// 1.01x at 10,000 (paired bench-case runs); 16 µs slots made the heap deeper at 10,000 flows
/// (1.11x).
const MAX_SLOT_BITS: u32 = 12;
/// The narrowest slot, 4 ns (a 1500-byte packet takes 1.2 µs at 10 Gb/s, 120 ns at 100 Gb/s;
/// a k = 16 fabric has some 4 events a nanosecond). 1 ns slots gained nothing there (1.00x,
/// session 43: its events come at the same instants).
const MIN_SLOT_BITS: u32 = 2;
/// The slot's width changes by this many bits (four times) at a time.
const SLOT_STEP: u32 = 2;
/// The events per slot are looked at after this many refills, or sooner once they brought
/// `LOOK_EVENTS` events; the slot narrows above `DENSE` events per refill on average, and widens
/// below `SPARSE` (four times apart and more, so that a change is not undone by the next look).
const LOOK_EVERY: u32 = 4096;
const LOOK_EVENTS: u64 = 1 << 16;
/// A slot's events are ordered by a binary heap whose sift ends at a level no branch can
/// foresee, so fewer events a slot means fewer mispredicted branches, against a refill for
/// every few events. Narrowing above 8 rather than 48 (session 43) took 0.94x the time on the
/// k = 8 fabrics (the permutation's slots 4 ns wide rather than 64: 4 events a refill rather
/// than 32) and 0.99x on k = 16 (its 4 ns slots still bring ~34: its events come at a few
/// instants, and its time goes to cache misses); the dumbbells do not narrow (1,000 flows on
/// 10 Gb/s bring 3-6 events a 4 µs slot).
const DENSE: u64 = 8;
const SPARSE: u64 = 2;
/// Slots in the ring: it spans 2^RING_BITS slots (16.8 ms of 4 µs slots), more than the
/// propagation and queueing delays of nearly every event; later events wait in `far`.
const RING_BITS: u32 = 12;
const RING: u64 = 1 << RING_BITS;
const WORDS: usize = (RING / 64) as usize;
// `EventQueue::words` has a bit per word of the ring's bitmap.
const _: () = assert!(WORDS <= 64);
/// The end of a ring slot's list, and of the free list.
const NIL: u32 = u32::MAX;

/// The wheel is used from this many pending events on, and left below `SMALL`: a small heap
/// is as fast as the wheel (the 10-flow bench has ~15 events pending, the 100-flow one ~130,
/// the 1000-flow ones ~1,700).
const LARGE: usize = 512;
const SMALL: usize = 128;
/// The cursor while the wheel is not in use: every event goes to the heap.
const NO_WHEEL: u64 = u64::MAX;

/// A pending event in a ring slot's list (32 bytes, as an [`Entry`]). Every event in ring
/// slot `s` is due in slot `s`, so of its time the node keeps only the offset in the slot
/// (the rest is the cursor's when the slot becomes current), and of its key the tie.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Node {
    tie: u64,
    offset: u32,
    next: u32,
    event: Event,
}

impl Node {
    /// This node's entry, its slot being `slot` of width 2^`slot_bits` ns.
    #[inline(always)]
    fn entry(&self, slot: u64, slot_bits: u32) -> Entry {
        let time = Time((slot << slot_bits) | u64::from(self.offset));
        Entry::new(time, self.tie, self.event)
    }
}

// Two entries or nodes to a cache line, neither across two.
const _: () = assert!(
    std::mem::size_of::<Entry>() == 32
        && std::mem::align_of::<Entry>() == 32
        && std::mem::size_of::<Node>() == 32
        && std::mem::align_of::<Node>() == 32
);

/// Pending events.
pub struct EventQueue {
    /// Events due before `cursor + 2^slot_bits` (or before `cursor`: live mode schedules at
    /// the clock after the cursor has looked ahead); every event while the wheel is not in use.
    current: Heap,
    /// The start of the current slot, in slots (time >> slot_bits), or `NO_WHEEL`.
    cursor: u64,
    /// A slot is 2^slot_bits ns.
    slot_bits: u32,
    /// Refills since the slot's width was last looked at, and the events they brought.
    refills: u32,
    refilled_events: u64,
    /// Ring slot `s % RING` lists the events of slot `s`, for `cursor < s < cursor + RING`:
    /// `heads[s % RING]` is the first node in `nodes`, in no particular order (a slot's
    /// events are ordered by the heap when the cursor reaches it).
    heads: Vec<u32>,
    /// Bit `i % 64` of `occupied[i / 64]`: ring slot `i` is not empty; bit `w` of `words`:
    /// `occupied[w]` is not zero.
    occupied: [u64; WORDS],
    words: u64,
    /// The nodes of every ring slot's list, and the free ones (a list from `free`, reused
    /// last in, first out: a node is written where one was just read).
    nodes: Vec<Node>,
    free: u32,
    /// Events of slot `cursor + RING` or later.
    far: Heap,
    len: usize,
    /// The entity whose events are scheduled now, and when (the tie rule); for each entity,
    /// the instant it last scheduled at (its low 32 bits: enough to tell the next instant from
    /// it) and how many events it has scheduled then.
    by: Entity,
    at: Time,
    counts: Vec<(u32, u32)>,
    /// The cursor moved to a new slot since [`take_refilled`](Self::take_refilled) last said.
    refilled: bool,
    /// The key of the event last popped.
    popped: u128,
    /// The largest key popped before an arrival was scheduled at the instant of the event
    /// being handled ([`EventQueue::position`]).
    caused: u128,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        EventQueue {
            current: Heap::default(),
            cursor: NO_WHEEL,
            slot_bits: MAX_SLOT_BITS,
            refills: 0,
            refilled_events: 0,
            heads: vec![NIL; RING as usize],
            occupied: [0; WORDS],
            words: 0,
            nodes: Vec::new(),
            free: NIL,
            far: Heap::default(),
            len: 0,
            by: Entity::RUN,
            at: Time::ZERO,
            counts: vec![(0, 0)],
            refilled: false,
            popped: 0,
            caused: 0,
        }
    }
}

impl EventQueue {
    /// The slot of an entry with key `key`.
    #[inline(always)]
    fn slot_of(&self, key: u128) -> u64 {
        // The time's 64 bits, then a 64-bit shift: a u128 shifted by a variable amount
        // costs several instructions and a branch.
        ((key >> 64) as u64) >> self.slot_bits
    }

    /// A queue for a run with these entities.
    pub fn new(entities: &Entities) -> EventQueue {
        EventQueue {
            counts: vec![(0, 0); entities.count()],
            ..EventQueue::default()
        }
    }

    /// The events scheduled from now on are `entity`'s, scheduled at `now` (it is handling
    /// an event then).
    #[inline(always)]
    pub fn by(&mut self, entity: Entity, now: Time) {
        (self.by, self.at) = (entity, now);
    }

    /// Schedules `event` at `time`, for the entity and instant [`by`](Self::by) last named.
    pub fn schedule(&mut self, time: Time, event: Event) {
        let inverse = inverse_ahead(self.at, time);
        let (at, count) = &mut self.counts[self.by.0 as usize];
        if *at != self.at.0 as u32 {
            (*at, *count) = (self.at.0 as u32, 0);
        }
        let tie = (inverse << (ENTITY_BITS + COUNT_BITS))
            | (u64::from(self.by.0) << COUNT_BITS)
            | u64::from(*count & COUNT_MASK);
        *count = count.wrapping_add(1);
        self.insert(Entry::new(time, tie, event));
    }

    /// Schedules the arrival of the first packet in link `l`'s pipe at `time` (`head`, `then`:
    /// [`Event::Arrive`]'s hints), with the key every arrival has, whoever schedules it and
    /// when: as if its link's receiving side had scheduled it long ahead, with the count
    /// reserved for arrivals. So an arrival's place depends on its time and link alone — the
    /// receiving side knows it without knowing when the sending side put the packet in the pipe
    /// (issue 56) — and it moves no entity's count. Distinct: a link has one pending arrival.
    #[inline(always)]
    pub fn schedule_arrival(&mut self, time: Time, l: u32, head: u32, then: u32) {
        let tie = (u64::from(Entity::receiver(l as usize).0) << COUNT_BITS) | ARRIVAL;
        if time == self.at {
            self.arrival_now();
        }
        self.insert(Entry::new(time, tie, Event::Arrive(l, head, then)));
    }

    /// An arrival is scheduled at the instant of the event being handled (over a link without
    /// delay): its key may be smaller than that event's, and it is handled next all the same.
    #[cold]
    fn arrival_now(&mut self) {
        self.caused = self.caused.max(self.popped);
    }

    /// Schedules flow `flow`'s retirement check at `time`, as its sender `sender` schedules it
    /// at the instant last named, with the count reserved for retirements: whether a check is
    /// scheduled, which depends on packets in other partitions, moves no entity's count.
    /// Distinct: a flow has one pending check.
    pub fn schedule_retire(&mut self, time: Time, sender: Entity, flow: u32) {
        let key = retirement_key(self.at, time, sender);
        self.insert(Entry {
            key,
            event: Event::Retire(flow),
        });
    }

    #[inline(always)]
    fn insert(&mut self, e: Entry) {
        self.len += 1;
        if self.cursor == NO_WHEEL {
            self.current.push(e);
            if self.len >= LARGE {
                self.start_wheel();
            }
        } else {
            self.file(e);
        }
    }

    /// Files the heap's events in the wheel, from the slot of the earliest.
    #[cold]
    fn start_wheel(&mut self) {
        let Some(first) = self.current.first() else {
            return;
        };
        self.cursor = first.time().0 >> self.slot_bits;
        let entries = std::mem::take(&mut self.current.heap);
        for e in entries {
            self.file(e);
        }
    }

    /// Puts every event of the wheel back in the heap.
    #[cold]
    fn stop_wheel(&mut self) {
        let cursor = std::mem::replace(&mut self.cursor, NO_WHEEL);
        for i in 0..RING as usize {
            // Ring slot i holds the events of the slot after the cursor that is i mod RING.
            let slot = cursor + (i as u64).wrapping_sub(cursor) % RING;
            let mut n = std::mem::replace(&mut self.heads[i], NIL);
            while n != NIL {
                let node = self.nodes[n as usize];
                self.current.push(node.entry(slot, self.slot_bits));
                n = node.next;
            }
        }
        (self.occupied, self.words) = ([0; WORDS], 0);
        self.nodes.clear();
        self.free = NIL;
        for e in std::mem::take(&mut self.far.heap) {
            self.current.push(e);
        }
    }

    /// Puts `e` in the current slot's heap, its ring slot or `far`, relative to `cursor`.
    #[inline(always)]
    fn file(&mut self, e: Entry) {
        let slot = self.slot_of(e.key);
        if slot <= self.cursor {
            self.current.push(e);
        } else if slot - self.cursor < RING {
            let i = (slot % RING) as usize;
            let node = Node {
                tie: e.tie(),
                offset: (e.time().0 & ((1 << self.slot_bits) - 1)) as u32,
                next: self.heads[i],
                event: e.event,
            };
            let n = if self.free != NIL {
                let n = self.free;
                self.free = self.nodes[n as usize].next;
                self.nodes[n as usize] = node;
                n
            } else {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            };
            self.heads[i] = n;
            self.occupied[i / 64] |= 1 << (i % 64);
            self.words |= 1 << (i / 64);
        } else {
            self.far.push(e);
        }
    }

    /// The first occupied ring slot after the cursor's, as a distance from it (1..RING).
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        if self.words == 0 {
            return None;
        }
        let from = ((self.cursor + 1) % RING) as usize;
        let (w, b) = (from / 64, from % 64);
        // The slots from `from` to the end of its word; then the words after it; then, round
        // the ring, the words from the first (the cursor's own slot is empty).
        let i = if self.occupied[w] >> b != 0 {
            from + (self.occupied[w] >> b).trailing_zeros() as usize
        } else {
            let after = self.words & (u64::MAX << w << 1);
            let w = if after != 0 {
                after.trailing_zeros()
            } else {
                self.words.trailing_zeros()
            } as usize;
            w * 64 + self.occupied[w].trailing_zeros() as usize
        };
        Some((i as u64).wrapping_sub(self.cursor) % RING)
    }

    /// Moves the cursor on until the current slot holds an event; false if none is pending.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        while self.current.first().is_none() {
            let step = match self.next_occupied() {
                Some(d) => d,
                // Only far events: the cursor jumps to the earliest's slot.
                None => match self.far.first() {
                    Some(f) => self.slot_of(f.key) - self.cursor,
                    None => return false,
                },
            };
            self.cursor += step;
            self.refilled = true;
            let i = (self.cursor % RING) as usize;
            let mut n = std::mem::replace(&mut self.heads[i], NIL);
            self.occupied[i / 64] &= !(1 << (i % 64));
            if self.occupied[i / 64] == 0 {
                self.words &= !(1 << (i / 64));
            }
            while n != NIL {
                let node = &mut self.nodes[n as usize];
                self.current.push(node.entry(self.cursor, self.slot_bits));
                let next = std::mem::replace(&mut node.next, self.free);
                self.free = n;
                n = next;
            }
            // The current slot was empty: what it holds now, the ring slot brought.
            let brought = self.current.heap.len() as u64;
            // Far events that the ring now spans move into it (or the current slot).
            while let Some(f) = self.far.first() {
                if self.slot_of(f.key) - self.cursor >= RING {
                    break;
                }
                let e = *f;
                self.far.remove_first::<false>();
                self.file(e);
            }
            self.refills += 1;
            self.refilled_events += brought;
            if self.refills == LOOK_EVERY || self.refilled_events >= LOOK_EVENTS {
                self.look_at_the_slots_width();
            }
        }
        true
    }

    /// Narrows the slots where they bring many events each, widens them where few (see the
    /// module's header), filing the pending events again for the new width.
    #[cold]
    fn look_at_the_slots_width(&mut self) {
        let per_refill = self.refilled_events / u64::from(self.refills);
        (self.refills, self.refilled_events) = (0, 0);
        let bits = if per_refill > DENSE && self.slot_bits > MIN_SLOT_BITS {
            self.slot_bits - SLOT_STEP
        } else if per_refill < SPARSE && self.slot_bits < MAX_SLOT_BITS {
            self.slot_bits + SLOT_STEP
        } else {
            return;
        };
        self.stop_wheel();
        self.slot_bits = bits;
        self.start_wheel();
    }

    /// The earliest event, if it is due no later than `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        if self.cursor != NO_WHEEL && self.current.first().is_none() && !self.refill() {
            return None;
        }
        let first = *self.current.first()?;
        if first.time() > limit {
            return None;
        }
        // Where events are dense enough that the slots have narrowed (a fabric: many links'
        // arrivals a few nanoseconds apart), a slot's events come in no order a branch could
        // learn; elsewhere they come mostly in the order they are due, or are a level or two
        // (see `Heap::remove_first`). The width changes rarely: this branch is predicted.
        if self.slot_bits < MAX_SLOT_BITS {
            self.current.remove_first::<true>();
        } else {
            self.current.remove_first::<false>();
        }
        self.len -= 1;
        if self.cursor != NO_WHEEL && self.len < SMALL {
            self.stop_wheel();
        }
        self.popped = first.key;
        Some((first.time(), first.event))
    }

    /// Where in the run's order the event being handled is, for a parallel run to tell when
    /// something happened in the serial run's order: its key (its time in the high 64 bits,
    /// its place among the events of that time below) — but for an arrival over a link without
    /// delay. Its key counts as scheduled long ahead, so it can be smaller than the key of the
    /// event that put the packet in the pipe, yet it is handled after that event (next, as the
    /// earliest): it takes that event's place, the largest key handled before it. Keys of
    /// later events are larger again (each was pending, or was scheduled later for later, when
    /// that event was handled), so the places of the events handled are non-decreasing.
    /// (Until 2026-11-30 a parallel run used the key alone, and could put a flow's retirement,
    /// or a packet trace's records, before the transmission that caused its last arrival.)
    #[inline(always)]
    pub fn position(&self) -> u128 {
        self.popped.max(self.caused)
    }

    /// Whether the current slot was refilled from the ring since the last call.
    #[inline(always)]
    pub fn take_refilled(&mut self) -> bool {
        std::mem::take(&mut self.refilled)
    }

    /// The events of the current slot, in no order.
    pub fn current(&self) -> impl Iterator<Item = &Event> {
        self.current.heap.iter().map(|e| &e.event)
    }

    /// The earliest event of the current slot, if it holds one (a cheap look ahead).
    #[inline(always)]
    pub fn peek_first(&self) -> Option<Event> {
        self.current.first().map(|e| e.event)
    }

    /// When the earliest pending event is due.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some(e) = self.current.first() {
            return Some(e.time());
        }
        if self.cursor == NO_WHEEL {
            return None;
        }
        match self.next_occupied() {
            Some(d) => {
                let mut n = self.heads[((self.cursor + d) % RING) as usize];
                let mut first = u128::MAX;
                while n != NIL {
                    first = first.min(
                        self.nodes[n as usize]
                            .entry(self.cursor + d, self.slot_bits)
                            .key,
                    );
                    n = self.nodes[n as usize].next;
                }
                Some(Time((first >> 64) as u64))
            }
            None => self.far.first().map(Entry::time),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Keeps only the pending events `keep` accepts, their keys unchanged (a partition of a
    /// parallel run leaves the fixed events of the entities it does not hold).
    pub fn retain(&mut self, mut keep: impl FnMut(&Event) -> bool) {
        if self.cursor != NO_WHEEL {
            self.stop_wheel();
        }
        let entries = std::mem::take(&mut self.current.heap);
        self.len = 0;
        for e in entries.into_iter().filter(|e| keep(&e.event)) {
            self.insert(e);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue for the tests below: a million entities.
    fn queue() -> EventQueue {
        EventQueue::new(&Entities::new(0, 1 << 20))
    }

    /// Schedules `Scheduled(n)` at `t` as the `n`-th entity's (at instant 0), so that equal-time
    /// events come out in `n`'s order: the models below sort by (time, n).
    fn schedule_nth(q: &mut EventQueue, t: Time, n: u64) {
        q.by(Entity(1 + n as u32), Time::ZERO);
        q.schedule(t, Event::Scheduled(n as u32));
    }

    #[test]
    fn earliest_first_then_the_tie_rule() {
        let l = Entities::new(4, 2);
        let mut q = queue();
        // Scheduled at 0 by the run; at 2 by an endpoint, link 3's receiver and link 1's sender.
        q.schedule(Time(5), Event::Sample);
        q.schedule(Time(1), Event::TxDone(1));
        q.by(l.endpoint(0), Time(2));
        q.schedule(Time(5), Event::TxDone(2));
        q.by(Entity::receiver(3), Time(2));
        q.schedule(Time(5), Event::TxDone(9));
        q.schedule(Time(5), Event::TxDone(7));
        q.by(Entity::sender(1), Time(2));
        q.schedule(Time(5), Event::Arrive(1, 0, 0));
        let out: Vec<_> = std::iter::from_fn(|| q.pop_until(Time(10))).collect();
        assert_eq!(
            out,
            vec![
                (Time(1), Event::TxDone(1)),
                // Scheduled earliest.
                (Time(5), Event::Sample),
                // Scheduled at 2: link 1's sender, link 3's receiver (its two in the order it
                // scheduled them), the endpoint.
                (Time(5), Event::Arrive(1, 0, 0)),
                (Time(5), Event::TxDone(9)),
                (Time(5), Event::TxDone(7)),
                (Time(5), Event::TxDone(2)),
            ]
        );
    }

    proptest::proptest! {
        /// What a parallel engine relies on: the order depends on what each entity scheduled
        /// and when, never on how different entities' scheduling interleaved. Each entity's
        /// events, scheduled in its own order, are interleaved with the others' two ways (the
        /// instants of scheduling staying in order, as they do in any run); both queues pop the
        /// same sequence.
        #[test]
        fn the_order_does_not_depend_on_how_entities_interleave(
            raw in proptest::collection::vec((0u64..4, 0u32..5, 0u64..6, 0u32..3), 1..60),
            shuffle in proptest::collection::vec(0u64..1_000, 60),
        ) {
            // (instant of scheduling, entity, delay, event)
            let mut evs: Vec<(Time, Entity, Time, Event)> = raw
                .iter()
                .map(|&(at, e, d, k)| (Time(at), Entity(e), Time(at + d), Event::TxDone(k)))
                .collect();
            evs.sort_by_key(|e| e.0);
            let run = |order: &[(Time, Entity, Time, Event)]| {
                let mut q = queue();
                for &(at, e, t, ev) in order {
                    q.by(e, at);
                    q.schedule(t, ev);
                }
                std::iter::from_fn(|| q.pop_until(Time(100))).collect::<Vec<_>>()
            };
            // The same events, each instant's interleaved differently across entities (each
            // entity's own order kept: a stable sort by a random key per entity).
            let mut other = evs.clone();
            other.sort_by_key(|e| (e.0, shuffle[e.1 .0 as usize % shuffle.len()]));
            proptest::prop_assert_eq!(run(&evs), run(&other));
        }
    }

    proptest::proptest! {
        /// Both ways of choosing the smaller child keep a heap: pushes and pops in any mix pop
        /// every key in order, against a sorted model.
        #[test]
        fn the_heap_pops_in_key_order_either_way(
            ops in proptest::collection::vec(proptest::option::of(0u64..1_000), 1..300),
        ) {
            for branchless in [false, true] {
                let mut heap = Heap::default();
                let mut model: Vec<u128> = Vec::new();
                for (i, op) in ops.iter().enumerate() {
                    match *op {
                        Some(t) => {
                            let e = Entry::new(Time(t), i as u64, Event::Sample);
                            heap.push(e);
                            model.push(e.key);
                        }
                        None => {
                            model.sort_unstable_by(|a, b| b.cmp(a));
                            proptest::prop_assert_eq!(heap.first().map(|e| e.key), model.pop());
                            if branchless {
                                heap.remove_first::<true>();
                            } else {
                                heap.remove_first::<false>();
                            }
                        }
                    }
                }
            }
        }
    }

    /// An arrival over a link without delay, scheduled at the instant of the transmission
    /// that put the packet there, has the smaller key (an arrival counts as scheduled long
    /// ahead) yet comes out after it: it takes the transmission's place in the run's order,
    /// and the events after it their own keys again.
    #[test]
    fn an_arrival_at_once_takes_the_place_of_its_cause() {
        let mut q = queue();
        q.by(Entity::sender(3), Time(0));
        q.schedule(Time(100), Event::TxDone(3));
        q.schedule(Time(300), Event::TxDone(3));
        assert_eq!(
            q.pop_until(Time(1_000)),
            Some((Time(100), Event::TxDone(3)))
        );
        let cause = q.position();
        q.by(Entity::sender(3), Time(100));
        q.schedule_arrival(Time(100), 3, 0, 0);
        assert_eq!(
            q.pop_until(Time(1_000)),
            Some((Time(100), Event::Arrive(3, 0, 0)))
        );
        assert!(q.popped < cause, "the arrival's key is the smaller");
        assert_eq!(q.position(), cause);
        assert_eq!(
            q.pop_until(Time(1_000)),
            Some((Time(300), Event::TxDone(3)))
        );
        assert_eq!(q.position(), q.popped);
        assert!(q.position() > cause);
    }

    #[test]
    fn stops_at_the_limit() {
        let mut q = queue();
        q.schedule(Time(7), Event::Sample);
        assert_eq!(q.pop_until(Time(6)), None);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn pops_in_key_order_whatever_the_schedule() {
        // Pseudo-random times with many ties, interleaved pushes and pops, against a sort.
        let mut q = queue();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut x = 12345u64;
        let mut out = Vec::new();
        let mut expected = Vec::new();
        for (seq, round) in (0..2000u64).enumerate() {
            let seq = seq as u64;
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (x >> 33) % 50 + round / 10;
            schedule_nth(&mut q, Time(t), seq);
            model.push((t, seq));
            if x.is_multiple_of(3) {
                model.sort();
                let (t, s) = model.remove(0);
                expected.push((Time(t), Event::Scheduled(s as u32)));
                out.push(q.pop_until(Time::MAX).unwrap());
            }
        }
        model.sort();
        expected.extend(
            model
                .iter()
                .map(|&(t, s)| (Time(t), Event::Scheduled(s as u32))),
        );
        out.extend(std::iter::from_fn(|| q.pop_until(Time::MAX)));
        assert_eq!(out, expected);
    }
    /// Interleaved schedules (at the time of the last event popped or later, spread over
    /// every scale from 0 to 2⁴⁰ ns, with many ties) and pops (some with a limit that stops
    /// them), against a sorted model.
    #[test]
    fn pops_in_key_order_at_every_time_scale() {
        let mut q = queue();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut x = 12345u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 16
        };
        let (mut now, mut popped) = (0u64, 0);
        for seq in 0..20_000u64 {
            let r = next();
            let t = now + ((r >> 8) & ((1 << (r % 41)) - 1));
            schedule_nth(&mut q, Time(t), seq);
            model.push((t, seq));
            assert_eq!(q.len(), model.len());
            model.sort();
            assert_eq!(q.peek_time(), Some(Time(model[0].0)));
            for _ in 0..next() % 3 {
                let limit = Time(now + next() % 1000);
                let want = model
                    .first()
                    .filter(|&&(t, _)| Time(t) <= limit)
                    .map(|&(t, s)| (Time(t), Event::Scheduled(s as u32)));
                assert_eq!(q.pop_until(limit), want);
                if want.is_some() {
                    now = model.remove(0).0;
                    popped += 1;
                }
            }
        }
        while let Some((t, s)) = (!model.is_empty()).then(|| model.remove(0)) {
            assert_eq!(
                q.pop_until(Time::MAX),
                Some((Time(t), Event::Scheduled(s as u32)))
            );
        }
        assert!(q.is_empty() && q.pop_until(Time::MAX).is_none());
        assert!(popped > 5_000, "the pops ran: {popped}");
    }

    /// Events on both sides of the ring's reach (its last slot, the first beyond it, far
    /// beyond), with the ring wrapping round several times, come out in key order.
    #[test]
    fn order_holds_across_the_rings_reach() {
        let mut q = queue();
        let mut model = std::collections::BTreeSet::new();
        let slot = 1u64 << MAX_SLOT_BITS;
        let mut seq = 0u64;
        let mut add = |q: &mut EventQueue, t: u64| {
            schedule_nth(q, Time(t), seq);
            model.insert((t, seq));
            seq += 1;
        };
        // Enough events to start the wheel at slot 0.
        for i in 0..LARGE as u64 {
            add(&mut q, i % 7);
        }
        assert_ne!(q.cursor, NO_WHEEL);
        for k in [
            RING - 1,
            RING,
            RING + 1,
            2 * RING - 1,
            2 * RING,
            5 * RING + 3,
        ] {
            for d in [0, 1, slot - 1] {
                add(&mut q, k * slot + d);
                add(&mut q, k * slot + d);
            }
        }
        // Keep the wheel running while popping: new events a little ahead of each pop.
        let mut popped = 0;
        while let Some((t, s)) = model.pop_first() {
            assert_eq!(
                q.pop_until(Time::MAX),
                Some((Time(t), Event::Scheduled(s as u32)))
            );
            popped += 1;
            if popped < 3000 && q.len() < SMALL * 2 {
                for d in [1, 3 * slot, RING * slot] {
                    schedule_nth(&mut q, Time(t + d), seq);
                    model.insert((t + d, seq));
                    seq += 1;
                }
            }
        }
        assert!(q.is_empty());
    }

    /// A pop that finds nothing due leaves the queue able to take an event before the
    /// pending ones (live mode schedules at the wall clock between its calls).
    #[test]
    fn an_event_before_the_pending_ones_after_a_pop_that_found_none() {
        let mut q = queue();
        q.schedule(Time(10), Event::TxDone(0));
        q.schedule(Time(1_000), Event::TxDone(1));
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), Event::TxDone(0))));
        assert_eq!(q.pop_until(Time(500)), None);
        q.schedule(Time(600), Event::TxDone(2));
        assert_eq!(q.pop_until(Time::MAX), Some((Time(600), Event::TxDone(2))));
        assert_eq!(
            q.pop_until(Time::MAX),
            Some((Time(1_000), Event::TxDone(1)))
        );
    }

    /// Grows past `LARGE` and shrinks below `SMALL` three times (the wheel starts and stops
    /// with events pending at every scale), against a sorted model.
    #[test]
    fn order_holds_as_the_wheel_starts_and_stops() {
        let mut q = queue();
        let mut model = std::collections::BTreeSet::new();
        let (mut x, mut now, mut seq) = (99u64, 0u64, 0u64);
        let (mut started, mut stopped) = (0, 0);
        for _ in 0..3 {
            while q.len() < 2 * LARGE {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let t = now + ((x >> 20) & ((1 << ((x >> 8) % 36)) - 1));
                let was = q.cursor;
                schedule_nth(&mut q, Time(t), seq);
                started += usize::from(was == NO_WHEEL && q.cursor != NO_WHEEL);
                model.insert((t, seq));
                seq += 1;
            }
            while q.len() > SMALL / 2 {
                let (t, s) = model.pop_first().unwrap();
                let was = q.cursor;
                assert_eq!(q.peek_time(), Some(Time(t)));
                assert_eq!(
                    q.pop_until(Time::MAX),
                    Some((Time(t), Event::Scheduled(s as u32)))
                );
                stopped += usize::from(was != NO_WHEEL && q.cursor == NO_WHEEL);
                now = t;
            }
        }
        assert_eq!((started, stopped), (3, 3));
    }

    /// Dense events (a fabric's: ~200 per 4 µs slot) narrow the slots, sparse ones (one per
    /// 40 µs) widen them again, and the order holds throughout, against a sorted model.
    #[test]
    fn the_slots_narrow_where_events_are_dense_and_widen_where_sparse() {
        let mut q = queue();
        let mut model = std::collections::BTreeSet::new();
        let (mut x, mut seq) = (7u64, 0u64);
        let mut widths = vec![q.slot_bits];
        // Each pop schedules one event a random time ahead, keeping ~2,000 pending.
        let mut run = |q: &mut EventQueue, mean_gap: u64, pops: usize| {
            let mut now = 0;
            for _ in 0..pops {
                while q.len() < 2_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    let t = now + (x >> 33) % (4_000 * mean_gap);
                    schedule_nth(q, Time(t), seq);
                    model.insert((t, seq));
                    seq += 1;
                }
                let (t, s) = model.pop_first().unwrap();
                assert_eq!(
                    q.pop_until(Time::MAX),
                    Some((Time(t), Event::Scheduled(s as u32)))
                );
                now = t;
                if widths.last() != Some(&q.slot_bits) {
                    widths.push(q.slot_bits);
                }
            }
        };
        run(&mut q, 10, 200_000);
        assert!(q.slot_bits < MAX_SLOT_BITS, "narrowed: {widths:?}");
        run(&mut q, 40_000, 200_000);
        assert_eq!(q.slot_bits, MAX_SLOT_BITS, "widened again: {widths:?}");
    }
}
