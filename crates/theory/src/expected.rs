//! Equilibrium of expected-minimum-rate services with accumulation limits (003 §IV-A, SPEC §8).
//!
//! A loop s with expected rate r_s, weight (target accumulation beyond r_s) w_s and limit A_s
//! settles where max(a_p − w_s, â − A_s) = 0 (003 Algorithm 1), with â = x_s·q_s and
//! a_p = (x_s − r_s)·q_s for path price (queueing delay) q_s. So its demand is
//!
//!   x_s(q) = min(r_s + w_s/q, A_s/q):
//!
//! the normal regime maximises w_s·log(x_s − r_s) (003 eqs. (9)–(10)); at the limit the loop is
//! a weighted loop of weight A_s with no expected rate — the paper's degradation rule ("set its
//! expected minimum rate to zero and replace its weight with the accumulation limit", 003 §VI-A).
//! The limit regime is the right one exactly when r_s·q_s + w_s ≥ A_s.
//!
//! [`solve`] finds which loops sit at their limits by an active-set search over NUM problems
//! (each solved exactly by `num::solve`): start with the loops on links their expected rates
//! oversubscribe at their limits (003 eq. (15) fails there, so they cannot be in the normal
//! regime), then move the loop whose regime is most inconsistent with the prices, one at a time,
//! until every loop is consistent.
//!
//! [`line_shares`] is 003 eq. (18), the closed form for equal-capacity bottlenecks in a line.

use crate::num::{self, NumError, Problem, Solution};

/// The equilibrium and, per flow, whether it sits at its accumulation limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub solution: Solution,
    pub at_limit: Vec<bool>,
}

/// Solves `p` (weights w_s, expected rates `p.min_rate`) with accumulation limits `limit`
/// (same units as weights; `f64::INFINITY` for none).
pub fn solve(p: &Problem, limit: &[f64]) -> Result<Allocation, NumError> {
    let n = p.routes.len();
    let rate = |s: usize| p.min_rate.get(s).copied().unwrap_or(0.0);
    let lim = |s: usize| limit.get(s).copied().unwrap_or(f64::INFINITY);
    let mut at_limit = vec![false; n];
    for (l, &c) in p.capacity.iter().enumerate() {
        let on_l: Vec<usize> = (0..n).filter(|&s| p.routes[s].contains(&l)).collect();
        if on_l.iter().map(|&s| rate(s)).sum::<f64>() >= c {
            for &s in &on_l {
                at_limit[s] = rate(s) > 0.0 && lim(s).is_finite();
            }
        }
    }
    for _ in 0..=4 * n + 4 {
        let sub = degraded(p, limit, &at_limit);
        let sol = num::solve(&sub)?;
        let q: Vec<f64> = p
            .routes
            .iter()
            .map(|r| r.iter().map(|&l| sol.price[l]).sum())
            .collect();
        // Inconsistency of each loop's regime, relative to its limit: positive = wrong regime.
        let worst = (0..n)
            .filter(|&s| lim(s).is_finite())
            .map(|s| {
                let normal_acc = rate(s) * q[s] + p.weight[s];
                let wrong = if at_limit[s] {
                    lim(s) - normal_acc
                } else {
                    normal_acc - lim(s)
                };
                (s, wrong / lim(s))
            })
            .filter(|&(_, wrong)| wrong > 1e-9)
            .filter(|&(s, _)| !at_limit[s] || can_leave_limit(p, &at_limit, s))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            None => {
                return Ok(Allocation {
                    solution: sol,
                    at_limit,
                })
            }
            Some((s, _)) => at_limit[s] = !at_limit[s],
        }
    }
    Err(NumError::Solver(
        "the accumulation-limit regimes did not settle".into(),
    ))
}

/// Whether loop `s` may return to the normal regime without its expected rate oversubscribing
/// a link with the other normal-regime loops.
fn can_leave_limit(p: &Problem, at_limit: &[bool], s: usize) -> bool {
    p.routes[s].iter().all(|&l| {
        let reserved: f64 = (0..p.routes.len())
            .filter(|&k| (k == s || !at_limit[k]) && p.routes[k].contains(&l))
            .map(|k| p.min_rate.get(k).copied().unwrap_or(0.0))
            .sum();
        reserved < p.capacity[l]
    })
}

/// The NUM problem with the loops at their limits degraded: weight A_s, expected rate 0.
fn degraded(p: &Problem, limit: &[f64], at_limit: &[bool]) -> Problem {
    let mut sub = p.clone();
    sub.min_rate.resize(p.routes.len(), 0.0);
    for (s, &bound) in at_limit.iter().enumerate() {
        if bound {
            sub.weight[s] = limit[s];
            sub.min_rate[s] = 0.0;
        }
    }
    sub
}

