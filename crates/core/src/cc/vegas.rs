//! TCP Vegas (Brakmo & Peterson 1995) as modelled in 002 §2 and 000 §IV-A, over the NewReno
//! loss recovery of the TCP transport.
//!
//! Once per RTT the source compares the window with the bandwidth-propagation-delay product:
//! `diff = cwnd·(1 − baseRTT/RTT)` packets, its estimate of its own backlog in the network
//! (002 eqs. (14)–(15): w − x·d = x·Σp). It adds a packet if diff < α, removes one if diff > β and
//! holds otherwise (002 eqs. (17)–(18)). α and β are packets (the *PF* implementation, utility
//! α·log x) or packets per unit time multiplied by baseRTT (the *WPF* implementation, utility
//! α_s·d_s·log x, 002 §3.2).
//!
//! baseRTT is the minimum RTT seen (the original), the minimum of the last k per-RTT measurements
//! (Vegas-k, Mo et al.; 000 §IV-A), or a value fixed by the scenario (002 §6.2's "hard-coded"
//! propagation delay).
//!
//! Vegas+REM (002 §5) is this controller with `marks = Some(φ)`: in congestion avoidance the
//! source estimates its path price from the fraction m̂ of ACKed segments that echo a mark
//! (averaged over segments with weight 1/64 — the few ACKs of one round of a small window gave
//! a fraction too noisy for the logarithm, and short-RTT flows then took half their share),
//! p̂ = −log_φ(1 − m̂) (inverting 002 eq. (32)), and moves the window one packet towards
//! x̂·p̂ = α_s·d_s, x̂ = cwnd/RTT in packets per millisecond (the REM price unit of 002 §6.3, with
//! rates counted per 1 ms period). Slow start is unchanged; marks do not halve the window.
//!
//! Departures from the paper / ns-2 / Linux, all deliberate:
//! - The RTT of a round is the mean of the ACK samples in that round (as ns-2's Vegas does);
//!   Linux takes the minimum.
//! - Slow start grows the window by one segment per ACK every other RTT and leaves when diff > γ,
//!   setting cwnd to min(cwnd, cwnd·baseRTT/RTT + 1 segment) as Linux does.
//! - Loss reaction is Reno's (halve on fast retransmit, one segment and slow start on timeout),
//!   not the original's 3/4 reduction or its fine-grained timeout check on the first duplicate ACK.
//! - The window is a whole number of segments (as in Linux) and never below two.

use std::collections::VecDeque;

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

use std::ops::Bound::{Excluded, Included};

use crate::params::{in_range, FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;

/// Where baseRTT comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaseRtt {
    /// Minimum RTT sample seen.
    Min,
    /// Minimum of the last k per-RTT measurements (Vegas-k).
    LastK(usize),
    /// A configured value.
    Fixed(Duration),
}

/// Vegas settings. α, β, γ are in packets; with `per = Some(T)` α and β are packets per T and
/// are multiplied by baseRTT/T (WPF).
#[derive(Clone, Debug, PartialEq)]
pub struct VegasSettings {
    pub mss: u64,
    pub initial_window: u64,
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub per: Option<Duration>,
    pub base_rtt: BaseRtt,
    /// Vegas+REM: the REM base φ; `None` for delay-based Vegas.
    pub marks: Option<f64>,
}

/// Vegas state.
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasSettings,
    cwnd: f64,
    ssthresh: u64,
    slow_start: bool,
    /// In slow start, whether this round grows the window (Vegas grows every other round).
    growing_round: bool,
    /// The current round ends when an ACK covers this segment (snd_max when it began); `None`
    /// until the first ACK starts the first round.
    round_end: Option<u64>,
    round_rtt_sum: u64,
    round_rtt_samples: u64,
    min_rtt: Option<Duration>,
    recent_rtts: VecDeque<Duration>,
    /// The last round's diff, packets.
    diff: Option<f64>,
    /// The last round's price estimate p̂ (Vegas+REM).
    price: Option<f64>,
    /// Mark fraction averaged over acknowledged segments (Vegas+REM).
    mark_avg: f64,
}

