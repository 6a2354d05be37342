//! The standard plots of a run (goodput, window, queue, utilisation), drawn from its
//! flows.csv and links.csv with the chart engine of [`super`].

use std::path::Path;

use plotters::prelude::{RGBColor, BLACK};

use super::{tick, write_figure, Chart, Series, Style, MAX_SERIES};
use crate::samples::FLOW_COLUMNS;
use acclab_scenario::Scenario;

/// The most points a run plot draws per series: longer series are thinned to every k-th
/// sample, so that plotting a run needs memory for its picture, not for its duration.
const MAX_POINTS: usize = 4000;

/// Reads the series to plot from a run's CSV file: for each row whose `key` column is one of
/// `keys` (in that order), `(time_s, value(row))` for every `stride`-th row of that key.
fn read_series(
    path: &Path,
    key: usize,
    keys: &[String],
    stride: usize,
    in_range: &dyn Fn(f64) -> bool,
    value: &dyn Fn(&csv::StringRecord) -> Option<f64>,
) -> std::io::Result<Vec<Series>> {
    let mut out: Vec<Series> = keys
        .iter()
        .map(|k| Series::new(k.clone(), vec![]))
        .collect();
    let mut seen = vec![0usize; keys.len()];
    let index: std::collections::HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut r = csv::Reader::from_path(path).map_err(std::io::Error::other)?;
    for row in r.records() {
        let row = row.map_err(std::io::Error::other)?;
        let Some(&i) = row.get(key).and_then(|k| index.get(k)) else {
            continue;
        };
        if !num(&row, 0).is_some_and(in_range) {
            continue;
        }
        seen[i] += 1;
        if !(seen[i] - 1).is_multiple_of(stride) {
            continue;
        }
        let t = row.get(0).and_then(|t| t.parse().ok());
        if let (Some(t), Some(v)) = (t, value(&row)) {
            out[i].points.push((t, v));
        }
    }
    out.retain(|s| !s.points.is_empty());
    Ok(out)
}

/// The mean over every flow of a value in flows.csv at each sample time (the flows that have a
/// row then: a finite flow's while it is open), every `stride`-th sample, read as a stream.
fn mean_over_flows(
    path: &Path,
    stride: usize,
    in_range: &dyn Fn(f64) -> bool,
    value: &dyn Fn(&csv::StringRecord) -> Option<f64>,
) -> std::io::Result<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let (mut at, mut sum, mut n, mut sample) = (f64::NAN, 0.0, 0usize, 0usize);
    let mut r = csv::Reader::from_path(path).map_err(std::io::Error::other)?;
    let mut flush = |at: f64, sum: f64, n: usize, sample: usize| {
        if n > 0 && (sample - 1).is_multiple_of(stride) {
            out.push((at, sum / n as f64));
        }
    };
    for row in r.records() {
        let row = row.map_err(std::io::Error::other)?;
        let Some(t) = num(&row, 0).filter(|&t| in_range(t)) else {
            continue;
        };
        if t != at {
            flush(at, sum, n, sample);
            (at, sum, n) = (t, 0.0, 0);
            sample += 1;
        }
        if let Some(v) = value(&row) {
            sum += v;
            n += 1;
        }
    }
    flush(at, sum, n, sample);
    Ok(out)
}

/// A number in column `i` of `row`, if there is one.
fn num(row: &csv::StringRecord, i: usize) -> Option<f64> {
    row.get(i).and_then(|v| v.parse().ok())
}

/// How a run's throughput plot is smoothed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Smoothing {
    /// A trailing mean over 1 s, or over a twentieth of the run when that is shorter, and never
    /// less than one sample.
    #[default]
    Auto,
    /// The samples as they are (each the goodput of one sample interval).
    Raw,
    /// A trailing mean over this long (rounded to whole samples).
    Over(acclab_core::Duration),
}

