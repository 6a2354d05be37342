//! `acclab reproduce`: run paper experiments, compare with the paper and the theory, draw.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::outdir;
use crate::progress::progress_bar;

#[derive(clap::Args)]
pub struct ReproduceArgs {
    /// An experiment ID (see --list), or "all".
    #[arg(required_unless_present = "list")]
    pub id: Option<String>,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Run the scaled-down variant (seconds instead of minutes) that checks the same claim.
    #[arg(long)]
    pub quick: bool,
    /// Output directory [default: results/repro/<id>, or the next free results/repro/<id>-N].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Overwrite results already in the output directory.
    #[arg(long)]
    pub force: bool,
    /// cellular-comparison: a directory of capacity traces in Mahimahi's format, every
    /// NAME.down with its NAME.up [default: the synthetic pair in scenarios/traces/].
    #[arg(long)]
    pub traces: Option<PathBuf>,
}

pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    let all = acclab_repro::registry();
    if args.list {
        for e in &all {
            println!("{:<16} {}", e.id(), e.title());
        }
        return Ok(());
    }
    let id = args.id.unwrap_or_default();
    let chosen: Vec<_> = if id == "all" {
        all
    } else {
        match acclab_repro::find(&id) {
            Some(e) => vec![e],
            None => {
                let near = crate::load::did_you_mean(&id, all.iter().map(|e| e.id()));
                bail!(
                    "no experiment {id:?}{near}; `acclab reproduce --list` shows the {} there are",
                    all.len()
                )
            }
        }
    };
    if chosen.len() > 1 && args.out.is_some() {
        bail!("--out names one directory; with \"all\" each experiment goes to results/repro/<id>");
    }
    let mut failed = Vec::new();
    let mut skipped = Vec::new();
    // (id, checks passed, checks, seconds, passed) of each experiment, for the final table.
    let mut done: Vec<(String, usize, usize, usize, f64, bool)> = Vec::new();
    let several = chosen.len() > 1;
    let interrupted = crate::interrupt::Watch::start();
    for e in chosen {
        let name = if args.quick {
            format!("{}-quick", e.id())
        } else {
            e.id().to_string()
        };
        let out = outdir::OutDir::claim(
            args.out.clone(),
            Path::new("results/repro"),
            &name,
            args.force,
        )?;
        let dir = out.staging().to_path_buf();
        println!(
            "== {} — {}{}",
            e.id(),
            e.title(),
            if args.quick { " (quick)" } else { "" }
        );
        let bar = progress_bar(100);
        let progress = |label: &str, fraction: f64| {
            interrupted.check_any();
            if let Some(b) = &bar {
                b.set_message(label.to_string());
                b.set_position((fraction * 100.0) as u64);
            }
        };
        let t0 = std::time::Instant::now();
        let ctx = acclab_repro::Ctx {
            quick: args.quick,
            out: dir.clone(),
            progress: &progress,
            traces: args.traces.clone(),
        };
        // Ctrl-C (or SIGTERM) stops the experiment's runs at their next progress tick.
        let outcome = interrupted.guard((None, ""), out.final_path(), || e.run(&ctx));
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let outcome = outcome?;
        let mut report = match outcome {
            // With "all", an experiment this machine cannot run (live in namespaces, without
            // root) is skipped, said so, and listed; asked for by name, it is an error.
            Err(acclab_repro::ReproError::Unavailable(why)) if several => {
                println!("SKIPPED: {why}\n");
                skipped.push(e.id());
                continue;
            }
            r => r.with_context(|| format!("{} did not run", e.id()))?,
        };
        report.wall_time_s = t0.elapsed().as_secs_f64();
        report.write(&dir)?;
        // How the reproduction was made (issue 54 §1), beside its comparison.
        let mut record = acclab_results::provenance::record(std::env::args().collect());
        record.extend([
            ("experiment".into(), serde_json::json!(e.id())),
            ("quick".into(), serde_json::json!(args.quick)),
            (
                "traces".into(),
                serde_json::json!(args.traces.as_ref().map(|t| t.display().to_string())),
            ),
        ]);
        acclab_results::provenance::write_record(&dir, &serde_json::Value::Object(record))?;
        let dir = out.publish()?;
        print!("{}", report.table());
        for n in &report.notes {
            println!("note: {n}");
        }
        let verdict = if report.passed() { "PASS" } else { "FAIL" };
        let (ok, checked) = report.score();
        let left = match report.left_to_full_run() {
            0 => String::new(),
            n => format!(" ({n} more for the full run only)"),
        };
        println!(
            "{verdict}: {ok} of {checked} checks pass{left}; {:.1} s; results in {}/ (comparison.csv, {})\n",
            report.wall_time_s,
            dir.display(),
            report
                .files
                .iter()
                .filter(|f| f.ends_with(".png"))
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
        done.push((
            e.id().to_string(),
            ok,
            checked,
            report.left_to_full_run(),
            report.wall_time_s,
            report.passed(),
        ));
        if !report.passed() {
            failed.push(e.id());
        }
    }
    if several {
        println!(
            "{:<18} {:>8} {:>9}  status",
            "experiment", "checks", "time s"
        );
        for (id, ok, n, left, t, passed) in &done {
            let full = match left {
                0 => String::new(),
                n => format!(" ({n} full run only)"),
            };
            println!(
                "{id:<18} {:>8} {t:>9.1}  {}{full}",
                format!("{ok}/{n}"),
                if *passed { "PASS" } else { "FAIL" }
            );
        }
        let total: f64 = done.iter().map(|d| d.4).sum();
        println!(
            "{} of {} experiments pass; {total:.1} s in all",
            done.iter().filter(|d| d.5).count(),
            done.len()
        );
        if !skipped.is_empty() {
            println!(
                "skipped, as this machine cannot run them: {}",
                skipped.join(", ")
            );
        }
    }
    if !failed.is_empty() {
        bail!("outside tolerance: {}", failed.join(", "));
    }
    Ok(())
}
