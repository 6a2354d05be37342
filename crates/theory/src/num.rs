//! Network utility maximisation with a conic solver (clarabel, exponential cones).
//!
//! Solves  max Σ_s [ w_s·log(x_s − r_s) + b_s·x_s ]  subject to  R·x ≤ c,  x ≥ r,
//! the problem whose solution is the equilibrium of Vegas (002 Theorem 1: w_s = α_s·d_s, b = 0),
//! of Vegas with baseRTT error (002 Theorem 3, eq. (24): w_s = (1+ε_s)·α_s·d_s, b_s = ε_s·d_s),
//! of ACC/Monaco (000: w_s = a*_s) and of expected-minimum-rate services (003: r_s > 0).
//!
//! The link prices are the duals of the capacity rows. With rates in packets per second and
//! weights in packets, prices are in seconds: the queueing delay at each link (002 eq. (21)).
//!
//! Numerics: rates are scaled by the largest capacity and the objective by Σw before solving, so
//! a 2.4 Gb/s link and a 1 Mb/s link are equally well conditioned; prices are scaled back.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};

/// One utility-maximisation problem.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Problem {
    /// Capacity of each link (rate units, e.g. packets/s).
    pub capacity: Vec<f64>,
    /// Links used by each flow.
    pub routes: Vec<Vec<usize>>,
    /// w_s > 0 in w_s·log(x_s − r_s) (rate × time units, e.g. packets).
    pub weight: Vec<f64>,
    /// b_s in b_s·x_s (time units); empty = all zero.
    pub linear: Vec<f64>,
    /// r_s ≥ 0, the rate below which a flow's utility is −∞; empty = all zero.
    pub min_rate: Vec<f64>,
}

/// The optimum: a rate per flow and a price per link.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub rate: Vec<f64>,
    pub price: Vec<f64>,
}

/// Why a problem could not be solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NumError {
    #[error("flow {0} crosses no link, so its rate is unbounded")]
    Unconstrained(usize),
    #[error("flow {0} has weight {1}; weights must be positive and finite")]
    BadWeight(usize, f64),
    #[error("flow {flow} uses link {link}, but there are only {links} links")]
    BadRoute {
        flow: usize,
        link: usize,
        links: usize,
    },
    #[error("link {0} has capacity {1}; capacities must be positive and finite")]
    BadCapacity(usize, f64),
    #[error("the minimum rates oversubscribe link {0} ({1:.6} > {2:.6})")]
    Oversubscribed(usize, f64, f64),
    #[error("the solver stopped with status {0}")]
    Solver(String),
}

impl Problem {
    fn linear_of(&self, s: usize) -> f64 {
        self.linear.get(s).copied().unwrap_or(0.0)
    }
    fn min_rate_of(&self, s: usize) -> f64 {
        self.min_rate.get(s).copied().unwrap_or(0.0)
    }

    fn check(&self) -> Result<(), NumError> {
        for (l, &c) in self.capacity.iter().enumerate() {
            if !(c.is_finite() && c > 0.0) {
                return Err(NumError::BadCapacity(l, c));
            }
        }
        for (s, r) in self.routes.iter().enumerate() {
            let w = self.weight.get(s).copied().unwrap_or(f64::NAN);
            if !(w.is_finite() && w > 0.0) {
                return Err(NumError::BadWeight(s, w));
            }
            if r.is_empty() {
                return Err(NumError::Unconstrained(s));
            }
            if let Some(&l) = r.iter().find(|&&l| l >= self.capacity.len()) {
                return Err(NumError::BadRoute {
                    flow: s,
                    link: l,
                    links: self.capacity.len(),
                });
            }
        }
        for (l, &c) in self.capacity.iter().enumerate() {
            let reserved: f64 = (0..self.routes.len())
                .filter(|&s| self.routes[s].contains(&l))
                .map(|s| self.min_rate_of(s))
                .sum();
            if reserved >= c {
                return Err(NumError::Oversubscribed(l, reserved, c));
            }
        }
        Ok(())
    }
}

