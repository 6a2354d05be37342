//! PCC Vivace (Dong, Meng, Zarchy, Godfrey, Schapira, "PCC Vivace: Online-Learning Congestion
//! Control", NSDI 2018 [Dong18]): a rate-based controller that learns online. The sender runs
//! monitor intervals (MIs) of about one RTT, each at one rate; when an MI's packets are all
//! acknowledged it scores the MI with a utility of its throughput, RTT gradient and loss, and
//! moves the rate along the utility's gradient.
//!
//! [Dong18] §3–4 as implemented here:
//! - Utility (§3, eq. 1): u(x) = x^t − b·x·dRTT/dT − c·x·L, x the MI's sending rate in Mb/s,
//!   dRTT/dT the slope of a least-squares line through the MI's RTT samples against time, L its
//!   loss rate; t = 0.9, b = 900, c = 11.35.
//! - Starting (§4.1): the rate doubles every MI until an MI's utility falls below the one
//!   before; the rate then goes back to that one's, and probing starts.
//! - Probing (§4.1, randomized controlled trials): two pairs of MIs at r(1 + ε) and r(1 − ε),
//!   each pair in random order, ε = 0.05. If both pairs agree which is better, the rate moves
//!   that way; otherwise probing repeats at r.
//! - Moving (§4.2): Δr = m·θ₀·γ, γ the utility gradient (first from the probes, then between
//!   the last two MIs), m the confidence amplifier (1, 2, 3, … for consecutive steps the same
//!   way), θ₀ = 1 Mb/s per unit of gradient; |Δr| is bounded by ω·r, ω = ω₀ + k·δ (ω₀ = 0.05,
//!   k the consecutive steps that hit the bound). When the gradient's sign turns, the sender
//!   goes back to probing.
//! - The window does not limit the sender (twice the rate times the smoothed RTT, at least four
//!   segments); packets are paced at the rate.
//!
//! Departures and choices the paper leaves open:
//! - The RTT-gradient filter (§4.2 ignores gradients too small to be a trend) is one-sided, as
//!   in the authors' implementation (PCC-Uspace's Vivace utility zeroes every inflation below
//!   its threshold): a gradient below `rtt_filter` (0.01) counts as zero, negative ones
//!   included. Taken literally, eq. (1) rewards a draining queue with −b·x·dRTT/dT > 0 —
//!   thousands of utility units against x^0.9 ≈ 15 — and the probes then chase the queue's
//!   oscillation instead of the rate: two flows stayed at 18 and 1 Mb/s for 30 s.
//! - δ = 0.005 (ω₀/10). With δ = 0.05 four flows on a 20 Mb/s link reached a Jain index of only
//!   0.82 on one of three seeds (0.96–0.98 with 0.005; `cargo test -p acclab-sim --test
//!   vivace`).
//! - Over cellular capacity traces the RTT samples jitter by tens of milliseconds within an MI
//!   (deliveries come in bursts), the least-squares gradient with them, and the latency term
//!   (b = 900) outweighs x^0.9 at every probe: Vivace stays far below the link's capacity
//!   there (`acclab reproduce cellular-comparison`). A tolerance on the RTT's rise (the
//!   authors' QUIC code ignores changes under 20% of the RTT) lifted it but let the queue
//!   grow to seconds and broke the dumbbell's fairness; it is not applied.
//! - Starting doubles per MI, but at most two doublings ahead of the last MI whose result came
//!   back (MIs are pipelined; with no feedback the rate would double without bound).
//! - An MI lasts one smoothed RTT and at least the time `min_mi_packets` (20) take at its rate,
//!   as in the authors' implementation — fewer RTT samples make the gradient noise; MIs are
//!   pipelined (the next starts while the last waits for its ACKs), and a result whose MI was planned before the last decision is
//!   dropped. An MI's losses are the retransmissions of its segments. A timeout halves the rate
//!   and restarts probing. The rate never falls below `min_rate`.

use std::collections::VecDeque;

use rand::RngExt;

use super::{AckSample, CongestionController, CongestionEvent, SentSample};
use crate::params::{in_range, FlowContext, ParamError, SchemeParams};
use crate::rng::Rng;
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};

/// What an MI was sent to find out.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Purpose {
    Start,
    /// Probe pair `pair` (0 or 1), above (`true`) or below r.
    Probe {
        pair: u8,
        up: bool,
    },
    Move,
}

