//! Flow completion times, the datacenter's figure: `fct.csv` (one row per finite flow, finished
//! or not) and the slowdown percentiles by flow size that `summary.json` and the terminal show.
//!
//! A flow's slowdown is its completion time over the ideal one (the flow alone in the network:
//! `acclab_scenario::Scenario::ideal_fct`), so 1 is the best a scheme can do. Flows still
//! running at the end of the run are listed in `fct.csv` with an empty `fct_s` and counted as
//! unfinished in their bucket, never dropped: a scheme that starves large flows shows it.

use std::borrow::Cow;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::plot::{Chart, Series};

/// One finite flow. A run's records borrow their names from its scenario and are made one at a
/// time, as they are written or summarised (a million-flow run keeps none); those read back
/// from `fct.csv` own theirs.
#[derive(Clone, Debug, PartialEq)]
pub struct FctRecord<'a> {
    pub id: Cow<'a, str>,
    /// The end nodes.
    pub src: Cow<'a, str>,
    pub dst: Cow<'a, str>,
    pub size_bytes: u64,
    pub start_s: f64,
    /// Completion time, s; `None`: unfinished at the end of the run.
    pub fct_s: Option<f64>,
    pub ideal_fct_s: f64,
    /// The sender's retransmitted packets and retransmission timeouts over the run.
    pub retransmits: u64,
    pub timeouts: u64,
}

impl FctRecord<'_> {
    pub fn slowdown(&self) -> Option<f64> {
        Some(self.fct_s? / self.ideal_fct_s)
    }
}

/// The slowdowns of one size bucket.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FctBucket {
    /// `"<10KB"`, `"10KB-100KB"`, …, `"all"`.
    pub sizes: String,
    /// Flows in the bucket, finished or not.
    pub flows: usize,
    pub unfinished: usize,
    /// Slowdown percentiles of the finished flows (nearest rank); `None` when none finished.
    pub slowdown_p50: Option<f64>,
    pub slowdown_p95: Option<f64>,
    pub slowdown_p99: Option<f64>,
    /// Mean completion time of the finished flows, s.
    pub mean_fct_s: Option<f64>,
}

/// The `fct` part of `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FctSummary {
    /// One per size bucket, smallest first.
    pub buckets: Vec<FctBucket>,
    /// Every finite flow.
    pub overall: FctBucket,
}

/// The nearest-rank `q`-quantile of `sorted` (ascending), `q` in (0, 1]; `None` when empty.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn size_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1_000_000 && b % 1_000_000 == 0 => format!("{}MB", b / 1_000_000),
        b if b >= 1_000 && b % 1_000 == 0 => format!("{}KB", b / 1_000),
        b => format!("{b}B"),
    }
}

/// One bucket's flows as they are counted: each finished flow's slowdown and the sum of their
/// completion times (in the records' order, as the mean has always been summed).
#[derive(Default)]
struct Tally {
    flows: usize,
    slowdowns: Vec<f64>,
    fct_sum: f64,
}

impl Tally {
    fn add(&mut self, r: &FctRecord) {
        self.flows += 1;
        if let (Some(fct), Some(slowdown)) = (r.fct_s, r.slowdown()) {
            self.slowdowns.push(slowdown);
            self.fct_sum += fct;
        }
    }

    fn bucket(mut self, sizes: String) -> FctBucket {
        self.slowdowns.sort_by(f64::total_cmp);
        let done = self.slowdowns.len();
        FctBucket {
            sizes,
            flows: self.flows,
            unfinished: self.flows - done,
            slowdown_p50: percentile(&self.slowdowns, 0.50),
            slowdown_p95: percentile(&self.slowdowns, 0.95),
            slowdown_p99: percentile(&self.slowdowns, 0.99),
            mean_fct_s: (done > 0).then(|| self.fct_sum / done as f64),
        }
    }
}