impl Smoothing {
    /// `auto`, `none`, or a duration (`500ms`, `2s`).
    pub fn parse(s: &str) -> Result<Smoothing, String> {
        match s {
            "auto" => Ok(Smoothing::Auto),
            "none" | "raw" => Ok(Smoothing::Raw),
            _ => match acclab_core::Duration::parse(s) {
                Ok(d) if d.0 > 0 => Ok(Smoothing::Over(d)),
                Ok(_) => Err(format!(
                    "{s:?}: a smoothing window must be above 0 (or \"none\")"
                )),
                Err(e) => Err(format!(
                    "{s:?}: expected auto, none or a duration such as 500ms ({e})"
                )),
            },
        }
    }

    /// Samples per mean for a run of `sc`.
    fn samples(self, sc: &Scenario) -> usize {
        let every = sc.output.sample_interval.0.max(1);
        let window = match self {
            Smoothing::Raw => return 1,
            Smoothing::Auto => 1_000_000_000u64.min(sc.duration.0 / 20),
            Smoothing::Over(d) => d.0,
        };
        (window.div_ceil(every) as usize).max(1)
    }
}

/// Options of a run's figures.
#[derive(Clone, Debug, Default)]
pub struct PlotOptions {
    pub smooth: Smoothing,
    /// Size preset and file formats.
    pub style: Style,
    /// Only this part of the run (s from the start), instead of all of it.
    pub range: Option<(f64, f64)>,
    /// The flows drawn (by id), instead of the first twelve.
    pub flows: Vec<String>,
    /// The links whose queue and utilisation are drawn, instead of `[output] plot_links` or
    /// the bottlenecks.
    pub links: Vec<String>,
    /// Logarithmic axes on every figure (added to those that have them already).
    pub log_x: bool,
    pub log_y: bool,
}

impl PlotOptions {
    /// Checks the chosen flows and links against the scenario: an unknown one is an error
    /// that lists what there is.
    pub fn check(&self, sc: &Scenario) -> Result<(), String> {
        let unknown = |what: &str, picked: &[String], have: Vec<&str>| {
            let missing: Vec<&str> = picked
                .iter()
                .map(String::as_str)
                .filter(|p| !have.contains(p))
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            let shown = have.iter().take(12).copied().collect::<Vec<_>>().join(", ");
            let more = if have.len() > 12 {
                format!(" and {} more", have.len() - 12)
            } else {
                String::new()
            };
            Err(format!(
                "no {what} {} in scenario {:?}; it has {shown}{more}",
                missing.join(", "),
                sc.name
            ))
        };
        let ids: Vec<String> = sc.flows.iter().map(|f| f.id.clone()).collect();
        unknown(
            "flow",
            &self.flows,
            ids.iter().map(String::as_str).collect(),
        )?;
        unknown(
            "link",
            &self.links,
            sc.links.iter().map(|l| l.name.as_str()).collect(),
        )?;
        if let Some((a, b)) = self.range {
            if !(a >= 0.0 && b > a) {
                return Err(format!(
                    "time range {a}..{b} s: it must start at 0 or later and end after it starts"
                ));
            }
        }
        Ok(())
    }

    /// Writes `chart` into `out` in this style, with the log axes asked for.
    pub fn write(&self, out: &Path, stem: &str, mut chart: Chart) -> std::io::Result<Vec<String>> {
        chart.log_x |= self.log_x;
        chart.log_y |= self.log_y;
        write_figure(out, stem, &chart, &self.style)
    }
}

/// Every figure of a run, drawn from its files in `dir` into `out` (the same directory, or
/// another): the four standard plots ([`write_plots`]), with finite flows the
/// completion-time figures (from fct.csv), on a generated fabric the queue occupancy per kind
/// of port (from links.csv). Their file names.
pub fn write_run_figures(
    (dir, out): (&Path, &Path),
    sc: &Scenario,
    summary: Option<&crate::summary::Summary>,
    model: Option<&Path>,
    options: &PlotOptions,
) -> std::io::Result<Vec<String>> {
    let mut files = write_plots((dir, out), sc, summary, model, options)?;
    files.extend(crate::fct::write_fct_plots((dir, out), &sc.name, options)?);
    files.extend(crate::queues::write_queue_cdf((dir, out), sc, options)?);
    Ok(files)
}

