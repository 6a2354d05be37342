//! The one queue container: a FIFO data band run by an [`Aqm`] policy, and optionally a
//! high-priority band in front of it.
//!
//! A policy (DropTail's none, RED, REM, AVQ, BAT, …) decides about packets; [`AqmQueue`] does
//! everything else, in one place: it asks the policy at each arrival and at each departure,
//! forwards to the FIFO, counts drops and marks, and serves the high band first.
//!
//! The high band (`priority = true`, or `kind = "priority"`) carries only Monaco's out-of-band
//! and reverse control packets, so that they measure the propagation path without queueing
//! behind data (SPEC §4, 000 §IV-B); everything else shares the data band. Each band has its
//! own limit. The policy sees every arrival, whichever band it goes to (AVQ's virtual queue
//! counts the control packets too, as the link carries them), but only the data band's
//! departures and backlog.

use super::{
    Backlog, Dequeued, DropReason, Dropped, Enqueued, Fifo, QueueDiscipline, QueueState, QueueStats,
};
use crate::packet::Packet;
use crate::units::{Duration, Limit, Rate, Time};

/// What a policy decides about a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through unchanged.
    Pass,
    /// Let it through; the policy marked it (ECN CE, or an AVD stamp): count a mark.
    Marked,
    /// Drop it.
    Drop,
}

/// An active queue management policy: the algorithm of a discipline, without its buffer.
///
/// Every hook is given the data band as it stands; the policy never changes it.
pub trait Aqm: Send {
    /// A packet arrives at `now`, before it joins its band; `fits` tells whether that band
    /// has room for it (if not, a `Pass` or `Marked` packet is dropped as an overflow). The
    /// policy may change `pkt` (mark it, stamp it) and says so by returning `Marked`.
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, fits: bool, data: &Fifo) -> Verdict;

    /// Before every dequeue, whether or not a packet is waiting (lazy periodic updates).
    fn before_dequeue(&mut self, _now: Time, _data: &Fifo) {}

    /// The data band's head leaves at `now` after waiting `sojourn`; `data` holds what remains.
    /// `Drop` drops it at the head (the next head is then offered), `Marked` marks it.
    fn on_departure(
        &mut self,
        _now: Time,
        _pkt: &mut Packet,
        _sojourn: Duration,
        _data: &Fifo,
    ) -> Verdict {
        Verdict::Pass
    }

    /// After every dequeue, whether or not a packet left.
    fn after_dequeue(&mut self, _now: Time, _data: &Fifo) {}

    /// The link's rate changed.
    fn set_rate(&mut self, _rate: Rate) {}

    /// The policy's state for monitors, as (column name, value) pairs.
    fn state(&self, _out: &mut Vec<(String, f64)>) {}
}

/// The limit of each band that [`AqmQueue::with_priority`] builds.
pub fn band_limits(limit: Limit, priority: bool) -> Vec<Limit> {
    if priority {
        vec![limit, limit]
    } else {
        vec![limit]
    }
}

/// A data band run by policy `A`, and optionally a high-priority band.
#[derive(Clone, Debug)]
pub struct AqmQueue<A> {
    aqm: A,
    pub(super) data: Fifo,
    /// Boxed: few queues have one, and inline it would double the size of every tail-drop
    /// queue a simulator holds (its hot fields then span more cache lines).
    pub(super) high: Option<Box<Fifo>>,
}

impl<A: Aqm> AqmQueue<A> {
    /// Policy `aqm` over a data band of `limit`.
    pub fn new(aqm: A, limit: Limit) -> AqmQueue<A> {
        AqmQueue {
            aqm,
            data: Fifo::new(limit),
            high: None,
        }
    }

    /// Adds the high-priority band, of `limit`.
    pub fn with_high_band(mut self, limit: Limit) -> AqmQueue<A> {
        self.high = Some(Box::new(Fifo::new(limit)));
        self
    }

    /// What a discipline's `limit` and `priority` keys build: policy `aqm` over a data band of
    /// `limit`, and with `priority` a high band of the same limit in front of it.
    pub fn with_priority(aqm: A, limit: Limit, priority: bool) -> AqmQueue<A> {
        let q = AqmQueue::new(aqm, limit);
        if priority {
            q.with_high_band(limit)
        } else {
            q
        }
    }