/// The slowdowns by size bucket (`edges`: the buckets' upper edges, ascending) and overall,
/// from the records one at a time.
pub fn summarise<'a>(
    records: impl IntoIterator<Item = FctRecord<'a>>,
    edges: &[u64],
) -> FctSummary {
    let mut tallies: Vec<Tally> = (0..=edges.len()).map(|_| Tally::default()).collect();
    let mut overall = Tally::default();
    for r in records {
        tallies[edges.partition_point(|&hi| hi <= r.size_bytes)].add(&r);
        overall.add(&r);
    }
    let mut lo = 0u64;
    let buckets = edges
        .iter()
        .chain(std::iter::once(&u64::MAX))
        .zip(tallies)
        .map(|(&hi, t)| {
            let label = match (lo, hi) {
                (0, hi) => format!("<{}", size_label(hi)),
                (lo, u64::MAX) => format!(">={}", size_label(lo)),
                (lo, hi) => format!("{}-{}", size_label(lo), size_label(hi)),
            };
            lo = hi;
            t.bucket(label)
        })
        .collect();
    FctSummary {
        buckets,
        overall: overall.bucket("all".into()),
    }
}

/// Writes `fct.csv` into `dir`: id, src, dst, size_bytes, start_s, fct_s, ideal_fct_s, slowdown,
/// retransmits, timeouts (an unfinished flow's fct_s and slowdown empty).
pub fn write_fct_csv<'a>(
    dir: &Path,
    records: impl IntoIterator<Item = FctRecord<'a>>,
) -> std::io::Result<()> {
    let mut records = records.into_iter();
    crate::files::write_atomic_with(&dir.join("fct.csv"), |out| write_rows(out, &mut records))
}

fn write_rows<'a>(
    out: &mut dyn std::io::Write,
    records: &mut dyn Iterator<Item = FctRecord<'a>>,
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let io = |e: csv::Error| std::io::Error::other(e);
    w.write_record([
        "id",
        "src",
        "dst",
        "size_bytes",
        "start_s",
        "fct_s",
        "ideal_fct_s",
        "slowdown",
        "retransmits",
        "timeouts",
    ])
    .map_err(io)?;
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.9}"));
    for r in records {
        w.write_record([
            r.id.to_string(),
            r.src.to_string(),
            r.dst.to_string(),
            r.size_bytes.to_string(),
            format!("{:.9}", r.start_s),
            opt(r.fct_s),
            format!("{:.9}", r.ideal_fct_s),
            r.slowdown().map_or(String::new(), |s| format!("{s:.6}")),
            r.retransmits.to_string(),
            r.timeouts.to_string(),
        ])
        .map_err(io)?;
    }
    w.flush()
}

/// Reads `fct.csv` from `dir` row by row; `None` when there is none (a run without finite
/// flows). A file written before the retransmits and timeouts columns reads them as 0.
pub fn read_fct_csv(
    dir: &Path,
) -> std::io::Result<Option<impl Iterator<Item = std::io::Result<FctRecord<'static>>>>> {
    let path = dir.join("fct.csv");
    if !path.is_file() {
        return Ok(None);
    }
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    let r = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    Ok(Some(r.into_records().map(move |row| {
        let row = row.map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let num = |i: usize| -> std::io::Result<f64> {
            row.get(i)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(format!("{}: a bad row {row:?}", path.display())))
        };
        let text = |i: usize| Cow::Owned(row.get(i).unwrap_or_default().to_string());
        let count = |i: usize| match row.get(i) {
            None => Ok(0),
            Some(_) => num(i).map(|v| v as u64),
        };
        Ok(FctRecord {
            id: text(0),
            src: text(1),
            dst: text(2),
            size_bytes: num(3)? as u64,
            start_s: num(4)?,
            fct_s: num(5).ok(),
            ideal_fct_s: num(6)?,
            retransmits: count(8)?,
            timeouts: count(9)?,
        })
    })))
}

