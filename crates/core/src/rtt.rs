//! Round-trip-time estimation and the retransmission timeout, RFC 6298.
//!
//! Departures from the RFC: the minimum RTO is a parameter (default 200 ms, as Linux and most
//! simulation studies use, rather than the RFC's 1 s), and the clock granularity G is zero because
//! the clock is exact. Samples come from echoed timestamps, so retransmitted segments give valid
//! samples (RFC 7323) and Karn's rule is not needed.

use crate::units::Duration;

/// RFC 6298 state: SRTT, RTTVAR, the RTO and its exponential backoff. (Estimates not yet
/// taken are [`NONE`], so that the estimator, part of every TCP sender an ACK touches, is one
/// cache line.)
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Duration,
    rttvar: Duration,
    min_rtt: Duration,
    latest: Duration,
    min_rto: Duration,
    initial_rto: Duration,
    backoff: u32,
}

/// An estimate not yet taken (no RTT lasts 584 years).
const NONE: Duration = Duration(u64::MAX);

/// The RTO's upper bound (RFC 6298 §2.5: "a maximum value MAY be placed on RTO provided it is
/// at least 60 seconds").
const MAX_RTO: Duration = Duration::from_secs(60);

fn taken(d: Duration) -> Option<Duration> {
    (d != NONE).then_some(d)
}

impl RttEstimator {
    pub fn new(min_rto: Duration, initial_rto: Duration) -> RttEstimator {
        RttEstimator {
            srtt: NONE,
            rttvar: Duration::ZERO,
            min_rtt: NONE,
            latest: NONE,
            min_rto,
            initial_rto,
            backoff: 0,
        }
    }

    /// Takes one RTT measurement (RFC 6298 §2.2 and §2.3, α = 1/8, β = 1/4) and clears the
    /// backoff, as §5.7 allows once a new sample arrives.
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        match taken(self.srtt) {
            None => {
                self.srtt = r;
                self.rttvar = Duration(r.0 / 2);
            }
            Some(s) => {
                let err = s.0.abs_diff(r.0);
                self.rttvar = Duration((3 * self.rttvar.0 + err) / 4);
                self.srtt = Duration((7 * s.0 + r.0) / 8);
            }
        }
        self.backoff = 0;
    }

    /// The current RTO with backoff applied (RFC 6298 §2.4, §5.5), clamped to [min, 60 s].
    pub fn rto(&self) -> Duration {
        let base = match taken(self.srtt) {
            None => self.initial_rto,
            Some(s) => Duration(s.0 + 4 * self.rttvar.0).max(self.min_rto),
        };
        let backed = base.saturating_mul(1u64 << self.backoff.min(20));
        backed.min(MAX_RTO).max(self.min_rto)
    }

    /// The timer expired: double the RTO (§5.5).
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(20);
    }

    pub fn srtt(&self) -> Option<Duration> {
        taken(self.srtt)
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        taken(self.min_rtt)
    }
    pub fn latest(&self) -> Option<Duration> {
        taken(self.latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = RttEstimator::new(ms(200), ms(1000));
        assert_eq!(e.rto(), ms(1000));
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        // RTO = 100 + 4 * 50 = 300 ms.
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn later_samples_are_smoothed() {
        let mut e = RttEstimator::new(ms(1), ms(1000));
        e.on_sample(ms(100));
        e.on_sample(ms(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.srtt(), Some(Duration(112_500_000)));
        assert_eq!(e.rto(), Duration(112_500_000 + 4 * 62_500_000));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let mut e = RttEstimator::new(ms(200), ms(1000));
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(200));
        e.on_timeout();
        assert_eq!(e.rto(), ms(400));
        for _ in 0..30 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(200));
    }

    /// Part of every TCP sender, read by every ACK: one cache line.
    #[test]
    fn the_estimator_is_one_cache_line() {
        assert!(std::mem::size_of::<RttEstimator>() <= 64);
    }
}
