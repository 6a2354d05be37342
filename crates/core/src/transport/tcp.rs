//! A TCP-like reliable transport: NewReno loss recovery around a pluggable congestion controller.
//!
//! Sender (RFC 5681, RFC 6582, RFC 6298): cumulative ACKs, fast retransmit on the third duplicate
//! ACK (which restarts the retransmission timer, as ns-2 and Linux do), NewReno fast recovery
//! with partial ACKs (each partial ACK retransmits the next hole; only
//! the first one re-arms the timer — the "Impatient" variant RFC 6582 §3.2 step 5 specifies, so a
//! window with many losses ends in a timeout instead of one RTT per hole), the RFC 6298
//! retransmission timer with exponential backoff, and go-back-N after a timeout. The congestion window itself
//! belongs to the [`CongestionController`]; this file only adds the temporary window inflation
//! of fast recovery (RFC 6582 §3.2 steps 3–5).
//!
//! Receiver: in-order delivery with an out-of-order buffer, one cumulative ACK per data packet
//! (delayed ACK off, SPEC §5; optionally one per two segments), echoing the data packet's
//! timestamp and its ECN mark: every ACK's ECE says whether the segments it acknowledges were
//! CE-marked (DCTCP's receiver, RFC 8257 §3.2, which an RFC 3168 sender reads as well).
//!
//! Departures, all deliberate:
//! - Sequence numbers count segments, not bytes; every segment is `packet_size` bytes on the wire
//!   (headers included, SPEC §2) except possibly the last of a finite transfer.
//! - No window scaling; the receive window is a fixed buffer whose application reads at once
//!   (`receive_window`, off by default: then the receiver buffers everything): the sender keeps
//!   new data below SND.UNA + the buffer (RFC 9293 §3.8.6.2.1), and ACKs do not carry it.
//!   (SACK is an option: crates/core/src/transport/sack.rs.)
//! - Fast retransmit is suppressed while the cumulative ACK is below the `recover` point of the
//!   previous recovery or timeout (RFC 6582 §3.2 step 1, the "careful" variant, using
//!   ACK ≥ recover + 1 so that a loss of the first segment after a recovery is still repaired
//!   without a timeout).
//! - ECN: with `ecn` on, data are sent ECN-capable and an echo reduces the window at most once per
//!   window of data (RFC 3168 §6.1.2); the receiver echoes every marked packet.
//! - Send overhead (`send_overhead`, off by default): ns-2's `overhead_` (tcp.cc `send_much`),
//!   the random processing time Floyd and Jacobson (1992) add at the sources to break the phase
//!   effects of a deterministic simulation. Each segment the window lets out waits a delay drawn
//!   uniformly from [0, overhead] after it could have left, one segment at a time; repairs
//!   (fast retransmit, partial ACKs, SACK's NextSeg) leave at once, as ns-2's do.

use crate::cc::{AckSample, Congestion, CongestionController, CongestionEvent, SentSample};
use crate::packet::{Ecn, FlowId, Packet, PacketKind, Payload, Sack};
use crate::params::FlowContext;
use crate::rng::Rng;
use crate::rtt::RttEstimator;
use crate::transport::pacer::Pacer;
use crate::transport::rate_sample::RateSampler;
use crate::transport::sack::{RangeSet, Scoreboard};
use crate::transport::{Endpoint, EndpointStats, Outbox};
use crate::units::Bytes;
use crate::units::{Duration, Time};
use rand::RngExt;
use std::collections::VecDeque;

/// Settings of a TCP sender.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Size of a full data packet on the wire.
    pub packet_size: u32,
    /// Bytes to transfer; `None` for a bulk (infinite) source.
    pub transfer_bytes: Option<u64>,
    /// Initial congestion window in segments (used by the controller's constructor).
    pub initial_window: u64,
    pub min_rto: Duration,
    pub initial_rto: Duration,
    /// Send ECN-capable packets and react to echoes.
    pub ecn: bool,
    /// Connection number stamped on every packet (for multiplexing sources).
    pub conn: u32,
    /// SACK-based loss recovery (RFC 6675) instead of NewReno's.
    pub sack: bool,
    /// The receiver's buffer in segments (its receive window); `None`: unbounded.
    pub receive_window: Option<u64>,
}

/// ns-2's random send overhead: the next segment, which could have left at `ready`, waits
/// until `release`.
struct SendOverhead {
    max: Duration,
    rng: Rng,
    held: Option<(Time, Time)>,
}

impl SendOverhead {
    /// When the held segment leaves, if it is held.
    fn release(&self) -> Option<Time> {
        self.held.map(|(_, release)| release)
    }

    /// A segment could leave at `now`: draws its delay the first time it is asked and holds it
    /// until the delay has passed; then lets it go, answering when it could first have left.
    fn lets_go(&mut self, now: Time) -> Option<Time> {
        let (ready, release) = *self.held.get_or_insert_with(|| {
            let delay = Duration(self.rng.random_range(0..=self.max.0));
            (now, now + delay)
        });
        if release > now {
            return None;
        }
        self.held = None;
        Some(ready)
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            packet_size: 1000,
            transfer_bytes: None,
            initial_window: 2,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            ecn: false,
            conn: 0,
            sack: false,
            receive_window: None,
        }
    }
}

/// The sending side: segments, retransmission and the RTO, over a congestion controller `C`,
/// held by value: a scheme builds its sender over its own controller type, so that an ACK
/// finds the controller in the sender's memory rather than behind a pointer (at 10,000 flows
/// that pointer's target was a cache miss per ACK the rest waited for). Where the kind is
/// chosen at run time (on-off and web sources) it is boxed, the default.
pub struct TcpSender<C = Box<dyn CongestionController>> {
    flow: FlowId,
    cfg: TcpConfig,
    cc: C,
    rtt: RttEstimator,
    /// Oldest unacknowledged segment.
    snd_una: u64,
    /// Next segment to send (goes back to `snd_una` after a timeout).
    snd_nxt: u64,
    /// One past the highest segment ever sent.
    snd_max: u64,
    /// Segments the application allows: 0 before start, the transfer's length or unbounded.
    app_limit: u64,
    total_segments: Option<u64>,
    dupacks: u32,
    /// In fast recovery until the cumulative ACK reaches this segment (RFC 6582 `recover` + 1).
    recovery_end: Option<u64>,
    /// A partial ACK of the current recovery has already re-armed the timer.
    partial_ack_seen: bool,
    /// Fast retransmit is allowed only once the cumulative ACK reaches this point.
    recover: u64,
    /// Window inflation during fast recovery, bytes (RFC 6582 §3.2).
    inflation: i64,
    /// A segment to retransmit at the next `poll_transmit`, regardless of the window.
    retransmit: Option<u64>,
    /// With SACK: what the receiver holds above `snd_una` (RFC 6675's scoreboard), and the
    /// highest segment retransmitted in the current recovery (`HighRxt`).
    /// (Boxed: a sender without SACK pays one word, which matters with thousands of flows.)
    scoreboard: Option<Box<Scoreboard>>,
    high_rxt: Option<u64>,
    /// The current loss episode was detected in congestion avoidance (for statistics).
    loss_in_avoidance: bool,
    /// No ECN reaction until the cumulative ACK passes this segment.
    ecn_recover: u64,
    rto_deadline: Option<Time>,
    /// Delivery-rate sampling, kept only for a controller that wants samples (boxed: one
    /// word for the others).
    rates: Option<Box<RateSampler>>,
    /// Spaces segments when the controller gives a pacing rate; `paced` caches whether it
    /// does (a pacing controller gives a rate from its creation on), so that window-only
    /// controllers cost no query per packet.
    pacer: Pacer,
    paced: bool,
    /// ns-2's send overhead, if on (boxed: one word when off).
    overhead: Option<Box<SendOverhead>>,
    counts: SenderCounts,
}