/// The field's two figures of a run with finite flows: `slowdown` (the median and 99th
/// percentile slowdown against flow size, in logarithmic size bins — up to ten per decade, about
/// 30 finished flows each — holding at least one finished flow; the ideal's 1 as a reference) and `fct-cdf` (the distribution of completion
/// times). `None` when no flow finished.
pub fn charts<'a>(
    name: &str,
    records: impl IntoIterator<Item = FctRecord<'a>>,
) -> Option<Vec<(&'static str, Chart)>> {
    let done: Vec<(f64, f64, f64)> = records
        .into_iter()
        .filter_map(|r| Some((r.size_bytes as f64, r.slowdown()?, r.fct_s?)))
        .collect();
    if done.is_empty() {
        return None;
    }
    let (lo, hi) = done.iter().fold((f64::INFINITY, 0.0f64), |(a, b), d| {
        (a.min(d.0), b.max(d.0))
    });
    // Up to ten bins per decade of size, and about 30 finished flows per bin, so that a
    // small run's percentiles are not single flows.
    let decades = (hi.max(lo * 1.000_001) / lo).log10();
    let bins = (done.len() / 30).clamp(1, ((decades * 10.0).ceil() as usize).max(1));
    let bin_of = |size: f64| (((size / lo).log10() / decades * bins as f64) as usize).min(bins - 1);
    let mut per_bin: Vec<Vec<f64>> = vec![Vec::new(); bins];
    for &(size, slowdown, _) in &done {
        per_bin[bin_of(size)].push(slowdown);
    }
    let (mut p50, mut p99) = (Vec::new(), Vec::new());
    for (b, v) in per_bin.iter_mut().enumerate() {
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        // The bin's geometric middle.
        let x = lo * 10f64.powf(decades * (b as f64 + 0.5) / bins as f64);
        p50.push((x, percentile(v, 0.5).expect("not empty")));
        p99.push((x, percentile(v, 0.99).expect("not empty")));
    }
    let mut ideal = Series::level("ideal (alone in the network)", 1.0, lo, hi);
    ideal.reference = true;
    let slowdown = Chart {
        title: format!("{name}: FCT slowdown by flow size ({} flows)", done.len()),
        x_label: "flow size (bytes)".into(),
        y_label: "slowdown (FCT / ideal FCT)".into(),
        series: vec![
            Series::new("median", p50).with_markers(),
            Series::new("99th percentile", p99).with_markers(),
            ideal,
        ],
        log_x: true,
        log_y: true,
        ..Chart::default()
    };
    let mut fct: Vec<f64> = done.iter().map(|d| d.2 * 1e3).collect();
    fct.sort_by(f64::total_cmp);
    let n = fct.len() as f64;
    let cdf: Vec<(f64, f64)> = fct
        .iter()
        .enumerate()
        .map(|(i, &x)| (x, (i + 1) as f64 / n))
        .collect();
    let cdf = Chart {
        title: format!("{name}: flow completion times"),
        x_label: "flow completion time (ms)".into(),
        y_label: "fraction of finished flows".into(),
        series: vec![Series::new("all flows", cdf)],
        log_x: true,
        log_y: false,
        ..Chart::default()
    };
    Some(vec![("slowdown", slowdown), ("fct-cdf", cdf)])
}

