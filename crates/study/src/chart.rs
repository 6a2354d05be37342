//! A sweep's charts: each plotted metric against each numeric swept key — one line per entity
//! (and per value of the other swept keys), the mean over the seeds with its 95% confidence
//! bar, and the theory's prediction, where it has one, as a thin line of the same colour.

use acclab_results::plot::{Chart, Series};
use acclab_scenario::sweep_spec::number_and_unit;

use crate::plan::Plan;
use crate::table::AggRow;

/// The most data lines on one chart.
const MAX_LINES: usize = 12;

/// The theory's column for a measured metric.
fn theory_of(metric: &str) -> String {
    let m = match metric {
        "mean_rtt_s" => "rtt_s",
        "mean_cwnd_bytes" => "cwnd_bytes",
        "mean_queue_pkts" => "queue_pkts",
        m => m,
    };
    format!("theory_{m}")
}

/// How a metric is shown: scale and unit.
fn display(metric: &str) -> (f64, &'static str) {
    if metric.ends_with("_bps") {
        (1e-6, "Mb/s")
    } else if metric.ends_with("_s") {
        (1e3, "ms")
    } else if metric.ends_with("_bytes") {
        (1e-3, "KB")
    } else {
        (1.0, "")
    }
}

/// The numbers of a swept key's values, if they all are numbers in one unit.
fn numeric(plan: &Plan, k: usize) -> Option<(Vec<f64>, String)> {
    let mut unit = None;
    let xs = plan
        .points
        .iter()
        .map(|p| {
            let (x, u) = number_and_unit(&p[k]).filter(|(x, _)| x.is_finite())?;
            match &unit {
                None => unit = Some(u),
                Some(v) if *v != u => return None,
                _ => {}
            }
            Some(x)
        })
        .collect::<Option<Vec<f64>>>()?;
    Some((xs, unit.unwrap_or_default()))
}

/// A chart line: its name, its points (x, mean, 95% CI) and the theory's points.
type Line = (String, Vec<(f64, f64, Option<(f64, f64)>)>, Vec<(f64, f64)>);

/// Whether swept key `k` takes more than one value.
pub fn varies(plan: &Plan, k: usize) -> bool {
    plan.points.iter().any(|p| p[k] != plan.points[0][k])
}