/// The buffer line's colour on queue plots.
const BUFFER: RGBColor = RGBColor(110, 110, 110);

/// Trailing means over `k` consecutive points (the first k − 1 over the points so far).
fn trailing_mean(points: &mut [(f64, f64)], k: usize) {
    if k <= 1 {
        return;
    }
    let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    let mut sum = 0.0;
    for (i, p) in points.iter_mut().enumerate() {
        sum += ys[i];
        if i >= k {
            sum -= ys[i - k];
        }
        p.1 = sum / (i + 1).min(k) as f64;
    }
}

/// The links a run's queue and utilisation plots show: the scenario's `[output] plot_links`
/// when it names any; otherwise the bottlenecks — links whose queue held more than two packets
/// at some sample, with a mean queue at least 5% of the most queued link's (at most six, most
/// queued first) — and when nothing queued, the busiest link. Read from `links.csv`
/// (time_s, link, queue_pkts, queue_bytes, utilization, …).
fn links_to_plot(sc: &Scenario, links_csv: &Path) -> std::io::Result<(Vec<String>, &'static str)> {
    if !sc.output.plot_links.is_empty() {
        let names = sc.output.plot_links.iter();
        let names = names.map(|l| sc.links[l.0 as usize].name.clone());
        return Ok((names.collect(), "the chosen links"));
    }
    #[derive(Default, Clone, Copy)]
    struct Seen {
        queue_sum: f64,
        queue_max: f64,
        load: f64,
    }
    let mut seen = std::collections::HashMap::<String, Seen>::new();
    let mut r = csv::Reader::from_path(links_csv).map_err(std::io::Error::other)?;
    for row in r.records() {
        let row = row.map_err(std::io::Error::other)?;
        let (Some(l), Some(q), Some(u)) = (row.get(1), num(&row, 2), num(&row, 4)) else {
            continue;
        };
        let s = seen.entry(l.to_string()).or_default();
        s.queue_sum += q;
        s.queue_max = s.queue_max.max(q);
        s.load += u;
    }
    let get = |i: usize| seen.get(&sc.links[i].name).copied().unwrap_or_default();
    let most = (0..sc.links.len())
        .map(|i| get(i).queue_sum)
        .fold(0.0, f64::max);
    let mut queued: Vec<usize> = (0..sc.links.len())
        .filter(|&i| get(i).queue_max > 2.0 && get(i).queue_sum >= 0.05 * most)
        .collect();
    queued.sort_by(|&a, &b| {
        get(b)
            .queue_sum
            .total_cmp(&get(a).queue_sum)
            .then(a.cmp(&b))
    });
    queued.truncate(6);
    let mut what = "the bottlenecks (links that queued)";
    if queued.is_empty() {
        queued = (0..sc.links.len())
            .filter(|&i| get(i).load > 0.0)
            .max_by(|&a, &b| get(a).load.total_cmp(&get(b).load).then(b.cmp(&a)))
            .into_iter()
            .collect();
        what = "the busiest link (none queued)";
    }
    Ok((
        queued.iter().map(|&i| sc.links[i].name.clone()).collect(),
        what,
    ))
}

