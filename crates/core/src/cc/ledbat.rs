//! LEDBAT (RFC 6817): a less-than-best-effort controller that keeps the queueing delay it adds
//! near a target and yields to standard TCP. It estimates the queueing delay as the current
//! one-way delay (the minimum of the last few samples) less the base delay (the minimum seen
//! over the last minutes), and moves the window in proportion to how far that is from TARGET.
//!
//! The RFC's sender (§2.4.2), with its defaults: TARGET 100 ms (§3.2: "MUST be 100 ms or
//! less"), GAIN 1, BASE_HISTORY 10 one-minute minima, CURRENT_FILTER 4 samples (the minimum),
//! INIT_CWND and MIN_CWND 2 segments, ALLOWED_INCREASE 1 segment. A loss halves the window
//! at most once per RTT (the transport's rule), a timeout sets it to one segment.
//!
//! The one-way delay comes with each ACK: from when the data segment it echoes was sent to
//! when the receiver sent the ACK (`AckSample::one_way_delay`); the receiver echoes the
//! earliest unacknowledged segment's timestamp, so a delayed ACK adds its wait — the filters'
//! minima remove it. Departures: no slow start (§2.4.2 leaves it open; the window starts at
//! INIT_CWND and grows by the controller alone); an ECN echo is answered as a loss (§2.4.1 is
//! silent; RFC 3168's rule).

use std::collections::VecDeque;

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{count_in, in_range, FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Time};
use std::ops::Bound::{Excluded, Included};

/// LEDBAT's state.
#[derive(Clone, Debug)]
pub struct Ledbat {
    mss: f64,
    cwnd: f64,
    target: Duration,
    gain: f64,
    /// The last CURRENT_FILTER one-way delay samples.
    current: VecDeque<Duration>,
    current_filter: usize,
    /// One minimum per minute, the newest last, at most `base_history`; with the minute the
    /// newest started.
    base: VecDeque<Duration>,
    base_history: usize,
    base_minute: Option<u64>,
}

impl Ledbat {
    pub fn new(mss: u64, p: &LedbatParams) -> Ledbat {
        Ledbat {
            mss: mss as f64,
            cwnd: (p.initial_window.max(p.min_window) * mss) as f64,
            target: p.target,
            gain: p.gain,
            current: VecDeque::new(),
            current_filter: p.current_filter,
            base: VecDeque::new(),
            base_history: p.base_history,
            base_minute: None,
        }
    }

    /// §2.4.2 `update_base_delay`: the minimum of the current minute, a new entry each minute,
    /// the oldest dropped beyond BASE_HISTORY.
    fn update_base_delay(&mut self, now: Time, delay: Duration) {
        let minute = now.0 / 60_000_000_000;
        if self.base_minute != Some(minute) {
            self.base_minute = Some(minute);
            self.base.push_back(delay);
            if self.base.len() > self.base_history {
                self.base.pop_front();
            }
        } else if let Some(last) = self.base.back_mut() {
            *last = (*last).min(delay);
        }
    }

    /// §2.4.2 `update_current_delay`, FILTER = MIN (§3.4.2).
    fn update_current_delay(&mut self, delay: Duration) {
        self.current.push_back(delay);
        if self.current.len() > self.current_filter {
            self.current.pop_front();
        }
    }

    /// The queueing delay estimate: FILTER(current_delays) − MIN(base_delays).
    pub fn queuing_delay(&self) -> Option<Duration> {
        let current = self.current.iter().min()?;
        let base = self.base.iter().min()?;
        Some(*current - *base.min(current))
    }
}

impl CongestionController for Ledbat {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        let min = 2.0 * self.mss; // MIN_CWND
        if let Some(d) = ack.one_way_delay {
            self.update_base_delay(now, d);
            self.update_current_delay(d);
        }
        if !ack.in_recovery {
            if let Some(q) = self.queuing_delay() {
                // off_target = (TARGET − queuing_delay) / TARGET;
                // cwnd += GAIN · off_target · bytes_newly_acked · MSS / cwnd.
                let target = self.target.as_secs_f64();
                let off_target = (target - q.as_secs_f64()) / target;
                self.cwnd += self.gain * off_target * ack.acked_bytes as f64 * self.mss / self.cwnd;
            }
        }
        // max_allowed_cwnd = flightsize + ALLOWED_INCREASE · MSS.
        let allowed = ack.in_flight as f64 + self.mss;
        self.cwnd = self.cwnd.min(allowed).max(min);
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        let min = 2.0 * self.mss;
        self.cwnd = match ev.kind {
            // §2.4.2: "cwnd = min (cwnd, max (cwnd/2, MIN_CWND * MSS))" on a loss (once per RTT).
            Congestion::Loss | Congestion::Ecn => self.cwnd.min((self.cwnd / 2.0).max(min)),
            // §2.4.2: on a timeout "cwnd = 1 * MSS".
            Congestion::Timeout => self.mss,
        };
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }
}

