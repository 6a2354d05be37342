//! Trace-driven link capacity, in Mahimahi's format [MM15]: a link that can deliver 1500 bytes
//! at each instant a trace lists, and nothing in between — a cellular link as measured.
//!
//! The trace file has one line per delivery opportunity: a whole number of milliseconds since
//! the start, non-decreasing (a millisecond listed n times is n opportunities then). The trace
//! repeats: its last timestamp is its period, and opportunity i of repetition w is at
//! w·period + tᵢ. Each opportunity carries [`OPPORTUNITY_BYTES`]; a packet leaves when its last
//! byte has been carried, so a large packet may take bytes of several opportunities and one
//! opportunity may carry many small packets (ACKs). Bytes of an opportunity that find the queue
//! empty are lost, not saved for later.
//!
//! Departures from Mahimahi's `LinkQueue`, and choices it leaves open:
//! - A packet may use only opportunities strictly after it joined the queue. Mahimahi reaches
//!   the same rule by serving every opportunity due at a packet's arrival before it enqueues the
//!   packet; here it is stated, so the event order at equal times cannot change it.
//! - Time is integer nanoseconds; the trace's milliseconds are exact in it.
//! - Blank lines are skipped (Mahimahi rejects them); anything else that is not a whole number
//!   is an error naming its line.
//!
//! What the theory and the model tier may use of such a link is its mean capacity,
//! [`CapacityTrace::mean_rate`]: the opportunities of one period × 1500 B over the period.

use std::fmt;

use crate::units::{Duration, Rate, Time};

/// The bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// A capacity trace: the delivery opportunities of one period.
#[derive(Clone, PartialEq, Eq)]
pub struct CapacityTrace {
    /// The opportunities' offsets in the period, non-decreasing; the last is the period.
    times: Vec<Duration>,
}

impl fmt::Debug for CapacityTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CapacityTrace({} opportunities in {} ms)",
            self.times.len(),
            self.period().as_nanos() / 1_000_000
        )
    }
}

/// A line of a trace file that is not an opportunity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The 1-based line, or `None` when the file as a whole is wrong.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl CapacityTrace {
    /// Reads a trace in Mahimahi's format (see the module documentation).
    pub fn parse(text: &str) -> Result<CapacityTrace, TraceError> {
        let mut times = Vec::new();
        let mut last = 0u64;
        for (i, line) in text.lines().enumerate() {
            let line_no = Some(i + 1);
            let s = line.trim();
            if s.is_empty() {
                continue;
            }
            let ms: u64 = s.parse().map_err(|_| TraceError {
                line: line_no,
                message: format!(
                    "{s:?} is not a delivery opportunity (a whole number of milliseconds)"
                ),
            })?;
            if ms < last {
                return Err(TraceError {
                    line: line_no,
                    message: format!(
                        "{ms} ms comes after {last} ms: the timestamps must not decrease"
                    ),
                });
            }
            // Ten years in milliseconds: beyond it nanoseconds would overflow a run.
            if ms > 315_360_000_000 {
                return Err(TraceError {
                    line: line_no,
                    message: format!("{ms} ms is longer than ten years"),
                });
            }
            last = ms;
            times.push(Duration::from_millis(ms));
        }
        CapacityTrace::new(times)
    }

    /// A trace of the opportunities at `times` (non-decreasing offsets; the last is the period).
    pub fn new(times: Vec<Duration>) -> Result<CapacityTrace, TraceError> {
        let Some(&period) = times.last() else {
            return Err(TraceError {
                line: None,
                message: "the trace has no delivery opportunities".into(),
            });
        };
        if period == Duration::ZERO {
            return Err(TraceError {
                line: None,
                message: "the trace lasts no time (its last timestamp is 0 ms): it has no period \
                          to repeat"
                    .into(),
            });
        }
        if times.windows(2).any(|w| w[1] < w[0]) {
            return Err(TraceError {
                line: None,
                message: "the timestamps must not decrease".into(),
            });
        }
        Ok(CapacityTrace { times })
    }

    /// The trace's period: its last timestamp.
    pub fn period(&self) -> Duration {
        *self.times.last().expect("a trace has an opportunity")
    }

    /// Delivery opportunities in one period.
    pub fn opportunities(&self) -> usize {
        self.times.len()
    }

    /// The mean capacity: one period's opportunities × 1500 B over the period (rounded to the
    /// nearest bit per second, at least 1).
    pub fn mean_rate(&self) -> Rate {
        let bits = self.times.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0;
        Rate(((bits / self.period().as_secs_f64()).round() as u64).max(1))
    }

    /// The bytes the link can carry in `[0, t]`: every opportunity at or before `t`.
    pub fn bytes_by(&self, t: Time) -> u64 {
        self.first_after(t) * u64::from(OPPORTUNITY_BYTES)
    }

    /// When opportunity `k` (counted from the start, over repetitions) is.
    fn at(&self, k: u64) -> Time {
        let n = self.times.len() as u64;
        let period = self.period().as_nanos();
        Time((k / n) * period + self.times[(k % n) as usize].as_nanos())
    }

    /// The first opportunity strictly after `t`.
    fn first_after(&self, t: Time) -> u64 {
        let period = self.period().as_nanos();
        let (w, within) = (t.0 / period, Duration(t.0 % period));
        // `within` is below the period, the last offset: the point lies inside the period.
        let i = self.times.partition_point(|&x| x <= within);
        w * self.times.len() as u64 + i as u64
    }
}