/// Writes the four standard plots of a run from its `flows.csv` and `links.csv` in `dir` (so
/// that a run need not keep its samples in memory to be plotted) into `out` and returns their
/// file names.
/// With `summary`, every flow and link the theory predicts gets its equilibrium as a dotted
/// line in its colour; with `model`, a directory holding the model tier's files of the same
/// scenario, each series gets the model's trajectory beside it: same colour, dashed. Windows
/// are in KB (1000 bytes), as in the terminal and the reproductions' figures.
pub fn write_plots(
    (dir, out): (&Path, &Path),
    sc: &Scenario,
    summary: Option<&crate::summary::Summary>,
    model: Option<&Path>,
    options: &PlotOptions,
) -> std::io::Result<Vec<String>> {
    options.check(sc).map_err(std::io::Error::other)?;
    let end = sc.duration.as_secs_f64();
    let shown = options.range.map_or(end, |(a, b)| b.min(end) - a);
    let samples = (shown / sc.output.sample_interval.as_secs_f64().max(1e-9)) as usize;
    let stride = samples.div_ceil(MAX_POINTS).max(1);
    let flows_csv = dir.join("flows.csv");
    let links_csv = dir.join("links.csv");
    let picked = !options.flows.is_empty();
    let flow_ids: Vec<String> = if picked {
        options.flows.clone()
    } else {
        let first = sc.flows.iter().take(MAX_SERIES);
        first.map(|f| f.id.clone()).collect()
    };
    let in_range = |t: f64| options.range.is_none_or(|(a, b)| t >= a && t <= b);
    let mut keys = (false, false);
    // The run's series, each followed by the model's and the theory's, when there are.
    let mut beside = |csv: &Path,
                      name: &str,
                      keys_of: &[String],
                      value: &dyn Fn(&csv::StringRecord) -> Option<f64>,
                      theory: &dyn Fn(&str) -> Option<f64>,
                      smooth: usize| {
        let mut ours = read_series(csv, 1, keys_of, stride, &in_range, value)?;
        let mut theirs = match model {
            Some(m) => read_series(&m.join(name), 1, keys_of, stride, &in_range, value)?,
            None => vec![],
        };
        for s in ours.iter_mut().chain(theirs.iter_mut()) {
            trailing_mean(&mut s.points, smooth.div_ceil(stride));
        }
        let mut out = Vec::with_capacity(ours.len() * 3);
        for s in ours {
            let twin = theirs.iter().find(|t| t.name == s.name).cloned();
            let level = theory(&s.name);
            let id = s.name.clone();
            out.push(s);
            if let Some(mut t) = twin {
                t.name = format!("{id} (model)");
                out.push(t.as_dashed().unlisted());
                keys.0 = true;
            }
            if let Some(y) = level.filter(|y| y.is_finite()) {
                out.push(Series::level(format!("{id} (theory)"), y, 0.0, end).unlisted());
                keys.1 = true;
            }
        }
        Ok::<_, std::io::Error>(out)
    };
    let flow_theory = |id: &str| {
        let f = summary?.flows.iter().find(|f| f.id == id)?;
        f.theory.as_ref()
    };
    let link_theory = |id: &str| {
        let l = summary?.links.iter().find(|l| l.id == id)?;
        l.theory.as_ref()
    };
    let smooth = options.smooth.samples(sc);
    let every = sc.output.sample_interval.as_secs_f64();
    let goodput = if smooth > 1 {
        format!(
            "goodput per flow, trailing mean over {}",
            seconds(smooth as f64 * every)
        )
    } else {
        format!("goodput per flow, per {} sample", seconds(every))
    };
    let throughput = beside(
        &flows_csv,
        "flows.csv",
        &flow_ids,
        &|r| num(r, 2).map(|b| b / 1e6),
        &|id| flow_theory(id).map(|t| t.throughput_bps / 1e6),
        smooth,
    )?;
    let above_received = goodput_above_received(&flows_csv, &flow_ids, stride, &in_range, smooth)?;
    let cwnd = beside(
        &flows_csv,
        "flows.csv",
        &flow_ids,
        &|r| num(r, 4).map(|c| c / 1e3),
        &|id| flow_theory(id).map(|t| t.cwnd_bytes / 1e3),
        1,
    )?;
    let (links, which) = if options.links.is_empty() {
        links_to_plot(sc, &links_csv)?
    } else {
        (options.links.clone(), "the chosen links")
    };
    let mut queue = beside(
        &links_csv,
        "links.csv",
        &links,
        &|r| num(r, 2),
        &|id| link_theory(id).map(|t| t.queue_pkts),
        1,
    )?;
    let utilisation = beside(
        &links_csv,
        "links.csv",
        &links,
        &|r| num(r, 4),
        &|_| None,
        1,
    )?;
    // More flows than colours: the first MAX_SERIES are drawn, the mean of all of them beside
    // them (black), and the figure says so — never a silent cut.
    let (throughput, cwnd, flows_note) = if sc.flows.len() > MAX_SERIES && !picked {
        let mean = |series: &mut Vec<Series>, value: &dyn Fn(&csv::StringRecord) -> Option<f64>| {
            let pts = mean_over_flows(&flows_csv, stride, &in_range, value)?;
            let mut m = Series::new(format!("mean of all {} flows", sc.flows.len()), pts);
            m.colour = Some(BLACK);
            series.insert(0, m);
            Ok::<_, std::io::Error>(())
        };
        let (mut t, mut c) = (throughput, cwnd);
        mean(&mut t, &|r| num(r, 2).map(|b| b / 1e6))?;
        mean(&mut c, &|r| num(r, 4).map(|w| w / 1e3))?;
        let note = format!(
            "{MAX_SERIES} of {} flows drawn (the first; every flow is in flows.csv), and in black the mean of all of them",
            sc.flows.len()
        );
        (t, c, Some(note))
    } else {
        (throughput, cwnd, None)
    };
    let buffer_note = buffer_lines(sc, &links, &mut queue, options.range.unwrap_or((0.0, end)));
    let with_keys = |mut series: Vec<Series>| {
        if keys.0 {
            series.push(Series::key("dashed: model tier", true, false));
        }
        if keys.1 {
            series.push(Series::key("dotted: theory", false, true));
        }
        series
    };
    // The measurement window shaded when it is not the whole run.
    let (w0, w1) = sc.output.window;
    let window = (w0.0 > 0 || w1.0 < sc.duration.0).then(|| (w0.as_secs_f64(), w1.as_secs_f64()));
    let chart = |title: String, y: &str, series: Vec<Series>| Chart {
        title: format!("{}: {title}", sc.name),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series: with_keys(series),
        shade: window,
        x_range: options.range.map(|(a, b)| (a, b.min(end))),
        ..Chart::default()
    };
    let mut files = Vec::new();
    for (stem, c) in [
        (
            "throughput",
            Chart {
                note: match (above_received, &flows_note) {
                    (Some(a), Some(f)) => Some(format!("{a}; {f}")),
                    (a, f) => a.or_else(|| f.clone()),
                },
                ..chart(goodput, "goodput (Mb/s)", throughput)
            },
        ),
        (
            "cwnd",
            Chart {
                note: flows_note.clone(),
                ..chart("congestion window".into(), "congestion window (KB)", cwnd)
            },
        ),
        (
            "queue",
            Chart {
                note: buffer_note,
                ..chart(format!("queue at {which}"), "queue (packets)", queue)
            },
        ),
        (
            "utilization",
            chart(
                format!("utilisation of {which}"),
                "utilisation (fraction of capacity)",
                utilisation,
            ),
        ),
    ] {
        files.extend(options.write(out, stem, c)?);
    }
    Ok(files)
}

