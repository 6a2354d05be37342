//! A sweep's tables, in pandas' tidy form.
//!
//! `runs.csv` has a row per run and entity: `run` (the run's id), `point`, `seed`, one column
//! per swept key (its value as written), `entity` (`run`, `flow`, `link`, or `fct`: a flow-size
//! bucket of the completion times, `id` its sizes or `all`), `id`, `kind`, then
//! every metric of summary.json under its name there (`throughput_bps`, `mean_queue_pkts`; a
//! nested one joined with `_`: `theory_throughput_bps`, `fairness_jain`), written exactly as
//! summary.json writes it, empty where an entity has none. The run's wall time is left out, so
//! the table of a sweep is the same whenever and wherever it runs.
//!
//! `aggregate.csv` has a row per point, entity and metric over the point's seeds: `n`, `mean`,
//! `std` (sample standard deviation) and the 95% confidence interval of the mean
//! (`ci95_low`, `ci95_high`: mean ∓ t(0.975, n − 1)·std/√n, Student's t), then `note`, which
//! says what makes the numbers worth less than they look: the interval is given only from
//! three seeds on (`one seed`, `2 seeds: no interval from fewer than 3`), never for replicates
//! that all gave the same value (`identical replicates`: the seeds drew nothing that changed
//! the result), and an interval that reaches below zero for a metric that never does is kept
//! as computed and said (`interval below 0 for a non-negative metric`).

use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::plan::Plan;

/// One entity of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct TidyRow {
    /// The run's index in the plan.
    pub run: usize,
    pub entity: &'static str,
    pub id: String,
    pub kind: String,
    /// One value per metric of [`Tidy::metrics`], as summary.json writes it.
    pub values: Vec<Option<String>>,
}

/// The tidy table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tidy {
    pub metrics: Vec<String>,
    pub rows: Vec<TidyRow>,
}

/// One point, entity and metric over seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct AggRow {
    pub point: usize,
    pub entity: &'static str,
    pub id: String,
    pub kind: String,
    pub metric: String,
    pub n: usize,
    pub mean: f64,
    pub std: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    /// What makes these numbers worth less than they look (see the module's header).
    pub note: Option<&'static str>,
}

/// [`AggRow::note`] of replicates that all gave the same value.
pub const IDENTICAL: &str = "identical replicates";
/// [`AggRow::note`] of an interval that reaches below zero for a non-negative metric.
pub const BELOW_ZERO: &str = "interval below 0 for a non-negative metric";

/// Numbers, nulls and booleans of `obj`, nested objects joined with `_`; strings and lists
/// (names, the theory's notes) are not metrics.
fn flatten(
    obj: &serde_json::Map<String, Value>,
    prefix: &str,
    skip: &[&str],
    out: &mut Vec<(String, Option<String>)>,
) {
    for (k, v) in obj {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let name = format!("{prefix}{k}");
        match v {
            Value::Number(n) => out.push((name, Some(n.to_string()))),
            Value::Bool(b) => out.push((name, Some(b.to_string()))),
            Value::Null => out.push((name, None)),
            Value::Object(o) => flatten(o, &format!("{name}_"), &[], out),
            Value::String(_) | Value::Array(_) => {}
        }
    }
}

