//! The TCP sender: segments, NewReno or SACK loss recovery, the RFC 6298 timer, pacing and
//! delivery-rate samples, around its congestion controller (see the module header in mod.rs).

use crate::cc::{AckSample, Congestion, CongestionController, CongestionEvent, SentSample};
use crate::packet::{Ecn, FlowId, Packet, PacketKind};
use crate::rng::Rng;
use crate::rtt::RttEstimator;
use crate::transport::pacer::Pacer;
use crate::transport::rate_sample::RateSampler;
use crate::transport::sack::Scoreboard;
use crate::transport::{CcState, Endpoint, EndpointStats};
use crate::units::{Duration, Time};
use rand::RngExt;

/// Settings of a TCP sender. (In the order a segment and an ACK read them, the constructor's
/// last: see [`TcpSender`]'s layout.)
#[derive(Clone, Debug)]
#[repr(C)]
pub struct TcpSettings {
    /// Size of a full data packet on the wire.
    pub packet_size: u32,
    /// Connection number stamped on every packet (for multiplexing sources).
    pub conn: u32,
    /// Send ECN-capable packets and react to echoes.
    pub ecn: bool,
    /// L4S: ECT(1) packets (RFC 9331) and Accurate ECN feedback (RFC 9768) instead of
    /// RFC 3168's (with `ecn`).
    pub l4s: bool,
    /// SACK-based loss recovery (RFC 6675) instead of NewReno's.
    pub sack: bool,
    /// The receiver's buffer in segments (its receive window); `None`: unbounded.
    pub receive_window: Option<u64>,
    /// Bytes to transfer; `None` for a bulk (infinite) source.
    pub transfer_bytes: Option<u64>,
    /// Initial congestion window in segments (used by the controller's constructor).
    pub initial_window: u64,
    pub min_rto: Duration,
    pub initial_rto: Duration,
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

impl Default for TcpSettings {
    fn default() -> Self {
        TcpSettings {
            packet_size: 1000,
            transfer_bytes: None,
            initial_window: 2,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            ecn: false,
            conn: 0,
            sack: false,
            receive_window: None,
            l4s: false,
        }
    }
}

/// The sending side: segments, retransmission and the RTO, over a congestion controller `C`,
/// held by value: a scheme builds its sender over its own controller type, so that an ACK
/// finds the controller in the sender's memory rather than behind a pointer (at 10,000 flows
/// that pointer's target was a cache miss per ACK the rest waited for). Where the kind is
/// chosen at run time (on-off and web sources) it is boxed, the default.
///
/// Laid out for the cache (at 1000 flows each line of a sender is a miss per ACK): what an ACK
/// and the segments it lets out read and write is together in the middle — the counters an
/// ACK moves, the sequence state, the timer, the estimator, the controller and the settings a
/// segment is made from — and what only losses, ECN echoes, L4S and the statistics read is
/// at either end, so that for Reno an ACK touches five of the seven lines
/// (`an_ack_reads_five_lines_of_a_reno_sender`).
#[repr(C, align(64))]
pub struct TcpSender<C = Box<dyn CongestionController>> {
    // Line 0: read by losses and echoes alone, then the counters an ACK does not move.
    /// Fast retransmit is allowed only once the cumulative ACK reaches this point.
    recover: u64,
    /// No ECN reaction until the cumulative ACK passes this segment.
    ecn_recover: u64,
    /// Its counters (the ones moved by losses first, those moved by every ACK last).
    counts: SenderCounts,
    // Lines 1 to 5: what every ACK reads.
    /// Oldest unacknowledged segment.
    pub(super) snd_una: u64,
    /// Next segment to send (goes back to `snd_una` after a timeout).
    snd_nxt: u64,
    /// One past the highest segment ever sent.
    snd_max: u64,
    /// Segments the application allows: 0 before start, the transfer's length or unbounded.
    app_limit: u64,
    total_segments: Option<u64>,
    /// In fast recovery until the cumulative ACK reaches this segment (RFC 6582 `recover` + 1).
    pub(super) recovery_end: Option<u64>,
    /// A segment to retransmit at the next `poll_transmit`, regardless of the window.
    retransmit: Option<u64>,
    rto_deadline: Option<Time>,
    /// Window inflation during fast recovery, bytes (RFC 6582 §3.2).
    pub(super) inflation: i64,
    /// With SACK: what the receiver holds above `snd_una` (RFC 6675's scoreboard).
    /// (Boxed: a sender without SACK pays one word, which matters with thousands of flows.)
    scoreboard: Option<Box<Scoreboard>>,
    /// Delivery-rate sampling, kept only for a controller that wants samples (boxed: one
    /// word for the others).
    rates: Option<Box<RateSampler>>,
    /// Spaces segments when the controller gives a pacing rate; `paced` caches whether it
    /// does (a pacing controller gives a rate from its creation on), so that window-only
    /// controllers cost no query per packet.
    pacer: Pacer,
    /// ns-2's send overhead, if on (boxed: one word when off).
    overhead: Option<Box<SendOverhead>>,
    pub(super) rtt: RttEstimator,
    cc: C,
    flow: FlowId,
    dupacks: u32,
    paced: bool,
    /// A partial ACK of the current recovery has already re-armed the timer.
    partial_ack_seen: bool,
    /// The current loss episode was detected in congestion avoidance (for statistics).
    loss_in_avoidance: bool,
    /// Its settings (what a segment is made from first).
    cfg: TcpSettings,
    // The last line: read by L4S senders and SACK recoveries alone.
    /// Accurate ECN: the sender's count of CE-marked packets fed back (`s.cep`, RFC 9768
    /// §3.2.2.3), and those fed back since the last ACK of new data.
    pub(super) s_cep: u64,
    ce_pending: u64,
    /// The highest segment retransmitted in the current SACK recovery (`HighRxt`).
    high_rxt: Option<u64>,
}

/// What a sender counts for its [`EndpointStats`]: the counters alone (its window, RTT and
/// estimates are read off the controller and the estimator when asked), so that the sender,
/// touched by every ACK, spans fewer cache lines. Those losses move first, those every ACK
/// and segment moves last (see [`TcpSender`]'s layout).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct SenderCounts {
    retransmits: u64,
    retransmits_in_avoidance: u64,
    timeouts: u64,
    detected_losses: u64,
    completed_at: Option<Time>,
    sent_bytes: u64,
    sent_packets: u64,
    rtt_sum: Duration,
    rtt_samples: u64,
}