/// What a sender counts for its [`EndpointStats`]: the counters alone (its window, RTT and
/// estimates are read off the controller and the estimator when asked), so that the sender,
/// touched by every ACK, spans fewer cache lines.
#[derive(Clone, Copy, Debug, Default)]
struct SenderCounts {
    sent_bytes: u64,
    sent_packets: u64,
    retransmits: u64,
    retransmits_in_avoidance: u64,
    timeouts: u64,
    detected_losses: u64,
    rtt_sum: Duration,
    rtt_samples: u64,
    completed_at: Option<Time>,
}

impl<C: CongestionController> TcpSender<C> {
    pub fn new(flow: FlowId, cfg: TcpConfig, cc: C) -> TcpSender<C> {
        let total_segments = cfg
            .transfer_bytes
            .map(|b| b.div_ceil(cfg.packet_size as u64).max(1));
        TcpSender {
            flow,
            rtt: RttEstimator::new(cfg.min_rto, cfg.initial_rto),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: 0,
            total_segments,
            dupacks: 0,
            recovery_end: None,
            partial_ack_seen: false,
            recover: 0,
            inflation: 0,
            retransmit: None,
            scoreboard: cfg.sack.then(Box::default),
            high_rxt: None,
            ecn_recover: 0,
            loss_in_avoidance: false,
            rto_deadline: None,
            rates: cc_rates(&cc),
            pacer: Pacer::default(),
            paced: cc.pacing_rate().is_some(),
            overhead: None,
            cc,
            counts: SenderCounts::default(),
            cfg,
        }
    }

    /// Delays every segment the window lets out by a uniform draw from [0, `max`] from `rng`
    /// (ns-2's `overhead_`; see the header).
    pub fn with_send_overhead(mut self, max: Duration, rng: Rng) -> TcpSender<C> {
        self.overhead = Some(Box::new(SendOverhead {
            max,
            rng,
            held: None,
        }));
        self
    }

    fn mss(&self) -> u64 {
        self.cfg.packet_size as u64
    }

    /// Wire size of segment `seq` (the last one of a finite transfer may be short).
    fn segment_size(&self, seq: u64) -> u32 {
        match (self.total_segments, self.cfg.transfer_bytes) {
            (Some(n), Some(bytes)) if seq + 1 == n => (bytes - (n - 1) * self.mss()).max(1) as u32,
            _ => self.cfg.packet_size,
        }
    }

    fn in_flight(&self) -> u64 {
        (self.snd_nxt - self.snd_una) * self.mss()
    }

    /// What the window is held against: FlightSize, or in a SACK recovery RFC 6675's `pipe`
    /// (segments neither SACKed nor lost, plus those retransmitted).
    fn outstanding(&self) -> u64 {
        match (&self.scoreboard, self.recovery_end) {
            (Some(sb), Some(_)) => sb.pipe(self.snd_una, self.snd_max, self.high_rxt) * self.mss(),
            _ => self.in_flight(),
        }
    }

    /// The first segment the receiver has no room for: SND.UNA + its buffer (its application
    /// reads in-order data at once, so the window it advertises is its whole buffer past the
    /// cumulative ACK; both ends know the size, so ACKs do not carry it).
    fn receive_edge(&self) -> u64 {
        self.cfg
            .receive_window
            .map_or(u64::MAX, |w| self.snd_una.saturating_add(w))
    }

    /// Whether loss recovery is SACK-based and under way.
    fn sack_recovery(&self) -> bool {
        self.scoreboard.is_some() && self.recovery_end.is_some()
    }

    /// The usable window: the controller's window plus fast-recovery inflation, at least one
    /// segment.
    fn window(&self) -> u64 {
        (self.cc.window() as i64 + self.inflation).max(self.mss() as i64) as u64
    }

    /// Segment `seq` leaves at `now`, with `in_flight` bytes already in flight.
    fn data_packet(&mut self, now: Time, seq: u64, in_flight: u64) -> Packet {
        self.data_packet_paced_from(now, now, seq, in_flight)
    }

