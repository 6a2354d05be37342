//! A controller driven from outside: a learning agent (the `acclab.gym` environments) sets its
//! congestion window or pacing rate between monitor intervals, and it records what each
//! interval measured — what the published agents observe (Aurora: Jay et al., ICML 2019 §3;
//! Orca: Abbasloo et al., SIGCOMM 2020 §4).
//!
//! It is a pure state machine like every controller: the transport calls it on each send, ACK
//! and congestion event; the environment reads and resets its [`Interval`] and sets its
//! [`Action`] through the [`AgentHandle`] it shares with it (a mutex the two never hold at once
//! for long: the simulation and the environment take turns).
//!
//! - `Action::Window(bytes)`: the window is the agent's (at least one segment); no pacing.
//! - `Action::Rate(bit/s)`: paced at the agent's rate; the window is a cap of 2 × rate × the
//!   smoothed RTT (at least four segments), so the rate, not the window, sets the sending.
//!
//! Nothing else changes the agent's choice: losses and timeouts are counted, not reacted to
//! (the transport still retransmits, with its own timer), as in Aurora's simulator.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{AckSample, Congestion, CongestionController, CongestionEvent, SentSample};
use crate::units::{Duration, Rate, Time};

/// What the agent sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// A congestion window, bytes.
    Window(u64),
    /// A pacing rate, bit/s.
    Rate(u64),
}

/// What one monitor interval measured, accumulated since the last [`AgentHandle::take`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interval {
    /// Bytes sent (new data and retransmissions) and bytes retransmitted (declared lost).
    pub sent_bytes: u64,
    pub lost_bytes: u64,
    /// Bytes newly acknowledged, and those whose ACK echoed an ECN mark.
    pub acked_bytes: u64,
    pub ecn_bytes: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// RTT samples: count, sum, minimum and maximum (s), and the least-squares sums against
    /// the time of the sample (s) for the latency gradient.
    pub rtt_count: u64,
    pub rtt_sum: f64,
    pub rtt_min: f64,
    pub rtt_max: f64,
    sum_t: f64,
    sum_tt: f64,
    sum_tr: f64,
    /// The newest delivery-rate sample, bit/s.
    pub delivery_rate: u64,
}

impl Interval {
    /// The mean RTT, s (None without samples).
    pub fn mean_rtt(&self) -> Option<f64> {
        (self.rtt_count > 0).then(|| self.rtt_sum / self.rtt_count as f64)
    }

    /// The slope of the RTT against time over the interval (s/s, Aurora's latency gradient):
    /// a least-squares line through the samples; 0 for fewer than two.
    pub fn latency_gradient(&self) -> f64 {
        let n = self.rtt_count as f64;
        if self.rtt_count < 2 {
            return 0.0;
        }
        let sxx = self.sum_tt - self.sum_t * self.sum_t / n;
        if sxx <= 1e-18 {
            return 0.0;
        }
        (self.sum_tr - self.sum_t * self.rtt_sum / n) / sxx
    }

    fn add_rtt(&mut self, t: f64, r: f64) {
        if self.rtt_count == 0 {
            self.rtt_min = r;
            self.rtt_max = r;
        } else {
            self.rtt_min = self.rtt_min.min(r);
            self.rtt_max = self.rtt_max.max(r);
        }
        self.rtt_count += 1;
        self.rtt_sum += r;
        self.sum_t += t;
        self.sum_tt += t * t;
        self.sum_tr += t * r;
    }
}

/// The agent's side and the controller's, shared.
#[derive(Debug)]
struct Shared {
    action: Action,
    interval: Interval,
    srtt: Option<Duration>,
    min_rtt: Option<Duration>,
    /// When the interval's time origin was set (the least-squares sums are relative to it).
    origin: Time,
    /// The flow's segment size, bytes (set when its controller is made).
    mss: u64,
}

/// The environment's handle on one agent-driven flow.
#[derive(Clone, Debug)]
pub struct AgentHandle(Arc<Mutex<Shared>>);

