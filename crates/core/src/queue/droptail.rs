//! DropTail: a FIFO that drops arrivals when its packet or byte limit is reached.

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
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

    /// The packet that leaves next and when it was enqueued, read in place — on a single-band
    /// queue (no priority band), where tail drop sends packets in the order they came.
    #[inline]
    pub fn head(&self) -> Option<(&Packet, Time)> {
        debug_assert!(self.high.is_none(), "head() of a two-band queue");
        self.data.head()
    }

    /// Sends the [`head`](Self::head) packet: what `dequeue` does on a single-band tail-drop
    /// queue (it never drops or marks at the head), without handing the packet back — a driver
    /// that has read it in place saves the copy.
    #[inline]
    pub fn send_head(&mut self) {
        debug_assert!(self.high.is_none(), "send_head() of a two-band queue");
        self.data.send_head();
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

    #[test]
    fn sending_the_head_in_place_is_dequeue_without_the_copy() {
        let mut by_dequeue = DropTail::droptail(Limit::Packets(3));
        let mut in_place = DropTail::droptail(Limit::Packets(3));
        for (s, size) in [(1, 1000), (2, 40), (3, 600), (4, 1000)] {
            let mut p = pkt(size);
            p.seq = s;
            let at = Time(u64::from(size));
            assert_eq!(
                by_dequeue.enqueue(at, &p).is_ok(),
                in_place.enqueue(at, &p).is_ok()
            );
        }
        let now = Time(5_000);
        while let Some((p, at)) = in_place.head() {
            let (p, at) = (*p, at);
            let d = by_dequeue.dequeue(now, &mut Vec::new()).unwrap();
            assert_eq!((d.packet, d.sojourn, d.marked), (p, now - at, false));
            in_place.send_head();
            assert_eq!(in_place.backlog(), by_dequeue.backlog());
            assert_eq!(in_place.stats(), by_dequeue.stats());
        }
        assert!(by_dequeue.dequeue(now, &mut Vec::new()).is_none());
        assert_eq!(in_place.stats().dequeued_packets, 3);
    }
}
