//! A sweep's plan: every point × seed as a run with a stable id.
//!
//! A run is identified by a hash of its effective scenario — the base scenario with the point's
//! values set, its seed set, written out by [`ScenarioSpec::to_toml`] (every group expanded,
//! defaults left out) — so the same run has the same id whatever sweep, order or machine it
//! comes from, and a changed scenario never reuses an old result. A sweep re-run with the same
//! arguments finds its finished runs by these ids and does only the missing ones.

use acclab_scenario::sweep_spec::{plain, Point, SweepSpec, MAX_RUNS};
use acclab_scenario::{Scenario, ScenarioError, ScenarioSpec};
use serde::{Deserialize, Serialize};
use sha2::Digest;

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Position in the plan (what `--only K` takes).
    pub index: usize,
    /// Hash of the effective scenario and seed (16 hex digits).
    pub id: String,
    /// Index of its point in [`Plan::points`].
    pub point: usize,
    pub seed: u64,
}

/// Every run of a sweep, point-major and seed-minor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The base scenario's name.
    pub scenario: String,
    /// The acclab that planned it: version and commit (the runs' ids depend on it).
    pub acclab: String,
    /// The swept keys, in the order of the points' values.
    pub keys: Vec<String>,
    /// Keys swept over a log-spaced range (plotted on a log axis).
    pub log_keys: Vec<String>,
    /// Each point's values, as written (`10Mbps`, `avq`, `10`).
    pub points: Vec<Vec<String>>,
    pub seeds: Vec<u64>,
    /// What the plots show.
    pub metrics: Vec<String>,
    pub runs: Vec<PlannedRun>,
    /// The points' values as TOML, to set them again.
    #[serde(skip)]
    pub values: Vec<Point>,
    /// The largest memory estimate of one run, bytes, and the sum of the runs' estimated
    /// events (for the sweep's cost line).
    #[serde(skip)]
    pub max_memory_bytes: f64,
    #[serde(skip)]
    pub total_events: f64,
    /// The sum of the runs' estimated wall times on one core, s.
    #[serde(skip)]
    pub total_wall_s: f64,
}

/// The metrics plotted when a sweep names none.
pub const DEFAULT_METRICS: [&str; 2] = ["throughput_bps", "mean_queue_pkts"];

impl Plan {
    /// Plans `spec` over `base`: checks every point (a bad value fails here, naming the point,
    /// the key and the value, before anything runs) and gives every run its id.
    pub fn new(base: &ScenarioSpec, spec: &SweepSpec) -> Result<Plan, ScenarioError> {
        let at = |key: &str, message: String| ScenarioError {
            file: base.name.clone(),
            line: None,
            key: key.to_string(),
            message,
        };
        let values = spec.points().map_err(|m| at("sweep", m))?;
        let seeds = match &spec.seeds {
            Some(s) => s
                .resolve(base.seed.unwrap_or(acclab_scenario::spec::DEFAULT_SEED))
                .map_err(|m| at("sweep.seeds", m))?,
            None => vec![base.seed.unwrap_or(acclab_scenario::spec::DEFAULT_SEED)],
        };
        let total = values.len().saturating_mul(seeds.len());
        if total == 0 || total > MAX_RUNS {
            return Err(at(
                "sweep",
                format!(
                    "{} points × {} seeds = {total} runs; a sweep has 1 to {MAX_RUNS}",
                    values.len(),
                    seeds.len()
                ),
            ));
        }
        let mut runs = Vec::with_capacity(total);
        let (mut max_memory_bytes, mut total_events, mut total_wall_s) = (0f64, 0f64, 0f64);
        for (p, point) in values.iter().enumerate() {
            // A point's error is the value's: on the line of the file's `[sweep.set]` that
            // wrote it (none for a value from the command line or a program).
            let at_axis = |e: ScenarioError| {
                let axis = spec
                    .axes
                    .iter()
                    .find(|a| e.key == a.key || e.key.starts_with(&format!("{}.", a.key)))
                    .or(spec.axes.first());
                ScenarioError {
                    line: axis.and_then(|a| a.line),
                    ..e
                }
            };
            let mut def = patched(base, point, p).map_err(at_axis)?;
            let sc = def.build().map_err(at_axis)?;
            let cost = acclab_sim::cost::estimate(&sc);
            max_memory_bytes = max_memory_bytes.max(cost.memory_bytes);
            total_events += cost.events * seeds.len() as f64;
            total_wall_s += cost.wall_s * seeds.len() as f64;
            for &seed in &seeds {
                def.seed = Some(seed);
                runs.push(PlannedRun {
                    index: runs.len(),
                    id: run_id(&def.to_toml()),
                    point: p,
                    seed,
                });
            }
        }
        Ok(Plan {
            scenario: base.name.clone(),
            acclab: acclab_results::provenance::build(),
            keys: spec.axes.iter().map(|a| a.key.clone()).collect(),
            log_keys: spec
                .axes
                .iter()
                .filter(|a| a.log)
                .map(|a| a.key.clone())
                .collect(),
            points: values
                .iter()
                .map(|pt| pt.iter().map(|(_, v)| plain(v)).collect())
                .collect(),
            seeds,
            metrics: if spec.metrics.is_empty() {
                DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()
            } else {
                spec.metrics.clone()
            },
            runs,
            values,
            max_memory_bytes,
            total_events,
            total_wall_s,
        })
    }

