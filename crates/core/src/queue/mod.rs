//! Queue disciplines: one trait, one file per discipline (SPEC §4).
//!
//! A discipline sits at a link's output. The driver offers it each arriving packet with
//! `enqueue(now, pkt)` and takes the next packet to serialise with `dequeue(now)`. Disciplines
//! that need time to pass (price updates, virtual queues) work lazily from the `now` of these
//! calls, so they need no timers of their own.

pub mod avq;
pub mod bat;
pub mod clcc;
pub mod droptail;
pub mod fifo;
pub mod priority;
pub mod red;
pub mod rem;

pub use droptail::DropTail;
pub use fifo::Fifo;
pub use priority::PriorityFifo;

use crate::packet::Packet;
use crate::units::{Rate, Time};

/// Packets and bytes held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u64,
    pub bytes: u64,
}

/// Cumulative counters of a queue since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub enqueued_packets: u64,
    pub dequeued_packets: u64,
    pub dequeued_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    /// Packets ECN-marked (or, for AVD, stamped with a virtual delay) by an AQM.
    pub marked_packets: u64,
}

impl QueueStats {
    /// Sum of two sets of counters (a discipline made of several FIFOs).
    pub fn merged(self, o: QueueStats) -> QueueStats {
        QueueStats {
            enqueued_packets: self.enqueued_packets + o.enqueued_packets,
            dequeued_packets: self.dequeued_packets + o.dequeued_packets,
            dequeued_bytes: self.dequeued_bytes + o.dequeued_bytes,
            dropped_packets: self.dropped_packets + o.dropped_packets,
            dropped_bytes: self.dropped_bytes + o.dropped_bytes,
            marked_packets: self.marked_packets + o.marked_packets,
        }
    }
}

/// Why a packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An active queue manager chose to drop it.
    Aqm,
}

/// A refused packet, handed back so that the driver can account for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropped {
    pub packet: Packet,
    pub reason: DropReason,
}

/// A queue discipline at a link output.
pub trait QueueDiscipline: Send {
    /// Offers a packet arriving at `now`. On `Err` the packet is gone and counted as dropped.
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), Dropped>;
    /// The next packet to transmit, if any.
    fn dequeue(&mut self, now: Time) -> Option<Packet>;
    /// What the queue holds now.
    fn backlog(&self) -> Backlog;
    /// Cumulative counters.
    fn stats(&self) -> QueueStats;
    /// Visits every packet held (for invariant checks and traces; not on the packet path).
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet));
    /// The link's rate changed (AQMs that track capacity need it).
    fn set_rate(&mut self, _rate: Rate) {}
    /// AQM state for monitors, as (column name, value) pairs: virtual capacity, price, … Called
    /// once per sample, never on the packet path. Plain FIFOs add nothing.
    fn aqm_state(&self, _out: &mut Vec<(String, f64)>) {}
}
