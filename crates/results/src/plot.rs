//! Plots (PNG and SVG): the standard plots of a run — per-flow throughput and window, per-link
//! queue and utilisation over time — and a general [`Chart`] that reproductions use for their
//! figures. plotters draws the SVG; resvg renders it to PNG. The font is embedded (DejaVu Sans,
//! see assets/) so plotting needs nothing from the system.

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::samples::FLOW_COLUMNS;
use acclab_scenario::Scenario;

/// At most this many data lines per plot, so that the legend stays readable.
const MAX_SERIES: usize = 12;

/// Picture size and the strip on the right that holds the legend, outside the data.
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 560;
const LEGEND_WIDTH: u32 = 230;

/// Colours of the data lines, in order: Tableau 10 (distinct in print and for the common
/// colour-vision deficiencies); after ten, plotters' 99-colour palette.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBAColor {
    COLOURS
        .get(i)
        .map_or_else(|| Palette99::pick(i).to_rgba(), |c| c.to_rgba())
}

/// One line of a chart.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// A prediction or a reference value: drawn dotted, on top of every data line, in a darker
    /// shade of the data series just before it (black when none is).
    pub reference: bool,
    /// Mark each point with a dot.
    pub markers: bool,
    /// A vertical error bar (low, high) at each point, or none when empty.
    pub errors: Vec<(f64, f64)>,
    /// Drawn dashed, full width, in the colour of the data series just before it: the same
    /// quantity from another tier (the model's trajectory beside the packet run's, the live
    /// run's beside the simulated one's).
    pub dashed: bool,
    /// A colour of its own instead of the one the rules above give.
    pub colour: Option<RGBColor>,
    /// Left out of the legend (a key entry says what its style means instead).
    pub no_legend: bool,
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
    /// A legend entry alone, saying what a line style means ("dashed: model tier").
    pub fn key(name: impl Into<String>, dashed: bool, reference: bool) -> Series {
        Series {
            name: name.into(),
            dashed,
            reference,
            colour: Some(RGBColor(60, 60, 60)),
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
    /// Drawn dashed in the preceding data series' colour ([`Series::dashed`]).
    pub fn as_dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
    /// Left out of the legend.
    pub fn unlisted(mut self) -> Series {
        self.no_legend = true;
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
    /// A line written in the plot's top left corner (below the off-scale note, if any): what
    /// a reader must know to read the data right.
    pub note: Option<String>,
}

pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font: &'static [u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
        // A failure leaves plotters without a font; drawing text then reports the error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
    });
}

/// The axes' ranges, and where a short peak was left off the top of a linear y axis (its
/// height and time).
struct Bounds {
    x: (f64, f64),
    y: (f64, f64),
    off_scale: Option<OffScale>,
}

/// A peak left above the top of the y axis.
#[derive(Clone, Copy)]
struct OffScale {
    peak: f64,
    at: f64,
    top: f64,
}

