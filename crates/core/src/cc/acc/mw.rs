//! ACC-MW (Mo & Walrand): 000 eq. (5), ẇ = −κ·(rtt_p/rtt)·(a − a*)/w.
//!
//! Discretisation: w, a and a* are counted in packets and the law is applied once per control
//! period, Δw = −κ·(rtt_p/rtt)·(â − a*)/w packets — the fluid law with one control period as its
//! time unit, as ACC-P's eq. (10) is eq. (6) with the same convention. The step shrinks as the
//! window grows, which makes MW slower than ACC-P on large windows (000 Fig. 2); rtt_p/rtt is
//! clamped to at most 1.

use super::{AccPolicy, Feedback};

/// ACC-MW with gain κ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccMw {
    pub kappa: f64,
}

impl AccPolicy for AccMw {
    fn next_window(&mut self, cwnd: f64, fb: &Feedback) -> f64 {
        let w_pkts = (cwnd / fb.mss).max(1.0);
        let err_pkts = (fb.accumulation - fb.target) / fb.mss;
        let ratio = fb.rtt_p.as_secs_f64() / fb.rtt.as_secs_f64().max(1e-12);
        cwnd - self.kappa * ratio.min(1.0) * err_pkts / w_pkts * fb.mss // 000 eq. (5)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fb;
    use super::*;

    #[test]
    fn step_scales_with_propagation_share_and_inverse_window() {
        let mut p = AccMw { kappa: 0.5 };
        // w = 10 pkts, â − a* = 2 pkts, rtt_p/rtt = 1/2: Δw = −0.5·0.5·2/10 = −0.05 pkt.
        let next = p.next_window(10_000.0, &fb(5000.0));
        assert!((next - (10_000.0 - 50.0)).abs() < 1e-9, "{next}");
        assert_eq!(p.next_window(10_000.0, &fb(3000.0)), 10_000.0);
    }
}
