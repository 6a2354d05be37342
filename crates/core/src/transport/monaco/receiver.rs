//! Monaco's egress side (000 §IV-B, §IV-D): the OB/IB timing, the accumulation estimate and
//! the reverse control packet. See mod.rs for the design.

use serde::{Deserialize, Serialize};

use super::control::{Reverse, Signal};
use crate::packet::{FlowId, Packet, PacketKind, Payload};
use crate::transport::{Endpoint, EndpointStats, Outbox};
use crate::units::Time;

/// How the receiver turns a control period into an accumulation estimate
/// (`estimator = "rate" | "count"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// â = x̄·(ftt_q + Σ t_AVD), x̄ the egress-rate EWMA (000 §IV-B.1).
    Rate,
    /// â = data bytes arriving between OB and IB + x̄·Σ t_AVD (Little's law counted directly).
    Count,
}

/// The egress side.
pub struct MonacoReceiver {
    flow: FlowId,
    control_size: u32,
    target: f64,
    estimator: Estimator,
    /// Weight of a new period's rate sample in the egress-rate EWMA.
    gain: f64,
    /// The last OB seen: its sequence number and arrival time.
    ob: Option<(u64, Time)>,
    bytes_since_ob: u64,
    bytes_since_ib: u64,
    last_ib: Option<(u64, Time)>,
    rate: Option<f64>,
    pending: Outbox,
    stats: EndpointStats,
}

impl MonacoReceiver {
    /// `target` (bytes) decides the increase/decrease flag; `gain` is the EWMA weight of a new
    /// period's egress-rate sample.
    pub fn new(
        flow: FlowId,
        control_size: u32,
        target: f64,
        estimator: Estimator,
    ) -> MonacoReceiver {
        MonacoReceiver {
            flow,
            control_size,
            target,
            estimator,
            gain: 0.5,
            ob: None,
            bytes_since_ob: 0,
            bytes_since_ib: 0,
            last_ib: None,
            rate: None,
            pending: Outbox::default(),
            stats: EndpointStats::default(),
        }
    }

    /// The egress-rate EWMA, bytes per second.
    pub fn egress_rate(&self) -> Option<f64> {
        self.rate
    }

    fn on_ib(&mut self, now: Time, ib: &Packet) {
        if let Some((_, t)) = self.last_ib {
            let dt = (now - t).as_secs_f64();
            if dt > 0.0 {
                let sample = self.bytes_since_ib as f64 / dt;
                self.rate = Some(match self.rate {
                    None => sample,
                    Some(r) => (1.0 - self.gain) * r + self.gain * sample,
                });
            }
        }
        let consecutive = self.last_ib.is_some_and(|(s, _)| ib.seq == s + 1);
        let sent_bytes = match ib.payload {
            Payload::InBand(m) => m.sent_bytes,
            _ => 0,
        };
        let lost = consecutive && self.bytes_since_ib < sent_bytes;
        let ob = self.ob.filter(|(s, _)| *s == ib.seq);
        let x = self.rate.unwrap_or(0.0);
        if let Some((_, t_ob)) = ob {
            let ftt_q = now - t_ob; // ≥ 0 by construction
            let avd = ib.virtual_delay().as_secs_f64();
            let estimate = match (self.estimator, self.rate) {
                (Estimator::Rate, Some(x)) => x * (ftt_q.as_secs_f64() + avd),
                // Before the first egress-rate sample (the first pair), Little's law by count.
                _ => self.bytes_since_ob as f64 + x * avd,
            };
            self.stats.accumulation_bytes = Some(estimate);
            let mut rev = Packet::new(self.flow, PacketKind::ControlReverse, self.control_size);
            rev.seq = ib.seq;
            rev.payload = Payload::Reverse(Reverse {
                signal: if lost {
                    Signal::Loss
                } else if estimate > self.target {
                    Signal::Decrease
                } else {
                    Signal::Increase
                },
                accumulation: estimate,
                ftt_q,
                virtual_delay: ib.virtual_delay(), // echoed: the sender's `virtual_rtt` uses it
            });
            self.pending.push(rev);
        }
        if lost {
            self.stats.detected_losses += 1;
        }
        self.last_ib = Some((ib.seq, now));
        self.bytes_since_ib = 0;
        self.ob = None;
    }
}

impl Endpoint for MonacoReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        match pkt.kind {
            PacketKind::Data => {
                self.stats.delivered_bytes += pkt.size as u64;
                self.bytes_since_ib += pkt.size as u64;
                self.bytes_since_ob += pkt.size as u64;
            }
            PacketKind::ControlOb => {
                self.ob = Some((pkt.seq, now));
                self.bytes_since_ob = 0;
            }
            PacketKind::ControlIb => self.on_ib(now, pkt),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.pending.pop(now)
    }

    fn stats(&self) -> EndpointStats {
        self.pending.sent_in(self.stats)
    }
}
