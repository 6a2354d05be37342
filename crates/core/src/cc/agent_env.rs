//! The environment side of an agent-driven flow ([`super::agent`]): what a learning agent sees
//! and earns, computed once per monitor interval (MI) — its action turned into the flow's next
//! setting, the interval's measurements turned into observation features and a reward, and the
//! history of features the observation stacks. `acclab.gym`'s environments run this in Rust so
//! that a step costs Python one call (issue 52 §2's speed target).
//!
//! Features (each a few units at most, clipped to ±10 as f32):
//! - `latency_gradient`: the least-squares slope of the RTT over the MI, s/s (Aurora, Jay et
//!   al., ICML 2019 §4.1);
//! - `latency_ratio`: the MI's mean RTT over the minimum RTT seen (Aurora §4.1);
//! - `send_ratio`: bytes sent over bytes acknowledged in the MI (Aurora §4.1), at most 10;
//! - `loss_fraction`, `ecn_fraction`: retransmitted over sent, ECN-echoed over acknowledged;
//! - `delivery_rate`: acknowledged bit/s over the highest seen in the episode (Orca's
//!   normalised throughput, Abbasloo et al., SIGCOMM 2020 §4.2);
//! - `rtt`: the smoothed RTT over the minimum (Orca's normalised delay);
//! - `action`: log2 of the current setting over the episode's first;
//! - `cwnd`: the congestion window the flow is held to over the BDP (the agent's window, or
//!   with a rate the cap of 2 × rate × sRTT; the window Orca's agent sees beside its rate);
//! - `queue`: the watched link's backlog at the MI's end over its BDP in packets (a sender
//!   cannot see it: opt in).
//!
//! Rewards (times `reward_scale`):
//! - Aurora (§4.2): 10·throughput (packets/s) − 1000·latency (s) − 2000·loss fraction;
//! - α-fair utility of the throughput in Mb/s (Mo & Walrand 2000; log for α = 1);
//! - power: throughput (Mb/s) over the mean RTT (s) (Kleinrock 1979);
//! - NUM: minus the relative distance between the throughput and the agent's rate in the
//!   utility-maximising allocation the theory computes (000 §III), 0 at the optimum.

use std::fmt;

use super::agent::Interval;

/// One MI of one agent: the interval's counters and the flow's RTT state, as the environment
/// sees them (bytes, counts, seconds, bit/s; NaN where there was nothing to measure).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measure {
    pub sent_bytes: f64,
    pub lost_bytes: f64,
    pub acked_bytes: f64,
    pub ecn_bytes: f64,
    pub timeouts: f64,
    pub rtt_count: f64,
    pub mean_rtt: f64,
    pub rtt_min: f64,
    pub rtt_max: f64,
    pub latency_gradient: f64,
    pub delivery_rate: f64,
    pub srtt: f64,
    pub min_rtt: f64,
    /// The MI's length, s.
    pub interval: f64,
    /// The watched link's backlog at the MI's end, packets.
    pub queue_pkts: f64,
    /// The flow's congestion window at the MI's end, bytes.
    pub cwnd_bytes: f64,
}

impl Measure {
    /// The names of [`Measure::values`], in order.
    pub const FIELDS: [&'static str; 16] = [
        "sent_bytes",
        "lost_bytes",
        "acked_bytes",
        "ecn_bytes",
        "timeouts",
        "rtt_count",
        "mean_rtt",
        "rtt_min",
        "rtt_max",
        "latency_gradient",
        "delivery_rate",
        "srtt",
        "min_rtt",
        "interval",
        "queue_pkts",
        "cwnd_bytes",
    ];

    /// A measure from an interval and the flow's smoothed and minimum RTT (s, NaN if none),
    /// the MI's length (s), the watched queue (packets) and the window (bytes).
    pub fn new(
        i: &Interval,
        srtt: f64,
        min_rtt: f64,
        span: f64,
        queue_pkts: f64,
        cwnd_bytes: f64,
    ) -> Measure {
        let sampled = |x: f64| if i.rtt_count > 0 { x } else { f64::NAN };
        Measure {
            sent_bytes: i.sent_bytes as f64,
            lost_bytes: i.lost_bytes as f64,
            acked_bytes: i.acked_bytes as f64,
            ecn_bytes: i.ecn_bytes as f64,
            timeouts: i.timeouts as f64,
            rtt_count: i.rtt_count as f64,
            mean_rtt: i.mean_rtt().unwrap_or(f64::NAN),
            rtt_min: sampled(i.rtt_min),
            rtt_max: sampled(i.rtt_max),
            latency_gradient: i.latency_gradient(),
            delivery_rate: i.delivery_rate as f64,
            srtt,
            min_rtt,
            interval: span,
            queue_pkts,
            cwnd_bytes,
        }
    }