/// Adds to a queue plot's series a grey line at each drawn link's buffer limit (in packets),
/// when it is within four times the highest queue drawn; returns a note naming the limits
/// left above the axis (and those in bytes, which a packet axis cannot place).
fn buffer_lines(
    sc: &Scenario,
    links: &[String],
    series: &mut Vec<Series>,
    (x0, x1): (f64, f64),
) -> Option<String> {
    use acclab_core::units::Limit;
    let top = series
        .iter()
        .filter(|s| !s.reference)
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let mut away = Vec::new();
    let mut drawn: Vec<(u64, Vec<&str>)> = Vec::new();
    for name in links {
        let Some(link) = sc.links.iter().find(|l| &l.name == name) else {
            continue;
        };
        let limits = link.queue.limits();
        let packets: Option<u64> = limits
            .iter()
            .map(|l| match l {
                Limit::Packets(n) => Some(*n),
                _ => None,
            })
            .sum();
        match (packets, limits.first()) {
            (Some(n), _) if (n as f64) <= 4.0 * top.max(1.0) => {
                match drawn.iter_mut().find(|d| d.0 == n) {
                    Some(d) => d.1.push(name),
                    None => drawn.push((n, vec![name])),
                }
            }
            (Some(n), _) => away.push(format!("{name} {n} packets")),
            (None, Some(Limit::Bytes(b))) => away.push(format!("{name} {b} bytes")),
            _ => {}
        }
    }
    // One line per limit: links with the same buffer share it.
    for (n, names) in &drawn {
        let whose = if drawn.len() == 1 {
            String::new()
        } else {
            format!(" of {}", names.join(", "))
        };
        let mut line = Series::level(format!("buffer{whose}: {n} packets"), *n as f64, x0, x1);
        line.colour = Some(BUFFER);
        series.push(line);
    }
    (!away.is_empty()).then(|| {
        format!(
            "buffer limit not drawn (far above the queue, or in bytes): {}",
            away.join(", ")
        )
    })
}

