//! ACC control policies (000 §III-B): how a window follows the accumulation estimate.
//!
//! Every policy drives the window towards the single fixed point â = a*, so all share the
//! weighted-proportionally-fair equilibrium (000 appendix); they differ in dynamics. Each is a
//! pure function applied once per control period, i.e. once per RTT, which is how the fluid
//! laws (000 eqs. (3), (5), (6)) are discretised: ẇ·rtt is the change over one period.

pub mod aiad;
pub mod mw;
pub mod p;

use crate::units::Duration;

/// What a policy knows at the end of a control period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// The accumulation estimate â, bytes.
    pub accumulation: f64,
    /// The target accumulation a*, bytes.
    pub target: f64,
    /// The period's round-trip time.
    pub rtt: Duration,
    /// The round-trip propagation delay (rtt minus the forward queueing delay).
    pub rtt_p: Duration,
    /// One packet, bytes.
    pub mss: f64,
}

/// One ACC control policy.
pub trait AccPolicy: Send {
    /// The window (bytes) after one control period starting from `cwnd`.
    fn next_window(&self, cwnd: f64, fb: &Feedback) -> f64;
}

/// Applies a policy with the common rules: the increase is capped at one packet per period when
/// `increase_cap` is set (003 §II), and the window never goes below one packet.
pub fn apply(policy: &dyn AccPolicy, cwnd: f64, fb: &Feedback, increase_cap: bool) -> f64 {
    let mut next = policy.next_window(cwnd, fb);
    if increase_cap {
        next = next.min(cwnd + fb.mss);
    }
    next.max(fb.mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn fb(accumulation: f64) -> Feedback {
        Feedback {
            accumulation,
            target: 3000.0,
            rtt: Duration::from_millis(20),
            rtt_p: Duration::from_millis(10),
            mss: 1000.0,
        }
    }

    #[test]
    fn cap_and_floor() {
        let p = p::AccP { kappa: 0.5 };
        // â = 0: ACC-P adds κ·a* = 1500 B; the cap allows one packet.
        assert_eq!(apply(&p, 10_000.0, &fb(0.0), false), 11_500.0);
        assert_eq!(apply(&p, 10_000.0, &fb(0.0), true), 11_000.0);
        // A huge estimate cannot take the window below one packet.
        assert_eq!(apply(&p, 2000.0, &fb(1e6), false), 1000.0);
    }
}