/// The parts of a polyline below `top`, each ending where it crosses it (linear axes).
fn below(points: &[(f64, f64)], top: f64) -> Vec<Vec<(f64, f64)>> {
    let mut parts = vec![];
    let mut cur: Vec<(f64, f64)> = vec![];
    let cross = |a: (f64, f64), b: (f64, f64)| {
        let t = (top - a.1) / (b.1 - a.1);
        (a.0 + t * (b.0 - a.0), top)
    };
    for (i, &p) in points.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| points[j]);
        match (prev, p.1 <= top) {
            (Some(a), true) if a.1 > top => cur.push(cross(a, p)),
            (Some(a), false) if a.1 <= top => {
                cur.push(cross(a, p));
                parts.push(std::mem::take(&mut cur));
            }
            _ => {}
        }
        if p.1 <= top {
            cur.push(p);
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// A linear y axis whose data rise above 2× their 99th percentile in under 1% of the points
/// (a start-up spike, one burst of repaired data) ends a little above that percentile or the
/// highest reference line, whichever is higher, so that the rest is not squashed onto the
/// floor; the chart then says how high the peak went. Fewer than this many points never clip.
const ROBUST_MIN_POINTS: usize = 200;

fn bounds(chart: &Chart) -> Bounds {
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
    // `from_zero`: a linear axis starts at 0 (values are read against it); an x axis only
    // when 0 is near the data (a time axis), not when it would leave a blank band (the
    // number of bottlenecks from 2 to 9).
    let range = |v: &[f64], log: bool, margin: f64, from_zero: bool| -> (f64, f64) {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        match (lo.is_finite(), log) {
            (false, true) => (1.0, 10.0),
            (false, false) => (0.0, 1.0),
            (true, true) => (lo / 1.5, hi * 1.5),
            (true, false) => {
                let lo = if from_zero || lo <= 0.15 * hi {
                    lo.min(0.0)
                } else {
                    lo
                };
                let hi = if hi > lo {
                    hi + margin * (hi - lo)
                } else {
                    lo + 1.0
                };
                (lo, hi)
            }
        }
    };
    let x = range(&xs, chart.log_x, 0.0, false);
    let mut y = range(&ys, chart.log_y, 0.08, true);
    let mut off_scale = None;
    let data: Vec<(f64, f64)> = chart
        .series
        .iter()
        .filter(|s| !s.reference)
        .flat_map(|s| s.points.iter().copied())
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    if !chart.log_y && data.len() >= ROBUST_MIN_POINTS {
        let mut sorted: Vec<f64> = data.iter().map(|p| p.1).collect();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted[(sorted.len() * 99) / 100];
        let peak = data.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
        let refs = chart
            .series
            .iter()
            .filter(|s| s.reference)
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        if let Some((px, py)) = peak {
            let top = p99.max(refs);
            if p99 > 0.0 && py > 2.0 * top {
                y.1 = top + 0.15 * (top - y.0);
                off_scale = Some(OffScale {
                    peak: py,
                    at: px,
                    top: y.1,
                });
            }
        }
    }
    Bounds { x, y, off_scale }
}

/// How one series is drawn: its colour and whether it is listed.
fn colours(chart: &Chart) -> Vec<RGBAColor> {
    let mut next = 0;
    let mut last_data = None;
    // Every series gets one (the callers bound how many there are: MAX_SERIES data series,
    // each with its model and theory lines, a mean and the keys).
    chart
        .series
        .iter()
        .map(|s| {
            if let Some(c) = s.colour {
                return c.to_rgba();
            }
            if s.dashed {
                return last_data.unwrap_or(BLACK.to_rgba());
            }
            if s.reference {
                // Darker than its data series, so that it shows where the two coincide.
                return last_data.map_or(BLACK.to_rgba(), |c: RGBAColor| {
                    let d = |v: u8| (v as f64 * 0.55) as u8;
                    RGBAColor(d(c.0), d(c.1), d(c.2), 1.0)
                });
            }
            let c = colour(next);
            next += 1;
            last_data = Some(c);
            c
        })
        .collect()
}

/// A short sample of a series' line style at (x, y), as the legend shows it.
fn sample<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Series,
    c: RGBAColor,
    (x, y): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let line = vec![(x, y), (x + 26, y)];
    if s.reference {
        area.draw(&plotters::element::DashedPathElement::new(
            line,
            2,
            3,
            c.stroke_width(2),
        ))?;
    } else if s.dashed {
        area.draw(&plotters::element::DashedPathElement::new(
            line,
            6,
            4,
            c.stroke_width(2),
        ))?;
    } else if !s.points.is_empty() || s.markers {
        area.draw(&PathElement::new(line, c.stroke_width(2)))?;
    }
    if s.markers {
        area.draw(&Circle::new((x + 13, y), 3, c.filled()))?;
    }
    Ok(())
}

