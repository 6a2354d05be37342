//! The event queue: events in (time, insertion sequence) order.
//!
//! The sequence number makes equal-time events come out in the order they were scheduled, so a
//! run never depends on how the queue breaks ties. Entries are 32 bytes; cancelled timers are
//! not removed but carry a generation number that the simulator checks when they come out.
//!
//! Two parts (after the hierarchical timing wheels of Varghese and Lauck, SOSP 1987, with
//! exact order within a slot):
//! - **the current slot**: every event due before the end of the current 4,096 ns slot, in a
//!   binary heap of its own (`Heap`), which gives the exact order; it holds few events;
//! - **the wheel**: every later event, filed without a comparison by the highest base-64
//!   digit (of its time in slots) in which it differs from the current slot: level `k`, slot
//!   = that digit. When the current slot is empty the cursor moves to the lowest occupied
//!   slot of the lowest occupied level, and that slot's events are filed again relative to it
//!   (into lower levels, or the current slot's heap). An event moves down at most once per
//!   level, and nearly all go straight to level 0 or 1.
//!
//! With a single binary heap, pop and schedule were 37% of a 1000-flow run: ~1,700 pending
//! events, 11 levels, a mispredicted branch at each. The order is a function of the keys
//! alone, which are unique, so runs are the same with any exact queue.
//!
//! The heap is this file's own rather than `std::collections::BinaryHeap`: the standard one
//! writes a pushed entry to memory and reads it straight back to sift it up, and pops by sifting
//! a hole to the bottom and the last entry up again; here the entry being placed stays in
//! registers while the hole moves, and a pop sifts the last entry down from the root, stopping
//! as soon as it fits (keys are one 128-bit compare, so the extra comparisons cost less than the
//! memory traffic).

use acclab_core::Time;

/// What happens at an event. Payloads are dense indices into the simulator's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serialising its head packet.
    TxDone(u32),
    /// A packet starts its transmission on a link that computed its departure when it was
    /// enqueued: scheduled only for observers added beside the monitor, so that they hear of
    /// transmissions in time order (the monitor is told when the queue is next read).
    TxStart(u32),
    /// The first packet propagating on a link reaches the link's far end.
    Arrive(u32),
    /// An endpoint's timer, valid only if the generation still matches.
    Timer {
        endpoint: u32,
        generation: u32,
    },
    FlowStart(u32),
    FlowStop(u32),
    /// A scenario event (delay or rate change), by index.
    Scheduled(u32),
    /// Take a monitoring sample.
    Sample,
    /// The measurement window opens or closes.
    WindowStart,
    WindowEnd,
}

/// A pending event. `key` is the time in its high 64 bits and the insertion sequence in its low
/// 64 bits, so that one branch-free 128-bit comparison orders entries (a `(time, seq)` tuple
/// compares in two steps; the heap's sift-down does little else).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

/// A binary min-heap of entries by key (`heap[0]` is the earliest).
#[derive(Default)]
struct Heap {
    heap: Vec<Entry>,
}

impl Heap {
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        // Sift up: move parents down into the hole until `e` fits, then write it once.
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Removes the earliest entry (which the caller has read with `first`).
    #[inline(always)]
    fn remove_first(&mut self) {
        let Some(last) = self.heap.pop() else {
            return;
        };
        let n = self.heap.len();
        if n > 0 {
            // Sift `last` down from the root: move the smaller child up into the hole until
            // `last` fits.
            let mut i = 0;
            loop {
                let left = 2 * i + 1;
                if left >= n {
                    break;
                }
                let right = left + 1;
                let child = if right < n && self.heap[right].key < self.heap[left].key {
                    right
                } else {
                    left
                };
                if last.key <= self.heap[child].key {
                    break;
                }
                self.heap[i] = self.heap[child];
                i = child;
            }
            self.heap[i] = last;
        }
    }

    #[inline(always)]
    fn first(&self) -> Option<&Entry> {
        self.heap.first()
    }
}

/// The current slot's width, 2^SLOT_BITS ns, and the wheel's digits. 4,096 ns rather than
/// 1,024: at 1,000 flows on 1 Gb/s (under one event per microsecond) nearly every 1 µs slot
/// was a refill for a single event; 4 µs slots took 0.965x the time there and 0.94x at 1,000
/// flows on 10 Gb/s, 1.01x at 10,000 (paired bench-case runs); 16 µs slots made the heap
/// deeper at 10,000 flows (1.11x).
const SLOT_BITS: u32 = 12;
const DIGIT_BITS: u32 = 6;
const SLOTS: usize = 1 << DIGIT_BITS;
/// Enough levels for every time in slots (64 − SLOT_BITS bits).
const LEVELS: usize = (64 - SLOT_BITS).div_ceil(DIGIT_BITS) as usize;

/// The wheel is used from this many pending events on, and left below `SMALL`: a small heap
/// is as fast as the wheel (the 10-flow bench has ~15 events pending, the 100-flow one ~130,
/// the 1000-flow ones ~1,700).
const LARGE: usize = 512;
const SMALL: usize = 128;
/// The cursor while the wheel is not in use: every event goes to the heap.
const NO_WHEEL: u64 = u64::MAX;

