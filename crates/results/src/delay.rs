//! One-way delay statistics of a flow's packets, as FlowMonitor-style tools report them: the
//! mean, the median, the 95th and the 99th percentiles of the delay from the sender to the receiver (each
//! packet's send time to its arrival), and RFC 3550's interarrival jitter (§6.4.1: J += (|D| −
//! J)/16, D the difference of two successive packets' transit times, in arrival order).
//!
//! Percentiles come from a log-linear histogram kept sparse (only the buckets a flow's delays
//! fall in), so that a run of 100,000 short flows stays small: below 128 ns every nanosecond is
//! its own bucket; above, each power of two is cut into 64 buckets, so a bucket is at most
//! 1/64 of its value wide and the percentile reported (the bucket's midpoint) is within 0.8%
//! of the delay the nearest-rank rule picks. Mean and jitter are exact.

use serde::{Deserialize, Serialize};

/// A flow's one-way delay statistics over the measurement window, seconds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct DelayStats {
    /// Packets whose delay was measured.
    pub packets: u64,
    pub mean_s: f64,
    pub p50_s: f64,
    /// The 95th percentile: Pantheon's delay axis.
    pub p95_s: f64,
    pub p99_s: f64,
    /// RFC 3550 interarrival jitter at the end of the window.
    pub jitter_s: f64,
}

/// Sub-buckets per power of two (2⁶).
const SUB_BITS: u32 = 6;

/// The histogram bucket of `ns`.
fn bucket(ns: u64) -> u16 {
    if ns < 2 << SUB_BITS {
        return ns as u16;
    }
    let e = 63 - ns.leading_zeros(); // ⌊log₂ ns⌋ ≥ 7
    let sub = (ns >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    (((e - SUB_BITS + 1) << SUB_BITS) as u64 | sub) as u16
}

/// The delay bucket `i` stands for: itself below 128 ns, else the bucket's midpoint.
fn value(i: u16) -> f64 {
    let i = u64::from(i);
    if i < 2 << SUB_BITS {
        return i as f64;
    }
    let e = (i >> SUB_BITS) + u64::from(SUB_BITS) - 1;
    let sub = i & ((1 << SUB_BITS) - 1);
    let width = 1u64 << (e - u64::from(SUB_BITS));
    (((1 << SUB_BITS) + sub) * width) as f64 + width as f64 / 2.0
}

/// A flow's delays as they come: count, sum, jitter and the sparse histogram.
#[derive(Clone, Debug, Default)]
pub struct DelayRecorder {
    packets: u64,
    sum_ns: u128,
    jitter_ns: f64,
    last_ns: Option<u64>,
    /// (bucket, packets), by bucket.
    buckets: Vec<(u16, u32)>,
    /// Where the last packet's bucket is in `buckets`.
    last_bucket: usize,
}

impl DelayRecorder {
    /// A packet arrived `ns` after it was sent.
    pub fn record(&mut self, ns: u64) {
        self.packets += 1;
        self.sum_ns += u128::from(ns);
        if let Some(last) = self.last_ns {
            // RFC 3550 §6.4.1: J = J + (|D(i−1, i)| − J)/16.
            let d = ns.abs_diff(last) as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_ns = Some(ns);
        let b = bucket(ns);
        // Successive packets mostly fall in the bucket of the one before.
        if let Some(hit) = self
            .buckets
            .get_mut(self.last_bucket)
            .filter(|(i, _)| *i == b)
        {
            hit.1 = hit.1.saturating_add(1);
            return;
        }
        match self.buckets.binary_search_by_key(&b, |&(i, _)| i) {
            Ok(k) => {
                self.buckets[k].1 = self.buckets[k].1.saturating_add(1);
                self.last_bucket = k;
            }
            Err(k) => {
                self.buckets.insert(k, (b, 1));
                self.last_bucket = k;
            }
        }
    }

    /// The delay at quantile `q` by the nearest-rank rule (as `fct::percentile`), ns.
    fn quantile(&self, q: f64) -> f64 {
        let total: u64 = self.buckets.iter().map(|&(_, n)| u64::from(n)).sum();
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
        let mut seen = 0;
        for &(i, n) in &self.buckets {
            seen += u64::from(n);
            if seen >= rank {
                return value(i);
            }
        }
        self.buckets.last().map_or(0.0, |&(i, _)| value(i))
    }

    /// The statistics so far; `None` if no packet was measured.
    pub fn stats(&self) -> Option<DelayStats> {
        (self.packets > 0).then(|| DelayStats {
            packets: self.packets,
            mean_s: self.sum_ns as f64 / self.packets as f64 * 1e-9,
            p50_s: self.quantile(0.50) * 1e-9,
            p95_s: self.quantile(0.95) * 1e-9,
            p99_s: self.quantile(0.99) * 1e-9,
            jitter_s: self.jitter_ns * 1e-9,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_128_ns_and_within_one_64th_above() {
        for ns in [0, 1, 63, 64, 127] {
            assert_eq!(value(bucket(ns)), ns as f64);
        }
        let mut last = 0;
        for ns in (128..5_000_000).step_by(37).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket(ns);
            assert!(b >= last, "buckets grow with the delay");
            last = b;
            let v = value(b);
            assert!(
                (v - ns as f64).abs() <= ns as f64 / 128.0 + 0.5,
                "{ns} → {v}"
            );
        }
    }

    /// Against the exact nearest-rank percentiles of the same delays (fct.rs's rule), within
    /// the histogram's 0.8%; mean exact; jitter as RFC 3550's recursion gives it.
    #[test]
    fn statistics_match_the_exact_ones() {
        let mut r = DelayRecorder::default();
        assert!(r.stats().is_none());
        // 10,000 delays between 10 µs and 1 ms, in a scrambled order.
        let delays: Vec<u64> = (0..10_000u64)
            .map(|i| 10_000 + (i * 7919 % 10_000) * 99)
            .collect();
        delays.iter().for_each(|&d| r.record(d));
        let s = r.stats().unwrap();
        let mut sorted: Vec<f64> = delays.iter().map(|&d| d as f64 * 1e-9).collect();
        sorted.sort_by(f64::total_cmp);
        let exact = |q: f64| crate::fct::percentile(&sorted, q).unwrap();
        assert_eq!(s.packets, 10_000);
        let mean = delays.iter().sum::<u64>() as f64 / 1e4 * 1e-9;
        assert!((s.mean_s - mean).abs() < 1e-15);
        assert!(
            (s.p50_s / exact(0.5) - 1.0).abs() < 0.008,
            "{} {}",
            s.p50_s,
            exact(0.5)
        );
        assert!((s.p99_s / exact(0.99) - 1.0).abs() < 0.008);
        let mut j = 0.0;
        for w in delays.windows(2) {
            j += ((w[1] as f64 - w[0] as f64).abs() - j) / 16.0;
        }
        assert!((s.jitter_s - j * 1e-9).abs() < 1e-15);
        // A constant delay has no jitter.
        let mut c = DelayRecorder::default();
        (0..100).for_each(|_| c.record(5_000));
        assert_eq!(c.stats().unwrap().jitter_s, 0.0);
        assert_eq!(c.stats().unwrap().p99_s, value(bucket(5_000)) * 1e-9);
    }
}