    /// The policy.
    pub fn aqm(&self) -> &A {
        &self.aqm
    }

    /// The policy, to change (tests set its state directly).
    pub fn aqm_mut(&mut self) -> &mut A {
        &mut self.aqm
    }

    /// Drops the data band's head for `reason` (a discipline made of several queues that
    /// pushes a packet out of one of them, FQ-CoDel), counted as any drop.
    pub fn drop_head(&mut self, reason: DropReason) -> Option<Dropped> {
        let (packet, _) = self.data.pop()?;
        Some(self.data.drop(packet, reason))
    }

    /// The data band.
    pub fn data(&self) -> &Fifo {
        &self.data
    }
}

impl<A: Aqm> QueueState for AqmQueue<A> {
    fn backlog(&self) -> Backlog {
        let d = self.data.backlog();
        match &self.high {
            Some(h) => {
                let h = h.backlog();
                Backlog {
                    packets: h.packets + d.packets,
                    bytes: h.bytes + d.bytes,
                }
            }
            None => d,
        }
    }

    fn stats(&self) -> QueueStats {
        match &self.high {
            Some(h) => h.stats().merged(self.data.stats()),
            None => self.data.stats(),
        }
    }

    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        self.aqm.state(out);
        if let Some(h) = &self.high {
            out.push(("high_queue_pkts".into(), h.backlog().packets as f64));
        }
    }
}

impl<A: Aqm> QueueDiscipline for AqmQueue<A> {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: &Packet) -> Result<Enqueued, Dropped> {
        let mut pkt = *pkt;
        let high = self.high.is_some() && pkt.kind.is_high_priority();
        let fits = match &self.high {
            Some(h) if high => h.fits(&pkt),
            _ => self.data.fits(&pkt),
        };
        let verdict = self.aqm.on_arrival(now, &mut pkt, fits, &self.data);
        // Drops and marks the policy decides are counted on the data band whichever band the
        // packet was for; overflows on the band that overflowed. `stats` adds the bands up. A
        // packet marked and then refused for want of room counts as a drop only: its mark
        // reaches nobody.
        if verdict == Verdict::Drop {
            return Err(self.data.drop(pkt, DropReason::Aqm));
        }
        let band = match &mut self.high {
            Some(h) if high => h,
            _ => &mut self.data,
        };
        if !fits {
            return Err(band.drop(pkt, DropReason::Overflow));
        }
        band.push_fitting(now, pkt);
        if verdict == Verdict::Marked {
            self.data.count_mark();
        }
        Ok(Enqueued {
            marked: verdict == Verdict::Marked,
        })
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        self.aqm.before_dequeue(now, &self.data);
        let out = self.take(now, dropped);
        self.aqm.after_dequeue(now, &self.data);
        out
    }

    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.high.iter().flat_map(|h| h.iter()).for_each(&mut *f);
        self.data.iter().for_each(f)
    }

    fn set_rate(&mut self, rate: Rate) {
        self.aqm.set_rate(rate)
    }
}