impl AgentHandle {
    /// A handle whose flow starts with `action`.
    pub fn new(action: Action) -> AgentHandle {
        AgentHandle(Arc::new(Mutex::new(Shared {
            action,
            interval: Interval::default(),
            srtt: None,
            min_rtt: None,
            origin: Time::ZERO,
            mss: 1500,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic elsewhere cannot leave the counters half-written in a way that matters here.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets what the flow does from now on.
    pub fn act(&self, action: Action) {
        self.lock().action = action;
    }

    /// The current action.
    pub fn action(&self) -> Action {
        self.lock().action
    }

    /// The interval measured since the last call, and a fresh one starting at `now`.
    pub fn take(&self, now: Time) -> Interval {
        let mut s = self.lock();
        s.origin = now;
        std::mem::take(&mut s.interval)
    }

    /// The smoothed RTT and the minimum RTT seen so far.
    pub fn rtts(&self) -> (Option<Duration>, Option<Duration>) {
        let s = self.lock();
        (s.srtt, s.min_rtt)
    }

    /// The congestion window the flow is held to, bytes: the agent's window (at least one
    /// segment), or with a rate 2 × rate × the smoothed RTT (100 ms before a sample; at least
    /// four segments).
    pub fn window(&self) -> u64 {
        let sh = self.lock();
        let mss = sh.mss;
        match sh.action {
            Action::Window(w) => w.max(mss),
            Action::Rate(bps) => {
                let srtt = sh.srtt.unwrap_or(Duration::from_millis(100)).as_secs_f64();
                ((2.0 * bps as f64 / 8.0 * srtt) as u64).max(4 * mss)
            }
        }
    }

    /// The controller the flow's sender calls.
    pub fn controller(&self, mss: u64) -> Agent {
        self.lock().mss = mss;
        Agent {
            shared: self.clone(),
        }
    }
}

/// The controller: reads the action, records the interval.
#[derive(Debug)]
pub struct Agent {
    shared: AgentHandle,
}

impl CongestionController for Agent {
    fn on_sent(&mut self, _now: Time, s: &SentSample) {
        let mut sh = self.shared.lock();
        sh.interval.sent_bytes += s.bytes;
        if s.retransmission {
            sh.interval.lost_bytes += s.bytes;
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        let mut sh = self.shared.lock();
        sh.interval.acked_bytes += ack.acked_bytes;
        if ack.ecn_echo {
            sh.interval.ecn_bytes += ack.acked_bytes;
        }
        if let Some(r) = ack.rate {
            sh.interval.delivery_rate = r.delivery_rate.bps();
        }
        if let Some(rtt) = ack.rtt {
            // RFC 6298 §2.3's smoothing (α = 1/8).
            sh.srtt = Some(sh.srtt.map_or(rtt, |s| Duration((s.0 * 7 + rtt.0) / 8)));
            sh.min_rtt = Some(sh.min_rtt.map_or(rtt, |m| m.min(rtt)));
            let t = now.since(sh.origin).as_secs_f64();
            sh.interval.add_rtt(t, rtt.as_secs_f64());
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        if ev.kind == Congestion::Timeout {
            self.shared.lock().interval.timeouts += 1;
        }
    }

    fn window(&self) -> u64 {
        self.shared.window()
    }

    fn pacing_rate(&self) -> Option<Rate> {
        match self.shared.lock().action {
            Action::Window(_) => None,
            Action::Rate(bps) => Some(Rate::from_bps(bps.max(1))),
        }
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_counts_what_the_transport_reports_and_starts_afresh() {
        let h = AgentHandle::new(Action::Window(10_000));
        let mut a = h.controller(1000);
        let sent = |retransmission| SentSample {
            seq: 1,
            bytes: 1000,
            in_flight: 0,
            retransmission,
        };
        a.on_sent(Time::ZERO, &sent(false));
        a.on_sent(Time::ZERO, &sent(true));
        let ms = |m: u64| Time::ZERO + Duration::from_millis(m);
        // RTT rising 1 ms per 10 ms: gradient 0.1.
        for (t, r) in [(10, 50), (20, 51), (30, 52)] {
            let mut ack = AckSample::of(1000, Some(Duration::from_millis(r)));
            ack.ecn_echo = t == 20;
            a.on_ack(ms(t), &ack);
        }
        a.on_congestion_event(ms(30), &CongestionEvent::new(Congestion::Timeout, 0));
        let i = h.take(ms(30));
        assert_eq!(
            (i.sent_bytes, i.lost_bytes, i.acked_bytes, i.ecn_bytes),
            (2000, 1000, 3000, 1000)
        );
        assert_eq!((i.rtt_count, i.timeouts), (3, 1));
        assert!((i.mean_rtt().unwrap() - 0.051).abs() < 1e-12);
        assert!(
            (i.latency_gradient() - 0.1).abs() < 1e-9,
            "{}",
            i.latency_gradient()
        );
        assert_eq!((i.rtt_min, i.rtt_max), (0.050, 0.052));
        assert_eq!(h.take(ms(40)), Interval::default());
        assert_eq!(h.rtts().1, Some(Duration::from_millis(50)));
    }

    #[test]
    fn a_window_action_sets_the_window_and_a_rate_action_paces() {
        let h = AgentHandle::new(Action::Window(500));
        let a = h.controller(1000);
        assert_eq!(
            (a.window(), a.pacing_rate()),
            (1000, None),
            "at least a segment"
        );
        h.act(Action::Rate(8_000_000));
        assert_eq!(a.pacing_rate(), Some(Rate::from_bps(8_000_000)));
        // 2 × 1 MB/s × 100 ms (no RTT yet).
        assert_eq!(a.window(), 200_000);
    }
}