/// One state of a [Markov-modulated trace](CapacityTrace::markov): its capacity and how long
/// the link stays in it on average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarkovState {
    /// Mean capacity in this state (zero: an outage).
    pub rate: Rate,
    /// Mean dwell time (exponentially distributed).
    pub dwell: Duration,
}

impl CapacityTrace {
    /// A synthetic trace of `duration` (a whole number of milliseconds, at least 1 ms): a
    /// Markov-modulated Poisson process. The link starts in the first state and stays in a
    /// state for an exponential time of its mean `dwell`, then moves to one of the others,
    /// picked uniformly; in a state of rate R, opportunities come as a Poisson process of
    /// R / 12,000 per second, each at the millisecond it falls in (Mahimahi's resolution).
    /// The last opportunity is put at `duration`, so that the trace's period is `duration`.
    pub fn markov(
        states: &[MarkovState],
        duration: Duration,
        rng: &mut crate::rng::Rng,
    ) -> Result<CapacityTrace, TraceError> {
        use rand::RngExt;
        let whole = |message: String| TraceError {
            line: None,
            message,
        };
        if states.is_empty() || states.iter().all(|s| s.rate.bps() == 0) {
            return Err(whole(
                "give at least one state with a capacity above zero".into(),
            ));
        }
        if let Some(s) = states.iter().find(|s| s.dwell == Duration::ZERO) {
            return Err(whole(format!("state {}: a dwell time of 0", s.rate)));
        }
        let ms = duration.as_nanos() / 1_000_000;
        if ms == 0 || !duration.as_nanos().is_multiple_of(1_000_000) {
            return Err(whole(format!(
                "the duration {duration} is not a whole number of milliseconds (at least 1 ms)"
            )));
        }
        let end = duration.as_secs_f64();
        let exp = |rng: &mut crate::rng::Rng, mean: f64| -> f64 {
            -mean * (1.0 - rng.random::<f64>()).ln()
        };
        let mut times = Vec::new();
        let (mut t, mut state) = (0.0f64, 0usize);
        while t < end {
            let s = states[state];
            let leave = (t + exp(rng, s.dwell.as_secs_f64())).min(end);
            let per_s = s.rate.as_f64() / (f64::from(OPPORTUNITY_BYTES) * 8.0);
            if per_s > 0.0 {
                let mut u = t + exp(rng, 1.0 / per_s);
                while u < leave {
                    times.push(Duration::from_millis((u * 1e3) as u64));
                    u += exp(rng, 1.0 / per_s);
                }
            }
            t = leave;
            if states.len() > 1 {
                let k = rng.random_range(0..states.len() - 1);
                state = if k >= state { k + 1 } else { k };
            }
        }
        times.push(Duration::from_millis(ms));
        CapacityTrace::new(times)
    }

    /// The trace in Mahimahi's format: one line per opportunity, in milliseconds.
    pub fn to_mahimahi(&self) -> String {
        let mut out = String::with_capacity(self.times.len() * 6);
        for t in &self.times {
            out.push_str(&(t.as_nanos() / 1_000_000).to_string());
            out.push('\n');
        }
        out
    }

    /// The capacity in each whole `bin` of the first period, bits per second: how the trace
    /// varies.
    pub fn binned_rates(&self, bin: Duration) -> Vec<f64> {
        let bins = (self.period().as_nanos() / bin.as_nanos().max(1)) as usize;
        let mut bytes = vec![0u64; bins];
        for t in &self.times {
            // An opportunity at t is in the bin (t − bin, t]: the bytes by the bin's end.
            let b = (t.as_nanos().saturating_sub(1) / bin.as_nanos().max(1)) as usize;
            if let Some(x) = bytes.get_mut(b) {
                *x += u64::from(OPPORTUNITY_BYTES);
            }
        }
        bytes
            .iter()
            .map(|&b| b as f64 * 8.0 / bin.as_secs_f64())
            .collect()
    }
}

