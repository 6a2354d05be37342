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

use std::collections::VecDeque;

use rand::RngExt;

use crate::cc::acc::{self, AccPolicy, Feedback};
use crate::packet::{FlowId, Packet, PacketKind};
use crate::rng::Rng;
use crate::rtt::RttEstimator;
use crate::transport::pacer::Pacer;
use crate::transport::{Endpoint, EndpointStats, Outbox};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

use crate::cc::acc::aiad::AccAiad;
use crate::cc::acc::expected::ExpectedRate;
use crate::cc::acc::mw::AccMw;
use crate::cc::acc::p::AccP;
use crate::params::{positive, FlowContext, ParamError, SchemeParams};
use crate::units::{Bytes, Rate};

/// Feedback flags on the reverse control packet.
pub const FLAG_INCREASE: u64 = 0;
pub const FLAG_DECREASE: u64 = 1;
pub const FLAG_LOSS: u64 = 2;

/// Settings of a Monaco sender.
pub struct MonacoConfig {
    pub packet_size: u32,
    pub control_size: u32,
    /// Target accumulation a*, bytes (already multiplied by any weight).
    pub target: f64,
    pub policy: Box<dyn AccPolicy>,
    pub increase_cap: bool,
    pub initial_window: f64,
    pub initial_rtt: Duration,
    pub min_rto: Duration,
    /// Pace as if the path's AVD virtual delays were propagation delay: each control period
    /// carries cwnd·srtt/(srtt + Σ t_AVD) (the receiver echoes the IB's Σ t_AVD). Not in 000:
    /// there an AVD link's virtual queue integrates the rate excess, while at a DropTail link
    /// the queue stretches the RTT and so ties the queue to the windows; with this option the
    /// virtual queue is tied to the windows the same way. On by default (scenario key
    /// `virtual_rtt`); it changes nothing on paths without AVD links. Measured with
    /// `acclab reproduce` (off → on): qos-fig5 11 → 14 of 22 rows (AVQ+VD, w = 30: flow 0 at
    /// 35× the others → within 0.5% of weighted PF), qos-fig4 12 → 17 of 18, acc-fig8 7 → 8 of
    /// 11; acc-fig9 and qos-fig6 unchanged in count. The expected-rate policy judges "window-
    /// limited" against the period's allowance (`Feedback::allowed`), not cwnd, for this.
    pub virtual_rtt: bool,
    /// The flow's random stream (for the phase of each period's idle time).
    pub rng: Rng,
}

/// The ingress side.
pub struct MonacoSender {
    flow: FlowId,
    cfg: MonacoConfig,
    cwnd: f64,
    /// Σ t_AVD of the last answered IB, as the receiver echoed it.
    avd_delay: Duration,
    rtt: RttEstimator,
    running: bool,
    /// When the leaky bucket lets the next data packet go.
    pacer: Pacer,
    data_seq: u64,
    /// Data bytes sent in this control period (since the last IB).
    bytes_since_ib: u64,
    /// What this period may carry: cwnd plus the fraction of a packet the last period's window
    /// allowed but whole packets could not use (so the window holds on average).
    allowance: f64,
    ctrl_seq: u64,
    /// Control packets waiting to leave (a pair, OB first).
    ctrl_queue: VecDeque<Packet>,
    /// The pair in flight: its sequence number and when it left.
    outstanding: Option<(u64, Time)>,
    ctrl_deadline: Option<Time>,
    accumulation: Option<f64>,
    /// The low-rate regime's share of the normal pacing rate (1 outside it): halved on each
    /// negative feedback at a one-packet window, back to 1 on positive feedback (003 §V-A).
    pace_share: f64,
    /// A finite transfer's data bytes still to send (`None`: always backlogged).
    budget: Option<u64>,
    /// The pair sent after a finite transfer's last data byte: its answer, which comes back after
    /// the IB has followed that byte through the queues, ends the transfer.
    final_pair: Option<u64>,
    finished: bool,
    stats: EndpointStats,
}