/// Solves `p`. Variables are y_s = (x_s − r_s)/C and t_s ≤ log y_s, C the largest capacity.
pub fn solve(p: &Problem) -> Result<Solution, NumError> {
    p.check()?;
    let n = p.routes.len();
    let m = p.capacity.len();
    let scale_c = p.capacity.iter().cloned().fold(0.0, f64::max);
    let scale_w: f64 = p.weight.iter().sum();

    // Objective: minimise −Σ ŵ_s t_s − Σ (b_s·C/W) y_s over z = [y, t].
    let mut q = vec![0.0; 2 * n];
    for s in 0..n {
        q[s] = -p.linear_of(s) * scale_c / scale_w;
        q[n + s] = -p.weight[s] / scale_w;
    }
    // Rows 0..m: capacity, R·y + s = (c − R·r)/C, s ≥ 0.
    // Then per flow an exponential cone (t_s, 1, y_s): rows −t_s, 0 (b = 1), −y_s.
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    let mut b = vec![0.0; m + 3 * n];
    for (l, &c) in p.capacity.iter().enumerate() {
        b[l] = c / scale_c;
    }
    for (s, route) in p.routes.iter().enumerate() {
        for &l in route {
            rows.push(l);
            cols.push(s);
            vals.push(1.0);
            b[l] -= p.min_rate_of(s) / scale_c;
        }
        let r0 = m + 3 * s;
        rows.extend([r0, r0 + 2]);
        cols.extend([n + s, s]);
        vals.extend([-1.0, -1.0]);
        b[r0 + 1] = 1.0;
    }
    let a = CscMatrix::new_from_triplets(m + 3 * n, 2 * n, rows, cols, vals);
    let pmat = CscMatrix::<f64>::zeros((2 * n, 2 * n));
    let mut cones = vec![SupportedConeT::NonnegativeConeT(m)];
    cones.extend((0..n).map(|_| SupportedConeT::ExponentialConeT()));
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .tol_ktratio(1e-8)
        .max_iter(200)
        .build()
        .map_err(|e| NumError::Solver(e.to_string()))?;
    let mut solver = DefaultSolver::new(&pmat, &q, &a, &b, &cones, settings)
        .map_err(|e| NumError::Solver(e.to_string()))?;
    solver.solve();
    let sol = &solver.solution;
    if !matches!(
        sol.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        return Err(NumError::Solver(format!("{:?}", sol.status)));
    }
    let rough = Solution {
        rate: (0..n)
            .map(|s| sol.x[s] * scale_c + p.min_rate_of(s))
            .collect(),
        price: (0..m)
            .map(|l| sol.z[l].max(0.0) * scale_w / scale_c)
            .collect(),
    };
    Ok(refine(p, rough))
}

/// Rates that prices imply: x_s = r_s + w_s / (Σ_{l∈s} p_l − b_s) (stationarity).
fn rates_at(p: &Problem, price: &[f64]) -> Option<Vec<f64>> {
    (0..p.routes.len())
        .map(|s| {
            let denom = p.routes[s].iter().map(|&l| price[l]).sum::<f64>() - p.linear_of(s);
            (denom > 0.0).then(|| p.min_rate_of(s) + p.weight[s] / denom)
        })
        .collect()
}