/// A link's transmitter on a [`CapacityTrace`]: which opportunities are used, and the bytes
/// left of the last one used.
#[derive(Clone, Debug)]
pub struct TraceTransmitter {
    /// The first opportunity not yet used (or lost).
    next: u64,
    /// When the last opportunity used was, and the bytes of it (and of any other opportunity
    /// at that instant) the packets served then left.
    last: Time,
    left: u32,
}

impl Default for TraceTransmitter {
    fn default() -> TraceTransmitter {
        TraceTransmitter {
            next: 0,
            last: Time(u64::MAX),
            left: 0,
        }
    }
}

impl TraceTransmitter {
    /// A packet of `size` bytes that joined the queue at `queued_at` starts its transmission at
    /// `now` (the link's previous packet, if any, is done by `now`): returns when its last byte
    /// is carried. It may use the bytes left at `now` by the packet before it, if `now` is an
    /// opportunity it waited for; otherwise the opportunities after `now`, in order.
    pub fn serve(&mut self, trace: &CapacityTrace, now: Time, queued_at: Time, size: u32) -> Time {
        // [MM15]: an opportunity serves the packets queued before it; its unused bytes are lost.
        let carried = if self.last == now && queued_at < now {
            self.left
        } else {
            0
        };
        if size <= carried {
            self.left = carried - size;
            return now;
        }
        let mut need = size - carried;
        let mut k = if trace.at(self.next) > now {
            self.next
        } else {
            trace.first_after(now) // the opportunities up to now found the queue empty
        };
        let done = loop {
            let t = trace.at(k);
            k += 1;
            if need <= OPPORTUNITY_BYTES {
                let mut left = OPPORTUNITY_BYTES - need;
                // The other opportunities at the same instant are there for the packets behind.
                while trace.at(k) == t {
                    left = left.saturating_add(OPPORTUNITY_BYTES);
                    k += 1;
                }
                self.left = left;
                break t;
            }
            need -= OPPORTUNITY_BYTES;
        };
        self.next = k;
        self.last = done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn a_constant_trace_of_one_opportunity_per_millisecond_is_12_mbps() {
        let t = CapacityTrace::parse("1\n").unwrap();
        assert_eq!(t.mean_rate(), Rate(12_000_000));
        assert_eq!(t.period(), Duration::from_millis(1));
        let t = CapacityTrace::parse("0\n0\n2\n").unwrap();
        assert_eq!(t.mean_rate(), Rate(18_000_000)); // three opportunities in 2 ms
    }

    #[test]
    fn bad_traces_are_refused_with_their_line() {
        let e = CapacityTrace::parse("1\n2\nx\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = CapacityTrace::parse("5\n3\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("must not decrease"), "{e}");
        assert!(CapacityTrace::parse("\n\n").is_err());
        assert!(CapacityTrace::parse("0\n0\n").is_err());
        assert!(CapacityTrace::parse("-1\n").is_err());
        // Blank lines are skipped.
        assert_eq!(CapacityTrace::parse("1\n\n2\n").unwrap().opportunities(), 2);
    }

    #[test]
    fn full_packets_take_one_opportunity_each_strictly_after_they_arrive() {
        let t = CapacityTrace::parse("1\n").unwrap();
        let mut tx = TraceTransmitter::default();
        // Arriving at 0 (no opportunity at 0 in a trace starting at 1 ms): served at 1 ms.
        assert_eq!(tx.serve(&t, ms(0), ms(0), 1500), ms(1));
        // Queued behind it: the next opportunity.
        assert_eq!(tx.serve(&t, ms(1), ms(0), 1500), ms(2));
        // Arriving exactly at an opportunity does not use it (Mahimahi serves it first).
        assert_eq!(tx.serve(&t, ms(5), ms(5), 1500), ms(6));
    }

    #[test]
    fn small_packets_share_an_opportunity_and_large_ones_span_several() {
        let t = CapacityTrace::parse("1\n").unwrap();
        let mut tx = TraceTransmitter::default();
        assert_eq!(tx.serve(&t, ms(0), ms(0), 500), ms(1));
        // Waiting since before 1 ms: the 1000 bytes left at 1 ms carry it.
        assert_eq!(tx.serve(&t, ms(1), ms(0), 1000), ms(1));
        // Nothing left at 1 ms: the next opportunity.
        assert_eq!(tx.serve(&t, ms(1), ms(0), 1), ms(2));
        // 4000 bytes: the 1499 left at 2 ms, then 3 and 4 ms (2501 bytes → needs two more).
        assert_eq!(tx.serve(&t, ms(2), ms(1), 4000), ms(4));
        // A packet arriving later than the bytes left cannot use them.
        assert_eq!(tx.serve(&t, ms(7), ms(7), 10), ms(8));
    }

    #[test]
    fn unused_opportunities_are_lost_and_the_trace_wraps() {
        // Two opportunities at 3 ms, one at 10 ms; period 10 ms.
        let t = CapacityTrace::parse("3\n3\n10\n").unwrap();
        let mut tx = TraceTransmitter::default();
        assert_eq!(tx.serve(&t, ms(0), ms(0), 1500), ms(3));
        // The second 3 ms opportunity serves a packet queued before 3 ms.
        assert_eq!(tx.serve(&t, ms(3), ms(1), 1500), ms(3));
        assert_eq!(tx.serve(&t, ms(3), ms(2), 1500), ms(10));
        // The idle link lost the two at 13 ms; 3000 bytes take the one at 20 ms and one of the
        // two at 23 ms (the repetition's), leaving the other to the packet behind.
        assert_eq!(tx.serve(&t, ms(15), ms(15), 3000), ms(23));
        assert_eq!(tx.serve(&t, ms(23), ms(16), 1500), ms(23));
        assert_eq!(tx.serve(&t, ms(23), ms(17), 1500), ms(30));
        assert_eq!(tx.serve(&t, ms(1000), ms(1000), 1500), ms(1003));
        assert_eq!(t.bytes_by(ms(10)), 3 * 1500);
        assert_eq!(t.bytes_by(ms(9)), 2 * 1500);
        assert_eq!(t.bytes_by(ms(23)), 8 * 1500);
    }

    #[test]
    fn a_markov_trace_has_its_states_mean_and_reads_back() {
        let states = [
            MarkovState {
                rate: Rate::from_mbps(12),
                dwell: Duration::from_millis(2000),
            },
            MarkovState {
                rate: Rate::from_mbps(0),
                dwell: Duration::from_millis(500),
            },
            MarkovState {
                rate: Rate::from_mbps(36),
                dwell: Duration::from_millis(1000),
            },
        ];
        let mut rng = crate::rng::stream(1, "markov");
        let t = CapacityTrace::markov(&states, Duration::from_secs(600), &mut rng).unwrap();
        assert_eq!(t.period(), Duration::from_secs(600));
        // Uniform moves: each state is visited a third of the time, weighted by its dwell:
        // (12·2 + 0·0.5 + 36·1) / 3.5 = 17.1 Mb/s.
        let mean = t.mean_rate().as_f64() / 1e6;
        assert!(
            (mean - 60.0 / 3.5).abs() < 0.1 * 60.0 / 3.5,
            "mean {mean} Mb/s"
        );
        let back = CapacityTrace::parse(&t.to_mahimahi()).unwrap();
        assert_eq!(back, t);
        // Outages show as empty bins, the fast state as bins near 36 Mb/s.
        let bins = t.binned_rates(Duration::from_millis(100));
        assert_eq!(bins.len(), 6000);
        assert!(bins.iter().filter(|&&b| b == 0.0).count() > 300);
        assert!(bins.iter().any(|&b| b > 30e6));
        let ok = CapacityTrace::markov(&states[1..2], Duration::from_secs(1), &mut rng);
        assert!(ok.is_err(), "only an outage state");
        let odd = CapacityTrace::markov(&states, Duration(1_500_000), &mut rng);
        assert!(odd.is_err(), "not whole milliseconds");
    }

    #[test]
    fn a_saturated_transmitter_uses_every_opportunity() {
        // Random packet sizes, always queued: the bytes carried by the last departure are the
        // opportunities up to it, less what was left of the last one.
        let t = CapacityTrace::parse("1\n1\n4\n7\n7\n7\n9\n").unwrap();
        let mut tx = TraceTransmitter::default();
        let (mut now, mut bytes) = (Time::ZERO, 0u64);
        let mut x = 7u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let size = 40 + (x >> 33) as u32 % 4000;
            // Queued long before: it may use what is left at `now`.
            now = tx.serve(&t, now, Time::ZERO, size);
            bytes += u64::from(size);
            let offered = t.bytes_by(now);
            assert_eq!(offered - bytes, u64::from(tx.left), "at {now:?}");
        }
    }
}