type Entity = (&'static str, String, String, Vec<(String, Option<String>)>);

/// The entities of a summary (summary.json as a value): the run as a whole, its flows, its
/// links, each with its metrics.
pub fn entities(summary: &Value) -> Vec<Entity> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    let top = summary.as_object().unwrap_or(&empty);
    let mut run = Vec::new();
    let whole: serde_json::Map<String, Value> = top
        .iter()
        .filter(|(k, _)| ["sim_time_s", "events", "packet_hops", "fairness"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    flatten(&whole, "", &[], &mut run);
    out.push(("run", String::new(), String::new(), run));
    for (entity, list) in [("flow", "flows"), ("link", "links")] {
        for e in top
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let o = e.as_object().unwrap_or(&empty);
            let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let mut m = Vec::new();
            flatten(o, "", &["id", "kind", "src", "dst"], &mut m);
            out.push((entity, text("id"), text("kind"), m));
        }
    }
    // Flow completion times: one entity per size bucket (id: its sizes, "< 10 KB") and the
    // whole ("all"), with its slowdown percentiles, mean FCT, flows and unfinished flows.
    if let Some(fct) = top.get("fct").and_then(Value::as_object) {
        let buckets = fct
            .get("buckets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for b in buckets.chain(fct.get("overall")) {
            let o = b.as_object().unwrap_or(&empty);
            let mut m = Vec::new();
            flatten(o, "", &["sizes"], &mut m);
            let sizes = o.get("sizes").and_then(Value::as_str).unwrap_or("");
            out.push(("fct", sizes.to_string(), String::new(), m));
        }
    }
    out
}

impl Tidy {
    /// The table of `runs`: (index in the plan, summary) in plan order.
    pub fn of(runs: &[(usize, Value)]) -> Tidy {
        let mut metrics: Vec<String> = Vec::new();
        let mut index = std::collections::HashMap::<String, usize>::new();
        let mut staged = Vec::new();
        for (run, summary) in runs {
            for (entity, id, kind, m) in entities(summary) {
                for (name, _) in &m {
                    if !index.contains_key(name) {
                        index.insert(name.clone(), metrics.len());
                        metrics.push(name.clone());
                    }
                }
                staged.push((*run, entity, id, kind, m));
            }
        }
        let rows = staged
            .into_iter()
            .map(|(run, entity, id, kind, m)| {
                let mut values = vec![None; metrics.len()];
                for (name, v) in m {
                    values[index[&name]] = v;
                }
                TidyRow {
                    run,
                    entity,
                    id,
                    kind,
                    values,
                }
            })
            .collect();
        Tidy { metrics, rows }
    }

    /// runs.csv.
    pub fn to_csv(&self, plan: &Plan) -> Vec<u8> {
        let mut head: Vec<String> = ["run", "point", "seed"].map(String::from).to_vec();
        head.extend(plan.keys.iter().cloned());
        self.csv(head, |r| {
            let run = &plan.runs[r.run];
            let mut rec = vec![run.id.clone(), run.point.to_string(), run.seed.to_string()];
            rec.extend(plan.points[run.point].iter().cloned());
            rec
        })
    }

    /// The table of one run without the run's columns: `entity`, `id`, `kind`, metrics.
    pub fn entities_csv(&self) -> Vec<u8> {
        self.csv(Vec::new(), |_| Vec::new())
    }

    /// The rows as CSV, each after the columns `head` names and `lead` gives.
    fn csv(&self, head: Vec<String>, lead: impl Fn(&TidyRow) -> Vec<String>) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = head;
        header.extend(["entity", "id", "kind"].map(String::from));
        header.extend(self.metrics.iter().cloned());
        w.write_record(&header).expect("writing to memory");
        for r in &self.rows {
            let mut rec = lead(r);
            rec.extend([r.entity.to_string(), r.id.clone(), r.kind.clone()]);
            rec.extend(r.values.iter().map(|v| v.clone().unwrap_or_default()));
            w.write_record(&rec).expect("writing to memory");
        }
        w.into_inner().expect("writing to memory")
    }

    /// The aggregates over each point's seeds, points in plan order, entities in the order of
    /// their first run, metrics in the table's order (those with no value at a point left out).
    pub fn aggregate(&self, plan: &Plan) -> Vec<AggRow> {
        // (point, entity, id, kind) and the rows of its seeds.
        type Group<'a> = ((usize, &'static str, &'a str, &'a str), Vec<&'a TidyRow>);
        let mut groups: Vec<Group> = Vec::new();
        let mut at = std::collections::HashMap::new();
        for r in &self.rows {
            let point = plan.runs[r.run].point;
            let key = (point, r.entity, r.id.as_str(), r.kind.as_str());
            let i = *at.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(r);
        }
        groups.sort_by_key(|((point, ..), _)| *point);
        let mut out = Vec::new();
        for ((point, entity, id, kind), rows) in groups {
            for (m, metric) in self.metrics.iter().enumerate() {
                let xs: Vec<f64> = rows
                    .iter()
                    .filter_map(|r| r.values[m].as_deref())
                    .filter_map(|v| v.parse::<f64>().ok())
                    .collect();
                if xs.is_empty() {
                    continue;
                }
                let Stats {
                    mean,
                    std,
                    ci95,
                    note,
                } = stats(&xs);
                out.push(AggRow {
                    point,
                    entity,
                    id: id.to_string(),
                    kind: kind.to_string(),
                    metric: metric.clone(),
                    n: xs.len(),
                    mean,
                    std,
                    ci95,
                    note,
                });
            }
        }
        out
    }
}

