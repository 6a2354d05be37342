//! The live clock: the wall clock mapped onto the core's scenario time.
//!
//! Core state machines take `Time` (integer ns since the start). Live mode gives them
//! `Time = (monotonic now − start) × time_scale`: with a time scale of 10 a scenario's 1 Mb/s
//! links carry 10 Mb/s of real datagrams, its 20 ms delays last 2 ms, and 80 scenario seconds
//! pass in 8 — but every number the endpoints and the router compute, and every number in the
//! results, is in scenario units, directly comparable with a simulation of the same file.

use std::time::Instant;

use acclab_core::Time;

/// Shared by the router and every endpoint of a run (it is `Copy`).
#[derive(Clone, Copy, Debug)]
pub struct LiveClock {
    start: Instant,
    scale: f64,
}

impl LiveClock {
    /// A clock whose scenario time 0 is now. `scale` must be finite and positive.
    pub fn start(scale: f64) -> LiveClock {
        assert!(
            scale.is_finite() && scale > 0.0,
            "time scale must be positive"
        );
        LiveClock {
            start: Instant::now(),
            scale,
        }
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Scenario time now.
    pub fn now(&self) -> Time {
        self.time_of(Instant::now())
    }

    /// Scenario time at the wall-clock instant `i`.
    pub fn time_of(&self, i: Instant) -> Time {
        let wall = i.saturating_duration_since(self.start).as_nanos() as f64;
        Time((wall * self.scale) as u64)
    }

    /// The wall-clock instant at which scenario time reaches `t`.
    pub fn instant_of(&self, t: Time) -> Instant {
        let wall = (t.0 as f64 / self.scale).min(1e18);
        self.start + std::time::Duration::from_nanos(wall.ceil() as u64)
    }

    /// Wall-clock seconds since the start.
    pub fn wall_elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_time_runs_scale_times_faster() {
        let c = LiveClock::start(10.0);
        let later = c.instant_of(Time(50_000_000)); // 50 ms of scenario time
        let wall = later.duration_since(c.start);
        assert!((wall.as_nanos() as i64 - 5_000_000).abs() <= 1);
        let back = c.time_of(later);
        assert!(back.0.abs_diff(50_000_000) <= 10);
    }
}
