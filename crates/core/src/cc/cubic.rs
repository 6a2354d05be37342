//! CUBIC (RFC 9438), under the transport's NewReno loss recovery.
//!
//! In congestion avoidance the window follows W_cubic(t) = C·(t − K)³ + W_max (eq. (1)), t being
//! the time since the current congestion-avoidance stage began and K the time the curve takes
//! back to W_max (eq. (2)). Each ACK moves cwnd towards W_cubic(t + RTT), clamped to
//! [cwnd, 1.5·cwnd] (§4.2), unless the Reno-friendly estimate W_est is larger (§4.3). A loss or
//! an ECN echo sets ssthresh = β·FlightSize with β = 0.7 (§4.6) and, with fast convergence,
//! releases bandwidth by lowering W_max when the window is still below the previous one
//! (§4.7). Windows are in segments in the equations, as in the RFC, and in bytes elsewhere.
//!
//! Departures, all deliberate:
//! - ssthresh is β·cwnd, as Linux computes it, not β·FlightSize as the RFC's pseudocode
//!   does (§4.6 allows cwnd for implementations that keep cwnd from growing while
//!   application-limited; acclab's senders are bulk or finite transfers). With SACK recovery
//!   FlightSize includes every segment lost in a lossy recovery and can exceed cwnd.
//! - Each ACK's increment is scaled by the segments it acknowledges (as Linux's
//!   `tcp_cong_avoid_ai` and W_est's `segments_acked` do), so delayed ACKs do not slow growth.
//! - Slow start is the transport's standard one (one segment per ACK, as this crate's Reno),
//!   optionally with HyStart++ (RFC 9406, `hystart = true`; off by default, as ns-3's TcpCubic
//!   has its own HyStart, and Linux's is the older delay/ACK-train HyStart, not HyStart++).
//! - No spurious-congestion undo (§4.9): the transport detects no spurious events; no
//!   application-limited epoch shift (bulk and finite transfers only, §5.8 of Linux's cubic).
//! - RTT in W_cubic(t + RTT) is the smoothed RTT (RFC 6298's filter, α = 1/8) of the ACKs'
//!   samples; Linux uses the minimum RTT.
//!
//! `linux = true` runs Linux's tcp_cubic.c arithmetic instead (see [`Linux`]): whole segments,
//! ssthresh = ⌊cwnd·717/1024⌋, the window one segment per `cnt` acknowledged segments, W_est
//! (`tcp_cwnd`) at α_cubic throughout — Linux never switches to α = 1 as §4.3 does — and the
//! cubic curve from the minimum RTT. At the small windows of a shared 20 Mb/s link these make
//! Linux's sawtooth slower than the RFC's (docs/reference.md, real stacks: 4 flows, 0.53 s against
//! 0.42 s between reductions). Not modelled of Linux: the once-per-jiffy recomputation of the
//! curve (`cnt` is recomputed on every ACK but for the 1/32-s hold below), HyStart (its own,
//! not HyStart++), the application-limited epoch shift, and PRR's window during recovery.

use super::hystart::{HyStart, Phase, CSS_GROWTH_DIVISOR};
use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{positive, FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Time};

/// CUBIC's constants and options.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicSettings {
    pub mss: u64,
    pub initial_window: u64,
    /// C, segments/s³ (RFC 9438 §5: 0.4).
    pub c: f64,
    /// β_cubic, the multiplicative decrease factor (§4.6: 0.7).
    pub beta: f64,
    /// Fast convergence (§4.7), on by default.
    pub fast_convergence: bool,
    /// HyStart++ (RFC 9406) in the initial slow start.
    pub hystart: bool,
    /// The Reno-friendly region (§4.3), on by default as in the RFC and Linux (whose
    /// `tcp_friendliness` module parameter turns it off); ns-3.37's TcpCubic has none.
    pub reno_friendly: bool,
    /// Linux's tcp_cubic.c arithmetic instead of the RFC's (see the header).
    pub linux: bool,
}