impl Vegas {
    pub fn new(cfg: VegasSettings) -> Vegas {
        Vegas {
            cwnd: (cfg.initial_window.max(1) * cfg.mss) as f64,
            ssthresh: u64::MAX,
            slow_start: true,
            growing_round: true,
            round_end: None,
            round_rtt_sum: 0,
            round_rtt_samples: 0,
            min_rtt: None,
            recent_rtts: VecDeque::new(),
            diff: None,
            price: None,
            mark_avg: 0.0,
            cfg,
        }
    }

    /// The baseRTT in force, if one is known yet.
    pub fn base_rtt(&self) -> Option<Duration> {
        match self.cfg.base_rtt {
            BaseRtt::Min => self.min_rtt,
            BaseRtt::LastK(_) => self.recent_rtts.iter().min().copied().or(self.min_rtt),
            BaseRtt::Fixed(d) => Some(d),
        }
    }

    /// α and β in packets for this baseRTT: as given (PF) or scaled by baseRTT (WPF, 002 §3.2).
    pub fn thresholds(&self, base: Duration) -> (f64, f64) {
        match self.cfg.per {
            None => (self.cfg.alpha, self.cfg.beta),
            Some(unit) => {
                let k = base.as_secs_f64() / unit.as_secs_f64();
                (self.cfg.alpha * k, self.cfg.beta * k)
            }
        }
    }

    fn mss(&self) -> f64 {
        self.cfg.mss as f64
    }

    fn floor(&self) -> f64 {
        2.0 * self.mss()
    }

    /// Vegas counts its window in packets: round to whole segments, at least two.
    fn whole_segments(&self, bytes: f64) -> f64 {
        ((bytes / self.mss()).round() * self.mss()).max(self.floor())
    }

    /// The once-per-RTT decision at the end of a round whose mean RTT was `rtt`.
    fn end_of_round(&mut self, rtt: Duration) {
        if let BaseRtt::LastK(k) = self.cfg.base_rtt {
            self.recent_rtts.push_back(rtt);
            while self.recent_rtts.len() > k.max(1) {
                self.recent_rtts.pop_front();
            }
        }
        let Some(base) = self.base_rtt() else {
            return;
        };
        let ratio = (base.as_secs_f64() / rtt.as_secs_f64().max(1e-12)).min(1.0);
        let cwnd_pkts = self.cwnd / self.mss();
        let diff = cwnd_pkts * (1.0 - ratio); // 002 eq. (15): w − x·d, packets
        self.diff = Some(diff);
        if self.slow_start {
            if diff > self.cfg.gamma || self.cwnd as u64 >= self.ssthresh {
                self.slow_start = false;
                let target = self.cwnd * ratio + self.mss();
                self.cwnd = self.whole_segments(self.cwnd.min(target));
                self.ssthresh = self.cwnd as u64;
            } else {
                self.growing_round = !self.growing_round;
            }
            return;
        }
        let (alpha, beta) = self.thresholds(base);
        if let Some(phi) = self.cfg.marks {
            self.rem_step(phi, alpha, rtt);
            return;
        }
        if diff < alpha {
            self.cwnd += self.mss(); // 002 eq. (18): sgn(α·d − x·p) = +1
        } else if diff > beta {
            self.cwnd = (self.cwnd - self.mss()).max(self.floor());
        }
    }
}

/// Weight of one acknowledged segment in Vegas+REM's mark-fraction average.
const MARK_GAIN: f64 = 1.0 / 64.0;

impl Vegas {
    /// Vegas+REM's once-per-RTT step (002 §5): towards x̂·p̂ = α_s·d_s.
    fn rem_step(&mut self, phi: f64, target: f64, rtt: Duration) {
        let m = self.mark_avg;
        let price = if m >= 1.0 {
            f64::INFINITY
        } else {
            -(1.0 - m).ln() / phi.ln()
        }; // p̂ = −log_φ(1 − m̂)
        self.price = Some(price);
        let x = self.cwnd / self.mss() / (rtt.as_secs_f64() * 1e3); // packets per ms
        let xp = x * price;
        if xp < target {
            self.cwnd += self.mss();
        } else if xp > target {
            self.cwnd = (self.cwnd - self.mss()).max(self.floor());
        }
    }

