//! A TCP-like reliable transport: NewReno loss recovery around a pluggable congestion controller.
//!
//! Sender (RFC 5681, RFC 6582, RFC 6298): cumulative ACKs, fast retransmit on the third duplicate
//! ACK, NewReno fast recovery with partial ACKs (each partial ACK retransmits the next hole; only
//! the first one re-arms the timer — the "Impatient" variant RFC 6582 §3.2 step 5 specifies, so a
//! window with many losses ends in a timeout instead of one RTT per hole), the RFC 6298
//! retransmission timer with exponential backoff, and go-back-N after a timeout. The congestion window itself
//! belongs to the [`CongestionController`]; this file only adds the temporary window inflation
//! of fast recovery (RFC 6582 §3.2 steps 3–5).
//!
//! Receiver: in-order delivery with an out-of-order buffer, one cumulative ACK per data packet
//! (delayed ACK off, SPEC §5), echoing the data packet's timestamp and its ECN mark.
//!
//! Departures, all deliberate:
//! - Sequence numbers count segments, not bytes; every segment is `packet_size` bytes on the wire
//!   (headers included, SPEC §2) except possibly the last of a finite transfer.
//! - No SACK, no window scaling, no receive-window limit (the receiver buffers everything).
//! - Fast retransmit is suppressed while the cumulative ACK is below the `recover` point of the
//!   previous recovery or timeout (RFC 6582 §3.2 step 1, the "careful" variant, using
//!   ACK ≥ recover + 1 so that a loss of the first segment after a recovery is still repaired
//!   without a timeout).
//! - ECN: with `ecn` on, data are sent ECN-capable and an echo reduces the window at most once per
//!   window of data (RFC 3168 §6.1.2); the receiver echoes every marked packet.

use std::collections::VecDeque;

use crate::cc::{AckSample, CongestionController};
use crate::packet::{Ecn, FlowId, Packet, PacketKind};
use crate::rtt::RttEstimator;
use crate::transport::{Endpoint, EndpointStats};
use crate::units::{Duration, Time};

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
        }
    }
}

/// The sending side: segments, retransmission and the RTO, over a congestion controller.
pub struct TcpSender {
    flow: FlowId,
    cfg: TcpConfig,
    cc: Box<dyn CongestionController>,
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
    /// No ECN reaction until the cumulative ACK passes this segment.
    ecn_recover: u64,
    rto_deadline: Option<Time>,
    stats: EndpointStats,
}