/// The goodput plot's note when a flow's goodput, as drawn, rises above the most its receiver
/// got in any sample (flows.csv's `received_bps`, smoothed alike), which the path's capacity
/// bounds: goodput counts data delivered in order, and a repair releases at once the data
/// received behind the hole.
fn goodput_above_received(
    flows_csv: &Path,
    flow_ids: &[String],
    stride: usize,
    in_range: &dyn Fn(f64) -> bool,
    smooth: usize,
) -> std::io::Result<Option<String>> {
    let column = |i: usize| {
        read_series(flows_csv, 1, flow_ids, stride, in_range, &move |r| {
            num(r, i)
        })
        .map(|mut all| {
            for s in &mut all {
                trailing_mean(&mut s.points, smooth.div_ceil(stride));
            }
            all
        })
    };
    let (goodput, received) = (column(2)?, column(FLOW_COLUMNS.len() - 1)?);
    let peak = |s: &Series| s.points.iter().map(|p| p.1).fold(0.0, f64::max);
    let above: Vec<&str> = received
        .iter()
        .filter_map(|r| {
            let g = goodput.iter().find(|g| g.name == r.name)?;
            (peak(g) > 1.01 * peak(r)).then_some(r.name.as_str())
        })
        .collect();
    Ok((!above.is_empty()).then(|| {
        let more = above.len().saturating_sub(3);
        format!(
            "goodput of {}{} above the most their receivers got: a repair releases data received earlier",
            above[..above.len().min(3)].join(", "),
            if more > 0 { format!(" (+{more})") } else { String::new() }
        )
    }))
}

/// A duration in s or ms, for a label.
fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{} s", tick(s))
    } else {
        format!("{} ms", tick(s * 1e3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_is_a_trailing_mean_over_whole_samples() {
        let mut pts: Vec<(f64, f64)> = [0.0, 4.0, 2.0, 6.0]
            .iter()
            .enumerate()
            .map(|(i, &y)| (i as f64, y))
            .collect();
        trailing_mean(&mut pts, 2);
        assert_eq!(
            pts.iter().map(|p| p.1).collect::<Vec<_>>(),
            [0.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(Smoothing::parse("auto"), Ok(Smoothing::Auto));
        assert_eq!(Smoothing::parse("none"), Ok(Smoothing::Raw));
        assert_eq!(
            Smoothing::parse("500ms"),
            Ok(Smoothing::Over(acclab_core::Duration(500_000_000)))
        );
        assert!(Smoothing::parse("0s").unwrap_err().contains("above 0"));
        assert!(Smoothing::parse("fast").unwrap_err().contains("auto, none"));
    }
}
