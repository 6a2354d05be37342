//! Workloads: flows drawn from a measured flow-size distribution, arriving as Poisson processes
//! at a target load, between hosts chosen by a traffic pattern — the datacenter experiments of
//! DCTCP, pFabric and HPCC.
//!
//! Each source host opens flows at rate λ = load · C / (8 · E[size]) per second, with C the rate
//! of the host's outgoing link and E[size] the distribution's mean, so that the bytes offered
//! by every host are `load` of its link's capacity. Inter-arrival times are exponential; sizes
//! are drawn by inverting the CDF with linear interpolation between its points (as the HPCC
//! traffic generator does), rounded up to whole bytes. Destinations: `all-to-all`, a uniform
//! draw among the other hosts per flow; `permutation`, one fixed other host per source (a
//! random derangement). Every host draws from its own stream (`workload:ID:HOST`), so the
//! flows are a function of the seed alone.
//!
//! A workload is kept as written in the [`crate::ScenarioSpec`] and expanded when the
//! scenario resolves: patching its `load` or the seed draws the flows anew.

use std::sync::OnceLock;

use acclab_core::config::SchemeConfig;
use acclab_core::{rng, Bytes, Duration};
use rand::RngExt;
use serde::Serialize;

/// A flow-size distribution: points (bytes, cumulative probability), sizes non-decreasing,
/// probabilities from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
}

/// The built-in distributions: name and data (each file cites its source).
const BUILTIN: [(&str, &str); 4] = [
    ("websearch", include_str!("../data/websearch.cdf")),
    ("datamining", include_str!("../data/datamining.cdf")),
    ("hadoop", include_str!("../data/hadoop.cdf")),
    ("rpc", include_str!("../data/rpc.cdf")),
];

impl SizeCdf {
    /// The names of the built-in distributions.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in distribution by name.
    pub fn builtin(name: &str) -> Option<&'static SizeCdf> {
        static PARSED: OnceLock<Vec<SizeCdf>> = OnceLock::new();
        let all = PARSED.get_or_init(|| {
            BUILTIN
                .iter()
                .map(|(n, text)| {
                    SizeCdf::parse(text).unwrap_or_else(|e| panic!("built-in CDF {n}: {e}"))
                })
                .collect()
        });
        BUILTIN
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| &all[i])
    }

    /// A CDF written one point per line, `size_bytes cdf_percent` (HPCC's traffic-generator
    /// format), `#` comments and blank lines ignored. The first point's probability may be
    /// above 0 (an atom at its size); the last must be 100.
    pub fn parse(text: &str) -> Result<SizeCdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |m: String| format!("line {}: {m}", n + 1);
            let nums: Vec<f64> = line
                .split_whitespace()
                .map(|w| w.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| at(format!("{line:?} is not two numbers")))?;
            let [size, pct] = nums[..] else {
                return Err(at(format!(
                    "give two numbers, size_bytes and cdf_percent, not {}",
                    nums.len()
                )));
            };
            if !(size.is_finite() && size >= 0.0) {
                return Err(at(format!("size {size} is not a byte count ≥ 0")));
            }
            if !(0.0..=100.0).contains(&pct) {
                return Err(at(format!("cdf {pct} is not a percentage in [0, 100]")));
            }
            if let Some(&(s0, p0)) = points.last() {
                if size < s0 || pct < p0 * 100.0 {
                    return Err(at(format!(
                        "sizes and probabilities must not decrease ({size} {pct} after {s0} {})",
                        p0 * 100.0
                    )));
                }
            }
            points.push((size, pct / 100.0));
        }
        match points.last() {
            None => Err("no points".into()),
            Some(&(_, p)) if p != 1.0 => {
                Err(format!("the last point's cdf is {}, not 100", p * 100.0))
            }
            Some(_) => Ok(SizeCdf { points }),
        }
    }

    /// The size at cumulative probability `u` in [0, 1].
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        if u <= p[0].1 {
            return p[0].0;
        }
        for w in p.windows(2) {
            let ((s0, p0), (s1, p1)) = (w[0], w[1]);
            if u <= p1 {
                return match p1 > p0 {
                    true => s0 + (s1 - s0) * (u - p0) / (p1 - p0),
                    false => s1,
                };
            }
        }
        p[p.len() - 1].0
    }

    /// A size drawn with the uniform draw `u`: the quantile, rounded up, at least one byte.
    pub fn sample(&self, u: f64) -> u64 {
        (self.quantile(u).ceil() as u64).max(1)
    }

    /// The mean size, bytes (of the piecewise-linear distribution).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let atom = p[0].0 * p[0].1;
        atom + p
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0)
            .sum::<f64>()
    }
}

