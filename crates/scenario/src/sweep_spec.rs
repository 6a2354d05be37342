//! Sweeps (SPEC §10, §12 "Studies"): keys of a scenario varied over lists of values, crossed
//! (a grid) or zipped (varied together), each point run with several seeds.
//!
//! A sweep is written on the command line (`acclab sweep FILE --set flow.f0.params.weight=1,10,100
//! --seeds 10`) or as a `[sweep]` table in the scenario file:
//!
//! ```toml
//! [sweep]
//! seeds = 10                      # a count (seeds s, s+1, …, from the scenario's seed) or a list
//! zip = [["flow.f0.params.weight", "flow.f1.params.weight"]]   # axes that vary together
//! metrics = ["throughput_bps"]    # what the plots show (the tables hold every metric)
//! [sweep.set]
//! "flow.f0.params.weight" = [1, 10, 100]
//! "flow.f1.params.weight" = "1..100/3 log"       # a range: 1, 10, 100
//! 'link."r1->r2".rate' = "10Mbps..100Mbps/10"     # ten rates, evenly spaced, ends included
//! ```
//!
//! Keys are the key paths of [`crate::patch`]. Every axis not in a `zip` group is crossed with
//! the others, the first axis varying slowest (as nested loops in the order written). A value is
//! checked when its point is built, with the message the file would give for it.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::ScenarioError;
use crate::patch::value_of;
use crate::spec::MAX_SEED;

/// The most runs (points × seeds) one sweep may plan.
pub const MAX_RUNS: usize = 1_000_000;
/// The most values a range may expand to.
pub const MAX_RANGE_STEPS: usize = 100_000;

/// One swept key and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<toml::Value>,
    /// Written as a log-spaced range: plots use a log axis for it.
    pub log: bool,
    /// The line of the scenario file's `[sweep.set]` that wrote it; `None` for an axis from the
    /// command line or a program. A point's error names it.
    pub line: Option<usize>,
}

/// Which seeds every point runs with.
#[derive(Clone, Debug, PartialEq)]
pub enum Seeds {
    /// `n` seeds from the scenario's own: s, s + 1, …, s + n − 1.
    Count(u64),
    /// These seeds.
    List(Vec<u64>),
}

impl Seeds {
    /// The seeds, counting from `base` (the scenario's seed) for [`Seeds::Count`]; an error
    /// when one would be above [`MAX_SEED`].
    pub fn resolve(&self, base: u64) -> Result<Vec<u64>, String> {
        let seeds: Vec<u64> = match self {
            Seeds::Count(n) => {
                let last = base
                    .checked_add(n.saturating_sub(1))
                    .filter(|&l| l <= MAX_SEED);
                if last.is_none() {
                    return Err(format!(
                        "{n} seeds from the scenario's seed {base} run past the largest seed, {MAX_SEED} (2^63 - 1)"
                    ));
                }
                (0..*n).map(|i| base + i).collect()
            }
            Seeds::List(l) => l.clone(),
        };
        match seeds.iter().find(|&&s| s > MAX_SEED) {
            Some(s) => Err(format!("seed {s} is not in [0, {MAX_SEED}] (2^63 - 1)")),
            None => Ok(seeds),
        }
    }

    /// `10` (a count) or `1,5,9` (a list), as on a command line.
    pub fn parse(text: &str) -> Result<Seeds, String> {
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        let num = |s: &str| {
            s.parse::<u64>()
                .ok()
                .filter(|&n| n <= MAX_SEED)
                .ok_or_else(|| format!("--seeds: {s:?} is not a whole number in [0, {MAX_SEED}]"))
        };
        match items.as_slice() {
            [one] => {
                let n = num(one)?;
                if n == 0 || n as usize > MAX_RUNS {
                    return Err(format!(
                        "--seeds: a count must be in [1, {MAX_RUNS}], not {n}"
                    ));
                }
                Ok(Seeds::Count(n))
            }
            many => many
                .iter()
                .map(|s| num(s))
                .collect::<Result<_, _>>()
                .map(Seeds::List),
        }
    }
}

