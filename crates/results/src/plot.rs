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
pub use run::{write_plots, PlotOptions, Smoothing};

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
