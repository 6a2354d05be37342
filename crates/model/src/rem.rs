//! REM's fluid law: the price update of 002 eq. (30), p ← [p + γ·(μ·b + x − c)]⁺ once per period
//! T with x and c counted in packets over the period, as a rate, dp/dt = γ·(μ·b + (y − c)·T)/T;
//! arrivals are marked (ECN-capable) or dropped with probability 1 − φ^(−p) (eq. (31)).

use acclab_core::config::RemParams;

/// REM's settings and price.
#[derive(Clone, Debug, PartialEq)]
pub struct Rem {
    pub phi: f64,
    pub mu: f64,
    pub gamma: f64,
    /// The update period T, s.
    pub interval: f64,
    pub price: f64,
}

impl Rem {
    pub fn new(p: &RemParams) -> Rem {
        Rem {
            phi: p.phi,
            mu: p.mu,
            gamma: p.gamma,
            interval: p.interval.as_secs_f64(),
            price: 0.0,
        }
    }

    /// 1 − φ^(−p) (002 eq. (31)).
    pub fn probability(&self) -> f64 {
        1.0 - self.phi.powf(-self.price)
    }

    /// Advances the price over `h` seconds: backlog `b` packets, arrivals `y` and capacity `c`
    /// packets per second.
    pub fn step(&mut self, b: f64, y: f64, c: f64, h: f64) {
        let t = self.interval;
        self.price = (self.price + h * self.gamma * (self.mu * b + (y - c) * t) / t).max(0.0);
        // 002 eq. (30)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_period_is_equation_30() {
        let mut r = Rem {
            phi: 1.1,
            mu: 0.5,
            gamma: 0.005,
            interval: 0.001,
            price: 1.0,
        };
        // 10 packets queued, 6 arrivals and 4 served per 1 ms period.
        r.step(10.0, 6000.0, 4000.0, 0.001);
        assert!((r.price - (1.0 + 0.005 * (5.0 + 2.0))).abs() < 1e-12);
        assert!((r.probability() - (1.0 - 1.1f64.powf(-r.price))).abs() < 1e-15);
        r.step(0.0, 0.0, 1e9, 1.0);
        assert_eq!(r.price, 0.0);
    }
}