impl<C: CongestionController> TcpSender<C> {
    pub fn new(flow: FlowId, cfg: TcpSettings, cc: C) -> TcpSender<C> {
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
            // RFC 9768 §3.2.2.2: s.cep starts at 5, as the receiver's r.cep.
            s_cep: 5,
            ce_pending: 0,
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

    /// The duplicate ACKs that start a fast retransmit: 3 (RFC 5681 §3.2), or with SACK the
    /// reordering the scoreboard has learnt (see `sack.rs`).
    fn dup_thresh(&self) -> u64 {
        self.scoreboard
            .as_ref()
            .map_or(crate::transport::sack::DUP_THRESH, |sb| sb.dup_thresh())
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
            // RFC 9331 §4.1: an L4S sender marks its packets ECT(1).
            p.ecn = if self.cfg.l4s { Ecn::ECT1 } else { Ecn::ECT };
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
            if let Some(sb) = &mut self.scoreboard {
                sb.on_ever_retransmitted(seq);
            }
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
                ecn_echo: if self.cfg.l4s {
                    self.ce_pending > 0
                } else {
                    ack.ecn.is_echo()
                },
                ce_segments: self.cfg.l4s.then(|| std::mem::take(&mut self.ce_pending)),
                one_way_delay: (ack.sent_at >= echo).then(|| ack.sent_at - echo),
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
        } else if (u64::from(self.dupacks) == self.dup_thresh() || lost) && next >= self.recover {
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

    /// Accurate ECN: the CE-marked packets an ACK with ACE field `ace` newly feeds back, when
    /// it acknowledges `newly` segments; `s.cep` moves on by as many.
    fn accecn_delta(&mut self, ace: u8, newly: u64) -> u64 {
        // RFC 9768 §3.2.2.3: d.cep = (ACE + 8 − (s.cep mod 8)) mod 8.
        let mut d = (u64::from(ace) + 8 - (self.s_cep & 7)) & 7;
        // RFC 9768 Appendix A.2 (safety against ACE's ambiguity): when the ACK acknowledges
        // 8 or more segments, ACE may have wrapped; assume the most marks it allows, the
        // largest count ≤ `newly` congruent to d.cep modulo 8.
        if newly >= 8 {
            d = newly - ((newly - d) & 7);
        }
        self.s_cep += d;
        d
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
            if next > self.snd_una && next <= self.snd_max {
                sb.on_acked(self.snd_una, next);
            }
            if let Some((start, end)) = pkt.sack_block() {
                let newly = sb.on_block(start, end.min(self.snd_max), self.snd_una.max(next));
                if let (Some(r), true) = (&mut self.rates, newly > 0) {
                    r.on_early_delivery(now, newly * self.cfg.packet_size as u64);
                }
            }
        }
        let echoed = if self.cfg.ecn && self.cfg.l4s {
            let newly = if next > self.snd_una && next <= self.snd_max {
                next - self.snd_una
            } else {
                0
            };
            let d = self.accecn_delta(pkt.ecn.ace(), newly);
            self.ce_pending += d;
            d > 0
        } else {
            self.cfg.ecn && pkt.ecn.is_echo()
        };
        if next > self.snd_una && next <= self.snd_max {
            self.on_new_ack(now, pkt, next, echo);
        } else if next == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, next);
        }
        if echoed {
            self.on_ecn_echo(now);
        }
    }

    fn handle_telemetry(&mut self, now: Time, int: &crate::telemetry::Telemetry) {
        self.cc.on_telemetry(now, int);
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.cc.timer().is_some_and(|t| t <= now) {
            self.cc.on_timer(now);
        }
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
        let transport = match (self.rto_deadline, paced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (transport, self.cc.timer()) {
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

    /// The slow-start threshold and the pacing rate (none while infinite, or unpaced: a rate
    /// of 1 Pb/s and more stands for no pacing), then the controller's own variables.
    fn cc_state(&self) -> CcState {
        let mut s = CcState::default();
        let [ssthresh_bytes, pacing_rate_bps] = TCP_STATE;
        let ssthresh = self.cc.ssthresh().filter(|&t| t < u64::MAX / 2);
        s.push(ssthresh_bytes, ssthresh.map(|t| t as f64));
        let pacing = self
            .cc
            .pacing_rate()
            .filter(|r| r.bps() < 1_000_000_000_000_000);
        s.push(pacing_rate_bps, pacing.map(|r| r.bps() as f64));
        self.cc.state(&mut s);
        s
    }
}

/// The state every TCP sender reports first, whatever its controller: the slow-start threshold
/// and the pacing rate.
pub const TCP_STATE: [&str; 2] = ["ssthresh_bytes", "pacing_rate_bps"];

/// A rate sampler if controller `cc` wants delivery-rate samples.
fn cc_rates(cc: &impl CongestionController) -> Option<Box<RateSampler>> {
    cc.wants_rate_samples().then(Box::default)
}

#[cfg(test)]
mod layout {
    use super::*;
    use crate::cc::reno::Reno;

    /// What an ACK of a Reno sender reads and writes lies in lines 1 to 5 of its seven (see
    /// [`TcpSender`]): a field moved out of them costs a miss per ACK at 1000 flows.
    #[test]
    fn an_ack_reads_five_lines_of_a_reno_sender() {
        type S = TcpSender<Reno>;
        assert_eq!(std::mem::size_of::<S>(), 448);
        let counts_moved = std::mem::offset_of!(SenderCounts, sent_bytes);
        assert_eq!(std::mem::offset_of!(S, counts) + counts_moved, 64);
        let settings_read = std::mem::offset_of!(TcpSettings, initial_window);
        assert!(std::mem::offset_of!(S, cfg) + settings_read <= 6 * 64);
    }
}
