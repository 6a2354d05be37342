//! The distribution of queue occupancy in a fabric, per tier and direction: every link of a
//! generated fabric (its nodes named as [`acclab_scenario::node_role`] reads them) sampled every
//! sample interval over the measurement window, one CDF per kind of port (`edge→host` — the
//! ToR's downlinks, where incasts queue —, `host→edge`, `edge→agg`, `agg→core`, …). Time-sampled
//! occupancy, as the datacenter literature plots it; the links of other names are left out.

use std::collections::BTreeMap;
use std::path::Path;

use acclab_scenario::{node_role, Scenario};

use crate::plot::{Chart, Series};

/// At most this many points per CDF (quantiles of the samples).
const MAX_POINTS: usize = 400;

/// The kind of port a link `from->to` is (`edge→host`), if both ends are fabric nodes.
pub fn port_kind(link: &str) -> Option<String> {
    let (a, b) = link.split_once("->")?;
    Some(format!("{}→{}", node_role(a)?, node_role(b)?))
}

/// The chart of queue samples `(link, time_s, queue_pkts)` inside `window` (from, to], one CDF
/// per port kind in the order first seen; `None` when no link is a fabric port.
pub fn queue_cdf_chart(
    name: &str,
    window: (f64, f64),
    every: &str,
    samples: impl IntoIterator<Item = (String, f64, f64)>,
) -> Option<Chart> {
    let mut order: Vec<String> = Vec::new();
    let mut by_kind: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut kinds: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (link, t, q) in samples {
        if !(t > window.0 && t <= window.1) {
            continue;
        }
        let kind = kinds.entry(link).or_insert_with_key(|l| port_kind(l));
        let Some(kind) = kind else { continue };
        if !by_kind.contains_key(kind) {
            order.push(kind.clone());
        }
        by_kind.entry(kind.clone()).or_default().push(q);
    }
    if order.is_empty() {
        return None;
    }
    let series = order
        .iter()
        .map(|k| {
            let v = by_kind.get_mut(k).expect("seen");
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let m = (n - 1).min(MAX_POINTS);
            let points = (0..=m)
                .map(|i| {
                    let at = (i * (n - 1)).checked_div(m).unwrap_or(0);
                    (v[at], (at + 1) as f64 / n as f64)
                })
                .collect();
            Series::new(format!("{k} ({n} samples)"), points)
        })
        .collect();
    Some(Chart {
        title: format!("{name}: queue occupancy by port kind (every link, every {every})"),
        x_label: "queue (packets)".into(),
        y_label: "fraction of samples at or below".into(),
        series,
        log_x: false,
        log_y: false,
        ..Chart::default()
    })
}

/// Writes `queue-cdf` (see [`queue_cdf_chart`]) into `out` from `dir`'s `links.csv`, when
/// the scenario's links include fabric ports; the file names.
pub fn write_queue_cdf(
    (dir, out): (&Path, &Path),
    sc: &Scenario,
    options: &crate::plot::PlotOptions,
) -> std::io::Result<Vec<String>> {
    let mut r = csv::Reader::from_path(dir.join("links.csv")).map_err(std::io::Error::other)?;
    let mut samples = Vec::new();
    for row in r.records() {
        let row = row.map_err(std::io::Error::other)?;
        let num = |i: usize| row.get(i).and_then(|v| v.parse::<f64>().ok());
        if let (Some(t), Some(link), Some(q)) = (num(0), row.get(1), num(2)) {
            samples.push((link.to_string(), t, q));
        }
    }
    let (from, to) = sc.output.window;
    let every = sc.output.sample_interval.to_string();
    match queue_cdf_chart(
        &sc.name,
        (from.as_secs_f64(), to.as_secs_f64()),
        &every,
        samples,
    ) {
        Some(c) => options.write(out, "queue-cdf", c),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_kinds_name_both_ends() {
        assert_eq!(port_kind("edge0_0->h1").as_deref(), Some("edge→host"));
        assert_eq!(port_kind("agg1_0->core2").as_deref(), Some("agg→core"));
        assert_eq!(port_kind("r1->r2"), None);
        assert_eq!(port_kind("h0->r1"), None);
    }

    /// Each port kind's CDF holds exactly its samples in the window, ends at 1, and never falls.
    #[test]
    fn one_cdf_per_port_kind_over_the_window() {
        let mut samples = Vec::new();
        for t in 1..=10 {
            let t = t as f64 / 10.0;
            samples.push(("edge0_0->h0".to_string(), t, 10.0 * t));
            samples.push(("edge0_0->h1".to_string(), t, 0.0));
            samples.push(("h0->edge0_0".to_string(), t, 1.0));
            samples.push(("r1->r2".to_string(), t, 5.0));
        }
        let c = queue_cdf_chart("x", (0.5, 1.0), "100ms", samples).unwrap();
        assert_eq!(c.series.len(), 2);
        assert_eq!(c.series[0].name, "edge→host (10 samples)");
        assert_eq!(c.series[1].name, "host→edge (5 samples)");
        let cdf = &c.series[0].points;
        assert_eq!(cdf.first(), Some(&(0.0, 0.1)));
        assert_eq!(cdf.last(), Some(&(10.0, 1.0)));
        assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(
            queue_cdf_chart("x", (0.5, 1.0), "1s", vec![("r1->r2".into(), 1.0, 3.0)]).is_none()
        );
    }
}