/// Pending events.
pub struct EventQueue {
    /// Events due before `cursor + 2^SLOT_BITS` (or before `cursor`: live mode schedules at
    /// the clock after the cursor has looked ahead); every event while the wheel is not in use.
    current: Heap,
    /// The start of the current slot, in slots (time >> SLOT_BITS), or `NO_WHEEL`.
    cursor: u64,
    /// `wheel[k * SLOTS + d]`: events whose time in slots first differs from `cursor` in
    /// base-64 digit `k`, where it is `d` (greater than the cursor's).
    wheel: Vec<Vec<Entry>>,
    /// Bit `d` of `occupied[k]`: `wheel[k * SLOTS + d]` is not empty.
    occupied: [u64; LEVELS],
    len: usize,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        EventQueue {
            current: Heap::default(),
            cursor: NO_WHEEL,
            wheel: vec![Vec::new(); LEVELS * SLOTS],
            occupied: [0; LEVELS],
            len: 0,
            next_seq: 0,
        }
    }
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        let e = Entry {
            key: (u128::from(time.0) << 64) | u128::from(seq),
            event,
        };
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
        self.cursor = first.time().0 >> SLOT_BITS;
        let entries = std::mem::take(&mut self.current.heap);
        for e in entries {
            self.file(e);
        }
    }

    /// Puts every event of the wheel back in the heap.
    #[cold]
    fn stop_wheel(&mut self) {
        self.cursor = NO_WHEEL;
        for level in 0..LEVELS {
            while self.occupied[level] != 0 {
                let digit = self.occupied[level].trailing_zeros() as usize;
                self.occupied[level] &= !(1 << digit);
                let mut entries = std::mem::take(&mut self.wheel[level * SLOTS + digit]);
                for e in entries.drain(..) {
                    self.current.push(e);
                }
                self.wheel[level * SLOTS + digit] = entries;
            }
        }
    }

    /// Puts `e` in the current slot's heap or in its wheel slot, relative to `cursor`.
    #[inline(always)]
    fn file(&mut self, e: Entry) {
        let slot = e.time().0 >> SLOT_BITS;
        if slot <= self.cursor {
            self.current.push(e);
            return;
        }
        let level = (63 - (slot ^ self.cursor).leading_zeros()) / DIGIT_BITS;
        let digit = (slot >> (level * DIGIT_BITS)) as usize & (SLOTS - 1);
        self.wheel[level as usize * SLOTS + digit].push(e);
        self.occupied[level as usize] |= 1 << digit;
    }

    /// Moves the cursor on until the current slot holds an event; false if none is pending.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        while self.current.first().is_none() {
            let Some(level) = self.occupied.iter().position(|&o| o != 0) else {
                return false;
            };
            let digit = self.occupied[level].trailing_zeros();
            self.occupied[level] &= !(1 << digit);
            // The slot's start: the cursor's digits above `level`, `digit`, zeros below.
            let shift = level as u32 * DIGIT_BITS;
            let above = (self.cursor >> shift >> DIGIT_BITS) << DIGIT_BITS;
            self.cursor = (above | u64::from(digit)) << shift;
            let i = level * SLOTS + digit as usize;
            let mut entries = std::mem::take(&mut self.wheel[i]);
            for e in entries.drain(..) {
                self.file(e); // to a lower level, or the current slot
            }
            self.wheel[i] = entries; // keep its capacity
        }
        true
    }

    /// The earliest event, if it is due no later than `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        if self.cursor != NO_WHEEL && self.current.first().is_none() && !self.refill() {
            return None;
        }
        let first = *self.current.first()?;
        if first.time() > limit {
            return None;
        }
        self.current.remove_first();
        self.len -= 1;
        if self.cursor != NO_WHEEL && self.len < SMALL {
            self.stop_wheel();
        }
        Some((first.time(), first.event))
    }

    /// When the earliest pending event is due.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some(e) = self.current.first() {
            return Some(e.time());
        }
        let level = self.occupied.iter().position(|&o| o != 0)?;
        let digit = self.occupied[level].trailing_zeros() as usize;
        self.wheel[level * SLOTS + digit]
            .iter()
            .map(Entry::time)
            .min()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_among_equals() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), Event::Sample);
        q.schedule(Time(1), Event::TxDone(1));
        q.schedule(Time(5), Event::TxDone(2));
        q.schedule(Time(1), Event::TxDone(3));
        let out: Vec<_> = std::iter::from_fn(|| q.pop_until(Time(10))).collect();
        assert_eq!(
            out,
            vec![
                (Time(1), Event::TxDone(1)),
                (Time(1), Event::TxDone(3)),
                (Time(5), Event::Sample),
                (Time(5), Event::TxDone(2)),
            ]
        );
    }

    #[test]
    fn stops_at_the_limit() {
        let mut q = EventQueue::default();
        q.schedule(Time(7), Event::Sample);
        assert_eq!(q.pop_until(Time(6)), None);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn pops_in_key_order_whatever_the_schedule() {
        // Pseudo-random times with many ties, interleaved pushes and pops, against a sort.
        let mut q = EventQueue::default();
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
            q.schedule(Time(t), Event::Scheduled(seq as u32));
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
        let mut q = EventQueue::default();
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
            q.schedule(Time(t), Event::Scheduled(seq as u32));
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

    /// A pop that finds nothing due leaves the queue able to take an event before the
    /// pending ones (live mode schedules at the wall clock between its calls).
    #[test]
    fn an_event_before_the_pending_ones_after_a_pop_that_found_none() {
        let mut q = EventQueue::default();
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
        let mut q = EventQueue::default();
        let mut model = std::collections::BTreeSet::new();
        let (mut x, mut now, mut seq) = (99u64, 0u64, 0u64);
        let (mut started, mut stopped) = (0, 0);
        for _ in 0..3 {
            while q.len() < 2 * LARGE {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let t = now + ((x >> 20) & ((1 << ((x >> 8) % 36)) - 1));
                let was = q.cursor;
                q.schedule(Time(t), Event::Scheduled(seq as u32));
                started += usize::from(was == NO_WHEEL && q.cursor != NO_WHEEL);
                model.insert((t, seq));
                seq += 1;
            }
            while q.len() > SMALL / 2 {
                let (t, s) = model.pop_first().unwrap();
                let was = q.cursor;
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
}