    /// Segment `seq` leaves at `now`; the pacer spaces the next one from `ready` (when this one
    /// could have left, before a send overhead held it).
    fn data_packet_paced_from(
        &mut self,
        now: Time,
        ready: Time,
        seq: u64,
        in_flight: u64,
    ) -> Packet {
        let mut p = Packet::new(self.flow, PacketKind::Data, self.segment_size(seq));
        p.conn = self.cfg.conn;
        p.seq = seq;
        p.sent_at = now;
        if self.cfg.ecn {
            p.ecn = Ecn::ECT;
        }
        self.counts.sent_packets += 1;
        self.counts.sent_bytes += p.size as u64;
        let retransmission = seq < self.snd_max;
        if retransmission && self.recovery_end.is_some() {
            self.high_rxt = Some(self.high_rxt.map_or(seq, |h| h.max(seq)));
            if let Some(sb) = &mut self.scoreboard {
                sb.on_retransmit(seq, self.snd_max);
            }
        }
        if retransmission {
            self.counts.retransmits += 1;
            self.counts.retransmits_in_avoidance += u64::from(self.loss_in_avoidance);
        }
        let sent = SentSample {
            seq,
            bytes: p.size as u64,
            in_flight,
            retransmission,
        };
        self.cc.on_sent(now, &sent);
        if let Some(r) = &mut self.rates {
            r.on_sent(now, seq, in_flight);
        }
        if let Some(rate) = self.paced.then(|| self.cc.pacing_rate()).flatten() {
            self.pacer.on_sent_at_rate(ready, sent.bytes, rate);
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        p
    }

    /// An ACK `ack` of new data: everything below segment `next`; `echo` is its timestamp.
    fn on_new_ack(&mut self, now: Time, ack: &Packet, next: u64, echo: Time) {
        let acked = next - self.snd_una;
        let acked_bytes = acked * self.mss();
        let rtt = Some(now - echo);
        if let Some(r) = rtt {
            self.rtt.on_sample(r);
            self.counts.rtt_sum += r;
            self.counts.rtt_samples += 1;
        }
        let in_flight = self.outstanding();
        let early = self.scoreboard.as_ref().map(|sb| {
            sb.sacked_in(self.snd_una, next) * self.mss() // SACKed before, delivered then
        });
        let rate = self
            .rates
            .as_mut()
            .and_then(|r| r.on_ack(now, self.snd_una, next, acked_bytes, rtt, early));
        let mut in_recovery = false;
        let mut rearm = true;
        if let Some(end) = self.recovery_end {
            // Neither partial ACKs nor the one that ends recovery grow the window.
            in_recovery = true;
            if next >= end {
                // Full acknowledgement: leave fast recovery (RFC 6582 §3.2 step 6, RFC 6675
                // §5 step (B)... "the loss recovery phase ends").
                self.recovery_end = None;
                self.inflation = 0;
                self.high_rxt = None;
                if let Some(sb) = &mut self.scoreboard {
                    sb.end_recovery();
                }
                self.cc.on_recovery_end(now);
            } else if self.scoreboard.is_some() {
                // RFC 6675 §5 (C): a partial ACK; `poll_transmit` sends what `pipe` allows
                // (NextSeg), and the timer restarts as for any new data (RFC 6298 §5.3).
            } else {
                // Partial acknowledgement: retransmit the next hole, deflate (step 5).
                rearm = !self.partial_ack_seen;
                self.partial_ack_seen = true;
                self.retransmit = Some(next);
                self.inflation -= acked_bytes as i64;
                if acked_bytes >= self.mss() {
                    self.inflation += self.mss() as i64;
                }
            }
        }
        self.snd_una = next;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        self.dupacks = 0;
        if let Some(sb) = &mut self.scoreboard {
            sb.on_cumulative(next);
        }
        self.cc.on_ack(
            now,
            &AckSample {
                acked_bytes,
                rtt,
                in_flight,
                in_recovery,
                highest_sent: self.snd_max,
                cumulative_ack: next,
                ecn_echo: ack.ecn.is_echo(),
                rate,
            },
        );
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if rearm {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if self.total_segments == Some(self.snd_una) && self.counts.completed_at.is_none() {
            self.counts.completed_at = Some(now);
        }
    }

    fn on_duplicate_ack(&mut self, now: Time, next: u64) {
        self.dupacks += 1;
        let mss = self.mss();
        // Without SACK a duplicate ACK is a segment delivered (at most one per segment
        // outstanding, as Linux's `tcp_limit_reno_sacked`); with SACK the blocks say.
        let outstanding = self.snd_max - self.snd_una;
        if let (Some(r), None) = (&mut self.rates, &self.scoreboard) {
            if u64::from(self.dupacks) <= outstanding {
                r.on_early_delivery(now, mss);
            }
        }
        // RFC 6675 §5: with SACK, recovery also starts once the first hole is lost by the
        // SACK rule (IsLost(HighACK + 1)), whatever the count of duplicates.
        let lost = self
            .scoreboard
            .as_ref()
            .is_some_and(|sb| sb.is_lost(self.snd_una));
        if self.recovery_end.is_some() {
            if self.scoreboard.is_none() {
                self.inflation += self.mss() as i64; // RFC 6582 §3.2 step 4
            }
        } else if (self.dupacks == 3 || lost) && next >= self.recover {
            // Fast retransmit (RFC 6582 §3.2 step 2, RFC 6675 §5 step (4)).
            let in_flight = self.in_flight();
            let pipe = match &self.scoreboard {
                Some(sb) => sb.pipe(self.snd_una, self.snd_max, None) * self.mss(),
                // The three duplicates' segments have left the network.
                None => in_flight.saturating_sub(3 * self.mss()),
            };
            self.loss_in_avoidance = !self.cc.in_slow_start();
            self.recovery_end = Some(self.snd_max);
            self.partial_ack_seen = false;
            self.recover = self.snd_max;
            self.high_rxt = None;
            self.cc.on_congestion_event(
                now,
                &CongestionEvent {
                    kind: Congestion::Loss,
                    in_flight,
                    pipe,
                },
            );
            if self.scoreboard.is_none() {
                self.inflation = 3 * self.mss() as i64;
            }
            self.retransmit = Some(self.snd_una);
            // Restart the retransmission timer with the repair, as ns-2 (`reset_rtx_timer`
            // in dupack_action) and Linux (the head's retransmission rearms the RTO) do:
            // with a steady RTT the RTO is close to the RTT, and a timer left running from
            // the lost segment's first transmission fires just before the repair's ACK.
            self.rto_deadline = Some(now + self.rtt.rto());
            self.counts.detected_losses += 1;
        }
    }

    /// Tells the controller of an ECN echo or a timeout (losses tell it with their pipe).
    fn congestion(&mut self, now: Time, kind: Congestion, in_flight: u64) {
        self.cc
            .on_congestion_event(now, &CongestionEvent::new(kind, in_flight));
    }

    /// Whether the pacer holds new data back at `now`.
    fn paced_out(&self, now: Time) -> bool {
        self.paced && !self.pacer.ready(now)
    }

    fn on_ecn_echo(&mut self, now: Time) {
        if self.recovery_end.is_none() && self.snd_una >= self.ecn_recover {
            self.congestion(now, Congestion::Ecn, self.in_flight());
            self.ecn_recover = self.snd_max;
        }
    }
}

impl<C: CongestionController> TcpSender<C> {
    /// Whether everything the application handed over has been acknowledged.
    pub fn is_idle(&self) -> bool {
        self.snd_una == self.snd_max && self.snd_max >= self.app_limit
    }

    /// Starts a new transfer of `bytes` (rounded up to whole segments) as a fresh connection
    /// would: a new congestion controller and RTT estimator, slow start again. Sequence numbers
    /// continue where the last transfer ended, so one receiver serves every transfer. Meant for
    /// an idle sender (see [`TcpSender::is_idle`]); data still outstanding is kept.
    pub fn start_transfer(&mut self, bytes: u64, cc: C) {
        self.rates = cc_rates(&cc);
        self.paced = cc.pacing_rate().is_some();
        self.cc = cc;
        self.rtt = RttEstimator::new(self.cfg.min_rto, self.cfg.initial_rto);
        self.dupacks = 0;
        self.recovery_end = None;
        self.inflation = 0;
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.total_segments = None;
        self.cfg.transfer_bytes = None;
        self.app_limit = self.snd_max + bytes.div_ceil(self.mss()).max(1);
    }
}

impl<C: CongestionController> Endpoint for TcpSender<C> {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let Some((next, echo)) = pkt.ack_info() else {
            return;
        };
        if let Some(sb) = &mut self.scoreboard {
            if let Some((start, end)) = pkt.sack_block() {
                let newly = sb.on_block(start, end.min(self.snd_max), self.snd_una.max(next));
                if let (Some(r), true) = (&mut self.rates, newly > 0) {
                    r.on_early_delivery(now, newly * self.cfg.packet_size as u64);
                }
            }
        }
        if next > self.snd_una && next <= self.snd_max {
            self.on_new_ack(now, pkt, next, echo);
        } else if next == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, next);
        }
        if self.cfg.ecn && pkt.ecn.is_echo() {
            self.on_ecn_echo(now);
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        // RFC 6298 §5.4–5.6 and RFC 5681 §3.1: back off, collapse the window, go back N.
        let in_flight = (self.snd_max - self.snd_una) * self.mss();
        self.loss_in_avoidance = !self.cc.in_slow_start();
        self.congestion(now, Congestion::Timeout, in_flight);
        self.rtt.on_timeout();
        self.recovery_end = None;
        self.inflation = 0;
        self.dupacks = 0;
        self.retransmit = None;
        self.high_rxt = None;
        if let Some(sb) = &mut self.scoreboard {
            sb.end_recovery();
        }
        self.recover = self.snd_max;
        self.snd_nxt = self.snd_una;
        self.counts.timeouts += 1;
        self.counts.detected_losses += 1;
        self.rto_deadline = None; // re-armed by the retransmission below
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(seq) = self.retransmit.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                // Repairs go at once; the pacer counts them against what follows.
                return Some(self.data_packet(now, seq, self.in_flight()));
            }
        }
        // New data up to the application's limit; after a timeout, old segments below snd_max.
        let limit = self.app_limit.max(self.snd_max);
        let in_flight = self.outstanding();
        if in_flight + self.mss() > self.window() {
            return None;
        }
        if self.sack_recovery() {
            // RFC 6675 §4 NextSeg rule (1): the lowest lost segment not yet resent, at once.
            let sb = self.scoreboard.as_ref().expect("SACK recovery");
            let relost = sb.next_relost();
            if let Some(seq) = relost.or_else(|| sb.next_lost(self.snd_una, self.high_rxt)) {
                return Some(self.data_packet(now, seq, in_flight));
            }
        }
        if let Some(sb) = &self.scoreboard {
            // Going back N after a timeout: what the receiver holds is not resent (as Linux,
            // which keeps SACK information across a timeout; RFC 2018 §8 allows forgetting it
            // for receivers that renege, which acclab's never do).
            while self.snd_nxt < self.snd_max && sb.is_sacked(self.snd_nxt) {
                self.snd_nxt += 1;
            }
        }
        if self.snd_nxt >= self.receive_edge() {
            // RFC 9293 §3.8.6.2.1: nothing beyond SND.UNA + SND.WND (the receiver's buffer holds
            // what arrived out of order until the hole before it fills).
            return None;
        }
        if self.snd_nxt >= limit {
            // Room in the window and nothing to send: the application limits the rate.
            if let Some(r) = &mut self.rates {
                r.on_app_limited(in_flight);
            }
            return None;
        }
        if self.paced_out(now) {
            return None;
        }
        // The overhead delays the segment, not the pacer's schedule: a paced sender's next
        // segment is spaced from when this one could have left, so its rate is kept.
        let ready = match &mut self.overhead {
            Some(o) => o.lets_go(now)?,
            None => now,
        };
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        let p = self.data_packet_paced_from(now, ready, seq, in_flight);
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        // A sender with data and window waits for its pacer and its send overhead too: the
        // later of the two (the overhead is drawn once the pacer lets a segment go).
        let limit = self.app_limit.max(self.snd_max);
        let held = (self.paced || self.overhead.is_some())
            && self.snd_nxt < limit.min(self.receive_edge())
            && self.outstanding() + self.mss() <= self.window();
        let paced = held
            .then(|| {
                let pacer = self.paced.then(|| self.pacer.release_time());
                let overhead = self.overhead.as_ref().and_then(|o| o.release());
                pacer.max(overhead)
            })
            .flatten();
        match (self.rto_deadline, paced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_start(&mut self, _now: Time) {
        self.app_limit = self.total_segments.unwrap_or(u64::MAX);
    }

    fn handle_stop(&mut self, _now: Time) {
        self.app_limit = self.snd_max;
    }

    fn stats(&self) -> EndpointStats {
        let c = self.counts;
        EndpointStats {
            sent_bytes: c.sent_bytes,
            sent_packets: c.sent_packets,
            retransmits: c.retransmits,
            retransmits_in_avoidance: c.retransmits_in_avoidance,
            timeouts: c.timeouts,
            detected_losses: c.detected_losses,
            delivered_bytes: 0,
            cwnd_bytes: Some(self.cc.window()),
            srtt: self.rtt.srtt(),
            rtt_sum: c.rtt_sum,
            rtt_samples: c.rtt_samples,
            accumulation_bytes: self.cc.accumulation(),
            base_rtt: self.cc.base_rtt(),
            completed_at: c.completed_at,
        }
    }
}