impl TcpSender {
    pub fn new(flow: FlowId, cfg: TcpConfig, cc: Box<dyn CongestionController>) -> TcpSender {
        let total_segments = cfg
            .transfer_bytes
            .map(|b| b.div_ceil(cfg.packet_size as u64).max(1));
        TcpSender {
            flow,
            rtt: RttEstimator::new(cfg.min_rto, cfg.initial_rto),
            cc,
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
            ecn_recover: 0,
            rto_deadline: None,
            stats: EndpointStats::default(),
            cfg,
        }
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

    /// The usable window: the controller's window plus fast-recovery inflation, at least one
    /// segment.
    fn window(&self) -> u64 {
        (self.cc.window() as i64 + self.inflation).max(self.mss() as i64) as u64
    }

    fn data_packet(&mut self, now: Time, seq: u64) -> Packet {
        let mut p = Packet::new(self.flow, PacketKind::Data, self.segment_size(seq));
        p.seq = seq;
        p.sent_at = now;
        if self.cfg.ecn {
            p.ecn = Ecn::ECT;
        }
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += p.size as u64;
        if seq < self.snd_max {
            self.stats.retransmits += 1;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        p
    }

    fn on_new_ack(&mut self, now: Time, ack: &Packet) {
        let acked = ack.ack - self.snd_una;
        let acked_bytes = acked * self.mss();
        let rtt = Some(now - ack.echo);
        if let Some(r) = rtt {
            self.rtt.on_sample(r);
            self.stats.rtt_sum += r;
            self.stats.rtt_samples += 1;
        }
        let in_flight = self.in_flight();
        let mut in_recovery = false;
        let mut rearm = true;
        if let Some(end) = self.recovery_end {
            if ack.ack >= end {
                // Full acknowledgement: leave fast recovery (RFC 6582 §3.2 step 6).
                self.recovery_end = None;
                self.inflation = 0;
                self.cc.on_recovery_end(now);
            } else {
                // Partial acknowledgement: retransmit the next hole, deflate (step 5).
                in_recovery = true;
                rearm = !self.partial_ack_seen;
                self.partial_ack_seen = true;
                self.retransmit = Some(ack.ack);
                self.inflation -= acked_bytes as i64;
                if acked_bytes >= self.mss() {
                    self.inflation += self.mss() as i64;
                }
            }
        }
        self.snd_una = ack.ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        self.dupacks = 0;
        self.cc.on_ack(
            now,
            &AckSample {
                acked_bytes,
                rtt,
                in_flight,
                in_recovery,
                highest_sent: self.snd_max,
                cumulative_ack: ack.ack,
            },
        );
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if rearm {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if self.total_segments == Some(self.snd_una) && self.stats.completed_at.is_none() {
            self.stats.completed_at = Some(now);
        }
    }

    fn on_duplicate_ack(&mut self, now: Time, ack: &Packet) {
        self.dupacks += 1;
        if self.recovery_end.is_some() {
            self.inflation += self.mss() as i64; // RFC 6582 §3.2 step 4
        } else if self.dupacks == 3 && ack.ack >= self.recover {
            // Fast retransmit (RFC 6582 §3.2 step 2).
            let in_flight = self.in_flight();
            self.recovery_end = Some(self.snd_max);
            self.partial_ack_seen = false;
            self.recover = self.snd_max;
            self.cc.on_fast_retransmit(now, in_flight);
            self.inflation = 3 * self.mss() as i64;
            self.retransmit = Some(self.snd_una);
            self.stats.detected_losses += 1;
        }
    }

    fn on_ecn_echo(&mut self, now: Time) {
        if self.recovery_end.is_none() && self.snd_una >= self.ecn_recover {
            self.cc.on_ecn_echo(now, self.in_flight());
            self.ecn_recover = self.snd_max;
        }
    }
}

impl Endpoint for TcpSender {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.kind != PacketKind::Ack {
            return;
        }
        if pkt.ack > self.snd_una && pkt.ack <= self.snd_max {
            self.on_new_ack(now, pkt);
        } else if pkt.ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, pkt);
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
        self.cc.on_timeout(now, in_flight);
        self.rtt.on_timeout();
        self.recovery_end = None;
        self.inflation = 0;
        self.dupacks = 0;
        self.retransmit = None;
        self.recover = self.snd_max;
        self.snd_nxt = self.snd_una;
        self.stats.timeouts += 1;
        self.stats.detected_losses += 1;
        self.rto_deadline = None; // re-armed by the retransmission below
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(seq) = self.retransmit.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                return Some(self.data_packet(now, seq));
            }
        }
        // New data up to the application's limit; after a timeout, old segments below snd_max.
        let limit = self.app_limit.max(self.snd_max);
        if self.snd_nxt >= limit || self.in_flight() + self.mss() > self.window() {
            return None;
        }
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        let p = self.data_packet(now, seq);
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
    }

    fn handle_start(&mut self, _now: Time) {
        self.app_limit = self.total_segments.unwrap_or(u64::MAX);
    }

    fn handle_stop(&mut self, _now: Time) {
        self.app_limit = self.snd_max;
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            cwnd_bytes: Some(self.cc.window()),
            srtt: self.rtt.srtt(),
            accumulation_bytes: self.cc.accumulation(),
            ..self.stats
        }
    }
}

/// The receiving side: cumulative ACKs and in-order delivery.
pub struct TcpReceiver {
    flow: FlowId,
    ack_size: u32,
    rcv_nxt: u64,
    /// Segments received above `rcv_nxt`, sorted, with their sizes.
    out_of_order: Vec<(u64, u32)>,
    pending_acks: VecDeque<Packet>,
    stats: EndpointStats,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, ack_size: u32) -> TcpReceiver {
        TcpReceiver {
            flow,
            ack_size,
            rcv_nxt: 0,
            out_of_order: Vec::new(),
            pending_acks: VecDeque::new(),
            stats: EndpointStats::default(),
        }
    }

    fn accept(&mut self, seq: u64, size: u32) {
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.stats.delivered_bytes += size as u64;
            // Pull in what was waiting behind the hole.
            let ready = self
                .out_of_order
                .iter()
                .zip(self.rcv_nxt..)
                .take_while(|((s, _), want)| s == want)
                .count();
            for (_, sz) in self.out_of_order.drain(..ready) {
                self.stats.delivered_bytes += sz as u64;
            }
            self.rcv_nxt += ready as u64;
        } else if seq > self.rcv_nxt {
            if let Err(i) = self.out_of_order.binary_search_by_key(&seq, |e| e.0) {
                self.out_of_order.insert(i, (seq, size));
            }
        }
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, _now: Time, pkt: &Packet) {
        if pkt.kind != PacketKind::Data {
            return;
        }
        self.accept(pkt.seq, pkt.size);
        let mut ack = Packet::new(self.flow, PacketKind::Ack, self.ack_size);
        ack.ack = self.rcv_nxt;
        ack.echo = pkt.sent_at;
        if pkt.ecn.is_marked() {
            ack.ecn.set_echo();
        }
        self.pending_acks.push_back(ack);
    }

    fn handle_timeout(&mut self, _now: Time) {}

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let mut p = self.pending_acks.pop_front()?;
        p.sent_at = now;
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += p.size as u64;
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
