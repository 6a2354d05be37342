//! TCP Reno window arithmetic (RFC 5681), used under NewReno loss recovery (RFC 6582).
//!
//! Slow start adds one segment per ACK of new data; congestion avoidance adds SMSS·SMSS/cwnd
//! per ACK (RFC 5681 eq. (3)), i.e. about one segment per RTT. Fast retransmit and timeouts set
//! ssthresh = max(FlightSize/2, 2·SMSS) (eq. (4)).
//!
//! Departures: byte counting is off by default (one increment per ACK, not per acknowledged
//! segment, which is what RFC 5681 eq. (3), ns-2's Reno and ns-3's NewReno do); with delayed ACKs
//! that grows the window half as fast as Linux, which counts acknowledged segments. The option
//! `byte_counting` is RFC 3465's Appropriate Byte Counting: slow start adds the bytes an ACK
//! acknowledges up to L = 2 segments (§2.2), congestion avoidance SMSS·bytes_acked/cwnd (§2.1,
//! per ACK rather than once per window of bytes). The window is kept as an f64 so that the
//! 1/cwnd increments of congestion avoidance add up exactly.

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::units::Time;

use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;

/// Reno's window state.
#[derive(Clone, Debug)]
pub struct Reno {
    mss: u64,
    cwnd: f64,
    ssthresh: u64,
    /// RFC 3465 Appropriate Byte Counting.
    byte_counting: bool,
}

impl Reno {
    /// `initial_window` in segments (RFC 5681 allows up to 4; ns-2 uses 1 or 2).
    pub fn new(mss: u64, initial_window: u64) -> Reno {
        Reno {
            mss,
            cwnd: (initial_window.max(1) * mss) as f64,
            ssthresh: u64::MAX,
            byte_counting: false,
        }
    }

    /// With RFC 3465's Appropriate Byte Counting (L = 2 segments) instead of one increment per
    /// ACK.
    pub fn with_byte_counting(mut self, on: bool) -> Reno {
        self.byte_counting = on;
        self
    }

    /// Sets ssthresh and cwnd to `bytes` (at least two segments): a reduction decided by a
    /// controller that uses Reno's window growth with a reaction of its own (DCTCP).
    pub fn reduce_to(&mut self, bytes: u64) {
        self.ssthresh = bytes.max(2 * self.mss);
        self.cwnd = self.ssthresh as f64;
    }

    fn reduced(&self, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * self.mss) // RFC 5681 eq. (4)
    }
}

impl CongestionController for Reno {
    fn on_ack(&mut self, _now: Time, ack: &AckSample) {
        if ack.in_recovery {
            return;
        }
        let (mss, acked) = (self.mss as f64, ack.acked_bytes as f64);
        if (self.cwnd as u64) < self.ssthresh {
            // Slow start: RFC 5681 eq. (2); with byte counting RFC 3465 §2.2, L = 2·SMSS.
            let limit = if self.byte_counting { 2.0 * mss } else { mss };
            self.cwnd += limit.min(acked);
        } else if self.byte_counting {
            self.cwnd += mss * acked / self.cwnd; // RFC 3465 §2.1, spread over the ACKs
        } else {
            self.cwnd += mss * mss / self.cwnd; // RFC 5681 eq. (3)
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        self.ssthresh = self.reduced(ev.in_flight); // RFC 5681 eq. (4)
        self.cwnd = match ev.kind {
            // RFC 5681 §3.2 step 2 (loss) and RFC 3168 §6.1.2 (ECN: as for a loss).
            Congestion::Loss | Congestion::Ecn => self.ssthresh as f64,
            Congestion::Timeout => self.mss as f64, // RFC 5681 §3.1: LW = 1 segment
        };
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn in_slow_start(&self) -> bool {
        (self.cwnd as u64) < self.ssthresh
    }

    fn ssthresh(&self) -> Option<u64> {
        Some(self.ssthresh)
    }
}

tcp_scheme_params! {
    /// `reno` parameters.
    pub struct RenoParams {
        /// React to ECN echoes (halve once per RTT) and send ECN-capable packets.
        pub ecn: bool = false,
    }
    sack = false;
    then {
        /// RFC 3465 Appropriate Byte Counting (L = 2): grow by the bytes each ACK acknowledges,
        /// as Linux does; off: one increment per ACK (RFC 5681 eq. (3), ns-2, ns-3).
        pub byte_counting: bool = false,
    }
}

impl SchemeParams for RenoParams {
    fn ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        self.tcp(self.ecn).validate("reno")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Reno::new(ctx.packet_size as u64, self.initial_window)
            .with_byte_counting(self.byte_counting);
        self.tcp(self.ecn).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(kind: Congestion, in_flight: u64) -> CongestionEvent {
        CongestionEvent::new(kind, in_flight)
    }

    fn ack(bytes: u64) -> AckSample {
        AckSample::of(bytes, None)
    }

    #[test]
    fn slow_start_doubles_per_window() {
        let mut r = Reno::new(1000, 1);
        for _ in 0..7 {
            r.on_ack(Time::ZERO, &ack(1000));
        }
        assert_eq!(r.window(), 8000);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut r = Reno::new(1000, 10);
        r.on_congestion_event(Time::ZERO, &loss(Congestion::Loss, 20_000)); // ssthresh = cwnd = 10 segments
        assert_eq!(r.window(), 10_000);
        for _ in 0..10 {
            r.on_ack(Time::ZERO, &ack(1000));
        }
        assert!((r.window() as i64 - 11_000).abs() <= 50, "{}", r.window());
    }

    /// RFC 3465: an ACK of two segments (a delayed ACK) counts twice, in slow start up to
    /// L = 2 segments per ACK, and in congestion avoidance in proportion.
    #[test]
    fn byte_counting_grows_per_acknowledged_segment() {
        let mut plain = Reno::new(1000, 1);
        let mut abc = Reno::new(1000, 1).with_byte_counting(true);
        for r in [&mut plain, &mut abc] {
            r.on_ack(Time::ZERO, &ack(2000));
            r.on_ack(Time::ZERO, &ack(3000));
        }
        assert_eq!((plain.window(), abc.window()), (3000, 5000));
        for r in [&mut plain, &mut abc] {
            r.on_congestion_event(Time::ZERO, &loss(Congestion::Loss, 20_000));
            for _ in 0..5 {
                r.on_ack(Time::ZERO, &ack(2000));
            }
        }
        // Ten segments acknowledged by five ACKs: one segment with byte counting, half without.
        assert!(
            (abc.window() as i64 - 11_000).abs() <= 50,
            "{}",
            abc.window()
        );
        assert!(
            (plain.window() as i64 - 10_500).abs() <= 50,
            "{}",
            plain.window()
        );
    }

    #[test]
    fn losses_halve_and_timeouts_collapse() {
        let mut r = Reno::new(1000, 1);
        r.on_congestion_event(Time::ZERO, &loss(Congestion::Loss, 3000));
        assert_eq!(r.window(), 2000, "ssthresh floor is two segments");
        r.on_congestion_event(Time::ZERO, &loss(Congestion::Timeout, 50_000));
        assert_eq!((r.window(), r.ssthresh()), (1000, Some(25_000)));
    }

    #[test]
    fn no_growth_during_recovery() {
        let mut r = Reno::new(1000, 4);
        let mut a = ack(1000);
        a.in_recovery = true;
        r.on_ack(Time::ZERO, &a);
        assert_eq!(r.window(), 4000);
    }
}
