//! DropTail: a FIFO that drops arrivals when its packet or byte limit is reached.

use super::aqm::band_limits;
use super::{
    Aqm, AqmQueue, Backlog, DropReason, Dropped, Fifo, QueueDiscipline, QueueState, QueueStats,
    Verdict,
};
use crate::packet::Packet;
use crate::units::{Limit, Time};
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, QueueContext, QueueParams};

/// No active management: every arrival that fits is queued, the rest overflow.
#[derive(Clone, Copy, Debug, Default)]
pub struct TailDrop;

impl Aqm for TailDrop {
    fn on_arrival(&mut self, _now: Time, _pkt: &mut Packet, _fits: bool, _data: &Fifo) -> Verdict {
        Verdict::Pass
    }
}

/// The classic tail-drop FIFO.
pub type DropTail = AqmQueue<TailDrop>;

impl DropTail {
    pub fn droptail(limit: Limit) -> DropTail {
        AqmQueue::new(TailDrop, limit)
    }
}

/// A single-band tail-drop queue whose packets its driver holds: the admission and the
/// counters, without the buffer. The simulator uses it on links where a packet's departure is
/// fixed when it is enqueued, whose propagation pipe already holds every packet accepted (a
/// copy here would be a second write per hop). It admits, drops and counts exactly as
/// [`DropTail`] with the same limit; the driver reports each transmission's start with
/// [`sent`](Self::sent), in the order the packets were admitted.
///
/// One cache line (64 bytes): the counters tail drop cannot derive (it never marks, and every
/// packet it admitted is either queued or sent).
#[derive(Clone, Copy, Debug)]
pub struct TailDropLedger {
    backlog: Backlog,
    limit: Limit,
    dequeued_packets: u64,
    dequeued_bytes: u64,
    dropped_packets: u64,
    dropped_bytes: u64,
}

impl TailDropLedger {
    pub fn new(limit: Limit) -> TailDropLedger {
        TailDropLedger {
            backlog: Backlog::default(),
            limit,
            dequeued_packets: 0,
            dequeued_bytes: 0,
            dropped_packets: 0,
            dropped_bytes: 0,
        }
    }

    /// Offers `pkt`: queued (counted in the backlog) if the limit leaves room for it, else
    /// dropped as an overflow.
    #[inline]
    pub fn admit(&mut self, pkt: &Packet) -> Result<(), Dropped> {
        let size = u64::from(pkt.size);
        if !self
            .limit
            .admits(self.backlog.packets, self.backlog.bytes, size)
        {
            self.dropped_packets += 1;
            self.dropped_bytes += size;
            return Err(Dropped {
                packet: *pkt,
                reason: DropReason::Overflow,
            });
        }
        self.backlog.packets += 1;
        self.backlog.bytes += size;
        Ok(())
    }

    /// The oldest packet queued, of `size` bytes, starts its transmission.
    #[inline]
    pub fn sent(&mut self, size: u32) {
        debug_assert!(self.backlog.packets > 0, "sent() of an empty queue");
        self.backlog.packets -= 1;
        self.backlog.bytes -= u64::from(size);
        self.dequeued_packets += 1;
        self.dequeued_bytes += u64::from(size);
    }
}

impl QueueState for TailDropLedger {
    #[inline]
    fn backlog(&self) -> Backlog {
        self.backlog
    }

    fn stats(&self) -> QueueStats {
        QueueStats {
            // Every packet admitted is queued or sent.
            enqueued_packets: self.dequeued_packets + self.backlog.packets,
            dequeued_packets: self.dequeued_packets,
            dequeued_bytes: self.dequeued_bytes,
            dropped_packets: self.dropped_packets,
            dropped_bytes: self.dropped_bytes,
            marked_packets: 0, // tail drop never marks
        }
    }
}

/// `queue = { kind = "droptail", limit = "90pkt" }` (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DroptailParams {
    /// Buffer limit: "90pkt", "60KB", or "inf".
    pub limit: Limit,
    /// Priority-capable: Monaco's out-of-band and reverse control packets skip the data queue
    /// (a two-band FIFO with both limits equal).
    #[serde(default)]
    pub priority: bool,
}

impl DroptailParams {
    /// The discipline, as its own type (a driver may hold it without the trait object).
    pub fn queue(&self) -> DropTail {
        AqmQueue::with_priority(TailDrop, self.limit, self.priority)
    }
}

impl QueueParams for DroptailParams {
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(&self, _ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        Box::new(self.queue())
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, PacketKind};
    use crate::queue::{Backlog, DropReason};

    fn dequeue(q: &mut DropTail) -> Option<Packet> {
        q.dequeue(Time::ZERO, &mut Vec::new()).map(|d| d.packet)
    }

    fn pkt(size: u32) -> Packet {
        Packet::new(FlowId(0), PacketKind::Data, size)
    }

    #[test]
    fn packet_limit_drops_the_arrival_that_does_not_fit() {
        let mut q = DropTail::droptail(Limit::Packets(2));
        assert!(q.enqueue(Time::ZERO, &pkt(1000)).is_ok());
        assert!(q.enqueue(Time::ZERO, &pkt(1000)).is_ok());
        let e = q.enqueue(Time::ZERO, &pkt(40)).unwrap_err();
        assert_eq!(e.reason, DropReason::Overflow);
        assert_eq!(
            q.backlog(),
            Backlog {
                packets: 2,
                bytes: 2000
            }
        );
        assert_eq!(q.stats().dropped_packets, 1);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = DropTail::droptail(Limit::Bytes(2500));
        assert!(q.enqueue(Time::ZERO, &pkt(1000)).is_ok());
        assert!(q.enqueue(Time::ZERO, &pkt(1000)).is_ok());
        assert!(q.enqueue(Time::ZERO, &pkt(1000)).is_err());
        assert!(q.enqueue(Time::ZERO, &pkt(500)).is_ok());
        assert_eq!(q.backlog().bytes, 2500);
    }

    #[test]
    fn fifo_order() {
        let mut q = DropTail::droptail(Limit::Unlimited);
        for s in 1..=5 {
            let mut p = pkt(100);
            p.seq = s;
            q.enqueue(Time::ZERO, &p).unwrap();
        }
        let order: Vec<u64> = std::iter::from_fn(|| dequeue(&mut q))
            .map(|p| p.seq)
            .collect();
        assert_eq!(order, vec![1, 2, 3, 4, 5]);
        assert_eq!(q.stats().dequeued_bytes, 500);
    }

    /// The ledger admits, drops and counts as the queue does, whatever the sizes and limits.
    #[test]
    fn the_ledger_counts_as_the_queue_does() {
        for limit in [
            Limit::Packets(3),
            Limit::Bytes(2500),
            Limit::Packets(0),
            Limit::Unlimited,
        ] {
            let mut q = DropTail::droptail(limit);
            let mut ledger = TailDropLedger::new(limit);
            let mut x = 3u64;
            for step in 0..2_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                if (x >> 33) % 5 < 3 {
                    let p = pkt([40, 600, 1000, 1500][(x >> 40) as usize % 4]);
                    let by_queue = q.enqueue(Time(step), &p).map(|_| ());
                    assert_eq!(ledger.admit(&p), by_queue);
                } else if let Some(d) = q.dequeue(Time(step), &mut Vec::new()) {
                    ledger.sent(d.packet.size);
                }
                assert_eq!(ledger.backlog(), q.backlog());
                assert_eq!(ledger.stats(), q.stats());
            }
        }
    }
}
