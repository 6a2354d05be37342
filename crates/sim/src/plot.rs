//! Plots (PNG and SVG): the standard plots of a run — per-flow throughput and window, per-link
//! queue and utilisation over time — and a general [`Chart`] that reproductions use for their
//! figures. The font is embedded (DejaVu Sans, see assets/) so plotting needs nothing from the
//! system.

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use acclab_scenario::Scenario;

/// At most this many lines per plot, so that the legend stays readable.
const MAX_SERIES: usize = 12;

/// One line of a chart.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn thin (a prediction or a reference value), in the colour of the data series just
    /// before it.
    pub reference: bool,
    /// Mark each point with a dot.
    pub markers: bool,
    /// A vertical error bar (low, high) at each point, or none when empty.
    pub errors: Vec<(f64, f64)>,
    /// Drawn dashed, full width, in the colour of the data series just before it: the same
    /// quantity from another tier (the model's trajectory beside the packet run's).
    pub dashed: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            ..Series::default()
        }
    }
    /// A horizontal reference line at `y` over [x0, x1].
    pub fn level(name: impl Into<String>, y: f64, x0: f64, x1: f64) -> Series {
        Series {
            name: name.into(),
            points: vec![(x0, y), (x1, y)],
            reference: true,
            ..Series::default()
        }
    }
    pub fn with_markers(mut self) -> Series {
        self.markers = true;
        self
    }
    /// Draws an error bar (low, high) at each point.
    pub fn with_errors(mut self, errors: Vec<(f64, f64)>) -> Series {
        self.errors = errors;
        self
    }
}

/// A line chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub log_x: bool,
    pub log_y: bool,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font: &'static [u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
        // A failure leaves plotters without a font; drawing text then reports the error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
    });
}

fn bounds(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    // The error bars' ends count as points.
    let ends: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .zip(&s.errors)
                .flat_map(|(p, e)| [(p.0, e.0), (p.0, e.1)])
        })
        .collect();
    let pts = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .chain(ends.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite())
    };
    let pos = |v: f64, log: bool| !log || v > 0.0;
    let xs: Vec<f64> = pts()
        .map(|p| p.0)
        .filter(|&x| pos(x, chart.log_x))
        .collect();
    let ys: Vec<f64> = pts()
        .map(|p| p.1)
        .filter(|&y| pos(y, chart.log_y))
        .collect();
    let range = |v: &[f64], log: bool, margin: f64| -> (f64, f64) {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        match (lo.is_finite(), log) {
            (false, true) => (1.0, 10.0),
            (false, false) => (0.0, 1.0),
            (true, true) => (lo / 1.5, hi * 1.5),
            (true, false) => {
                let lo = lo.min(0.0);
                let hi = if hi > lo {
                    hi + margin * (hi - lo)
                } else {
                    lo + 1.0
                };
                (lo, hi)
            }
        }
    };
    (range(&xs, chart.log_x, 0.0), range(&ys, chart.log_y, 0.08))
}

