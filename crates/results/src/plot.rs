//! Plots (PNG and SVG): the standard plots of a run — per-flow throughput and window, per-link
//! queue and utilisation over time — and a general [`Chart`] that reproductions use for their
//! figures. plotters draws the SVG; resvg renders it to PNG. The font is embedded (DejaVu Sans,
//! see assets/) so plotting needs nothing from the system.

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// At most this many data lines per plot, so that the legend stays readable.
const MAX_SERIES: usize = 12;

mod run;
pub use run::{write_plots, write_run_figures, PlotOptions, Smoothing};

mod style;
pub use style::{Formats, Preset, Style};
use style::{Layout, Legend};

/// Markers along a line that has no marker at each point: about this many, so that series
/// are told apart in grey print too.
const MARKS_PER_LINE: usize = 8;

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
    /// An x range shaded grey behind the data (a run's measurement window).
    pub shade: Option<(f64, f64)>,
    /// The x axis' range, instead of the data's.
    pub x_range: Option<(f64, f64)>,
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
    let x = chart
        .x_range
        .unwrap_or_else(|| range(&xs, chart.log_x, 0.0, false));
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

/// The marker shape of each series: data lines get one each, in turn (circle, triangle,
/// square, cross, ring); other tiers' lines and reference lines none.
fn shapes(chart: &Chart) -> Vec<Option<usize>> {
    let mut next = 0;
    chart
        .series
        .iter()
        .map(|s| {
            (!s.dashed && !s.reference && (!s.points.is_empty() || s.markers)).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// A marker of `shape` centred on pixel `at`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    shape: usize,
    at: (i32, i32),
    size: i32,
    c: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x, y) = at;
    match shape % 5 {
        0 => area.draw(&Circle::new(at, size, c.filled())),
        1 => area.draw(&TriangleMarker::new(at, size + 1, c.filled())),
        2 => area.draw(&Rectangle::new(
            [(x - size, y - size), (x + size, y + size)],
            c.filled(),
        )),
        3 => area.draw(&Cross::new(at, size + 1, c.stroke_width(2))),
        _ => area.draw(&Circle::new(at, size + 1, c.stroke_width(1))),
    }
}

/// A short sample of a series' line style and marker at (x, y), as the legend shows it.
fn sample<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Series,
    (c, shape): (RGBAColor, Option<usize>),
    (x, y): (i32, i32),
    layout: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let len = layout.row * 26 / 19;
    let line = vec![(x, y), (x + len, y)];
    let stroke = c.stroke_width(layout.stroke);
    if s.reference {
        area.draw(&plotters::element::DashedPathElement::new(
            line, 2, 3, stroke,
        ))?;
    } else if s.dashed {
        area.draw(&plotters::element::DashedPathElement::new(
            line, 6, 4, stroke,
        ))?;
    } else if !s.points.is_empty() || s.markers {
        area.draw(&PathElement::new(line, stroke))?;
    }
    if let Some(shape) = shape {
        marker(area, shape, (x + len / 2, y), layout.marker, c)?;
    }
    Ok(())
}

/// The legend, in its own strip beside or below the plot: nothing in it can cover a data
/// point. Beside: one entry per row; below: as many per row as fit.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    looks: &[(RGBAColor, Option<usize>)],
    layout: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font: TextStyle = ("sans-serif", layout.key).into_font().into();
    let entries: Vec<(&Series, (RGBAColor, Option<usize>))> = legend_entries(chart, looks);
    let (w, h) = area.dim_in_pixel();
    let row = layout.row;
    let (top, columns, column_width) = match layout.legend {
        Legend::Right(_) => (46.min(4 * row), 1, w as i32),
        Legend::Below(cw) => (row / 2 + 2, (w / cw).max(1) as usize, cw as i32),
    };
    let rows = ((h as i32 - top - row / 2) / row).max(1) as usize;
    let text_x = row * 40 / 19;
    let width = column_width - text_x - 8;
    for (i, (s, look)) in entries.iter().enumerate() {
        let (r, col) = (i / columns, i % columns);
        let x = col as i32 * column_width;
        let y = top + row * r as i32;
        if r + 1 == rows && entries.len() > rows * columns && col + 1 == columns {
            let more = format!("… and {} more", entries.len() - i);
            area.draw(&Text::new(more, (x + 8, y), font.clone()))?;
            break;
        }
        sample(area, s, *look, (x + 6, y + row * 8 / 19), layout)?;
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
        area.draw(&Text::new(name, (x + text_x, y), font.clone()))?;
    }
    Ok(())
}

/// The series the legend lists, with their colour and marker.
fn legend_entries<'a>(
    chart: &'a Chart,
    looks: &[(RGBAColor, Option<usize>)],
) -> Vec<(&'a Series, (RGBAColor, Option<usize>))> {
    chart
        .series
        .iter()
        .zip(looks)
        .filter(|(s, _)| !s.no_legend && !s.name.is_empty())
        .map(|(s, l)| (s, *l))
        .collect()
}

