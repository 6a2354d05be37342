//! Observers beside the monitor in a parallel run (a packet trace): each partition records
//! what it reports, with the key of the event it was handling, and the coordinator replays
//! the partitions' records to the run's observers in the serial run's order.
//!
//! **The order.** The serial run reports in event order, and within an event in the order
//! the event's handler makes its reports. An event is handled by one partition, which records
//! its reports in that order, so the partitions' records merged by key, each partition's kept in
//! its order, are the serial sequence — but for the events every partition handles: the run's
//! own events (samples, the window's edges, scenario events) and the run's end, at which every
//! link that departs at enqueue is brought up to date, link by link (`start_all_due`). Each
//! partition does its own links then, so records of those keys are merged by link.
//!
//! Each record carries the place of its event in the run's order (`EventQueue::position`):
//! its key, but for an arrival over a link without delay, which is handled right after the
//! event that put the packet in the pipe although its key is smaller — it takes that event's
//! place. A partition's records are taken in their order and merged: next, the partition
//! whose next record's place comes first. (Until 2026-11-30 the records were sorted by their
//! events' keys, and a trace of a network with links without delay could list an arrival at
//! the far end before the transmission that caused it; `cargo test -p acclab-sim --test
//! parallel_fuzz` found it.)
//!
//! The run's hooks, which read the whole network, are called by the coordinator at the run's
//! own events with the partitions joined (`parallel.rs`), after the records so far; a flow's
//! end (`on_flow_done`) when the coordinator retires it, after the records of the events up to
//! its retirement's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acclab_core::queue::{Backlog, DropReason};
use acclab_core::{Packet, Time};
use acclab_scenario::LinkId;

use crate::events::{self, Event};
use crate::observe::{Observer, Transmit};

use super::engine::EventProbe;

/// What a partition reported, and at which event.
#[derive(Clone, Copy)]
struct Record {
    key: u128,
    now: Time,
    link: LinkId,
    pkt: Packet,
    call: Call,
    backlog: Backlog,
}

#[derive(Clone, Copy)]
enum Call {
    Enqueue(bool),
    Transmit(Transmit),
    Drop(DropReason),
    Deliver,
}

/// A partition's records so far, shared between its recorder (an observer of its replica)
/// and the coordinator, with the key of the event being handled (set by the replica's probe).
#[derive(Default)]
pub(super) struct Recorded {
    key: [AtomicU64; 2],
    records: Mutex<Vec<Record>>,
}

impl Recorded {
    fn key(&self) -> u128 {
        (u128::from(self.key[0].load(Ordering::Relaxed)) << 64)
            | u128::from(self.key[1].load(Ordering::Relaxed))
    }

    /// The events handled from now on have key `key`.
    pub(super) fn set_key(&self, key: u128) {
        self.key[0].store((key >> 64) as u64, Ordering::Relaxed);
        self.key[1].store(key as u64, Ordering::Relaxed);
    }

    fn push(&self, now: Time, link: LinkId, pkt: &Packet, call: Call, backlog: Backlog) {
        let key = self.key();
        self.records.lock().expect("records").push(Record {
            key,
            now,
            link,
            pkt: *pkt,
            call,
            backlog,
        });
    }
}

/// The recording observer of a partition's replica.
pub(super) struct Recorder(pub(super) Arc<Recorded>);

impl Observer for Recorder {
    fn on_enqueue(&mut self, now: Time, l: LinkId, p: &Packet, marked: bool, b: Backlog) {
        self.0.push(now, l, p, Call::Enqueue(marked), b);
    }
    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, b: Backlog) {
        self.0.push(now, l, p, Call::Transmit(tx), b);
    }
    fn on_drop(&mut self, now: Time, l: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        self.0.push(now, l, p, Call::Drop(why), b);
    }
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.0
            .push(now, LinkId(u32::MAX), p, Call::Deliver, Backlog::default());
    }
}

/// The probe of a partition's replica that records: tells its [`Recorded`] each event's key.
pub(super) struct Stamp(pub(super) Arc<Recorded>);

impl EventProbe for Stamp {
    fn on_event(&mut self, _t: Time, _ev: Event) {}
    fn on_key(&mut self, key: u128) {
        self.0.set_key(key);
    }
}

/// Replays the partitions' records so far to `observers`, in the serial run's order, and
/// empties them.
pub(super) fn replay(parts: &[Arc<Recorded>], observers: &mut [Box<dyn Observer>]) {
    replay_until(parts, observers, u128::MAX);
}