/// A rate sampler if controller `cc` wants delivery-rate samples.
fn cc_rates(cc: &impl CongestionController) -> Option<Box<RateSampler>> {
    cc.wants_rate_samples().then(Box::default)
}

/// The receiving side: cumulative ACKs and in-order delivery.
pub struct TcpReceiver {
    flow: FlowId,
    ack_size: u32,
    /// Delayed ACKs: the longest an ACK waits for a second segment (`None`: an ACK per segment).
    delayed_ack: Option<Duration>,
    /// The ACK being delayed: when it must go, the timestamp it will echo (the earliest
    /// unacknowledged segment's, RFC 7323 §4.3) and the connection.
    pending: Option<(Time, Time, u32)>,
    /// The CE state: the last data segment received was CE-marked (RFC 8257 §3.2).
    ce: bool,
    rcv_nxt: u64,
    /// Segments received above `rcv_nxt`, sorted, with their sizes. A deque: the segments a
    /// repair releases leave from the front, and with a window of tens of thousands of
    /// segments (10 Gb/s) shifting a vector's remainder per repair was most of a run.
    out_of_order: VecDeque<(u64, u32)>,
    /// With SACK: the same segments as ranges, for the ACKs' SACK block (RFC 2018).
    sack: Option<Box<RangeSet>>,
    acks: Outbox,
    /// Bytes delivered in order (the only counter a receiver keeps besides its outbox's).
    delivered_bytes: u64,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, ack_size: u32) -> TcpReceiver {
        TcpReceiver::with_delayed_ack(flow, ack_size, None)
    }

    /// A receiver that delays ACKs by up to `delay` (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
    pub fn with_delayed_ack(flow: FlowId, ack_size: u32, delay: Option<Duration>) -> TcpReceiver {
        TcpReceiver::with_options(flow, ack_size, delay, false)
    }

    /// A receiver with delayed ACKs (or not) that reports a SACK block (or not).
    pub fn with_options(
        flow: FlowId,
        ack_size: u32,
        delay: Option<Duration>,
        sack: bool,
    ) -> TcpReceiver {
        TcpReceiver {
            sack: sack.then(Box::default),
            flow,
            ack_size,
            delayed_ack: delay,
            pending: None,
            ce: false,
            rcv_nxt: 0,
            out_of_order: VecDeque::new(),
            acks: Outbox::default(),
            delivered_bytes: 0,
        }
    }

    fn accept(&mut self, seq: u64, size: u32) {
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.delivered_bytes += size as u64;
            // Pull in what was waiting behind the hole.
            while let Some(&(s, sz)) = self.out_of_order.front() {
                if s != self.rcv_nxt {
                    break;
                }
                self.out_of_order.pop_front();
                self.rcv_nxt += 1;
                self.delivered_bytes += sz as u64;
            }
            if let Some(r) = &mut self.sack {
                r.remove_below(self.rcv_nxt);
            }
        } else if seq > self.rcv_nxt {
            // Mostly the next segment above the hole: it goes at the back, without a search.
            let at = match self.out_of_order.back() {
                Some(&(last, _)) if last >= seq => {
                    self.out_of_order.binary_search_by_key(&seq, |e| e.0)
                }
                _ => Err(self.out_of_order.len()),
            };
            if let Err(i) = at {
                // A push, not an insert at the back: VecDeque::insert's general path cost 1%
                // of the instructions of 10 flows on 10 Gb/s.
                if i == self.out_of_order.len() {
                    self.out_of_order.push_back((seq, size));
                } else {
                    self.out_of_order.insert(i, (seq, size));
                }
                if let Some(r) = &mut self.sack {
                    r.insert(seq, seq + 1);
                }
            }
        }
    }
}