fn draw_on<DB, X, Y>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
    b: &Bounds,
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
    let (w, h) = root.dim_in_pixel();
    let (plot, side) = match layout.legend {
        Legend::Right(strip) => root.split_horizontally(w.saturating_sub(strip)),
        Legend::Below(_) => root.split_vertically(layout.height.min(h)),
    };
    let mut builder = ChartBuilder::on(&plot);
    if layout.title > 0.0 {
        builder.caption(&chart.title, ("sans-serif", layout.title));
    }
    let mut c = builder
        .margin(layout.margin)
        .x_label_area_size(layout.x_area)
        .y_label_area_size(layout.y_area)
        .build_cartesian_2d(xr, yr)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style(("sans-serif", layout.ticks))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style(("sans-serif", layout.axis))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()
        .map_err(e)?;
    if let Some((s0, s1)) = chart.shade {
        let (x0, x1) = (s0.max(b.x.0), s1.min(b.x.1));
        if x1 > x0 {
            let area = [(x0, b.y.0), (x1, b.y.1)];
            c.draw_series(std::iter::once(Rectangle::new(
                area,
                BLACK.mix(0.07).filled(),
            )))
            .map_err(e)?;
        }
    }
    let colours = colours(chart);
    let shapes = shapes(chart);
    let stroke = layout.stroke;
    // The parts of a series inside the axes: points a log axis cannot show are left out, and
    // a line is cut where it leaves a cut-off y axis.
    let visible = |s: &Series| -> Vec<Vec<(f64, f64)>> {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| (!chart.log_x || p.0 > 0.0) && (!chart.log_y || p.1 > 0.0))
            .filter(|p| chart.x_range.is_none_or(|(x0, x1)| p.0 >= x0 && p.0 <= x1))
            .collect();
        match b.off_scale {
            Some(o) => below(&pts, o.top),
            None => vec![pts],
        }
    };
    // Data and other tiers' lines first, reference lines over them, so that none is hidden.
    for pass_references in [false, true] {
        for ((s, &color), shape) in chart.series.iter().zip(&colours).zip(&shapes) {
            if s.reference != pass_references {
                continue;
            }
            let parts = visible(s);
            for pts in &parts {
                let pts = pts.iter().copied();
                if s.reference {
                    c.draw_series(DashedLineSeries::new(pts, 2, 3, color.stroke_width(stroke)))
                } else if s.dashed {
                    c.draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(stroke)))
                } else {
                    c.draw_series(LineSeries::new(pts, color.stroke_width(stroke)))
                }
                .map_err(e)?;
            }
            if let Some(shape) = *shape {
                // Every point marked when the series asks; otherwise a few along the line,
                // staggered between series so that they do not sit on each other.
                let all: Vec<(f64, f64)> = parts.into_iter().flatten().collect();
                let every = if s.markers {
                    1
                } else {
                    all.len().div_ceil(MARKS_PER_LINE).max(1)
                };
                let first = (shape * every / 5) % every;
                let area = c.plotting_area();
                for &p in all.iter().skip(first).step_by(every) {
                    marker(&root, shape, area.map_coordinate(&p), layout.marker, color)
                        .map_err(e)?;
                }
            }
            let bars = s.points.iter().zip(&s.errors).filter(|(p, b)| {
                let ok = |y: f64| y.is_finite() && (!chart.log_y || y > 0.0);
                p.0.is_finite() && (!chart.log_x || p.0 > 0.0) && ok(b.0) && ok(b.1)
            });
            c.draw_series(bars.map(|(p, b)| {
                ErrorBar::new_vertical(
                    p.0,
                    b.0,
                    p.1,
                    b.1,
                    color.stroke_width(1),
                    2 * layout.marker as u32 + 2,
                )
            }))
            .map_err(e)?;
        }
    }
    let cut = b.off_scale.map(|o| {
        format!(
            "axis cut at {}: the peak, {} at x = {}, is off scale",
            significant(o.top, 3),
            significant(o.peak, 3),
            significant(o.at, 3)
        )
    });
    let shaded = chart
        .shade
        .map(|_| "shaded: the measurement window".to_string());
    let area = c.plotting_area().strip_coord_spec();
    let line = (layout.key * 1.4) as i32;
    let font = ("sans-serif", layout.key)
        .into_font()
        .color(&BLACK.mix(0.7));
    let room = area.dim_in_pixel().0 as i32 - line;
    let fits = |text: &str| {
        area.estimate_text_size(text, &font)
            .is_ok_and(|(w, _)| w as i32 <= room)
    };
    let notes = cut.iter().chain(&chart.note).chain(&shaded);
    let lines: Vec<String> = notes.flat_map(|n| wrap(n, &fits)).collect();
    for (k, text) in lines.iter().enumerate() {
        let at = (line / 2 - 1, line / 3 + line * k as i32);
        area.draw(&Text::new(text.as_str(), at, font.clone()))
            .map_err(e)?;
    }
    let looks: Vec<_> = colours.into_iter().zip(shapes).collect();
    legend(&side, chart, &looks, layout).map_err(e)?;
    root.present().map_err(e)
}