    /// The last price estimate p̂ of Vegas+REM.
    pub fn price_estimate(&self) -> Option<f64> {
        self.price
    }
}

impl CongestionController for Vegas {
    fn on_ack(&mut self, _now: Time, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.round_rtt_sum += r.0;
            self.round_rtt_samples += 1;
        }
        let acked = ack.acked_bytes.div_ceil(self.cfg.mss).max(1);
        let mark = if ack.ecn_echo { 1.0 } else { 0.0 };
        for _ in 0..acked {
            self.mark_avg += (mark - self.mark_avg) * MARK_GAIN;
        }
        if ack.in_recovery {
            return;
        }
        if self.slow_start && self.growing_round {
            self.cwnd += self.mss().min(ack.acked_bytes as f64);
        }
        let Some(round_end) = self.round_end else {
            self.round_end = Some(ack.highest_sent);
            return;
        };
        if ack.cumulative_ack > round_end {
            if let Some(mean) = self.round_rtt_sum.checked_div(self.round_rtt_samples) {
                self.end_of_round(Duration(mean));
            }
            self.round_end = Some(ack.highest_sent);
            self.round_rtt_sum = 0;
            self.round_rtt_samples = 0;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        let half = self.whole_segments((ev.in_flight / 2) as f64);
        match ev.kind {
            // Vegas+REM reads marks as a price, not as congestion events.
            Congestion::Ecn if self.cfg.marks.is_some() => {}
            Congestion::Loss | Congestion::Ecn => {
                self.cwnd = half;
                self.ssthresh = self.cwnd as u64;
                self.slow_start = false;
            }
            Congestion::Timeout => {
                self.ssthresh = half as u64;
                self.cwnd = self.mss();
                self.slow_start = true;
                self.growing_round = true;
            }
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    fn ssthresh(&self) -> Option<u64> {
        Some(self.ssthresh)
    }

    fn accumulation(&self) -> Option<f64> {
        self.diff.map(|d| d * self.mss())
    }

    fn base_rtt(&self) -> Option<Duration> {
        Vegas::base_rtt(self)
    }
}

tcp_scheme_params! {
    /// `vegas` parameters (SPEC §9).
    pub struct VegasParams {
        /// Lower threshold, packets (per RTT, or per `per` for WPF).
        pub alpha: f64 = 2.0,
        /// Upper threshold, packets.
        pub beta: f64 = 4.0,
        /// Slow-start exit threshold, packets.
        pub gamma: f64 = 1.0,
        /// "rtt" (PF) or a duration: α and β are packets per that duration, times baseRTT (WPF).
        pub per: PerUnit = PerUnit::Rtt,
        /// "min" (minimum RTT seen) or a fixed duration.
        pub base_rtt: BaseRttParam = BaseRttParam::Min,
        /// Vegas-k: baseRTT is the minimum of the last k per-RTT measurements.
        pub k: Option<u32> = None,
        /// vegas-rem only: the REM base φ the source inverts marks with (default 1.1).
        pub phi: Option<f64> = None,
    }
    sack = false;
}

impl VegasParams {
    /// The controller settings these parameters describe; `rem` selects Vegas+REM.
    pub fn controller(&self, mss: u64, rem: bool) -> VegasSettings {
        VegasSettings {
            marks: rem.then(|| self.phi.unwrap_or(1.1)),
            mss,
            initial_window: self.initial_window,
            alpha: self.alpha,
            beta: self.beta,
            gamma: self.gamma,
            per: match self.per {
                PerUnit::Rtt => None,
                PerUnit::Time(d) => Some(d),
            },
            base_rtt: match (self.base_rtt, self.k) {
                (BaseRttParam::Fixed(d), _) => BaseRtt::Fixed(d),
                (BaseRttParam::Min, Some(k)) => BaseRtt::LastK(k as usize),
                (BaseRttParam::Min, None) => BaseRtt::Min,
            },
        }
    }

    /// Checks the thresholds and the baseRTT settings (`phi` is checked by the scheme).
    fn check(&self) -> Result<(), ParamError> {
        for (key, x) in [
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("gamma", self.gamma),
        ] {
            in_range(key, x, (Excluded(0.0), Included(1e6)))?;
        }
        if !(self.alpha > 0.0 && self.beta >= self.alpha && self.gamma > 0.0) {
            return Err(ParamError::at(
                "alpha",
                format!(
                    "vegas needs 0 < alpha <= beta and gamma > 0 (alpha {}, beta {}, gamma {})",
                    self.alpha, self.beta, self.gamma
                ),
            ));
        }
        // The transport settings are checked as every TCP scheme's are (the initial window's
        // range among them), wherever this table appears: `vegas`, `vegas-rem`, `onoff.vegas`.
        self.tcp(false).validate("vegas")?;
        if matches!(self.per, PerUnit::Time(d) if d.0 == 0) {
            return Err(ParamError::at(
                "per",
                "vegas `per` must be \"rtt\" or a positive duration",
            ));
        }
        if matches!(self.base_rtt, BaseRttParam::Fixed(d) if d.0 == 0) {
            return Err(ParamError::at(
                "base_rtt",
                "vegas `base_rtt` must be \"min\" or a positive duration",
            ));
        }
        if self.k == Some(0) {
            return Err(ParamError::at("k", "vegas `k` must be at least 1"));
        }
        if self.k.is_some() && matches!(self.base_rtt, BaseRttParam::Fixed(_)) {
            return Err(ParamError::at(
                "k",
                "vegas `k` and a fixed `base_rtt` exclude each other",
            ));
        }
        Ok(())
    }
}

/// Vegas's α/β unit: per RTT (PF) or per a fixed duration (WPF).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PerUnit {
    Rtt,
    Time(Duration),
}

/// Vegas's baseRTT source in a scenario: "min" or a fixed duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaseRttParam {
    Min,
    Fixed(Duration),
}

