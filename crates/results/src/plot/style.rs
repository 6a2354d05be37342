//! How a figure is laid out and which files it is written as: the preset sizes (a screen
//! figure, and one and two columns of a paper) and the formats (SVG, PNG, PDF).
//!
//! The paper presets are sized in CSS pixels at 96 per inch, the unit SVG and the PDF page
//! (converted at 96 dpi) agree on, so that a figure included at its natural size keeps its
//! fonts at the size a paper's captions use: 8 pt axis labels, 7 pt ticks and legend.

/// A figure's size and type sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preset {
    /// 1100 × 560, title and legend at the right: for screens and slides (the default).
    #[default]
    Screen,
    /// One column of a two-column paper: 3.5 in wide, no title (the caption says it), the
    /// legend below the axes.
    Column,
    /// The width of a two-column page (a `figure*`): 7 in wide, no title, the legend at the right.
    Page,
}

impl Preset {
    pub const NAMES: &'static str = "screen, column or page";

    pub fn parse(s: &str) -> Result<Preset, String> {
        match s {
            "screen" => Ok(Preset::Screen),
            "column" => Ok(Preset::Column),
            "page" => Ok(Preset::Page),
            _ => Err(format!("{s:?}: expected {}", Preset::NAMES)),
        }
    }

    pub(crate) fn layout(self) -> Layout {
        match self {
            Preset::Screen => Layout {
                width: 1100,
                height: 560,
                legend: Legend::Right(230),
                title: 21.0,
                axis: 15.0,
                ticks: 14.0,
                key: 13.0,
                row: 19,
                stroke: 2,
                marker: 3,
                margin: 12,
                x_area: 44,
                y_area: 80,
            },
            // 8 pt = 10.7 px, 7 pt = 9.3 px at 96 px per inch.
            Preset::Column => Layout {
                width: 336,
                height: 220,
                legend: Legend::Below(112),
                title: 0.0,
                axis: 10.7,
                ticks: 9.3,
                key: 9.3,
                row: 12,
                stroke: 1,
                marker: 2,
                margin: 6,
                x_area: 30,
                y_area: 42,
            },
            Preset::Page => Layout {
                width: 672,
                height: 260,
                legend: Legend::Right(150),
                title: 0.0,
                axis: 10.7,
                ticks: 9.3,
                key: 9.3,
                row: 13,
                stroke: 1,
                marker: 2,
                margin: 6,
                x_area: 30,
                y_area: 46,
            },
        }
    }
}

/// Where the legend goes: a strip of this many pixels at the right, or rows of entries below
/// the axes, each this wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Legend {
    Right(u32),
    Below(u32),
}

/// Every size a figure is drawn with (pixels; type sizes in pixels too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Layout {
    /// The picture; with the legend below, `height` is the axes' part and the legend's rows
    /// are added to it.
    pub width: u32,
    pub height: u32,
    pub legend: Legend,
    /// The title's type size, 0 for no title.
    pub title: f64,
    pub axis: f64,
    pub ticks: f64,
    /// The legend's and the notes' type size, and the legend's row height.
    pub key: f64,
    pub row: i32,
    pub stroke: u32,
    pub marker: i32,
    pub margin: u32,
    pub x_area: u32,
    pub y_area: u32,
}

/// The files a figure is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    pub svg: bool,
    pub png: bool,
    pub pdf: bool,
}

impl Default for Formats {
    fn default() -> Formats {
        Formats {
            svg: true,
            png: true,
            pdf: false,
        }
    }
}

impl Formats {
    /// A comma-separated list of svg, png and pdf.
    pub fn parse(s: &str) -> Result<Formats, String> {
        let mut f = Formats {
            svg: false,
            png: false,
            pdf: false,
        };
        for part in s.split(',').map(str::trim) {
            match part {
                "svg" => f.svg = true,
                "png" => f.png = true,
                "pdf" => f.pdf = true,
                _ => return Err(format!("{part:?}: a figure format is svg, png or pdf")),
            }
        }
        Ok(f)
    }
}

/// How a chart is drawn and written.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Style {
    pub preset: Preset,
    pub formats: Formats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_formats_parse_and_refuse() {
        assert_eq!(Preset::parse("column"), Ok(Preset::Column));
        assert!(Preset::parse("col")
            .unwrap_err()
            .contains("screen, column or page"));
        let f = Formats::parse("pdf,svg").unwrap();
        assert!(f.pdf && f.svg && !f.png);
        assert!(Formats::parse("eps")
            .unwrap_err()
            .contains("svg, png or pdf"));
        // A paper column is 3.5 in at 96 px per inch, its axis labels 8 pt.
        let l = Preset::Column.layout();
        assert_eq!(l.width, 336);
        assert!((l.axis * 0.75 - 8.0).abs() < 0.05);
    }
}