/// A sweep: its axes, the groups of axes zipped together, the seeds and the plotted metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    pub axes: Vec<Axis>,
    pub zip: Vec<Vec<String>>,
    pub seeds: Option<Seeds>,
    pub metrics: Vec<String>,
}

/// A point of a sweep: each swept key with its value.
pub type Point = Vec<(String, toml::Value)>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    #[serde(default)]
    set: toml::Table,
    #[serde(default)]
    zip: Vec<Vec<String>>,
    seeds: Option<toml::Value>,
    #[serde(default)]
    metrics: Vec<String>,
}

/// Reads a scenario file and its `[sweep]` table, if it has one. The scenario as written is
/// checked whole first, so its errors carry their line.
pub fn load(
    path: &std::path::Path,
) -> Result<(crate::ScenarioSpec, Option<SweepSpec>), ScenarioError> {
    let l = load_file(path)?;
    Ok((l.def, l.sweep))
}

/// A scenario file, read once (a FIFO or a pipe can be read only once): the scenario checked,
/// as written, and its `[sweep]`.
pub struct Loaded {
    pub scenario: crate::Scenario,
    pub def: crate::ScenarioSpec,
    pub sweep: Option<SweepSpec>,
}

/// Reads the file at `path` once and gives all three of [`Loaded`]; errors name the file, the
/// line and the key.
pub fn load_file(path: &std::path::Path) -> Result<Loaded, ScenarioError> {
    let file = path.display().to_string();
    let src = crate::file::read(path)?;
    let scenario = crate::file::parse_at(&src, &file, path.parent())?;
    let def = crate::file::parse_spec_at(&src, &file, path.parent())?;
    let sweep = SweepSpec::from_file_text(&src, &file)?;
    Ok(Loaded {
        scenario,
        def,
        sweep,
    })
}

/// `KEY=VALUE` as given to `acclab run --set`: one value, as on a command line.
pub fn assignment(text: &str) -> Result<(String, toml::Value), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), value_of(v.trim()))),
        _ => Err(format!(
            "--set {text:?}: write KEY=VALUE (e.g. flow.f0.params.weight=10 or 'link.\"a->b\".rate=10Mbps')"
        )),
    }
}

/// The `--set` assignments `texts`, refused when one key is given twice (the later one would
/// silently replace the earlier).
pub fn assignments(texts: &[String]) -> Result<Vec<(String, toml::Value)>, String> {
    let mut out: Vec<(String, toml::Value)> = Vec::with_capacity(texts.len());
    for t in texts {
        let (k, v) = assignment(t)?;
        if out.iter().any(|(seen, _)| *seen == k) {
            return Err(format!(
                "--set {k} is given twice: give each key once (several values of a sweep: \
                 --set '{k}=[a, b]' or a range)"
            ));
        }
        out.push((k, v));
    }
    Ok(out)
}

impl SweepSpec {
    /// The empty sweep: one point (the scenario as written), its own seed.
    pub fn empty() -> SweepSpec {
        SweepSpec {
            axes: Vec::new(),
            zip: Vec::new(),
            seeds: None,
            metrics: Vec::new(),
        }
    }

