//! Monaco (000 §IV-B): accumulation-based congestion control with an out-of-band, receiver-based
//! accumulation estimator.
//!
//! Sender (ingress):
//! - a rate-paced window: data leave through a leaky bucket (burst one packet) at about cwnd/RTT
//!   and each control period (one RTT) carries at most cwnd bytes (003 Algorithm 1's rule); data
//!   are never retransmitted — Monaco is a congestion-control loop, losses are counted;
//! - once per control period a back-to-back pair: the out-of-band (OB) control packet, which
//!   routers put in their high-priority band, then the in-band (IB) one, in line with data, both
//!   with the same control sequence number; the IB carries the data bytes sent since the
//!   previous IB and a virtual-delay field that AVD routers add to;
//! - the next pair leaves when the reverse control packet of this one arrives; then srtt is
//!   updated (pair sent → reverse received) and the ACC policy moves the window once; on
//!   "decrease-due-to-loss" the window halves;
//! - a lost pair is detected by an RFC 6298-style timer with backoff; the sender then sends a
//!   new pair with a larger sequence number;
//! - the low-rate regime (003 §V-A): a one-packet window told to shrink halves its pacing rate
//!   instead (down to 1/1024 of a packet per RTT), and positive feedback restores one packet
//!   per RTT at once. The expected-rate service (003 Algorithm 1) is the policy
//!   `cc::acc::expected`; its x̂ comes from the period's sent bytes in `Feedback::sent`.
//!
//! Receiver (egress):
//! - stamps the OB's arrival; at the IB's, ftt_q = t_IB − t_OB ≥ 0 (the forward queueing delay,
//!   the OB having skipped the queues) and the accumulation estimate
//!   â = x̄·(ftt_q + Σ t_AVD), x̄ an EWMA of the egress rate over control periods (000 §IV-B.1,
//!   §IV-D) — or, with the `count` estimator, the data bytes that arrived between OB and IB plus
//!   x̄·Σ t_AVD;
//! - compares the bytes received since the previous IB with the IB's count to detect loss and
//!   sends the reverse control packet (high priority) with â and a flag: increase, decrease or
//!   decrease-due-to-loss.
//!
//! Wire use of the packet fields: OB/IB `seq` = control sequence number; IB `ack` = bytes sent
//! since the previous IB, `virtual_delay` = Σ AVD virtual delays; reverse `seq` = control
//! sequence number, `value` = â in bytes, `ack` = flag (0 increase, 1 decrease, 2 loss),
//! `virtual_delay` = the measured ftt_q (so the sender can separate rtt_p for ACC-MW), `echo` =
//! the IB's Σ t_AVD (for the `virtual_rtt` option).
//!
//! Departures, each measured on acc-fig6 and written down because they matter:
//! - The per-period window cap (003's rule) is what makes the loop stable: pacing alone, at
//!   cwnd/srtt or at cwnd/latest-RTT, leaves the queue integrating the rate error and the loop
//!   oscillates at κ = 0.5. The cap clocks the sender by the control loop as ACKs clock a window.
//! - For the cap to bind, the pacing runs one packet per RTT faster than cwnd/RTT, so each
//!   period ends with a little idle time; the part of a packet the window allows beyond its whole
//!   packets carries into the next period, so the window holds on average.
//! - Each period starts with a random share of its idle time (the flow's seeded stream), so that
//!   flows in lockstep do not all pause just before their IBs sample the queue. Some lockstep
//!   bias remains: the equilibrium queue runs 0.2–0.7 packet per flow above a* when windows are
//!   a few packets (acc-fig6: 3.7 per flow with 10 flows, 3.6 with 20, 3.0 with 5; a* = 3).
//! - Before the first reverse packet the RTT is an initial guess (`initial_rtt`, 100 ms); a
//!   control timeout does not change the window (the paper only resends the pair); when the OB
//!   of a pair is lost the receiver sends no reverse packet and the sender's timer recovers; a
//!   loss is flagged only when consecutive IBs arrive (with a gap in control sequence numbers
//!   the byte counts cover different periods and are not compared).

pub mod control;
pub mod receiver;
pub mod sender;

pub use receiver::{Estimator, MonacoReceiver};
pub use sender::{MonacoSender, MonacoSettings, MIN_PACE_SHARE};

use serde::{Deserialize, Serialize};

use crate::cc::acc::aiad::AccAiad;
use crate::cc::acc::expected::ExpectedRate;
use crate::cc::acc::mw::AccMw;
use crate::cc::acc::p::AccP;
use crate::cc::acc::AccPolicy;
use std::ops::Bound::{Excluded, Included};

