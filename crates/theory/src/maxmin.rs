//! Max-min fair allocation by progressive filling, and the weighted fairness index against it
//! (004 eq. (2)).
//!
//! Flows with a finite demand (CBR) never get more than they offer; elastic flows are unbounded.
//! All unfrozen flows grow together; a flow freezes when its demand is met or a link it crosses
//! is full.

use acclab_core::config::SchemeConfig;
use acclab_scenario::Scenario;

/// The max-min fair rates (bit/s) of `flows` (routes over links of `capacity`, bit/s) with
/// `demand` (bit/s, `f64::INFINITY` for elastic flows).
pub fn max_min(capacity: &[f64], routes: &[Vec<usize>], demand: &[f64]) -> Vec<f64> {
    let n = routes.len();
    let mut rate = vec![0.0; n];
    let mut frozen: Vec<bool> = routes.iter().map(|r| r.is_empty()).collect();
    let mut left = capacity.to_vec();
    while frozen.iter().any(|f| !f) {
        // The largest equal increment before a link fills or a demand is met.
        let mut step = f64::INFINITY;
        // Unfrozen flows per link (a route crosses a link once), in one pass over the routes.
        let mut users = vec![0usize; left.len()];
        for i in (0..n).filter(|&i| !frozen[i]) {
            for &l in &routes[i] {
                users[l] += 1;
            }
        }
        for (&c, &u) in left.iter().zip(&users) {
            if u > 0 {
                step = step.min(c / u as f64);
            }
        }
        for i in (0..n).filter(|&i| !frozen[i]) {
            step = step.min(demand[i] - rate[i]);
        }
        if !step.is_finite() {
            break;
        }
        for i in (0..n).filter(|&i| !frozen[i]) {
            rate[i] += step;
            for &l in &routes[i] {
                left[l] -= step;
            }
        }
        for i in 0..n {
            let full = routes[i].iter().any(|&l| left[l] <= 1e-9 * capacity[l]);
            if !frozen[i] && (full || rate[i] >= demand[i] - 1e-9) {
                frozen[i] = true;
            }
        }
    }
    rate
}

/// 004 eq. (2): (Σ x_i/w_i)² / (n·Σ (x_i/w_i)²); 1 when every x_i is its w_i.
pub fn weighted_fairness(x: &[f64], w: &[f64]) -> Option<f64> {
    let r: Vec<f64> = x
        .iter()
        .zip(w)
        .filter(|(_, &w)| w > 0.0)
        .map(|(x, w)| x / w)
        .collect();
    let s: f64 = r.iter().sum();
    let s2: f64 = r.iter().map(|v| v * v).sum();
    (!r.is_empty() && s2 > 0.0).then(|| s * s / (r.len() as f64 * s2))
}

/// The max-min fair rate of each flow of `sc` (constant CBR rates as demands).
pub fn scenario_max_min(sc: &Scenario) -> Vec<f64> {
    let capacity: Vec<f64> = sc.links.iter().map(|l| l.rate.as_f64()).collect();
    let routes: Vec<Vec<usize>> = sc
        .flows
        .iter()
        .map(|f| f.forward.iter().map(|l| l.0 as usize).collect())
        .collect();
    let demand: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| match &f.scheme {
            SchemeConfig::Cbr(p) if p.schedule.is_empty() => p.rate.as_f64(),
            _ => f64::INFINITY,
        })
        .collect();
    max_min(&capacity, &routes, &demand)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progressive_filling() {
        // A parking lot of 9-unit links: max-min gives every flow 4.5.
        let r = max_min(
            &[9.0, 9.0],
            &[vec![0, 1], vec![0], vec![1]],
            &[f64::INFINITY; 3],
        );
        assert_eq!(r, vec![4.5, 4.5, 4.5]);
        // A CBR demand of 2 on a 10 link leaves 8 to the elastic flow.
        let r = max_min(&[10.0], &[vec![0], vec![0]], &[2.0, f64::INFINITY]);
        assert_eq!(r, vec![2.0, 8.0]);
    }

    #[test]
    fn weighted_index() {
        assert_eq!(weighted_fairness(&[30.0, 70.0], &[30.0, 70.0]), Some(1.0));
        let f = weighted_fairness(&[60.0, 40.0], &[30.0, 70.0]).unwrap();
        assert!(f < 0.8, "{f}");
    }
}
