//! `acclab plot DIR`: a finished run's or sweep's figures drawn again from its files, in the
//! size, formats, time range, axes and selection asked for, without simulating anything; and
//! the figure options `run` and `model` take too.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use acclab_results::plot::{Formats, PlotOptions, Preset, Smoothing, Style};

use crate::outdir::OutDir;

/// How figures are drawn: what `plot`, and `run`/`model` with `--plots`, take.
#[derive(clap::Args, Clone, Debug)]
pub struct FigureArgs {
    /// The goodput plot's trailing mean: auto (1 s, or a twentieth of the run if shorter), none
    /// (each sample as it is), or a window such as 500ms. The plot's title says which.
    #[arg(long, value_name = "WINDOW", default_value = "auto", value_parser = Smoothing::parse)]
    pub smooth: Smoothing,
    /// Figure size: screen (1100×560 px with a title), column (3.5 in wide: one column of a
    /// two-column paper, 8 pt labels, no title, the legend below) or page (7 in: a figure*).
    #[arg(long, default_value = "screen", value_parser = Preset::parse)]
    pub preset: Preset,
    /// The files each figure is written as: a comma-separated list of svg, png and pdf.
    #[arg(long, value_name = "LIST", default_value = "svg,png", value_parser = Formats::parse)]
    pub formats: Formats,
    /// Only this part of the run: FROM..TO, in seconds or with a unit (2..5, 500ms..1.5s).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_range)]
    pub range: Option<TimeRange>,
    /// The flows whose goodput and window are drawn (ids, comma-separated), instead of the
    /// first twelve.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub flows: Vec<String>,
    /// The links whose queue and utilisation are drawn (names, comma-separated), instead of
    /// `[output] plot_links` or the bottlenecks.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub links: Vec<String>,
    /// A logarithmic x axis on every figure.
    #[arg(long)]
    pub log_x: bool,
    /// A logarithmic y axis on every figure.
    #[arg(long)]
    pub log_y: bool,
}

/// A part of a run, s from its start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeRange(pub f64, pub f64);

/// `FROM..TO`, each a number of seconds or a duration (`500ms`).
fn parse_range(s: &str) -> Result<TimeRange, String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!(
            "{s:?}: expected FROM..TO, e.g. 2..5 or 500ms..1.5s"
        ));
    };
    let secs = |v: &str| -> Result<f64, String> {
        let v = v.trim();
        if let Ok(x) = v.parse::<f64>() {
            return Ok(x);
        }
        acclab_core::Duration::parse(v)
            .map(|d| d.as_secs_f64())
            .map_err(|e| format!("{v:?} in {s:?}: {e}"))
    };
    let (a, b) = (secs(a)?, secs(b)?);
    if !(a.is_finite() && b.is_finite() && a >= 0.0 && b > a) {
        return Err(format!(
            "{s:?}: the range must start at 0 s or later and end after it starts"
        ));
    }
    Ok(TimeRange(a, b))
}

impl FigureArgs {
    pub fn options(&self) -> PlotOptions {
        PlotOptions {
            smooth: self.smooth,
            style: Style {
                preset: self.preset,
                formats: self.formats,
            },
            range: self.range.map(|r| (r.0, r.1)),
            flows: self.flows.clone(),
            links: self.links.clone(),
            log_x: self.log_x,
            log_y: self.log_y,
        }
    }

    /// The options that pick from a run's time series (a sweep's figures have none).
    fn run_only(&self) -> Vec<&'static str> {
        let mut used = Vec::new();
        if self.smooth != Smoothing::Auto {
            used.push("--smooth");
        }
        if self.range.is_some() {
            used.push("--range");
        }
        if !self.flows.is_empty() {
            used.push("--flows");
        }
        if !self.links.is_empty() {
            used.push("--links");
        }
        used
    }
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// A finished run's directory (`acclab run`, `model`, `live`, or Python's `acclab.run`)
    /// or a sweep's.
    pub dir: PathBuf,
    /// Where the figures go [default: DIR/figures, or the next free one with -2, -3, …].
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub figures: FigureArgs,
    /// Replace figures already in --out.
    #[arg(long)]
    pub force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `figures.json` records of a redraw.
