//! Two-priority strict FIFO (SPEC §4, 000 §IV-B): the high band carries only Monaco's
//! out-of-band and reverse control packets, so they measure the propagation path without
//! queueing behind data; everything else shares the low band. Each band has its own limit.

use super::{Backlog, Dropped, Fifo, QueueDiscipline, QueueStats};
use crate::packet::Packet;
use crate::units::{Limit, Time};
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, QueueContext, QueueParams};

/// Strict priority between two FIFOs.
#[derive(Clone, Debug)]
pub struct PriorityFifo {
    high: Fifo,
    low: Fifo,
}

impl PriorityFifo {
    pub fn new(limit: Limit, high_limit: Limit) -> PriorityFifo {
        PriorityFifo {
            high: Fifo::new(high_limit),
            low: Fifo::new(limit),
        }
    }
}

impl QueueDiscipline for PriorityFifo {
    fn enqueue(&mut self, _now: Time, pkt: Packet) -> Result<(), Dropped> {
        if pkt.kind.is_high_priority() {
            self.high.push(pkt)
        } else {
            self.low.push(pkt)
        }
    }
    fn dequeue(&mut self, _now: Time) -> Option<Packet> {
        self.high.pop().or_else(|| self.low.pop())
    }
    fn backlog(&self) -> Backlog {
        let (h, l) = (self.high.backlog(), self.low.backlog());
        Backlog {
            packets: h.packets + l.packets,
            bytes: h.bytes + l.bytes,
        }
    }
    fn stats(&self) -> QueueStats {
        self.high.stats().merged(self.low.stats())
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.high.iter().chain(self.low.iter()).for_each(f)
    }
    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("high_queue_pkts".into(), self.high.backlog().packets as f64));
    }
}

/// `queue = { kind = "priority", limit = "90pkt", high_limit = "20pkt" }` (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityParams {
    /// Limit of the low (data) band.
    pub limit: Limit,
    /// Limit of the high (control) band; default `limit`.
    pub high_limit: Option<Limit>,
}

impl QueueParams for PriorityParams {
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(&self, _ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        Box::new(PriorityFifo::new(
            self.limit,
            self.high_limit.unwrap_or(self.limit),
        ))
    }

    fn limits(&self) -> Vec<Limit> {
        vec![self.limit, self.high_limit.unwrap_or(self.limit)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, PacketKind};

    #[test]
    fn control_packets_overtake_data() {
        let mut q = PriorityFifo::new(Limit::Packets(10), Limit::Packets(10));
        for kind in [
            PacketKind::Data,
            PacketKind::ControlIb,
            PacketKind::ControlOb,
        ] {
            q.enqueue(Time::ZERO, Packet::new(FlowId(0), kind, 40))
                .unwrap();
        }
        let order: Vec<_> = std::iter::from_fn(|| q.dequeue(Time::ZERO))
            .map(|p| p.kind)
            .collect();
        assert_eq!(
            order,
            vec![
                PacketKind::ControlOb,
                PacketKind::Data,
                PacketKind::ControlIb
            ]
        );
    }

    #[test]
    fn bands_have_separate_limits() {
        let mut q = PriorityFifo::new(Limit::Packets(1), Limit::Packets(1));
        let data = Packet::new(FlowId(0), PacketKind::Data, 1000);
        let ob = Packet::new(FlowId(0), PacketKind::ControlOb, 40);
        assert!(q.enqueue(Time::ZERO, data).is_ok());
        assert!(q.enqueue(Time::ZERO, data).is_err());
        assert!(q.enqueue(Time::ZERO, ob).is_ok());
        assert!(q.enqueue(Time::ZERO, ob).is_err());
        assert_eq!(q.backlog().packets, 2);
    }
}
