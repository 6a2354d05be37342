//! A bounded FIFO with its counters: the physical buffer inside every discipline.

use std::collections::VecDeque;

use super::{Backlog, DropReason, Dropped, QueueStats};
use crate::packet::Packet;
use crate::units::Limit;

/// A first-in first-out buffer with a packet or byte limit.
#[derive(Clone, Debug)]
pub struct Fifo {
    packets: VecDeque<Packet>,
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

    /// Appends `pkt` if the limit allows, else drops it as an overflow.
    pub fn push(&mut self, pkt: Packet) -> Result<(), Dropped> {
        if !self
            .limit
            .admits(self.packets.len() as u64, self.bytes, pkt.size as u64)
        {
            return Err(self.drop(pkt, DropReason::Overflow));
        }
        self.bytes += pkt.size as u64;
        self.stats.enqueued_packets += 1;
        self.packets.push_back(pkt);
        Ok(())
    }

    /// Counts `pkt` as dropped for `reason` and hands it back.
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) -> Dropped {
        self.stats.dropped_packets += 1;
        self.stats.dropped_bytes += pkt.size as u64;
        Dropped {
            packet: pkt,
            reason,
        }
    }

    /// Counts one packet marked by the discipline that owns this buffer.
    pub fn count_mark(&mut self) {
        self.stats.marked_packets += 1;
    }

    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        self.stats.dequeued_packets += 1;
        self.stats.dequeued_bytes += p.size as u64;
        Some(p)
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
        self.packets.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}
