//! The endpoint API and the transports built on it.
//!
//! An endpoint is one end of a flow (a sender or a receiver) written in the quinn-proto style: the
//! driver feeds it inputs with `handle_*(now, …)` and drains outputs with `poll_transmit(now)` and
//! `poll_timeout()`. The driver owns the clock and the network; the endpoint owns the protocol.
//!
//! A driver's loop for one endpoint is always:
//! 1. on a packet for it: `handle_packet(now, &pkt)`; when `now` reaches `poll_timeout()`:
//!    `handle_timeout(now)`; at the flow's start/stop times: `handle_start` / `handle_stop`;
//! 2. then `while let Some(p) = poll_transmit(now) { send p }`;
//! 3. then re-arm its timer at `poll_timeout()`.

pub mod cbr;
pub mod monaco;
pub mod onoff;
pub mod tcp;
pub mod web;

use crate::packet::Packet;
use crate::units::{Duration, Time};

/// One end of a flow. See the module documentation for the calling protocol.
pub trait Endpoint: Send {
    /// A packet of this flow arrived at this endpoint.
    fn handle_packet(&mut self, now: Time, pkt: &Packet);
    /// `now` has reached the time `poll_timeout` returned. Calling it early is harmless.
    /// (Default: nothing, for endpoints without timers — receivers that only answer packets.)
    fn handle_timeout(&mut self, _now: Time) {}
    /// The next packet to send at `now`, if any. Called until it returns `None`.
    fn poll_transmit(&mut self, now: Time) -> Option<Packet>;
    /// When `handle_timeout` should next be called; `None` when nothing is pending. (Default:
    /// never, for endpoints without timers; a sender with an RTO or pacing must override it.)
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// The application starts (the flow's `start` time). Receivers ignore it.
    fn handle_start(&mut self, _now: Time) {}
    /// The application stops sending new data (the flow's `stop` time). In-flight data may still
    /// be acknowledged; retransmissions of it are still sent.
    fn handle_stop(&mut self, _now: Time) {}
    /// Counters and state for monitors. Cheap; called at every sample.
    fn stats(&self) -> EndpointStats;
}

/// Packets an endpoint has decided to send and hands out on `poll_transmit`: a receiver's
/// ACKs or reverse control packets. Stamps each with the send time and counts it.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pending: std::collections::VecDeque<Packet>,
}

impl Outbox {
    pub fn push(&mut self, p: Packet) {
        self.pending.push_back(p);
    }

    pub fn pop(&mut self, now: Time, stats: &mut EndpointStats) -> Option<Packet> {
        let mut p = self.pending.pop_front()?;
        p.sent_at = now;
        stats.sent_packets += 1;
        stats.sent_bytes += p.size as u64;
        Some(p)
    }
}

/// What an endpoint reports about itself. Counters are cumulative since the start of the run, so
/// a monitor gets the value over any interval as a difference. Fields a scheme does not have stay
/// at their defaults (zero / `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndpointStats {
    /// Bytes put on the wire, retransmissions included (sender).
    pub sent_bytes: u64,
    /// Packets put on the wire, retransmissions included (sender).
    pub sent_packets: u64,
    /// Retransmitted packets (sender).
    pub retransmits: u64,
    /// Retransmissions repairing losses detected in congestion avoidance, not slow start.
    pub retransmits_in_avoidance: u64,
    /// Timeouts that fired (sender).
    pub timeouts: u64,
    /// Losses the endpoint itself detected (fast retransmits, timeouts, Monaco loss flags).
    pub detected_losses: u64,
    /// Bytes delivered to the application in order, each byte once (receiver goodput).
    pub delivered_bytes: u64,
    /// Congestion window in bytes (senders that have one).
    pub cwnd_bytes: Option<u64>,
    /// Smoothed RTT (sender), if measured.
    pub srtt: Option<Duration>,
    /// Sum and count of RTT samples, for means over a window.
    pub rtt_sum: Duration,
    pub rtt_samples: u64,
    /// Accumulation estimate in bytes, for schemes that estimate it (Vegas, Monaco).
    pub accumulation_bytes: Option<f64>,
    /// Estimated round-trip propagation delay, for schemes that keep one (Vegas).
    pub base_rtt: Option<Duration>,
    /// When a finite transfer completed (sender: last byte acknowledged).
    pub completed_at: Option<Time>,
}
