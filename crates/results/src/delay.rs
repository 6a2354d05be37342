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

/// The delays bucket `i` holds, ns: [from, to).
fn bounds(i: u16) -> (u64, u64) {
    let i = u64::from(i);
    if i < 2 << SUB_BITS {
        return (i, i + 1);
    }
    let e = (i >> SUB_BITS) + u64::from(SUB_BITS) - 1;
    let sub = i & ((1 << SUB_BITS) - 1);
    let width = 1u64 << (e - u64::from(SUB_BITS));
    let from = ((1 << SUB_BITS) + sub) * width;
    (from, from.saturating_add(width))
}

/// One bucket of a delay histogram: the delays in [from_ns, to_ns) and how many packets had
/// one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HistogramBin {
    pub from_ns: u64,
    pub to_ns: u64,
    pub packets: u32,
}

/// A time in ns as seconds, exactly, in decimal (a cell of delays.csv): 12058624 →
/// "0.012058624", 2000000000 → "2".
#[derive(Clone, Copy, Debug)]
pub struct ExactSeconds(pub u64);

impl crate::csv_row::Cell for ExactSeconds {
    fn put(&self, out: &mut Vec<u8>) {
        let (s, mut frac) = (self.0 / 1_000_000_000, self.0 % 1_000_000_000);
        s.put(out);
        if frac == 0 {
            return;
        }
        let mut places = 9; // nanoseconds' digits, less the trailing zeros
        while frac % 10 == 0 {
            frac /= 10;
            places -= 1;
        }
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(frac);
        out.push(b'.');
        out.extend(std::iter::repeat_n(b'0', places - digits.len()));
        out.extend_from_slice(digits.as_bytes());
    }
}

/// A link's queueing delays (its packets' sojourn times) over the measurement window, seconds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct QueueingStats {
    /// Packets transmitted in the window.
    pub packets: u64,
    /// Those of them that found the link idle and waited not at all.
    pub unqueued: u64,
    pub mean_s: f64,
    /// The percentiles; absent when the run kept the mean alone (`[output]
    /// queueing_percentiles = false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_s: Option<f64>,
}

/// The sparse log-linear histogram both recorders keep.
#[derive(Clone, Debug, Default)]
struct Histogram {
    /// (bucket, packets), by bucket.
    buckets: Vec<(u16, u32)>,
    /// Where the last packet's bucket is in `buckets`.
    last_bucket: usize,
}

/// A flow's delays as they come: count, sum, jitter and the sparse histogram.
#[derive(Clone, Debug, Default)]
pub struct DelayRecorder {
    packets: u64,
    sum_ns: u128,
    jitter_ns: f64,
    last_ns: Option<u64>,
    histogram: Histogram,
}

/// A link's sojourn times as its packets leave: count, sum, the packets that did not wait,
/// and the histogram of the others (no jitter: a queue's successive sojourns are not a path's
/// transit times). On every transmission, so kept cheap: a packet that found its link idle is
/// a count, the others an increment of a dense histogram (grown to the longest sojourn seen:
/// 2 KB for sojourns up to 10 µs, 6 KB up to 100 ms), unless it keeps the mean alone. 32
/// bytes, two to a cache line: a link's recorder is found at random by its packets.
#[derive(Clone, Debug)]
pub struct SojournRecorder {
    /// Packets that waited, and how long together.
    waited: u64,
    sum_ns: u64,
    /// Packets per bucket, by bucket; `None` when it keeps the count and the sum alone: no
    /// percentiles, and a packet that waited touches no histogram (on a large fabric, thousands
    /// of links' histograms are megabytes touched at random: docs/performance.md).
    counts: Option<Box<[u32]>>,
}

impl Default for SojournRecorder {
    /// A recorder with the histogram.
    fn default() -> SojournRecorder {
        SojournRecorder {
            waited: 0,
            sum_ns: 0,
            counts: Some(Box::default()),
        }
    }
}

impl SojournRecorder {
    /// A recorder of the count and the sum alone: its statistics have the mean and no
    /// percentiles.
    pub fn mean_only() -> SojournRecorder {
        SojournRecorder {
            counts: None,
            ..SojournRecorder::default()
        }
    }

