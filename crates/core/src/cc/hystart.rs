//! HyStart++ (RFC 9406): leaving slow start on a rising RTT, before the first loss.
//!
//! Slow start is watched round by round (a round ends when the cumulative ACK passes the
//! highest segment sent when it began). Once a round has at least `N_RTT_SAMPLE` RTT samples
//! and its minimum RTT exceeds the previous round's by `RttThresh`, the sender enters
//! Conservative Slow Start (CSS), growing at a quarter of the rate; if the RTT falls back
//! below the baseline it returns to slow start, and after `CSS_ROUNDS` rounds of CSS it leaves
//! for congestion avoidance (ssthresh = cwnd).
//!
//! Departures: only the initial slow start uses HyStart++ (RFC 9406 §4.3 leaves its use after
//! a timeout to the implementation; Linux's HyStart is likewise off after the first loss);
//! slow start's growth per ACK is the controller's own (at most one segment per ACK, so the
//! `L` limit of §4.2 never binds).

use super::AckSample;
use crate::units::Duration;

/// RFC 9406 §4.3: the constants, as recommended.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
/// CSS grows cwnd by bytes_acked / CSS_GROWTH_DIVISOR.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

/// Where HyStart++ has slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start.
    SlowStart,
    /// Conservative Slow Start: growth divided by [`CSS_GROWTH_DIVISOR`].
    Conservative,
    /// Leave slow start now: set ssthresh to cwnd (§4.2, after CSS_ROUNDS rounds).
    Exit,
    /// HyStart++ is over (it exited, or a congestion event ended slow start).
    Done,
}

/// HyStart++ state of one connection.
#[derive(Clone, Debug)]
pub struct HyStart {
    phase: Phase,
    /// The round ends when the cumulative ACK reaches this segment (`windowEnd`).
    window_end: Option<u64>,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Duration>,
    css_rounds: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
        }
    }
}

impl HyStart {
    /// The phase after an ACK of new data received in slow start.
    pub fn on_ack(&mut self, ack: &AckSample) -> Phase {
        if matches!(self.phase, Phase::Done | Phase::Exit) {
            self.phase = Phase::Done;
            return self.phase;
        }
        // §4.2: "At the start of each round during standard slow start and CSS,
        // initialize ... lastRoundMinRTT = currentRoundMinRTT, currentRoundMinRTT = infinity,
        // rttSampleCount = 0", the round ending when the ACK passes windowEnd.
        let round_ended = self.window_end.is_none_or(|end| ack.cumulative_ack > end);
        if round_ended {
            self.window_end = Some(ack.highest_sent);
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if self.phase == Phase::Conservative {
                self.css_rounds += 1;
                // §4.2: "If CSS_ROUNDS rounds are complete, enter congestion avoidance by
                // setting the ssthresh to the current cwnd."
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = Phase::Exit;
                    return self.phase;
                }
            }
        }
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return self.phase;
        }
        let (Some(current), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt)
        else {
            return self.phase;
        };
        match self.phase {
            Phase::SlowStart => {
                // §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT /
                // MIN_RTT_DIVISOR, MAX_RTT_THRESH)); enter CSS when currentRoundMinRTT ≥
                // lastRoundMinRTT + RttThresh.
                let thresh =
                    Duration(last.0 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if current.0 >= last.0 + thresh.0 {
                    self.css_baseline_min_rtt = Some(current);
                    self.css_rounds = 0;
                    self.phase = Phase::Conservative;
                }
            }
            Phase::Conservative => {
                // §4.2: "If currentRoundMinRTT < cssBaselineMinRtt, the delay increase was
                // spurious: resume slow start."
                if self.css_baseline_min_rtt.is_some_and(|b| current < b) {
                    self.css_baseline_min_rtt = None;
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Exit | Phase::Done => {}
        }
        self.phase
    }

    /// A loss, an ECN echo or a timeout ends slow start; HyStart++ is not used again.
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(cumulative: u64, highest: u64, rtt_ms: u64) -> AckSample {
        AckSample {
            acked_bytes: 1000,
            rtt: Some(Duration::from_millis(rtt_ms)),
            in_flight: 0,
            in_recovery: false,
            highest_sent: highest,
            cumulative_ack: cumulative,
            ecn_echo: false,
            ce_segments: None,
            one_way_delay: None,
            rate: None,
        }
    }

    /// Feeds one round of `n` ACKs with the given RTT; the round's window ends at `end`.
    fn round(h: &mut HyStart, start: u64, n: u64, rtt_ms: u64) -> Phase {
        let mut phase = h.phase();
        for i in 0..n {
            phase = h.on_ack(&ack(start + i + 1, start + 2 * n, rtt_ms));
        }
        phase
    }

    #[test]
    fn a_rtt_rise_above_the_threshold_enters_css_then_congestion_avoidance() {
        let mut h = HyStart::default();
        assert_eq!(round(&mut h, 0, 10, 100), Phase::SlowStart);
        // A rise of 10 ms: below RttThresh = clamp(100/8, 4, 16) = 12.5 ms: stay.
        assert_eq!(round(&mut h, 20, 10, 110), Phase::SlowStart);
        // 110 → 124 ms ≥ 110 + 13.75: enter CSS.
        assert_eq!(round(&mut h, 40, 10, 124), Phase::Conservative);
        let mut start = 60;
        for _ in 0..4 {
            assert_eq!(round(&mut h, start, 10, 125), Phase::Conservative);
            start += 20;
        }
        // The fifth CSS round ends: exit.
        assert_eq!(h.on_ack(&ack(start + 1, start + 20, 125)), Phase::Exit);
        assert_eq!(h.on_ack(&ack(start + 2, start + 20, 125)), Phase::Done);
    }

    #[test]
    fn fewer_than_eight_samples_decide_nothing_and_a_falling_rtt_resumes_slow_start() {
        let mut h = HyStart::default();
        round(&mut h, 0, 10, 100);
        assert_eq!(round(&mut h, 20, 7, 200), Phase::SlowStart, "7 samples");
        let mut h = HyStart::default();
        round(&mut h, 0, 10, 100);
        assert_eq!(round(&mut h, 20, 10, 120), Phase::Conservative);
        assert_eq!(round(&mut h, 40, 10, 105), Phase::SlowStart);
        h.on_congestion();
        assert_eq!(round(&mut h, 60, 10, 300), Phase::Done);
    }
}
