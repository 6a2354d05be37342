//! DropTail: a FIFO that drops arrivals when its packet or byte limit is reached.

use super::aqm::band_limits;
use super::step_ecn;
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

/// A single-band tail-drop queue whose packets its driver holds, optionally marking at a step
/// threshold: the admission and the counters, without the buffer. The simulator uses it on
/// links where a packet's departure is fixed when it is enqueued, whose propagation pipe already
/// holds every packet accepted (a copy here would be a second write per hop). It admits, drops,
/// marks and counts exactly as [`DropTail`] with the same limit — or, given a threshold K, as a
/// single-band `step-ecn` queue ([`super::step_ecn`]) with the same limit and K; the driver
/// reports each transmission's start with [`sent`](Self::sent), in the order the packets were
/// admitted.
///
/// One cache line (64 bytes), so that a simulator link holding it is two: the backlog, the
/// limit and K in a word each ([`PackedLimit`]), the transmission, drop and mark counters.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TailDropLedger {
    backlog: Backlog,
    limit: PackedLimit,
    /// K: ECN-capable packets arriving above it are marked (`Limit::Unlimited`: tail drop, which
    /// never marks).
    mark_above: PackedLimit,
    dequeued_packets: u64,
    dequeued_bytes: u64,
    dropped_packets: u64,
    marked_packets: u64,
}

/// A [`Limit`] in one word: the count, its top bit set if it counts bytes; all ones for
/// `Unlimited`. A count of 2^63 or more (packets or bytes no queue can hold) is kept as
/// 2^63 - 2, which admits and marks the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PackedLimit(u64);

impl PackedLimit {
    const BYTES: u64 = 1 << 63;
    const UNLIMITED: PackedLimit = PackedLimit(u64::MAX);
    const MAX_COUNT: u64 = Self::BYTES - 2;

    fn pack(l: Limit) -> PackedLimit {
        match l {
            Limit::Packets(n) => PackedLimit(n.min(Self::MAX_COUNT)),
            Limit::Bytes(n) => PackedLimit(Self::BYTES | n.min(Self::MAX_COUNT)),
            Limit::Unlimited => Self::UNLIMITED,
        }
    }

    #[inline(always)]
    fn unpack(self) -> Limit {
        if self == Self::UNLIMITED {
            Limit::Unlimited
        } else if self.0 & Self::BYTES != 0 {
            Limit::Bytes(self.0 & !Self::BYTES)
        } else {
            Limit::Packets(self.0)
        }
    }
}

impl TailDropLedger {
    /// Tail drop at `limit`.
    pub fn new(limit: Limit) -> TailDropLedger {
        TailDropLedger::marking(limit, Limit::Unlimited)
    }

    /// Tail drop at `limit`, marking above `threshold` as `step-ecn` does.
    pub fn marking(limit: Limit, threshold: Limit) -> TailDropLedger {
        TailDropLedger {
            backlog: Backlog::default(),
            limit: PackedLimit::pack(limit),
            mark_above: PackedLimit::pack(threshold),
            dequeued_packets: 0,
            dequeued_bytes: 0,
            dropped_packets: 0,
            marked_packets: 0,
        }
    }

    /// Offers `pkt`: queued (counted in the backlog) if the limit leaves room for it, else
    /// dropped as an overflow. `Ok(true)`: it is to be marked (the caller marks its copy; the
    /// mark is counted here).
    #[inline]
    pub fn admit(&mut self, pkt: &Packet) -> Result<bool, Dropped> {
        let size = u64::from(pkt.size);
        // Tail drop (no threshold) asks nothing more of the packet.
        let marked = self.mark_above != PackedLimit::UNLIMITED
            && step_ecn::marks(self.mark_above.unpack(), self.backlog, pkt);
        if !self
            .limit
            .unpack()
            .admits(self.backlog.packets, self.backlog.bytes, size)
        {
            self.dropped_packets += 1;
            // As the queue it stands for: the policy marks before the room is checked, and
            // the packet refused is the marked one (its mark is not counted: it reaches nobody).
            let mut packet = *pkt;
            if marked {
                packet.ecn.mark();
            }
            return Err(Dropped {
                packet,
                reason: DropReason::Overflow,
            });
        }
        self.backlog.packets += 1;
        self.backlog.bytes += size;
        if marked {
            self.marked_packets += 1;
        }
        Ok(marked)
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
            marked_packets: self.marked_packets,
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

    /// The ledger admits, drops, marks and counts as the queue it stands for does — tail drop,
    /// or step ECN over tail drop — whatever the sizes, limits, thresholds and ECN codepoints.
    #[test]
    fn the_ledger_counts_as_the_queue_does() {
        use crate::packet::Ecn;
        use crate::queue::step_ecn::StepEcn;
        use crate::queue::QueueDiscipline;
        for limit in [
            Limit::Packets(3),
            Limit::Bytes(2500),
            Limit::Packets(0),
            Limit::Unlimited,
        ] {
            for threshold in [
                None,
                Some(Limit::Packets(1)),
                Some(Limit::Bytes(1200)),
                Some(Limit::Packets(0)),
            ] {
                let mut q: Box<dyn QueueDiscipline> = match threshold {
                    None => Box::new(DropTail::droptail(limit)),
                    Some(k) => Box::new(AqmQueue::new(StepEcn::new(k), limit)),
                };
                let mut ledger = match threshold {
                    None => TailDropLedger::new(limit),
                    Some(k) => TailDropLedger::marking(limit, k),
                };
                let mut x = 3u64;
                for step in 0..2_000u64 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    if (x >> 33) % 5 < 3 {
                        let mut p = pkt([40, 600, 1000, 1500][(x >> 40) as usize % 4]);
                        let mut ce = Ecn::ECT;
                        ce.mark();
                        p.ecn = [Ecn::NOT_ECT, Ecn::ECT, Ecn::ECT, ce][(x >> 44) as usize % 4];
                        let by_queue = q.enqueue(Time(step), &p).map(|e| e.marked);
                        assert_eq!(ledger.admit(&p), by_queue);
                    } else if let Some(d) = q.dequeue(Time(step), &mut Vec::new()) {
                        ledger.sent(d.packet.size);
                    }
                    assert_eq!(ledger.backlog(), q.backlog());
                    assert_eq!(ledger.stats(), q.stats());
                }
                if threshold.is_some() && limit != Limit::Packets(0) {
                    assert!(ledger.stats().marked_packets > 0, "the test marks");
                }
            }
        }
    }

    /// A limit packed in a word comes back as it was, a count no queue can reach as one as
    /// far out of reach; the ledger is one cache line.
    #[test]
    fn a_packed_limit_is_the_limit() {
        for l in [
            Limit::Packets(0),
            Limit::Packets(200),
            Limit::Bytes(1),
            Limit::Bytes(1 << 40),
            Limit::Unlimited,
        ] {
            assert_eq!(PackedLimit::pack(l).unpack(), l);
        }
        let far = PackedLimit::MAX_COUNT;
        assert_eq!(
            PackedLimit::pack(Limit::Packets(u64::MAX)).unpack(),
            Limit::Packets(far)
        );
        assert_eq!(
            PackedLimit::pack(Limit::Bytes(u64::MAX)).unpack(),
            Limit::Bytes(far)
        );
        assert_eq!(std::mem::size_of::<TailDropLedger>(), 64);
    }
}
