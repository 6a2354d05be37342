//! Copa (Arun & Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the
//! Internet", NSDI 2018 [AB18]): a delay-based controller that steers its rate towards
//! λ_t = 1/(δ·d_q), d_q the queueing delay, so that in equilibrium each flow keeps about 1/δ
//! packets in the bottleneck queue; with a competitive mode against buffer-filling flows.
//!
//! [AB18] §2 and Algorithm 1, as implemented here:
//! - RTT_standing, the smallest RTT over the last srtt/2 (filtering ACK compression and the
//!   oscillation); RTT_min, the smallest over the last 10 s; d_q = RTT_standing − RTT_min.
//! - On each ACK: λ = cwnd/RTT_standing; if λ ≤ λ_t, cwnd += v/(δ·cwnd), else
//!   cwnd −= v/(δ·cwnd) (cwnd in packets).
//! - Velocity v: 1, doubled each round trip once cwnd has moved in the same direction for three
//!   round trips, back to 1 when the direction changes (direction judged once per round trip
//!   against the window at its start).
//! - Slow start: cwnd doubles per round trip (one packet per ACK) until λ first exceeds λ_t.
//! - Pacing at 2·cwnd/RTT_standing.
//! - Competitive mode (§3): if within the last five round trips the queue has not once been
//!   nearly empty (d_q < 10% of the largest queueing delay over them), a buffer-filling flow
//!   shares the bottleneck: 1/δ then grows by 1 per round trip and halves on a loss (AIMD on
//!   1/δ, δ ≤ 0.5); once the queue empties again, δ returns to its default.
//!
//! Departures: the competitive mode is off unless `competitive = true`. As the paper states the
//! switch, it also fires among Copa flows alone: four flows started within two seconds on a
//! 20 Mb/s link oscillate while the later ones learn RTT_min, the queue does not empty for five
//! round trips, every flow turns competitive, 1/δ grows each round trip, and the queue stays
//! near the buffer (254 of 500 packets, against 8.8 in default mode). Against CUBIC it lifts
//! Copa's share from 2% to 15% of the link (the paper reports more). Losses do not change the
//! window in default mode ([AB18] §2: Copa is driven by
//! delay; the transport still repairs them); a timeout sets the window to two packets. The
//! velocity is capped so that one round trip moves the window by at most half of itself (the
//! authors' implementation bounds it; the paper does not say how).

use std::collections::VecDeque;

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{in_range, FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};
use std::ops::Bound::{Excluded, Included};

/// A running minimum (or maximum) of samples over a sliding time window.
#[derive(Clone, Debug, Default)]
struct Windowed {
    /// (time, value), values increasing (for a minimum) from the front.
    q: VecDeque<(Time, Duration)>,
}

impl Windowed {
    /// Adds a sample and forgets those older than `window`; `max` keeps a maximum instead.
    fn add(&mut self, now: Time, x: Duration, window: Duration, max: bool) {
        while let Some(&(_, back)) = self.q.back() {
            if (max && back <= x) || (!max && back >= x) {
                self.q.pop_back();
            } else {
                break;
            }
        }
        self.q.push_back((now, x));
        while let Some(&(t, _)) = self.q.front() {
            if now.0 > t.0 + window.0 && self.q.len() > 1 {
                self.q.pop_front();
            } else {
                break;
            }
        }
    }

    fn get(&self) -> Option<Duration> {
        self.q.front().map(|&(_, x)| x)
    }
}

/// Copa's state.
#[derive(Clone, Debug)]
pub struct Copa {
    mss: f64,
    /// The window, packets.
    cwnd: f64,
    default_delta: f64,
    delta: f64,
    competitive_allowed: bool,
    min_window: Duration,
    slow_start: bool,
    velocity: f64,
    /// The direction of the last round trip's change (+1, −1) and for how many rounds.
    direction: i8,
    same_direction: u32,
    /// The round trip: when it ends, and the window at its start.
    round_end: Option<u64>,
    round_start_cwnd: f64,
    srtt: Option<Duration>,
    standing: Windowed,
    rtt_min: Windowed,
    /// The largest RTT_standing over the last five round trips (for the mode switch).
    standing_max: Windowed,
    /// When the queue was last nearly empty.
    last_empty: Time,
}

impl Copa {
    pub fn new(mss: u64, p: &CopaParams) -> Copa {
        Copa {
            mss: mss as f64,
            cwnd: p.initial_window.max(2) as f64,
            default_delta: p.delta,
            delta: p.delta,
            competitive_allowed: p.competitive,
            min_window: p.rtt_min_window,
            slow_start: true,
            velocity: 1.0,
            direction: 0,
            same_direction: 0,
            round_end: None,
            round_start_cwnd: p.initial_window.max(2) as f64,
            srtt: None,
            standing: Windowed::default(),
            rtt_min: Windowed::default(),
            standing_max: Windowed::default(),
            last_empty: Time::ZERO,
        }
    }

    /// δ now (the default, or the competitive mode's).
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// The queueing delay estimate d_q = RTT_standing − RTT_min.
    pub fn queueing_delay(&self) -> Option<Duration> {
        let (s, m) = (self.standing.get()?, self.rtt_min.get()?);
        Some(s - s.min(m))
    }

