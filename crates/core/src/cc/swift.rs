//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020 — short key `swift` in docs/references.md): AIMD on the
//! window against a target delay. Below the target the window grows by `ai` segments per RTT;
//! above it, at most once per RTT, it shrinks in proportion to how far the delay is past the
//! target, by at most `max_mdf` (Algorithm 1). The target is a base, plus a per-hop part
//! (topology scaling, §3.4) and a part that shrinks as the window grows (flow-based scaling,
//! §3.5: α/√cwnd + β, clamped to [0, fs_range]), so that many flows sharing a link each sit
//! at a small window without the queue growing with their number. A window below one segment
//! is kept by pacing: one segment every RTT / cwnd (§3.3).
//!
//! Departures (each stated where it is made):
//! - One delay, the RTT the timestamps give; the paper splits it into fabric and endpoint
//!   (NIC-to-NIC and host) delays with NIC timestamps, each with its own target and window.
//!   acclab's hosts add no delay of their own, so the endpoint part is zero and the fabric
//!   window is the window.
//! - The hop count is the length of the flow's path as the scenario routes it (the paper reads
//!   it from the TTL of the ACKed packet).
//! - The defaults are the ones htsim's Swift (csg-htsim `swift.cpp`) uses, which its authors
//!   mark as guesses: the paper publishes the algorithm, not its production values. Base
//!   target 20 µs, h = base / 6.55 per hop, fs_range = 5 × base, fs_min_cwnd 0.1, fs_max_cwnd
//!   100 segments, ai 1, β 0.8, max_mdf 0.5, retransmit reset threshold 5.
//! - Window changes are made on ACKs of new data; duplicate ACKs leave the window to loss
//!   recovery (the transport's), and a fast retransmit is a decrease by max_mdf at most once
//!   per RTT (Algorithm 1's "On Fast Recovery").
//! - At a window of one segment or more the transport paces at the largest rate (a 1 ns gap
//!   per packet at most), i.e. not at all, as the paper's window mode.

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};

/// Swift's state: the window in segments (fractional), and when it last decreased.
#[derive(Clone, Debug)]
pub struct Swift {
    mss: f64,
    p: SwiftParams,
    /// Links on the flow's path (topology scaling, §3.4).
    hops: u32,
    /// The window, segments; below 1 the transport paces (§3.3).
    cwnd: f64,
    /// Flow-based scaling's α and β (§3.5), seconds.
    fs_alpha: f64,
    fs_beta: f64,
    retransmits: u32,
    last_decrease: Option<Time>,
    /// A smoothed RTT (RFC 6298's gain 1/8): what "once per RTT" and the pacing gap use.
    srtt: Option<Duration>,
}

impl Swift {
    pub fn new(mss: u64, p: &SwiftParams, hops: u32) -> Swift {
        let range = p.fs_range.as_secs_f64();
        // §3.5: α = fs_range / (1/√fs_min_cwnd − 1/√fs_max_cwnd), β = −α / √fs_max_cwnd, so
        // that the flow part is fs_range at fs_min_cwnd and 0 at fs_max_cwnd.
        let fs_alpha = range / (1.0 / p.fs_min_cwnd.sqrt() - 1.0 / p.fs_max_cwnd.sqrt());
        Swift {
            mss: mss as f64,
            hops,
            cwnd: p.initial_window as f64,
            fs_alpha,
            fs_beta: -fs_alpha / p.fs_max_cwnd.sqrt(),
            retransmits: 0,
            last_decrease: None,
            srtt: None,
            p: p.clone(),
        }
    }

