//! The expected-minimum-rate service (003 §IV, Algorithm 1, as SPEC §5 restates it): ACC-P
//! driven by the accumulation *beyond* a contracted rate r_e, bounded by an accumulation limit A.
//!
//! Per control period, with â the Monaco estimate and x̂ = bytes sent in the period / srtt
//! (step 2):
//! - a_p = max(0, â·(1 − r_e/x̂)) — 003 eq. (8): of the flow's accumulation, the share that
//!   buys its rate beyond r_e (step 3);
//! - an â within one packet of A counts as A (step 4: the sender stops short of A by up to a
//!   packet, so "within one MTU" is "reached");
//! - cwnd ← cwnd − κ·max(a_p − a_p*, â − A) (step 5, ACC-P's law on the tighter of the two);
//! - slow start until the first decrease: while no decrease has been seen, an increase step at
//!   least doubles the window (steps 6, 7.2), bounded by ssthresh;
//! - a decrease sets ssthresh to the new window (step 6); an increase raises ssthresh only when
//!   the period was window-limited (step 7.1): the bytes sent came within one packet of what
//!   the period was allowed (the window, or less with Monaco's `virtual_rtt`). The window never
//!   exceeds ssthresh, so a demand-limited loop, which does not fill its window, cannot
//!   inflate it.
//!
//! The equilibrium (003 §IV-A): a_p = a_p* gives x = r_e + a_p*/q for path queueing delay q;
//! when that needs â = x·q > A the limit binds and x = A/q, a weighted loop of weight A/a*. Both
//! are the demand x(q) = min(r_e + a_p*/q, A/q) that `acclab_theory::expected` solves.
//!
//! Steps 1 and 8 (read â; pace at cwnd/RTT) are the Monaco sender's. Departure: before the first
//! feedback x̂ is the initial guess's; a period in which nothing was sent has x̂ = 0 and so
//! a_p = 0 (the loop is below its rate: grow), as the paper's max with 0 does for x̂ < r_e.

use super::{AccPolicy, Feedback};

/// ACC-P with an expected minimum rate and an accumulation limit.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedRate {
    pub kappa: f64,
    /// r_e, bytes per second (0 for a plain loop with only a limit).
    pub rate: f64,
    /// A, bytes (infinite without a limit).
    pub limit: f64,
    ssthresh: f64,
    slow_start: bool,
}

impl ExpectedRate {
    pub fn new(kappa: f64, rate: f64, limit: f64) -> ExpectedRate {
        ExpectedRate {
            kappa,
            rate,
            limit,
            ssthresh: f64::INFINITY,
            slow_start: true,
        }
    }

    /// a_p, the accumulation beyond the expected rate (003 eq. (8), Algorithm 1 step 3).
    fn beyond_expected(&self, fb: &Feedback) -> f64 {
        let srtt = fb.rtt.as_secs_f64();
        let sent_rate = if srtt > 0.0 { fb.sent / srtt } else { 0.0 };
        if sent_rate <= 0.0 {
            return 0.0;
        }
        (fb.accumulation * (1.0 - self.rate / sent_rate)).max(0.0)
    }
}

impl AccPolicy for ExpectedRate {
    fn next_window(&mut self, cwnd: f64, fb: &Feedback) -> f64 {
        let a_p = self.beyond_expected(fb);
        let a = if fb.accumulation > self.limit - fb.mss {
            self.limit.max(fb.accumulation) // step 4: within one packet of A is A
        } else {
            fb.accumulation
        };
        let error = (a_p - fb.target).max(a - self.limit);
        let law = cwnd - self.kappa * error; // step 5
        if error > 0.0 {
            // Step 6: congestion ends slow start; ssthresh follows the window down.
            self.slow_start = false;
            self.ssthresh = law.max(fb.mss);
            return law;
        }
        let grown = if self.slow_start {
            law.max(2.0 * cwnd)
        } else {
            law
        };
        if fb.sent + fb.mss >= fb.allowed {
            self.ssthresh = self.ssthresh.max(grown); // step 7.1: only a window-limited loop
        }
        grown.min(self.ssthresh) // step 7.2
    }

