//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control): the L4S sender. A scalable
//! controller — DCTCP's reaction to the extent of marking — with the L4S identifier ECT(1)
//! (RFC 9331 §4.1) and Accurate ECN feedback (RFC 9768), less dependence on the RTT, and
//! pacing.
//!
//! - ECN: packets go out ECT(1); the receiver feeds back the CE-marked packets with AccECN's
//!   ACE counter (transport/tcp), so the sender learns how many of the segments each ACK
//!   acknowledges were marked, not only whether some were (draft §2.2.1: "Prague MUST use
//!   AccECN").
//! - α, the marked fraction, is DCTCP's moving average (RFC 8257 §3.3, g = 1/16) over each
//!   round trip, from the segments marked (AccECN) over the segments acknowledged; one reduction
//!   per round trip with CE feedback, cwnd ← cwnd·(1 − α/2) (draft §2.3.1).
//! - Additive increase (draft §2.3.5, "reduced RTT dependence"): below the reference RTT
//!   (`rtt_target`, 25 ms) a round trip adds (RTT/rtt_target)² segments rather than one, so a
//!   short-RTT flow's rate grows per second as fast as a 25 ms flow's, no faster: flows of
//!   different RTTs converge to closer shares.
//! - Loss and timeouts: Reno's (draft §2.3.3: a loss halves the window as a classic flow's).
//! - Slow start: Reno's, left at the first reduction (a CE mark or a loss).
//! - Pacing (draft §2.1.1): at cwnd/sRTT × 2 in slow start and × 1.2 after, Linux's
//!   `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`; unpaced until the first RTT sample.
//!
//! Departures: no detection of a classic ECN AQM on the path (draft §2.3.4, optional): over a
//! single-queue RFC 3168 AQM this Prague is as aggressive as DCTCP there. α starts at 1 (as
//! DCTCP's, `dctcp_alpha_on_init`). The byte counters of the AccECN option are not sent: the
//! ACE packet counter alone, with RFC 9768 Appendix A.2's safety rule against its wrap.

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{in_range, FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};
use std::ops::Bound::{Excluded, Included};

/// Prague's state.
#[derive(Clone, Debug)]
pub struct Prague {
    mss: f64,
    cwnd: f64,
    ssthresh: f64,
    g: f64,
    alpha: f64,
    rtt_target: Duration,
    /// The smoothed RTT (RFC 6298's 1/8 gain), `None` before the first sample.
    srtt: Option<Duration>,
    /// The round trip ends when the cumulative ACK passes this segment.
    round_end: Option<u64>,
    acked_segments: u64,
    marked_segments: u64,
}

impl Prague {
    pub fn new(mss: u64, initial_window: u64, g: f64, rtt_target: Duration) -> Prague {
        Prague {
            mss: mss as f64,
            cwnd: (initial_window.max(1) * mss) as f64,
            ssthresh: f64::INFINITY,
            g,
            alpha: 1.0,
            rtt_target,
            srtt: None,
            round_end: None,
            acked_segments: 0,
            marked_segments: 0,
        }
    }

    /// The marked fraction's moving average.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// RFC 8257 §3.3 over a round trip, in segments: α ← (1 − g)·α + g·M.
    fn observe(&mut self, ack: &AckSample) {
        let acked = (ack.acked_bytes as f64 / self.mss).round() as u64;
        self.acked_segments += acked.max(1);
        // With AccECN, the marks themselves; without (a path that bleached ECT(1)), DCTCP's
        // echo of the acknowledged segments.
        self.marked_segments += match ack.ce_segments {
            Some(n) => n.min(acked.max(1)),
            None if ack.ecn_echo => acked.max(1),
            None => 0,
        };
        let Some(end) = self.round_end else {
            self.round_end = Some(ack.highest_sent);
            return;
        };
        if ack.cumulative_ack <= end {
            return;
        }
        let m = self.marked_segments as f64 / self.acked_segments.max(1) as f64;
        self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
        self.round_end = Some(ack.highest_sent);
        self.acked_segments = 0;
        self.marked_segments = 0;
    }

    /// Segments a round trip adds in congestion avoidance: 1 at or above the reference RTT,
    /// (RTT/rtt_target)² below it (draft §2.3.5).
    fn additive_increase(&self) -> f64 {
        match self.srtt {
            Some(r) if r < self.rtt_target => {
                (r.as_secs_f64() / self.rtt_target.as_secs_f64()).powi(2)
            }
            _ => 1.0,
        }
    }
}