tcp_scheme_params! {
    /// `ledbat` parameters (RFC 6817's defaults).
    pub struct LedbatParams {
        /// TARGET, the queueing delay LEDBAT aims to add (RFC 6817 §3.2: at most 100 ms).
        pub target: Duration = Duration::from_millis(100),
        /// GAIN, in (0, 1] (RFC 6817 §3.2: at most 1).
        pub gain: f64 = 1.0,
        /// BASE_HISTORY: one-minute minima kept for the base delay (10).
        pub base_history: usize = 10,
        /// CURRENT_FILTER: the samples whose minimum is the current delay (4).
        pub current_filter: usize = 4,
        /// MIN_CWND, segments (2).
        pub min_window: u64 = 2,
        /// Send ECN-capable packets and answer echoes as losses.
        pub ecn: bool = false,
    }
    sack = true;
}

impl SchemeParams for LedbatParams {
    fn ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        if self.target == Duration::ZERO || self.target > Duration::from_millis(100) {
            return Err(ParamError::at(
                "target",
                format!(
                    "ledbat `target` must be above 0 and at most 100ms (RFC 6817 §3.2), not {}",
                    self.target
                ),
            ));
        }
        // RFC 6817 §3.2: GAIN at most 1.
        in_range("gain", self.gain, (Excluded(0.0), Included(1.0)))?;
        count_in("base_history", self.base_history as u64, 1, 1000)?;
        count_in("current_filter", self.current_filter as u64, 1, 1000)?;
        count_in("min_window", self.min_window, 1, 1000)?;
        self.tcp(self.ecn).validate("ledbat")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Ledbat::new(ctx.packet_size as u64, self);
        self.tcp(self.ecn).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(owd_ms: u64, in_flight: u64) -> AckSample {
        AckSample {
            in_flight,
            one_way_delay: Some(Duration::from_millis(owd_ms)),
            ..AckSample::of(MSS, None)
        }
    }

    fn ledbat() -> Ledbat {
        Ledbat::new(
            MSS,
            &LedbatParams {
                initial_window: 10,
                ..LedbatParams::default()
            },
        )
    }

    #[test]
    fn the_window_grows_below_target_and_shrinks_above_it() {
        let mut l = ledbat();
        // Base delay 20 ms; current 20 ms: no queueing, off_target = 1: +1 segment per window.
        for _ in 0..10 {
            l.on_ack(Time::ZERO, &ack(20, 1_000_000));
        }
        assert!((l.cwnd - 11_000.0).abs() < 100.0, "{}", l.cwnd);
        // 150 ms of queueing (50 ms over target) once the filter's four samples all say so:
        // off_target = −0.5, a shrink.
        for _ in 0..4 {
            l.on_ack(Time::ZERO, &ack(170, 1_000_000));
        }
        let before = l.cwnd;
        l.on_ack(Time::ZERO, &ack(170, 1_000_000));
        let want = before - 0.5 * 1000.0 * 1000.0 / before;
        assert!((l.cwnd - want).abs() < 1e-9, "{} vs {want}", l.cwnd);
        assert_eq!(l.queuing_delay(), Some(Duration::from_millis(150)));
        // At the target: no change.
        // (The base is 20 ms; the filter says 120 ms once its four samples do.)
        let mut t = ledbat();
        t.on_ack(Time::ZERO, &ack(20, 1_000_000));
        for _ in 0..4 {
            t.on_ack(Time::ZERO, &ack(120, 1_000_000));
        }
        let w = t.cwnd;
        t.on_ack(Time::ZERO, &ack(120, 1_000_000));
        assert!((t.cwnd - w).abs() < 1e-9);
    }

    #[test]
    fn the_current_delay_is_the_minimum_of_four_and_the_base_forgets_after_ten_minutes() {
        let mut l = ledbat();
        let min = |m: u64| Time(m * 60_000_000_000);
        l.on_ack(min(0), &ack(10, 1_000_000));
        for d in [50, 40, 60, 45] {
            l.on_ack(min(0), &ack(d, 1_000_000));
        }
        assert_eq!(l.queuing_delay(), Some(Duration::from_millis(30)));
        // Ten minutes later, with delays of 40 ms since: the 10 ms minute is forgotten.
        for m in 1..=10 {
            l.on_ack(min(m), &ack(40, 1_000_000));
        }
        assert_eq!(l.queuing_delay(), Some(Duration::ZERO));
    }

    #[test]
    fn the_window_is_capped_by_flight_plus_one_and_halves_on_loss() {
        let mut l = ledbat();
        l.on_ack(Time::ZERO, &ack(20, 3_000));
        assert_eq!(l.window(), 4_000, "flightsize + ALLOWED_INCREASE");
        l.on_ack(Time::ZERO, &ack(20, 100_000));
        l.cwnd = 20_000.0;
        l.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Loss, 20_000));
        assert_eq!(l.window(), 10_000);
        l.on_congestion_event(
            Time::ZERO,
            &CongestionEvent::new(Congestion::Timeout, 10_000),
        );
        assert_eq!(l.window(), MSS);
        // Never below MIN_CWND after an ACK.
        l.on_ack(Time::ZERO, &ack(500, 0));
        assert_eq!(l.window(), 2 * MSS);
    }
}
