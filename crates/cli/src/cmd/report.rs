//! `acclab report DIR`: a static HTML page of a finished run, sweep or reproduction, or of a
//! directory of them (`reproduce all`'s `results/repro/`), that a lab can publish as it is
//! (issue 54 §7). One `index.html` — style inline, no script, nothing fetched from elsewhere —
//! and its figures as SVG in `figures/` beside it. The page shows what the terminal showed and
//! more: the comparison tables with each check's outcome, the theory's and the model tier's
//! values beside the measured ones, every figure (a run's and a sweep's drawn again from their
//! files, a reproduction's copied), the provenance record and the effective scenario.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use acclab_repro::report::fmt_num;
use acclab_results::html::Page;
use acclab_results::plot::{Formats, PlotOptions, Style};
use acclab_results::provenance::{RECORD_FILE, SCENARIO_FILE};
use acclab_results::table::{Align, Mark, Table};

use crate::outdir::OutDir;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// A finished run's directory, a sweep's, a reproduction's, or a directory holding such
    /// directories (e.g. results/repro after `acclab reproduce all`).
    pub dir: PathBuf,
    /// Where the page goes [default: DIR/report, or the next free one with -2, -3, …].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace a report already in --out.
    #[arg(long)]
    pub force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The page's file.
const PAGE: &str = "index.html";
/// What `report.json` records: where the page came from, how, and its figures.
const RECORD: &str = "report.json";
/// The figures' directory beside the page.
const FIGURES: &str = "figures";
/// Rows shown of a long table (a fabric's flows); the rest are in the run's files.
const MAX_ROWS: usize = 100;

/// What a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Run,
    Sweep,
    Reproduction,
}

impl Kind {
    fn of(dir: &Path) -> Option<Kind> {
        if dir.join("comparison.json").is_file() {
            Some(Kind::Reproduction)
        } else if dir.join(acclab_study::store::PLAN_FILE).is_file() {
            Some(Kind::Sweep)
        } else if dir.join("summary.json").is_file() {
            Some(Kind::Run)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Sweep => "sweep",
            Kind::Reproduction => "reproduction",
        }
    }
}

