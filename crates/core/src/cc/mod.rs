//! Congestion controllers: one trait, one file per controller (as quinn-proto's `congestion/`).
//!
//! A controller owns the congestion window and nothing else. The transport that drives it owns
//! sequence numbers, retransmission, duplicate-ACK counting and the fast-recovery window
//! inflation (NewReno, RFC 6582), and tells the controller what happened. Loss-based and
//! delay-based controllers therefore share one loss-recovery machinery, as Vegas shares Reno's.

pub mod acc;
pub mod reno;
pub mod vegas;

use crate::units::{Duration, Rate, Time};

/// What one acknowledgement of new data tells the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// Bytes newly acknowledged by this ACK.
    pub acked_bytes: u64,
    /// RTT measured from the echoed timestamp, if this ACK gives one.
    pub rtt: Option<Duration>,
    /// Bytes in flight before this ACK was processed.
    pub in_flight: u64,
    /// The ACK was handled in fast recovery (a partial ACK, or the full ACK that ends it):
    /// window growth is suspended.
    pub in_recovery: bool,
    /// Highest segment number sent so far (for controllers that act once per RTT).
    pub highest_sent: u64,
    /// Segment number this ACK acknowledges up to (exclusive).
    pub cumulative_ack: u64,
    /// The ACK echoes an ECN mark (the data it acknowledges was marked).
    pub ecn_echo: bool,
}

/// A congestion controller: a pure state machine over ACK, loss and timeout events.
pub trait CongestionController: Send {
    /// New data was acknowledged.
    fn on_ack(&mut self, now: Time, ack: &AckSample);
    /// Three duplicate ACKs: the transport enters fast recovery. The controller sets its reduced
    /// window (RFC 5681 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh); the
    /// transport adds the temporary inflation of fast recovery on top.
    fn on_fast_retransmit(&mut self, now: Time, in_flight: u64);
    /// An ECN echo, at most once per RTT (RFC 3168 §6.1.2): reduce as for a loss, no retransmit.
    fn on_ecn_echo(&mut self, now: Time, in_flight: u64) {
        self.on_fast_retransmit(now, in_flight);
    }
    /// The retransmission timer fired (RFC 5681 §3.1: ssthresh as above, cwnd = one segment).
    fn on_timeout(&mut self, now: Time, in_flight: u64);
    /// Fast recovery ended with a full acknowledgement.
    fn on_recovery_end(&mut self, _now: Time) {}
    /// The congestion window in bytes.
    fn window(&self) -> u64;
    /// Whether the controller is in slow start (for statistics that separate the phases).
    fn in_slow_start(&self) -> bool {
        false
    }
    /// The slow-start threshold in bytes, where the controller has one.
    fn ssthresh(&self) -> Option<u64> {
        None
    }
    /// A pacing rate, for controllers that pace; window-only controllers return `None`.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// The controller's own estimate of its backlog in the network (bytes), if it has one.
    fn accumulation(&self) -> Option<f64> {
        None
    }
    /// The controller's estimate of the round-trip propagation delay, if it keeps one.
    fn base_rtt(&self) -> Option<Duration> {
        None
    }
}