    /// Every field, in the order of [`Measure::FIELDS`].
    pub fn values(&self) -> Vec<f64> {
        vec![
            self.sent_bytes,
            self.lost_bytes,
            self.acked_bytes,
            self.ecn_bytes,
            self.timeouts,
            self.rtt_count,
            self.mean_rtt,
            self.rtt_min,
            self.rtt_max,
            self.latency_gradient,
            self.delivery_rate,
            self.srtt,
            self.min_rtt,
            self.interval,
            self.queue_pkts,
            self.cwnd_bytes,
        ]
    }

    /// Acknowledged bit/s over the MI.
    pub fn throughput(&self) -> f64 {
        self.acked_bytes * 8.0 / self.interval.max(1e-9)
    }

    /// Retransmitted bytes over sent bytes (0 when nothing was sent).
    pub fn loss(&self) -> f64 {
        if self.sent_bytes > 0.0 {
            self.lost_bytes / self.sent_bytes
        } else {
            0.0
        }
    }
}

/// An observation feature (see the module's header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    LatencyGradient,
    LatencyRatio,
    SendRatio,
    LossFraction,
    EcnFraction,
    DeliveryRate,
    Rtt,
    Action,
    Cwnd,
    Queue,
}

impl Feature {
    /// Every feature with its name.
    pub const ALL: [(&'static str, Feature); 10] = [
        ("latency_gradient", Feature::LatencyGradient),
        ("latency_ratio", Feature::LatencyRatio),
        ("send_ratio", Feature::SendRatio),
        ("loss_fraction", Feature::LossFraction),
        ("ecn_fraction", Feature::EcnFraction),
        ("delivery_rate", Feature::DeliveryRate),
        ("rtt", Feature::Rtt),
        ("action", Feature::Action),
        ("cwnd", Feature::Cwnd),
        ("queue", Feature::Queue),
    ];

    /// The feature named `name`.
    pub fn parse(name: &str) -> Result<Feature, SpecError> {
        Feature::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, f)| f)
            .ok_or_else(|| {
                let names: Vec<_> = Feature::ALL.iter().map(|(n, _)| *n).collect();
                SpecError(format!("feature {name:?}: one of {}", names.join(", ")))
            })
    }
}

/// What an action sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActionKind {
    /// Aurora's (§4.1): a ∈ [−scale, scale]; the rate becomes rate·(1 + αa) for a ≥ 0 and
    /// rate/(1 − αa) below, α = [`AURORA_ALPHA`]; kept in [10 kb/s, `max_rate_bps`].
    RateMultiplier { scale: f64 },
    /// A window in segments, [1, max].
    Cwnd { max: f64 },
    /// A pacing rate in Mb/s, [0.1, max].
    Rate { max_mbps: f64 },
}

/// Aurora's action scaling factor α (§4.1).
pub const AURORA_ALPHA: f64 = 0.025;

impl ActionKind {
    /// The action's range (continuous actions are clamped into it; a discrete action's k
    /// values are spaced evenly over it).
    pub fn range(self) -> (f64, f64) {
        match self {
            ActionKind::RateMultiplier { scale } => (-scale, scale),
            ActionKind::Cwnd { max } => (1.0, max),
            ActionKind::Rate { max_mbps } => (0.1, max_mbps),
        }
    }
}

/// A reward (see the module's header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reward {
    Aurora,
    AlphaFair { alpha: f64 },
    Power,
    Num,
}

