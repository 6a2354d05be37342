//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! The sequence number makes equal-time events come out in the order they were scheduled, so a
//! run never depends on how the heap breaks ties. Entries are 32 bytes; cancelled timers are not
//! removed but carry a generation number that the simulator checks when they come out.
//!
//! The heap is this file's own rather than `std::collections::BinaryHeap`: the standard one
//! writes a pushed entry to memory and reads it straight back to sift it up, and pops by sifting
//! a hole to the bottom and the last entry up again; here the entry being placed stays in
//! registers while the hole moves, and a pop sifts the last entry down from the root, stopping
//! as soon as it fits (keys are one 128-bit compare, so the extra comparisons cost less than the
//! memory traffic). The order is a function of the keys alone, which are unique, so runs are
//! the same with either heap.

use acclab_core::Time;

/// What happens at an event. Payloads are dense indices into the simulator's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serialising its head packet.
    TxDone(u32),
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

/// Pending events: a binary min-heap of entries by key (`heap[0]` is the earliest).
#[derive(Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry {
            key: (u128::from(time.0) << 64) | u128::from(seq),
            event,
        };
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

    /// The earliest event, if it is due no later than `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        let first = *self.heap.first()?;
        if first.time() > limit {
            return None;
        }
        let last = self.heap.pop().expect("not empty");
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
        Some((first.time(), first.event))
    }

    /// When the earliest pending event is due.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(Entry::time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
