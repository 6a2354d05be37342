//! ACC control policies (000 §III-B): how a window follows the accumulation estimate.
//!
//! Every policy drives the window towards the single fixed point â = a*, so all share the
//! weighted-proportionally-fair equilibrium (000 appendix); they differ in dynamics. Each is a
//! pure function applied once per control period, i.e. once per RTT, which is how the fluid
//! laws (000 eqs. (3), (5), (6)) are discretised: ẇ·rtt is the change over one period.

pub mod aiad;
pub mod expected;
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
    /// Data bytes the sender sent in the period (x̂·srtt for 003 Algorithm 1).
    pub sent: f64,
    /// Data bytes the period was allowed to carry: the window, or less with the sender's
    /// `virtual_rtt` option. A period that sent within a packet of it was window-limited.
    pub allowed: f64,
}

/// One ACC control policy.
pub trait AccPolicy: Send {
    /// The window (bytes) after one control period starting from `cwnd`. A policy may keep
    /// state across periods (the expected-rate service's slow start and ssthresh).
    fn next_window(&mut self, cwnd: f64, fb: &Feedback) -> f64;

    /// Whether the policy is still in an initial slow start (003 Algorithm 1): its steps double
    /// the window, which the one-packet increase cap does not bound.
    fn in_slow_start(&self) -> bool {
        false
    }
}

/// One control period's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The new window, bytes.
    pub window: f64,
    /// Whether the policy asked for a smaller window (negative feedback), floor or not.
    pub decrease: bool,
}

/// Applies a policy with the common rules: the increase is capped at one packet per period when
/// `increase_cap` is set (003 §II), and the window never goes below one packet.
pub fn apply(policy: &mut dyn AccPolicy, cwnd: f64, fb: &Feedback, increase_cap: bool) -> Step {
    let mut next = policy.next_window(cwnd, fb);
    let decrease = next < cwnd;
    if increase_cap {
        // A slow-start step doubles the window (003 Algorithm 1); any other step grows it by at
        // most one packet.
        let cap = if policy.in_slow_start() {
            2.0 * cwnd
        } else {
            cwnd + fb.mss
        };
        next = next.min(cap);
    }
    Step {
        window: next.max(fb.mss),
        decrease,
    }
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
            sent: 10_000.0,
            allowed: 10_000.0,
        }
    }

    #[test]
    fn cap_and_floor() {
        let mut p = p::AccP { kappa: 0.5 };
        let mut window = |cwnd, a, cap| apply(&mut p, cwnd, &fb(a), cap).window;
        // â = 0: ACC-P adds κ·a* = 1500 B; the cap allows one packet.
        assert_eq!(window(10_000.0, 0.0, false), 11_500.0);
        assert_eq!(window(10_000.0, 0.0, true), 11_000.0);
        // A huge estimate cannot take the window below one packet...
        assert_eq!(window(2000.0, 1e6, false), 1000.0);
        // ...and at the floor a decrease is still reported (the low-rate regime needs it).
        assert!(apply(&mut p, 1000.0, &fb(1e6), false).decrease);
        assert!(!apply(&mut p, 1000.0, &fb(0.0), false).decrease);
    }

    #[test]
    fn the_cap_leaves_slow_start_doubling() {
        // A weight-1000 loop (a_p* = 3 MB) of 003 Algorithm 1 with the cap: its law asks for
        // +1.5 MB; in slow start the step doubles, once slow start is over it is one packet.
        let mut p = expected::ExpectedRate::new(0.5, 0.0, f64::INFINITY);
        let mut big = fb(0.0);
        big.target = 3e6;
        assert_eq!(apply(&mut p, 10_000.0, &big, true).window, 20_000.0);
        big.accumulation = 4e6; // the first decrease ends slow start
        assert!(apply(&mut p, 20_000.0, &big, true).decrease);
        big.accumulation = 0.0;
        assert_eq!(apply(&mut p, 20_000.0, &big, true).window, 21_000.0);
    }
}