/// The smallest share of its one-packet-per-RTT rate the low-rate regime paces a loop down to
/// (ten halvings): a bound the paper does not give, so that a loop never stops entirely.
pub const MIN_PACE_SHARE: f64 = 1.0 / 1024.0;

impl MonacoSender {
    pub fn new(flow: FlowId, cfg: MonacoConfig) -> MonacoSender {
        MonacoSender {
            flow,
            cwnd: cfg.initial_window.max(cfg.packet_size as f64),
            avd_delay: Duration(0),
            rtt: RttEstimator::new(cfg.min_rto, Duration::from_secs(1)),
            cfg,
            running: false,
            pacer: Pacer::default(),
            data_seq: 0,
            bytes_since_ib: 0,
            allowance: 0.0,
            ctrl_seq: 0,
            ctrl_queue: VecDeque::new(),
            outstanding: None,
            ctrl_deadline: None,
            accumulation: None,
            pace_share: 1.0,
            budget: None,
            final_pair: None,
            finished: false,
            stats: EndpointStats::default(),
        }
    }

    /// A loop that sends `bytes` of data and then ends (a web object, say); the transfer is
    /// over when the answer to the pair sent after its last byte arrives (`is_finished`).
    pub fn transfer(flow: FlowId, cfg: MonacoConfig, bytes: u64) -> MonacoSender {
        MonacoSender {
            budget: Some(bytes),
            ..MonacoSender::new(flow, cfg)
        }
    }

