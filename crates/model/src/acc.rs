//! ACC's fluid laws (000 §III-B): ACC-AIAD ẇ = −(κ/rtt)·sgn(a − a*) (eq. (3)), ACC-MW
//! ẇ = −κ·(rtt_p/rtt)·(a − a*)/w (eq. (5)), ACC-P ẇ = −(κ/rtt)·(a − a*) (eq. (6)), and 003
//! Algorithm 1 (expected minimum rate with an accumulation limit), with a = the flow's
//! accumulation (000 eq. (1)) plus x·Σ t_AVD at AVD links (000 §IV-D).
//!
//! Each law is the very policy Monaco's sender applies once per control period
//! (`acclab_core::cc::acc`, where Δw per period = ẇ·rtt: 000 eq. (10) is eq. (6) discretised),
//! here applied as a rate: ẇ = (policy(w) − w)/rtt, with the same rules (the optional increase
//! cap of one packet per period, the one-packet floor). So the model and the packet run share
//! one definition of every policy. A loss indication halves the window (decrease-due-to-loss),
//! at most once per round trip (feedback.rs `LossEvents`).
//!
//! The source paces at w/srtt, srtt = d + the forward queueing delay (Monaco's reverse packets
//! skip the queues), plus Σ t_AVD with the `virtual_rtt` option. Left out: Monaco's low-rate
//! regime (003 §V-A) and its pacing one packet per RTT above the window (a sender detail).

use acclab_core::cc::acc::{apply, AccPolicy, Feedback};
use acclab_core::config::MonacoParams;
use acclab_core::Duration;

use crate::feedback::{LossEvents, Seen};

/// A Monaco / ACC source: its policy and window.
pub struct AccSource {
    policy: Box<dyn AccPolicy>,
    /// a*, bytes (weight included).
    target: f64,
    packet: f64,
    increase_cap: bool,
    virtual_rtt: bool,
    /// Window, packets.
    pub window: f64,
    /// The last accumulation seen (a + x·Σ t_AVD), packets.
    pub accumulation: f64,
    /// Apply the policy once per control period (000 eq. (10), as the packet sender does)
    /// instead of as a rate; the time left in the current period, s.
    pub per_period: bool,
    period_left: f64,
    losses: LossEvents,
}

impl std::fmt::Debug for AccSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccSource")
            .field("target", &self.target)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl AccSource {
    pub fn new(p: &MonacoParams, packet: f64) -> AccSource {
        AccSource {
            policy: p.policy(),
            target: p.target_bytes(),
            packet,
            increase_cap: p.increase_cap,
            virtual_rtt: p.virtual_rtt,
            window: p.initial_window.0 as f64 / packet,
            accumulation: 0.0,
            per_period: false,
            period_left: 0.0,
            losses: LossEvents::default(),
        }
    }

    /// The round trip of a control period: pair sent → reverse packet back.
    pub fn rtt(&self, seen: &Seen) -> f64 {
        seen.prop_delay + seen.forward_queueing
    }

    /// The sending rate, packets per second.
    pub fn rate(&self, seen: &Seen) -> f64 {
        let vd = if self.virtual_rtt {
            seen.virtual_delay
        } else {
            0.0
        };
        self.window / (self.rtt(seen) + vd)
    }

    /// Advances the window over `h` seconds.
    pub fn step(&mut self, seen: &Seen, h: f64) {
        let rtt = self.rtt(seen);
        let p = self.packet;
        // â = a + x̄·Σ t_AVD (000 §IV-D), x̄ the egress rate.
        self.accumulation = seen.accumulation + seen.egress_rate * seen.virtual_delay;
        let w = self.window * p;
        let fb = Feedback {
            accumulation: self.accumulation * p,
            target: self.target,
            rtt: Duration::from_secs_f64(rtt),
            rtt_p: Duration::from_secs_f64(seen.prop_delay),
            mss: p,
            sent: w,
            allowed: w,
        };
        let loss = self.window / 2.0 * self.losses.cuts(seen, rtt, self.window, false, h);
        if self.per_period {
            // 000 eq. (10): one step of the policy at the end of each control period (an RTT);
            // the window holds in between.
            self.period_left -= h;
            if self.period_left <= 0.0 {
                self.period_left += rtt;
                let next = apply(self.policy.as_mut(), w, &fb, self.increase_cap).window;
                self.window = next / p;
            }
            self.window = (self.window - loss).max(1.0);
            return;
        }
        let next = apply(self.policy.as_mut(), w, &fb, self.increase_cap).window;
        let law = (next - w) / p / rtt; // ẇ = Δw per period / period
        self.window = (self.window + h * law - loss).max(1.0);
    }
}