/// 003 eq. (18): `bottlenecks` links in a line, each of capacity `capacity`; long loops cross
/// all of them with expected rates r_i and weights w_i (`long`); each link also carries cross
/// loops of total weight `cross_weight` and no expected rate. With R = Σ r_i, W = Σ w_i and
/// K = `bottlenecks`, every link has the same price p = (W/K + W_c)/(c − R), so
///
///   x_i = r_i + w_i·(c − R)/(W + K·W_c),   a cross loop of weight w: w·K·(c − R)/(W + K·W_c).
///
/// Returns the long loops' rates and the cross rate per unit weight. (The paper counts loops,
/// all of weight 1; weights make the same formula exact for weighted loops.)
pub fn line_shares(
    capacity: f64,
    bottlenecks: usize,
    long: &[(f64, f64)],
    cross_weight: f64,
) -> (Vec<f64>, f64) {
    let reserved: f64 = long.iter().map(|(r, _)| r).sum();
    let weights: f64 = long.iter().map(|(_, w)| w).sum();
    let k = bottlenecks as f64;
    let share = (capacity - reserved) / (weights + k * cross_weight);
    (long.iter().map(|(r, w)| r + w * share).collect(), k * share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single_link(r0: f64, a0: f64) -> (Problem, Vec<f64>) {
        // 003 §IV-B in packets: 100 Mb/s of 1000 B packets = 12 500 pkt/s; loop 0 has expected
        // rate r0 and limit a0 packets, nine loops a* = 3 packets, every weight 3 packets.
        let p = Problem {
            capacity: vec![12_500.0],
            routes: vec![vec![0]; 10],
            weight: vec![3.0; 10],
            linear: vec![],
            min_rate: std::iter::once(r0).chain([0.0; 9]).collect(),
        };
        let limits = std::iter::once(a0)
            .chain([f64::INFINITY; 9])
            .collect::<Vec<_>>();
        (p, limits)
    }

    #[test]
    fn below_the_limit_the_loop_gets_its_rate_plus_a_share() {
        let (p, limits) = single_link(6250.0, 3000.0);
        let a = solve(&p, &limits).unwrap();
        assert!(!a.at_limit[0]);
        // x0 = r + (c − r)/10 = 6250 + 625.
        assert!((a.solution.rate[0] - 6875.0).abs() < 1e-6 * 6875.0);
        assert!((a.solution.rate[1] - 625.0).abs() < 1e-6 * 625.0);
    }

    #[test]
    fn at_the_limit_the_loop_is_weighted_by_its_limit() {
        // A = 15 packets (15 KB): at most 5/14 of the link (003 §IV-B: 35.7 Mb/s).
        let (p, limits) = single_link(6250.0, 15.0);
        let a = solve(&p, &limits).unwrap();
        assert!(a.at_limit[0]);
        let expect = 12_500.0 * 15.0 / (15.0 + 27.0);
        assert!((a.solution.rate[0] - expect).abs() < 1e-6 * expect);
        // A = 3000 packets: the satisfiable maximum is 1000/1009 of the link (99.1 Mb/s).
        let (p, limits) = single_link(12_499.0, 3000.0);
        let a = solve(&p, &limits).unwrap();
        assert!(a.at_limit[0]);
        let expect = 12_500.0 * 3000.0 / 3027.0;
        assert!((a.solution.rate[0] - expect).abs() < 1e-6 * expect);
    }

    #[test]
    fn oversubscription_degrades_every_loop_that_cannot_be_met() {
        // Two loops each expecting 80% of the link, limits 60 and 30 packets, one plain loop.
        let p = Problem {
            capacity: vec![100.0],
            routes: vec![vec![0]; 3],
            weight: vec![3.0; 3],
            linear: vec![],
            min_rate: vec![80.0, 80.0, 0.0],
        };
        let a = solve(&p, &[60.0, 30.0, f64::INFINITY]).unwrap();
        assert_eq!(a.at_limit, vec![true, true, false]);
        // Weights 60 : 30 : 3 — the plain loop is not starved.
        for (s, w) in [60.0, 30.0, 3.0].into_iter().enumerate() {
            let expect = 100.0 * w / 93.0;
            assert!((a.solution.rate[s] - expect).abs() < 1e-6 * expect);
        }
    }

    #[test]
    fn a_loop_whose_rate_fits_leaves_the_oversubscription_degradation() {
        // Expected 60 + 50 > 100, but loop 1's limit is so large that it stays in the normal
        // regime once loop 0 (small limit) is degraded.
        let p = Problem {
            capacity: vec![100.0],
            routes: vec![vec![0]; 3],
            weight: vec![3.0; 3],
            linear: vec![],
            min_rate: vec![60.0, 50.0, 0.0],
        };
        let a = solve(&p, &[6.0, 1e6, f64::INFINITY]).unwrap();
        assert_eq!(a.at_limit, vec![true, false, false]);
        let x = &a.solution.rate;
        assert!(x[1] > 50.0, "{x:?}");
        assert!((x.iter().sum::<f64>() - 100.0).abs() < 1e-6);
    }

    #[test]
    fn equation_18_matches_the_solver_on_a_line() {
        // Three 100-unit links; long loops (r, w) = (30, 1), (10, 1), (0, 3); two cross loops of
        // weight 1 on each link.
        let long = [(30.0, 1.0), (10.0, 1.0), (0.0, 3.0)];
        let mut routes: Vec<Vec<usize>> = long.iter().map(|_| vec![0, 1, 2]).collect();
        let mut weight: Vec<f64> = long.iter().map(|l| l.1).collect();
        let mut min_rate: Vec<f64> = long.iter().map(|l| l.0).collect();
        for l in 0..3 {
            for _ in 0..2 {
                routes.push(vec![l]);
                weight.push(1.0);
                min_rate.push(0.0);
            }
        }
        let p = Problem {
            capacity: vec![100.0; 3],
            routes,
            weight,
            linear: vec![],
            min_rate,
        };
        let sol = num::solve(&p).unwrap();
        let (x, cross) = line_shares(100.0, 3, &long, 2.0);
        for (i, xi) in x.iter().enumerate() {
            assert!((sol.rate[i] - xi).abs() < 1e-6 * xi, "{i}: {xi}");
        }
        assert!((sol.rate[3] - cross).abs() < 1e-6 * cross);
    }
}
