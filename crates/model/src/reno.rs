//! TCP Reno's fluid law (Misra, Gong, Towsley 2000, "Fluid-based analysis of a network of AQM
//! routers supporting TCP flows", eq. (1); Hollot et al. 2001): in congestion avoidance
//! dW/dt = 1/R − (W/2)·λ, λ the rate of loss (or, with ECN, mark) indications reaching the
//! source; the rate is W/R with R the round trip including every queue both ways.
//!
//! Departures from MGT: λ is at most one per round trip (NewReno halves once per window of
//! losses), and λ is the flow's own drops at each link delayed by the way back, not
//! x(t − R)·p(t − R) for a single link. Drops by a full tail-drop buffer are discrete cuts, not
//! a rate (feedback.rs `LossEvents`): so the queue saw-tooths as the packet run's does. Slow
//! start doubles the window per round trip (rate ln 2·W/R) until the first loss indication.
//! A loss window ends in a timeout with Padhye et al.'s probability Q(W) ≈ min(1, 3/W), which
//! cuts the window to one packet instead of halving it; the idle RTO itself is not modelled
//! (30 Reno flows over RED: mean queue 12% above the packet run's with it, 23% without).

use crate::feedback::{LossEvents, Seen};

/// A Reno source.
#[derive(Clone, Debug)]
pub struct RenoSource {
    pub window: f64,
    pub slow_start: bool,
    losses: LossEvents,
}

impl RenoSource {
    pub fn new(initial_window: f64) -> RenoSource {
        RenoSource {
            window: initial_window.max(1.0),
            slow_start: true,
            losses: LossEvents::default(),
        }
    }

    pub fn rate(&self, seen: &Seen) -> f64 {
        self.window / seen.rtt()
    }

    /// Advances the window over `h` seconds.
    pub fn step(&mut self, seen: &Seen, h: f64) {
        let rtt = seen.rtt();
        let cuts = self.losses.cuts(seen, rtt, self.window, true, h);
        if cuts > 0.0 {
            self.slow_start = false;
        }
        let growth = if self.slow_start {
            std::f64::consts::LN_2 * self.window / rtt
        } else {
            1.0 / rtt // MGT eq. (1): one packet per round trip
        };
        // A window that loses a packet recovers by fast retransmit when three duplicate ACKs
        // come back; a small one often cannot and times out, restarting from one packet:
        // Padhye et al.'s Q(w) ≈ min(1, 3/w) of loss windows end so.
        let q = (3.0 / self.window).min(1.0);
        let cut = (1.0 - q) * self.window / 2.0 + q * (self.window - 1.0);
        self.window = (self.window + h * growth - cut * cuts).max(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additive_increase_and_halving_once_per_rtt() {
        let mut r = RenoSource::new(10.0);
        r.slow_start = false;
        let mut s = Seen {
            prop_delay: 0.1,
            ..Seen::default()
        };
        r.step(&s, 0.1);
        assert!((r.window - 11.0).abs() < 1e-12);
        // A burst of losses (every packet) is one cut per RTT (10/s); at w = 11 a share
        // Q = 3/11 of those are timeouts (to one packet), the rest halve.
        s.losses = 1000.0;
        r.step(&s, 0.01);
        let q = 3.0 / 11.0;
        let cut = (1.0 - q) * 5.5 + q * 10.0;
        assert!(
            (r.window - (11.0 + 0.1 - cut * 10.0 * 0.01)).abs() < 1e-12,
            "{}",
            r.window
        );
    }
}