/// An environment's settings, the same for every agent in it.
#[derive(Clone, Debug)]
pub struct EnvSpec {
    pub features: Vec<Feature>,
    /// MIs stacked in an observation, oldest first.
    pub history: usize,
    pub action: ActionKind,
    /// k evenly spaced actions instead of a continuous one.
    pub discrete: Option<u32>,
    /// The highest rate a rate-multiplier reaches, bit/s.
    pub max_rate_bps: f64,
    pub reward: Reward,
    pub reward_scale: f64,
    /// A fixed MI, s; `None`: one smoothed RTT.
    pub mi: Option<f64>,
    /// The network's base RTT (the MI before any RTT sample), s.
    pub base_rtt: f64,
    /// The bandwidth-delay product in packets (the `queue` feature's unit).
    pub bdp_pkts: f64,
    /// The segment size, bytes (a window action's unit; Aurora's packets).
    pub packet_bytes: f64,
}

/// A setting the environment cannot use, said plainly.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

impl EnvSpec {
    /// Checks the settings a Python caller may get wrong.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |m: String| Err(SpecError(m));
        if self.features.is_empty() {
            return bad("features: at least one".into());
        }
        if self.history == 0 {
            return bad("history 0: at least 1".into());
        }
        if let Some(k) = self.discrete {
            if k < 2 {
                return bad(format!("discrete {k}: at least 2 values"));
            }
        }
        let (lo, hi) = self.action.range();
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return bad(format!(
                "action range [{lo}, {hi}]: needs low < high, both finite"
            ));
        }
        if let Some(mi) = self.mi {
            if !(mi.is_finite() && mi > 0.0) {
                return bad(format!("mi {mi}: a positive number of seconds"));
            }
        }
        for (what, v) in [
            ("base_rtt", self.base_rtt),
            ("bdp_pkts", self.bdp_pkts),
            ("packet_bytes", self.packet_bytes),
            ("max_rate_bps", self.max_rate_bps),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(format!("{what} {v}: a positive finite number"));
            }
        }
        if let Reward::AlphaFair { alpha } = self.reward {
            if !(alpha.is_finite() && alpha >= 0.0) {
                return bad(format!("alpha {alpha}: a finite number ≥ 0"));
            }
        }
        Ok(())
    }

    /// The observation's length: features × history.
    pub fn observation_len(&self) -> usize {
        self.features.len() * self.history
    }

    /// The action as a number in its range: a discrete index mapped onto the grid, a
    /// continuous one clamped.
    pub fn value(&self, action: f64) -> Result<f64, SpecError> {
        let (lo, hi) = self.action.range();
        if let Some(k) = self.discrete {
            let i = action;
            if !(i.fract() == 0.0 && i >= 0.0 && i < k as f64) {
                return Err(SpecError(format!("action {i}: an index in [0, {k})")));
            }
            return Ok(lo + i * (hi - lo) / (k - 1) as f64);
        }
        if !action.is_finite() {
            return Err(SpecError(format!("action {action}: not a finite number")));
        }
        Ok(action.clamp(lo, hi))
    }
}

/// One agent's part of an environment: its setting and what it remembers.
#[derive(Clone, Debug)]
pub struct AgentEnv {
    /// The flow's setting: a pacing rate (bit/s) or a window (bytes).
    pub setting: f64,
    initial: f64,
    /// The highest throughput seen this episode, bit/s.
    max_rate: f64,
    /// The NUM reward's target rate, bit/s.
    pub target: f64,
    /// The feature history as a ring written twice (rows i and i + history), so the last
    /// `history` rows are always one contiguous slice.
    ring: Vec<f32>,
    head: usize,
}

/// What an MI earned one agent, beside its observation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub reward: f64,
    pub throughput_bps: f64,
    /// The MI's mean RTT (else the smoothed, else the base RTT), s.
    pub rtt: f64,
    pub loss: f64,
}

impl AgentEnv {
    /// An agent starting at `initial` (bit/s, or bytes for a window) aiming at `target`
    /// (bit/s; the NUM reward's).
    pub fn new(spec: &EnvSpec, initial: f64, target: f64) -> AgentEnv {
        AgentEnv {
            setting: initial,
            initial,
            max_rate: 0.0,
            target,
            ring: vec![0.0; 2 * spec.history * spec.features.len()],
            head: 0,
        }
    }

    /// The setting after `action` (already in its range, [`EnvSpec::value`]).
    pub fn act(&mut self, spec: &EnvSpec, value: f64) -> f64 {
        self.setting = match spec.action {
            ActionKind::RateMultiplier { .. } => {
                // Aurora §4.1: x ← x·(1 + αa) for a ≥ 0, x/(1 − αa) for a < 0.
                let a = value * AURORA_ALPHA;
                let x = if a >= 0.0 {
                    self.setting * (1.0 + a)
                } else {
                    self.setting / (1.0 - a)
                };
                x.clamp(1e4, spec.max_rate_bps)
            }
            ActionKind::Cwnd { .. } => value * spec.packet_bytes,
            ActionKind::Rate { .. } => value * 1e6,
        };
        self.setting
    }