    /// A packet waited `ns` (> 0) before its transmission started; those that did not wait
    /// are not recorded, but counted in [`stats`](Self::stats)' `transmitted`.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.waited += 1;
        self.sum_ns += ns;
        let Some(counts) = &mut self.counts else {
            return;
        };
        let b = usize::from(bucket(ns));
        if b >= counts.len() {
            grow(counts, b + 1);
        }
        counts[b] = counts[b].saturating_add(1);
    }

    /// The statistics of `transmitted` packets, those recorded and the others that did not
    /// wait; `None` if none was transmitted.
    pub fn stats(&self, transmitted: u64) -> Option<QueueingStats> {
        let packets = transmitted.max(self.waited);
        let unqueued = packets - self.waited;
        let counts = self.counts.as_deref().unwrap_or_default();
        let occupied = counts.iter().enumerate().filter(|(_, &n)| n > 0);
        let buckets: Vec<(u16, u32)> = occupied.map(|(b, &n)| (b as u16, n)).collect();
        let q = |q: f64| {
            self.counts
                .is_some()
                .then(|| quantile(&buckets, q, unqueued) * 1e-9)
        };
        (packets > 0).then(|| QueueingStats {
            packets,
            unqueued,
            mean_s: self.sum_ns as f64 / packets as f64 * 1e-9,
            p50_s: q(0.50),
            p95_s: q(0.95),
            p99_s: q(0.99),
        })
    }
}

/// Grows a histogram to hold at least `len` buckets: at least doubled (a sojourn a little
/// longer than any before is common while a queue builds), at most to the last bucket.
#[cold]
fn grow(counts: &mut Box<[u32]>, len: usize) {
    let last = usize::from(bucket(u64::MAX)) + 1;
    let mut v = std::mem::take(counts).into_vec();
    v.resize(len.max(2 * v.len()).min(last), 0);
    *counts = v.into_boxed_slice();
}

impl Histogram {
    #[inline]
    fn add(&mut self, ns: u64) {
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
}

/// The delay at quantile `q` by the nearest-rank rule (as `fct::percentile`) of the delays
/// counted in `buckets` ((bucket, count) by bucket) and `zeros` more of 0 ns, ns.
fn quantile(buckets: &[(u16, u32)], q: f64, zeros: u64) -> f64 {
    let total: u64 = zeros + buckets.iter().map(|&(_, n)| u64::from(n)).sum::<u64>();
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
    if rank <= zeros {
        return 0.0;
    }
    let mut seen = zeros;
    for &(i, n) in buckets {
        seen += u64::from(n);
        if seen >= rank {
            return value(i);
        }
    }
    buckets.last().map_or(0.0, |&(i, _)| value(i))
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
        self.histogram.add(ns);
    }

