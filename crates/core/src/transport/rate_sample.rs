//! Delivery-rate samples, one per ACK, as BBR needs them (draft-cheng-iccrg-delivery-rate-
//! estimation-02, "DRE" below; Linux tcp_rate.c).
//!
//! At each transmission the sender records, with the segment, how much had been delivered and
//! when (`delivered`, `delivered_time`), and when the flight it belongs to started
//! (`first_sent_time`). When an ACK delivers segments, the sample is taken from the most
//! recently sent of them (DRE §3.3): the data delivered since it was sent, over the longer of
//! its send interval and its ACK interval (DRE §3.3, "the max of the two intervals", which
//! guards against ACK compression).
//!
//! Departures: sequence numbers count segments and ACKs are cumulative (no SACK), so the
//! segments an ACK delivers are those below its cumulative ACK; a retransmitted segment's
//! record is that of its last transmission. Samples whose interval is shorter than the minimum
//! RTT seen are discarded (DRE §3.3: they would overestimate the rate).

use std::collections::VecDeque;

use crate::units::{Duration, Rate, Time};

/// One delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    /// The interval: the longer of the send and the ACK interval.
    pub interval: Duration,
    /// delivered / interval.
    pub delivery_rate: Rate,
    /// The segment was sent while the sender had nothing more to send (DRE §3.4): the rate
    /// says how fast the application went, not the network; BBR does not let it lower its
    /// bandwidth estimate.
    pub is_app_limited: bool,
    /// Total bytes delivered on the connection so far.
    pub total_delivered: u64,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    sent_time: Time,
    is_app_limited: bool,
}

/// The connection's delivery state (DRE §3.1) and its segments' send records.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero while the connection is application-limited: the `delivered` count at which
    /// that ends (DRE `C.app_limited`).
    app_limited: u64,
    /// Records of segments `base..base + sent.len()`.
    base: u64,
    sent: VecDeque<Option<Sent>>,
    min_rtt: Option<Duration>,
    /// Bytes counted as delivered before a cumulative ACK covered them.
    early: u64,
}

impl RateSampler {
    /// Segment `seq` leaves at `now` with `in_flight` bytes already in flight (DRE §3.2).
    pub fn on_sent(&mut self, now: Time, seq: u64, in_flight: u64) {
        if in_flight == 0 {
            // A new flight starts: its intervals are measured from now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = Sent {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited != 0,
        };
        if self.sent.is_empty() {
            self.base = seq;
        }
        if seq < self.base {
            return; // already delivered
        }
        let i = (seq - self.base) as usize;
        if i >= self.sent.len() {
            self.sent.resize(i + 1, None);
        }
        self.sent[i] = Some(rec);
    }

    /// The sender has nothing to send although its window allows more (DRE §3.4): samples stay
    /// app-limited until what is in flight now is delivered.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// `bytes` arrived above a hole at `now`: newly SACKed segments, or without SACK one
    /// segment per duplicate ACK (Linux's Reno SACK emulation, `tcp_add_reno_sack`). They
    /// count as delivered now, and not again when the cumulative ACK covers them — otherwise
    /// the ACK that fills a hole would deliver a whole window at once and its sample would
    /// overestimate the rate many times over. No sample is taken here.
    pub fn on_early_delivery(&mut self, now: Time, bytes: u64) {
        self.delivered += bytes;
        self.delivered_time = now;
        self.early += bytes;
    }