    /// The window in segments, fractional.
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd
    }

    /// The target delay at the current window: base + hops · h + the flow part (§3.4, §3.5).
    pub fn target_delay(&self) -> Duration {
        let flow = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta)
            .clamp(0.0, self.p.fs_range.as_secs_f64());
        let topology = self.p.hop_scale.as_secs_f64() * f64::from(self.hops);
        Duration::from_secs_f64(self.p.base_target.as_secs_f64() + topology + flow)
    }

    /// Algorithm 1's `can_decrease`: the last decrease is at least an RTT old.
    fn can_decrease(&self, now: Time) -> bool {
        match (self.last_decrease, self.srtt) {
            (Some(at), Some(rtt)) => now - at >= rtt,
            _ => true,
        }
    }

    /// cwnd ← factor · cwnd, at most once per RTT; then clamped.
    fn decrease(&mut self, now: Time, factor: f64) {
        if self.can_decrease(now) {
            self.cwnd *= factor;
            self.last_decrease = Some(now);
        }
        self.clamp();
    }

    /// Algorithm 1: cwnd within [min_cwnd, max_cwnd].
    fn clamp(&mut self) {
        self.cwnd = self.cwnd.clamp(self.p.min_cwnd, self.p.max_cwnd);
    }
}

impl CongestionController for Swift {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        let Some(delay) = ack.rtt else { return };
        self.srtt = Some(match self.srtt {
            None => delay,
            Some(s) => Duration((s.0 * 7 + delay.0) / 8),
        });
        // Algorithm 1, "On Receiving ACK".
        self.retransmits = 0;
        let target = self.target_delay();
        let acked = ack.acked_bytes as f64 / self.mss;
        if delay < target {
            // Additive increase: ai segments per RTT, or per ACKed segment below one.
            if self.cwnd >= 1.0 {
                self.cwnd += self.p.ai / self.cwnd * acked;
            } else {
                self.cwnd += self.p.ai * acked;
            }
            self.clamp();
        } else {
            // Multiplicative decrease in proportion to the excess delay.
            let d = delay.as_secs_f64();
            let excess = (d - target.as_secs_f64()) / d;
            let factor = (1.0 - self.p.beta * excess).max(1.0 - self.p.max_mdf);
            self.decrease(now, factor);
        }
    }

    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        match ev.kind {
            // Algorithm 1, "On Fast Recovery".
            Congestion::Loss => {
                self.retransmits = 0;
                self.decrease(now, 1.0 - self.p.max_mdf);
            }
            // Algorithm 1, "On Retransmit Timeout": after RETX_RESET_THRESHOLD timeouts in a
            // row the window starts again from the minimum.
            Congestion::Timeout => {
                self.retransmits += 1;
                if self.retransmits >= self.p.retransmit_reset {
                    self.cwnd = self.p.min_cwnd;
                } else {
                    self.decrease(now, 1.0 - self.p.max_mdf);
                }
            }
            // Swift reads delay, not marks (its packets are not ECN-capable).
            Congestion::Ecn => {}
        }
    }

    fn window(&self) -> u64 {
        // Below one segment the window is one segment and the pacing rate does the rest.
        (self.cwnd.max(1.0) * self.mss) as u64
    }

    fn pacing_rate(&self) -> Option<Rate> {
        // §3.3: with cwnd < 1, one segment every RTT / cwnd.
        match self.srtt {
            Some(rtt) if self.cwnd < 1.0 && rtt > Duration::ZERO => {
                let bps = self.cwnd * self.mss * 8.0 / rtt.as_secs_f64();
                Some(Rate::from_bps((bps as u64).max(1)))
            }
            _ => Some(crate::params::MAX_RATE),
        }
    }
}

tcp_scheme_params! {
    /// `swift` parameters (defaults: see the module header).
    pub struct SwiftParams {
        /// The base target delay (the RTT of an unloaded one-hop path plus headroom).
        pub base_target: Duration = Duration::from_micros(20),
        /// Target delay added per hop of the flow's path (§3.4): base / 6.55.
        pub hop_scale: Duration = Duration(20_000 * 100 / 655),
        /// The flow part's range: the target delay added at fs_min_cwnd (§3.5).
        pub fs_range: Duration = Duration::from_micros(100),
        /// The window, segments, at which the flow part is fs_range, in (0, fs_max_cwnd).
        pub fs_min_cwnd: f64 = 0.1,
        /// The window, segments, from which the flow part is zero.
        pub fs_max_cwnd: f64 = 100.0,
        /// Additive increase, segments per RTT, > 0.
        pub ai: f64 = 1.0,
        /// β: the decrease per unit of relative excess delay, in (0, 1].
        pub beta: f64 = 0.8,
        /// The largest decrease at once, a fraction of the window in (0, 1).
        pub max_mdf: f64 = 0.5,
        /// Timeouts in a row after which the window restarts at min_cwnd, ≥ 1.
        pub retransmit_reset: u32 = 5,
        /// The smallest window, segments (> 0: below one the flow is paced).
        pub min_cwnd: f64 = 0.001,
        /// The largest window, segments.
        pub max_cwnd: f64 = 1000.0,
    }
    sack = true;
}