/// Who sends to whom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Each flow to a host drawn uniformly among the others.
    #[default]
    AllToAll,
    /// Each host to one other, fixed for the run (a random derangement).
    Permutation,
    /// Every `period`, `senders` hosts drawn at random each send `size` bytes to `receiver`
    /// at once (partition–aggregate; the DCTCP paper's §2.3 and its incast experiments).
    Incast,
    /// The flows of a traffic file in the HPCC simulator's format ([`parse_flow_file`]).
    File,
}

impl Pattern {
    /// As a file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::AllToAll => "all-to-all",
            Pattern::Permutation => "permutation",
            Pattern::Incast => "incast",
            Pattern::File => "file",
        }
    }
}

/// `[[workload]]` as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadSpec {
    /// Flow ids are this followed by a number (`ws0`, `ws1`, … in order of start time).
    pub id: String,
    #[serde(flatten)]
    pub scheme: SchemeConfig,
    #[serde(skip_serializing_if = "is_all_to_all")]
    pub pattern: Pattern,
    /// A built-in distribution's name ([`SizeCdf::builtin_names`]) or the path of a CDF file
    /// ([`SizeCdf::parse`]'s format: a path has a `/` or a `.` in it; relative to the scenario
    /// file); all-to-all and permutation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<String>,
    /// Offered load as a fraction of each host's link capacity, in (0, 1]; all-to-all and
    /// permutation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Incast: how many hosts send in each round (distinct, never the receiver).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// Incast: the host they send to; absent: the first host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// Incast: bytes each sender sends per round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Incast: time between rounds (the first at `start`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Duration>,
    /// File: the traffic file (relative paths are relative to the scenario file when it is
    /// loaded from one), read when the scenario resolves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The hosts that send and receive; empty: every node named `h<number>` (a generated
    /// topology's hosts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
}

fn is_all_to_all(p: &Pattern) -> bool {
    *p == Pattern::AllToAll
}

/// Whether a `sizes` value names a file rather than a built-in distribution.
pub fn is_path(sizes: &str) -> bool {
    sizes.contains('/') || sizes.contains('.')
}

/// Drawn flows: (start ns, sender, receiver, bytes), senders and receivers as host indices.
type Draws = Vec<(u64, usize, usize, u64)>;

/// What is wrong, and at which key of the workload.
type Finding = (&'static str, String);

/// The most flows one workload may generate.
pub const MAX_WORKLOAD_FLOWS: u64 = 2_000_000;

/// One generated flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrival {
    pub id: String,
    pub scheme: SchemeConfig,
    pub from: String,
    pub to: String,
    pub start: Duration,
}

