//! Congestion controllers: one trait, one file per controller (as quinn-proto's `congestion/`).
//!
//! A controller owns the congestion window and nothing else. The transport that drives it owns
//! sequence numbers, retransmission, duplicate-ACK counting and the fast-recovery window
//! inflation (NewReno, RFC 6582), and tells the controller what happened. Loss-based and
//! delay-based controllers therefore share one loss-recovery machinery, as Vegas shares Reno's.

pub mod acc;
pub mod agent;
pub mod agent_env;
pub mod bbr;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod hpcc;
pub mod hystart;
pub mod ledbat;
pub mod prague;
pub mod python;
pub mod reno;
pub mod swift;
pub mod vegas;
pub mod vivace;

use crate::telemetry::Telemetry;
use crate::transport::rate_sample::RateSample;
use crate::units::{Duration, Rate, Time};

/// A segment the transport has just sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSample {
    /// Segment number.
    pub seq: u64,
    /// Its size on the wire.
    pub bytes: u64,
    /// Bytes in flight before it was sent.
    pub in_flight: u64,
    /// It was sent before (a repair).
    pub retransmission: bool,
}

/// What the transport took as a sign of congestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// Three duplicate ACKs: the transport enters fast recovery and retransmits.
    Loss,
    /// An ECN echo, at most once per RTT (RFC 3168 §6.1.2): no retransmission.
    Ecn,
    /// The retransmission timer fired: the transport goes back N.
    Timeout,
}

/// One congestion event: what happened and the bytes in flight when it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionEvent {
    pub kind: Congestion,
    /// FlightSize: bytes sent and not cumulatively acknowledged (RFC 5681's, for ssthresh).
    pub in_flight: u64,
    /// Bytes believed still in the network: on a loss, FlightSize less what the duplicate
    /// ACKs say arrived (RFC 6675's `pipe` with SACK; FlightSize − 3 segments without); on
    /// an ECN echo, FlightSize; on a timeout, 0. Packet-conserving controllers (BBR) use it.
    pub pipe: u64,
}

impl CongestionEvent {
    /// An event with the pipe of an ECN echo or a timeout (FlightSize, or 0 on a timeout).
    pub fn new(kind: Congestion, in_flight: u64) -> CongestionEvent {
        let pipe = if kind == Congestion::Timeout {
            0
        } else {
            in_flight
        };
        CongestionEvent {
            kind,
            in_flight,
            pipe,
        }
    }
}

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
    /// With Accurate ECN feedback (an L4S flow): the CE-marked segments fed back since the
    /// last ACK of new data (RFC 9768's d.cep, summed); `None` with RFC 3168's echo.
    pub ce_segments: Option<u64>,
    /// The one-way delay the ACK reports: from when the data segment it echoes was sent to
    /// when the receiver sent the ACK (clocks agree in a simulation; delay-based controllers
    /// use it against its minimum, as LEDBAT does, so an offset between clocks cancels).
    pub one_way_delay: Option<Duration>,
    /// The delivery-rate sample this ACK yields, for controllers that ask for samples
    /// ([`CongestionController::wants_rate_samples`]) and when the ACK gives a valid one.
    pub rate: Option<RateSample>,
}

#[cfg(test)]
impl AckSample {
    /// An ACK of `bytes` with the RTT sample `rtt` and nothing else (for controllers' tests).
    pub(crate) fn of(bytes: u64, rtt: Option<Duration>) -> AckSample {
        AckSample {
            acked_bytes: bytes,
            rtt,
            in_flight: 0,
            in_recovery: false,
            highest_sent: 0,
            cumulative_ack: 0,
            ecn_echo: false,
            ce_segments: None,
            one_way_delay: None,
            rate: None,
        }
    }
}

