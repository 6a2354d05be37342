//! Vegas with baseRTT error: sources that start one after another on a single link (002 §4.2).
//!
//! Source t starts once sources 1…t−1 are in equilibrium, so it measures its baseRTT as
//! d + p(t−1), the true propagation delay plus the queueing delay the others cause, and keeps
//! α·(d + p(t−1)) packets in the path (WPF, α in packets per second). By 002 Theorem 3 the
//! equilibrium queueing delay p(t) in period t solves
//!
//!   Σ_{n=1..t} α·(d + p(n−1)) / (p(t) − p(n−1)) = c,   p(0) = 0          (002 eqs. (27), (28))
//!
//! and source n's rate is x_n(t) = α·(d + p(n−1)) / (p(t) − p(n−1))      (002 eq. (29)).
//! The left side falls monotonically in p(t) on (p(t−1), ∞), so bisection finds the root.

/// One period of the serial-arrival example: `t` sources active.
#[derive(Clone, Debug, PartialEq)]
pub struct Period {
    /// Equilibrium queueing delay p(t), seconds.
    pub queueing_delay: f64,
    /// Equilibrium queue c·p(t), packets.
    pub queue_pkts: f64,
    /// Rates of sources 1…t, packets per second.
    pub rates: Vec<f64>,
}

/// The equilibria of `sources` Vegas sources that start serially on one link of capacity `c`
/// (packets/s), each with α = `alpha` packets per second and true round-trip propagation delay
/// `d` (s). Also returns each source's baseRTT estimate d + p(n−1).
pub fn serial_arrivals(c: f64, alpha: f64, d: f64, sources: usize) -> (Vec<Period>, Vec<f64>) {
    let mut p: Vec<f64> = vec![0.0]; // p[0] = 0, p[t] for t ≥ 1
    let mut periods = Vec::with_capacity(sources);
    for t in 1..=sources {
        let excess = |pt: f64| -> f64 {
            (0..t)
                .map(|n| alpha * (d + p[n]) / (pt - p[n]))
                .sum::<f64>()
                - c
        };
        let lo0 = p[t - 1];
        let mut lo = lo0;
        let mut hi = lo0 + 1.0;
        while excess(hi) > 0.0 {
            hi = lo0 + 2.0 * (hi - lo0);
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if excess(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let pt = 0.5 * (lo + hi);
        p.push(pt);
        let rates = (0..t).map(|n| alpha * (d + p[n]) / (pt - p[n])).collect(); // eq. (29)
        periods.push(Period {
            queueing_delay: pt,
            queue_pkts: c * pt,
            rates,
        });
    }
    let base_rtts = (0..sources).map(|n| d + p[n]).collect();
    (periods, base_rtts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_table_v_model_column() {
        // 002 §6.2: 48 Mb/s = 6000 packets/s of 1 KB, d = 10 ms, α = 2 packets/ms.
        let (periods, base) = serial_arrivals(6000.0, 2000.0, 0.010, 5);
        let queues: Vec<f64> = periods.iter().map(|p| p.queue_pkts).collect();
        for (got, paper) in queues.iter().zip([20.0, 60.0, 127.0, 238.0, 416.0]) {
            assert!((got - paper).abs() / paper < 0.01, "queue {got} vs {paper}");
        }
        // Rates in KB/s (1 KB packets) with all five active: 290, 400, 670, 1300, 3340.
        for (got, paper) in periods[4]
            .rates
            .iter()
            .zip([290.0, 400.0, 670.0, 1300.0, 3340.0])
        {
            assert!((got - paper).abs() / paper < 0.02, "rate {got} vs {paper}");
        }
        // Table VI model baseRTTs include 0.18 ms of transmission time on top of d + p(n−1).
        // (The paper's 31.2 ms is 0.6% below 10.18 + 127/6000 s, its own Table V queue.)
        for (got, paper) in base.iter().zip([10.18, 13.51, 20.18, 31.2, 49.80]) {
            let ms = got * 1e3 + 0.18;
            assert!((ms - paper).abs() / paper < 0.01, "baseRTT {ms} vs {paper}");
        }
        for p in &periods {
            let total: f64 = p.rates.iter().sum();
            assert!((total - 6000.0).abs() < 1e-6, "rates fill the link");
        }
    }
}