impl TcpReceiver {
    /// Acknowledges everything received so far, echoing `echo`; with SACK, the block holding
    /// segment `trigger` (the arrival that caused this ACK, RFC 2018 §4), or else the lowest.
    fn send_ack(&mut self, echo: Time, conn: u32, ecn_echo: bool, trigger: Option<u64>) {
        let mut ack = Packet::ack(self.flow, self.ack_size, self.rcv_nxt, echo);
        if let (Some(r), Payload::Ack { next, sack, .. }) = (&self.sack, &mut ack.payload) {
            let block = trigger.and_then(|t| r.range_of(t)).or_else(|| r.first());
            if let Some((start, end)) = block {
                *sack = Sack::new(*next, start, end);
            }
        }
        ack.conn = conn;
        if ecn_echo {
            ack.ecn.set_echo();
        }
        self.acks.push(ack);
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.kind != PacketKind::Data {
            return;
        }
        let marked = pkt.ecn.is_marked();
        if marked != self.ce {
            // RFC 8257 §3.2: when the CE state changes, the delayed ACK of the segments
            // before goes at once with their state, so that every ACK's ECE tells exactly
            // whether the segments it acknowledges were marked.
            if let Some((_, echo, conn)) = self.pending.take() {
                self.send_ack(echo, conn, self.ce, None);
            }
            self.ce = marked;
        }
        let in_order = pkt.seq == self.rcv_nxt && self.out_of_order.is_empty();
        self.accept(pkt.seq, pkt.size);
        match self.delayed_ack {
            // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: an in-order segment may wait for a second
            // one (at most `delay`); an out-of-order or duplicate segment, or one that fills
            // a hole, is acknowledged at once.
            Some(delay) if in_order && self.pending.is_none() => {
                self.pending = Some((now + delay, pkt.sent_at, pkt.conn));
            }
            _ => {
                let echo = self.pending.take().map_or(pkt.sent_at, |(_, e, _)| e);
                self.send_ack(echo, pkt.conn, marked, Some(pkt.seq));
            }
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if let Some((at, echo, conn)) = self.pending {
            if at <= now {
                self.pending = None;
                self.send_ack(echo, conn, self.ce, None);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.pending.map(|(at, _, _)| at)
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.acks.pop(now)
    }

    fn stats(&self) -> EndpointStats {
        self.acks.sent_in(EndpointStats {
            delivered_bytes: self.delivered_bytes,
            ..EndpointStats::default()
        })
    }
}

/// The transport settings every TCP scheme's parameters carry (`size`, `min_rto`,
/// `initial_window`, `ecn`, `delayed_ack`, `sack`), and the endpoints they build.
#[derive(Clone, Debug)]
pub struct TcpOptions {
    /// Bytes to transfer; `None` = bulk.
    pub size: Option<Bytes>,
    pub min_rto: Duration,
    pub initial_window: u64,
    pub ecn: bool,
    /// Delayed ACKs at the receiver; `None` = an ACK per segment.
    pub delayed_ack: Option<Duration>,
    /// SACK blocks from the receiver and RFC 6675 loss recovery at the sender.
    pub sack: bool,
    /// The receiver's buffer, bytes (its receive window); `None`: unbounded.
    pub receive_window: Option<Bytes>,
    /// ns-2's random send overhead: the largest delay drawn for each segment; `None`: off.
    pub send_overhead: Option<Duration>,
}

/// The largest initial window a scenario may give, segments.
pub const MAX_INITIAL_WINDOW: u64 = 1_000_000;

impl TcpOptions {
    /// Checks the settings a scheme (`scheme`, named in the message) was given.
    pub fn validate(&self, scheme: &str) -> Result<(), crate::params::ParamError> {
        if !(1..=MAX_INITIAL_WINDOW).contains(&self.initial_window) {
            return Err(crate::params::ParamError::at(
                "initial_window",
                format!(
                    "{scheme} `initial_window` must be in [1, {MAX_INITIAL_WINDOW}] segments, not {}",
                    self.initial_window
                ),
            ));
        }
        check_delayed_ack(self.delayed_ack)?;
        check_receive_window(self.receive_window)?;
        check_send_overhead(self.send_overhead)
    }

    /// The sender of one scenario flow over controller `cc`.
    pub fn sender<C: CongestionController>(&self, ctx: &FlowContext, cc: C) -> TcpSender<C> {
        let cfg = TcpConfig {
            packet_size: ctx.packet_size,
            transfer_bytes: self.size.map(|b| b.0),
            initial_window: self.initial_window,
            min_rto: self.min_rto,
            ecn: self.ecn,
            sack: self.sack,
            receive_window: self
                .receive_window
                .map(|b| (b.0 / u64::from(ctx.packet_size.max(1))).max(1)),
            ..TcpConfig::default()
        };
        let tx = TcpSender::new(ctx.flow, cfg, cc);
        match self.send_overhead {
            Some(max) => tx.with_send_overhead(
                max,
                crate::rng::stream(ctx.seed, &format!("flow:{}:overhead", ctx.name)),
            ),
            None => tx,
        }
    }

    /// The receiver of one scenario flow.
    pub fn receiver(&self, ctx: &FlowContext) -> Box<dyn Endpoint> {
        Box::new(TcpReceiver::with_options(
            ctx.flow,
            ctx.ack_size,
            self.delayed_ack,
            self.sack,
        ))
    }

    /// Both endpoints of one scenario flow over controller `cc`.
    pub fn endpoints<C: CongestionController + 'static>(
        &self,
        ctx: &FlowContext,
        cc: C,
    ) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (Box::new(self.sender(ctx, cc)), self.receiver(ctx))
    }
}

/// A receive window must hold at least two segments' worth of bytes.
pub fn check_receive_window(w: Option<Bytes>) -> Result<(), crate::params::ParamError> {
    match w {
        Some(b) if b.0 < 3_000 => Err(crate::params::ParamError::at(
            "receive_window",
            format!(
                "`receive_window` must be at least 3000 bytes (two full segments), not {} bytes",
                b.0
            ),
        )),
        _ => Ok(()),
    }
}

/// Checks a `delayed_ack` parameter: RFC 1122 §4.2.3.2, "the delay MUST be less than 0.5
/// seconds".
pub fn check_delayed_ack(delay: Option<Duration>) -> Result<(), crate::params::ParamError> {
    match delay {
        Some(d) if d.0 == 0 || d >= Duration::from_millis(500) => {
            Err(crate::params::ParamError::at(
                "delayed_ack",
                format!("`delayed_ack` must be above 0 and below 500ms (RFC 1122), not {d}"),
            ))
        }
        _ => Ok(()),
    }
}

/// The largest `send_overhead`: a processing time, not a pause (ns-2 uses a fraction of a
/// packet's transmission time at the bottleneck).
pub const MAX_SEND_OVERHEAD: Duration = Duration::from_millis(100);

/// Checks a `send_overhead` parameter: above 0 and at most [`MAX_SEND_OVERHEAD`].
pub fn check_send_overhead(max: Option<Duration>) -> Result<(), crate::params::ParamError> {
    match max {
        Some(d) if d.0 == 0 || d > MAX_SEND_OVERHEAD => Err(crate::params::ParamError::at(
            "send_overhead",
            format!("`send_overhead` must be above 0 and at most {MAX_SEND_OVERHEAD}, not {d}"),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    const MSS: u64 = 1000;

    fn sender(initial_window: u64) -> TcpSender<Reno> {
        let cfg = TcpConfig {
            initial_window,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, initial_window));
        s.handle_start(Time::ZERO);
        s
    }

    fn drain<C: CongestionController>(s: &mut TcpSender<C>, now: Time) -> Vec<u64> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|p| p.seq)
            .collect()
    }

    fn ack(next: u64, echo: Time) -> Packet {
        Packet::ack(FlowId(0), 40, next, echo)
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// RFC 9293 §3.8.6.2.1: new data only up to SND.UNA + the receiver's buffer, however large
    /// the congestion window; what a loss holds back at the receiver holds back the sender.
    #[test]
    fn the_receive_window_bounds_what_is_sent_past_the_cumulative_ack() {
        let cfg = TcpConfig {
            initial_window: 10,
            receive_window: Some(4),
            sack: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 10));
        s.handle_start(Time::ZERO);
        assert_eq!(drain(&mut s, ms(0)), vec![0, 1, 2, 3]);
        s.handle_packet(ms(10), &ack(2, ms(0)));
        assert_eq!(drain(&mut s, ms(10)), vec![4, 5]);
        // Segment 2 lost: 3, 4 and 5 arrive and are SACKed; the window stays at 2 + 4.
        s.handle_packet(ms(20), &sack_ack(2, 3, 6));
        assert!(drain(&mut s, ms(20)).iter().all(|&q| q < 6));
    }

    /// ns-2's `overhead_`: each segment waits its own uniform draw from [0, overhead] after it
    /// could have left, one at a time; the timer says when; a repair does not wait.
    #[test]
    fn send_overhead_delays_each_segment_by_a_fresh_draw_and_repairs_go_at_once() {
        let max = Duration::from_micros(100);
        let mut s = sender(1000).with_send_overhead(max, crate::rng::stream(7, "t"));
        let mut now = ms(0);
        let mut delays = Vec::new();
        for seq in 0..400 {
            let since = now;
            let p = loop {
                if let Some(p) = s.poll_transmit(now) {
                    break p;
                }
                let at = s.poll_timeout().expect("a held segment arms the timer");
                assert!(
                    at > now && at <= since + max,
                    "release {at} outside (now, now + max]"
                );
                now = at;
            };
            assert_eq!(p.seq, seq);
            delays.push((now - since).0);
        }
        // Uniform on [0, 100 us]: mean 50 us (± 5 us is > 3 standard errors for 400 draws).
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        assert!((45_000.0..55_000.0).contains(&mean), "mean delay {mean} ns");
        assert!(delays.iter().any(|&d| d > 90_000) && delays.iter().any(|&d| d < 10_000));
        // Three duplicate ACKs: the hole is resent at once, whatever the overhead holds.
        let t = now + Duration::from_millis(10);
        for _ in 0..3 {
            s.handle_packet(t, &ack(0, ms(0)));
        }
        assert_eq!(s.poll_transmit(t).map(|p| p.seq), Some(0));
    }

    #[test]
    fn send_overhead_must_be_positive_and_at_most_100ms() {
        assert!(check_send_overhead(None).is_ok());
        assert!(check_send_overhead(Some(Duration::from_millis(100))).is_ok());
        for bad in [Duration(0), Duration::from_millis(101)] {
            let e = check_send_overhead(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("send_overhead") && e.contains("100ms"), "{e}");
        }
    }

    #[test]
    fn slow_start_opens_the_window_per_ack() {
        let mut s = sender(2);
        assert_eq!(drain(&mut s, ms(0)), vec![0, 1]);
        s.handle_packet(ms(10), &ack(1, ms(0)));
        assert_eq!(drain(&mut s, ms(10)), vec![2, 3]);
        s.handle_packet(ms(10), &ack(2, ms(0)));
        assert_eq!(drain(&mut s, ms(10)), vec![4, 5]);
        assert_eq!(s.stats().cwnd_bytes, Some(4 * MSS));
        assert_eq!(
            s.stats().srtt,
            Some(crate::units::Duration::from_millis(10))
        );
    }

    /// Sends segments 0..10 with a 10-segment window.
    fn ten_in_flight() -> TcpSender<Reno> {
        let mut s = sender(10);
        assert_eq!(drain(&mut s, ms(0)).len(), 10);
        s
    }

    #[test]
    fn third_duplicate_ack_triggers_fast_retransmit() {
        let mut s = ten_in_flight();
        // Segment 3 is lost: ACKs for 0,1,2 then duplicates for 4,5,6.
        for next in 1..=3 {
            s.handle_packet(ms(20), &ack(next, ms(0)));
        }
        // Slow start: each ACK frees one segment and adds one, so 6 more leave (13 in flight).
        let fresh = drain(&mut s, ms(20));
        assert_eq!(fresh, vec![10, 11, 12, 13, 14, 15]);
        s.handle_packet(ms(21), &ack(3, ms(0)));
        s.handle_packet(ms(21), &ack(3, ms(0)));
        assert!(
            drain(&mut s, ms(21)).is_empty(),
            "no retransmission before the third duplicate"
        );
        s.handle_packet(ms(21), &ack(3, ms(0)));
        assert_eq!(
            drain(&mut s, ms(21)).first(),
            Some(&3),
            "fast retransmit of the hole"
        );
        assert_eq!(s.stats().retransmits, 1);
        assert_eq!(s.stats().detected_losses, 1);
        // The repair restarts the retransmission timer (last armed by the new ACK at 20 ms).
        assert_eq!(s.poll_timeout(), Some(ms(21) + s.rtt.rto()));
        // ssthresh = FlightSize/2 = 13/2 segments (RFC 5681 eq. (4)).
        assert_eq!(s.stats().cwnd_bytes, Some(6500));
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole_and_full_ack_ends_recovery() {
        let mut s = ten_in_flight();
        // Segments 2 and 5 are lost.
        s.handle_packet(ms(20), &ack(1, ms(0)));
        s.handle_packet(ms(20), &ack(2, ms(0)));
        assert_eq!(drain(&mut s, ms(20)), vec![10, 11, 12, 13]); // 12 in flight
        for _ in 0..3 {
            s.handle_packet(ms(21), &ack(2, ms(0)));
        }
        assert_eq!(drain(&mut s, ms(21)), vec![2]);
        // The retransmission of 2 arrives: the receiver now misses 5 (partial ACK).
        s.handle_packet(ms(40), &ack(5, ms(21)));
        assert_eq!(
            drain(&mut s, ms(40)).first(),
            Some(&5),
            "partial ACK retransmits at once"
        );
        assert_eq!(s.stats().detected_losses, 1, "one recovery episode");
        s.handle_packet(ms(50), &ack(12, ms(40)));
        assert!(s.recovery_end.is_some(), "12 < 14: still a partial ACK");
        // Full acknowledgement of everything sent before recovery: back to ssthresh = 12/2.
        s.handle_packet(ms(60), &ack(14, ms(40)));
        assert!(s.recovery_end.is_none());
        assert_eq!(s.stats().cwnd_bytes, Some(6 * MSS));
        assert_eq!(s.inflation, 0);
    }

    /// An ACK up to `next` whose SACK block is `[start, end)`.
    fn sack_ack(next: u64, start: u64, end: u64) -> Packet {
        let mut a = ack(next, ms(0));
        if let Payload::Ack { sack, .. } = &mut a.payload {
            *sack = Sack::new(next, start, end);
        }
        a
    }

    #[test]
    fn sack_recovery_resends_every_hole_in_one_round_and_nothing_else() {
        let cfg = TcpConfig {
            initial_window: 10,
            sack: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 10));
        s.handle_start(Time::ZERO);
        assert_eq!(drain(&mut s, ms(0)).len(), 10);
        // Segments 2 and 5 are lost: ACKs for 0, 1, then SACKs of 3-4 and 6-9.
        s.handle_packet(ms(20), &ack(1, ms(0)));
        s.handle_packet(ms(20), &ack(2, ms(0)));
        drain(&mut s, ms(20));
        for (start, end) in [(3, 4), (3, 5), (6, 7), (6, 8)] {
            s.handle_packet(ms(21), &sack_ack(2, start, end));
        }
        // Recovery (three duplicates; segment 2 lost by RFC 6675's rule): 2 goes at once.
        // ssthresh = cwnd = FlightSize/2 = 6 segments; pipe = 12 outstanding − 4 SACKed −
        // 1 lost + 1 resent = 8: nothing more may leave.
        assert_eq!(drain(&mut s, ms(21)), vec![2]);
        assert_eq!(s.stats().cwnd_bytes, Some(6 * MSS));
        // Segments 8-11 arrive and are SACKed: 5 now has three SACKed above it and is lost;
        // it goes without waiting for a partial ACK (NewReno would wait a round trip).
        for end in 9..=12 {
            s.handle_packet(ms(22), &sack_ack(2, 6, end));
        }
        let resent = drain(&mut s, ms(22));
        assert_eq!(resent.first(), Some(&5), "{resent:?}");
        assert_eq!(s.stats().retransmits, 2);
        // The repairs arrive: everything is acknowledged, recovery ends, nothing resent twice.
        s.handle_packet(ms(41), &sack_ack(5, 6, 12));
        s.handle_packet(ms(42), &ack(14, ms(21)));
        assert!(s.recovery_end.is_none());
        assert_eq!(s.stats().retransmits, 2);
        assert_eq!(s.stats().timeouts, 0);
    }

    #[test]
    fn timeout_backs_off_collapses_the_window_and_goes_back_n() {
        let mut s = sender(4);
        assert_eq!(drain(&mut s, ms(0)), vec![0, 1, 2, 3]);
        let first = s.poll_timeout().unwrap();
        assert_eq!(first, ms(1000), "initial RTO is 1 s");
        s.handle_timeout(first);
        assert_eq!(drain(&mut s, first), vec![0], "one segment after a timeout");
        assert_eq!(s.stats().cwnd_bytes, Some(MSS));
        assert_eq!(
            s.poll_timeout(),
            Some(first + crate::units::Duration::from_secs(2))
        );
        // The ACK of 0 arrives: go-back-N resends 1 and 2 (cwnd 2 in slow start).
        s.handle_packet(ms(1100), &ack(1, first));
        assert_eq!(drain(&mut s, ms(1100)), vec![1, 2]);
        assert_eq!(s.stats().timeouts, 1);
    }

    #[test]
    fn stop_ends_new_data_but_not_repair() {
        let mut s = sender(4);
        drain(&mut s, ms(0));
        s.handle_stop(ms(1));
        s.handle_packet(ms(10), &ack(1, ms(0)));
        assert!(drain(&mut s, ms(10)).is_empty());
        s.handle_timeout(ms(1000));
        assert_eq!(
            drain(&mut s, ms(1000)),
            vec![1],
            "lost data is still repaired"
        );
    }

    proptest::proptest! {
        /// Segments arriving in any order, some twice, with SACK or not: every ACK
        /// acknowledges the lowest segment not yet received, and the bytes delivered are those
        /// of the segments below it, each counted once (against a set of what has arrived);
        /// its ACKs are counted as sent.
        #[test]
        fn the_receiver_delivers_in_order_whatever_the_arrival_order(
            arrivals in proptest::collection::vec(0u64..300, 1..600),
            sack in proptest::bool::ANY,
        ) {
            let size = |seq: u64| 500 + (seq % 7) as u32 * 100;
            let mut r = TcpReceiver::with_options(FlowId(0), 40, None, sack);
            let mut seen = std::collections::BTreeSet::new();
            let mut acks = 0;
            for seq in arrivals {
                let mut p = Packet::new(FlowId(0), PacketKind::Data, size(seq));
                p.seq = seq;
                r.handle_packet(ms(1), &p);
                seen.insert(seq);
                let next = (0..).find(|s| !seen.contains(s)).unwrap();
                let ack = r.poll_transmit(ms(1)).unwrap();
                acks += 1;
                proptest::prop_assert_eq!(ack.ack_info().unwrap().0, next);
                let bytes: u64 = (0..next).map(|s| size(s) as u64).sum();
                let stats = r.stats();
                proptest::prop_assert_eq!(stats.delivered_bytes, bytes);
                // Its ACKs are counted as sent, 40 bytes each.
                proptest::prop_assert_eq!(
                    (stats.sent_packets, stats.sent_bytes),
                    (acks, 40 * acks)
                );
            }
        }
    }

    #[test]
    fn receiver_buffers_out_of_order_and_acks_cumulatively() {
        let mut r = TcpReceiver::new(FlowId(0), 40);
        let mut acks = vec![];
        for seq in [0, 2, 3, 1, 5] {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
            p.seq = seq;
            p.sent_at = ms(seq);
            r.handle_packet(ms(10), &p);
            let a = r.poll_transmit(ms(10)).unwrap();
            let (next, echo) = a.ack_info().unwrap();
            assert_eq!(echo, ms(seq));
            acks.push(next);
        }
        assert_eq!(acks, vec![1, 1, 1, 4, 4]);
        assert_eq!(r.stats().delivered_bytes, 4000);
    }

    #[test]
    fn ecn_echo_halves_once_per_window() {
        let cfg = TcpConfig {
            initial_window: 8,
            ecn: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 8));
        s.handle_start(Time::ZERO);
        let sent = drain(&mut s, ms(0));
        assert_eq!(sent.len(), 8);
        let mut a = ack(1, ms(0));
        a.ecn.set_echo();
        s.handle_packet(ms(10), &a);
        let after_first = s.stats().cwnd_bytes.unwrap();
        // The echo is handled after the ACK: 7 segments in flight → ssthresh 3.5 segments.
        assert_eq!(after_first, 3500);
        let mut b = ack(2, ms(0));
        b.ecn.set_echo();
        s.handle_packet(ms(10), &b);
        assert!(
            s.stats().cwnd_bytes.unwrap() >= after_first,
            "no second reduction in one window"
        );
        assert_eq!(s.stats().retransmits, 0);
    }