use crate::params::{count_in, in_range, FlowContext, ParamError, SchemeParams};
use crate::transport::Endpoint;
use crate::units::{Bytes, Duration, Rate};

/// `monaco` parameters (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MonacoParams {
    /// The ACC control policy (000 eqs. (3), (5), (6)): proportional (acc-p), multiplicative-window
    /// (acc-mw) or additive-increase additive-decrease (acc-aiad).
    pub policy: AccPolicyName,
    /// Policy gain: κ of ACC-P and ACC-MW (default 0.5); the step in packets of ACC-AIAD
    /// (default 1).
    pub kappa: Option<f64>,
    /// Target accumulation a*.
    pub target: Bytes,
    /// How the receiver estimates the accumulation: `rate`, x̄ times the forward queueing delay
    /// between the OB and IB control packets (000 §IV-B.1); `count`, the data bytes that arrive
    /// between them.
    pub estimator: Estimator,
    /// Increase the window by at most one packet per control period (003 §II).
    pub increase_cap: bool,
    /// Weighted-rate service: the loop's target accumulation is weight × target (003).
    pub weight: f64,
    /// Expected minimum rate r_e (003 §IV); `target` × `weight` is then a_p*, the target
    /// accumulation beyond r_e.
    pub expected_rate: Option<Rate>,
    /// Accumulation limit A (003 eq. (16)): at it the loop degrades to weight A/a*.
    pub limit: Option<Bytes>,
    /// Initial window.
    pub initial_window: Bytes,
    /// RTT assumed for pacing before the first control period completes.
    pub initial_rtt: Duration,
    /// Lower bound of the control-packet timeout.
    pub min_rto: Duration,
    /// Count the AVD virtual delay as part of the RTT when pacing (not in 000; on by default,
    /// see `MonacoSettings::virtual_rtt`).
    pub virtual_rtt: bool,
    /// Bytes to transfer, sent as whole packets; absent = bulk (always backlogged). The transfer
    /// completes when the answer to the control pair sent after its last packet arrives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
}

impl Default for MonacoParams {
    fn default() -> Self {
        MonacoParams {
            policy: AccPolicyName::AccP,
            kappa: None,
            target: Bytes(3000),
            estimator: Estimator::Rate,
            increase_cap: false,
            weight: 1.0,
            expected_rate: None,
            limit: None,
            initial_window: Bytes(2000),
            initial_rtt: Duration::from_millis(100),
            min_rto: Duration::from_millis(200),
            virtual_rtt: true,
            size: None,
        }
    }
}

impl MonacoParams {
    /// The ACC policy these parameters name, fresh (the sender's, and the model tier's fluid
    /// law, which applies it per unit of time: `acclab_model::acc`).
    pub fn policy(&self) -> Box<dyn AccPolicy> {
        let kappa = self.kappa();
        match self.policy {
            AccPolicyName::AccP if self.is_expected_rate_service() => Box::new(ExpectedRate::new(
                kappa,
                self.expected_rate.map_or(0.0, |r| r.as_f64() / 8.0),
                self.limit.map_or(f64::INFINITY, |a| a.0 as f64),
            )),
            AccPolicyName::AccP => Box::new(AccP { kappa }),
            AccPolicyName::AccAiad => Box::new(AccAiad {
                kappa_packets: kappa,
            }),
            AccPolicyName::AccMw => Box::new(AccMw { kappa }),
        }
    }

    /// The sender's settings: the policy these parameters name, with its own random stream.
    pub(crate) fn sender_config(&self, ctx: &FlowContext, rng: crate::rng::Rng) -> MonacoSettings {
        let policy = self.policy();
        MonacoSettings {
            packet_size: ctx.packet_size,
            control_size: ctx.ack_size,
            target: self.target_bytes(),
            policy,
            increase_cap: self.increase_cap,
            initial_window: self.initial_window.0 as f64,
            initial_rtt: self.initial_rtt,
            min_rto: self.min_rto,
            virtual_rtt: self.virtual_rtt,
            rng,
        }
    }

    /// The target accumulation in bytes, weight included.
    pub fn target_bytes(&self) -> f64 {
        self.weight * self.target.0 as f64
    }

    /// Whether the loop runs 003 Algorithm 1 (an expected rate or a limit is given).
    pub fn is_expected_rate_service(&self) -> bool {
        self.expected_rate.is_some() || self.limit.is_some()
    }

