//! RED's fluid law (Hollot, Misra, Towsley, Gong 2001, "A control theoretic analysis of RED",
//! eqs. (1)–(2) and §II): the averaged queue follows a first-order filter of the queue,
//! dx̄/dt = (ln(1 − w_q)/δ)·(x̄ − q) with δ = 1/C (RED averages once per packet), and the
//! arrivals meet the drop (or mark) probability p(x̄) of Floyd & Jacobson's ramp: 0 below
//! min_th, max_p·(x̄ − min_th)/(max_th − min_th) up to max_th, then (gentle) a ramp from max_p to
//! 1 at 2·max_th, else 1.
//!
//! Departure: RED spreads its drops by the count since the last one (p_a = p_b/(1 − count·p_b),
//! Floyd & Jacobson §7), so drops come at intervals uniform on 1..1/p_b packets and the rate of
//! drops is 2·p_b/(1 + p_b), not p_b; the model uses that rate, as the packet-level RED drops.
//! Byte mode's size scaling is left out (the fluid's packets all have the mean size).

use acclab_core::config::RedParams;

/// RED's state and settings, thresholds in packets.
#[derive(Clone, Debug, PartialEq)]
pub struct Red {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub wq: f64,
    pub gentle: bool,
    /// Marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// The averaged queue x̄, packets.
    pub avg: f64,
}

impl Red {
    /// RED with `p`'s settings, its thresholds given in packets.
    pub fn new(p: &RedParams, min_th: f64, max_th: f64) -> Red {
        Red {
            min_th,
            max_th,
            max_p: p.max_p,
            wq: p.wq,
            gentle: p.gentle,
            ecn: p.ecn,
            avg: 0.0,
        }
    }

    /// The base probability p_b at the averaged queue.
    pub fn base_probability(&self) -> f64 {
        let x = self.avg;
        if x < self.min_th {
            0.0
        } else if x < self.max_th {
            self.max_p * (x - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && x < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (x - self.max_th) / self.max_th
        } else {
            1.0
        }
    }

    /// The probability an arriving packet is dropped or marked: the rate of RED's spread drops.
    pub fn probability(&self) -> f64 {
        let p = self.base_probability();
        if p >= 1.0 {
            1.0
        } else {
            2.0 * p / (1.0 + p)
        }
    }

    /// Advances the average over `h` seconds with the queue at `q` packets on a link of
    /// `capacity` packets per second (Hollot et al. eq. (2)).
    pub fn step(&mut self, q: f64, capacity: f64, h: f64) {
        let k = -(1.0 - self.wq).ln() * capacity; // −ln(1 − w_q)/δ, δ = 1/C
                                                  // The filter's exact solution over the step (stable for any step).
        self.avg = q + (self.avg - q) * (-k * h).exp();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_and_spread_drops() {
        let mut r = Red {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            wq: 0.002,
            gentle: true,
            ecn: false,
            avg: 10.0,
        };
        assert!((r.base_probability() - 0.05).abs() < 1e-12);
        assert!((r.probability() - 0.1 / 1.05).abs() < 1e-12);
        r.avg = 22.5; // halfway up the gentle ramp
        assert!((r.base_probability() - 0.55).abs() < 1e-12);
        r.avg = 31.0;
        assert_eq!(r.probability(), 1.0);
        // The average follows the queue with time constant 1/(−ln(1 − w_q)·C).
        r.avg = 0.0;
        let tau = 1.0 / (-(1.0f64 - 0.002).ln() * 1000.0);
        r.step(100.0, 1000.0, tau);
        assert!(
            (r.avg - 100.0 * (1.0 - (-1.0f64).exp())).abs() < 1e-9,
            "{}",
            r.avg
        );
    }
}