/// The charts (file stem and chart) and notes on what was left out.
pub fn charts(plan: &Plan, agg: &[AggRow]) -> (Vec<(String, Chart)>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let seeds = plan.seeds.len();
    let short = short_names(&plan.keys);
    // Links worth a line: those some point loads to half their rate or more.
    let busy = |id: &str| {
        agg.iter()
            .any(|r| r.entity == "link" && r.id == id && r.metric == "utilization" && r.mean >= 0.5)
    };
    for metric in &plan.metrics {
        let rows: Vec<&AggRow> = agg
            .iter()
            .filter(|r| &r.metric == metric)
            .filter(|r| r.entity != "link" || busy(&r.id))
            .collect();
        if rows.is_empty() {
            notes.push(format!("no chart of {metric:?}: no flow or link has that metric (see the columns of runs.csv)"));
            continue;
        }
        let theory = theory_of(metric);
        let (scale, unit) = display(metric);
        for (k, key) in plan.keys.iter().enumerate() {
            let Some((xs, x_unit)) = numeric(plan, k) else {
                continue;
            };
            // A key set to one value is a fixed change of the scenario, not an axis.
            if xs.iter().all(|&x| x == xs[0]) {
                continue;
            }
            // A line per entity and combination of the other keys' values, in first-seen order.
            let mut lines: Vec<Line> = Vec::new();
            let (mut clipped, mut identical) = (false, false);
            for r in &rows {
                let others: Vec<String> = plan
                    .keys
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k && varies(plan, j))
                    .map(|(j, _)| format!("{}={}", short[j], plan.points[r.point][j]))
                    .collect();
                let name = std::iter::once(if r.id.is_empty() {
                    "run".to_string()
                } else {
                    r.id.clone()
                })
                .chain(others)
                .collect::<Vec<_>>()
                .join(", ");
                let line = match lines.iter().position(|l| l.0 == name) {
                    Some(i) => i,
                    None => {
                        lines.push((name, Vec::new(), Vec::new()));
                        lines.len() - 1
                    }
                };
                let x = xs[r.point];
                // An interval below zero of a non-negative metric is drawn from 0, and said.
                let below_zero = r.note == Some(crate::table::BELOW_ZERO);
                clipped |= below_zero;
                identical |= r.note == Some(crate::table::IDENTICAL);
                lines[line].1.push((
                    x,
                    r.mean * scale,
                    r.ci95.map(|(lo, hi)| {
                        let lo = if below_zero { lo.max(0.0) } else { lo };
                        (lo * scale, hi * scale)
                    }),
                ));
                if let Some(t) = agg.iter().find(|t| {
                    t.point == r.point && t.entity == r.entity && t.id == r.id && t.metric == theory
                }) {
                    lines[line].2.push((x, t.mean * scale));
                }
            }
            if lines.len() > MAX_LINES {
                notes.push(format!(
                    "{metric} vs {key}: {} lines, the first {MAX_LINES} drawn (all are in aggregate.csv)",
                    lines.len()
                ));
                lines.truncate(MAX_LINES);
            }
            let mut series = Vec::new();
            for (name, mut pts, mut th) in lines {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                th.sort_by(|a, b| a.0.total_cmp(&b.0));
                let errors = if pts.iter().all(|p| p.2.is_some()) {
                    pts.iter().filter_map(|p| p.2).collect()
                } else {
                    Vec::new()
                };
                series.push(
                    Series::new(name.clone(), pts.iter().map(|p| (p.0, p.1)).collect())
                        .with_markers()
                        .with_errors(errors),
                );
                if !th.is_empty() {
                    series.push(Series {
                        name: format!("{name} (theory)"),
                        points: th,
                        reference: true,
                        ..Series::default()
                    });
                }
            }
            let unit_label = |u: &str| {
                if u.is_empty() {
                    String::new()
                } else {
                    format!(" ({u})")
                }
            };
            let any_ci = series.iter().any(|s| !s.errors.is_empty());
            let mut said = Vec::new();
            if seeds == 2 {
                said.push("2 seeds: no confidence interval from fewer than 3".to_string());
            }
            if identical {
                said.push(
                    "at some points every seed gave the same value: no interval there".to_string(),
                );
            }
            if clipped {
                said.push(
                    "intervals below 0 drawn from 0 (a non-negative metric; aggregate.csv keeps them as computed)"
                        .to_string(),
                );
            }
            let chart = Chart {
                title: format!(
                    "{}: {metric} vs {} — mean of {seeds} seed{}{}",
                    plan.scenario,
                    short[k],
                    if seeds == 1 { "" } else { "s" },
                    if any_ci { ", 95% CI" } else { "" }
                ),
                x_label: format!("{key}{}", unit_label(&x_unit)),
                y_label: format!("{metric}{}", unit_label(unit)),
                series,
                log_x: plan.log_keys.contains(key),
                log_y: false,
                note: (!said.is_empty()).then(|| said.join("; ")),
                ..Chart::default()
            };
            out.push((
                format!("{}-vs-{}", file_part(metric), file_part(&short[k])),
                chart,
            ));
        }
    }
    if !plan.keys.is_empty() && out.is_empty() && notes.is_empty() {
        notes.push("no chart: no swept key has numeric values (a categorical key is a column of the tables)".into());
    }
    (out, notes)
}

/// The shortest tail of each key path, of two parts or more, that no other key shares:
/// `flow.f0.params.weight` → `params.weight`, or `f0.params.weight` beside
/// `flow.f1.params.weight`.
pub fn short_names(keys: &[String]) -> Vec<String> {
    let segs: Vec<Vec<String>> = keys
        .iter()
        .map(|k| acclab_scenario::spec::key_segments(k))
        .collect();
    let tail = |s: &[String], n: usize| s[s.len().saturating_sub(n)..].join(".");
    segs.iter()
        .map(|s| {
            (2..=s.len().max(2))
                .map(|n| tail(s, n))
                .find(|t| {
                    segs.iter()
                        .filter(|o| &tail(o, t.matches('.').count() + 1) == t)
                        .count()
                        <= 1
                })
                .unwrap_or_else(|| s.join("."))
        })
        .collect()
}

/// Letters, digits, `-`, `_` and `.` kept, anything else `_`.
fn file_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_unique() {
        let keys: Vec<String> = [
            "flow.a.params.w",
            "flow.b.params.w",
            "link.\"r->d\".rate",
            "duration",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            short_names(&keys),
            ["a.params.w", "b.params.w", "r->d.rate", "duration"]
        );
    }
}