/// Polishes an interior-point solution to machine precision. The interior point method stops
/// at an objective gap of ~1e-10, which leaves rates off by ~√gap; Newton's method on the KKT
/// system of the links taken as tight (Σ_{s∋l} x_s(p) = c_l) removes that.
///
/// Which links are tight is a guess from the rough solution (priced and nearly full), and near
/// a degenerate optimum — a link just full at a zero price — it can be wrong either way. So the
/// polish is an active-set method on the dual, min_{p ≥ 0} D(p): Newton solves the tight set
/// exactly (prices free in sign), then the link whose price came out most negative leaves the
/// set, or else the most overloaded link outside it joins, until the KKT conditions hold.
/// Falls back to the rough solution if that does not improve it.
fn refine(p: &Problem, rough: Solution) -> Solution {
    let m = p.capacity.len();
    let max_price = rough.price.iter().cloned().fold(0.0, f64::max);
    let mut active: Vec<usize> = (0..m)
        .filter(|&l| {
            rough.price[l] > 1e-7 * max_price
                && link_load(p, &rough.rate, l) > (1.0 - 1e-3) * p.capacity[l]
        })
        .collect();
    let mut price: Vec<f64> = (0..m)
        .map(|l| {
            if active.contains(&l) {
                rough.price[l]
            } else {
                0.0
            }
        })
        .collect();
    // Each round adds or removes one link; 2m + 2 rounds is ample and bounds a cycle.
    for _ in 0..2 * m + 2 {
        let solved = newton_on(p, &active, &mut price);
        // Dual feasibility: a tight link's price must not be negative. If Newton failed, the
        // set is degenerate (two tight links carrying the same flows make J singular): the
        // cheapest link leaves it.
        let negative = active
            .iter()
            .copied()
            .filter(|&l| price[l] < 0.0 || !solved)
            .min_by(|&a, &b| price[a].total_cmp(&price[b]));
        if let Some(l) = negative {
            active.retain(|&k| k != l);
            price[l] = 0.0;
            continue;
        }
        // Primal feasibility: no link outside the set may be overloaded.
        let Some(rate) = rates_at(p, &price) else {
            break;
        };
        let overloaded = (0..m)
            .filter(|l| !active.contains(l))
            .map(|l| (l, link_load(p, &rate, l) / p.capacity[l] - 1.0))
            .filter(|&(_, excess)| excess > 1e-12)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match overloaded {
            Some((l, _)) => active.push(l),
            None => break,
        }
    }
    let clamped: Vec<f64> = price.iter().map(|&q| q.max(0.0)).collect();
    match rates_at(p, &clamped) {
        Some(rate) => {
            let polished = Solution {
                rate,
                price: clamped,
            };
            if kkt_residual(p, &polished) <= kkt_residual(p, &rough) {
                polished
            } else {
                rough
            }
        }
        None => rough,
    }
}

/// Σ_{s∋l} x_s: the load `rate` puts on link `l`.
fn link_load(p: &Problem, rate: &[f64], l: usize) -> f64 {
    (0..p.routes.len())
        .filter(|&s| p.routes[s].contains(&l))
        .map(|s| rate[s])
        .sum()
}

/// Newton's method on Σ_{s∋l} x_s(p) = c_l for the links in `active`, the other prices held.
/// Prices may go negative (the caller drops such links); a step is halved until every flow's
/// path price stays above its linear term, so that x(p) exists. Returns whether it converged.
fn newton_on(p: &Problem, active: &[usize], price: &mut [f64]) -> bool {
    for _ in 0..50 {
        let Some(rate) = rates_at(p, price) else {
            return false;
        };
        let residual: Vec<f64> = active
            .iter()
            .map(|&l| link_load(p, &rate, l) - p.capacity[l])
            .collect();
        if residual
            .iter()
            .zip(active)
            .all(|(r, &l)| r.abs() <= 1e-13 * p.capacity[l])
        {
            return true;
        }
        // J[i][j] = ∂ load_i / ∂ p_j = −Σ_{s ∋ i, j} w_s / (P_s − b_s)².
        let k = active.len();
        let mut jac = vec![vec![0.0; k]; k];
        for (s, route) in p.routes.iter().enumerate() {
            let d = (rate[s] - p.min_rate_of(s)).powi(2) / p.weight[s];
            for (i, li) in active.iter().enumerate() {
                if !route.contains(li) {
                    continue;
                }
                for (j, lj) in active.iter().enumerate() {
                    if route.contains(lj) {
                        jac[i][j] -= d;
                    }
                }
            }
        }
        let Some(step) = solve_dense(jac, residual) else {
            return false;
        };
        let mut t = 1.0;
        loop {
            let mut trial = price.to_vec();
            for (i, &l) in active.iter().enumerate() {
                trial[l] = price[l] - t * step[i];
            }
            if rates_at(p, &trial).is_some() {
                price.copy_from_slice(&trial);
                break;
            }
            t /= 2.0;
            if t < 1e-6 {
                return false;
            }
        }
    }
    false
}