/// One monitor interval.
#[derive(Clone, Debug)]
struct Mi {
    purpose: Purpose,
    /// The decision epoch it was planned in.
    epoch: u64,
    rate_mbps: f64,
    end: Time,
    first_seq: Option<u64>,
    last_seq: u64,
    sent: u64,
    lost: u64,
    rtts: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Starting {
        last: Option<(f64, f64)>,
    },
    Probing {
        base: f64,
        results: [[Option<f64>; 2]; 2],
    },
    Moving {
        up: bool,
        m: f64,
        last: (f64, f64),
    },
}

/// PCC Vivace's state.
#[derive(Clone, Debug)]
pub struct Vivace {
    mss: f64,
    p: VivaceParams,
    rate_mbps: f64,
    phase: Phase,
    epoch: u64,
    /// The rates still to send in this epoch's probes, in order, with what each is for.
    plan: VecDeque<(Purpose, f64)>,
    mis: VecDeque<Mi>,
    srtt: Option<Duration>,
    /// Consecutive steps that hit the change bound.
    clipped: u32,
    rng: Rng,
}

impl Vivace {
    pub fn new(mss: u64, p: &VivaceParams, rng: Rng) -> Vivace {
        Vivace {
            mss: mss as f64,
            rate_mbps: p.initial_rate.as_f64() / 1e6,
            p: p.clone(),
            phase: Phase::Starting { last: None },
            epoch: 0,
            plan: VecDeque::new(),
            mis: VecDeque::new(),
            srtt: None,
            clipped: 0,
            rng,
        }
    }

    /// The rate the next MIs are sent at (outside probes), Mb/s.
    pub fn rate_mbps(&self) -> f64 {
        self.rate_mbps
    }

    fn min_mbps(&self) -> f64 {
        self.p.min_rate.as_f64() / 1e6
    }

    /// [Dong18] eq. (1).
    fn utility(&self, mi: &Mi) -> f64 {
        let x = mi.rate_mbps;
        let loss = if mi.sent == 0 {
            0.0
        } else {
            mi.lost as f64 / mi.sent as f64
        };
        let mut gradient = slope(&mi.rtts);
        if gradient < self.p.rtt_filter {
            gradient = 0.0; // §4.2: RTT noise is not a trend (one-sided: see the header)
        }
        x.powf(self.p.exponent)
            - self.p.latency_coefficient * x * gradient
            - self.p.loss_coefficient * x * loss
    }

    /// Starts the MI that `now`'s segment opens: its rate from the plan or the phase.
    fn open_mi(&mut self, now: Time) {
        let (purpose, rate) = match (&self.phase, self.plan.pop_front()) {
            (_, Some((purpose, rate))) => (purpose, rate),
            (Phase::Starting { last }, None) => {
                // Each starting MI doubles the one before, but runs at most two doublings
                // ahead of the last MI whose result came back: without feedback (a long queue,
                // a stalled cumulative ACK) the rate does not run away.
                let measured = last.map_or(self.p.initial_rate.as_f64() / 1e6, |(r, _)| r);
                let r = self
                    .mis
                    .back()
                    .map_or(self.rate_mbps, |m| m.rate_mbps * 2.0)
                    .min(4.0 * measured);
                self.rate_mbps = r;
                (Purpose::Start, r)
            }
            (_, None) => (Purpose::Move, self.rate_mbps),
        };
        let rate = rate.max(self.min_mbps());
        // One sRTT, and long enough for `min_mi_packets` at the MI's rate.
        let packets = f64::from(self.p.min_mi_packets) * self.mss * 8.0 / (rate * 1e6);
        let length = self
            .srtt
            .unwrap_or(Duration::from_millis(100))
            .max(Duration::from_secs_f64(packets))
            .max(Duration::from_millis(1));
        self.mis.push_back(Mi {
            purpose,
            epoch: self.epoch,
            rate_mbps: rate,
            end: now + length,
            first_seq: None,
            last_seq: 0,
            sent: 0,
            lost: 0,
            rtts: Vec::new(),
        });
    }

    /// A new decision: later results of MIs planned before it are dropped.
    fn decide(&mut self, phase: Phase) {
        self.epoch += 1;
        self.plan.clear();
        if let Phase::Probing { base, .. } = phase {
            // Two pairs, each in random order.
            for pair in 0..2u8 {
                let first_up = self.rng.random::<bool>();
                for up in [first_up, !first_up] {
                    let f = if up {
                        1.0 + self.p.epsilon
                    } else {
                        1.0 - self.p.epsilon
                    };
                    self.plan.push_back((Purpose::Probe { pair, up }, base * f));
                }
            }
        }
        self.phase = phase;
    }

