//! The pacer every sender shares: a leaky bucket with a burst of one packet.
//!
//! A packet may leave when the bucket's release time has come; each packet sent pushes the
//! release time back by its gap (size / rate, or a gap the sender computes itself, as Monaco
//! does from its window and RTT). After an idle spell the release time is in the past, so one
//! packet leaves at once and the spacing resumes from then (the one-packet burst): the pacer
//! never lets a sender catch up on time it did not use.

use crate::units::{Duration, Rate, Time};

/// When the next packet may leave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    release: Time,
}

impl Pacer {
    /// A pacer that lets the first packet go at `now`.
    pub fn starting_at(now: Time) -> Pacer {
        Pacer { release: now }
    }

    /// When the next packet may leave.
    pub fn release_time(&self) -> Time {
        self.release
    }

    /// Whether a packet may leave at `now`.
    pub fn ready(&self, now: Time) -> bool {
        self.release <= now
    }

    /// A packet left at `now`; the next may leave `gap` later (or `gap` after the release time,
    /// if `now` is earlier — a packet sent ahead of the pacer, such as a retransmission, still
    /// uses its share).
    pub fn on_sent(&mut self, now: Time, gap: Duration) {
        self.release = self.release.max(now) + gap;
    }

    /// A packet of `bytes` left at `now` paced at `rate`.
    pub fn on_sent_at_rate(&mut self, now: Time, bytes: u64, rate: Rate) {
        self.on_sent(now, rate.tx_time(bytes));
    }

    /// Holds the next packet back until `delay` after `now` or after the release time,
    /// whichever is later (an idle time the sender places itself).
    pub fn hold(&mut self, now: Time, delay: Duration) {
        self.release = self.release.max(now) + delay;
    }

    /// Lets the next packet go at `now` at the latest.
    pub fn release_by(&mut self, now: Time) {
        self.release = self.release.min(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_packets_and_bursts_one_after_idle() {
        let ms = |m| Time::ZERO + Duration::from_millis(m);
        let mut p = Pacer::starting_at(ms(0));
        assert!(p.ready(ms(0)));
        // 1000 B at 8 Mb/s: 1 ms apart.
        p.on_sent_at_rate(ms(0), 1000, Rate::from_mbps(8));
        assert_eq!(p.release_time(), ms(1));
        assert!(!p.ready(ms(0)));
        p.on_sent_at_rate(ms(1), 1000, Rate::from_mbps(8));
        assert_eq!(p.release_time(), ms(2));
        // Idle until 10 ms: one packet at once, the next 1 ms later, no catching up.
        assert!(p.ready(ms(10)));
        p.on_sent_at_rate(ms(10), 1000, Rate::from_mbps(8));
        assert_eq!(p.release_time(), ms(11));
        p.hold(ms(10), Duration::from_millis(5));
        assert_eq!(p.release_time(), ms(16));
        p.release_by(ms(12));
        assert_eq!(p.release_time(), ms(12));
    }
}