/// A string that is either `keyword` or a duration.
fn keyword_or_duration<'de, D: serde::Deserializer<'de>>(
    d: D,
    keyword: &'static str,
) -> Result<Option<Duration>, D::Error> {
    let s = String::deserialize(d)?;
    if s == keyword {
        return Ok(None);
    }
    Duration::parse(&s)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("expected \"{keyword}\" or a duration: {e}")))
}

crate::units::form_schema!(
    PerUnit,
    crate::units::string_schema("\"rtt\" or a duration such as \"100ms\"")
);
crate::units::form_schema!(
    BaseRttParam,
    crate::units::string_schema("\"min\" or a duration such as \"40ms\"")
);
impl<'de> Deserialize<'de> for PerUnit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(keyword_or_duration(d, "rtt")?.map_or(PerUnit::Rtt, PerUnit::Time))
    }
}
impl Serialize for PerUnit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PerUnit::Rtt => s.serialize_str("rtt"),
            PerUnit::Time(d) => d.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for BaseRttParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(keyword_or_duration(d, "min")?.map_or(BaseRttParam::Min, BaseRttParam::Fixed))
    }
}
impl Serialize for BaseRttParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BaseRttParam::Min => s.serialize_str("min"),
            BaseRttParam::Fixed(d) => d.serialize(s),
        }
    }
}

impl VegasParams {
    /// The endpoints of a Vegas (`rem` false) or Vegas+REM flow.
    fn endpoints(&self, ctx: &FlowContext, rem: bool) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Vegas::new(self.controller(ctx.packet_size as u64, rem));
        // Vegas+REM (`rem`) sends ECN-capable packets: REM marks them instead of dropping.
        self.tcp(rem).endpoints(ctx, cc)
    }
}