    /// Whether a finite transfer has sent all its data and had it confirmed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn srtt(&self) -> Duration {
        self.rtt.srtt().unwrap_or(self.cfg.initial_rtt)
    }

    /// The RTT the pacing spreads a period's window over (003 Algorithm 1 step 8 paces at
    /// cwnd/srtt): the latest sample (pair sent → reverse received), which is also the length of
    /// the period just ended. TCP's srtt takes a sample per ACK, so its 1/8 gain averages over a
    /// fraction of an RTT once the window is eight packets or more; Monaco samples once per
    /// period, and the same gain would average over eight RTTs. That smoothed value lags a
    /// fast-growing queue; pacing a period's window over the shorter srtt then sends it as a
    /// burst early in a longer period, the previous period's data are still queued, and the bytes
    /// in flight reach nearly two windows. acc-fig6 with its 90 KB buffer and all ten flows
    /// starting in the same instant dropped 19 packets in its first 100 ms with srtt, 8 with the
    /// latest sample; set 1 leaving at 30 s cost 6 drops with srtt and none with the latest.
    fn pace_rtt(&self) -> Duration {
        self.rtt.latest().unwrap_or(self.cfg.initial_rtt)
    }

    /// The bytes one control period carries: cwnd, or with `virtual_rtt`
    /// cwnd·srtt/(srtt + Σ t_AVD).
    fn period_window(&self) -> f64 {
        let rtt = self.srtt().as_secs_f64();
        let vd = self.avd_delay.as_secs_f64();
        if self.cfg.virtual_rtt && rtt > 0.0 {
            self.cwnd * rtt / (rtt + vd)
        } else {
            self.cwnd
        }
    }

    /// Time between data packets: the pacing rate is (cwnd + one packet)/RTT (`pace_rtt`). The extra
    /// packet of pacing is the slack that lets the window, not the pacing, end each period's
    /// sending (see `window_full`); as a fixed packet rather than a fraction of the window it
    /// costs large windows nothing (a 25% headroom idled a 100 Mb/s link whose a* is 3 packets).
    ///
    /// In the low-rate regime the window is one packet and the rate is `pace_share` of one packet
    /// per RTT (003 §V-A), so a packet leaves every RTT/`pace_share`.
    fn data_interval(&self) -> Duration {
        let size = self.cfg.packet_size as f64;
        let per_packet = if self.pace_share < 1.0 {
            self.pace_rtt().as_secs_f64() / self.pace_share
        } else {
            self.pace_rtt().as_secs_f64() * size / (self.period_window() + size)
        };
        Duration::from_secs_f64(per_packet).max(Duration(1))
    }

    /// Whether the next data packet would take this control period's bytes past its allowance.
    /// This per-period cap is what clocks the sender: the period is one RTT, so the rate follows
    /// cwnd/RTT as a window-clocked sender's would. Pacing alone (rate cwnd/srtt, the queue
    /// integrating the mismatch) made the loop oscillate.
    fn window_full(&self) -> bool {
        (self.bytes_since_ib + self.cfg.packet_size as u64) as f64 > self.allowance
    }

    /// When the next data packet may leave, if the window allows one this period.
    fn next_data(&self) -> Option<Time> {
        (self.running && !self.window_full() && self.budget != Some(0))
            .then_some(self.pacer.release_time())
    }

    /// Queues the next OB/IB pair.
    fn send_pair(&mut self, now: Time) {
        self.ctrl_seq += 1;
        let mut ob = Packet::new(self.flow, PacketKind::ControlOb, self.cfg.control_size);
        ob.seq = self.ctrl_seq;
        ob.sent_at = now;
        let mut ib = Packet::new(self.flow, PacketKind::ControlIb, self.cfg.control_size);
        ib.seq = self.ctrl_seq;
        ib.sent_at = now;
        let sent = std::mem::take(&mut self.bytes_since_ib);
        let size = self.cfg.packet_size as f64;
        let carry = (self.allowance - sent as f64).clamp(0.0, size);
        self.allowance = self.period_window() + carry;
        ib.ack = sent;
        if self.budget == Some(0) && self.final_pair.is_none() {
            self.final_pair = Some(self.ctrl_seq);
        }
        self.ctrl_queue.extend([ob, ib]);
        self.outstanding = Some((self.ctrl_seq, now));
        self.ctrl_deadline = Some(now + self.rtt.rto());
        self.place_idle_time(now);
    }

    /// The window allows ⌊cwnd⌋ packets per period, which the pacing spreads over less than the
    /// period; the rest of the period is idle. Where that idle time falls matters: at the end it
    /// sits right before the next IB, and flows in lockstep would all pause together just as
    /// their IBs sample the queue, biasing â low. So each period starts with a random part of
    /// its idle time (uniform, from the flow's own stream) and ends with the rest.
    fn place_idle_time(&mut self, now: Time) {
        let size = self.cfg.packet_size as f64;
        let packets = (self.allowance / size).floor().max(1.0);
        let busy = self.data_interval().as_secs_f64() * packets;
        let idle = (self.pace_rtt().as_secs_f64() - busy).max(0.0);
        let u: f64 = self.cfg.rng.random();
        self.pacer.hold(now, Duration::from_secs_f64(u * idle));
    }

    fn on_reverse(&mut self, now: Time, pkt: &Packet) {
        let Some((seq, sent)) = self.outstanding else {
            return;
        };
        if pkt.seq != seq {
            return; // a late answer to a pair already given up on
        }
        let sample = now - sent;
        self.rtt.on_sample(sample);
        self.stats.rtt_sum += sample;
        self.stats.rtt_samples += 1;
        let accumulation = pkt.value.max(0.0);
        self.accumulation = Some(accumulation);
        self.avd_delay = Duration(pkt.echo.0);
        let sent = self.bytes_since_ib as f64;
        if pkt.ack == FLAG_LOSS {
            self.cwnd = (self.cwnd / 2.0).max(self.cfg.packet_size as f64);
            self.stats.detected_losses += 1;
        } else {
            let rtt = self.srtt();
            let fb = Feedback {
                accumulation,
                target: self.cfg.target,
                rtt,
                rtt_p: sample - pkt.virtual_delay,
                mss: self.cfg.packet_size as f64,
                sent,
                allowed: self.allowance,
            };
            let at_floor = self.cwnd <= fb.mss;
            let step = acc::apply(
                self.cfg.policy.as_mut(),
                self.cwnd,
                &fb,
                self.cfg.increase_cap,
            );
            self.cwnd = step.window;
            // 003 §V-A: a one-packet window told to shrink halves its pacing rate instead;
            // positive feedback restores one packet per RTT at once.
            match (step.decrease, at_floor) {
                (true, true) => self.pace_share = (self.pace_share / 2.0).max(MIN_PACE_SHARE),
                (true, false) => {}
                (false, _) => {
                    if self.pace_share < 1.0 {
                        self.pacer.release_by(now);
                    }
                    self.pace_share = 1.0;
                }
            }
        }
        self.outstanding = None;
        if self.final_pair.is_some_and(|f| seq >= f) {
            self.finished = true;
            self.running = false;
        }
        if self.running {
            self.send_pair(now);
        } else {
            self.ctrl_deadline = None;
        }
    }

    /// The current window, bytes.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The low-rate regime's share of one packet per RTT (1 when not in it).
    pub fn pace_share(&self) -> f64 {
        self.pace_share
    }
}