impl WorkloadSpec {
    /// The flows, in order of start time (ties: by source host). `hosts` are the workload's
    /// hosts with the rate (b/s) of each one's outgoing link; `end` is the run's duration.
    /// Errors: the key at fault and what is wrong.
    /// The draws are made here; each flow's [`Arrival`] as the iterator reaches it (a million
    /// arrivals held at once would double what loading a workload takes at its peak).
    pub fn generate<'a>(
        &'a self,
        seed: u64,
        hosts: &'a [(String, u64)],
        end: Duration,
    ) -> Result<impl ExactSizeIterator<Item = Arrival> + 'a, Finding> {
        // Keys of one pattern given to another are mistakes, not silently unused values.
        use Pattern::*;
        let poisson: &[Pattern] = &[AllToAll, Permutation];
        let given: [(&'static str, bool, &[Pattern], bool); 7] = [
            ("sizes", self.sizes.is_some(), poisson, true),
            ("load", self.load.is_some(), poisson, true),
            ("senders", self.senders.is_some(), &[Incast], true),
            ("receiver", self.receiver.is_some(), &[Incast], false),
            ("size", self.size.is_some(), &[Incast], true),
            ("period", self.period.is_some(), &[Incast], true),
            ("file", self.file.is_some(), &[File], true),
        ];
        for (key, set, patterns, needed) in given {
            let ours = patterns.contains(&self.pattern);
            if set && !ours {
                let names: Vec<&str> = patterns.iter().map(|p| p.name()).collect();
                return Err((key, format!("is a key of pattern = {}", names.join(" or "))));
            }
            if !set && ours && needed {
                return Err((
                    key,
                    format!("missing: pattern = {:?} needs it", self.pattern.name()),
                ));
            }
        }
        if hosts.len() < 2 {
            return Err((
                "hosts",
                format!(
                    "a workload needs at least two hosts, not {} (name them, or generate a [topology])",
                    hosts.len()
                ),
            ));
        }
        let start = self.start.unwrap_or(Duration::ZERO);
        let stop = self.stop.unwrap_or(end).min(end);
        if start >= stop {
            return Err((
                "start",
                format!("starts at {start}, at or after it stops ({stop})"),
            ));
        }
        if self.scheme.with_size(Bytes(1)).is_none() {
            return Err((
                "kind",
                format!(
                    "{} flows cannot carry a finite transfer; a workload's kind is one of reno, cubic, dctcp, bbr, vegas, monaco",
                    self.scheme.kind()
                ),
            ));
        }
        let arrivals = match self.pattern {
            Incast => self.incast(seed, hosts, start, stop)?,
            File => self.replay(hosts, start, stop)?,
            AllToAll | Permutation => self.poisson(seed, hosts, start, stop)?,
        };
        Ok(arrivals
            .into_iter()
            .enumerate()
            .map(|(i, (t, s, d, size))| Arrival {
                id: format!("{}{i}", self.id),
                scheme: self
                    .scheme
                    .with_size(Bytes(size))
                    .expect("checked above: the scheme carries a size"),
                from: hosts[s].0.clone(),
                to: hosts[d].0.clone(),
                start: Duration(t),
            }))
    }

    /// Incast rounds: (start ns, sender, receiver, bytes), in order.
    fn incast(
        &self,
        seed: u64,
        hosts: &[(String, u64)],
        start: Duration,
        stop: Duration,
    ) -> Result<Draws, Finding> {
        let (Some(senders), Some(size), Some(period)) = (self.senders, self.size, self.period)
        else {
            unreachable!("checked by the caller");
        };
        let receiver = match &self.receiver {
            None => 0,
            Some(r) => hosts.iter().position(|(h, _)| h == r).ok_or_else(|| {
                (
                    "receiver",
                    format!("{r:?} is not one of the workload's hosts"),
                )
            })?,
        };
        let others = hosts.len() - 1;
        if !(1..=others as u64).contains(&u64::from(senders)) {
            return Err((
                "senders",
                format!("must be in [1, {others}] (the other hosts), not {senders}"),
            ));
        }
        if size.0 == 0 {
            return Err(("size", "must be at least 1 byte".into()));
        }
        if period == Duration::ZERO {
            return Err(("period", "must be greater than zero".into()));
        }
        let rounds = (stop.0 - start.0).div_ceil(period.0);
        if rounds.saturating_mul(u64::from(senders)) > MAX_WORKLOAD_FLOWS {
            return Err((
                "period",
                format!(
                    "{rounds} rounds of {senders} senders: more than the {MAX_WORKLOAD_FLOWS} flows a workload may open"
                ),
            ));
        }
        let mut r = rng::stream(seed, &format!("workload:{}:incast", self.id));
        let mut out = Vec::with_capacity((rounds * u64::from(senders)) as usize);
        let candidates: Vec<usize> = (0..hosts.len()).filter(|&h| h != receiver).collect();
        for k in 0..rounds {
            let t = start.0 + k * period.0;
            // A partial Fisher–Yates shuffle: `senders` distinct hosts, in host order.
            let mut pool = candidates.clone();
            for i in 0..senders as usize {
                let j = r.random_range(i..pool.len());
                pool.swap(i, j);
            }
            let mut chosen = pool[..senders as usize].to_vec();
            chosen.sort_unstable();
            out.extend(chosen.into_iter().map(|s| (t, s, receiver, size.0)));
        }
        Ok(out)
    }

    /// A traffic file's flows that start in [start, stop): (start ns, sender, receiver, bytes).
    fn replay(
        &self,
        hosts: &[(String, u64)],
        start: Duration,
        stop: Duration,
    ) -> Result<Draws, Finding> {
        let path = self.file.as_deref().expect("checked by the caller");
        let text = std::fs::read_to_string(path)
            .map_err(|e| ("file", format!("cannot read {path}: {e}")))?;
        let flows = parse_flow_file(&text).map_err(|e| ("file", format!("{path}: {e}")))?;
        let mut out = Vec::with_capacity(flows.len());
        for (n, f) in flows.iter().enumerate() {
            for end in [f.src, f.dst] {
                if end >= hosts.len() {
                    return Err((
                        "file",
                        format!(
                            "{path}: flow {} (line {}) names host {end}, but the workload has {} hosts (0..{})",
                            n + 1,
                            n + 2,
                            hosts.len(),
                            hosts.len() - 1
                        ),
                    ));
                }
            }
            if (start.0..stop.0).contains(&f.start.0) {
                out.push((f.start.0, f.src, f.dst, f.size));
            }
        }
        out.sort_by_key(|&(t, s, _, _)| (t, s));
        Ok(out)
    }

    /// Poisson arrivals at the load: (start ns, sender, receiver, bytes), in order of start
    /// (ties: by sender).
    fn poisson(
        &self,
        seed: u64,
        hosts: &[(String, u64)],
        start: Duration,
        stop: Duration,
    ) -> Result<Draws, Finding> {
        let (Some(sizes), Some(load)) = (&self.sizes, self.load) else {
            unreachable!("checked by the caller");
        };
        let read;
        let cdf = match SizeCdf::builtin(sizes) {
            Some(c) => c,
            None if is_path(sizes) => {
                let text = std::fs::read_to_string(sizes)
                    .map_err(|e| ("sizes", format!("cannot read {sizes}: {e}")))?;
                read = SizeCdf::parse(&text).map_err(|e| ("sizes", format!("{sizes}: {e}")))?;
                &read
            }
            None => {
                return Err((
                    "sizes",
                    format!(
                        "unknown distribution {sizes:?}; built in: {} (or a CDF file's path)",
                        SizeCdf::builtin_names().join(", ")
                    ),
                ))
            }
        };
        if cdf.mean() <= 0.0 {
            return Err(("sizes", format!("{sizes}: the mean size is 0 bytes")));
        }
        if !(load > 0.0 && load <= 1.0) {
            return Err(("load", format!("must be in (0, 1], not {load}")));
        }
        let mean = cdf.mean();
        let span = (stop.0 - start.0) as f64 / 1e9;
        let expected: f64 = hosts
            .iter()
            .map(|(_, c)| load * *c as f64 / (8.0 * mean) * span)
            .sum();
        if expected > MAX_WORKLOAD_FLOWS as f64 {
            return Err((
                "load",
                format!(
                    "would open about {expected:.0} flows; a workload may open at most {MAX_WORKLOAD_FLOWS} (shorten it or lower the load)"
                ),
            ));
        }
        let n = hosts.len();
        let permutation = match self.pattern {
            Pattern::Permutation => Some(derangement(n, seed, &self.id)),
            _ => None,
        };
        let mut arrivals: Vec<(u64, usize, usize, u64)> = Vec::new();
        for (s, (host, capacity)) in hosts.iter().enumerate() {
            let mut r = rng::stream(seed, &format!("workload:{}:{host}", self.id));
            let lambda = load * *capacity as f64 / (8.0 * mean); // flows per second
            let mut t = start.0 as f64;
            loop {
                let u: f64 = r.random();
                t += -(1.0 - u).ln() / lambda * 1e9;
                if t >= stop.0 as f64 {
                    break;
                }
                let size = cdf.sample(r.random());
                let d = match &permutation {
                    Some(p) => p[s],
                    None => {
                        let d = r.random_range(0..n - 1);
                        if d >= s {
                            d + 1
                        } else {
                            d
                        }
                    }
                };
                arrivals.push((t as u64, s, d, size));
            }
        }
        arrivals.sort_by_key(|&(t, s, _, _)| (t, s));
        Ok(arrivals)
    }
}