    /// A fixed 200-segment window paced at 8 Mb/s (one 1000 B segment per ms), recording what
    /// the transport tells it.
    #[derive(Default)]
    struct Probe {
        sent: std::sync::Arc<std::sync::Mutex<Vec<(Time, SentSample)>>>,
        rates: std::sync::Arc<std::sync::Mutex<Vec<crate::units::Rate>>>,
        events: std::sync::Arc<std::sync::Mutex<Vec<Congestion>>>,
    }

    impl CongestionController for Probe {
        fn on_sent(&mut self, now: Time, s: &SentSample) {
            self.sent.lock().unwrap().push((now, *s));
        }
        fn on_ack(&mut self, _: Time, a: &AckSample) {
            if let Some(r) = a.rate {
                self.rates.lock().unwrap().push(r.delivery_rate);
            }
        }
        fn on_congestion_event(&mut self, _: Time, e: &CongestionEvent) {
            self.events.lock().unwrap().push(e.kind);
        }
        fn window(&self) -> u64 {
            200 * MSS
        }
        fn pacing_rate(&self) -> Option<crate::units::Rate> {
            Some(crate::units::Rate::from_mbps(8))
        }
        fn wants_rate_samples(&self) -> bool {
            true
        }
    }

    /// With a send overhead below the pacing gap, each segment leaves within the overhead after
    /// its slot on the pacer's schedule, and the schedule does not drift: the paced rate holds.
    #[test]
    fn send_overhead_jitters_a_paced_sender_without_slowing_it() {
        let max = Duration::from_micros(500);
        let mut s = TcpSender::new(FlowId(0), TcpConfig::default(), Probe::default())
            .with_send_overhead(max, crate::rng::stream(3, "t"));
        s.handle_start(Time::ZERO);
        let mut sent = Vec::new();
        let mut t = Time::ZERO;
        while sent.len() < 150 {
            sent.extend(std::iter::from_fn(|| s.poll_transmit(t)).map(|_| t));
            t = s.poll_timeout().expect("paced or held");
        }
        // Segment k's slot is k ms (8 Mb/s, 1000 B); it leaves in [slot, slot + overhead].
        for (k, at) in sent.iter().enumerate() {
            let slot = ms(k as u64);
            assert!(*at >= slot && *at <= slot + max, "segment {k} at {at}");
        }
        assert!(sent.iter().enumerate().any(|(k, at)| *at > ms(k as u64)));
    }

