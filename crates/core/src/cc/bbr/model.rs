//! BBR's network path model: the bottleneck bandwidth (a windowed maximum of delivery-rate
//! samples over round trips) and the round-trip propagation time (a windowed minimum of RTT
//! samples over time), draft-cardwell-iccrg-bbr-congestion-control-00 §4.1.1–4.1.2.

use std::collections::VecDeque;

use crate::units::{Duration, Rate, Time};

/// A windowed maximum over round trips, exact: a deque of (round, value) decreasing in value,
/// so the front is the maximum of the last `window` rounds. (Linux's `minmax` keeps three
/// samples and approximates; the exact filter is as cheap here.)
#[derive(Clone, Debug)]
pub struct MaxFilter {
    window: u64,
    samples: VecDeque<(u64, u64)>,
}

impl MaxFilter {
    pub fn new(window: u64) -> MaxFilter {
        MaxFilter {
            window,
            samples: VecDeque::new(),
        }
    }

    /// Adds `value`, sampled in round `round` (rounds never decrease).
    pub fn update(&mut self, round: u64, value: u64) {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((round, value));
        self.expire(round);
    }

    /// Forgets samples older than `window` rounds before `round`.
    pub fn expire(&mut self, round: u64) {
        while self
            .samples
            .front()
            .is_some_and(|&(r, _)| r + self.window <= round)
        {
            self.samples.pop_front();
        }
    }

    /// The maximum of the window, 0 when empty.
    pub fn get(&self) -> u64 {
        self.samples.front().map_or(0, |&(_, v)| v)
    }
}

/// The model: BtlBw and RTprop.
#[derive(Clone, Debug)]
pub struct PathModel {
    /// BtlBw, bit/s, over the last `BtlBwFilterLen` rounds.
    btl_bw: MaxFilter,
    /// RTprop, and when it was last set.
    rtprop: Option<Duration>,
    rtprop_stamp: Time,
    rtprop_filter_len: Duration,
}

impl PathModel {
    pub fn new(btl_bw_rounds: u64, rtprop_filter_len: Duration) -> PathModel {
        PathModel {
            btl_bw: MaxFilter::new(btl_bw_rounds),
            rtprop: None,
            rtprop_stamp: Time::ZERO,
            rtprop_filter_len,
        }
    }

    /// §4.1.1.4 BBRUpdateBtlBw: a sample counts unless it is application-limited and below
    /// the current estimate.
    pub fn on_rate(&mut self, round: u64, rate: Rate, app_limited: bool) {
        if rate.bps() >= self.btl_bw.get() || !app_limited {
            self.btl_bw.update(round, rate.bps());
        } else {
            self.btl_bw.expire(round);
        }
    }

    /// §4.1.2.3 BBRUpdateRTprop: returns whether RTprop had expired (10 s without a lower or
    /// equal sample) before this sample.
    pub fn on_rtt(&mut self, now: Time, rtt: Option<Duration>) -> bool {
        let expired = now > self.rtprop_stamp + self.rtprop_filter_len;
        if let Some(r) = rtt {
            if self.rtprop.is_none_or(|m| r <= m) || expired {
                self.rtprop = Some(r);
                self.rtprop_stamp = now;
            }
        }
        expired
    }

    /// ProbeRTT done: the current RTprop is fresh again (§4.3.5 `BBR.rtprop_stamp = Now()`).
    pub fn refresh_rtprop(&mut self, now: Time) {
        self.rtprop_stamp = now;
    }

    pub fn btl_bw(&self) -> Rate {
        Rate::from_bps(self.btl_bw.get())
    }

    pub fn rtprop(&self) -> Option<Duration> {
        self.rtprop
    }

    /// BtlBw × RTprop, bytes; `None` before the first RTT sample.
    pub fn bdp(&self) -> Option<f64> {
        let rtprop = self.rtprop?;
        Some(self.btl_bw.get() as f64 / 8.0 * rtprop.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_filter_keeps_the_largest_of_the_window() {
        let mut f = MaxFilter::new(10);
        f.update(0, 5);
        f.update(1, 9);
        f.update(2, 7);
        assert_eq!(f.get(), 9);
        f.update(10, 1);
        assert_eq!(f.get(), 9, "round 1 is within the 10 rounds up to 10");
        f.update(11, 2);
        assert_eq!(f.get(), 7, "round 1 expired; round 2's 7 remains");
        f.expire(12);
        assert_eq!(f.get(), 2);
    }

    #[test]
    fn rtprop_takes_lower_samples_and_any_sample_once_expired() {
        let mut m = PathModel::new(10, Duration::from_secs(10));
        let t = |s: u64| Time::ZERO + Duration::from_secs(s);
        m.on_rtt(t(0), Some(Duration::from_millis(50)));
        m.on_rtt(t(5), Some(Duration::from_millis(80)));
        assert_eq!(m.rtprop(), Some(Duration::from_millis(50)));
        assert!(m.on_rtt(t(11), Some(Duration::from_millis(80))));
        assert_eq!(m.rtprop(), Some(Duration::from_millis(80)));
        // An app-limited sample below the estimate is ignored, above it counts.
        m.on_rate(0, Rate::from_mbps(10), false);
        m.on_rate(1, Rate::from_mbps(5), true);
        assert_eq!(m.btl_bw(), Rate::from_mbps(10));
        m.on_rate(2, Rate::from_mbps(12), true);
        assert_eq!(m.btl_bw(), Rate::from_mbps(12));
        assert_eq!(m.bdp(), Some(12e6 / 8.0 * 0.08));
    }
}