impl CongestionController for Prague {
    fn on_ack(&mut self, _now: Time, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            // RFC 6298 §2.3: SRTT ← 7/8·SRTT + 1/8·R'.
            self.srtt = Some(match self.srtt {
                None => r,
                Some(s) => Duration((s.0 * 7 + r.0) / 8),
            });
        }
        self.observe(ack);
        if ack.in_recovery {
            return;
        }
        let acked = ack.acked_bytes as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked; // slow start, counting the bytes acknowledged
        } else {
            // An `ai`-segment increase spread over a window of ACKs.
            self.cwnd += self.additive_increase() * self.mss * acked / self.cwnd;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        let floor = 2.0 * self.mss;
        match ev.kind {
            // Draft §2.3.1 (RFC 8257 §3.3 step 8): once per round trip (the transport's
            // rule), cwnd ← cwnd·(1 − α/2).
            Congestion::Ecn => {
                self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(floor);
                self.ssthresh = self.cwnd;
            }
            // Draft §2.3.3: a loss as Reno's (RFC 5681 eq. (4)).
            Congestion::Loss => {
                self.ssthresh = (ev.in_flight as f64 / 2.0).max(floor);
                self.cwnd = self.ssthresh;
            }
            Congestion::Timeout => {
                self.ssthresh = (ev.in_flight as f64 / 2.0).max(floor);
                self.cwnd = self.mss;
            }
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    fn ssthresh(&self) -> Option<u64> {
        self.ssthresh.is_finite().then_some(self.ssthresh as u64)
    }

    fn pacing_rate(&self) -> Option<Rate> {
        let Some(srtt) = self.srtt.filter(|r| r.0 > 0) else {
            return Some(Rate::from_bps(1_000_000_000_000_000)); // no RTT yet: unpaced
        };
        // Linux's tcp_update_pacing_rate: 200% of cwnd/sRTT in slow start, 120% after.
        let ratio = if self.in_slow_start() { 2.0 } else { 1.2 };
        let bps = ratio * self.cwnd * 8.0 / srtt.as_secs_f64();
        Some(Rate::from_bps((bps as u64).max(1)))
    }
}

tcp_scheme_params! {
    /// `prague` parameters.
    pub struct PragueParams {
        /// g, the weight of each round trip's marked fraction in α (RFC 8257: 1/16), in (0, 1].
        pub g: f64 = 1.0 / 16.0,
        /// The reference RTT below which the additive increase shrinks with RTT² (draft §2.3.5:
        /// 25 ms).
        pub rtt_target: Duration = Duration::from_millis(25),
    }
    sack = true;
}

impl SchemeParams for PragueParams {
    fn ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Result<(), ParamError> {
        in_range("g", self.g, (Excluded(0.0), Included(1.0)))?;
        if self.rtt_target == Duration::ZERO {
            return Err(ParamError::at(
                "rtt_target",
                "prague `rtt_target` must be above 0",
            ));
        }
        self.tcp(true).validate("prague")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Prague::new(
            ctx.packet_size as u64,
            self.initial_window,
            self.g,
            self.rtt_target,
        );
        let mut tcp = self.tcp(true);
        tcp.l4s = true;
        tcp.endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(cumulative: u64, highest: u64, marked: u64, rtt_ms: u64) -> AckSample {
        AckSample {
            highest_sent: highest,
            cumulative_ack: cumulative,
            ecn_echo: marked > 0,
            ce_segments: Some(marked),
            ..AckSample::of(MSS, Some(Duration::from_millis(rtt_ms)))
        }
    }

    #[test]
    fn alpha_follows_the_marked_segments_fed_back() {
        let mut p = Prague::new(MSS, 10, 1.0 / 16.0, Duration::from_millis(25));
        p.on_ack(Time::ZERO, &ack(1, 10, 0, 10)); // opens a round ending at 10
        for s in 2..=10 {
            p.on_ack(Time::ZERO, &ack(s, 20, u64::from(s % 2 == 0), 10));
        }
        p.on_ack(Time::ZERO, &ack(11, 20, 0, 10));
        // 5 of the round's 11 segments marked.
        let want = 15.0 / 16.0 + (5.0 / 11.0) / 16.0;
        assert!((p.alpha() - want).abs() < 1e-12, "{}", p.alpha());
    }

    #[test]
    fn a_mark_cuts_by_half_alpha_a_loss_halves_and_the_increase_scales_with_rtt_squared() {
        let mut p = Prague::new(MSS, 100, 1.0 / 16.0, Duration::from_millis(25));
        p.alpha = 0.2;
        p.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Ecn, 100_000));
        assert_eq!(p.window(), 90_000);
        assert!(!p.in_slow_start());
        // A window of ACKs at 5 ms adds (5/25)² = 0.04 segments; at 50 ms, one.
        let mut short = p.clone();
        let w = short.cwnd;
        for s in 0..90 {
            short.on_ack(Time::ZERO, &ack(s + 1, 1000, 0, 5));
        }
        let grown = (short.cwnd - w) / MSS as f64;
        assert!((grown - 0.04).abs() < 0.002, "{grown}");
        let mut long = p.clone();
        for s in 0..90 {
            long.on_ack(Time::ZERO, &ack(s + 1, 1000, 0, 50));
        }
        let grown = (long.cwnd - w) / MSS as f64;
        assert!((grown - 1.0).abs() < 0.02, "{grown}");
        p.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Loss, 80_000));
        assert_eq!(p.window(), 40_000);
        p.on_congestion_event(
            Time::ZERO,
            &CongestionEvent::new(Congestion::Timeout, 40_000),
        );
        assert_eq!(p.window(), MSS);
    }

    #[test]
    fn pacing_is_twice_then_1_2_times_cwnd_over_srtt() {
        let mut p = Prague::new(MSS, 10, 1.0 / 16.0, Duration::from_millis(25));
        assert!(p.pacing_rate().unwrap().bps() >= 1_000_000_000_000);
        p.on_ack(Time::ZERO, &ack(1, 10, 0, 10));
        // 11 segments in slow start over 10 ms, doubled: 17.6 Mb/s.
        assert_eq!(p.pacing_rate().unwrap().bps(), 17_600_000);
        p.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Loss, 10_000));
        assert_eq!(p.pacing_rate().unwrap().bps(), 4_800_000); // 5 segments, ×1.2
    }
}