fn draw_on<DB, X, Y>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
    xr: X,
    yr: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    // A reference series right after a data series shares its colour (its prediction).
    let mut next_color = 0;
    let mut last_data_color = None;
    for s in chart.series.iter().take(MAX_SERIES * 2) {
        let color = match (s.reference || s.dashed, last_data_color) {
            (true, Some(c)) => c,
            _ => {
                let c = Palette99::pick(next_color).to_rgba();
                next_color += 1;
                if !s.reference && !s.dashed {
                    last_data_color = Some(c);
                }
                c
            }
        };
        let width = if s.reference { 1 } else { 2 };
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| (!chart.log_x || p.0 > 0.0) && (!chart.log_y || p.1 > 0.0))
            .collect();
        let style = if s.reference { color.mix(0.7) } else { color };
        if s.dashed {
            c.draw_series(DashedLineSeries::new(
                pts.iter().copied(),
                6,
                4,
                style.stroke_width(2),
            ))
            .map_err(e)?
            .label(s.name.as_str())
            .legend(move |(x, y)| {
                plotters::element::DashedPathElement::new(
                    vec![(x, y), (x + 18, y)],
                    4,
                    3,
                    style.stroke_width(2),
                )
            });
        } else {
            c.draw_series(LineSeries::new(
                pts.iter().copied(),
                style.stroke_width(width),
            ))
            .map_err(e)?
            .label(s.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], style.stroke_width(width))
            });
        }
        if s.markers {
            c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(e)?;
        }
        let bars = s.points.iter().zip(&s.errors).filter(|(p, b)| {
            let ok = |y: f64| y.is_finite() && (!chart.log_y || y > 0.0);
            p.0.is_finite() && (!chart.log_x || p.0 > 0.0) && ok(b.0) && ok(b.1)
        });
        c.draw_series(
            bars.map(|(p, b)| ErrorBar::new_vertical(p.0, b.0, p.1, b.1, color.stroke_width(1), 8)),
        )
        .map_err(e)?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    let ((x0, x1), (y0, y1)) = bounds(chart);
    match (chart.log_x, chart.log_y) {
        (false, false) => draw_on(root, chart, x0..x1, y0..y1),
        (true, false) => draw_on(root, chart, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw_on(root, chart, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw_on(root, chart, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }
}

/// Writes `<stem>.png` and `<stem>.svg` into `dir` and returns their file names.
pub fn write_chart(dir: &Path, stem: &str, chart: &Chart) -> std::io::Result<Vec<String>> {
    register_font();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    draw(
        BitMapBackend::new(&png, (1000, 560)).into_drawing_area(),
        chart,
    )
    .map_err(std::io::Error::other)?;
    draw(
        SVGBackend::new(&svg, (1000, 560)).into_drawing_area(),
        chart,
    )
    .map_err(std::io::Error::other)?;
    Ok(vec![format!("{stem}.png"), format!("{stem}.svg")])
}

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

/// A number in column `i` of `row`, if there is one.
fn num(row: &csv::StringRecord, i: usize) -> Option<f64> {
    row.get(i).and_then(|v| v.parse().ok())
}

/// Writes the four standard plots of a run from its `flows.csv` and `links.csv` in `dir` (so
/// that a run need not keep its samples in memory to be plotted) and returns their file names.
/// With `model`, a directory holding the model tier's files of the same scenario, each series
/// gets the model's trajectory beside it: same colour, dashed.
pub fn write_plots(
    dir: &Path,
    sc: &Scenario,
    model: Option<&Path>,
) -> std::io::Result<Vec<String>> {
    let pkt = sc.packet_size as f64;
    let samples = (sc.duration.0 / sc.output.sample_interval.0.max(1)) as usize;
    let stride = samples.div_ceil(MAX_POINTS).max(1);
    let flows_csv = dir.join("flows.csv");
    let links_csv = dir.join("links.csv");
    let flow_ids: Vec<String> = sc
        .flows
        .iter()
        .take(MAX_SERIES)
        .map(|f| f.id.clone())
        .collect();
    // flows.csv: time_s, flow, throughput_bps, send_rate_bps, cwnd_bytes, …
    // The run's series, each followed by the model's, when there is one.
    let beside = |csv: &Path,
                  name: &str,
                  keys: &[String],
                  value: &dyn Fn(&csv::StringRecord) -> Option<f64>| {
        let ours = read_series(csv, 1, keys, stride, value)?;
        let Some(m) = model else {
            return Ok(ours);
        };
        let theirs = read_series(&m.join(name), 1, keys, stride, value)?;
        let mut out = Vec::with_capacity(ours.len() * 2);
        for s in ours {
            let twin = theirs.iter().find(|t| t.name == s.name).cloned();
            out.push(s);
            if let Some(mut t) = twin {
                t.name = format!("{} (model)", t.name);
                t.dashed = true;
                out.push(t);
            }
        }
        Ok::<_, std::io::Error>(out)
    };
    let flow_series = |value: &dyn Fn(&csv::StringRecord) -> Option<f64>| {
        beside(&flows_csv, "flows.csv", &flow_ids, value)
    };
    // Links worth showing: the busiest ones that ever carried traffic (links.csv: time_s, link,
    // queue_pkts, queue_bytes, utilization, …).
    let mut load = std::collections::HashMap::<String, f64>::new();
    let mut r = csv::Reader::from_path(&links_csv).map_err(std::io::Error::other)?;
    for row in r.records() {
        let row = row.map_err(std::io::Error::other)?;
        if let (Some(l), Some(u)) = (row.get(1), num(&row, 4)) {
            *load.entry(l.to_string()).or_default() += u;
        }
    }
    let mut busy: Vec<(usize, f64)> = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| (i, load.get(&l.name).copied().unwrap_or(0.0)))
        .filter(|&(_, u)| u > 0.0)
        .collect();
    busy.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    busy.truncate(6);
    let busy: Vec<String> = busy
        .iter()
        .map(|&(i, _)| sc.links[i].name.clone())
        .collect();
    let link_series = |value: &dyn Fn(&csv::StringRecord) -> Option<f64>| {
        beside(&links_csv, "links.csv", &busy, value)
    };
    let chart = |title: &str, y: &str, series: Vec<Series>| Chart {
        title: format!("{}: {title}", sc.name),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series,
        ..Chart::default()
    };
    let mut files = Vec::new();
    files.extend(write_chart(
        dir,
        "throughput",
        &chart(
            "throughput per flow",
            "Mb/s",
            flow_series(&|r| num(r, 2).map(|b| b / 1e6))?,
        ),
    )?);
    files.extend(write_chart(
        dir,
        "cwnd",
        &chart(
            "congestion window",
            "packets",
            flow_series(&|r| num(r, 4).map(|c| c / pkt))?,
        ),
    )?);
    files.extend(write_chart(
        dir,
        "queue",
        &chart(
            "queue at the busiest links",
            "packets",
            link_series(&|r| num(r, 2))?,
        ),
    )?);
    files.extend(write_chart(
        dir,
        "utilization",
        &chart(
            "utilisation of the busiest links",
            "fraction of capacity",
            link_series(&|r| num(r, 4))?,
        ),
    )?);
    Ok(files)
}