/// Replays the partitions' records of the events up to the one with key `bound` (included)
/// as [`replay`] does, and takes them off.
pub(super) fn replay_until(
    parts: &[Arc<Recorded>],
    observers: &mut [Box<dyn Observer>],
    bound: u128,
) {
    // Each partition's records of the events up to `bound` (their places non-decreasing).
    let mut runs: Vec<Vec<Record>> = Vec::with_capacity(parts.len());
    for r in parts {
        let mut records = r.records.lock().expect("records");
        let n = records
            .iter()
            .position(|rec| rec.key > bound)
            .unwrap_or(records.len());
        let mut run: Vec<Record> = records.drain(..n).collect();
        // The records of an event every partition handles, by link (stable: a link's in
        // their order).
        let mut i = 0;
        while i < run.len() {
            let key = run[i].key;
            let j = i + run[i..].iter().take_while(|r| r.key == key).count();
            if events::every_partition_handles(key) {
                run[i..j].sort_by_key(|r| r.link.0);
            }
            i = j;
        }
        runs.push(run);
    }
    // Merged: next, the partition whose next record comes first — by key; of an event every
    // partition handles, by link, then by partition.
    let order = |r: &Record, p: usize| {
        let shared = events::every_partition_handles(r.key);
        std::cmp::Reverse((r.key, if shared { r.link.0 } else { 0 }, p))
    };
    let mut next = vec![0usize; runs.len()];
    let mut heads: std::collections::BinaryHeap<_> = runs
        .iter()
        .enumerate()
        .filter_map(|(p, run)| run.first().map(|r| order(r, p)))
        .collect();
    while let Some(std::cmp::Reverse((_, _, p))) = heads.pop() {
        let r = runs[p][next[p]];
        next[p] += 1;
        if let Some(n) = runs[p].get(next[p]) {
            heads.push(order(n, p));
        }
        for o in observers.iter_mut() {
            match r.call {
                Call::Enqueue(marked) => o.on_enqueue(r.now, r.link, &r.pkt, marked, r.backlog),
                Call::Transmit(tx) => o.on_transmit(r.now, r.link, &r.pkt, tx, r.backlog),
                Call::Drop(why) => o.on_drop(r.now, r.link, &r.pkt, why, r.backlog),
                Call::Deliver => o.on_deliver(r.now, &r.pkt),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::{FlowId, PacketKind};

    /// Hears the links of the transmissions replayed, in order.
    struct Heard(Arc<Mutex<Vec<u32>>>);

    impl Observer for Heard {
        fn on_transmit(&mut self, _: Time, l: LinkId, _: &Packet, _: Transmit, _: Backlog) {
            self.0.lock().unwrap().push(l.0);
        }
    }

    fn transmit(r: &Recorded, link: u32) {
        let pkt = Packet::new(FlowId(0), PacketKind::Data, 1500);
        let tx = Transmit {
            sojourn: acclab_core::Duration::ZERO,
            marked: false,
            done: Time(0),
        };
        r.push(
            Time(0),
            LinkId(link),
            &pkt,
            Call::Transmit(tx),
            Backlog::default(),
        );
    }

    /// Records sort by key; one partition's records of an event keep their order; the records
    /// of an event every partition handles (the run's, or the run's end) go by link.
    #[test]
    fn records_replay_in_the_serial_order() {
        let (a, b) = (Arc::new(Recorded::default()), Arc::new(Recorded::default()));
        // A sample at 3 ns (the run's entity): each partition reports its own links in order.
        let sample = 3u128 << 64;
        assert!(events::every_partition_handles(sample));
        a.set_key(sample);
        transmit(&a, 1);
        transmit(&a, 6);
        b.set_key(sample);
        transmit(&b, 4);
        // An arrival at 5 ns (a link's receiving side, entity 7) handled by partition b: its
        // reports in its order.
        b.set_key((5u128 << 64) | (7 << 12));
        transmit(&b, 9);
        transmit(&b, 2);
        // The run's end.
        a.set_key(events::END_KEY);
        transmit(&a, 8);
        b.set_key(events::END_KEY);
        transmit(&b, 0);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let mut observers: Vec<Box<dyn Observer>> = vec![Box::new(Heard(heard.clone()))];
        replay(&[a.clone(), b.clone()], &mut observers);
        assert_eq!(*heard.lock().unwrap(), [1, 4, 6, 9, 2, 0, 8]);
        // Replayed records are gone.
        replay(&[a, b], &mut observers);
        assert_eq!(heard.lock().unwrap().len(), 7);
    }

    /// A partition's records are replayed in its order, merged with the others' by key, even
    /// where its keys decrease (as the raw keys of an arrival over a link without delay and
    /// of the transmission that caused it would; the records carry places, which do not): the
    /// events of other partitions with keys between the two come before both, those with
    /// later keys after. A bound between the two keys takes a partition's records up to its
    /// first later one.
    #[test]
    fn an_arrival_over_a_link_without_delay_comes_after_its_cause() {
        let (a, b) = (Arc::new(Recorded::default()), Arc::new(Recorded::default()));
        let at = |low: u128| (10u128 << 64) | (low << 12) | (1 << 40);
        // Partition a: a transmission (key at(9)), then the arrival it caused (key at(2)).
        a.set_key(at(9));
        transmit(&a, 1);
        a.set_key(at(2));
        transmit(&a, 2);
        // Partition b: an event between the two keys, and one after both.
        b.set_key(at(5));
        transmit(&b, 3);
        b.set_key(at(12));
        transmit(&b, 4);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let mut observers: Vec<Box<dyn Observer>> = vec![Box::new(Heard(heard.clone()))];
        // Up to a bound between the arrival's key and its cause's: b's first event alone.
        replay_until(&[a.clone(), b.clone()], &mut observers, at(6));
        assert_eq!(*heard.lock().unwrap(), [3]);
        replay(&[a, b], &mut observers);
        assert_eq!(*heard.lock().unwrap(), [3, 1, 2, 4]);
    }
}