impl<A: Aqm> AqmQueue<A> {
    /// The next packet to send: the high band's head, else the first data packet the policy
    /// lets go (those it drops at the head go to `dropped`).
    fn take(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        if let Some(h) = &mut self.high {
            if let Some((packet, at)) = h.pop() {
                h.count_sent(&packet);
                return Some(Dequeued {
                    packet,
                    sojourn: now - at,
                    marked: false,
                });
            }
        }
        loop {
            let (mut packet, at) = self.data.pop()?;
            let sojourn = now - at;
            match self.aqm.on_departure(now, &mut packet, sojourn, &self.data) {
                Verdict::Drop => dropped.push(self.data.drop(packet, DropReason::HeadDrop)),
                v => {
                    let marked = v == Verdict::Marked;
                    if marked {
                        self.data.count_mark();
                    }
                    self.data.count_sent(&packet);
                    return Some(Dequeued {
                        packet,
                        sojourn,
                        marked,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, PacketKind};
    use crate::queue::TailDrop;

    fn drain<Q: QueueDiscipline>(q: &mut Q, now: Time) -> Vec<Packet> {
        let mut dropped = Vec::new();
        std::iter::from_fn(|| q.dequeue(now, &mut dropped).map(|d| d.packet)).collect()
    }

    #[test]
    fn control_packets_overtake_data_in_the_high_band() {
        let mut q = AqmQueue::new(TailDrop, Limit::Packets(10)).with_high_band(Limit::Packets(10));
        for kind in [
            PacketKind::Data,
            PacketKind::ControlIb,
            PacketKind::ControlOb,
        ] {
            q.enqueue(Time::ZERO, &Packet::new(FlowId(0), kind, 40))
                .unwrap();
        }
        let order: Vec<_> = drain(&mut q, Time::ZERO).iter().map(|p| p.kind).collect();
        assert_eq!(
            order,
            vec![
                PacketKind::ControlOb,
                PacketKind::Data,
                PacketKind::ControlIb
            ]
        );
        assert_eq!(q.aqm_state_vec(), vec![("high_queue_pkts".into(), 0.0)]);
    }

    #[test]
    fn bands_have_separate_limits() {
        let mut q = AqmQueue::new(TailDrop, Limit::Packets(1)).with_high_band(Limit::Packets(1));
        let data = Packet::new(FlowId(0), PacketKind::Data, 1000);
        let ob = Packet::new(FlowId(0), PacketKind::ControlOb, 40);
        assert!(q.enqueue(Time::ZERO, &data).is_ok());
        assert!(q.enqueue(Time::ZERO, &data).is_err());
        assert!(q.enqueue(Time::ZERO, &ob).is_ok());
        assert!(q.enqueue(Time::ZERO, &ob).is_err());
        assert_eq!(q.backlog().packets, 2);
        assert_eq!(q.stats().dropped_packets, 2);
    }

    #[test]
    fn without_a_high_band_control_packets_wait_in_line() {
        let mut q = AqmQueue::new(TailDrop, Limit::Packets(10));
        for kind in [PacketKind::Data, PacketKind::ControlOb] {
            q.enqueue(Time::ZERO, &Packet::new(FlowId(0), kind, 40))
                .unwrap();
        }
        let order: Vec<_> = drain(&mut q, Time::ZERO).iter().map(|p| p.kind).collect();
        assert_eq!(order, vec![PacketKind::Data, PacketKind::ControlOb]);
    }

    /// Drops every head that waited longer than 5 ms, and marks the rest.
    struct DropStale;
    impl Aqm for DropStale {
        fn on_arrival(&mut self, _: Time, _: &mut Packet, _: bool, _: &Fifo) -> Verdict {
            Verdict::Pass
        }
        fn on_departure(&mut self, _: Time, p: &mut Packet, s: Duration, _: &Fifo) -> Verdict {
            if s > Duration::from_millis(5) {
                Verdict::Drop
            } else {
                p.ecn.mark();
                Verdict::Marked
            }
        }
    }

    #[test]
    fn a_policy_drops_at_the_head_and_every_packet_knows_its_sojourn() {
        let mut q = AqmQueue::new(DropStale, Limit::Unlimited);
        let at = |ms| Time::ZERO + Duration::from_millis(ms);
        for (i, ms) in [0, 1, 8, 9].into_iter().enumerate() {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 100);
            p.seq = i as u64;
            q.enqueue(at(ms), &p).unwrap();
        }
        let mut dropped = Vec::new();
        let d = q.dequeue(at(10), &mut dropped).unwrap();
        assert_eq!(dropped.len(), 2, "the heads that waited 10 and 9 ms");
        assert!(dropped.iter().all(|d| d.reason == DropReason::HeadDrop));
        assert_eq!((d.packet.seq, d.sojourn), (2, Duration::from_millis(2)));
        assert!(d.marked && d.packet.ecn.is_marked());
        let s = q.stats();
        assert_eq!(
            (s.enqueued_packets, s.dequeued_packets, s.dropped_packets),
            (4, 1, 2)
        );
        assert_eq!(s.marked_packets, 1);
        assert_eq!(q.backlog().packets, 1);
    }

    impl<A: Aqm> AqmQueue<A> {
        fn aqm_state_vec(&self) -> Vec<(String, f64)> {
            let mut v = Vec::new();
            self.aqm_state(&mut v);
            v
        }
    }
}