    #[test]
    fn a_pacing_controller_is_paced_told_of_each_send_and_given_rate_samples() {
        let probe = Probe::default();
        let (sent, rates, events) = (
            probe.sent.clone(),
            probe.rates.clone(),
            probe.events.clone(),
        );
        let mut s = TcpSender::new(FlowId(0), TcpConfig::default(), probe);
        s.handle_start(Time::ZERO);
        // The window allows 200 segments at once, the pacer one per ms.
        let mut t = Time::ZERO;
        while t < ms(20) {
            drain(&mut s, t);
            t = s.poll_timeout().unwrap().min(ms(20));
        }
        let times: Vec<Time> = sent.lock().unwrap().iter().map(|(t, _)| *t).collect();
        assert_eq!(times, (0..20).map(ms).collect::<Vec<_>>());
        assert!(sent
            .lock()
            .unwrap()
            .iter()
            .all(|(_, x)| !x.retransmission && x.bytes == MSS));
        assert_eq!(sent.lock().unwrap()[5].1.in_flight, 5 * MSS);
        // Each segment is ACKed 50 ms after it left; run 200 ms, 1 ms at a time. From the
        // second round on (the 51st sample), every delivery-rate sample is the paced rate (the first round's
        // samples measure from the flight's start, DRE §3.3, and ramp up).
        for t in 20..200 {
            let due: Vec<u64> = sent
                .lock()
                .unwrap()
                .iter()
                .filter(|(at, _)| *at + Duration::from_millis(50) == ms(t))
                .map(|(_, x)| x.seq)
                .collect();
            for seq in due {
                s.handle_packet(ms(t), &ack(seq + 1, ms(t - 50)));
            }
            drain(&mut s, ms(t));
        }
        let r = rates.lock().unwrap();
        assert!(r.len() > 100, "{}", r.len());
        assert!(
            r[50..]
                .iter()
                .all(|r| r.bps().abs_diff(8_000_000) < 200_000),
            "{r:?}"
        );
        drop(r);
        let last = sent.lock().unwrap().last().unwrap().1.seq;
        // Three duplicate ACKs: one congestion event, of kind Loss.
        let una = s.snd_una;
        assert!(una < last);
        for _ in 0..3 {
            s.handle_packet(ms(200), &ack(una, ms(150)));
        }
        assert_eq!(*events.lock().unwrap(), [Congestion::Loss]);
    }

