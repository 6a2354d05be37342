//! ACC-P, the proportional policy Monaco uses: 000 eq. (10), the discretisation of eq. (6),
//! cwnd(n+1) = cwnd(n) − κ·(â − a*). Defaults κ = 0.5, a* = 3000 B (000 Table I).

use super::{AccPolicy, Feedback};

/// ACC-P with gain κ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccP {
    pub kappa: f64,
}

impl AccPolicy for AccP {
    fn next_window(&mut self, cwnd: f64, fb: &Feedback) -> f64 {
        cwnd - self.kappa * (fb.accumulation - fb.target) // 000 eq. (10)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fb;
    use super::*;

    #[test]
    fn moves_by_kappa_times_the_error() {
        let mut p = AccP { kappa: 0.5 };
        assert_eq!(p.next_window(10_000.0, &fb(5000.0)), 9000.0);
        assert_eq!(p.next_window(10_000.0, &fb(1000.0)), 11_000.0);
        assert_eq!(p.next_window(10_000.0, &fb(3000.0)), 10_000.0);
    }
}