    /// The policy gain, with each policy's default.
    pub fn kappa(&self) -> f64 {
        self.kappa.unwrap_or(match self.policy {
            AccPolicyName::AccAiad => 1.0,
            AccPolicyName::AccP | AccPolicyName::AccMw => 0.5,
        })
    }
}

/// The largest target accumulation or initial window a Monaco loop may have: 1 GB.
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;

impl SchemeParams for MonacoParams {
    fn validate(&self) -> Result<(), ParamError> {
        in_range("kappa", self.kappa(), (Excluded(0.0), Included(1e6)))?;
        in_range("weight", self.weight, (Excluded(0.0), Included(1e6)))?;
        for (key, b) in [
            ("target", self.target),
            ("initial_window", self.initial_window),
        ] {
            count_in(key, b.0, 1, MAX_WINDOW_BYTES)?;
        }
        if self.target_bytes() > MAX_WINDOW_BYTES as f64 {
            return Err(ParamError::at(
                "weight",
                format!(
                    "monaco weight × target = {} B is above the largest accumulation, {MAX_WINDOW_BYTES} B",
                    self.target_bytes()
                ),
            ));
        }
        if self.initial_rtt.0 == 0 {
            return Err(ParamError::at("initial_rtt", "must be positive"));
        }
        if let Some(b) = self.size {
            count_in("size", b.0, 1, u64::MAX)?;
        }
        if self.is_expected_rate_service() && self.policy != AccPolicyName::AccP {
            let key = if self.expected_rate.is_some() {
                "expected_rate"
            } else {
                "limit"
            };
            return Err(ParamError::at(key, format!(
                "monaco `expected_rate` and `limit` need policy \"acc-p\" (003 Algorithm 1 is ACC-P's law), not {:?}",
                self.policy
            )));
        }
        if let Some(a) = self.limit {
            if (a.0 as f64) < self.target_bytes() {
                return Err(ParamError::at("limit", format!(
                    "monaco `limit` {} B is below the target accumulation {} B (weight × target); the loop could never reach its target",
                    a.0,
                    self.target_bytes()
                )));
            }
        }
        Ok(())
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:monaco", ctx.name));
        let cfg = self.sender_config(ctx, rng);
        let sender = match self.size {
            Some(b) => MonacoSender::transfer(ctx.flow, cfg, b.0),
            None => MonacoSender::new(ctx.flow, cfg),
        };
        (
            Box::new(sender),
            Box::new(MonacoReceiver::new(
                ctx.flow,
                ctx.ack_size,
                self.target_bytes(),
                self.estimator,
            )),
        )
    }

    fn default_class(&self) -> &'static str {
        "acc"
    }
}

/// The ACC policy of a Monaco loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AccPolicyName {
    AccP,
    AccAiad,
    AccMw,
}

#[cfg(test)]
mod tests {
    use super::control::{InBand, Reverse, Signal};
    use super::*;
    use crate::cc::acc::p::AccP;
    use crate::packet::FlowId;
    use crate::packet::{Packet, PacketKind, Payload};
    use crate::units::Time;

    /// A reverse control packet answering pair `seq`.
    fn reverse(seq: u64, signal: Signal, accumulation: f64) -> Packet {
        let mut rev = Packet::new(FlowId(0), PacketKind::ControlReverse, 40);
        rev.seq = seq;
        rev.payload = Payload::Reverse(Reverse {
            signal,
            accumulation,
            ftt_q: Duration::ZERO,
            virtual_delay: Duration::ZERO,
        });
        rev
    }

    /// What a reverse control packet says.
    fn said(rev: &Packet) -> Reverse {
        match rev.payload {
            Payload::Reverse(r) => r,
            other => panic!("not a reverse control packet: {other:?}"),
        }
    }

    fn sender() -> MonacoSender {
        MonacoSender::new(
            FlowId(0),
            MonacoSettings {
                packet_size: 1000,
                control_size: 40,
                target: 3000.0,
                policy: Box::new(AccP { kappa: 0.5 }),
                increase_cap: false,
                virtual_rtt: false,
                initial_window: 2000.0,
                initial_rtt: Duration::from_millis(100),
                min_rto: Duration::from_millis(200),
                rng: crate::rng::stream(1, "test"),
            },
        )
    }

    fn drain(s: &mut MonacoSender, now: Time) -> Vec<Packet> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// Runs the sender's timers up to `until`, collecting what it sends.
    fn run_until(s: &mut MonacoSender, until: Time) -> Vec<(Time, Packet)> {
        run_between(s, Time::ZERO, until)
    }