    fn data(seq: u64, sent: Time) -> Packet {
        let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
        p.seq = seq;
        p.sent_at = sent;
        p
    }

    #[test]
    fn delayed_acks_cover_two_segments_or_wait_at_most_the_delay() {
        let mut r = TcpReceiver::with_delayed_ack(FlowId(0), 40, Some(Duration::from_millis(40)));
        // Two in-order segments: one ACK, for both, echoing the first one's timestamp.
        r.handle_packet(ms(10), &data(0, ms(1)));
        assert!(r.poll_transmit(ms(10)).is_none());
        assert_eq!(r.poll_timeout(), Some(ms(50)));
        r.handle_packet(ms(11), &data(1, ms(2)));
        let a = r.poll_transmit(ms(11)).unwrap();
        assert_eq!(a.ack_info(), Some((2, ms(1))));
        assert!(r.poll_transmit(ms(11)).is_none() && r.poll_timeout().is_none());
        // A lone segment: acknowledged when the delay runs out.
        r.handle_packet(ms(20), &data(2, ms(3)));
        r.handle_timeout(ms(59));
        assert!(r.poll_transmit(ms(59)).is_none());
        r.handle_timeout(ms(60));
        assert_eq!(
            r.poll_transmit(ms(60)).unwrap().ack_info(),
            Some((3, ms(3)))
        );
        // Out of order: at once (a duplicate ACK); the segment that fills the hole: at once.
        r.handle_packet(ms(70), &data(4, ms(4)));
        assert_eq!(
            r.poll_transmit(ms(70)).unwrap().ack_info(),
            Some((3, ms(4)))
        );
        r.handle_packet(ms(71), &data(3, ms(5)));
        assert_eq!(
            r.poll_transmit(ms(71)).unwrap().ack_info(),
            Some((5, ms(5)))
        );
        // RFC 8257 §3.2: an unmarked segment waits; a marked one changes the CE state, which
        // sends the waiting ACK at once without ECE; the marked one then waits in turn and
        // its ACK, covering two marked segments, carries ECE.
        let marked = |seq, sent| {
            let mut p = data(seq, sent);
            p.ecn = Ecn::ECT;
            p.ecn.mark();
            p
        };
        r.handle_packet(ms(79), &data(5, ms(6)));
        assert!(r.poll_transmit(ms(79)).is_none());
        r.handle_packet(ms(80), &marked(6, ms(7)));
        let a = r.poll_transmit(ms(80)).unwrap();
        assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((6, ms(6))), false));
        assert!(r.poll_transmit(ms(80)).is_none());
        r.handle_packet(ms(81), &marked(7, ms(8)));
        let a = r.poll_transmit(ms(81)).unwrap();
        assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((8, ms(7))), true));
        // Back to unmarked: a lone segment's delayed ACK, without ECE.
        r.handle_packet(ms(90), &data(8, ms(9)));
        r.handle_timeout(ms(130));
        let a = r.poll_transmit(ms(130)).unwrap();
        assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((9, ms(9))), false));
        assert!(check_delayed_ack(Some(Duration::from_millis(500))).is_err());
        assert!(check_delayed_ack(Some(Duration::ZERO)).is_err());
        assert!(check_delayed_ack(Some(Duration::from_millis(200))).is_ok());
    }
}