    /// The histogram so far: the buckets that hold a packet, by delay (below 128 ns one per
    /// nanosecond, above 64 per power of two: each at most 1/64 of its delays wide).
    pub fn histogram(&self) -> impl Iterator<Item = HistogramBin> + '_ {
        self.histogram.buckets.iter().map(|&(i, n)| {
            let (from_ns, to_ns) = bounds(i);
            HistogramBin {
                from_ns,
                to_ns,
                packets: n,
            }
        })
    }

    /// The statistics so far; `None` if no packet was measured.
    pub fn stats(&self) -> Option<DelayStats> {
        let q = |q: f64| quantile(&self.histogram.buckets, q, 0) * 1e-9;
        (self.packets > 0).then(|| DelayStats {
            packets: self.packets,
            mean_s: self.sum_ns as f64 / self.packets as f64 * 1e-9,
            p50_s: q(0.50),
            p95_s: q(0.95),
            p99_s: q(0.99),
            jitter_s: self.jitter_ns * 1e-9,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link's sojourns: those that did not wait count as 0 in the percentiles and the mean.
    #[test]
    fn sojourns_count_the_packets_that_did_not_wait() {
        let mut r = SojournRecorder::default();
        assert!(r.stats(0).is_none());
        (0..40).for_each(|i| r.record(1_000 * (i + 1)));
        // 100 transmitted: 60 did not wait.
        let s = r.stats(100).unwrap();
        assert_eq!((s.packets, s.unqueued), (100, 60));
        assert_eq!(s.p50_s, Some(0.0));
        // The 95th of 100: the 35th of the 40 that waited, 35 µs (within the bucket).
        let (p95, p99) = (s.p95_s.unwrap(), s.p99_s.unwrap());
        assert!((p95 / 35e-6 - 1.0).abs() < 0.008, "{p95}");
        assert!((p99 / 39e-6 - 1.0).abs() < 0.008, "{p99}");
        let mean = (1..=40).map(|i| i as f64 * 1e-6).sum::<f64>() / 100.0;
        assert!((s.mean_s - mean).abs() < 1e-15);
    }

    /// Kept as a mean alone, a link's sojourns give the same count and mean, no percentiles,
    /// and grow no histogram.
    #[test]
    fn a_mean_only_recorder_gives_the_same_mean_and_no_percentiles() {
        let (mut whole, mut mean) = (SojournRecorder::default(), SojournRecorder::mean_only());
        for ns in (0..500u64).map(|i| 1 + i * i * 37 % 90_001) {
            whole.record(ns);
            mean.record(ns);
        }
        let (a, b) = (whole.stats(800).unwrap(), mean.stats(800).unwrap());
        assert_eq!(
            (a.packets, a.unqueued, a.mean_s),
            (b.packets, b.unqueued, b.mean_s)
        );
        assert!(a.p50_s.is_some() && a.p95_s.is_some() && a.p99_s.is_some());
        assert_eq!((b.p50_s, b.p95_s, b.p99_s), (None, None, None));
        assert!(mean.counts.is_none());
        let json = serde_json::to_string(&b).unwrap();
        assert!(!json.contains("p50"), "{json}");
        assert_eq!(serde_json::from_str::<QueueingStats>(&json).unwrap(), b);
    }

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

    /// The histogram's buckets hold every packet once, each delay inside its bucket's bounds,
    /// the buckets in order and contiguous with their values inside them.
    #[test]
    fn the_histogram_holds_each_delay_in_its_bucket() {
        let mut r = DelayRecorder::default();
        let delays = [5u64, 5, 127, 128, 129, 200, 10_000, 10_050, 3_000_000];
        delays.iter().for_each(|&d| r.record(d));
        let bins: Vec<HistogramBin> = r.histogram().collect();
        assert_eq!(
            bins.iter().map(|b| b.packets).sum::<u32>(),
            delays.len() as u32
        );
        for d in delays {
            let n = bins
                .iter()
                .filter(|b| b.from_ns <= d && d < b.to_ns)
                .count();
            assert_eq!(n, 1, "{d} ns in one bucket");
        }
        assert_eq!((bins[0].from_ns, bins[0].to_ns, bins[0].packets), (5, 6, 2));
        assert!(bins.windows(2).all(|w| w[0].to_ns <= w[1].from_ns));
        let exact_seconds = |ns| {
            let mut out = Vec::new();
            crate::csv_row::Cell::put(&ExactSeconds(ns), &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(exact_seconds(12_058_624), "0.012058624");
        assert_eq!(exact_seconds(2_000_000_000), "2");
        assert_eq!(exact_seconds(2_500_000_000), "2.5");
        assert_eq!(exact_seconds(5), "0.000000005");
        assert_eq!(exact_seconds(0), "0");
        assert_eq!(exact_seconds(1_000_000_100), "1.0000001");
        for i in [0u16, 127, 128, 500, 1000] {
            let (from, to) = bounds(i);
            assert!(from as f64 <= value(i) && value(i) < to as f64);
            assert_eq!(bucket(from), i);
            assert_eq!(bucket(to - 1), i);
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

    /// Two recorders to a cache line; the histogram grows to the longest sojourn and no
    /// further than the last bucket.
    #[test]
    fn a_sojourn_recorder_is_half_a_line_and_grows_to_the_longest_sojourn() {
        assert_eq!(std::mem::size_of::<SojournRecorder>(), 32);
        let mut r = SojournRecorder::default();
        r.record(5);
        assert!(r.counts.as_ref().is_some_and(|c| c.len() == 6));
        r.record(1 << 40);
        let len = r.counts.as_ref().map_or(0, |c| c.len());
        assert_eq!(len, usize::from(bucket(1 << 40)) + 1);
        assert_eq!(r.stats(3).map(|s| (s.packets, s.unqueued)), Some((3, 1)));
        let mut counts = r.counts.take().unwrap_or_default();
        grow(&mut counts, usize::MAX);
        assert_eq!(counts.len(), usize::from(bucket(u64::MAX)) + 1);
    }
}