    fn in_slow_start(&self) -> bool {
        self.slow_start
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fb;
    use super::*;

    /// A period of the 20 ms test RTT in which `sent` bytes left of the `allowed`.
    fn period(accumulation: f64, sent: f64, allowed: f64) -> Feedback {
        Feedback {
            sent,
            allowed,
            ..fb(accumulation)
        }
    }

    #[test]
    fn accumulation_beyond_the_expected_rate() {
        // Sent 50 kB in 20 ms = 2.5 MB/s; r_e = 2 MB/s: a_p = â·(1 − 0.8) = 0.2·â.
        let p = ExpectedRate::new(0.5, 2e6, f64::INFINITY);
        assert!((p.beyond_expected(&period(10_000.0, 50_000.0, 50_000.0)) - 2000.0).abs() < 1e-6);
        // Below its rate the loop's a_p is 0, not negative.
        assert_eq!(
            p.beyond_expected(&period(10_000.0, 20_000.0, 20_000.0)),
            0.0
        );
        assert_eq!(p.beyond_expected(&period(10_000.0, 0.0, 0.0)), 0.0);
    }

    #[test]
    fn slow_start_doubles_until_the_first_decrease() {
        let mut p = ExpectedRate::new(0.5, 0.0, f64::INFINITY);
        // â = 0 < a*: at least double.
        assert_eq!(p.next_window(4000.0, &period(0.0, 4000.0, 4000.0)), 8000.0);
        assert!(p.in_slow_start());
        // â = 5000 > a* = 3000: ACC-P decrease, slow start over.
        assert_eq!(
            p.next_window(8000.0, &period(5000.0, 8000.0, 8000.0)),
            7000.0
        );
        assert!(!p.in_slow_start());
        // Now increases follow the law: + κ·(a* − â) = +1000.
        assert_eq!(
            p.next_window(7000.0, &period(1000.0, 7000.0, 7000.0)),
            8000.0
        );
    }

    #[test]
    fn the_limit_binds_within_one_packet() {
        // r_e far above what the loop gets: a_p = 0, so only the limit stops growth.
        let mut p = ExpectedRate::new(0.5, 1e12, 15_000.0);
        p.slow_start = false;
        // â = 14 500, within one packet of A = 15 000: counts as A, no change.
        assert_eq!(
            p.next_window(20_000.0, &period(14_500.0, 20_000.0, 20_000.0)),
            20_000.0
        );
        // â = 13 000: grow by the smaller of κ·(a_p* − a_p) = 1500 and κ·(A − â) = 1000.
        assert_eq!(
            p.next_window(20_000.0, &period(13_000.0, 20_000.0, 20_000.0)),
            21_000.0
        );
        // â = 10 000: κ·(A − â) = 2500 is now the larger; a_p* − a_p limits the step to 1500.
        assert_eq!(
            p.next_window(20_000.0, &period(10_000.0, 20_000.0, 20_000.0)),
            21_500.0
        );
        // â = 19 000 > A: shrink by 2000.
        assert_eq!(
            p.next_window(21_500.0, &period(19_000.0, 21_500.0, 21_500.0)),
            19_500.0
        );
    }

    #[test]
    fn a_demand_limited_loop_does_not_grow_its_window() {
        let mut p = ExpectedRate::new(0.5, 0.0, f64::INFINITY);
        // A decrease sets ssthresh = 9000.
        assert_eq!(
            p.next_window(10_000.0, &period(5000.0, 10_000.0, 10_000.0)),
            9000.0
        );
        // The application sent only 2000 B of its 9000 B window: feedback says grow, but the
        // window stays at ssthresh.
        assert_eq!(p.next_window(9000.0, &period(0.0, 2000.0, 9000.0)), 9000.0);
        // A full window may grow (and raises ssthresh with it).
        assert_eq!(
            p.next_window(9000.0, &period(0.0, 8500.0, 9000.0)),
            10_500.0
        );
        assert_eq!(
            p.next_window(10_500.0, &period(0.0, 10_500.0, 10_500.0)),
            12_000.0
        );
    }

    #[test]
    fn window_limited_is_judged_against_the_period_allowance() {
        // With `virtual_rtt` a period of a 10 000 B window may carry only 6000 B (the rest of
        // the window covers the path's virtual delay). Filling those 6000 B is window-limited:
        // the window may grow past ssthresh; sending 2000 B of them is not.
        let mut p = ExpectedRate::new(0.5, 0.0, f64::INFINITY);
        assert_eq!(
            p.next_window(10_000.0, &period(5000.0, 6000.0, 6000.0)),
            9000.0
        );
        assert_eq!(
            p.next_window(9000.0, &period(0.0, 5400.0, 5400.0)),
            10_500.0
        );
        assert_eq!(
            p.next_window(10_500.0, &period(0.0, 2000.0, 6300.0)),
            10_500.0
        );
    }
}
