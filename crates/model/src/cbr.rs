//! A constant-bit-rate source in the model: its rate at each moment, following its schedule as
//! the packet source does (steps relative to the flow's start; a step without a rate pauses;
//! `repeat` restarts the schedule every period, the last rate holding until the first step).

use acclab_core::config::CbrParams;

/// A CBR source's rates, packets (of the scenario's data size) per second.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrSource {
    base: f64,
    /// (time since start s, rate packets/s, 0 when paused).
    steps: Vec<(f64, f64)>,
    repeat: Option<f64>,
}

impl CbrSource {
    pub fn new(p: &CbrParams, packet: f64) -> CbrSource {
        let pkts = |r: acclab_core::Rate| r.as_f64() / 8.0 / packet;
        CbrSource {
            base: pkts(p.rate),
            steps: p
                .schedule
                .iter()
                .map(|s| (s.at.as_secs_f64(), s.rate.map_or(0.0, pkts)))
                .collect(),
            repeat: p.repeat.map(|d| d.as_secs_f64()),
        }
    }

    /// The rate `elapsed` seconds after the flow's start.
    pub fn rate(&self, elapsed: f64) -> f64 {
        let (cycle, within) = match self.repeat {
            Some(period) if period > 0.0 => {
                let c = (elapsed / period).floor();
                (c, elapsed - c * period)
            }
            _ => (0.0, elapsed),
        };
        match self.steps.iter().rev().find(|(at, _)| *at <= within) {
            Some(&(_, r)) => r,
            None if cycle > 0.0 => self.steps.last().map_or(self.base, |s| s.1),
            None => self.base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_wave() {
        let c = CbrSource {
            base: 10.0,
            steps: vec![(1.0, 20.0), (2.0, 0.0)],
            repeat: Some(3.0),
        };
        let at = |t| c.rate(t);
        assert_eq!((at(0.5), at(1.5), at(2.5)), (10.0, 20.0, 0.0));
        assert_eq!((at(3.5), at(4.5), at(5.5)), (0.0, 20.0, 0.0));
    }
}
