//! Monaco's ingress side (000 §IV-B, 003 Algorithm 1): the paced, per-period-capped window,
//! the OB/IB pairs, their timer, and the ACC policy's step on each answer. See mod.rs for the
//! design and its departures.

use std::collections::VecDeque;

use rand::RngExt;

use super::control::{InBand, Signal};
use crate::cc::acc::{self, AccPolicy, Feedback};
use crate::packet::{FlowId, Packet, PacketKind, Payload};
use crate::rng::Rng;
use crate::rtt::RttEstimator;
use crate::transport::pacer::Pacer;
use crate::transport::{Endpoint, EndpointStats};
use crate::units::{Duration, Time};

/// Settings of a Monaco sender.
pub struct MonacoSettings {
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
    pub(super) cfg: MonacoSettings,
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
    pub(super) ctrl_deadline: Option<Time>,
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
    pub fn new(flow: FlowId, cfg: MonacoSettings) -> MonacoSender {
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
    pub fn transfer(flow: FlowId, cfg: MonacoSettings, bytes: u64) -> MonacoSender {
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
    pub(super) fn period_window(&self) -> f64 {
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
        ib.payload = Payload::InBand(InBand {
            sent_bytes: sent,
            virtual_delay: Duration::ZERO,
        });
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
        let Payload::Reverse(rev) = pkt.payload else {
            return;
        };
        if pkt.seq != seq {
            return; // a late answer to a pair already given up on
        }
        let sample = now - sent;
        self.rtt.on_sample(sample);
        self.stats.rtt_sum += sample;
        self.stats.rtt_samples += 1;
        let accumulation = rev.accumulation.max(0.0);
        self.accumulation = Some(accumulation);
        self.avd_delay = rev.virtual_delay;
        let sent = self.bytes_since_ib as f64;
        if rev.signal == Signal::Loss {
            self.cwnd = (self.cwnd / 2.0).max(self.cfg.packet_size as f64);
            self.stats.detected_losses += 1;
        } else {
            let rtt = self.srtt();
            let fb = Feedback {
                accumulation,
                target: self.cfg.target,
                rtt,
                rtt_p: sample - rev.ftt_q,
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
            self.stats.completed_at.get_or_insert(now);
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
