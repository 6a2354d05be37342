//! Plots of a run (PNG and SVG): per-flow throughput and window, per-link queue and utilisation
//! over time. The font is embedded (DejaVu Sans, see assets/) so plotting needs nothing from the
//! system.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::simulator::Simulator;

/// At most this many lines per plot, so that the legend stays readable.
const MAX_SERIES: usize = 12;

type Series = (String, Vec<(f64, f64)>);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font: &'static [u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
        // A failure leaves plotters without a font; drawing text then reports the error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
    });
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let x_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold(0.0, f64::max)
        .max(1e-9);
    let y_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

/// Writes `<stem>.png` and `<stem>.svg` into `dir`.
fn chart(
    dir: &Path,
    stem: &str,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> std::io::Result<()> {
    register_font();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    draw(
        BitMapBackend::new(&png, (1000, 560)).into_drawing_area(),
        title,
        y_label,
        series,
    )
    .map_err(std::io::Error::other)?;
    draw(
        SVGBackend::new(&svg, (1000, 560)).into_drawing_area(),
        title,
        y_label,
        series,
    )
    .map_err(std::io::Error::other)
}

/// Writes the four standard plots and returns their file names.
pub fn write_plots(dir: &Path, sim: &Simulator) -> std::io::Result<Vec<String>> {
    let sc = sim.scenario();
    let m = &sim.monitor;
    let pkt = sc.packet_size as f64;
    let flow_series = |f: &dyn Fn(&crate::monitor::FlowSample) -> Option<f64>| -> Vec<Series> {
        let mut out: Vec<Series> = sc
            .flows
            .iter()
            .map(|fl| (fl.id.clone(), Vec::new()))
            .collect();
        for s in &m.flow_samples {
            if let Some(v) = f(s) {
                out[s.flow as usize].1.push((s.t_s, v));
            }
        }
        out.retain(|(_, p)| !p.is_empty());
        out.truncate(MAX_SERIES);
        out
    };
    // Links worth showing: the busiest ones that ever carried traffic.
    let mut busy: Vec<(usize, f64)> = (0..sc.links.len())
        .map(|i| {
            let u = m
                .link_samples
                .iter()
                .filter(|s| s.link as usize == i)
                .map(|s| s.utilization)
                .sum();
            (i, u)
        })
        .filter(|&(_, u)| u > 0.0)
        .collect();
    busy.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    busy.truncate(MAX_SERIES.min(6));
    let link_series = |f: &dyn Fn(&crate::monitor::LinkSample) -> f64| -> Vec<Series> {
        busy.iter()
            .map(|&(i, _)| {
                let pts = m
                    .link_samples
                    .iter()
                    .filter(|s| s.link as usize == i)
                    .map(|s| (s.t_s, f(s)));
                (sc.links[i].name.clone(), pts.collect())
            })
            .collect()
    };
    let name = &sc.name;
    chart(
        dir,
        "throughput",
        &format!("{name}: throughput per flow"),
        "Mb/s",
        &flow_series(&|s| Some(s.throughput_bps / 1e6)),
    )?;
    chart(
        dir,
        "cwnd",
        &format!("{name}: congestion window"),
        "packets",
        &flow_series(&|s| s.cwnd_bytes.map(|c| c as f64 / pkt)),
    )?;
    chart(
        dir,
        "queue",
        &format!("{name}: queue at the busiest links"),
        "packets",
        &link_series(&|s| s.queue_pkts as f64),
    )?;
    chart(
        dir,
        "utilization",
        &format!("{name}: utilisation of the busiest links"),
        "fraction of capacity",
        &link_series(&|s| s.utilization),
    )?;
    Ok(["throughput", "cwnd", "queue", "utilization"]
        .iter()
        .flat_map(|s| [format!("{s}.png"), format!("{s}.svg")])
        .collect())
}