/// The legend, in its own strip beside the plot: nothing in it can cover a data point.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    colours: &[RGBAColor],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font: TextStyle = ("sans-serif", 13).into_font().into();
    let entries: Vec<(&Series, RGBAColor)> = chart
        .series
        .iter()
        .zip(colours)
        .filter(|(s, _)| !s.no_legend && !s.name.is_empty())
        .map(|(s, c)| (s, *c))
        .collect();
    let (w, h) = area.dim_in_pixel();
    let top = 46;
    let row = 19;
    let rows = ((h as i32 - top - 10) / row).max(1) as usize;
    let width = w as i32 - 48;
    for (i, (s, c)) in entries.iter().enumerate() {
        let y = top + row * i as i32;
        if i + 1 == rows && entries.len() > rows {
            let more = format!("… and {} more", entries.len() - i);
            area.draw(&Text::new(more, (8, y), font.clone()))?;
            break;
        }
        sample(area, s, *c, (6, y + 8))?;
        // Long names are cut to the strip's width.
        let mut name = s.name.clone();
        while name.chars().count() > 3
            && area
                .estimate_text_size(&name, &font)
                .is_ok_and(|(tw, _)| tw as i32 > width)
        {
            name.pop();
            name.pop();
            name.push('…');
        }
        area.draw(&Text::new(name, (40, y), font.clone()))?;
    }
    Ok(())
}

fn draw_on<DB, X, Y>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
    off_scale: Option<OffScale>,
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
    let (w, _) = root.dim_in_pixel();
    let (plot, side) = root.split_horizontally(w.saturating_sub(LEGEND_WIDTH));
    let mut c = ChartBuilder::on(&plot)
        .caption(&chart.title, ("sans-serif", 21))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()
        .map_err(e)?;
    let colours = colours(chart);
    // The parts of a series inside the axes: points a log axis cannot show are left out, and
    // a line is cut where it leaves a cut-off y axis.
    let visible = |s: &Series| -> Vec<Vec<(f64, f64)>> {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| (!chart.log_x || p.0 > 0.0) && (!chart.log_y || p.1 > 0.0))
            .collect();
        match off_scale {
            Some(o) => below(&pts, o.top),
            None => vec![pts],
        }
    };
    // Data and other tiers' lines first, reference lines over them, so that none is hidden.
    for pass_references in [false, true] {
        for (s, &color) in chart.series.iter().zip(&colours) {
            if s.reference != pass_references {
                continue;
            }
            let parts = visible(s);
            for pts in &parts {
                let pts = pts.iter().copied();
                if s.reference {
                    c.draw_series(DashedLineSeries::new(pts, 2, 3, color.stroke_width(2)))
                } else if s.dashed {
                    c.draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(2)))
                } else {
                    c.draw_series(LineSeries::new(pts, color.stroke_width(2)))
                }
                .map_err(e)?;
            }
            if s.markers {
                let dots = parts.iter().flatten();
                c.draw_series(dots.map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(e)?;
            }
            let bars = s.points.iter().zip(&s.errors).filter(|(p, b)| {
                let ok = |y: f64| y.is_finite() && (!chart.log_y || y > 0.0);
                p.0.is_finite() && (!chart.log_x || p.0 > 0.0) && ok(b.0) && ok(b.1)
            });
            c.draw_series(bars.map(|(p, b)| {
                ErrorBar::new_vertical(p.0, b.0, p.1, b.1, color.stroke_width(1), 8)
            }))
            .map_err(e)?;
        }
    }
    let cut = off_scale.map(|o| {
        format!(
            "axis cut at {}: the peak, {} at x = {}, is off scale",
            significant(o.top, 3),
            significant(o.peak, 3),
            significant(o.at, 3)
        )
    });
    let area = c.plotting_area().strip_coord_spec();
    for (k, note) in cut.iter().chain(&chart.note).enumerate() {
        area.draw(&Text::new(
            note.as_str(),
            (8, 6 + 18 * k as i32),
            ("sans-serif", 13).into_font().color(&BLACK.mix(0.7)),
        ))
        .map_err(e)?;
    }
    legend(&side, chart, &colours).map_err(e)?;
    root.present().map_err(e)
}

/// An axis label: at most six significant digits, no trailing zeros ("10", "0.25", "1e-5").
fn tick(v: f64) -> String {
    significant(v, 6)
}