impl Endpoint for MonacoSender {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.kind == PacketKind::ControlReverse {
            self.on_reverse(now, pkt);
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.ctrl_deadline.is_some_and(|d| d <= now) {
            // The pair or its answer was lost: back off and try a new pair.
            self.rtt.on_timeout();
            self.stats.timeouts += 1;
            if self.running {
                self.send_pair(now);
            } else {
                self.ctrl_deadline = None;
            }
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(p) = self.ctrl_queue.pop_front() {
            self.stats.sent_packets += 1;
            self.stats.sent_bytes += p.size as u64;
            return Some(p);
        }
        if self.next_data().is_none_or(|t| t > now) {
            return None;
        }
        let mut p = Packet::new(self.flow, PacketKind::Data, self.cfg.packet_size);
        p.seq = self.data_seq;
        p.sent_at = now;
        self.data_seq += 1;
        self.bytes_since_ib += p.size as u64;
        if let Some(b) = &mut self.budget {
            *b = b.saturating_sub(p.size as u64);
        }
        // Leaky bucket with a one-packet burst: after an idle spell one packet goes at once.
        self.pacer.on_sent(now, self.data_interval());
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += p.size as u64;
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.next_data(), self.ctrl_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_start(&mut self, now: Time) {
        self.running = true;
        self.pacer = Pacer::starting_at(now);
        self.send_pair(now);
    }

    fn handle_stop(&mut self, _now: Time) {
        self.running = false;
        self.ctrl_queue.clear();
        self.ctrl_deadline = None;
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            cwnd_bytes: Some(self.cwnd as u64),
            srtt: self.rtt.srtt(),
            accumulation_bytes: self.accumulation,
            base_rtt: self.rtt.min_rtt(),
            ..self.stats
        }
    }
}

/// How the receiver turns a control period into an accumulation estimate
/// (`estimator = "rate" | "count"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
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
        let lost = consecutive && self.bytes_since_ib < ib.ack;
        let ob = self.ob.filter(|(s, _)| *s == ib.seq);
        let x = self.rate.unwrap_or(0.0);
        if let Some((_, t_ob)) = ob {
            let ftt_q = now - t_ob; // ≥ 0 by construction
            let avd = ib.virtual_delay.as_secs_f64();
            let estimate = match (self.estimator, self.rate) {
                (Estimator::Rate, Some(x)) => x * (ftt_q.as_secs_f64() + avd),
                // Before the first egress-rate sample (the first pair), Little's law by count.
                _ => self.bytes_since_ob as f64 + x * avd,
            };
            self.stats.accumulation_bytes = Some(estimate);
            let mut rev = Packet::new(self.flow, PacketKind::ControlReverse, self.control_size);
            rev.seq = ib.seq;
            rev.value = estimate;
            rev.virtual_delay = ftt_q;
            rev.echo = Time(ib.virtual_delay.0);
            rev.ack = if lost {
                FLAG_LOSS
            } else if estimate > self.target {
                FLAG_DECREASE
            } else {
                FLAG_INCREASE
            };
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
        self.pending.pop(now, &mut self.stats)
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// `monaco` parameters (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MonacoParams {
    pub policy: AccPolicyName,
    /// Policy gain: κ of ACC-P and ACC-MW (default 0.5); the step in packets of ACC-AIAD
    /// (default 1).
    pub kappa: Option<f64>,
    /// Target accumulation a*.
    pub target: Bytes,
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
    /// see `MonacoConfig::virtual_rtt`).
    pub virtual_rtt: bool,
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
        }
    }
}