/// `text` in lines that each `fit`, broken between words (a word too long for a line stands
/// alone on its own).
fn wrap(text: &str, fits: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let longer = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if cur.is_empty() || fits(&longer) {
            cur = longer;
        } else {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
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

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
) -> Result<(), String> {
    let b = bounds(chart);
    let ((x0, x1), (y0, y1)) = (b.x, b.y);
    let l = layout;
    match (chart.log_x, chart.log_y) {
        (false, false) => draw_on(root, chart, l, &b, x0..x1, y0..y1),
        (true, false) => draw_on(root, chart, l, &b, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw_on(root, chart, l, &b, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw_on(
            root,
            chart,
            l,
            &b,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
        ),
    }
}

/// The picture's size: with the legend below, the axes' height and the legend's rows.
fn picture_size(chart: &Chart, layout: &Layout) -> (u32, u32) {
    match layout.legend {
        Legend::Right(_) => (layout.width, layout.height),
        Legend::Below(column) => {
            let looks: Vec<_> = vec![(BLACK.to_rgba(), None); chart.series.len()];
            let n = legend_entries(chart, &looks).len() as u32;
            let per_row = (layout.width / column).max(1);
            let rows = n.div_ceil(per_row);
            let extra = if rows == 0 {
                0
            } else {
                rows * layout.row as u32 + layout.row as u32 / 2 + 4
            };
            (layout.width, layout.height + extra)
        }
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

/// How the SVG pictures are read for PNG and PDF: text in the embedded font.
fn usvg_options() -> resvg::usvg::Options<'static> {
    resvg::usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    }
}

/// The PNG of an SVG picture, rendered by resvg (text shaped with the font's kerning; plotters'
/// own bitmap text drops each glyph's side bearing, which opened gaps inside words).
pub(crate) fn rasterise(svg: &str) -> Result<Vec<u8>, String> {
    let tree = resvg::usvg::Tree::from_str(svg, &usvg_options()).map_err(|e| e.to_string())?;
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
    write_figure(dir, stem, chart, &Style::default())
}

/// Writes the chart in `style`'s preset as each of its formats (`<stem>.svg`, `.png`,
/// `.pdf`) into `dir` and returns the file names written.
pub fn write_figure(
    dir: &Path,
    stem: &str,
    chart: &Chart,
    style: &Style,
) -> std::io::Result<Vec<String>> {
    register_font();
    let layout = style.preset.layout();
    let mut svg = String::new();
    draw(
        SVGBackend::with_string(&mut svg, picture_size(chart, &layout)).into_drawing_area(),
        chart,
        &layout,
    )
    .map_err(std::io::Error::other)?;
    let f = style.formats;
    let mut files = Vec::new();
    let mut out = |ext: &str, bytes: &[u8]| {
        let name = format!("{stem}.{ext}");
        std::fs::write(dir.join(&name), bytes)?;
        files.push(name);
        Ok::<_, std::io::Error>(())
    };
    let failed =
        |ext: &'static str| move |e: String| std::io::Error::other(format!("{stem}.{ext}: {e}"));
    if f.png {
        out("png", &rasterise(&svg).map_err(failed("png"))?)?;
    }
    if f.svg {
        out("svg", svg.as_bytes())?;
    }
    if f.pdf {
        out("pdf", &to_pdf(&svg).map_err(failed("pdf"))?)?;
    }
    Ok(files)
}

/// The PDF of an SVG picture, one page its size at 96 px per inch (so a 3.5 in figure is a
/// 3.5 in page), text kept as text in the embedded font.
pub(crate) fn to_pdf(svg: &str) -> Result<Vec<u8>, String> {
    let tree = resvg::usvg::Tree::from_str(svg, &usvg_options()).map_err(|e| e.to_string())?;
    let page = svg2pdf::PageOptions { dpi: 96.0 };
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page).map_err(|e| e.to_string())
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
    fn notes_wrap_between_words() {
        let fits = |t: &str| t.len() <= 10;
        assert_eq!(wrap("a bb ccc dddd", &fits), ["a bb ccc", "dddd"]);
        assert_eq!(
            wrap("averyveryverylongword x", &fits),
            ["averyveryverylongword", "x"]
        );
        assert_eq!(wrap("short", &fits), ["short"]);
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