/// One flow of a traffic file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileFlow {
    /// Host indices: the workload's hosts in order (`h0`, `h1`, … by default).
    pub src: usize,
    pub dst: usize,
    pub size: u64,
    pub start: Duration,
}

/// A traffic file in the HPCC simulator's format (its `traffic_gen` output, read by its
/// `third.cc`): a line with the number of flows, then one line per flow, `src dst priority
/// dport size start_s` — host indices, a priority group and a destination port (read and
/// ignored: acclab's flows have neither), the size in bytes and the start time in seconds.
/// The count must match the lines that follow.
pub fn parse_flow_file(text: &str) -> Result<Vec<FileFlow>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines
        .next()
        .ok_or("empty: the first line is the number of flows")?;
    let count: usize = first
        .trim()
        .parse()
        .map_err(|_| format!("line 1: {first:?} is not the number of flows"))?;
    let mut out = Vec::with_capacity(count.min(MAX_WORKLOAD_FLOWS as usize));
    for (n, line) in lines {
        let at = |m: String| format!("line {}: {m}", n + 1);
        let w: Vec<&str> = line.split_whitespace().collect();
        let [src, dst, _priority, _dport, size, start] = w[..] else {
            return Err(at(format!(
                "give six fields, src dst priority dport size start_s, not {}",
                w.len()
            )));
        };
        let int = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| at(format!("{what} {s:?} is not a whole number")))
        };
        let (src, dst, size) = (int(src, "src")?, int(dst, "dst")?, int(size, "size")?);
        if src == dst {
            return Err(at(format!("a flow from host {src} to itself")));
        }
        if size == 0 {
            return Err(at("size 0: a flow carries at least one byte".into()));
        }
        let secs: f64 = start
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| at(format!("start {start:?} is not a time in seconds ≥ 0")))?;
        out.push(FileFlow {
            src: src as usize,
            dst: dst as usize,
            size,
            start: Duration::from_secs_f64(secs),
        });
        if out.len() as u64 > MAX_WORKLOAD_FLOWS {
            return Err(at(format!(
                "more than {MAX_WORKLOAD_FLOWS} flows in one file"
            )));
        }
    }
    if out.len() != count {
        return Err(format!(
            "line 1 says {count} flows, but {} follow",
            out.len()
        ));
    }
    Ok(out)
}