    /// The scenario of `run`: the base with its point's values and its seed.
    pub fn scenario(
        &self,
        base: &ScenarioSpec,
        run: &PlannedRun,
    ) -> Result<Scenario, ScenarioError> {
        self.spec(base, run)?.build()
    }

    /// The spec of `run`'s scenario (its effective scenario, written as TOML).
    pub fn spec(
        &self,
        base: &ScenarioSpec,
        run: &PlannedRun,
    ) -> Result<ScenarioSpec, ScenarioError> {
        let mut def = patched(base, &self.values[run.point], run.point)?;
        def.seed = Some(run.seed);
        Ok(def)
    }

    /// The run `which` names: its index in the plan or its id.
    pub fn find(&self, which: &str) -> Option<&PlannedRun> {
        match which.parse::<usize>() {
            Ok(k) => self.runs.get(k),
            Err(_) => self.runs.iter().find(|r| r.id == which),
        }
    }
}

/// `base` with `point`'s values set; an error names the point and the value.
fn patched(base: &ScenarioSpec, point: &Point, p: usize) -> Result<ScenarioSpec, ScenarioError> {
    let mut def = base.clone();
    def.set_all(point).map_err(|e| {
        let values: Vec<String> = point
            .iter()
            .map(|(k, v)| format!("{k} = {}", plain(v)))
            .collect();
        ScenarioError {
            message: format!("sweep point {p} ({}): {}", values.join(", "), e.message),
            ..e
        }
    })?;
    Ok(def)
}

/// The id of a run: the first 16 hex digits of SHA-256 over acclab's version and commit and the
/// run's effective scenario (seed set) — so a sweep resumed by another build of acclab redoes
/// its runs rather than mixing in records the old one made.
pub fn run_id(effective_toml: &str) -> String {
    let build = acclab_results::provenance::build();
    let digest =
        sha2::Sha256::digest(format!("acclab run v1\n{build}\n{effective_toml}").as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_scenario::sweep_spec::{Axis, Seeds};

    const BASE: &str = r#"
name = "t"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
[[flow]]
id = "f0"
kind = "reno"
from = "a"
to = "b"
"#;

    #[test]
    fn runs_get_stable_distinct_ids_and_bad_points_are_named() {
        let base = acclab_scenario::parse_spec(BASE, "t.toml").unwrap();
        let mut spec = SweepSpec::empty();
        spec.set_axis(Axis::from_text("link.\"a->b\".rate", "10Mbps,20Mbps").unwrap());
        spec.seeds = Some(Seeds::Count(3));
        let plan = Plan::new(&base, &spec).unwrap();
        assert_eq!(plan.runs.len(), 6);
        assert_eq!(plan.seeds, [1, 2, 3]);
        let ids: std::collections::BTreeSet<_> = plan.runs.iter().map(|r| &r.id).collect();
        assert_eq!(ids.len(), 6);
        assert_eq!(Plan::new(&base, &spec).unwrap(), plan);
        // The same run in another sweep has the same id.
        spec.set_axis(Axis::from_text("link.\"a->b\".rate", "20Mbps").unwrap());
        let other = Plan::new(&base, &spec).unwrap();
        assert_eq!(other.runs[0].id, plan.runs[3].id);
        let sc = plan.scenario(&base, &plan.runs[4]).unwrap();
        assert_eq!((sc.seed, sc.links[0].rate.0), (2, 20_000_000));
        spec.set_axis(Axis::from_text("link.\"a->b\".rate", "20Mbps,-1Mbps").unwrap());
        let e = Plan::new(&base, &spec).unwrap_err();
        assert!(
            e.message
                .starts_with("sweep point 1 (link.\"a->b\".rate = -1Mbps)"),
            "{e}"
        );
        assert_eq!(e.key, "link.\"a->b\".rate");
        assert_eq!(plan.find("4").unwrap().index, 4);
        assert_eq!(plan.find(&plan.runs[2].id).unwrap().index, 2);
        assert!(plan.find("99").is_none());
    }

    /// Issue 55 §6: a point's error is on the line of `[sweep.set]` that wrote the value (none
    /// for a value from the command line); seeds past 2^63 - 1 are refused, not a panic.
    #[test]
    fn a_points_error_names_the_line_of_its_value() {
        let src = format!("{BASE}[sweep.set]\n'link.\"a->b\".rate' = [\"10Mbps\", \"20Tbps\"]\n");
        let base = acclab_scenario::parse_spec(&src, "t.toml").unwrap();
        let spec = SweepSpec::from_file_text(&src, "t.toml").unwrap().unwrap();
        let e = Plan::new(&base, &spec).unwrap_err();
        assert_eq!(e.line, Some(14), "{e}");
        assert_eq!(e.key, "link.\"a->b\".rate");
        let mut cli = SweepSpec::empty();
        cli.set_axis(Axis::from_text("link.\"a->b\".rate", "20Tbps").unwrap());
        assert_eq!(Plan::new(&base, &cli).unwrap_err().line, None);
        let mut big = base.clone();
        big.seed = Some(acclab_scenario::spec::MAX_SEED);
        let mut seeds = SweepSpec::empty();
        seeds.seeds = Some(Seeds::Count(3));
        let e = Plan::new(&big, &seeds).unwrap_err();
        assert_eq!(e.key, "sweep.seeds", "{e}");
    }
}