    fn competitive(&self) -> bool {
        self.delta < self.default_delta
    }

    /// Once per round trip: velocity and the mode.
    fn end_round(&mut self, now: Time, srtt: Duration) {
        let dir: i8 = if self.cwnd > self.round_start_cwnd {
            1
        } else if self.cwnd < self.round_start_cwnd {
            -1
        } else {
            0
        };
        // [AB18] §2.1: v doubles once the window has moved one way for three round trips.
        if dir != 0 && dir == self.direction {
            self.same_direction += 1;
            if self.same_direction >= 3 {
                self.velocity *= 2.0;
            }
        } else {
            self.velocity = 1.0;
            self.same_direction = 0;
        }
        self.direction = dir;
        // Departure: a round trip (about cwnd ACKs of v/(δ·cwnd)) moves the window by at most
        // half of itself: v/δ ≤ cwnd/2.
        self.velocity = self.velocity.min((self.delta * self.cwnd / 2.0).max(1.0));
        self.round_start_cwnd = self.cwnd;
        // [AB18] §3: the mode switch.
        if self.competitive_allowed {
            let nearly_empty_for = Duration(5 * srtt.0);
            if now.0 > self.last_empty.0 + nearly_empty_for.0 {
                // Competitive: 1/δ grows by one per round trip.
                self.delta = 1.0 / (1.0 / self.delta + 1.0);
            } else {
                self.delta = self.default_delta;
            }
        }
    }
}

impl CongestionController for Copa {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        let Some(rtt) = ack.rtt else {
            return;
        };
        let srtt = match self.srtt {
            None => rtt,
            Some(s) => Duration((s.0 * 7 + rtt.0) / 8),
        };
        self.srtt = Some(srtt);
        // RTT_standing over srtt/2; RTT_min over `rtt_min_window` (10 s).
        self.standing.add(now, rtt, Duration(srtt.0 / 2), false);
        self.rtt_min.add(now, rtt, self.min_window, false);
        let (Some(standing), Some(min)) = (self.standing.get(), self.rtt_min.get()) else {
            return;
        };
        self.standing_max
            .add(now, standing, Duration(5 * srtt.0), true);
        let dq = standing - standing.min(min);
        let max_dq = self.standing_max.get().map_or(dq, |m| m - m.min(min));
        if dq.0 as f64 <= 0.1 * max_dq.0 as f64 {
            self.last_empty = now;
        }
        // λ = cwnd / RTT_standing against λ_t = 1/(δ·d_q), in packets per second.
        let rate = self.cwnd / standing.as_secs_f64().max(1e-9);
        let target = if dq == Duration::ZERO {
            f64::INFINITY
        } else {
            1.0 / (self.delta * dq.as_secs_f64())
        };
        let acked = (ack.acked_bytes as f64 / self.mss).max(1.0);
        if self.slow_start {
            if rate <= target {
                self.cwnd += acked; // doubling per round trip
            } else {
                self.slow_start = false;
                // The mode switch judges the queue from here: slow start's overshoot is
                // Copa's own, not a buffer-filling competitor's.
                self.last_empty = now;
            }
        } else {
            // [AB18] Algorithm 1: cwnd ± v/(δ·cwnd) per ACK.
            let step = self.velocity * acked / (self.delta * self.cwnd);
            if rate <= target {
                self.cwnd += step;
            } else {
                self.cwnd = (self.cwnd - step).max(2.0);
            }
        }
        match self.round_end {
            Some(end) if ack.cumulative_ack <= end => {}
            Some(_) => {
                self.end_round(now, srtt);
                self.round_end = Some(ack.highest_sent);
            }
            None => self.round_end = Some(ack.highest_sent),
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        match ev.kind {
            // §3: in competitive mode a loss halves 1/δ (δ at most its default).
            Congestion::Loss | Congestion::Ecn => {
                if self.competitive() {
                    self.delta = (2.0 * self.delta).min(self.default_delta);
                }
            }
            Congestion::Timeout => {
                self.cwnd = 2.0;
                self.velocity = 1.0;
                self.same_direction = 0;
            }
        }
    }

    fn window(&self) -> u64 {
        (self.cwnd * self.mss) as u64
    }

    fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    fn pacing_rate(&self) -> Option<Rate> {
        // Pace at 2·cwnd/RTT_standing; before the first RTT sample, unpaced.
        let Some(standing) = self.standing.get().filter(|d| d.0 > 0) else {
            return Some(Rate::from_bps(1_000_000_000_000_000));
        };
        let bps = 2.0 * self.cwnd * self.mss * 8.0 / standing.as_secs_f64();
        Some(Rate::from_bps((bps as u64).max(1)))
    }
}

tcp_scheme_params! {
    /// `copa` parameters.
    pub struct CopaParams {
        /// δ in default mode: each flow keeps about 1/δ packets queued ([AB18]: 0.5).
        pub delta: f64 = 0.5,
        /// Switch to competitive mode when the queue never empties ([AB18] §3). Off by default
        /// here: see the module's departures.
        pub competitive: bool = false,
        /// The window of RTT_min ([AB18]: 10 s).
        pub rtt_min_window: Duration = Duration::from_secs(10),
    }
    sack = true;
}