/// `v` in at most `digits` significant digits, without trailing zeros; exponent form when tiny
/// or huge.
fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() < 1e-3 || v.abs() >= 1e7 {
        return format!("{v:.1e}");
    }
    let decimals = (digits - 1 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    let b = bounds(chart);
    let ((x0, x1), (y0, y1)) = (b.x, b.y);
    let o = b.off_scale;
    match (chart.log_x, chart.log_y) {
        (false, false) => draw_on(root, chart, o, x0..x1, y0..y1),
        (true, false) => draw_on(root, chart, o, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw_on(root, chart, o, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw_on(root, chart, o, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }
}

/// Pixels per SVG unit in the PNG: 2, for slides and screens with dense pixels.
const PNG_SCALE: f32 = 2.0;

/// The font database the PNGs' text is laid out with: the embedded DejaVu Sans as every
/// generic family, so that PNG and SVG (viewed where DejaVu Sans is installed) agree.
fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> =
        std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(include_bytes!("../../../assets/DejaVuSans.ttf").to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        std::sync::Arc::new(db)
    })
    .clone()
}

/// The PNG of an SVG picture, rendered by resvg (text shaped with the font's kerning; plotters'
/// own bitmap text drops each glyph's side bearing, which opened gaps inside words).
pub(crate) fn rasterise(svg: &str) -> Result<Vec<u8>, String> {
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * PNG_SCALE).ceil() as u32,
        (size.height() * PNG_SCALE).ceil() as u32,
    );
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(w, h).ok_or_else(|| format!("no {w}x{h} picture"))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    let scale = resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE);
    resvg::render(&tree, scale, &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

/// Writes `<stem>.svg` (for papers: vector, text as text) and `<stem>.png` (the same picture
/// rendered at [`PNG_SCALE`]) into `dir` and returns their file names.
pub fn write_chart(dir: &Path, stem: &str, chart: &Chart) -> std::io::Result<Vec<String>> {
    register_font();
    let mut svg = String::new();
    draw(
        SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area(),
        chart,
    )
    .map_err(std::io::Error::other)?;
    let png = rasterise(&svg).map_err(|e| std::io::Error::other(format!("{stem}.png: {e}")))?;
    std::fs::write(dir.join(format!("{stem}.svg")), svg)?;
    std::fs::write(dir.join(format!("{stem}.png")), png)?;
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

/// The mean over every flow of a value in flows.csv at each sample time (the flows that have a
/// row then: a finite flow's while it is open), every `stride`-th sample, read as a stream.
fn mean_over_flows(
    path: &Path,
    stride: usize,
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
        let Some(t) = num(&row, 0) else { continue };
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

/// Options of the standard run plots.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlotOptions {
    pub smooth: Smoothing,
}

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
/// that a run need not keep its samples in memory to be plotted) and returns their file names.
/// With `summary`, every flow and link the theory predicts gets its equilibrium as a dotted
/// line in its colour; with `model`, a directory holding the model tier's files of the same
/// scenario, each series gets the model's trajectory beside it: same colour, dashed. Windows
/// are in KB (1000 bytes), as in the terminal and the reproductions' figures.
pub fn write_plots(
    dir: &Path,
    sc: &Scenario,
    summary: Option<&crate::summary::Summary>,
    model: Option<&Path>,
    options: &PlotOptions,
) -> std::io::Result<Vec<String>> {
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
    let end = sc.duration.as_secs_f64();
    let mut keys = (false, false);
    // The run's series, each followed by the model's and the theory's, when there are.
    let mut beside = |csv: &Path,
                      name: &str,
                      keys_of: &[String],
                      value: &dyn Fn(&csv::StringRecord) -> Option<f64>,
                      theory: &dyn Fn(&str) -> Option<f64>,
                      smooth: usize| {
        let mut ours = read_series(csv, 1, keys_of, stride, value)?;
        let mut theirs = match model {
            Some(m) => read_series(&m.join(name), 1, keys_of, stride, value)?,
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
    let above_received = goodput_above_received(&flows_csv, &flow_ids, stride, smooth)?;
    let cwnd = beside(
        &flows_csv,
        "flows.csv",
        &flow_ids,
        &|r| num(r, 4).map(|c| c / 1e3),
        &|id| flow_theory(id).map(|t| t.cwnd_bytes / 1e3),
        1,
    )?;
    let (links, which) = links_to_plot(sc, &links_csv)?;
    let queue = beside(
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
    let (throughput, cwnd, flows_note) = if sc.flows.len() > MAX_SERIES {
        let mean = |series: &mut Vec<Series>, value: &dyn Fn(&csv::StringRecord) -> Option<f64>| {
            let pts = mean_over_flows(&flows_csv, stride, value)?;
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
    let with_keys = |mut series: Vec<Series>| {
        if keys.0 {
            series.push(Series::key("dashed: model tier", true, false));
        }
        if keys.1 {
            series.push(Series::key("dotted: theory", false, true));
        }
        series
    };
    let chart = |title: String, y: &str, series: Vec<Series>| Chart {
        title: format!("{}: {title}", sc.name),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series: with_keys(series),
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
                ..chart(goodput, "Mb/s", throughput)
            },
        ),
        (
            "cwnd",
            Chart {
                note: flows_note.clone(),
                ..chart("congestion window".into(), "KB", cwnd)
            },
        ),
        (
            "queue",
            chart(format!("queue at {which}"), "packets", queue),
        ),
        (
            "utilization",
            chart(
                format!("utilisation of {which}"),
                "fraction of capacity",
                utilisation,
            ),
        ),
    ] {
        files.extend(write_chart(dir, stem, &c)?);
    }
    Ok(files)
}

/// The goodput plot's note when a flow's goodput, as drawn, rises above the most its receiver
/// got in any sample (flows.csv's `received_bps`, smoothed alike), which the path's capacity
/// bounds: goodput counts data delivered in order, and a repair releases at once the data
/// received behind the hole.
fn goodput_above_received(
    flows_csv: &Path,
    flow_ids: &[String],
    stride: usize,
    smooth: usize,
) -> std::io::Result<Option<String>> {
    let column = |i: usize| {
        read_series(flows_csv, 1, flow_ids, stride, &move |r| num(r, i)).map(|mut all| {
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
    fn lines_are_cut_where_they_leave_the_axis() {
        let pts = [(0.0, 1.0), (1.0, 3.0), (2.0, 1.0), (3.0, 1.0)];
        let parts = below(&pts, 2.0);
        assert_eq!(
            parts,
            vec![
                vec![(0.0, 1.0), (0.5, 2.0)],
                vec![(1.5, 2.0), (2.0, 1.0), (3.0, 1.0)]
            ]
        );
        assert_eq!(below(&pts, 5.0), vec![pts.to_vec()]);
    }

    #[test]
    fn a_short_spike_is_cut_off_and_a_level_stays_in_view() {
        let mut pts: Vec<(f64, f64)> = (0..400).map(|i| (i as f64, 1.0)).collect();
        pts[3].1 = 12.7;
        let chart = Chart {
            series: vec![
                Series::new("ratio", pts.clone()),
                Series::level("r_ref", 1.5, 0.0, 400.0),
            ],
            ..Chart::default()
        };
        let b = bounds(&chart);
        let o = b.off_scale.expect("the spike is off scale");
        assert_eq!((o.peak, o.at), (12.7, 3.0));
        assert!(b.y.1 > 1.5 && b.y.1 < 2.0, "{:?}", b.y);
        // A peak that lasts is data, not a transient: no cut.
        for p in pts.iter_mut().skip(200) {
            p.1 = 12.7;
        }
        let chart = Chart {
            series: vec![Series::new("ratio", pts)],
            ..Chart::default()
        };
        assert!(bounds(&chart).off_scale.is_none());
    }

    #[test]
    fn references_are_darker_and_tiers_share_the_colour() {
        let chart = Chart {
            series: vec![
                Series::new("a", vec![(0.0, 1.0)]),
                Series::new("a (model)", vec![(0.0, 1.0)]).as_dashed(),
                Series::level("a (theory)", 1.0, 0.0, 1.0),
                Series::new("b", vec![(0.0, 1.0)]),
            ],
            ..Chart::default()
        };
        let c = colours(&chart);
        assert_eq!(c[0], c[1]);
        assert!(c[2].0 < c[0].0 || c[2].1 < c[0].1);
        assert_ne!(c[3], c[0]);
    }

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

    #[test]
    fn ticks_read_as_numbers() {
        assert_eq!(tick(10.0), "10");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(2.5e-5), "2.5e-5");
        assert_eq!(tick(0.1 + 0.2), "0.3");
        assert_eq!(significant(12.7456, 3), "12.7");
        assert_eq!(significant(2.6396, 3), "2.64");
    }
}
