//! AVQ's fluid law (Kunniyur & Srikant) and AVD's virtual delay (000 §IV-D), as the packet
//! queue avq.rs in crates/core runs them: a virtual queue served at the virtual capacity C̃,
//! dṼQ/dt = y − C̃ (at least 0; at most the buffer B, except in AVD mode, where it is unbounded),
//! and dC̃/dt = α·(γ·C − y), C̃ within [0, C]. Arrivals that find the virtual queue full are
//! marked or dropped: a fraction (y − C̃)/y of them. In AVD (`delay`) mode nothing is marked;
//! the virtual delay VQ/C̃ (at most 1 s) is stamped on Monaco's in-band packets — less the
//! physical queueing delay at a priority-capable link with the default `excess` stamp.

use acclab_core::config::{AvdStamp, AvqMode, AvqParams};

/// AVQ's settings and state, in packets and packets per second.
#[derive(Clone, Debug, PartialEq)]
pub struct Avq {
    pub mode: AvqMode,
    pub gamma: f64,
    pub alpha: f64,
    /// Virtual buffer B (the physical buffer), packets.
    pub buffer: f64,
    pub excess: bool,
    pub priority: bool,
    pub virtual_queue: f64,
    pub virtual_capacity: f64,
}

/// The largest virtual delay, as the packet queue reports it when C̃ has collapsed.
const MAX_VIRTUAL_DELAY: f64 = 1.0;

impl Avq {
    pub fn new(p: &AvqParams, buffer: f64, capacity: f64) -> Avq {
        Avq {
            mode: p.mode,
            gamma: p.target_utilization,
            alpha: p.alpha,
            buffer,
            excess: p.avd_stamp == AvdStamp::Excess,
            priority: p.priority,
            virtual_queue: 0.0,
            virtual_capacity: p.target_utilization * capacity,
        }
    }

    /// The virtual queueing delay VQ/C̃, s.
    pub fn virtual_delay(&self) -> f64 {
        if self.virtual_capacity > 0.0 {
            (self.virtual_queue / self.virtual_capacity).min(MAX_VIRTUAL_DELAY)
        } else if self.virtual_queue > 0.0 {
            MAX_VIRTUAL_DELAY
        } else {
            0.0
        }
    }

    /// What an in-band packet gets stamped with at a physical queueing delay of `physical` s.
    pub fn stamp(&self, physical: f64) -> f64 {
        if self.mode != AvqMode::Delay {
            return 0.0;
        }
        let counted = if self.priority && self.excess {
            physical
        } else {
            0.0
        };
        (self.virtual_delay() - counted).max(0.0)
    }

    /// Advances over `h` seconds with arrivals `y` on a link of capacity `c` (packets per
    /// second); returns the fraction of arrivals marked or dropped.
    pub fn step(&mut self, y: f64, c: f64, h: f64) -> f64 {
        let mut vq = (self.virtual_queue + h * (y - self.virtual_capacity)).max(0.0);
        let mut overflow = 0.0;
        if self.mode != AvqMode::Delay && vq > self.buffer {
            overflow = (vq - self.buffer) / (h * y).max(f64::MIN_POSITIVE);
            vq = self.buffer;
        }
        self.virtual_queue = vq;
        self.virtual_capacity =
            (self.virtual_capacity + h * self.alpha * (self.gamma * c - y)).clamp(0.0, c);
        overflow.min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avq(mode: AvqMode) -> Avq {
        Avq {
            mode,
            gamma: 0.98,
            alpha: 0.15,
            buffer: 50.0,
            excess: true,
            priority: true,
            virtual_queue: 0.0,
            virtual_capacity: 980.0,
        }
    }

    #[test]
    fn virtual_capacity_settles_where_arrivals_are_gamma_c() {
        let mut a = avq(AvqMode::Mark);
        // Arrivals at the target γ·C: C̃ does not move.
        a.step(980.0, 1000.0, 0.01);
        assert!((a.virtual_capacity - 980.0).abs() < 1e-9);
        // Arrivals above it: C̃ falls by α·(y − γC)·h, the virtual queue fills, then overflows.
        a.step(1080.0, 1000.0, 0.01);
        assert!((a.virtual_capacity - (980.0 - 0.15 * 100.0 * 0.01)).abs() < 1e-9);
        let mut f = 0.0;
        for _ in 0..100 {
            f = a.step(1080.0, 1000.0, 0.01);
        }
        assert_eq!(a.virtual_queue, 50.0);
        assert!(f > 0.0 && f < 1.0, "{f}");
    }

    #[test]
    fn avd_stamps_the_virtual_delay_beyond_the_physical_one() {
        let mut a = avq(AvqMode::Delay);
        for _ in 0..100 {
            assert_eq!(a.step(1080.0, 1000.0, 0.01), 0.0);
        }
        assert!(a.virtual_queue > 50.0, "AVD's virtual queue is unbounded");
        let vd = a.virtual_delay();
        assert!((a.stamp(0.01) - (vd - 0.01)).abs() < 1e-12);
        assert_eq!(avq(AvqMode::Mark).stamp(0.0), 0.0);
    }
}