    /// Moves the rate by m·θ₀·γ within the bound ω·r ([Dong18] §4.2).
    fn step(&mut self, m: f64, gamma: f64) {
        let r = self.rate_mbps;
        let omega = self.p.omega0 + f64::from(self.clipped) * self.p.omega_step;
        let mut dr = m * self.p.theta0 * gamma;
        if dr.abs() > omega * r {
            dr = dr.signum() * omega * r;
            self.clipped += 1;
        } else {
            self.clipped = 0;
        }
        self.rate_mbps = (r + dr).max(self.min_mbps());
    }

    /// An MI's result.
    fn on_result(&mut self, mi: Mi) {
        if mi.epoch != self.epoch {
            return;
        }
        let u = self.utility(&mi);
        match (self.phase.clone(), mi.purpose) {
            (Phase::Starting { last }, Purpose::Start) => match last {
                Some((r0, u0)) if u < u0 => {
                    self.rate_mbps = r0;
                    self.decide(Phase::Probing {
                        base: r0,
                        results: [[None; 2]; 2],
                    });
                }
                _ => {
                    self.phase = Phase::Starting {
                        last: Some((mi.rate_mbps, u)),
                    }
                }
            },
            (Phase::Probing { base, mut results }, Purpose::Probe { pair, up }) => {
                results[pair as usize][usize::from(up)] = Some(u);
                let done: Option<Vec<(f64, f64)>> =
                    results.iter().map(|p| Some((p[1]?, p[0]?))).collect();
                let Some(pairs) = done else {
                    self.phase = Phase::Probing { base, results };
                    return;
                };
                let ups = pairs.iter().filter(|(hi, lo)| hi > lo).count();
                if ups == 1 {
                    // The trials disagree: probe again at r.
                    self.decide(Phase::Probing {
                        base,
                        results: [[None; 2]; 2],
                    });
                    return;
                }
                let width = 2.0 * self.p.epsilon * base;
                let gamma = pairs.iter().map(|(hi, lo)| (hi - lo) / width).sum::<f64>() / 2.0;
                self.rate_mbps = base;
                self.clipped = 0;
                let u_base = pairs.iter().map(|(hi, lo)| (hi + lo) / 2.0).sum::<f64>() / 2.0;
                self.step(1.0, gamma);
                self.decide(Phase::Moving {
                    up: gamma > 0.0,
                    m: 1.0,
                    last: (base, u_base),
                });
            }
            (Phase::Moving { up, m, last }, Purpose::Move) => {
                let (r0, u0) = last;
                if (mi.rate_mbps - r0).abs() < 1e-9 {
                    return;
                }
                let gamma = (u - u0) / (mi.rate_mbps - r0);
                if (gamma > 0.0) != up {
                    // The gradient turned: back to probing at this rate.
                    self.rate_mbps = mi.rate_mbps;
                    self.decide(Phase::Probing {
                        base: mi.rate_mbps,
                        results: [[None; 2]; 2],
                    });
                    return;
                }
                let m = m + 1.0;
                self.step(m, gamma);
                self.decide(Phase::Moving {
                    up,
                    m,
                    last: (mi.rate_mbps, u),
                });
            }
            _ => {}
        }
    }
}

/// The slope of a least-squares line through `xy`; 0 for fewer than two points.
fn slope(xy: &[(f64, f64)]) -> f64 {
    if xy.len() < 2 {
        return 0.0;
    }
    let n = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return 0.0;
    }
    xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx
}