impl SchemeParams for CopaParams {
    fn validate(&self) -> Result<(), ParamError> {
        in_range("delta", self.delta, (Excluded(0.0), Included(1.0)))?;
        if self.rtt_min_window == Duration::ZERO {
            return Err(ParamError::at(
                "rtt_min_window",
                "copa `rtt_min_window` must be above 0",
            ));
        }
        self.tcp(false).validate("copa")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Copa::new(ctx.packet_size as u64, self);
        self.tcp(false).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(cumulative: u64, highest: u64, rtt_ms: f64) -> AckSample {
        AckSample {
            highest_sent: highest,
            cumulative_ack: cumulative,
            ..AckSample::of(MSS, Some(Duration::from_secs_f64(rtt_ms / 1e3)))
        }
    }

    fn copa() -> Copa {
        Copa::new(
            MSS,
            &CopaParams {
                initial_window: 10,
                ..CopaParams::default()
            },
        )
    }

    #[test]
    fn windowed_minimum_and_maximum_forget_old_samples() {
        let mut w = Windowed::default();
        let ms = |x: u64| Time(x * 1_000_000);
        let d = Duration::from_millis;
        w.add(ms(0), d(5), d(10), false);
        w.add(ms(1), d(7), d(10), false);
        assert_eq!(w.get(), Some(d(5)));
        w.add(ms(11), d(9), d(10), false);
        assert_eq!(
            w.get(),
            Some(d(7)),
            "the 5 ms sample is 11 ms old, the 7 ms one 10"
        );
        let mut m = Windowed::default();
        m.add(ms(0), d(5), d(10), true);
        m.add(ms(1), d(3), d(10), true);
        assert_eq!(m.get(), Some(d(5)));
    }

    #[test]
    fn slow_start_ends_when_the_rate_passes_the_target_and_then_the_window_steps_by_v_over_delta_cwnd(
    ) {
        let mut c = copa();
        // No queueing: d_q = 0, an infinite target: slow start adds a packet per ACK.
        c.on_ack(Time::ZERO, &ack(1, 10, 20.0));
        assert!(c.slow_start);
        assert_eq!(c.cwnd, 11.0);
        // 100 ms later (the 20 ms sample out of the srtt/2 window) a 30 ms RTT: d_q = 10 ms,
        // λ_t = 1/(0.5·0.01) = 200 pkt/s, λ = 11/0.030 = 367 pkt/s > λ_t: slow start ends.
        let t = Time::from_secs_f64(0.1);
        c.on_ack(t, &ack(2, 10, 30.0));
        assert!(!c.slow_start);
        assert_eq!(c.queueing_delay(), Some(Duration::from_millis(10)));
        // Still above the target: down by v/(δ·cwnd) = 1/(0.5·11).
        let before = c.cwnd;
        c.on_ack(t, &ack(3, 10, 30.0));
        assert!(
            (c.cwnd - (before - 1.0 / (0.5 * before))).abs() < 1e-12,
            "{}",
            c.cwnd
        );
    }

    #[test]
    fn velocity_doubles_after_three_round_trips_one_way_and_resets_on_a_turn() {
        let mut c = copa();
        c.slow_start = false;
        c.srtt = Some(Duration::from_millis(20));
        c.cwnd = 100.0; // v/δ ≤ cwnd/2 = 50 allows v up to 25
        for round in 0..6u64 {
            c.cwnd += 1.0; // the window moved up this round
            c.end_round(Time(round), Duration::from_millis(20));
        }
        // Round 1 turns (v = 1); rounds 2 and 3 keep the direction; from the third round that
        // keeps it (round 4) v doubles each round: 2, 4, 8.
        assert_eq!(c.velocity, 8.0);
        c.cwnd -= 1.0;
        c.end_round(Time(7), Duration::from_millis(20));
        assert_eq!(c.velocity, 1.0);
    }

    #[test]
    fn competitive_mode_raises_one_over_delta_per_round_and_a_loss_halves_it() {
        let mut c = Copa::new(
            MSS,
            &CopaParams {
                competitive: true,
                ..CopaParams::default()
            },
        );
        c.slow_start = false;
        // The queue has not been nearly empty for five round trips.
        c.last_empty = Time::ZERO;
        let srtt = Duration::from_millis(10);
        c.end_round(Time::from_secs_f64(1.0), srtt);
        assert!((1.0 / c.delta() - 3.0).abs() < 1e-12);
        c.end_round(Time::from_secs_f64(1.1), srtt);
        assert!((1.0 / c.delta() - 4.0).abs() < 1e-12);
        c.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Loss, 0));
        assert!((1.0 / c.delta() - 2.0).abs() < 1e-12);
        // The queue empties: back to the default δ.
        c.last_empty = Time::from_secs_f64(1.2);
        c.end_round(Time::from_secs_f64(1.21), srtt);
        assert_eq!(c.delta(), 0.5);
    }
}