/// A congestion controller: a pure state machine over ACK, loss and timeout events.
pub trait CongestionController: Send {
    /// A segment left (the send hook: BBR counts its rounds and app-limited spells here).
    fn on_sent(&mut self, _now: Time, _sent: &SentSample) {}
    /// New data was acknowledged.
    fn on_ack(&mut self, now: Time, ack: &AckSample);
    /// A congestion signal. On `Loss` the controller sets its reduced window (RFC 5681
    /// eq. (4): ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh) and the transport adds
    /// the temporary inflation of fast recovery on top; on `Ecn` it reduces as for a loss
    /// (RFC 3168 §6.1.2); on `Timeout` ssthresh as for a loss and cwnd = one segment (RFC 5681
    /// §3.1).
    fn on_congestion_event(&mut self, now: Time, event: &CongestionEvent);
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
    /// A pacing rate, for controllers that pace; window-only controllers return `None`. The
    /// transport's [`Pacer`](crate::transport::pacer::Pacer) spaces its segments at this rate.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// Whether the controller wants a delivery-rate sample with each ACK (BBR does); the
    /// transport keeps per-segment send records only for those that do.
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// The controller's own estimate of its backlog in the network (bytes), if it has one.
    fn accumulation(&self) -> Option<f64> {
        None
    }
    /// The controller's estimate of the round-trip propagation delay, if it keeps one.
    fn base_rtt(&self) -> Option<Duration> {
        None
    }
    /// The in-band telemetry of the data packet the next ACK echoes (HPCC), given just before
    /// that ACK's `on_ack` (if it acknowledges new data).
    fn on_telemetry(&mut self, _now: Time, _int: &Telemetry) {}
    /// When the controller wants [`on_timer`](Self::on_timer) called, if it does (a timer of
    /// its own beside the transport's, e.g. a Python controller's monitor interval).
    fn timer(&self) -> Option<Time> {
        None
    }
    /// Its timer expired; after this, `timer` must be later than `now` or `None`.
    fn on_timer(&mut self, _now: Time) {}
    /// Its own state variables for flows.csv, beside the slow-start threshold and pacing rate
    /// every TCP sender reports (CUBIC's W_max, DCTCP's α, BBR's state): the same names at
    /// every call, from the first.
    fn state(&self, _out: &mut crate::transport::CcState) {}
}

/// A boxed controller is a controller: a transport holds its controller by value
/// (`TcpSender<C>`, the controller then in the sender's own memory, not behind a pointer),
/// or, where the kind is chosen at run time, boxed.
impl<T: CongestionController + ?Sized> CongestionController for Box<T> {
    fn on_sent(&mut self, now: Time, sent: &SentSample) {
        (**self).on_sent(now, sent)
    }
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        (**self).on_ack(now, ack)
    }
    fn on_congestion_event(&mut self, now: Time, event: &CongestionEvent) {
        (**self).on_congestion_event(now, event)
    }
    fn on_recovery_end(&mut self, now: Time) {
        (**self).on_recovery_end(now)
    }
    fn window(&self) -> u64 {
        (**self).window()
    }
    fn in_slow_start(&self) -> bool {
        (**self).in_slow_start()
    }
    fn ssthresh(&self) -> Option<u64> {
        (**self).ssthresh()
    }
    fn pacing_rate(&self) -> Option<Rate> {
        (**self).pacing_rate()
    }
    fn state(&self, out: &mut crate::transport::CcState) {
        (**self).state(out)
    }
    fn wants_rate_samples(&self) -> bool {
        (**self).wants_rate_samples()
    }
    fn accumulation(&self) -> Option<f64> {
        (**self).accumulation()
    }
    fn base_rtt(&self) -> Option<Duration> {
        (**self).base_rtt()
    }
    fn on_telemetry(&mut self, now: Time, int: &Telemetry) {
        (**self).on_telemetry(now, int)
    }
    fn timer(&self) -> Option<Time> {
        (**self).timer()
    }
    fn on_timer(&mut self, now: Time) {
        (**self).on_timer(now)
    }
}