impl CongestionController for Vivace {
    fn on_sent(&mut self, now: Time, s: &SentSample) {
        if s.retransmission {
            if let Some(mi) = self
                .mis
                .iter_mut()
                .find(|m| m.first_seq.is_some_and(|f| f <= s.seq) && s.seq <= m.last_seq)
            {
                mi.lost += 1;
            }
            return;
        }
        if self.mis.back().is_none_or(|m| now >= m.end) {
            self.open_mi(now);
        }
        let mi = self.mis.back_mut().expect("an MI is open");
        mi.first_seq.get_or_insert(s.seq);
        mi.last_seq = s.seq;
        mi.sent += 1;
    }

    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.srtt = Some(match self.srtt {
                None => rtt,
                Some(s) => Duration((s.0 * 7 + rtt.0) / 8),
            });
            let acked = ack.cumulative_ack.saturating_sub(1);
            if let Some(mi) = self
                .mis
                .iter_mut()
                .find(|m| m.first_seq.is_some_and(|f| f <= acked) && acked <= m.last_seq)
            {
                mi.rtts.push((now.as_secs_f64(), rtt.as_secs_f64()));
            }
        }
        // Every MI whose segments are all acknowledged, in order (the open one excepted).
        while self.mis.len() > 1
            && self.mis[0]
                .first_seq
                .is_none_or(|_| ack.cumulative_ack > self.mis[0].last_seq)
        {
            let mi = self.mis.pop_front().expect("an MI");
            if mi.sent > 0 {
                self.on_result(mi);
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        if ev.kind == super::Congestion::Timeout {
            let r = (self.rate_mbps / 2.0).max(self.min_mbps());
            self.rate_mbps = r;
            self.mis.clear();
            self.decide(Phase::Probing {
                base: r,
                results: [[None; 2]; 2],
            });
        }
        // Losses and marks score the MIs; the rate does not react to them directly.
    }

    fn window(&self) -> u64 {
        let srtt = self
            .srtt
            .unwrap_or(Duration::from_millis(100))
            .as_secs_f64();
        let rate = self.mis.back().map_or(self.rate_mbps, |m| m.rate_mbps);
        (2.0 * rate * 1e6 / 8.0 * srtt).max(4.0 * self.mss) as u64
    }

    fn pacing_rate(&self) -> Option<Rate> {
        let rate = self.mis.back().map_or(self.rate_mbps, |m| m.rate_mbps);
        Some(Rate::from_bps(((rate * 1e6) as u64).max(1)))
    }
}

tcp_scheme_params! {
    /// `vivace` parameters ([Dong18]'s defaults).
    pub struct VivaceParams {
        /// The rate of the first MI (it doubles from there).
        pub initial_rate: Rate = Rate::from_bps(1_000_000),
        /// The lowest rate.
        pub min_rate: Rate = Rate::from_bps(100_000),
        /// The fewest packets an MI carries at its rate (it lasts at least that long).
        pub min_mi_packets: u32 = 20,
        /// t, the throughput exponent of the utility (0.9).
        pub exponent: f64 = 0.9,
        /// b, the weight of the RTT gradient (900).
        pub latency_coefficient: f64 = 900.0,
        /// c, the weight of the loss rate (11.35).
        pub loss_coefficient: f64 = 11.35,
        /// RTT gradients (s/s) below this count as zero, negative ones included (0.01).
        pub rtt_filter: f64 = 0.01,
        /// ε, the probes' distance from the rate (0.05).
        pub epsilon: f64 = 0.05,
        /// θ₀, Mb/s of change per unit of utility gradient (1).
        pub theta0: f64 = 1.0,
        /// ω₀, the change bound as a fraction of the rate (0.05).
        pub omega0: f64 = 0.05,
        /// δ, what each consecutive clipped step adds to the bound (0.005: ω₀/10).
        pub omega_step: f64 = 0.005,
    }
    sack = true;
}