impl MonacoParams {
    /// The sender's settings: the policy these parameters name, with its own random stream.
    pub(crate) fn sender_config(&self, ctx: &FlowContext, rng: crate::rng::Rng) -> MonacoConfig {
        let kappa = self.kappa();
        let policy: Box<dyn AccPolicy> = match self.policy {
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
        };
        MonacoConfig {
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

impl SchemeParams for MonacoParams {
    fn validate(&self) -> Result<(), ParamError> {
        positive("kappa", self.kappa())?;
        positive("weight", self.weight)?;
        if self.initial_rtt.0 == 0 {
            return Err(ParamError::at("initial_rtt", "must be positive"));
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
        (
            Box::new(MonacoSender::new(ctx.flow, cfg)),
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccPolicyName {
    AccP,
    AccAiad,
    AccMw,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::acc::p::AccP;

    fn sender() -> MonacoSender {
        MonacoSender::new(
            FlowId(0),
            MonacoConfig {
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
            let mut rev = Packet::new(FlowId(0), PacketKind::ControlReverse, 40);
            rev.seq = seq.seq;
            s.handle_packet(now, &rev);
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
        let mut rev = Packet::new(FlowId(0), PacketKind::ControlReverse, 40);
        rev.seq = 1;
        rev.value = 0.0;
        s.handle_packet(ms(110), &rev);
        let out = drain(&mut s, ms(110));
        let ib = out
            .iter()
            .find(|p| p.kind == PacketKind::ControlIb)
            .unwrap();
        assert_eq!((ib.seq, ib.ack), (2, 2000));
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
        ib.virtual_delay = Duration::from_millis(110);
        r.handle_packet(ms(11), &ib);
        let rev = r.poll_transmit(ms(11)).unwrap();
        assert_eq!(rev.echo, Time(Duration::from_millis(110).0));

        for (virtual_rtt, carried) in [(false, 3500.0), (true, 1750.0)] {
            let mut s = sender();
            s.cfg.virtual_rtt = virtual_rtt;
            s.handle_start(ms(0));
            run_until(&mut s, ms(100));
            let mut answer = rev;
            answer.value = 0.0;
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
        let mut rev = Packet::new(FlowId(0), PacketKind::ControlReverse, 40);
        rev.seq = 1;
        rev.ack = FLAG_LOSS;
        s.handle_packet(ms(10), &rev);
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
        rev.seq = 2;
        rev.ack = FLAG_INCREASE;
        s.handle_packet(deadline + Duration::from_millis(1), &rev);
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
        ib.ack = sent;
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
        let rev = last.unwrap();
        assert!((rev.value - 4000.0).abs() < 1e-6, "{}", rev.value);
        assert_eq!(rev.ack, FLAG_DECREASE);
        assert_eq!(rev.virtual_delay, Duration::from_millis(4));
    }

    #[test]
    fn receiver_flags_loss_from_the_byte_count() {
        let mut r = MonacoReceiver::new(FlowId(0), 40, 3000.0, Estimator::Count);
        period(&mut r, 1, ms(0), 5, ms(1), 5000);
        let rev = period(&mut r, 2, ms(10), 4, ms(11), 5000);
        assert_eq!(rev.ack, FLAG_LOSS);
        assert_eq!(
            rev.value, 4000.0,
            "count estimator: bytes between OB and IB"
        );
        // After a control-sequence gap the counts are not compared.
        let rev = period(&mut r, 4, ms(30), 4, ms(31), 9000);
        assert_ne!(rev.ack, FLAG_LOSS);
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
