//! Queue disciplines: one trait, one file per discipline (SPEC §4).
//!
//! A discipline sits at a link's output. The driver offers it each arriving packet with
//! `enqueue(now, pkt)` and takes the next packet to serialise with `dequeue(now, dropped)`; a
//! discipline may drop at either end (CoDel and PIE drop at the head, handing those packets
//! back in `dropped`). Disciplines that need time to pass (price updates, virtual queues) work
//! lazily from the `now` of these calls, so they need no timers of their own.
//!
//! Every discipline here is an [`Aqm`] policy inside the one container
//! [`AqmQueue`] (aqm.rs), which owns the FIFO, forwards to it, counts, and optionally adds the
//! high-priority band for Monaco's control packets: the policy files hold only their algorithm.

pub mod aqm;
pub mod avq;
pub mod bat;
pub mod clcc;
pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod priority;
pub mod red;
pub mod rem;
pub mod shared_buffer;
pub mod step_ecn;

pub use aqm::{Aqm, AqmQueue, Verdict};
pub use droptail::{DropTail, TailDrop};
pub use fifo::Fifo;

use crate::packet::Packet;
use crate::units::{Duration, Rate, Time};

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
            marked_packets: self.marked_packets + o.marked_packets,
        }
    }
}

/// Why a packet was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full when it arrived.
    Overflow,
    /// An active queue manager refused it on arrival (RED, REM, AVQ, BAT).
    Aqm,
    /// An active queue manager dropped it at the head of the queue, after it had waited
    /// (CoDel, PIE).
    HeadDrop,
    /// The link lost it at random (`loss` on a link; the driver's, never a queue's).
    LinkLoss,
}

impl DropReason {
    /// The name used in traces and files.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Aqm => "aqm",
            DropReason::HeadDrop => "head-drop",
            DropReason::LinkLoss => "link-loss",
        }
    }
}

/// A packet accepted by [`QueueDiscipline::enqueue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// The discipline marked it (ECN CE, or an AVD virtual-delay stamp).
    pub marked: bool,
}

/// A packet handed out by [`QueueDiscipline::dequeue`] for transmission.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dequeued {
    pub packet: Packet,
    /// How long it waited in the queue.
    pub sojourn: Duration,
    /// The discipline marked it on its way out (CoDel's ECN mode).
    pub marked: bool,
}

/// A refused packet, handed back so that the driver can account for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropped {
    pub packet: Packet,
    pub reason: DropReason,
}

/// What may be read of a queue without changing it: its backlog, counters and AQM state (what
/// a monitor samples). Every [`QueueDiscipline`] is one; so is a queue whose packets its driver
/// holds ([`TailDropLedger`](droptail::TailDropLedger)).
pub trait QueueState {
    /// What the queue holds now.
    fn backlog(&self) -> Backlog;
    /// Cumulative counters.
    fn stats(&self) -> QueueStats;
    /// AQM state for monitors, as (column name, value) pairs: virtual capacity, price, … Called
    /// once per sample, never on the packet path. Plain FIFOs add nothing.
    fn aqm_state(&self, _out: &mut Vec<(String, f64)>) {}
}

/// A queue discipline at a link output.
pub trait QueueDiscipline: QueueState + Send {
    /// Offers a packet arriving at `now` (the queue keeps a copy). On `Err` the packet is
    /// counted as dropped.
    fn enqueue(&mut self, now: Time, pkt: &Packet) -> Result<Enqueued, Dropped>;
    /// The next packet to transmit, if any. Packets the discipline drops at the head on the
    /// way are appended to `dropped` (counted in its stats like any drop).
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued>;
    /// Visits every packet held (for invariant checks and traces; not on the packet path).
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet));
    /// Whether an arrival may push another packet out (FQ-CoDel): the driver then collects
    /// those with [`QueueDiscipline::pushed_out`] after each enqueue.
    fn pushes_out(&self) -> bool {
        false
    }
    /// Appends the packets arrivals pushed out since the last call (dropped, counted in the
    /// stats).
    fn pushed_out(&mut self, _out: &mut Vec<Dropped>) {}
    /// The link's rate changed (AQMs that track capacity need it).
    fn set_rate(&mut self, _rate: Rate) {}
}