/// A metric over a point's seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub mean: f64,
    /// The sample standard deviation (from two values).
    pub std: Option<f64>,
    /// The 95% confidence interval of the mean (Student's t), from three values that differ.
    pub ci95: Option<(f64, f64)>,
    /// Why there is no interval, or what is odd about it.
    pub note: Option<&'static str>,
}

/// Mean, sample standard deviation and the 95% confidence interval of the mean (Student's t),
/// with the caveats of the module's header.
pub fn stats(xs: &[f64]) -> Stats {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let mut out = Stats {
        mean,
        std: None,
        ci95: None,
        note: None,
    };
    if xs.len() < 2 {
        out.note = Some("one seed");
        return out;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let std = var.sqrt();
    out.std = Some(std);
    if xs.iter().all(|&x| x == xs[0]) {
        out.note = Some(IDENTICAL);
        return out;
    }
    if xs.len() < 3 {
        out.note = Some("2 seeds: no interval from fewer than 3");
        return out;
    }
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .map(|d| d.inverse_cdf(0.975))
        .unwrap_or(f64::NAN);
    let half = t * std / n.sqrt();
    out.ci95 = Some((mean - half, mean + half));
    if mean - half < 0.0 && xs.iter().all(|&x| x >= 0.0) {
        out.note = Some(BELOW_ZERO);
    }
    out
}

/// aggregate.csv.
pub fn aggregate_csv(plan: &Plan, rows: &[AggRow]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = vec!["point"];
    header.extend(plan.keys.iter().map(String::as_str));
    header.extend([
        "entity",
        "id",
        "kind",
        "metric",
        "n",
        "mean",
        "std",
        "ci95_low",
        "ci95_high",
        "note",
    ]);
    w.write_record(&header).expect("writing to memory");
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let mut rec = vec![r.point.to_string()];
        rec.extend(plan.points[r.point].iter().cloned());
        rec.extend([
            r.entity.to_string(),
            r.id.clone(),
            r.kind.clone(),
            r.metric.clone(),
            r.n.to_string(),
            r.mean.to_string(),
            opt(r.std),
            opt(r.ci95.map(|c| c.0)),
            opt(r.ci95.map(|c| c.1)),
            r.note.unwrap_or("").to_string(),
        ]);
        w.write_record(&rec).expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_interval_of_the_mean() {
        // Ten values 1..=10: mean 5.5, s = 3.02765, t(0.975, 9) = 2.26216.
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = stats(&xs);
        assert_eq!(s.mean, 5.5);
        assert!((s.std.unwrap() - 3.0276503540974917).abs() < 1e-12);
        let half = 2.262157162798205 * 3.0276503540974917 / 10f64.sqrt();
        let (lo, hi) = s.ci95.unwrap();
        assert!((lo - (5.5 - half)).abs() < 1e-9 && (hi - (5.5 + half)).abs() < 1e-9);
        assert_eq!(s.note, None);
    }

    #[test]
    fn intervals_are_refused_or_flagged_where_they_would_mislead() {
        let one = stats(&[2.0]);
        assert_eq!(
            (one.std, one.ci95, one.note),
            (None, None, Some("one seed"))
        );
        // Two seeds: a standard deviation, no interval (t(0.975, 1) = 12.7 makes it useless).
        let two = stats(&[1.0, 3.0]);
        assert!(two.std.is_some() && two.ci95.is_none());
        assert!(two.note.unwrap().contains("fewer than 3"));
        // Identical replicates: a zero-width interval would claim certainty the seeds never
        // tested.
        let same = stats(&[5.0, 5.0, 5.0, 5.0]);
        assert_eq!(
            (same.std, same.ci95, same.note),
            (Some(0.0), None, Some(IDENTICAL))
        );
        // A non-negative metric whose interval crosses zero: kept as computed, and said.
        let low = stats(&[0.0, 0.0, 10.0]);
        assert!(low.ci95.unwrap().0 < 0.0);
        assert_eq!(low.note, Some(BELOW_ZERO));
        assert_eq!(
            stats(&[-1.0, 0.0, 5.0]).note,
            None,
            "a metric that can be negative"
        );
    }

    #[test]
    fn entities_of_a_summary_flatten_nested_metrics() {
        let s: Value = serde_json::json!({
            "scenario": "x", "wall_time_s": 0.5, "sim_time_s": 1.0, "events": 10,
            "packet_hops": 4, "fairness": {"jain": 0.9},
            "flows": [{"id": "f0", "kind": "reno", "src": "a", "dst": "b",
                       "throughput_bps": 1.5e6, "mean_rtt_s": null,
                       "theory": {"throughput_bps": 2e6}}],
            "links": [{"id": "a->b", "utilization": 0.25}]
        });
        let e = entities(&s);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].0, "run");
        assert!(e[0].3.iter().all(|(k, _)| k != "wall_time_s"));
        assert!(e[0]
            .3
            .contains(&("fairness_jain".into(), Some("0.9".into()))));
        assert_eq!((e[1].1.as_str(), e[1].2.as_str()), ("f0", "reno"));
        assert!(e[1]
            .3
            .contains(&("theory_throughput_bps".into(), Some("2000000.0".into()))));
        assert!(e[1].3.contains(&("mean_rtt_s".into(), None)));
        assert_eq!(
            e[2].3,
            vec![("utilization".to_string(), Some("0.25".to_string()))]
        );
    }

    /// A run with finite flows adds an `fct` entity per size bucket and one for all flows, so
    /// that a sweep over load or scheme tables and charts slowdown by size.
    #[test]
    fn flow_completion_buckets_are_entities() {
        let s: Value = serde_json::json!({
            "sim_time_s": 1.0, "flows": [], "links": [],
            "fct": {
                "buckets": [
                    {"sizes": "< 10 KB", "flows": 3, "unfinished": 0, "slowdown_p50": 1.5,
                     "slowdown_p95": 2.0, "slowdown_p99": 2.5, "mean_fct_s": 1e-5},
                    {"sizes": ">= 10 KB", "flows": 0, "unfinished": 0, "slowdown_p50": null,
                     "slowdown_p95": null, "slowdown_p99": null, "mean_fct_s": null}
                ],
                "overall": {"sizes": "all", "flows": 3, "unfinished": 0, "slowdown_p50": 1.5,
                            "slowdown_p95": 2.0, "slowdown_p99": 2.5, "mean_fct_s": 1e-5}
            }
        });
        let e = entities(&s);
        let fct: Vec<_> = e.iter().filter(|e| e.0 == "fct").collect();
        assert_eq!(
            fct.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(),
            ["< 10 KB", ">= 10 KB", "all"]
        );
        assert!(fct[0]
            .3
            .contains(&("slowdown_p99".into(), Some("2.5".into()))));
        assert!(fct[1].3.contains(&("slowdown_p99".into(), None)));
        assert!(fct[2].3.iter().all(|(k, _)| k != "sizes"));
    }
}