    /// Records an MI: pushes its features onto the history and returns its reward.
    pub fn observe(&mut self, spec: &EnvSpec, m: &Measure) -> Outcome {
        let rate = m.throughput();
        if rate > self.max_rate {
            self.max_rate = rate;
        }
        let width = spec.features.len();
        let h = spec.history;
        for (j, &f) in spec.features.iter().enumerate() {
            let v = self.feature(spec, f, m, rate).clamp(-10.0, 10.0) as f32;
            self.ring[self.head * width + j] = v;
            self.ring[(self.head + h) * width + j] = v;
        }
        self.head = (self.head + 1) % h;
        self.outcome(spec, m, rate)
    }

    fn feature(&self, spec: &EnvSpec, f: Feature, m: &Measure, rate: f64) -> f64 {
        let ratio = |x: f64| {
            if !x.is_nan() && m.min_rtt > 0.0 {
                x / m.min_rtt
            } else {
                1.0
            }
        };
        match f {
            Feature::LatencyGradient => m.latency_gradient,
            Feature::LatencyRatio => ratio(m.mean_rtt),
            Feature::SendRatio => {
                if m.acked_bytes > 0.0 {
                    (m.sent_bytes / m.acked_bytes).min(10.0)
                } else if m.sent_bytes > 0.0 {
                    10.0
                } else {
                    1.0
                }
            }
            Feature::LossFraction => m.loss(),
            Feature::EcnFraction => {
                if m.acked_bytes > 0.0 {
                    m.ecn_bytes / m.acked_bytes
                } else {
                    0.0
                }
            }
            Feature::DeliveryRate => {
                if self.max_rate > 0.0 {
                    rate / self.max_rate
                } else {
                    0.0
                }
            }
            Feature::Rtt => ratio(m.srtt),
            Feature::Action => (self.setting / self.initial).log2(),
            Feature::Cwnd => m.cwnd_bytes / (spec.bdp_pkts * spec.packet_bytes),
            Feature::Queue => m.queue_pkts / spec.bdp_pkts,
        }
    }

    fn outcome(&self, spec: &EnvSpec, m: &Measure, thr_bps: f64) -> Outcome {
        let loss = m.loss();
        let rtt = [m.mean_rtt, m.srtt]
            .into_iter()
            .find(|x| !x.is_nan())
            .unwrap_or(spec.base_rtt);
        let mbps = thr_bps / 1e6;
        let r = match spec.reward {
            // Aurora §4.2: 10·throughput − 1000·latency − 2000·loss.
            Reward::Aurora => {
                10.0 * thr_bps / (8.0 * spec.packet_bytes) - 1000.0 * rtt - 2000.0 * loss
            }
            Reward::AlphaFair { alpha } => {
                let x = mbps.max(1e-6);
                if alpha == 1.0 {
                    x.ln()
                } else {
                    x.powf(1.0 - alpha) / (1.0 - alpha)
                }
            }
            Reward::Power => mbps / rtt,
            Reward::Num => -(thr_bps - self.target).abs() / self.target,
        };
        Outcome {
            reward: r * spec.reward_scale,
            throughput_bps: thr_bps,
            rtt,
            loss,
        }
    }

    /// The observation: the last `history` MIs' features, oldest first.
    pub fn observation(&self, spec: &EnvSpec) -> &[f32] {
        let width = spec.features.len();
        &self.ring[self.head * width..(self.head + spec.history) * width]
    }
}