/// CUBIC's window state.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicSettings,
    /// Congestion window, bytes.
    cwnd: f64,
    ssthresh: u64,
    /// W_max, segments; `None` before the first congestion event and after a timeout (§4.8,
    /// §4.10: then W_max is the window at the start of congestion avoidance and K = 0).
    w_max: Option<f64>,
    /// cwnd before the last reduction, segments (W_est's α switches to 1 beyond it, §4.3).
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance stage, and K for it (seconds).
    epoch: Option<(Time, f64)>,
    /// W_est, the Reno-friendly window, segments (§4.3).
    w_est: f64,
    srtt: Option<Duration>,
    hystart: Option<HyStart>,
    /// Linux's state, with `linux = true`.
    linux: Option<Linux>,
}

impl Cubic {
    pub fn new(cfg: CubicSettings) -> Cubic {
        Cubic {
            cwnd: (cfg.initial_window.max(1) * cfg.mss) as f64,
            ssthresh: u64::MAX,
            w_max: None,
            cwnd_prior: 0.0,
            epoch: None,
            w_est: 0.0,
            srtt: None,
            hystart: cfg.hystart.then(HyStart::default),
            linux: cfg.linux.then(Linux::default),
            cfg,
        }
    }

    fn segments(&self) -> f64 {
        self.cwnd / self.cfg.mss as f64
    }

    /// RFC 9438 eq. (1): W_cubic(t) = C·(t − K)³ + W_max.
    fn w_cubic(&self, t: f64, k: f64, w_max: f64) -> f64 {
        self.cfg.c * (t - k).powi(3) + w_max
    }

    /// §4.3 eq. (3): α_cubic = 3(1 − β)/(1 + β), TCP-friendly with Reno's AIMD.
    fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    fn slow_start(&mut self, ack: &AckSample) {
        let grow = (self.cfg.mss.min(ack.acked_bytes)) as f64;
        let phase = self.hystart.as_mut().map(|h| h.on_ack(ack));
        match phase {
            None | Some(Phase::SlowStart | Phase::Done) => self.cwnd += grow,
            // RFC 9406 §4.2: in CSS, cwnd += bytes_acked / CSS_GROWTH_DIVISOR.
            Some(Phase::Conservative) => self.cwnd += grow / CSS_GROWTH_DIVISOR as f64,
            // RFC 9406 §4.2: after CSS_ROUNDS, "enter congestion avoidance by setting the
            // ssthresh to the current cwnd"; RFC 9438 §4.10: W_max stays undefined.
            Some(Phase::Exit) => {
                self.ssthresh = self.cwnd as u64;
                self.cwnd_prior = self.segments();
            }
        }
    }

    fn congestion_avoidance(&mut self, now: Time, ack: &AckSample) {
        let cwnd = self.segments();
        let (start, k) = match self.epoch {
            Some(e) => e,
            None => {
                // The stage begins: cwnd_epoch = cwnd, K from eq. (2), W_est = cwnd_epoch
                // (§4.3). With W_max undefined (after a timeout, §4.8, or a slow start left
                // without loss, §4.10): W_max = cwnd_epoch and K = 0.
                let w_max = *self.w_max.get_or_insert(cwnd);
                let k = ((w_max - cwnd) / self.cfg.c).cbrt(); // RFC 9438 eq. (2)
                self.epoch = Some((now, k));
                self.w_est = cwnd;
                (now, k)
            }
        };
        let w_max = self.w_max.unwrap_or(cwnd);
        let acked = ack.acked_bytes as f64 / self.cfg.mss as f64;
        let t = now.since(start).as_secs_f64();
        let rtt = self.srtt.map_or(0.0, Duration::as_secs_f64);
        // §4.3 eq. (4): W_est += α_cubic · segments_acked / cwnd; "once W_est has grown to
        // reach the cwnd at the time of most recently setting ssthresh ... α_cubic = 1".
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha()
        };
        self.w_est += alpha * acked / cwnd;
        if self.cfg.reno_friendly && self.w_cubic(t, k, w_max) < self.w_est {
            // §4.3: the Reno-friendly region: cwnd = W_est.
            self.cwnd = self.w_est * self.cfg.mss as f64;
            return;
        }
        // §4.2: target = W_cubic(t + RTT), no less than cwnd and no more than 1.5·cwnd;
        // §4.4/4.5: cwnd += (target − cwnd)/cwnd per ACK (per segment acknowledged here).
        let target = self.w_cubic(t + rtt, k, w_max).clamp(cwnd, 1.5 * cwnd);
        self.cwnd += (target - cwnd) / cwnd * acked * self.cfg.mss as f64;
    }
}