/// Solves the dense system a·x = b by Gaussian elimination with partial pivoting; None if a
/// is singular to working precision (a pivot below 1e-12 of a's largest entry).
fn solve_dense(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let tiny = 1e-12 * a.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= tiny {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (top, bottom) = a.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (offset, row) in bottom.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            b[col + 1 + offset] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    Some(x)
}

/// How far `sol` is from satisfying the KKT conditions of `p`, relative: the largest of
/// stationarity |U'_s(x_s) − Σ p_l| / U'_s, capacity excess (Σx − c)/c, and complementary
/// slackness p_l·(c − Σx)/ (Σ_l p_l c_l).
pub fn kkt_residual(p: &Problem, sol: &Solution) -> f64 {
    let mut worst: f64 = 0.0;
    for (s, route) in p.routes.iter().enumerate() {
        let marginal = p.weight[s] / (sol.rate[s] - p.min_rate_of(s)) + p.linear_of(s);
        let path_price: f64 = route.iter().map(|&l| sol.price[l]).sum();
        worst = worst.max((marginal - path_price).abs() / marginal.abs().max(1e-300));
    }
    let total_value: f64 = p
        .capacity
        .iter()
        .zip(&sol.price)
        .map(|(c, q)| c * q)
        .sum::<f64>()
        .max(1e-300);
    for (l, &c) in p.capacity.iter().enumerate() {
        let load = link_load(p, &sol.rate, l);
        worst = worst.max((load - c).max(0.0) / c);
        worst = worst.max(sol.price[l] * (c - load).abs() / total_value);
        worst = worst.max((-sol.price[l]).max(0.0));
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-12)
    }

    #[test]
    fn single_link_shares_in_proportion_to_weights() {
        // x_s = w_s / Σw · c, price = Σw / c.
        let p = Problem {
            capacity: vec![300_000.0],
            routes: vec![vec![0]; 3],
            weight: vec![1.0, 2.0, 5.0],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        for (x, w) in s.rate.iter().zip([1.0, 2.0, 5.0]) {
            assert!(close(*x, w / 8.0 * 300_000.0, 1e-6), "{x}");
        }
        assert!(close(s.price[0], 8.0 / 300_000.0, 1e-6), "{}", s.price[0]);
    }

    #[test]
    fn parking_lot_closed_form() {
        // Equal capacities c, long flow over both links, one short flow per link, equal
        // weights: long = c/3, shorts = 2c/3, each price = 3/(2c) (PF closed form).
        let c = 9e6 / 8000.0;
        let p = Problem {
            capacity: vec![c, c],
            routes: vec![vec![0, 1], vec![0], vec![1]],
            weight: vec![1.0; 3],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        assert!(close(s.rate[0], c / 3.0, 1e-6));
        assert!(close(s.rate[1], 2.0 * c / 3.0, 1e-6));
        assert!(close(s.price[0], 1.5 / c, 1e-6));
        // With n short flows per link the long flow gets c/(1+2n)·… — n = 2 shorts per link:
        // long = c/5·(5/5)… solve: 1/x_L = p1+p2, 1/x_S = p, x_L + 2x_S = c → x_L = c/5, x_S = 2c/5.
        let p2 = Problem {
            capacity: vec![c, c],
            routes: vec![vec![0, 1], vec![0], vec![0], vec![1], vec![1]],
            weight: vec![1.0; 5],
            ..Problem::default()
        };
        let s2 = solve(&p2).unwrap();
        assert!(close(s2.rate[0], c / 5.0, 1e-6), "{}", s2.rate[0]);
        assert!(close(s2.rate[1], 2.0 * c / 5.0, 1e-6));
    }

    #[test]
    fn linear_term_matches_vegas_error_utility() {
        // One link, two sources: U_1 = α·log x, U_2 = α·log x + e·x. KKT: α/x1 = α/x2 + e = p.
        let (c, alpha, e) = (6000.0, 20.0, 0.003_333);
        let p = Problem {
            capacity: vec![c],
            routes: vec![vec![0], vec![0]],
            weight: vec![alpha, alpha],
            linear: vec![0.0, e],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        assert!(close(alpha / s.rate[0], alpha / s.rate[1] + e, 1e-6));
        assert!(close(s.rate[0] + s.rate[1], c, 1e-7));
        assert!(kkt_residual(&p, &s) < 1e-6);
    }

    #[test]
    fn minimum_rates_are_added_before_sharing() {
        // Two flows, r = (30, 0) on c = 100, equal weights: x = (30 + 35, 35).
        let p = Problem {
            capacity: vec![100.0],
            routes: vec![vec![0], vec![0]],
            weight: vec![1.0, 1.0],
            min_rate: vec![30.0, 0.0],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        assert!(
            close(s.rate[0], 65.0, 1e-6) && close(s.rate[1], 35.0, 1e-6),
            "{:?}",
            s.rate
        );
    }

    #[test]
    fn bad_problems_are_refused() {
        let mut p = Problem {
            capacity: vec![1.0],
            routes: vec![vec![]],
            weight: vec![1.0],
            ..Problem::default()
        };
        assert_eq!(solve(&p), Err(NumError::Unconstrained(0)));
        p.routes = vec![vec![0]];
        p.weight = vec![0.0];
        assert!(matches!(solve(&p), Err(NumError::BadWeight(0, _))));
        p.weight = vec![1.0];
        p.min_rate = vec![2.0];
        assert!(matches!(solve(&p), Err(NumError::Oversubscribed(0, _, _))));
    }

    #[test]
    fn a_link_just_full_at_zero_price_is_polished() {
        // Found by random_networks_satisfy_kkt: link 2 carries only flow 0, which the price of
        // link 3 holds just under link 2's capacity, so link 2 is full to 4e-5 at a zero price.
        // The rough solution prices it at 5e-10; a polish that kept it tight clamped its
        // price at zero and stopped with a KKT residual of 1.3e-5.
        let p = Problem {
            capacity: vec![
                645721.6870170959,
                158277.46542080125,
                330497.09233782673,
                810953.1885055274,
                1.0,
            ],
            routes: vec![vec![2, 3], vec![0], vec![3], vec![1], vec![0, 3]],
            weight: vec![
                84.89664995734714,
                21.171703810357673,
                61.60438668712953,
                0.1,
                74.39505452219251,
            ],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        assert!(kkt_residual(&p, &s) < 1e-12, "{s:?}");
        assert_eq!(s.price[2], 0.0);
        assert!(s.rate[0] < p.capacity[2]);
        // Two links in series, 1.1e-4 apart in capacity: only the smaller one is tight (the
        // old polish left a residual of 2.2e-6 here).
        let p = Problem {
            capacity: vec![666092.1552892005, 666019.015553141],
            routes: vec![vec![0, 1], vec![0, 1]],
            weight: vec![91.73178580189146, 29.702566466203372],
            ..Problem::default()
        };
        let s = solve(&p).unwrap();
        assert!(kkt_residual(&p, &s) < 1e-12, "{s:?}");
        assert_eq!(s.price[0], 0.0);
        assert!(close(s.rate[0] + s.rate[1], p.capacity[1], 1e-13));
    }

    fn random_network() -> impl Strategy<Value = Problem> {
        (2usize..6, 1usize..8).prop_flat_map(|(links, flows)| {
            (
                proptest::collection::vec(1.0f64..1e6, links),
                proptest::collection::vec(
                    proptest::collection::btree_set(0..links, 1..=links.min(3)),
                    flows,
                ),
                proptest::collection::vec(0.1f64..100.0, flows),
            )
                .prop_map(|(capacity, routes, weight)| Problem {
                    capacity,
                    routes: routes
                        .into_iter()
                        .map(|r| r.into_iter().collect())
                        .collect(),
                    weight,
                    ..Problem::default()
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn random_networks_satisfy_kkt(p in random_network()) {
            let s = solve(&p).unwrap();
            let r = kkt_residual(&p, &s);
            prop_assert!(r < 1e-6, "KKT residual {} for {:?} → {:?}", r, p, s);
        }
    }
}