/// The next MI's length, s: the fixed MI, or the smallest smoothed RTT among the agents' last
/// measures (every agent acts at least once per its RTT), or the base RTT before any sample.
pub fn next_interval<'a>(spec: &EnvSpec, last: impl IntoIterator<Item = &'a Measure>) -> f64 {
    if let Some(mi) = spec.mi {
        return mi;
    }
    last.into_iter()
        .map(|m| m.srtt)
        .filter(|s| *s > 0.0)
        .fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.min(s))))
        .unwrap_or(spec.base_rtt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(features: &[Feature], history: usize, action: ActionKind, reward: Reward) -> EnvSpec {
        EnvSpec {
            features: features.to_vec(),
            history,
            action,
            discrete: None,
            max_rate_bps: 1e10,
            reward,
            reward_scale: 1.0,
            mi: None,
            base_rtt: 0.024,
            bdp_pkts: 20.0,
            packet_bytes: 1500.0,
        }
    }

    fn measure(sent: f64, acked: f64, lost: f64, mean_rtt: f64, srtt: f64) -> Measure {
        Measure {
            sent_bytes: sent,
            acked_bytes: acked,
            lost_bytes: lost,
            mean_rtt,
            srtt,
            min_rtt: 0.020,
            interval: 0.025,
            rtt_count: 10.0,
            queue_pkts: 5.0,
            cwnd_bytes: 15000.0,
            ..Measure::default()
        }
    }

    #[test]
    fn the_history_keeps_the_last_intervals_oldest_first() {
        let s = spec(
            &[Feature::LossFraction],
            3,
            ActionKind::Rate { max_mbps: 100.0 },
            Reward::Power,
        );
        let mut a = AgentEnv::new(&s, 1e6, 0.0);
        assert_eq!(a.observation(&s), &[0.0, 0.0, 0.0]);
        for lost in [1.0, 2.0, 3.0, 4.0] {
            a.observe(&s, &measure(10.0, 10.0, lost, 0.02, 0.02));
        }
        assert_eq!(a.observation(&s), &[0.2, 0.3, 0.4]);
    }

    #[test]
    fn features_follow_aurora_and_orca_and_are_clipped() {
        use Feature::*;
        let all: Vec<_> = Feature::ALL.iter().map(|&(_, f)| f).collect();
        let s = spec(&all, 1, ActionKind::Rate { max_mbps: 100.0 }, Reward::Power);
        let mut a = AgentEnv::new(&s, 1e6, 0.0);
        a.act(&s, 4.0); // 4 Mb/s: two doublings over the first setting
        let mut m = measure(3000.0, 1500.0, 300.0, 0.030, 0.025);
        m.latency_gradient = 0.5;
        m.ecn_bytes = 750.0;
        a.observe(&s, &m);
        let o = a.observation(&s);
        let get = |f: Feature| o[all.iter().position(|&g| g == f).unwrap()];
        assert_eq!(get(LatencyGradient), 0.5);
        assert!((get(LatencyRatio) - 1.5).abs() < 1e-6);
        assert_eq!(get(SendRatio), 2.0);
        assert!((get(LossFraction) - 0.1).abs() < 1e-6);
        assert_eq!(get(EcnFraction), 0.5);
        assert_eq!(get(DeliveryRate), 1.0);
        assert!((get(Rtt) - 1.25).abs() < 1e-6);
        assert_eq!(get(Action), 2.0);
        assert_eq!(get(Cwnd), 0.5);
        assert_eq!(get(Queue), 0.25);
        // Nothing acknowledged: send ratio 10; a huge gradient is clipped to 10.
        let mut m = measure(3000.0, 0.0, 0.0, f64::NAN, f64::NAN);
        m.latency_gradient = 1e6;
        a.observe(&s, &m);
        let o = a.observation(&s);
        assert_eq!(o[0], 10.0);
        assert_eq!(o[1], 1.0, "no RTT sample: ratio 1");
        assert_eq!(o[2], 10.0);
        assert_eq!(o[5], 0.0, "delivery over the episode's best");
    }

    #[test]
    fn the_rate_multiplier_is_aurora_s_and_bounded() {
        let s = spec(
            &[Feature::Action],
            1,
            ActionKind::RateMultiplier { scale: 1.0 },
            Reward::Aurora,
        );
        let mut a = AgentEnv::new(&s, 1e6, 0.0);
        assert_eq!(a.act(&s, s.value(1.0).unwrap()), 1e6 * 1.025);
        assert!((a.act(&s, s.value(-1.0).unwrap()) - 1e6).abs() < 1e-6);
        assert_eq!(s.value(5.0).unwrap(), 1.0, "clamped into the range");
        for _ in 0..1000 {
            a.act(&s, -1.0);
        }
        assert_eq!(a.setting, 1e4, "at least 10 kb/s");
    }

    #[test]
    fn discrete_actions_map_onto_the_grid_and_bad_ones_are_refused() {
        let mut s = spec(
            &[Feature::Action],
            1,
            ActionKind::Cwnd { max: 11.0 },
            Reward::Power,
        );
        s.discrete = Some(6);
        assert_eq!(s.value(0.0).unwrap(), 1.0);
        assert_eq!(s.value(5.0).unwrap(), 11.0);
        assert_eq!(s.value(2.0).unwrap(), 5.0);
        assert!(s.value(6.0).unwrap_err().0.contains("an index in [0, 6)"));
        assert!(s.value(1.5).is_err());
        s.discrete = None;
        assert!(s
            .value(f64::NAN)
            .unwrap_err()
            .0
            .contains("not a finite number"));
        let mut a = AgentEnv::new(&s, 1500.0, 0.0);
        assert_eq!(a.act(&s, 10.0), 15000.0, "a window in segments");
    }

    #[test]
    fn rewards_are_the_published_formulas() {
        let m = measure(15000.0, 15000.0, 1500.0, 0.030, 0.025);
        // 15,000 B in 25 ms: 4.8 Mb/s, 400 packets/s.
        let r = |reward| {
            let s = spec(
                &[Feature::Rtt],
                1,
                ActionKind::Rate { max_mbps: 100.0 },
                reward,
            );
            AgentEnv::new(&s, 1e6, 4e6).observe(&s, &m)
        };
        let o = r(Reward::Aurora);
        assert!((o.throughput_bps - 4.8e6).abs() < 1e-3);
        assert!((o.reward - (10.0 * 400.0 - 1000.0 * 0.030 - 2000.0 * 0.1)).abs() < 1e-9);
        assert!((r(Reward::AlphaFair { alpha: 1.0 }).reward - 4.8f64.ln()).abs() < 1e-12);
        assert!((r(Reward::AlphaFair { alpha: 2.0 }).reward + 1.0 / 4.8).abs() < 1e-12);
        assert!((r(Reward::Power).reward - 4.8 / 0.030).abs() < 1e-9);
        assert!((r(Reward::Num).reward + 0.2).abs() < 1e-12);
        // Without an RTT sample the smoothed RTT stands in, then the base RTT.
        let s = spec(
            &[Feature::Rtt],
            1,
            ActionKind::Rate { max_mbps: 100.0 },
            Reward::Power,
        );
        let mut a = AgentEnv::new(&s, 1e6, 0.0);
        assert_eq!(
            a.observe(&s, &measure(0.0, 0.0, 0.0, f64::NAN, 0.025)).rtt,
            0.025
        );
        assert_eq!(
            a.observe(&s, &measure(0.0, 0.0, 0.0, f64::NAN, f64::NAN))
                .rtt,
            0.024
        );
    }

    #[test]
    fn the_interval_is_fixed_or_the_smallest_smoothed_rtt() {
        let mut s = spec(
            &[Feature::Rtt],
            1,
            ActionKind::Rate { max_mbps: 1.0 },
            Reward::Power,
        );
        let a = measure(0.0, 0.0, 0.0, 0.03, 0.030);
        let b = measure(0.0, 0.0, 0.0, 0.03, 0.026);
        let none = measure(0.0, 0.0, 0.0, f64::NAN, f64::NAN);
        assert_eq!(next_interval(&s, [&a, &b]), 0.026);
        assert_eq!(next_interval(&s, [&none]), 0.024);
        assert_eq!(next_interval(&s, []), 0.024);
        s.mi = Some(0.05);
        assert_eq!(next_interval(&s, [&a]), 0.05);
    }

    #[test]
    fn bad_settings_are_named() {
        let mut s = spec(
            &[Feature::Rtt],
            0,
            ActionKind::Rate { max_mbps: 1.0 },
            Reward::Power,
        );
        assert!(s.validate().unwrap_err().0.contains("history"));
        s.history = 2;
        s.mi = Some(-1.0);
        assert!(s.validate().unwrap_err().0.contains("mi"));
        s.mi = None;
        s.action = ActionKind::Rate { max_mbps: 0.05 };
        assert!(s.validate().unwrap_err().0.contains("action range"));
        s.action = ActionKind::Rate { max_mbps: 1.0 };
        assert!(s.validate().is_ok());
        assert!(Feature::parse("throughput?")
            .unwrap_err()
            .0
            .contains("latency_gradient"));
    }
}