impl CongestionController for Cubic {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            // RFC 6298 §2.3: SRTT ← 7/8·SRTT + 1/8·R'.
            self.srtt = Some(self.srtt.map_or(r, |s| Duration((7 * s.0 + r.0) / 8)));
        }
        if ack.in_recovery {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            self.slow_start(ack);
        } else if let Some(l) = &mut self.linux {
            let mss = self.cfg.mss;
            let cwnd = l.on_ack(&self.cfg, now, ack, self.cwnd as u64 / mss);
            self.cwnd = (cwnd * mss) as f64;
        } else {
            self.congestion_avoidance(now, ack);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        let mss = self.cfg.mss as f64;
        let cwnd = self.segments();
        if let Some(h) = &mut self.hystart {
            h.on_congestion();
        }
        if let Some(l) = &mut self.linux {
            let segments = self.cwnd as u64 / self.cfg.mss;
            let ssthresh = l.on_congestion(&self.cfg, ev.kind, segments);
            self.ssthresh = ssthresh * self.cfg.mss;
            self.epoch = None;
            // tcp_enter_loss: cwnd 1 after a timeout; a recovery ends at ssthresh.
            let cwnd = if ev.kind == Congestion::Timeout {
                1
            } else {
                ssthresh
            };
            self.cwnd = (cwnd * self.cfg.mss) as f64;
            return;
        }
        // §4.6: ssthresh = β_cubic times the window, at least 2 segments — of cwnd, as
        // Linux (and §4.6's note on implementations that use cwnd): FlightSize counts the
        // lost segments too, and after a lossy SACK recovery it can exceed cwnd, so that the
        // next "reduction" would raise the window.
        let ssthresh = (self.cwnd * self.cfg.beta).max(2.0 * mss);
        self.ssthresh = ssthresh as u64;
        self.epoch = None;
        if ev.kind == Congestion::Timeout {
            // §4.8: cwnd as Reno's (one segment, RFC 5681 §3.1); the next congestion
            // avoidance starts a fresh curve at its own window (W_max undefined, K = 0).
            self.w_max = None;
            self.cwnd_prior = cwnd;
            self.cwnd = mss;
            return;
        }
        // §4.7 fast convergence: a window below the last W_max releases bandwidth.
        let below = self.w_max.is_some_and(|w| cwnd < w);
        self.w_max = Some(if self.cfg.fast_convergence && below {
            cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            cwnd
        });
        self.cwnd_prior = cwnd;
        // §4.6: cwnd = max(ssthresh, 2) on loss; on ECE cwnd = max(ssthresh, 1), which the
        // 2-segment floor of ssthresh above already exceeds.
        self.cwnd = ssthresh;
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

    /// W_max (RFC 9438 §4.1), bytes; none before the first congestion event.
    fn state(&self, out: &mut crate::transport::CcState) {
        let mss = self.cfg.mss as f64;
        out.push("w_max_bytes", self.w_max.map(|w| w * mss));
    }
}

/// Linux's BICTCP_BETA_SCALE: β is 717/1024 there.
const BETA_SCALE: u64 = 1024;

/// Linux's tcp_cubic.c window arithmetic (`bictcp_update`, `tcp_cong_avoid_ai`,
/// `bictcp_recalc_ssthresh`), in whole segments.
#[derive(Clone, Debug, Default)]
pub struct Linux {
    /// `snd_cwnd_cnt`: segments acknowledged towards the next increment.
    cwnd_cnt: u64,
    /// `ack_cnt`: segments acknowledged since the epoch began, towards W_est's next segment.
    ack_cnt: u64,
    /// `tcp_cwnd`: W_est in whole segments.
    tcp_cwnd: u64,
    /// `cnt`: acknowledged segments per increment of cwnd.
    cnt: u64,
    /// `last_max_cwnd` (W_max), segments; 0 before the first reduction and after a timeout.
    last_max: u64,
    /// The epoch: its start, K (s) and the curve's origin (segments).
    epoch: Option<(Time, f64, u64)>,
    /// `last_cwnd`, `last_time`: when `cnt` was last recomputed, at which window.
    last: Option<(u64, Time)>,
    /// `delay_min`: the smallest RTT seen.
    min_rtt: Option<Duration>,
}