pub fn report(args: ReportArgs) -> Result<()> {
    let dir = &args.dir;
    if !dir.is_dir() {
        bail!("{}: no such directory", dir.display());
    }
    // One entry, or the entries one level down (in name order).
    let entries: Vec<(String, PathBuf, Kind)> = match Kind::of(dir) {
        Some(k) => vec![(String::new(), dir.clone(), k)],
        None => {
            let mut subs: Vec<(String, PathBuf, Kind)> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .filter_map(|e| {
                    let p = e.path();
                    Kind::of(&p).map(|k| (e.file_name().to_string_lossy().into_owned(), p, k))
                })
                .collect();
            subs.sort_by(|a, b| a.0.cmp(&b.0));
            subs
        }
    };
    if entries.is_empty() {
        bail!(
            "{}: neither a run's directory (summary.json), a sweep's (sweep.json) nor a \
             reproduction's (comparison.json), and no such directory in it",
            dir.display()
        );
    }
    let out = OutDir::claim(args.out.clone(), dir, "report", args.force)?;
    let staging = out.staging().to_path_buf();
    let mut writer = Writer {
        root: staging.clone(),
        figures: Vec::new(),
    };
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let page = if let [(_, path, kind)] = entries.as_slice() {
        let title = entry_title(path, *kind, &name)?;
        let mut page = Page::new(&title);
        writer.entry(&mut page, path, *kind, "", 2)?;
        page
    } else {
        let mut page = Page::new(&format!("acclab results: {name}"));
        writer.overview(&mut page, &entries)?;
        for (sub, path, kind) in &entries {
            page.heading(2, &anchor(sub), &entry_title(path, *kind, sub)?);
            writer
                .entry(&mut page, path, *kind, sub, 3)
                .with_context(|| format!("cannot report {}", path.display()))?;
        }
        page
    };
    let generator = format!("acclab {}", acclab_results::provenance::build());
    write(&staging.join(PAGE), page.finish(&generator).as_bytes())?;
    let kind = match entries.as_slice() {
        [(_, _, k)] => k.name(),
        _ => "collection",
    };
    let record = serde_json::json!({
        "from": std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
        "kind": kind,
        "entries": entries.iter().map(|e| &e.0).collect::<Vec<_>>(),
        "command": std::env::args().collect::<Vec<_>>(),
        "acclab": acclab_results::provenance::build(),
        "page": PAGE,
        "figures": writer.figures,
    });
    write(
        &staging.join(RECORD),
        (serde_json::to_string_pretty(&record)? + "\n").as_bytes(),
    )?;
    let published = out.publish()?;
    if !args.quiet {
        println!(
            "report of {} ({kind}, {} figures) in {}/{PAGE}",
            dir.display(),
            writer.figures.len(),
            published.display()
        );
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// An HTML id from an entry's name.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not what acclab wrote", path.display()))
}

fn comparison(dir: &Path) -> Result<acclab_repro::report::Report> {
    read_json(&dir.join("comparison.json"))
}

/// A section's title: the experiment and its title, the run's or the sweep's scenario.
fn entry_title(dir: &Path, kind: Kind, name: &str) -> Result<String> {
    Ok(match kind {
        Kind::Reproduction => {
            let r = comparison(dir)?;
            format!(
                "{}{}: {}",
                r.id,
                if r.quick { " (quick)" } else { "" },
                r.title
            )
        }
        Kind::Run => {
            let s: acclab_results::Summary = read_json(&dir.join("summary.json"))?;
            format!("{} of {}", s.mode, s.scenario)
        }
        Kind::Sweep => format!("sweep {name}"),
    })
}

/// Writes the page's sections and its figures.
struct Writer {
    root: PathBuf,
    /// Every figure written, relative to the page.
    figures: Vec<String>,
}

impl Writer {
    /// The figures' directory of an entry (`figures/`, or `figures/NAME/` in a collection).
    fn figure_dir(&self, sub: &str) -> Result<(PathBuf, String)> {
        let rel = if sub.is_empty() {
            FIGURES.to_string()
        } else {
            format!("{FIGURES}/{sub}")
        };
        let path = self.root.join(&rel);
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok((path, rel))
    }

    /// Adds the SVG files among `files` (in `rel`) to the page.
    fn show_figures(&mut self, page: &mut Page, level: u8, rel: &str, files: &[String]) {
        let svgs: Vec<&String> = files.iter().filter(|f| f.ends_with(".svg")).collect();
        page.heading(level, &anchor(&format!("{rel}-figures")), "Figures");
        if svgs.is_empty() {
            page.note("No figures.");
        }
        for f in svgs {
            let src = format!("{rel}/{f}");
            page.figure(&src, f.trim_end_matches(".svg"));
            self.figures.push(src);
        }
    }

    /// The table of a collection's entries: what each is and, for reproductions, the outcome.
    fn overview(&mut self, page: &mut Page, entries: &[(String, PathBuf, Kind)]) -> Result<()> {
        let mut t =
            Table::new(["entry", "kind", "checks", "time s", "result"]).align(4, Align::Left);
        let (mut passed, mut reproductions) = (0, 0);
        for (name, path, kind) in entries {
            let (checks, result, time, mark) = match kind {
                Kind::Reproduction => {
                    let r = comparison(path)?;
                    let (ok, n) = r.score();
                    reproductions += 1;
                    passed += usize::from(r.passed());
                    let left = match r.left_to_full_run() {
                        0 => String::new(),
                        n => format!(" ({n} full run only)"),
                    };
                    (
                        format!("{ok}/{n}{left}"),
                        if r.passed() { "PASS" } else { "FAIL" }.to_string(),
                        format!("{:.1}", r.wall_time_s),
                        Some(if r.passed() { Mark::Pass } else { Mark::Fail }),
                    )
                }
                _ => ("-".into(), "-".into(), "-".into(), None),
            };
            t.push_marked(
                vec![name.clone(), kind.name().into(), checks, time, result],
                mark,
            );
        }
        if reproductions > 0 {
            page.verdict(
                passed == reproductions,
                if passed == reproductions {
                    "PASS"
                } else {
                    "FAIL"
                },
                &format!("{passed} of {reproductions} reproductions pass"),
            );
        }
        page.table(&t, usize::MAX);
        page.contents(entries.iter().map(|(n, _, _)| (anchor(n), n.clone())));
        Ok(())
    }

    /// One run's, sweep's or reproduction's part of the page, its headings at `level`.
    fn entry(
        &mut self,
        page: &mut Page,
        dir: &Path,
        kind: Kind,
        sub: &str,
        level: u8,
    ) -> Result<()> {
        match kind {
            Kind::Run => self.run(page, dir, sub, level)?,
            Kind::Sweep => self.sweep(page, dir, sub, level)?,
            Kind::Reproduction => self.reproduction(page, dir, sub, level)?,
        }
        provenance(page, dir, sub, level)
    }

    fn run(&mut self, page: &mut Page, dir: &Path, sub: &str, level: u8) -> Result<()> {
        let s: acclab_results::Summary = read_json(&dir.join("summary.json"))?;
        page.paragraph(&format!(
            "{} s simulated ({} events, {} packet-hops) in {:.2} s of wall time; measured over \
             {}–{} s; seed {}.",
            fmt_num(s.sim_time_s),
            s.events,
            s.packet_hops,
            s.wall_time_s,
            fmt_num(s.window.from_s),
            fmt_num(s.window.to_s),
            s.seed
        ));
        if let Some(t) = &s.theory {
            page.note(&format!("Theory beside the measurement: {}.", t.model));
        }
        page.heading(level, &anchor(&format!("{sub}-flows")), "Flows");
        let flows = crate::report::flow_table(&s, MAX_ROWS);
        page.table(&flows, MAX_ROWS);
        more(page, s.flows.len(), "flows");
        page.heading(level, &anchor(&format!("{sub}-links")), "Links");
        let links = crate::report::link_table(&s);
        page.table(&links, MAX_ROWS);
        more(page, links.len(), "links");
        if let Some(j) = s.fairness.jain {
            page.note(&format!("Jain's fairness index over the window: {j:.4}"));
        }
        if let Some(fct) = crate::report::fct_table(&s) {
            page.heading(
                level,
                &anchor(&format!("{sub}-fct")),
                "Flow completion times",
            );
            page.table(&fct, usize::MAX);
        }
        for n in crate::report::theory_notes(&s) {
            page.note(&n);
        }
        let (path, rel) = self.figure_dir(sub)?;
        let files = if dir.join(SCENARIO_FILE).is_file() {
            crate::cmd::plot::run_figures(dir, &path, &svg_only())?
        } else {
            // A run from before provenance records: the figures it drew, as they are.
            copy_svgs(dir, &path)?
        };
        self.show_figures(page, level, &rel, &files);
        Ok(())
    }

    fn sweep(&mut self, page: &mut Page, dir: &Path, sub: &str, level: u8) -> Result<()> {
        let results = acclab_study::sweep::results_of(dir)?;
        let plan = &results.plan;
        page.paragraph(&format!(
            "{} runs of {}: {} points over {} × {} seeds ({}).",
            plan.runs.len(),
            plan.scenario,
            plan.points.len(),
            plan.keys.join(", "),
            plan.seeds.len(),
            plan.seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        page.heading(
            level,
            &anchor(&format!("{sub}-aggregate")),
            "Means over seeds",
        );
        let mut columns: Vec<String> = plan.keys.clone();
        columns.extend(
            ["entity", "id", "metric", "n", "mean", "95% CI", "note"]
                .iter()
                .map(|c| c.to_string()),
        );
        // The values as written, the entity and the metric to the left; numbers to the right.
        let k = plan.keys.len();
        let mut t = Table::new(columns);
        for i in (0..k + 3).chain([k + 6]) {
            t = t.align(i, Align::Left);
        }
        for a in results
            .aggregate
            .iter()
            .filter(|a| plan.metrics.contains(&a.metric))
        {
            let mut cells = plan.points[a.point].clone();
            cells.extend([
                a.entity.to_string(),
                a.id.clone(),
                a.metric.clone(),
                a.n.to_string(),
                fmt_num(a.mean),
                a.ci95.map_or("-".into(), |(lo, hi)| {
                    format!("{} … {}", fmt_num(lo), fmt_num(hi))
                }),
                a.note.unwrap_or("").to_string(),
            ]);
            t.push(cells);
        }
        page.table(&t, MAX_ROWS);
        more(page, t.len(), "rows (aggregate.csv has every metric)");
        let (path, rel) = self.figure_dir(sub)?;
        let files = crate::cmd::plot::sweep_figures(dir, &path, &svg_only())?;
        self.show_figures(page, level, &rel, &files);
        Ok(())
    }

    fn reproduction(&mut self, page: &mut Page, dir: &Path, sub: &str, level: u8) -> Result<()> {
        let r = comparison(dir)?;
        let (ok, n) = r.score();
        let left = match r.left_to_full_run() {
            0 => String::new(),
            n => format!("; {n} more for the full run only"),
        };
        page.verdict(
            r.passed(),
            if r.passed() { "PASS" } else { "FAIL" },
            &format!(
                "{ok} of {n} checks pass{left}; {} run, {:.1} s.",
                if r.quick { "the quick" } else { "the full" },
                r.wall_time_s
            ),
        );
        page.heading(
            level,
            &anchor(&format!("{sub}-comparison")),
            "Paper, theory, model and measurement",
        );
        page.table(&r.comparison(), usize::MAX);
        for note in &r.notes {
            page.note(&format!("Note: {note}"));
        }
        let (path, rel) = self.figure_dir(sub)?;
        let mut files = Vec::new();
        for f in r.files.iter().filter(|f| f.ends_with(".svg")) {
            let from = dir.join(f);
            std::fs::copy(&from, path.join(f))
                .with_context(|| format!("cannot copy {}", from.display()))?;
            files.push(f.clone());
        }
        self.show_figures(page, level, &rel, &files);
        Ok(())
    }
}

/// "… and N more" under a table cut to [`MAX_ROWS`].
fn more(page: &mut Page, len: usize, what: &str) {
    if len > MAX_ROWS {
        page.note(&format!(
            "… and {} more {what}: the first {MAX_ROWS} are shown; every one is in the run's files.",
            len - MAX_ROWS
        ));
    }
}

/// The figure options of the page: as the run drew them, SVG only.
fn svg_only() -> PlotOptions {
    PlotOptions {
        style: Style {
            formats: Formats {
                svg: true,
                png: false,
                pdf: false,
            },
            ..Style::default()
        },
        ..PlotOptions::default()
    }
}

/// Copies the SVG figures of `dir` into `to`; their names.
fn copy_svgs(dir: &Path, to: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    names.sort();
    for n in &names {
        std::fs::copy(dir.join(n), to.join(n))
            .with_context(|| format!("cannot copy {}", dir.join(n).display()))?;
    }
    Ok(names)
}

/// The provenance record and the effective scenario, where the directory has them.
fn provenance(page: &mut Page, dir: &Path, sub: &str, level: u8) -> Result<()> {
    page.heading(
        level,
        &anchor(&format!("{sub}-provenance")),
        "How it was made",
    );
    let record = dir.join(RECORD_FILE);
    if record.is_file() {
        let v: serde_json::Value = read_json(&record)?;
        page.pairs(provenance_pairs(&v));
    } else {
        page.note(&format!(
            "No {RECORD_FILE}: made by an acclab that kept no provenance record."
        ));
    }
    let scenario = dir.join(SCENARIO_FILE);
    if scenario.is_file() {
        let text = std::fs::read_to_string(&scenario)
            .with_context(|| format!("cannot read {}", scenario.display()))?;
        page.listing_folded(&format!("The scenario ({SCENARIO_FILE})"), &text);
    }
    Ok(())
}

/// A provenance record's fields as the page shows them.
fn provenance_pairs(v: &serde_json::Value) -> Vec<(String, String)> {
    let s = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".into(),
        v => v.to_string(),
    };
    let mut pairs = vec![(
        "acclab".to_string(),
        format!(
            "{} (commit {})",
            s(&v["acclab"]["version"]),
            s(&v["acclab"]["commit"])
        ),
    )];
    if let Some(cmd) = v["command"].as_array() {
        let words: Vec<String> = cmd.iter().map(|w| shell_word(&s(w))).collect();
        pairs.push(("command".into(), words.join(" ")));
    }
    for (key, name) in [
        ("cwd", "directory"),
        ("experiment", "experiment"),
        ("quick", "quick"),
        ("traces", "traces"),
        ("scenario_file", "scenario file"),
        ("seed", "seed"),
    ] {
        if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
            pairs.push((name.into(), s(x)));
        }
    }
    if let Some(set) = v["set"].as_array().filter(|a| !a.is_empty()) {
        pairs.push((
            "--set".into(),
            set.iter().map(s).collect::<Vec<_>>().join("; "),
        ));
    }
    if let Some(t) = v["started_unix_s"].as_f64() {
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(t.max(0.0));
        pairs.push((
            "started".into(),
            humantime::format_rfc3339_seconds(when).to_string(),
        ));
    }
    let m = &v["machine"];
    if m.is_object() {
        pairs.push((
            "machine".into(),
            format!(
                "{} ({} {}; {} CPUs, {}; {} GB)",
                s(&m["hostname"]),
                s(&m["os"]),
                s(&m["arch"]),
                s(&m["cpus"]),
                s(&m["cpu_model"]),
                s(&m["memory_gb"])
            ),
        ));
    }
    pairs
}

/// A command-line word as a shell takes it back: quoted when it holds anything but plain
/// characters.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words_are_quoted_for_a_shell() {
        assert_eq!(shell_word("run"), "run");
        assert_eq!(
            shell_word("link.\"r1->r2\".rate=5"),
            "'link.\"r1->r2\".rate=5'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn provenance_shows_the_build_command_and_machine() {
        let v = serde_json::json!({
            "acclab": {"version": "0.1.0", "commit": "abc"},
            "command": ["acclab", "run", "a b.toml"],
            "seed": 3,
            "set": ["seed=3"],
            "started_unix_s": 0.0,
            "machine": {"hostname": "h", "os": "linux", "arch": "x86_64", "cpus": 2,
                        "cpu_model": "cpu", "memory_gb": 8.0},
        });
        let p = provenance_pairs(&v);
        let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("acclab"), Some("0.1.0 (commit abc)"));
        assert_eq!(get("command"), Some("acclab run 'a b.toml'"));
        assert_eq!(get("seed"), Some("3"));
        assert_eq!(get("started"), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            get("machine"),
            Some("h (linux x86_64; 2 CPUs, cpu; 8.0 GB)")
        );
    }
}
