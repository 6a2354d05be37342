//! Step ECN marking at a threshold K, the AQM DCTCP assumes (RFC 8257 §3.1): "the switch
//! marks ... if the queue occupancy is greater than K upon the packet's arrival", with the
//! instantaneous, not an averaged, queue. ECN-capable packets arriving above K are marked (CE);
//! other packets are left to the tail-drop buffer — the step has no drop variant.

use serde::{Deserialize, Serialize};

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Backlog, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::params::{ParamError, QueueContext, QueueParams};
use crate::units::{Limit, Rate, Time};

/// The step-marking policy.
#[derive(Clone, Copy, Debug)]
pub struct StepEcn {
    /// K, in packets or bytes.
    threshold: Limit,
}

impl StepEcn {
    pub fn new(threshold: Limit) -> StepEcn {
        StepEcn { threshold }
    }
}

/// Whether a packet `pkt` arriving at a queue that holds `b` is marked at threshold K
/// (`threshold`; `Limit::Unlimited` never marks): RFC 8257 §3.1, an ECN-capable packet not yet
/// marked, arriving when the queue holds more than K. The one statement of the rule: the
/// simulator's queues that depart at enqueue (`droptail::TailDropLedger`) apply it too.
#[inline(always)]
pub fn marks(threshold: Limit, b: Backlog, pkt: &Packet) -> bool {
    let above = match threshold {
        Limit::Packets(k) => b.packets > k,
        Limit::Bytes(k) => b.bytes > k,
        Limit::Unlimited => false,
    };
    above && pkt.ecn.is_capable() && !pkt.ecn.is_marked()
}

impl Aqm for StepEcn {
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _fits: bool, data: &Fifo) -> Verdict {
        // RFC 8257 §3.1: mark on arrival above K.
        if marks(self.threshold, data.backlog(), pkt) {
            pkt.ecn.mark();
            Verdict::Marked
        } else {
            Verdict::Pass
        }
    }
}

/// `queue = { kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepEcnParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// K: ECN-capable packets arriving when the queue holds more than this are marked
    /// ("20pkt", or bytes such as "30KB").
    pub threshold: Limit,
    /// Monaco's out-of-band and reverse control packets skip the data queue (as for `droptail`).
    #[serde(default)]
    pub priority: bool,
}

impl QueueParams for StepEcnParams {
    fn marks_ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Result<(), ParamError> {
        if self.threshold == Limit::Unlimited {
            return Err(ParamError::at(
                "threshold",
                "step-ecn `threshold` must be a number of packets or bytes, not \"inf\"",
            ));
        }
        // A threshold at or above the buffer would never mark: DCTCP would see no congestion
        // signal and fill the buffer to loss.
        match (self.threshold, self.limit) {
            (Limit::Packets(k), Limit::Packets(l)) | (Limit::Bytes(k), Limit::Bytes(l))
                if k >= l =>
            {
                return Err(ParamError::at(
                    "threshold",
                    format!(
                        "step-ecn `threshold` must be below the buffer `limit` ({}), not {}",
                        self.limit, self.threshold
                    ),
                ))
            }
            _ => {}
        }
        Ok(())
    }

    fn validate_on_link(&self, _rate: Rate, packet_size: u32) -> Result<(), ParamError> {
        // Below one packet a byte threshold marks every ECN-capable packet that finds any
        // queue at all, whatever the number says: refused, so that the queue marks what it says.
        match self.threshold {
            Limit::Bytes(k) if k < packet_size as u64 => Err(ParamError::at(
                "threshold",
                format!(
                    "a byte threshold must be at least one {packet_size}-byte packet (defaults.packet_size), not {k} B"
                ),
            )),
            _ => Ok(()),
        }
    }

    fn build(&self, _ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        Box::new(AqmQueue::with_priority(
            StepEcn::new(self.threshold),
            self.limit,
            self.priority,
        ))
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId, PacketKind};
    use crate::queue::QueueState;

    #[test]
    fn marks_ect_arrivals_above_the_threshold_only() {
        let mut q = AqmQueue::new(StepEcn::new(Limit::Packets(2)), Limit::Packets(10));
        let mut ect = Packet::new(FlowId(0), PacketKind::Data, 1000);
        ect.ecn = Ecn::ECT;
        let plain = Packet::new(FlowId(0), PacketKind::Data, 1000);
        // Queue 0, 1, 2: not above K = 2.
        for _ in 0..3 {
            assert!(!q.enqueue(Time::ZERO, &ect).unwrap().marked);
        }
        // Queue 3 > 2: marked; a packet that is not ECN-capable passes unmarked.
        assert!(q.enqueue(Time::ZERO, &ect).unwrap().marked);
        assert!(!q.enqueue(Time::ZERO, &plain).unwrap().marked);
        assert_eq!(q.stats().marked_packets, 1);
        assert_eq!(q.stats().dropped_packets, 0);
        let marked: Vec<bool> = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut Vec::new()))
            .map(|d| d.packet.ecn.is_marked())
            .collect();
        assert_eq!(marked, [false, false, false, true, false]);
    }

    #[test]
    fn byte_thresholds_and_validation() {
        let p: StepEcnParams = toml::from_str("limit = \"100pkt\"\nthreshold = \"2500B\"").unwrap();
        assert!(p.validate().is_ok());
        let mut q = AqmQueue::new(StepEcn::new(p.threshold), p.limit);
        let mut ect = Packet::new(FlowId(0), PacketKind::Data, 1000);
        ect.ecn = Ecn::ECT;
        let marks: Vec<bool> = (0..4)
            .map(|_| q.enqueue(Time::ZERO, &ect).unwrap().marked)
            .collect();
        assert_eq!(marks, [false, false, false, true]); // 3000 B > 2500 B at the fourth
        let bad: StepEcnParams = toml::from_str("limit = \"100pkt\"\nthreshold = \"inf\"").unwrap();
        assert!(bad.validate().is_err());
    }
}