/// Writes the figures of [`charts`] into `out` from `dir`'s `fct.csv`, when it has one with a
/// finished flow (`name`: the scenario's, for the titles); their file names.
pub fn write_fct_plots(
    (dir, out): (&Path, &Path),
    name: &str,
    options: &crate::plot::PlotOptions,
) -> std::io::Result<Vec<String>> {
    let mut files = Vec::new();
    if let Some(rows) = read_fct_csv(dir)? {
        let mut bad = None;
        let records = rows.map_while(|r| r.map_err(|e| bad = Some(e)).ok());
        let charts = charts(name, records);
        if let Some(e) = bad {
            return Err(e);
        }
        for (stem, c) in charts.unwrap_or_default() {
            files.extend(options.write(out, stem, c)?);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(size: u64, fct: Option<f64>, ideal: f64) -> FctRecord<'static> {
        FctRecord {
            id: format!("f{size}").into(),
            src: "h0".into(),
            dst: "h1".into(),
            size_bytes: size,
            start_s: 0.0,
            fct_s: fct,
            ideal_fct_s: ideal,
            retransmits: 0,
            timeouts: 0,
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(50.0));
        assert_eq!(percentile(&v, 0.99), Some(99.0));
        assert_eq!(percentile(&v[..1], 0.99), Some(1.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn buckets_split_by_size_and_count_the_unfinished() {
        let records = vec![
            rec(5_000, Some(2e-6), 1e-6),
            rec(9_999, Some(4e-6), 1e-6),
            rec(10_000, Some(3e-5), 1e-5),
            rec(2_000_000, None, 1e-3),
        ];
        let s = summarise(records, &acclab_scenario::spec::DEFAULT_FCT_BUCKETS);
        let labels: Vec<&str> = s.buckets.iter().map(|b| b.sizes.as_str()).collect();
        assert_eq!(labels, ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]);
        assert_eq!(s.buckets[0].flows, 2);
        assert_eq!(s.buckets[0].slowdown_p50, Some(2.0));
        assert_eq!(s.buckets[0].slowdown_p99, Some(4.0));
        assert!((s.buckets[1].slowdown_p50.unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(s.buckets[2].flows, 0);
        assert_eq!(s.buckets[2].slowdown_p50, None);
        assert_eq!((s.buckets[3].flows, s.buckets[3].unfinished), (1, 1));
        assert_eq!((s.overall.flows, s.overall.unfinished), (4, 1));
    }

    #[test]
    fn the_csv_lists_unfinished_flows_with_an_empty_fct() {
        let dir = tempfile::tempdir().unwrap();
        let stalled = FctRecord {
            retransmits: 3,
            timeouts: 1,
            ..rec(5000, None, 1e-6)
        };
        write_fct_csv(dir.path(), [rec(1000, Some(2e-6), 1e-6), stalled.clone()]).unwrap();
        let text = std::fs::read_to_string(dir.path().join("fct.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "id,src,dst,size_bytes,start_s,fct_s,ideal_fct_s,slowdown,retransmits,timeouts"
        );
        assert_eq!(
            lines[1],
            "f1000,h0,h1,1000,0.000000000,0.000002000,0.000001000,2.000000,0,0"
        );
        assert_eq!(lines[2], "f5000,h0,h1,5000,0.000000000,,0.000001000,,3,1");
        let read: Vec<FctRecord> = read_fct_csv(dir.path())
            .unwrap()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(read[1], stalled);
        // A file from before the last two columns: they read as 0.
        let old: String = lines
            .iter()
            .map(|l| l.rsplitn(3, ',').nth(2).unwrap().to_string() + "\n")
            .collect();
        std::fs::write(dir.path().join("fct.csv"), old).unwrap();
        let read: Vec<FctRecord> = read_fct_csv(dir.path())
            .unwrap()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!((read[1].retransmits, read[1].timeouts), (0, 0));
        assert_eq!(read[1].size_bytes, 5000);
    }

    #[test]
    fn the_slowdown_chart_bins_sizes_logarithmically() {
        let records: Vec<FctRecord> = (0..1000)
            .map(|i| {
                let size = 1000 + i * 1000;
                rec(size, Some(2e-6 * (1 + i % 3) as f64), 1e-6)
            })
            .collect();
        let drawn = charts("t", records).unwrap();
        let (stem, slowdown) = &drawn[0];
        assert_eq!(*stem, "slowdown");
        let median = &slowdown.series[0].points;
        // 1 KB to 1 MB in 1 KB steps: three decades, 30 bins; the three that hold no size
        // (1.26–2 KB and 3.2–4 KB) are left out.
        assert_eq!(median.len(), 27);
        assert!(median.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(median.iter().all(|p| (2.0..=6.0).contains(&p.1)));
        let cdf = &drawn[1].1.series[0].points;
        assert_eq!(cdf.len(), 1000);
        assert_eq!(cdf.last().unwrap().1, 1.0);
        assert!(charts("t", [rec(1000, None, 1e-6)]).is_none());
    }
}