impl Linux {
    /// β as Linux holds it, in 1/1024ths (717 for 0.7).
    fn beta(cfg: &CubicSettings) -> u64 {
        (cfg.beta * BETA_SCALE as f64).round() as u64
    }

    /// One ACK in congestion avoidance with the window at `cwnd` segments; the new window.
    fn on_ack(&mut self, cfg: &CubicSettings, now: Time, ack: &AckSample, cwnd: u64) -> u64 {
        if let Some(r) = ack.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let acked = ack.acked_bytes.div_ceil(cfg.mss).max(1);
        self.update(cfg, now, cwnd, acked);
        self.avoid_ai(cwnd, acked)
    }

    /// `bictcp_update`: recomputes `cnt`.
    fn update(&mut self, cfg: &CubicSettings, now: Time, cwnd: u64, acked: u64) {
        self.ack_cnt += acked;
        // "The CUBIC function can update ca->cnt at most once per jiffy" and, while cwnd is
        // unchanged, once per HZ/32 (31.25 ms; the 1-jiffy rule is not modelled).
        if let Some((last_cwnd, at)) = self.last {
            if last_cwnd == cwnd && now.since(at) <= Duration::from_micros(31_250) {
                return;
            }
        }
        self.last = Some((cwnd, now));
        let (start, k, origin) = *self.epoch.get_or_insert_with(|| {
            // A new epoch: count from here, W_est synced with the window.
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max <= cwnd {
                (now, 0.0, cwnd)
            } else {
                let k = ((self.last_max - cwnd) as f64 / cfg.c).cbrt(); // RFC 9438 eq. (2)
                (now, k, self.last_max)
            }
        });
        // t is the time since the epoch plus the minimum RTT (`delay_min`).
        let rtt = self.min_rtt.map_or(0.0, Duration::as_secs_f64);
        let t = now.since(start).as_secs_f64() + rtt;
        let delta = (cfg.c * (t - k).abs().powi(3)) as u64; // RFC 9438 eq. (1), whole segments
        let target = if t < k {
            origin.saturating_sub(delta)
        } else {
            origin + delta
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd // "very small increment"
        };
        if self.last_max == 0 && self.cnt > 20 {
            self.cnt = 20; // "increase cwnd 5% per RTT" while the bandwidth is unknown
        }
        if cfg.reno_friendly {
            // W_est grows one segment per `delta` acknowledged: α_cubic = 3(1 − β)/(1 + β)
            // per window, with β in 1/1024ths and `beta_scale` truncated as Linux does.
            let b = Self::beta(cfg);
            let beta_scale = 8 * (BETA_SCALE + b) / 3 / (BETA_SCALE - b);
            let delta = ((cwnd * beta_scale) >> 3).max(1);
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                // "if bic is slower than tcp": catch up within a window.
                self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
            }
        }
        // At most one segment per two acknowledged (1.5·cwnd per RTT).
        self.cnt = self.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai`: one segment per `cnt` acknowledged.
    fn avoid_ai(&mut self, mut cwnd: u64, acked: u64) -> u64 {
        let w = self.cnt;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            cwnd += d;
        }
        cwnd
    }

    /// A loss, ECN echo or timeout at `cwnd` segments (`bictcp_recalc_ssthresh`, and
    /// `bictcp_reset` on entering the Loss state): the new ssthresh, segments.
    fn on_congestion(&mut self, cfg: &CubicSettings, kind: Congestion, cwnd: u64) -> u64 {
        let b = Self::beta(cfg);
        self.epoch = None;
        self.last = None;
        self.cwnd_cnt = 0;
        self.last_max = if cfg.fast_convergence && cwnd < self.last_max {
            cwnd * (BETA_SCALE + b) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        if kind == Congestion::Timeout {
            self.last_max = 0;
        }
        (cwnd * b / BETA_SCALE).max(2)
    }
}

tcp_scheme_params! {
    /// `cubic` parameters.
    pub struct CubicParams {
        /// C, segments/s³ (RFC 9438: 0.4).
        pub c: f64 = 0.4,
        /// β_cubic (RFC 9438: 0.7), in (0, 1).
        pub beta: f64 = 0.7,
        /// Fast convergence (RFC 9438 §4.7).
        pub fast_convergence: bool = true,
        /// HyStart++ (RFC 9406) in the initial slow start.
        pub hystart: bool = false,
        /// The Reno-friendly region (RFC 9438 §4.3; Linux's `tcp_friendliness`).
        pub reno_friendly: bool = true,
        /// Linux's tcp_cubic.c arithmetic (whole segments, ssthresh ⌊cwnd·717/1024⌋, W_est at
        /// α_cubic throughout) instead of RFC 9438's.
        pub linux: bool = false,
        /// Send ECN-capable packets and react to echoes as to a loss (RFC 3168, RFC 9438 §4.6).
        pub ecn: bool = false,
    }
    sack = true;
}

impl SchemeParams for CubicParams {
    fn ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        positive("c", self.c)?;
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::at(
                "beta",
                format!("cubic `beta` must be in (0, 1), not {}", self.beta),
            ));
        }
        self.tcp(self.ecn).validate("cubic")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Cubic::new(CubicSettings {
            mss: ctx.packet_size as u64,
            initial_window: self.initial_window,
            c: self.c,
            beta: self.beta,
            fast_convergence: self.fast_convergence,
            hystart: self.hystart,
            reno_friendly: self.reno_friendly,
            linux: self.linux,
        });
        self.tcp(self.ecn).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn cubic() -> Cubic {
        Cubic::new(CubicSettings {
            mss: MSS,
            initial_window: 2,
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: false,
            reno_friendly: true,
            linux: false,
        })
    }

    fn ack(rtt_ms: u64) -> AckSample {
        AckSample::of(MSS, Some(Duration::from_millis(rtt_ms)))
    }

    fn event(kind: Congestion, in_flight: u64) -> CongestionEvent {
        CongestionEvent::new(kind, in_flight)
    }

    fn secs(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    #[test]
    fn loss_sets_ssthresh_to_beta_cwnd_and_w_max_to_cwnd() {
        let mut c = cubic();
        c.cwnd = 100.0 * MSS as f64;
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 100 * MSS));
        assert_eq!(c.ssthresh(), Some(70 * MSS)); // §4.6
        assert_eq!(c.window(), 70 * MSS);
        assert_eq!(c.w_max, Some(100.0));
        // A second loss below W_max: fast convergence, W_max = 70·(1 + 0.7)/2 = 59.5 (§4.7).
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 70 * MSS));
        assert!((c.w_max.unwrap() - 59.5).abs() < 1e-9);
        assert_eq!(c.window(), 49 * MSS);
    }

    /// ACKs one segment each, cwnd of them per 100 ms RTT (the ACK clock), from `t` to `until`.
    fn ack_clock(c: &mut Cubic, mut t: f64, until: f64) -> f64 {
        while t < until {
            t += 0.1 / c.segments();
            c.on_ack(secs(t), &ack(100));
        }
        t
    }

    #[test]
    fn k_is_the_time_back_to_w_max_and_the_window_follows_the_cubic() {
        let mut c = cubic();
        c.cwnd = 100.0 * MSS as f64;
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 100 * MSS));
        // eq. (2): K = ∛((100 − 70)/0.4) = ∛75 ≈ 4.217 s.
        c.on_ack(secs(0.0), &ack(100));
        let (_, k) = c.epoch.unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-9, "K = {k}");
        // Halfway to K, cwnd tracks W_cubic(t + RTT) = 100 + 0.4·(K/2 + 0.1 − K)³ ≈ 96.8
        // (concave region, well above W_est), within a segment.
        let t = ack_clock(&mut c, 0.0, k / 2.0);
        let expected = 0.4 * (t + 0.1 - k).powi(3) + 100.0;
        assert!(
            (c.segments() - expected).abs() < 1.0,
            "{} vs {expected}",
            c.segments()
        );
        // At K it has reached the plateau W_max = 100.
        let t = ack_clock(&mut c, t, k);
        assert!((c.segments() - 100.0).abs() < 1.0, "{}", c.segments());
        // Two seconds later the cubic gives 100 + 0.4·2.1³ ≈ 103.7, but after 62 RTTs of
        // α ≈ 0.53 segments, then 1 (W_est passed cwnd_prior), W_est ≈ 105.5 is larger: the
        // Reno-friendly region governs (§4.3) and cwnd = W_est.
        ack_clock(&mut c, t, k + 2.0);
        assert!(c.w_cubic(k + 2.0, k, 100.0) < c.w_est);
        assert!(
            (c.segments() - c.w_est).abs() < 1e-9,
            "{} vs W_est {}",
            c.segments(),
            c.w_est
        );
        assert!((c.w_est - 105.5).abs() < 1.0, "W_est {}", c.w_est);
    }

    #[test]
    fn the_reno_friendly_region_governs_small_windows_at_long_times() {
        // Right after a reduction the cubic starts flat at cwnd_epoch, while W_est grows by
        // α per window from there: W_est wins (§4.3) and cwnd = W_est.
        let mut c = cubic();
        c.cwnd = 10.0 * MSS as f64;
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 10 * MSS));
        let alpha = 3.0 * 0.3 / 1.7;
        c.on_ack(secs(0.0), &ack(10));
        let before = c.w_est;
        assert!((before - 7.0 - alpha / 7.0).abs() < 1e-9, "{before}");
        // One more ACK in the Reno-friendly region sets cwnd = W_est exactly.
        c.on_ack(secs(0.001), &ack(10));
        assert!(c.w_est > before);
        // W_cubic(0) = cwnd_epoch = 7 by eq. (2); a millisecond later it has hardly moved.
        let w_cubic = c.w_cubic(0.001, c.epoch.unwrap().1, 10.0);
        assert!(w_cubic < c.w_est, "{w_cubic} vs {}", c.w_est);
        assert!((c.segments() - c.w_est).abs() < 1e-9);
    }

    #[test]
    fn without_the_reno_friendly_region_the_cubic_curve_governs() {
        // The same start as above with `reno_friendly = false` (Linux's tcp_friendliness = 0,
        // ns-3.37): cwnd follows W_cubic(t + RTT), which hardly moves from cwnd_epoch = 7.
        let mut c = Cubic::new(CubicSettings {
            reno_friendly: false,
            linux: false,
            ..cubic().cfg
        });
        c.cwnd = 10.0 * MSS as f64;
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 10 * MSS));
        c.on_ack(secs(0.0), &ack(10));
        c.on_ack(secs(0.001), &ack(10));
        assert!(
            c.w_est > c.segments(),
            "W_est {} is tracked but not used",
            c.w_est
        );
        // Two ACKs of (W_cubic(t + RTT) − cwnd)/cwnd ≈ 0.007 segments each, where W_est has
        // grown by 2·α/7 ≈ 0.15.
        assert!(
            c.segments() < 7.02 && c.segments() < c.w_est - 0.1,
            "{}",
            c.segments()
        );
    }

    #[test]
    fn convex_growth_is_clamped_to_half_a_window_per_rtt() {
        let mut c = cubic();
        c.w_max = Some(10.0);
        c.ssthresh = 10 * MSS;
        c.cwnd = 10.0 * MSS as f64;
        // Far into the convex region (t ≫ K): W_cubic(t + RTT) is huge, the target is 1.5·cwnd.
        c.on_ack(secs(0.0), &ack(100));
        let before = c.segments();
        c.on_ack(secs(100.0), &ack(100));
        let grew = c.segments() - before;
        // (target − cwnd)/cwnd per ACK = 0.5 segment.
        assert!((grew - 0.5).abs() < 1e-6, "{grew}");
    }

    #[test]
    fn timeout_collapses_to_one_segment_and_restarts_the_curve_at_its_window() {
        let mut c = cubic();
        c.cwnd = 50.0 * MSS as f64;
        c.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 50 * MSS));
        c.on_congestion_event(Time::ZERO, &event(Congestion::Timeout, 35 * MSS));
        assert_eq!(c.window(), MSS);
        assert_eq!(c.ssthresh(), Some(24_500)); // 35 segments · 0.7
        assert_eq!(c.w_max, None);
        // Slow start back to ssthresh, then a fresh curve with K = 0 (§4.8).
        let mut t = 0.0;
        while c.in_slow_start() {
            t += 0.001;
            c.on_ack(secs(t), &ack(10));
        }
        c.on_ack(secs(t), &ack(10));
        assert_eq!(c.epoch.map(|e| e.1), Some(0.0));
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_rising_rtt() {
        let mut c = Cubic::new(CubicSettings {
            hystart: true,
            ..cubic().cfg
        });
        let mut seq = 0;
        let mut rtt = 50;
        // Rounds of cwnd ACKs; the RTT rises 20 ms per round once the queue builds.
        for round in 0..20 {
            let n = c.window() / MSS;
            let end = seq + 2 * n;
            for _ in 0..n {
                seq += 1;
                let mut a = ack(rtt);
                a.cumulative_ack = seq;
                a.highest_sent = end;
                c.on_ack(secs(round as f64 * 0.1), &a);
                if !c.in_slow_start() {
                    break;
                }
            }
            if round >= 3 {
                rtt += 20;
            }
            if !c.in_slow_start() {
                break;
            }
        }
        assert!(!c.in_slow_start(), "HyStart++ never left slow start");
        assert!(c.ssthresh().unwrap() < u64::MAX);
        assert_eq!(c.w_max, None, "no loss: W_max undefined until CA begins");
    }

    #[test]
    fn parameters_are_checked() {
        let bad = CubicParams {
            beta: 1.0,
            ..CubicParams::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("beta"));
        let bad = CubicParams {
            c: f64::NAN,
            ..CubicParams::default()
        };
        assert!(bad.validate().is_err());
        assert!(CubicParams::default().validate().is_ok());
    }

    fn linux() -> Cubic {
        Cubic::new(CubicSettings {
            linux: true,
            ..cubic().cfg
        })
    }

    fn loss(c: &mut Cubic, segments: u64) {
        c.cwnd = (segments * MSS) as f64;
        let ev = CongestionEvent::new(Congestion::Loss, segments * MSS);
        c.on_congestion_event(Time::ZERO, &ev);
    }

    /// `bictcp_recalc_ssthresh`: ssthresh = max(⌊cwnd·717/1024⌋, 2) in whole segments (the RFC's
    /// β·cwnd in bytes would give 10.5 segments at 15), and fast convergence's W_max
    /// ⌊cwnd·(1024 + 717)/2048⌋.
    #[test]
    fn ssthresh_and_w_max_are_whole_segments_rounded_down() {
        let mut c = linux();
        loss(&mut c, 15);
        assert_eq!(c.ssthresh(), Some(10 * MSS));
        assert_eq!(c.window(), 10 * MSS);
        assert_eq!(c.linux.as_ref().unwrap().last_max, 15);
        loss(&mut c, 12); // below W_max = 15: ⌊12·1741/2048⌋ = 10
        assert_eq!(c.linux.as_ref().unwrap().last_max, 10);
        assert_eq!(c.ssthresh(), Some(8 * MSS));
        loss(&mut c, 2);
        assert_eq!(c.ssthresh(), Some(2 * MSS), "at least two segments");
    }

    /// At these windows W_est governs (the curve, from W_max = 20 with K = ∛((20 − 14)/0.4) ≈
    /// 2.5 s, reaches only 21.4 segments by 4 s): the window grows in whole segments at
    /// α_cubic = 3(1 − β)/(1 + β) ≈ 0.53 segment per window of ACKs (Linux's `beta_scale` 15:
    /// one W_est segment per ⌊15·cwnd/8⌋ ACKs) — and keeps that slope past the window before
    /// the reduction, where RFC 9438 §4.3 switches to α = 1 (which would give ~1 per window).
    #[test]
    fn the_window_grows_at_alpha_cubic_in_whole_segments_and_never_switches_to_one() {
        let mut c = linux();
        loss(&mut c, 20); // ssthresh and cwnd ⌊20·717/1024⌋ = 14
        assert_eq!(c.window(), 14 * MSS);
        let mut t = 0.0;
        let mut windows = Vec::new();
        for _ in 0..40 {
            let w = c.window() / MSS;
            windows.push(w);
            for _ in 0..w {
                t += 0.1 / w as f64;
                c.on_ack(Time::from_secs_f64(t), &ack(100));
            }
            assert_eq!(c.window() % MSS, 0, "whole segments");
        }
        let per_rtt = (windows[39] - windows[9]) as f64 / 30.0;
        // Beyond cwnd_prior (20) from round ~12 on, still α_cubic, not 1 (±0.1 for rounding
        // to whole segments and the window's one-round lag behind W_est).
        assert!(windows[39] > 20, "{windows:?}");
        assert!(
            (per_rtt - 0.533).abs() < 0.1,
            "{per_rtt} segments per RTT: {windows:?}"
        );
    }
}