const RECORD: &str = "figures.json";

pub fn plot(args: PlotArgs) -> Result<()> {
    let dir = &args.dir;
    if !dir.is_dir() {
        bail!("{}: no such directory", dir.display());
    }
    let sweep = dir.join(acclab_study::store::PLAN_FILE).is_file();
    if !sweep && !dir.join("summary.json").is_file() {
        let what = if dir.join("comparison.json").is_file() {
            "a reproduction's directory: `acclab reproduce` draws its figure"
        } else {
            "neither a run's directory (summary.json) nor a sweep's (sweep.json)"
        };
        bail!("{}: {what}", dir.display());
    }
    let out = OutDir::claim(args.out.clone(), dir, "figures", args.force)?;
    let staging = out.staging().to_path_buf();
    let options = args.figures.options();
    let (kind, files) = if sweep {
        let used = args.figures.run_only();
        if !used.is_empty() {
            bail!(
                "{} is a sweep: {} pick from a run's time series; a sweep's figures take --preset, --formats, --log-x and --log-y",
                dir.display(),
                used.join(", ")
            );
        }
        ("sweep", sweep_figures(dir, &staging, &options)?)
    } else {
        ("run", run_figures(dir, &staging, &options)?)
    };
    let record = serde_json::json!({
        "from": std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
        "kind": kind,
        "command": std::env::args().collect::<Vec<_>>(),
        "acclab": acclab_results::provenance::build(),
        "files": files,
    });
    std::fs::write(
        staging.join(RECORD),
        serde_json::to_string_pretty(&record)? + "\n",
    )
    .with_context(|| format!("cannot write {}", staging.join(RECORD).display()))?;
    let published = out.publish()?;
    if !args.quiet {
        println!(
            "{} figure files of {} in {}/: {}",
            files.len(),
            dir.display(),
            published.display(),
            files.join(", ")
        );
    }
    Ok(())
}

/// A run's figures from its flows.csv, links.csv, fct.csv, summary.json and scenario.toml;
/// the model tier's trajectories beside them when the run has a model/ directory.
pub(crate) fn run_figures(dir: &Path, out: &Path, options: &PlotOptions) -> Result<Vec<String>> {
    let scenario = dir.join(acclab_results::provenance::SCENARIO_FILE);
    if !scenario.is_file() {
        bail!(
            "{}: no {} (runs of acclab before 0.13's provenance records do not keep their scenario); run it again to redraw it",
            dir.display(),
            acclab_results::provenance::SCENARIO_FILE
        );
    }
    let sc = acclab_scenario::sweep_spec::load_file(&scenario)?.scenario;
    options.check(&sc).map_err(anyhow::Error::msg)?;
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let summary: acclab_results::Summary = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a run's summary", path.display()))?;
    let model = dir.join("model");
    let model = model.join("flows.csv").is_file().then_some(model);
    acclab_results::plot::write_run_figures(
        (dir, out),
        &sc,
        Some(&summary),
        model.as_deref(),
        options,
    )
    .with_context(|| format!("cannot draw the figures of {}", dir.display()))
}

/// A sweep's charts from its plan and run records, as the sweep drew them.
pub(crate) fn sweep_figures(dir: &Path, out: &Path, options: &PlotOptions) -> Result<Vec<String>> {
    let charts = acclab_study::sweep::results_of(dir)?.charts;
    let mut files = Vec::new();
    for (stem, chart) in charts {
        files.extend(
            options
                .write(out, &stem, chart)
                .with_context(|| format!("cannot draw {stem}"))?,
        );
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_take_seconds_and_durations() {
        assert_eq!(parse_range("2..5"), Ok(TimeRange(2.0, 5.0)));
        assert_eq!(parse_range("500ms..1.5s"), Ok(TimeRange(0.5, 1.5)));
        assert!(parse_range("5..2")
            .unwrap_err()
            .contains("end after it starts"));
        assert!(parse_range("2-5").unwrap_err().contains("FROM..TO"));
        assert!(parse_range("a..5").unwrap_err().contains("\"a\""));
    }
}
