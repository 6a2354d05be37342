//! A bounded FIFO with its counters: the physical buffer inside every discipline.
//!
//! Each entry keeps the time its packet was enqueued, so a discipline knows every packet's
//! sojourn time when it leaves (CoDel, PIE). The time lives in the queue entry rather than in
//! [`Packet`], which stays 64 bytes on the wire, in pipes and in events.

use std::collections::VecDeque;

use super::{Backlog, DropReason, Dropped, QueueStats};
use crate::packet::Packet;
use crate::units::{Limit, Time};

/// A first-in first-out buffer with a packet or byte limit.
#[derive(Clone, Debug)]
pub struct Fifo {
    packets: VecDeque<(Packet, Time)>,
    bytes: u64,
    limit: Limit,
    stats: QueueStats,
}

impl Fifo {
    pub fn new(limit: Limit) -> Fifo {
        Fifo {
            packets: VecDeque::new(),
            bytes: 0,
            limit,
            stats: QueueStats::default(),
        }
    }

    /// Whether the limit leaves room for `pkt` now.
    pub fn fits(&self, pkt: &Packet) -> bool {
        self.limit
            .admits(self.packets.len() as u64, self.bytes, pkt.size as u64)
    }

    /// Appends `pkt`, enqueued at `now`, if the limit allows, else drops it as an overflow.
    pub fn push(&mut self, now: Time, pkt: Packet) -> Result<(), Dropped> {
        if !self.fits(&pkt) {
            return Err(self.drop(pkt, DropReason::Overflow));
        }
        self.push_fitting(now, pkt);
        Ok(())
    }

    /// Appends `pkt`, which [`fits`](Self::fits).
    pub fn push_fitting(&mut self, now: Time, pkt: Packet) {
        debug_assert!(self.fits(&pkt));
        self.bytes += pkt.size as u64;
        self.stats.enqueued_packets += 1;
        self.packets.push_back((pkt, now));
    }

    /// Counts `pkt` as dropped for `reason` and hands it back.
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) -> Dropped {
        self.stats.dropped_packets += 1;
        Dropped {
            packet: pkt,
            reason,
        }
    }

    /// Counts one packet marked by the discipline that owns this buffer.
    pub fn count_mark(&mut self) {
        self.stats.marked_packets += 1;
    }

    /// Takes the head packet and the time it was enqueued. It is not yet counted as dequeued:
    /// the owner either [`sends`](Self::count_sent) it or [`drops`](Self::drop) it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Packet, Time)> {
        let (p, at) = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        if self.packets.is_empty() {
            // Back to the buffer's first slot, which is still in cache: most queues (every
            // access link's) hold one packet at a time, and a ring that moves on through its
            // capacity meets a cold line at each push.
            self.packets.clear();
        }
        Some((p, at))
    }

    /// Counts a packet taken by [`pop`](Self::pop) as dequeued for transmission.
    #[inline]
    pub fn count_sent(&mut self, p: &Packet) {
        self.stats.dequeued_packets += 1;
        self.stats.dequeued_bytes += p.size as u64;
    }

    pub fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.packets.len() as u64,
            bytes: self.bytes,
        }
    }

    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.packets.iter().map(|(p, _)| p)
    }

    /// When the head packet was enqueued, if there is one.
    pub fn head_time(&self) -> Option<Time> {
        self.packets.front().map(|&(_, at)| at)
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}