    /// An ACK at `now` delivered segments `from..to` (`bytes` in all), with an RTT sample if it
    /// gives one; `early` is how many of those bytes were counted already when SACKed, if the
    /// sender knows (with SACK), else the duplicate ACKs' count stands in for it. Returns the
    /// rate sample, if this ACK yields a valid one.
    pub fn on_ack(
        &mut self,
        now: Time,
        from: u64,
        to: u64,
        bytes: u64,
        rtt: Option<Duration>,
        early: Option<u64>,
    ) -> Option<RateSample> {
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        // Without SACK the hole the ACK fills is counted too: it takes one duplicate's credit
        // too many, as Linux's `tcp_remove_reno_sacks` does.
        let counted = early.unwrap_or(self.early).min(bytes).min(self.early);
        self.early -= counted;
        self.delivered += bytes - counted;
        self.delivered_time = now;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        // The most recently sent of the delivered segments (the last one, sent last unless a
        // hole below it was retransmitted later: then that one).
        let mut newest: Option<Sent> = None;
        for seq in from.max(self.base)..to {
            let i = (seq - self.base) as usize;
            if let Some(Some(s)) = self.sent.get(i) {
                if newest.is_none_or(|n| s.sent_time >= n.sent_time) {
                    newest = Some(*s);
                }
            }
        }
        let drop = (to.saturating_sub(self.base) as usize).min(self.sent.len());
        self.sent.drain(..drop);
        self.base = self.base.max(to);
        let p = newest?;
        // DRE §3.3: the flight starts anew from this packet's transmission.
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time - p.first_sent_time;
        let ack_elapsed = self.delivered_time - p.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        if interval.0 == 0 || self.min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        let delivered = self.delivered - p.delivered;
        Some(RateSample {
            delivered,
            interval,
            delivery_rate: Rate::from_bps((Rate::of(delivered, interval)) as u64),
            is_app_limited: p.is_app_limited,
            total_delivered: self.delivered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Time {
        Time::ZERO + Duration::from_millis(m)
    }

    #[test]
    fn a_paced_flight_gives_its_sending_rate() {
        // Ten 1000 B segments 1 ms apart (8 Mb/s), each ACKed 20 ms after it left.
        let mut r = RateSampler::default();
        for s in 0..10 {
            r.on_sent(ms(s), s, s * 1000);
        }
        let mut last = None;
        for s in 0..10 {
            last = r.on_ack(
                ms(s + 20),
                s,
                s + 1,
                1000,
                Some(Duration::from_millis(20)),
                None,
            );
        }
        // The last ACK: segment 9 was sent when nothing had been delivered yet (delivered time
        // 0 ms, the flight's start); 10 000 B delivered since, over the ACK interval of 29 ms
        // (longer than the 9 ms send interval).
        let s = last.unwrap();
        assert_eq!(s.delivered, 10_000);
        assert_eq!(s.interval, Duration::from_millis(29));
        assert!(!s.is_app_limited);
        // One more segment after an idle spell: a new flight, 1000 B over its 20 ms RTT.
        r.on_sent(ms(30), 10, 0);
        let s = r.on_ack(ms(50), 10, 11, 1000, Some(Duration::from_millis(20)), None);
        assert_eq!(s.unwrap().delivery_rate, Rate::from_bps(400_000));
        // A sample over less than the minimum RTT would overstate the rate: none.
        r.on_sent(ms(60), 11, 0);
        assert!(r
            .on_ack(ms(70), 11, 12, 1000, Some(Duration::from_millis(10)), None)
            .is_some());
        r.on_sent(ms(80), 12, 0);
        r.on_sent(ms(80), 13, 1000);
        assert!(r.on_ack(ms(85), 12, 14, 2000, None, None).is_none());
    }

    #[test]
    fn steady_state_rate_is_what_the_bottleneck_delivers() {
        // A window of 20 segments over a path that delivers one segment per ms (8 Mb/s) with a
        // 20 ms base RTT: after the first round each ACK releases one segment.
        let mut r = RateSampler::default();
        let mut in_flight = 0u64;
        let mut next = 0u64;
        let mut acks = std::collections::VecDeque::new();
        let mut samples = vec![];
        for t in 0..200u64 {
            while in_flight < 20_000 {
                r.on_sent(ms(t), next, in_flight);
                // Delivered one per ms at the bottleneck: ACK at max(t + 20, previous + 1).
                let at = acks.back().map_or(t + 20, |&(a, _)| (t + 20).max(a + 1));
                acks.push_back((at, next));
                next += 1;
                in_flight += 1000;
            }
            while acks.front().is_some_and(|&(a, _)| a == t + 1) {
                let (_, seq) = acks.pop_front().unwrap();
                in_flight -= 1000;
                if let Some(s) = r.on_ack(ms(t + 1), seq, seq + 1, 1000, None, None) {
                    samples.push(s.delivery_rate.bps());
                }
            }
        }
        let tail = &samples[samples.len() - 50..];
        assert!(
            tail.iter().all(|&b| (7_900_000..=8_100_000).contains(&b)),
            "{tail:?}"
        );
    }

    #[test]
    fn app_limited_marks_samples_until_the_flight_is_delivered() {
        let mut r = RateSampler::default();
        r.on_sent(ms(0), 0, 0);
        r.on_app_limited(1000);
        r.on_sent(ms(1), 1, 1000);
        let s = r.on_ack(ms(21), 0, 2, 2000, None, None).unwrap();
        assert!(s.is_app_limited);
        r.on_sent(ms(22), 2, 0);
        r.on_sent(ms(23), 3, 1000);
        let s = r.on_ack(ms(43), 2, 4, 2000, None, None).unwrap();
        assert!(!s.is_app_limited);
    }

    #[test]
    fn duplicate_acks_deliver_as_they_come_so_filling_a_hole_is_no_burst() {
        // 20 segments 1 ms apart (8 Mb/s), each ACKed 20 ms after it left; segment 0 is lost
        // and retransmitted at 25 ms (acknowledged at 45 ms with all 20).
        let mut r = RateSampler::default();
        for s in 0..20 {
            r.on_sent(ms(s), s, s * 1000);
        }
        for s in 1..5 {
            r.on_early_delivery(ms(s + 20), 1000);
        }
        r.on_sent(ms(25), 0, 19_000);
        for s in 5..20 {
            r.on_early_delivery(ms(s + 20), 1000);
        }
        let s = r
            .on_ack(ms(45), 0, 20, 20_000, Some(Duration::from_millis(20)), None)
            .unwrap();
        // Only the retransmission is new: 19 segments were counted as their duplicate ACKs
        // came. The sample runs from the retransmission (4 segments delivered by then) to
        // now: 16 segments over the 25 ms send interval = 5.1 Mb/s, not 20 segments at once.
        assert_eq!(r.delivered, 20_000);
        assert_eq!(s.delivered, 16_000);
        assert_eq!(s.interval, Duration::from_millis(25));
        assert!(s.delivery_rate.bps() <= 8_000_000, "{:?}", s.delivery_rate);
    }
}