    /// The `[sweep]` table of scenario text, if it has one. Errors name the file, line and key.
    pub fn from_file_text(src: &str, file: &str) -> Result<Option<SweepSpec>, ScenarioError> {
        let table: toml::Table = match src.parse() {
            Ok(t) => t,
            // The scenario reader reports syntax errors with their line.
            Err(_) => return crate::file::parse_spec(src, file).map(|_| None),
        };
        let Some(value) = table.get("sweep") else {
            return Ok(None);
        };
        let err =
            |key: String, message: String| crate::file::located_error(src, file, key, message);
        let raw: RawSweep = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
            let path = e.path().to_string();
            let key = if path == "." {
                "sweep".to_string()
            } else {
                format!("sweep.{path}")
            };
            err(key, e.inner().message().trim().to_string())
        })?;
        let mut axes = Vec::new();
        for (key, v) in raw.set {
            let at = format!("sweep.set.{}", crate::spec::quote_key(&key));
            let axis = match v {
                toml::Value::Array(items) => Axis::from_values(&key, items),
                toml::Value::String(s) => Axis::from_text(&key, &s),
                other => Axis::from_values(&key, vec![other]),
            }
            .map_err(|m| err(at.clone(), m))?;
            let axis = Axis {
                line: crate::file::line_of_key(src, &["sweep", "set", &key]),
                ..axis
            };
            if axis.values.is_empty() {
                return Err(err(
                    format!("sweep.set.{}", crate::spec::quote_key(&axis.key)),
                    "an axis needs at least one value".into(),
                ));
            }
            axes.push(axis);
        }
        let seeds = match raw.seeds {
            None => None,
            Some(toml::Value::Integer(n)) if n >= 1 && (n as usize) <= MAX_RUNS => {
                Some(Seeds::Count(n as u64))
            }
            Some(toml::Value::Array(a)) => Some(Seeds::List(
                a.iter()
                    .map(|v| v.as_integer().filter(|&s| s >= 0).map(|s| s as u64))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        err(
                            "sweep.seeds".into(),
                            "a list of seeds holds whole numbers ≥ 0".into(),
                        )
                    })?,
            )),
            Some(other) => {
                return Err(err(
                    "sweep.seeds".into(),
                    format!("a count in [1, {MAX_RUNS}] or a list of seeds, not {other}"),
                ))
            }
        };
        let spec = SweepSpec {
            axes,
            zip: raw.zip,
            seeds,
            metrics: raw.metrics,
        };
        spec.check_zip().map_err(|m| err("sweep.zip".into(), m))?;
        Ok(Some(spec))
    }

    /// Adds (or replaces, for a key already swept) an axis.
    pub fn set_axis(&mut self, axis: Axis) {
        match self.axes.iter_mut().find(|a| a.key == axis.key) {
            Some(a) => *a = axis,
            None => self.axes.push(axis),
        }
    }

    /// Checks the zip groups: every key in them is swept, in one group only, and the axes of a
    /// group have equally many values.
    pub fn check_zip(&self) -> Result<(), String> {
        let mut seen = BTreeMap::new();
        for (g, group) in self.zip.iter().enumerate() {
            let mut len = None;
            for key in group {
                let axis = self
                    .axes
                    .iter()
                    .find(|a| &a.key == key)
                    .ok_or_else(|| format!("zip names {key:?}, which is not swept"))?;
                if seen.insert(key.clone(), g).is_some() {
                    return Err(format!("{key:?} is in more than one zip group"));
                }
                match len {
                    None => len = Some((key, axis.values.len())),
                    Some((first, n)) if n != axis.values.len() => {
                        return Err(format!(
                        "zipped axes need equally many values: {first:?} has {n}, {key:?} has {}",
                        axis.values.len()
                    ))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The dimensions of the grid: each a list of axis indices varied together.
    fn dimensions(&self) -> Vec<Vec<usize>> {
        let mut dims: Vec<Vec<usize>> = Vec::new();
        let mut placed = vec![false; self.axes.len()];
        for (i, axis) in self.axes.iter().enumerate() {
            if placed[i] {
                continue;
            }
            let group = self.zip.iter().find(|g| g.contains(&axis.key));
            let members: Vec<usize> = match group {
                Some(g) => (0..self.axes.len())
                    .filter(|&j| g.contains(&self.axes[j].key))
                    .collect(),
                None => vec![i],
            };
            for &j in &members {
                placed[j] = true;
            }
            dims.push(members);
        }
        dims
    }

    /// How many points the sweep has.
    pub fn point_count(&self) -> usize {
        self.dimensions()
            .iter()
            .map(|d| self.axes[d[0]].values.len())
            .fold(1usize, |a, n| a.saturating_mul(n))
    }

    /// Every point, the first axis varying slowest. At most [`MAX_RUNS`] points.
    pub fn points(&self) -> Result<Vec<Point>, String> {
        self.check_zip()?;
        let n = self.point_count();
        if n > MAX_RUNS {
            return Err(format!(
                "the sweep has {n} points; at most {MAX_RUNS} runs can be planned"
            ));
        }
        let dims = self.dimensions();
        let sizes: Vec<usize> = dims.iter().map(|d| self.axes[d[0]].values.len()).collect();
        let mut out = Vec::with_capacity(n);
        for mut k in 0..n {
            // Mixed-radix digits, the last dimension varying fastest.
            let mut digits = vec![0; dims.len()];
            for d in (0..dims.len()).rev() {
                digits[d] = k % sizes[d];
                k /= sizes[d];
            }
            let mut point: Point = Vec::with_capacity(self.axes.len());
            for (a, axis) in self.axes.iter().enumerate() {
                let d = dims.iter().position(|m| m.contains(&a)).unwrap_or(0);
                point.push((axis.key.clone(), axis.values[digits[d]].clone()));
            }
            out.push(point);
        }
        Ok(out)
    }
}

impl Axis {
    /// An axis from values as a file or a program gives them: a string written as a range
    /// (`"1..1000/4 log"`) stands for the range's values, anything else for itself.
    pub fn from_values(key: &str, items: Vec<toml::Value>) -> Result<Axis, String> {
        let mut values = Vec::new();
        let mut log = false;
        for item in items {
            match item {
                toml::Value::String(s) if Range::is_range(&s) => {
                    let r = Range::parse(&s)?;
                    log |= r.log;
                    values.extend(r.values());
                }
                other => values.push(other),
            }
        }
        Ok(Axis {
            key: key.to_string(),
            values,
            log,
            line: None,
        })
    }

    /// `KEY=V1,V2,…` as given to `--set`: values as on a command line ([`value_of`]), each may
    /// be a range (`10Mbps..100Mbps/10`, `1..1000/4 log`).
    pub fn from_assignment(text: &str) -> Result<Axis, String> {
        let (key, values) = text.split_once('=').ok_or_else(|| {
            format!("--set {text:?}: write KEY=V1,V2,… (e.g. flow.f0.params.weight=1,10,100)")
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("--set {text:?}: the key is empty"));
        }
        Axis::from_text(key, values).map_err(|m| format!("--set {key}: {m}"))
    }

    /// An axis from a comma-separated list of values and ranges.
    pub fn from_text(key: &str, text: &str) -> Result<Axis, String> {
        let mut values = Vec::new();
        let mut log = false;
        for item in split_top_level(text) {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("an empty value in {text:?}"));
            }
            if Range::is_range(item) {
                let r = Range::parse(item)?;
                log |= r.log;
                values.extend(r.values());
            } else {
                values.push(value_of(item));
            }
        }
        Ok(Axis {
            key: key.to_string(),
            values,
            log,
            line: None,
        })
    }
}

/// Splits at commas outside quotes and brackets (`[1, 2],"a,b"` is two values).
fn split_top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// `A..B/N` (N values from A to B, evenly spaced) or `A..B/N log` (log-spaced), A and B with
/// the same unit or none.
#[derive(Clone, Debug, PartialEq)]
pub struct Range {
    pub from: f64,
    pub to: f64,
    pub steps: usize,
    pub unit: String,
    pub log: bool,
    /// Both ends written as whole numbers without a unit: the values are integers when whole.
    integer: bool,
}

impl Range {
    /// Whether `text` is written as a range (`..` between two values).
    pub fn is_range(text: &str) -> bool {
        text.contains("..") && !text.trim_start().starts_with(['"', '\'', '['])
    }

    pub fn parse(text: &str) -> Result<Range, String> {
        let bad = |why: &str| {
            format!("{text:?} is not a range ({why}); write A..B/N or A..B/N log, e.g. 10Mbps..100Mbps/10 or 1..1000/4 log")
        };
        let t = text.trim();
        let (t, log) = match t.strip_suffix("log") {
            Some(rest) => (rest.trim_end(), true),
            None => (t, false),
        };
        let (ends, steps) = t.rsplit_once('/').ok_or_else(|| bad("no /N"))?;
        let steps: usize = steps
            .trim()
            .parse()
            .map_err(|_| bad("N is not a whole number"))?;
        if !(1..=MAX_RANGE_STEPS).contains(&steps) {
            return Err(bad(&format!("N must be in [1, {MAX_RANGE_STEPS}]")));
        }
        let (a, b) = ends.split_once("..").ok_or_else(|| bad("no .."))?;
        let (from, ua) = number_and_unit(a.trim()).ok_or_else(|| bad("A is not a number"))?;
        let (to, ub) = number_and_unit(b.trim()).ok_or_else(|| bad("B is not a number"))?;
        if ua != ub {
            return Err(bad(&format!("A is in {ua:?} and B in {ub:?}")));
        }
        if !from.is_finite() || !to.is_finite() {
            return Err(bad("the ends must be finite"));
        }
        if log && (from <= 0.0 || to <= 0.0) {
            return Err(bad("a log range needs ends above 0"));
        }
        let whole = |s: &str| !s.contains(['.', 'e', 'E']);
        Ok(Range {
            from,
            to,
            steps,
            integer: ua.is_empty() && whole(a) && whole(b),
            unit: ua,
            log,
        })
    }

    /// The values, ends included, rounded to 12 significant digits (so 1..1000/4 log is 1, 10,
    /// 100, 1000, not 9.999999999999998).
    pub fn values(&self) -> Vec<toml::Value> {
        let n = self.steps;
        (0..n)
            .map(|i| {
                let f = if n == 1 {
                    0.0
                } else {
                    i as f64 / (n - 1) as f64
                };
                let x = if self.log {
                    self.from * (self.to / self.from).powf(f)
                } else {
                    self.from + (self.to - self.from) * f
                };
                let x = round_significant(x, 12);
                if !self.unit.is_empty() {
                    toml::Value::String(format!("{x}{}", self.unit))
                } else if self.integer && x.fract() == 0.0 && x.abs() < 9.0e15 {
                    toml::Value::Integer(x as i64)
                } else {
                    toml::Value::Float(x)
                }
            })
            .collect()
    }
}

fn round_significant(x: f64, digits: usize) -> f64 {
    format!("{x:.*e}", digits - 1).parse().unwrap_or(x)
}

/// `10Mbps` → (10, "Mbps"); `2.5` → (2.5, ""); the longest numeric prefix that parses.
pub fn number_and_unit(s: &str) -> Option<(f64, String)> {
    let prefix_len = s
        .char_indices()
        .take_while(|&(_, c)| c.is_ascii_digit() || "+-.eE".contains(c))
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    (1..=prefix_len)
        .rev()
        .filter(|&k| s.is_char_boundary(k))
        .find_map(|k| {
            s[..k]
                .parse::<f64>()
                .ok()
                .map(|x| (x, s[k..].trim().to_string()))
        })
}

/// A value as a plain string: `10Mbps`, `avq`, `10`, `0.5` (strings without quotes).
pub fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(a: &Axis) -> Vec<String> {
        a.values.iter().map(plain).collect()
    }

    #[test]
    fn a_key_set_twice_is_an_error() {
        let set = |v: &[&str]| assignments(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(set(&["a.b=1", "c=2"]).unwrap().len(), 2);
        let e = set(&["a.b=1", " a.b = 2"]).unwrap_err();
        assert!(e.contains("--set a.b is given twice"), "{e}");
    }

    #[test]
    fn lists_and_ranges_on_a_command_line() {
        let a = Axis::from_assignment("flow.f0.params.weight=1,10,100").unwrap();
        assert_eq!(a.key, "flow.f0.params.weight");
        assert_eq!(a.values, vec![1.into(), 10.into(), 100.into()]);
        let a = Axis::from_assignment("link.\"r1->r2\".queue.kind=droptail,avq").unwrap();
        assert_eq!(a.key, "link.\"r1->r2\".queue.kind");
        assert_eq!(strs(&a), ["droptail", "avq"]);
        let a = Axis::from_assignment("link.\"r1->r2\".rate=10Mbps..100Mbps/10").unwrap();
        assert_eq!(strs(&a)[..3], ["10Mbps", "20Mbps", "30Mbps"]);
        assert_eq!(a.values.len(), 10);
        let a = Axis::from_text("w", "1..1000/4 log").unwrap();
        assert!(a.log);
        assert_eq!(a.values, vec![1.into(), 10.into(), 100.into(), 1000.into()]);
        let a = Axis::from_text("w", "0.5..1/3").unwrap();
        assert_eq!(a.values, vec![0.5.into(), 0.75.into(), 1.0.into()]);
        let a = Axis::from_text("w", "[1, 2],\"a,b\"").unwrap();
        assert_eq!(a.values.len(), 2);
        assert_eq!(plain(&a.values[1]), "a,b");
    }

    #[test]
    fn bad_ranges_say_how_to_write_one() {
        for bad in [
            "1..10",
            "1..10/0",
            "1Mbps..10ms/3",
            "0..10/3 log",
            "x..10/3",
            "1..1e400/3",
        ] {
            let e = Axis::from_text("k", bad).unwrap_err();
            assert!(e.contains("A..B/N"), "{bad}: {e}");
        }
        assert!(Axis::from_assignment("no-equals-sign").is_err());
        assert!(Axis::from_text("k", "1,,2").is_err());
    }

    #[test]
    fn grid_and_zip() {
        let mut s = SweepSpec::empty();
        s.set_axis(Axis::from_text("a", "1,2").unwrap());
        s.set_axis(Axis::from_text("b", "x,y,z").unwrap());
        s.set_axis(Axis::from_text("c", "10,20,30").unwrap());
        assert_eq!(s.point_count(), 18);
        s.zip = vec![vec!["b".into(), "c".into()]];
        let p = s.points().unwrap();
        assert_eq!(p.len(), 6);
        let row = |i: usize| p[i].iter().map(|(_, v)| plain(v)).collect::<Vec<_>>();
        assert_eq!(row(0), ["1", "x", "10"]);
        assert_eq!(row(1), ["1", "y", "20"]);
        assert_eq!(row(3), ["2", "x", "10"]);
        s.zip = vec![vec!["a".into(), "b".into()]];
        assert!(s.points().unwrap_err().contains("equally many"));
        s.zip = vec![vec!["nope".into()]];
        assert!(s.points().unwrap_err().contains("not swept"));
    }

    #[test]
    fn seeds() {
        assert_eq!(Seeds::parse("3").unwrap().resolve(5).unwrap(), [5, 6, 7]);
        assert_eq!(Seeds::parse("1,9").unwrap().resolve(5).unwrap(), [1, 9]);
        // Seeds are TOML integers: at most 2^63 - 1, and a count may not run past it.
        assert_eq!(Seeds::Count(1).resolve(MAX_SEED).unwrap(), [MAX_SEED]);
        assert!(Seeds::Count(2).resolve(MAX_SEED).is_err());
        assert!(Seeds::Count(3).resolve(u64::MAX).is_err());
        assert!(Seeds::List(vec![MAX_SEED + 1]).resolve(0).is_err());
        assert!(Seeds::parse("9223372036854775808,1").is_err());
        assert!(Seeds::parse("0").is_err());
        assert!(Seeds::parse("-1").is_err());
    }

    #[test]
    fn a_sweep_table_in_a_file() {
        let src = r#"
name = "t"
duration = "1s"

[sweep]
seeds = 3
zip = [["flow.a.params.weight", "flow.b.params.weight"]]
[sweep.set]
"flow.a.params.weight" = [1, 2]
"flow.b.params.weight" = "1..2/2"
'link."x->y".rate' = ["1Mbps..2Mbps/2", "5Mbps"]
"#;
        let s = SweepSpec::from_file_text(src, "f.toml").unwrap().unwrap();
        assert_eq!(s.seeds, Some(Seeds::Count(3)));
        assert_eq!(s.axes.len(), 3);
        assert_eq!(s.axes[2].values.len(), 3);
        assert_eq!(s.point_count(), 6);
        let bad = src.replace("seeds = 3", "seeds = 0");
        let e = SweepSpec::from_file_text(&bad, "f.toml").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(6), "sweep.seeds"), "{e}");
        let bad = src.replace("seeds = 3", "seed = 3");
        let e = SweepSpec::from_file_text(&bad, "f.toml").unwrap_err();
        assert!(e.message.contains("unknown field"), "{e}");
        let bad = src.replace("\"1..2/2\"", "\"1..2/3\"");
        let e = SweepSpec::from_file_text(&bad, "f.toml").unwrap_err();
        assert_eq!(e.key, "sweep.zip", "{e}");
        assert!(SweepSpec::from_file_text("name = \"t\"", "f")
            .unwrap()
            .is_none());
    }
}