impl SchemeParams for VivaceParams {
    fn validate(&self) -> Result<(), ParamError> {
        use std::ops::Bound::{Excluded, Included};
        in_range("exponent", self.exponent, (Excluded(0.0), Excluded(1.0)))?;
        in_range("latency_coefficient", self.latency_coefficient, 0.0..)?;
        in_range("loss_coefficient", self.loss_coefficient, 0.0..)?;
        in_range("rtt_filter", self.rtt_filter, 0.0..)?;
        in_range("epsilon", self.epsilon, (Excluded(0.0), Included(0.5)))?;
        in_range(
            "theta0",
            self.theta0,
            (Excluded(0.0), Excluded(f64::INFINITY)),
        )?;
        in_range("omega0", self.omega0, (Excluded(0.0), Included(1.0)))?;
        in_range("omega_step", self.omega_step, 0.0..=1.0)?;
        if self.min_rate > self.initial_rate {
            return Err(ParamError::at(
                "min_rate",
                format!(
                    "vivace `min_rate` {} is above `initial_rate` {}",
                    self.min_rate, self.initial_rate
                ),
            ));
        }
        self.tcp(false).validate("vivace")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:vivace", ctx.name));
        let cc = Vivace::new(ctx.packet_size as u64, self, rng);
        self.tcp(false).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mi(rate: f64, rtts: Vec<(f64, f64)>, sent: u64, lost: u64) -> Mi {
        Mi {
            purpose: Purpose::Move,
            epoch: 0,
            rate_mbps: rate,
            end: Time::ZERO,
            first_seq: Some(0),
            last_seq: sent,
            sent,
            lost,
            rtts,
        }
    }

    fn vivace() -> Vivace {
        Vivace::new(1000, &VivaceParams::default(), crate::rng::stream(1, "v"))
    }

    #[test]
    fn the_utility_rewards_rate_and_charges_rising_rtt_and_loss() {
        let v = vivace();
        // Flat RTTs, no loss: x^0.9.
        let flat = mi(10.0, vec![(0.0, 0.05), (0.1, 0.05)], 100, 0);
        assert!((v.utility(&flat) - 10f64.powf(0.9)).abs() < 1e-12);
        // RTT rising 2 ms per 100 ms (gradient 0.02): − 900·10·0.02.
        let rising = mi(10.0, vec![(0.0, 0.050), (0.1, 0.052)], 100, 0);
        assert!((v.utility(&rising) - (10f64.powf(0.9) - 180.0)).abs() < 1e-9);
        // A gradient under 0.01 is noise; a falling RTT is not rewarded.
        let noisy = mi(10.0, vec![(0.0, 0.050), (0.1, 0.0505)], 100, 0);
        assert!((v.utility(&noisy) - 10f64.powf(0.9)).abs() < 1e-12);
        let draining = mi(10.0, vec![(0.0, 0.080), (0.1, 0.050)], 100, 0);
        assert!((v.utility(&draining) - 10f64.powf(0.9)).abs() < 1e-12);
        // 5% loss: − 11.35·10·0.05.
        let lossy = mi(10.0, vec![], 100, 5);
        assert!((v.utility(&lossy) - (10f64.powf(0.9) - 5.675)).abs() < 1e-9);
    }

    #[test]
    fn starting_doubles_until_the_utility_falls_then_probes_both_sides() {
        let mut v = vivace();
        for r in [1.0, 2.0, 4.0] {
            let mut m = mi(r, vec![], 10, 0);
            m.purpose = Purpose::Start;
            v.on_result(m);
        }
        assert!(matches!(v.phase, Phase::Starting { .. }));
        // 8 Mb/s loses a fifth of its packets: utility below 4 Mb/s's.
        let mut m = mi(8.0, vec![], 10, 2);
        m.purpose = Purpose::Start;
        v.on_result(m);
        assert_eq!(v.rate_mbps(), 4.0);
        let planned: Vec<f64> = v.plan.iter().map(|p| p.1).collect();
        assert_eq!(planned.len(), 4);
        assert_eq!(planned.iter().filter(|&&r| r > 4.0).count(), 2);
        assert!(planned
            .iter()
            .all(|&r| (r - 4.2).abs() < 1e-9 || (r - 3.8).abs() < 1e-9));
    }

    #[test]
    fn agreeing_probes_move_the_rate_within_the_bound_and_disagreeing_ones_probe_again() {
        let mut v = vivace();
        v.rate_mbps = 10.0;
        v.decide(Phase::Probing {
            base: 10.0,
            results: [[None; 2]; 2],
        });
        let probe = |v: &mut Vivace, pair: u8, up: bool, lost: u64| {
            let mut m = mi(if up { 10.5 } else { 9.5 }, vec![], 100, lost);
            m.purpose = Purpose::Probe { pair, up };
            m.epoch = v.epoch;
            v.on_result(m);
        };
        // Pair 0 says up, pair 1 says down: probe again.
        probe(&mut v, 0, true, 0);
        probe(&mut v, 0, false, 5);
        probe(&mut v, 1, true, 5);
        probe(&mut v, 1, false, 0);
        assert!(matches!(v.phase, Phase::Probing { .. }));
        assert_eq!(v.rate_mbps(), 10.0);
        // Both say up: a step, bounded by ω₀·r = 0.5 Mb/s.
        for pair in 0..2 {
            probe(&mut v, pair, true, 0);
            probe(&mut v, pair, false, 0);
        }
        assert!(matches!(v.phase, Phase::Moving { up: true, .. }));
        assert!(
            v.rate_mbps() > 10.0 && v.rate_mbps() <= 10.5 + 1e-9,
            "{}",
            v.rate_mbps()
        );
    }
}