    fn run_from(s: &mut MonacoSender, from: Time, until: Time) -> Vec<Packet> {
        run_between(s, from, until)
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }

    fn run_between(s: &mut MonacoSender, from: Time, until: Time) -> Vec<(Time, Packet)> {
        let mut out = Vec::new();
        let mut now = from;
        loop {
            out.extend(drain(s, now).into_iter().map(|p| (now, p)));
            match s.poll_timeout() {
                Some(t) if t <= until => {
                    now = t;
                    s.handle_timeout(now);
                }
                _ => return out,
            }
        }
    }

    #[test]
    fn start_sends_a_pair_then_the_paced_window() {
        let mut s = sender();
        s.handle_start(ms(0));
        let out = run_until(&mut s, ms(150));
        assert_eq!(out[0].1.kind, PacketKind::ControlOb);
        assert_eq!(out[1].1.kind, PacketKind::ControlIb);
        assert_eq!(out[0].1.seq, out[1].1.seq);
        // cwnd 2000 B, initial RTT 100 ms: pacing at (cwnd + 1 packet)/RTT spaces the two
        // packets the window allows 33.3 ms apart, after a random part of the 33.3 ms of idle
        // time; then the window is spent until the next pair.
        let data: Vec<Time> = out
            .iter()
            .filter(|(_, p)| p.kind == PacketKind::Data)
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(data.len(), 2, "{data:?}");
        assert!(data[0] <= Time(33_333_334), "{data:?}");
        assert_eq!((data[1] - data[0]).0, 33_333_333);
    }

    #[test]
    fn a_transfer_sends_its_bytes_and_ends_when_the_pair_after_them_is_answered() {
        let mut s = MonacoSender::transfer(FlowId(0), sender().cfg, 3000);
        s.handle_start(ms(0));
        let mut data = 0;
        let mut now = ms(0);
        // Answer every pair 100 ms after it left (â = 0: grow), until the transfer ends.
        for _ in 0..5 {
            let out = run_from(&mut s, now, now + Duration::from_millis(100));
            data += out.iter().filter(|p| p.kind == PacketKind::Data).count();
            let Some(seq) = out.iter().rev().find(|p| p.kind == PacketKind::ControlOb) else {
                break;
            };
            now += Duration::from_millis(100);
            s.handle_packet(now, &reverse(seq.seq, Signal::Increase, 0.0));
        }
        assert_eq!(data, 3, "three 1000 B packets, no more");
        assert!(s.is_finished());
        assert_eq!(
            s.poll_timeout(),
            None,
            "a finished loop sends no more pairs"
        );
    }

    #[test]
    fn ib_counts_bytes_since_the_previous_ib() {
        let mut s = sender();
        s.handle_start(ms(0));
        run_until(&mut s, ms(100));
        s.handle_packet(ms(110), &reverse(1, Signal::Increase, 0.0));
        let out = drain(&mut s, ms(110));
        let ib = out
            .iter()
            .find(|p| p.kind == PacketKind::ControlIb)
            .unwrap();
        assert_eq!(ib.seq, 2);
        assert_eq!(
            ib.payload,
            Payload::InBand(InBand {
                sent_bytes: 2000,
                virtual_delay: Duration::ZERO
            })
        );
        // â = 0 < a*: ACC-P grows the window by κ·a* = 1500 B.
        assert_eq!(s.cwnd(), 3500.0);
    }

    #[test]
    fn virtual_rtt_stretches_the_period_by_the_echoed_virtual_delay() {
        let mut r = MonacoReceiver::new(FlowId(0), 40, 3000.0, Estimator::Rate);
        let mut ob = Packet::new(FlowId(0), PacketKind::ControlOb, 40);
        ob.seq = 1;
        r.handle_packet(ms(10), &ob);
        let mut ib = Packet::new(FlowId(0), PacketKind::ControlIb, 40);
        ib.seq = 1;
        ib.payload = Payload::InBand(InBand {
            sent_bytes: 0,
            virtual_delay: Duration::from_millis(110),
        });
        r.handle_packet(ms(11), &ib);
        let rev = r.poll_transmit(ms(11)).unwrap();
        assert_eq!(rev.virtual_delay(), Duration::from_millis(110));

        for (virtual_rtt, carried) in [(false, 3500.0), (true, 1750.0)] {
            let mut s = sender();
            s.cfg.virtual_rtt = virtual_rtt;
            s.handle_start(ms(0));
            run_until(&mut s, ms(100));
            let mut answer = rev;
            answer.payload = Payload::Reverse(Reverse {
                accumulation: 0.0,
                ..said(&rev)
            });
            s.handle_packet(ms(110), &answer);
            // srtt 110 ms, Σ t_AVD 110 ms: with the option a period carries half the window.
            assert_eq!(s.cwnd(), 3500.0);
            assert_eq!(s.period_window(), carried, "virtual_rtt {virtual_rtt}");
        }
    }

