//! A link's propagation delay over time, from a trace: `delay = { trace = "file" }`.
//!
//! The file has one line per change, `T D`: from T milliseconds into the run, the link's delay is
//! D milliseconds (both may have decimals). The first line is at 0; times do not decrease; after
//! the last line its delay holds to the end of the run. Blank lines and lines starting with `#`
//! are skipped. The driver applies each change as a scenario's `set_delay` event would: a packet
//! already on the link keeps its arrival time, and a decrease never lets a packet overtake the
//! one ahead (the link stays FIFO).
//!
//! What the theory and the model tier may use of such a link is its mean delay,
//! [`DelayTrace::mean_until`].

use crate::units::{Duration, Time};

use super::TraceError;

/// The delay changes of one link: (from when, the delay), by time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayTrace {
    points: Vec<(Time, Duration)>,
}

impl DelayTrace {
    /// Reads a delay trace (see the module documentation).
    pub fn parse(text: &str) -> Result<DelayTrace, TraceError> {
        let ms = |s: &str, line: usize, what: &str| -> Result<u64, TraceError> {
            match s.parse::<f64>() {
                Ok(x) if (0.0..315_360_000_000.0).contains(&x) => Ok((x * 1e6).round() as u64),
                _ => Err(TraceError {
                    line: Some(line),
                    message: format!("{s:?} is not a {what} in milliseconds (a number ≥ 0)"),
                }),
            }
        };
        let mut points: Vec<(Time, Duration)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let s = line.trim();
            if s.is_empty() || s.starts_with('#') {
                continue;
            }
            let mut words = s.split_whitespace();
            let (Some(t), Some(d), None) = (words.next(), words.next(), words.next()) else {
                return Err(TraceError {
                    line: Some(n),
                    message: format!("{s:?}: write TIME DELAY, both in milliseconds"),
                });
            };
            let (t, d) = (Time(ms(t, n, "time")?), Duration(ms(d, n, "delay")?));
            if points.is_empty() && t != Time::ZERO {
                return Err(TraceError {
                    line: Some(n),
                    message: "the first change must be at time 0 (the delay from the start)".into(),
                });
            }
            if points.last().is_some_and(|&(last, _)| t < last) {
                return Err(TraceError {
                    line: Some(n),
                    message: "the times must not decrease".into(),
                });
            }
            points.push((t, d));
        }
        if points.is_empty() {
            return Err(TraceError {
                line: None,
                message: "the delay trace has no lines".into(),
            });
        }
        Ok(DelayTrace { points })
    }

    /// The changes, (from when, the delay), by time; the first at 0.
    pub fn points(&self) -> &[(Time, Duration)] {
        &self.points
    }

    /// The delay at `t`.
    pub fn at(&self, t: Time) -> Duration {
        let i = self.points.partition_point(|&(at, _)| at <= t);
        self.points[i.max(1) - 1].1
    }

    /// The time-weighted mean delay over [0, `end`].
    pub fn mean_until(&self, end: Time) -> Duration {
        if end == Time::ZERO {
            return self.points[0].1;
        }
        let mut sum = 0u128;
        for (k, &(t, d)) in self.points.iter().enumerate() {
            if t >= end {
                break;
            }
            let next = self.points.get(k + 1).map_or(end, |&(n, _)| n.min(end));
            sum += u128::from(d.0) * u128::from(next.0 - t.0);
        }
        Duration((sum / u128::from(end.0)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delay_trace_reads_changes_and_holds_the_last() {
        let t = DelayTrace::parse("# t d\n0 20\n1000 50.5\n\n3000 10\n").unwrap();
        assert_eq!(t.at(Time::ZERO), Duration::from_millis(20));
        assert_eq!(t.at(Time(999_999_999)), Duration::from_millis(20));
        assert_eq!(t.at(Time(1_000_000_000)), Duration::from_micros(50_500));
        assert_eq!(t.at(Time(9_000_000_000)), Duration::from_millis(10));
        // Over 4 s: 1 s at 20, 2 s at 50.5, 1 s at 10 → 32.75 ms.
        assert_eq!(
            t.mean_until(Time(4_000_000_000)),
            Duration::from_micros(32_750)
        );
    }

    #[test]
    fn bad_delay_traces_name_their_line() {
        assert_eq!(DelayTrace::parse("5 10\n").unwrap_err().line, Some(1));
        assert_eq!(DelayTrace::parse("0 10\n5\n").unwrap_err().line, Some(2));
        assert_eq!(DelayTrace::parse("0 10\n5 -1\n").unwrap_err().line, Some(2));
        assert_eq!(
            DelayTrace::parse("0 10\n5 1\n4 1\n").unwrap_err().line,
            Some(3)
        );
        assert!(DelayTrace::parse("# nothing\n").is_err());
    }
}