impl SchemeParams for SwiftParams {
    fn validate(&self) -> Result<(), ParamError> {
        let check = |ok: bool, key: &str, range: &str, v: String| match ok {
            true => Ok(()),
            false => Err(ParamError::at(
                key,
                format!("swift `{key}` must be in {range}, not {v}"),
            )),
        };
        check(
            self.base_target > Duration::ZERO,
            "base_target",
            "(0, ∞)",
            format!("{}", self.base_target),
        )?;
        check(
            self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd,
            "fs_min_cwnd",
            "(0, fs_max_cwnd)",
            self.fs_min_cwnd.to_string(),
        )?;
        check(
            self.fs_max_cwnd.is_finite(),
            "fs_max_cwnd",
            "(fs_min_cwnd, ∞)",
            self.fs_max_cwnd.to_string(),
        )?;
        check(
            self.ai > 0.0 && self.ai.is_finite(),
            "ai",
            "(0, ∞)",
            self.ai.to_string(),
        )?;
        check(
            self.beta > 0.0 && self.beta <= 1.0,
            "beta",
            "(0, 1]",
            self.beta.to_string(),
        )?;
        check(
            self.max_mdf > 0.0 && self.max_mdf < 1.0,
            "max_mdf",
            "(0, 1)",
            self.max_mdf.to_string(),
        )?;
        check(
            self.retransmit_reset >= 1,
            "retransmit_reset",
            "[1, 2^32)",
            self.retransmit_reset.to_string(),
        )?;
        check(
            self.min_cwnd > 0.0 && self.min_cwnd <= self.max_cwnd,
            "min_cwnd",
            "(0, max_cwnd]",
            self.min_cwnd.to_string(),
        )?;
        check(
            self.max_cwnd.is_finite() && self.max_cwnd <= 1e9,
            "max_cwnd",
            "[min_cwnd, 1e9]",
            self.max_cwnd.to_string(),
        )?;
        self.tcp(false).validate("swift")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Swift::new(ctx.packet_size as u64, self, ctx.hops);
        self.tcp(false).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(rtt_us: u64, segments: u64) -> AckSample {
        AckSample::of(segments * MSS, Some(Duration::from_micros(rtt_us)))
    }

    fn swift(initial: u64, hops: u32) -> Swift {
        let p = SwiftParams {
            initial_window: initial,
            ..SwiftParams::default()
        };
        Swift::new(MSS, &p, hops)
    }

    /// §3.4–3.5: the target is base + hops·h + a flow part that is fs_range at fs_min_cwnd,
    /// zero from fs_max_cwnd on, and α/√cwnd + β between.
    #[test]
    fn the_target_scales_with_hops_and_shrinks_as_the_window_grows() {
        let mut s = swift(100, 0);
        assert_eq!(
            s.target_delay(),
            Duration::from_micros(20),
            "flow part 0 at 100"
        );
        s.cwnd = 0.1;
        let t = s.target_delay().as_secs_f64();
        assert!((t - 120e-6).abs() < 1e-9, "base + fs_range at 0.1: {t}");
        s.cwnd = 0.01;
        assert!(
            (s.target_delay().as_secs_f64() - 120e-6).abs() < 1e-9,
            "clamped"
        );
        s.cwnd = 10.0;
        let a = 100e-6 / (1.0 / 0.1f64.sqrt() - 0.1);
        let want = 20e-6 + a / 10f64.sqrt() - a / 10.0;
        assert!((s.target_delay().as_secs_f64() - want).abs() < 1e-9);
        let with_hops = Swift {
            hops: 6,
            ..s.clone()
        };
        let h = SwiftParams::default().hop_scale.as_secs_f64();
        assert!((h - 20e-6 / 6.55).abs() < 1e-9, "base / 6.55, to the ns");
        assert!(
            (with_hops.target_delay().as_secs_f64() - want - 6.0 * h).abs() < 1e-9,
            "6 hops add 6·h"
        );
    }

    /// Algorithm 1: below the target, +ai/cwnd per ACKed segment (ai per RTT); above it, a
    /// cut in proportion to the excess, at most max_mdf, at most once per RTT.
    #[test]
    fn below_target_grows_by_ai_per_rtt_above_cuts_once_per_rtt() {
        let mut s = swift(100, 0); // target 20 µs
        for _ in 0..100 {
            s.on_ack(Time::ZERO, &ack(10, 1));
        }
        assert!((s.cwnd_segments() - 101.0).abs() < 0.01, "{}", s.cwnd);
        // 40 µs against 20: excess 1/2, factor 1 − 0.8·0.5 = 0.6.
        let before = s.cwnd;
        let t = Time(1_000_000);
        s.on_ack(t, &ack(40, 1));
        assert!((s.cwnd / before - 0.6).abs() < 1e-9, "{}", s.cwnd / before);
        // Within the same RTT: no second cut.
        s.on_ack(t + Duration::from_micros(5), &ack(400, 1));
        assert!((s.cwnd / before - 0.6).abs() < 1e-9);
        // An RTT later (the smoothed RTT, with this sample in it, is about 0.55 ms) a huge
        // delay cuts by max_mdf only.
        let c = s.cwnd;
        s.on_ack(t + Duration::from_millis(1), &ack(4000, 1));
        assert!((s.cwnd / c - 0.5).abs() < 1e-9);
    }

    /// §3.3: a window below one segment is paced, one segment per RTT / cwnd; at one or more
    /// the pacing is off (the largest rate).
    #[test]
    fn a_window_below_one_segment_is_paced() {
        let mut s = swift(1, 0);
        s.on_ack(Time::ZERO, &ack(1000, 1)); // far above target: cut to 0.5
        assert!((s.cwnd - 0.5).abs() < 1e-9);
        assert_eq!(s.window(), MSS, "the window stays one segment");
        // srtt 1 ms, cwnd 0.5: 500 B per ms = 4 Mb/s.
        assert_eq!(s.pacing_rate(), Some(Rate::from_bps(4_000_000)));
        let mut big = swift(10, 0);
        big.on_ack(Time::ZERO, &ack(10, 1));
        assert_eq!(big.pacing_rate(), Some(crate::params::MAX_RATE));
    }

    /// Timeouts: a cut by max_mdf, and after retransmit_reset in a row, min_cwnd; an ACK
    /// resets the count.
    #[test]
    fn repeated_timeouts_reset_the_window() {
        let mut s = swift(64, 0);
        let to = CongestionEvent::new(Congestion::Timeout, 0);
        s.on_congestion_event(Time::ZERO, &to);
        assert_eq!(s.cwnd, 32.0);
        for i in 1..5 {
            s.on_congestion_event(Time(i), &to);
        }
        assert_eq!(s.cwnd, 0.001, "the fifth in a row");
        let loss = CongestionEvent::new(Congestion::Loss, 0);
        let mut s = swift(64, 0);
        s.on_congestion_event(Time::ZERO, &loss);
        assert_eq!(s.cwnd, 32.0);
    }

    #[test]
    fn parameters_are_checked() {
        let d = SwiftParams::default;
        for (bad, key) in [
            (SwiftParams { beta: 0.0, ..d() }, "beta"),
            (
                SwiftParams {
                    max_mdf: 1.0,
                    ..d()
                },
                "max_mdf",
            ),
            (
                SwiftParams {
                    fs_min_cwnd: 200.0,
                    ..d()
                },
                "fs_min_cwnd",
            ),
            (
                SwiftParams {
                    ai: f64::NAN,
                    ..d()
                },
                "ai",
            ),
            (
                SwiftParams {
                    min_cwnd: 0.0,
                    ..d()
                },
                "min_cwnd",
            ),
        ] {
            let e = bad.validate().unwrap_err();
            assert_eq!(e.key, key, "{e:?}");
        }
        assert!(d().validate().is_ok());
    }
}