    #[test]
    fn loss_flag_halves_and_timeout_resends_a_new_pair() {
        let mut s = sender();
        s.handle_start(ms(0));
        drain(&mut s, ms(0));
        s.handle_packet(ms(10), &reverse(1, Signal::Loss, 0.0));
        assert_eq!(s.cwnd(), 1000.0);
        drain(&mut s, ms(10));
        // Pair 2 is never answered: the timer fires and pair 3 goes out.
        let deadline = s.ctrl_deadline.unwrap();
        s.handle_timeout(deadline);
        let seqs: Vec<u64> = drain(&mut s, deadline)
            .iter()
            .filter(|p| p.kind == PacketKind::ControlOb)
            .map(|p| p.seq)
            .collect();
        assert_eq!(seqs, vec![3]);
        assert_eq!(s.stats().timeouts, 1);
        // A late answer to pair 2 is ignored.
        s.handle_packet(
            deadline + Duration::from_millis(1),
            &reverse(2, Signal::Increase, 0.0),
        );
        assert_eq!(s.cwnd(), 1000.0);
    }

    /// Feeds a receiver one control period: OB at `t_ob`, `n` data packets, IB at `t_ib`.
    fn period(
        r: &mut MonacoReceiver,
        seq: u64,
        t_ob: Time,
        n: u64,
        t_ib: Time,
        sent: u64,
    ) -> Packet {
        let mut ob = Packet::new(FlowId(0), PacketKind::ControlOb, 40);
        ob.seq = seq;
        r.handle_packet(t_ob, &ob);
        for _ in 0..n {
            r.handle_packet(t_ob, &Packet::new(FlowId(0), PacketKind::Data, 1000));
        }
        let mut ib = Packet::new(FlowId(0), PacketKind::ControlIb, 40);
        ib.seq = seq;
        ib.payload = Payload::InBand(InBand {
            sent_bytes: sent,
            virtual_delay: Duration::ZERO,
        });
        r.handle_packet(t_ib, &ib);
        r.poll_transmit(t_ib).expect("a reverse packet")
    }

    #[test]
    fn receiver_estimates_rate_times_forward_queueing_delay() {
        let mut r = MonacoReceiver::new(FlowId(0), 40, 3000.0, Estimator::Rate);
        // 10 packets per 10 ms period = 1 MB/s; the IB trails the OB by 4 ms ⇒ â = 4000 B.
        let mut t = ms(0);
        let mut last = None;
        for seq in 1..=5 {
            last = Some(period(
                &mut r,
                seq,
                t,
                10,
                t + Duration::from_millis(4),
                10_000,
            ));
            t += Duration::from_millis(10);
        }
        let rev = said(&last.unwrap());
        assert!((rev.accumulation - 4000.0).abs() < 1e-6, "{rev:?}");
        assert_eq!(rev.signal, Signal::Decrease);
        assert_eq!(rev.ftt_q, Duration::from_millis(4));
    }

    #[test]
    fn receiver_flags_loss_from_the_byte_count() {
        let mut r = MonacoReceiver::new(FlowId(0), 40, 3000.0, Estimator::Count);
        period(&mut r, 1, ms(0), 5, ms(1), 5000);
        let rev = said(&period(&mut r, 2, ms(10), 4, ms(11), 5000));
        assert_eq!(rev.signal, Signal::Loss);
        assert_eq!(
            rev.accumulation, 4000.0,
            "count estimator: bytes between OB and IB"
        );
        // After a control-sequence gap the counts are not compared.
        let rev = said(&period(&mut r, 4, ms(30), 4, ms(31), 9000));
        assert_ne!(rev.signal, Signal::Loss);
    }

    #[test]
    fn no_reverse_without_the_matching_ob() {
        let mut r = MonacoReceiver::new(FlowId(0), 40, 3000.0, Estimator::Rate);
        let mut ib = Packet::new(FlowId(0), PacketKind::ControlIb, 40);
        ib.seq = 7;
        r.handle_packet(ms(5), &ib);
        assert!(r.poll_transmit(ms(5)).is_none());
    }
}