impl SchemeParams for VegasParams {
    fn validate(&self) -> Result<(), ParamError> {
        if self.phi.is_some() {
            return Err(ParamError::at("phi", "`phi` applies to vegas-rem only"));
        }
        self.check()
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        self.endpoints(ctx, false)
    }
}

/// `vegas-rem` parameters: those of `vegas`, with `phi` (002 §5).
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct VegasRemParams(pub VegasParams);

impl SchemeParams for VegasRemParams {
    fn validate(&self) -> Result<(), ParamError> {
        if let Some(phi) = self.0.phi {
            in_range("phi", phi, (Excluded(1.0), Included(1e6)))?;
        }
        self.0.check()
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        self.0.endpoints(ctx, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: Congestion, in_flight: u64) -> CongestionEvent {
        CongestionEvent::new(kind, in_flight)
    }

    const MSS: u64 = 1000;

    fn cfg(base_rtt: BaseRtt) -> VegasSettings {
        VegasSettings {
            mss: MSS,
            initial_window: 2,
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            per: None,
            base_rtt,
            marks: None,
        }
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// One round: an ACK with `rtt` that closes the round, sent-so-far advanced by `sent`.
    fn round(v: &mut Vegas, rtt: Duration, next_round_end: u64) {
        let ack = AckSample {
            acked_bytes: 0,
            rtt: Some(rtt),
            in_flight: 0,
            in_recovery: false,
            highest_sent: next_round_end,
            cumulative_ack: v.round_end.map_or(1, |e| e + 1),
            ecn_echo: false,
            ce_segments: None,
            one_way_delay: None,
            rate: None,
        };
        v.on_ack(Time::ZERO, &ack);
    }

    fn in_avoidance(cwnd_pkts: u64, base: BaseRtt) -> Vegas {
        let mut v = Vegas::new(cfg(base));
        v.slow_start = false;
        v.round_end = Some(0);
        v.cwnd = (cwnd_pkts * MSS) as f64;
        v
    }

    #[test]
    fn diff_decides_increase_hold_decrease() {
        // cwnd 20, baseRTT 10 ms. RTT 10.5 ms: diff = 20·(1 − 10/10.5) = 0.95 < α = 2 → +1.
        let mut v = in_avoidance(20, BaseRtt::Fixed(ms(10)));
        round(&mut v, Duration(10_500_000), 10);
        assert_eq!(v.window(), 21 * MSS);
        assert!((v.diff.unwrap() - 0.952).abs() < 1e-3);
        // RTT 12 ms: diff = 21·(1 − 10/12) = 3.5 ∈ [2, 4] → hold.
        round(&mut v, ms(12), 20);
        assert_eq!(v.window(), 21 * MSS);
        // RTT 20 ms: diff = 10.5 > β → −1.
        round(&mut v, ms(20), 30);
        assert_eq!(v.window(), 20 * MSS);
        assert_eq!(v.accumulation(), Some(10.5 * MSS as f64));
    }

    #[test]
    fn wpf_scales_alpha_by_base_rtt() {
        let mut c = cfg(BaseRtt::Fixed(ms(20)));
        c.alpha = 2.0;
        c.beta = 2.0;
        c.per = Some(ms(10));
        let v = Vegas::new(c);
        assert_eq!(v.thresholds(ms(20)), (4.0, 4.0));
        assert_eq!(v.thresholds(ms(5)), (1.0, 1.0));
    }

    #[test]
    fn base_rtt_modes() {
        let mut min = in_avoidance(10, BaseRtt::Min);
        let mut last2 = in_avoidance(10, BaseRtt::LastK(2));
        for (i, r) in [ms(10), ms(30), ms(40), ms(50)].into_iter().enumerate() {
            round(&mut min, r, 10 * (i as u64 + 1));
            round(&mut last2, r, 10 * (i as u64 + 1));
        }
        assert_eq!(min.base_rtt(), Some(ms(10)), "minimum ever seen");
        assert_eq!(
            last2.base_rtt(),
            Some(ms(40)),
            "minimum of the last two rounds"
        );
        let fixed = Vegas::new(cfg(BaseRtt::Fixed(ms(7))));
        assert_eq!(fixed.base_rtt(), Some(ms(7)));
    }

    #[test]
    fn slow_start_grows_every_other_round_and_exits_above_gamma() {
        let mut v = Vegas::new(cfg(BaseRtt::Fixed(ms(10))));
        let ack = |cum: u64, hs: u64| AckSample {
            acked_bytes: MSS,
            rtt: Some(ms(10)),
            in_flight: 0,
            in_recovery: false,
            highest_sent: hs,
            cumulative_ack: cum,
            ecn_echo: false,
            ce_segments: None,
            one_way_delay: None,
            rate: None,
        };
        // The first round grows: +1 segment per ACK (the first ACK starts the round).
        v.on_ack(Time::ZERO, &ack(1, 4));
        assert_eq!(v.window(), 3 * MSS);
        v.on_ack(Time::ZERO, &ack(2, 4));
        assert_eq!(v.window(), 4 * MSS);
        // The ACK closing that round still grows, then turns growth off for the next round.
        v.on_ack(Time::ZERO, &ack(5, 8));
        let held = v.window();
        assert_eq!(held, 5 * MSS);
        v.on_ack(Time::ZERO, &ack(6, 8));
        assert_eq!(v.window(), held, "no growth in the off round");
        // A round with RTT 20 ms: diff = cwnd/2 > γ → leave slow start at cwnd·base/RTT + 1.
        let before = v.cwnd;
        let mut a = ack(9, 12);
        a.rtt = Some(ms(20));
        v.round_rtt_sum = 0;
        v.round_rtt_samples = 0;
        v.on_ack(Time::ZERO, &a);
        assert!(!v.slow_start);
        assert_eq!(
            v.window(),
            ((before / 2.0 + MSS as f64) / MSS as f64).round() as u64 * MSS
        );
    }

    #[test]
    fn losses_fall_back_to_reno() {
        let mut v = in_avoidance(20, BaseRtt::Min);
        v.on_congestion_event(Time::ZERO, &event(Congestion::Loss, 20 * MSS));
        assert_eq!(v.window(), 10 * MSS);
        v.on_congestion_event(Time::ZERO, &event(Congestion::Timeout, 20 * MSS));
        assert_eq!(v.window(), MSS);
        assert!(v.slow_start);
    }

    #[test]
    fn vegas_rem_steps_towards_x_times_price_equal_alpha_d() {
        // α·d = 20 packets; cwnd 20 packets over a 10 ms RTT: x = 2 packets/ms.
        let mut c = cfg(BaseRtt::Fixed(ms(10)));
        c.alpha = 2.0;
        c.beta = 2.0;
        c.per = Some(ms(1));
        c.marks = Some(1.1);
        let mut v = Vegas::new(c);
        v.slow_start = false;
        v.round_end = Some(0);
        v.cwnd = 20_000.0;
        // A long-run mark fraction of 10%: p̂ = −log_1.1(0.9) = 1.105, x·p̂ = 2.2 < 20 → +1.
        v.mark_avg = 0.1;
        for i in 0..10 {
            let ack = AckSample {
                acked_bytes: MSS,
                rtt: Some(ms(10)),
                in_flight: 0,
                in_recovery: false,
                highest_sent: 100,
                cumulative_ack: if i == 9 { 1 } else { 0 },
                ecn_echo: false,
                ce_segments: None,
                one_way_delay: None,
                rate: None,
            };
            v.on_ack(Time::ZERO, &ack);
        }
        let m = 0.1 * (1.0 - MARK_GAIN).powi(10);
        let expected = -(1.0 - m).ln() / 1.1f64.ln();
        assert!(
            (v.price_estimate().unwrap() - expected).abs() < 1e-9,
            "{:?}",
            v.price_estimate()
        );
        assert_eq!(v.window(), 21 * MSS);
        // Marks are a price here, not a congestion event: no halving.
        v.on_congestion_event(Time::ZERO, &event(Congestion::Ecn, 21 * MSS));
        assert_eq!(v.window(), 21 * MSS);
    }
}
