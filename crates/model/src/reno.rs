//! TCP Reno's fluid law (Misra, Gong, Towsley 2000, "Fluid-based analysis of a network of AQM
//! routers supporting TCP flows", eq. (1); Hollot et al. 2001): in congestion avoidance
//! dW/dt = 1/R − (W/2)·λ, λ the rate of loss (or, with ECN, mark) indications reaching the
//! source; the rate is W/R with R the round trip including every queue both ways.
//!
//! Departures from MGT: λ is at most one per round trip (NewReno halves once per window of
//! losses; a tail-drop burst is one halving, as in the packet run), and λ is the flow's own
//! drops at each link delayed by the way back, not x(t − R)·p(t − R) for a single link. Slow
//! start doubles the window per round trip (rate ln 2·W/R) until the first loss indication.
//! Timeouts are not modelled.

use crate::feedback::Seen;

/// A Reno source.
#[derive(Clone, Debug)]
pub struct RenoSource {
    pub window: f64,
    pub slow_start: bool,
}

impl RenoSource {
    pub fn new(initial_window: f64) -> RenoSource {
        RenoSource {
            window: initial_window.max(1.0),
            slow_start: true,
        }
    }

    pub fn rate(&self, seen: &Seen) -> f64 {
        self.window / seen.rtt()
    }

    /// Advances the window over `h` seconds.
    pub fn step(&mut self, seen: &Seen, h: f64) {
        let rtt = seen.rtt();
        let halvings = seen.halvings(rtt, true);
        if halvings > 0.0 {
            self.slow_start = false;
        }
        let growth = if self.slow_start {
            std::f64::consts::LN_2 * self.window / rtt
        } else {
            1.0 / rtt // MGT eq. (1): one packet per round trip
        };
        self.window = (self.window + h * (growth - self.window / 2.0 * halvings)).max(1.0);
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
        // A burst of 1000 losses per second is one halving per RTT (10/s): −W/2·10·h.
        s.losses = 1000.0;
        r.step(&s, 0.01);
        assert!((r.window - (11.0 + 0.1 - 5.5 * 10.0 * 0.01)).abs() < 1e-12, "{}", r.window);
    }
}