/// Writes `flows` to `w` in the HPCC simulator's format ([`parse_flow_file`]): priority 3 and
/// destination port 100 (its generator's values), start times to the nanosecond. Streamed: a
/// million flows' file (~30 MB) is never held as text.
pub fn write_flow_file(
    w: &mut (impl std::io::Write + ?Sized),
    flows: &[FileFlow],
) -> std::io::Result<()> {
    writeln!(w, "{}", flows.len())?;
    for f in flows {
        writeln!(
            w,
            "{} {} 3 100 {} {}.{:09}",
            f.src,
            f.dst,
            f.size,
            f.start.0 / 1_000_000_000,
            f.start.0 % 1_000_000_000
        )?;
    }
    Ok(())
}

/// A random permutation of 0..n with no fixed point (n ≥ 2): Sattolo's algorithm, which draws
/// a uniform cyclic permutation. Seeded by `seed` and the workload's `id`.
pub(crate) fn derangement(n: usize, seed: u64, id: &str) -> Vec<usize> {
    let mut r = rng::stream(seed, &format!("workload:{id}:permutation"));
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = r.random_range(0..i);
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::config::DctcpParams;

    impl WorkloadSpec {
        /// Every arrival, drawn at once.
        fn arrivals(
            &self,
            seed: u64,
            hosts: &[(String, u64)],
            end: Duration,
        ) -> Result<Vec<Arrival>, Finding> {
            self.generate(seed, hosts, end).map(Iterator::collect)
        }
    }

    #[test]
    fn the_builtin_cdfs_parse_and_their_means_are_the_tables() {
        let ws = SizeCdf::builtin("websearch").unwrap();
        // By hand from the table: Σ Δp · (s0 + s1)/2.
        let by_hand = 0.15 * 5e3
            + 0.05 * 15e3
            + 0.10 * 25e3
            + 0.10 * 40e3
            + 0.13 * 65e3
            + 0.07 * 140e3
            + 0.10 * 600e3
            + 0.10 * 1.5e6
            + 0.10 * 3.5e6
            + 0.07 * 7.5e6
            + 0.03 * 20e6;
        assert!((ws.mean() - by_hand).abs() < 1.0, "{}", ws.mean());
        assert!(SizeCdf::builtin("hadoop").is_some());
        assert!(SizeCdf::builtin("nope").is_none());
        // Data mining: over half the flows within 1.1 KB, the mean (5.04 MB: each segment's
        // probability times its midpoint) in the tail's bytes.
        let dm = SizeCdf::builtin("datamining").unwrap();
        assert!((dm.quantile(0.55) - 1100.0).abs() < 1e-6);
        assert!((dm.mean() - 5_036_535.175).abs() < 1.0, "{}", dm.mean());
        // RPCs (Homa's W3): half within 256 B, a mean of 3.34 KB, over half of it from the 0.3% above 128 KB.
        let rpc = SizeCdf::builtin("rpc").unwrap();
        assert!((rpc.quantile(0.49786) - 256.0).abs() < 1e-6);
        assert_eq!(rpc.sample(0.01), 3); // the atom at 3 bytes
        assert!((rpc.mean() - 3340.74).abs() < 0.01, "{}", rpc.mean());
    }

    #[test]
    fn sampled_sizes_follow_the_table() {
        let ws = SizeCdf::builtin("websearch").unwrap();
        let mut r = rng::stream(7, "t");
        let n = 200_000;
        let mut v: Vec<u64> = (0..n).map(|_| ws.sample(r.random())).collect();
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        // The mean of a heavy tail converges slowly: within 3%.
        assert!(
            (mean / ws.mean() - 1.0).abs() < 0.03,
            "{mean} vs {}",
            ws.mean()
        );
        v.sort_unstable();
        for (q, size) in [(0.15, 10_000.0), (0.53, 80_000.0), (0.9, 5_000_000.0)] {
            let got = v[(q * n as f64) as usize] as f64;
            assert!((got / size - 1.0).abs() < 0.05, "q{q}: {got} vs {size}");
        }
    }

    #[test]
    fn bad_cdfs_are_refused_with_the_line() {
        for (text, says) in [
            ("0 0\n10 50\n5 100\n", "line 3"),
            ("0 0\n10 50\n", "not 100"),
            ("0 0\n10 150\n", "percentage"),
            ("0 0 1\n", "two numbers"),
            ("x y\n", "not two numbers"),
            ("# only a comment\n", "no points"),
        ] {
            let e = SizeCdf::parse(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    fn workload(load: f64, pattern: Pattern) -> WorkloadSpec {
        WorkloadSpec {
            id: "w".into(),
            scheme: SchemeConfig::Dctcp(DctcpParams::default()),
            sizes: Some("websearch".into()),
            load: Some(load),
            pattern,
            senders: None,
            receiver: None,
            size: None,
            period: None,
            file: None,
            hosts: Vec::new(),
            start: None,
            stop: None,
        }
    }

    fn hosts(n: usize) -> Vec<(String, u64)> {
        (0..n).map(|i| (format!("h{i}"), 10_000_000_000)).collect()
    }

    fn size_of(a: &Arrival) -> u64 {
        match &a.scheme {
            SchemeConfig::Dctcp(p) => p.size.unwrap().0,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_offered_load_is_the_target() {
        let end = Duration::from_secs(2);
        let h = hosts(16);
        let flows = workload(0.5, Pattern::AllToAll)
            .arrivals(1, &h, end)
            .unwrap();
        let offered: u64 = flows.iter().map(size_of).sum();
        let target = 0.5 * 16.0 * 10e9 / 8.0 * 2.0;
        // Heavy-tailed sizes: ~18,000 flows put the offered bytes within 5% of the target.
        assert!(
            (offered as f64 / target - 1.0).abs() < 0.05,
            "{offered} bytes offered, target {target}"
        );
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(flows.iter().all(|f| f.from != f.to));
        // Same seed, same flows; another, others.
        let again = workload(0.5, Pattern::AllToAll)
            .arrivals(1, &h, end)
            .unwrap();
        assert_eq!(flows, again);
        let other = workload(0.5, Pattern::AllToAll)
            .arrivals(2, &h, end)
            .unwrap();
        assert_ne!(flows, other);
    }

    #[test]
    fn a_permutation_sends_each_host_to_one_other() {
        let h = hosts(8);
        let flows = workload(0.3, Pattern::Permutation)
            .arrivals(3, &h, Duration::from_millis(200))
            .unwrap();
        let mut dst = std::collections::BTreeMap::new();
        for f in &flows {
            assert_ne!(f.from, f.to);
            assert_eq!(dst.entry(f.from.clone()).or_insert(f.to.clone()), &f.to);
        }
        let receivers: std::collections::BTreeSet<_> = dst.values().collect();
        assert_eq!(
            receivers.len(),
            dst.len(),
            "a permutation: receivers distinct"
        );
    }

    #[test]
    fn incast_rounds_send_from_distinct_hosts_to_the_receiver() {
        let mut w = workload(0.5, Pattern::Incast);
        w.sizes = None;
        w.load = None;
        // A missing key of the pattern is named.
        assert_eq!(
            w.arrivals(1, &hosts(8), Duration::from_millis(10))
                .unwrap_err()
                .0,
            "senders"
        );
        w.senders = Some(5);
        w.size = Some(Bytes(64_000));
        w.period = Some(Duration::from_millis(2));
        w.receiver = Some("h3".into());
        let flows = w.arrivals(1, &hosts(8), Duration::from_millis(10)).unwrap();
        assert_eq!(flows.len(), 5 * 5, "rounds at 0, 2, 4, 6, 8 ms");
        for round in flows.chunks(5) {
            let t = round[0].start;
            let from: std::collections::BTreeSet<_> = round.iter().map(|f| &f.from).collect();
            assert_eq!(from.len(), 5, "distinct senders");
            assert!(round
                .iter()
                .all(|f| f.start == t && f.to == "h3" && f.from != "h3"));
            assert!(round.iter().all(|f| size_of(f) == 64_000));
        }
        w.senders = Some(8);
        assert_eq!(
            w.arrivals(1, &hosts(8), Duration::from_millis(10))
                .unwrap_err()
                .0,
            "senders"
        );
    }

    #[test]
    fn traffic_files_round_trip_and_bad_ones_name_the_line() {
        let flows = vec![
            FileFlow {
                src: 0,
                dst: 3,
                size: 1500,
                start: Duration(2_000_000_123),
            },
            FileFlow {
                src: 2,
                dst: 1,
                size: 30_000_000,
                start: Duration(2_000_000_200),
            },
        ];
        let mut text = Vec::new();
        write_flow_file(&mut text, &flows).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text,
            "2\n0 3 3 100 1500 2.000000123\n2 1 3 100 30000000 2.000000200\n"
        );
        assert_eq!(parse_flow_file(&text).unwrap(), flows);
        for (bad, says) in [
            ("2\n0 3 3 100 1500 2.0\n", "line 1 says 2"),
            ("1\n0 3 3 100 1500\n", "line 2: give six"),
            ("1\n0 0 3 100 1500 2.0\n", "to itself"),
            ("1\n0 1 3 100 0 2.0\n", "size 0"),
            ("1\n0 1 3 100 10 -1\n", "start"),
            ("x\n", "line 1"),
            ("", "empty"),
        ] {
            let e = parse_flow_file(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_cdf_file_serves_as_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.cdf");
        std::fs::write(&path, "# two sizes\n1000 50\n1000 50\n3000 100\n").unwrap();
        let mut w = workload(0.5, Pattern::AllToAll);
        w.sizes = Some(path.display().to_string());
        let flows = w.arrivals(1, &hosts(4), Duration::from_millis(50)).unwrap();
        // Half the flows are 1000 B (the atom), the rest uniform in (1000, 3000].
        let small = flows.iter().filter(|f| size_of(f) == 1000).count() as f64;
        assert!(
            (small / flows.len() as f64 - 0.5).abs() < 0.05,
            "{small} of {}",
            flows.len()
        );
        assert!(flows.iter().all(|f| (1000..=3000).contains(&size_of(f))));
        std::fs::write(&path, "1000 50\n").unwrap();
        let e = w
            .arrivals(1, &hosts(4), Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(e.0, "sizes");
        assert!(e.1.contains("not 100"), "{}", e.1);
    }

    #[test]
    fn bad_workloads_name_their_key() {
        let end = Duration::from_secs(1);
        let h = hosts(4);
        let mut w = workload(1.5, Pattern::AllToAll);
        assert_eq!(w.arrivals(1, &h, end).unwrap_err().0, "load");
        w.load = Some(0.5);
        assert_eq!(w.arrivals(1, &h[..1], end).unwrap_err().0, "hosts");
        w.sizes = Some("nope".into());
        assert_eq!(w.arrivals(1, &h, end).unwrap_err().0, "sizes");
        w.sizes = Some("websearch".into());
        w.period = Some(Duration::from_millis(1));
        assert_eq!(w.arrivals(1, &h, end).unwrap_err().0, "period");
        w.period = None;
        w.scheme = SchemeConfig::from_kind(
            "cbr",
            toml::Value::Table(toml::from_str("rate = \"1Mbps\"").unwrap()),
        )
        .unwrap();
        assert_eq!(w.arrivals(1, &h, end).unwrap_err().0, "kind");
    }
}
