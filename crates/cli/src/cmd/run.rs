//! `acclab run`: simulate a scenario file; with `--model`, the model tier beside it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::load::{load_with, output_dir, ScenarioArgs};
use crate::progress::TimeBar;
use crate::{outdir, report, STARTED};
use acclab_study::Threads;

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: ScenarioArgs,
    /// Override the scenario's seed (0 to 2^63 - 1, a TOML integer).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=acclab_scenario::spec::MAX_SEED))]
    pub seed: Option<u64>,
    /// Run even when the estimated memory exceeds what this machine has available.
    #[arg(long)]
    pub allow_large: bool,
    /// Also integrate the model tier on the scenario: its files go to model/ in the output
    /// directory, its window means beside the measured ones (summary.json and the table), its
    /// trajectories dashed beside the packet run's on every plot.
    #[arg(long)]
    pub model: bool,
    /// Bind a controller name the scenario's `kind = "python"` flows use to a Python class:
    /// NAME=path/file.py:Class or NAME=module:Class (repeatable). A scenario with such flows is
    /// run by Python's acclab package (`python3 -m acclab run`, or $ACCLAB_PYTHON).
    #[arg(long, value_name = "NAME=SPEC")]
    pub controller: Vec<String>,
    /// Threads of the run: `auto`, or a count from 1 to 256. More than one runs the parallel
    /// engine: the network partitioned by racks and pods, the serial run's results byte for
    /// byte. A run that cannot be parallel (one partition, jitter between partitions that
    /// reorders or reaches zero, in-band telemetry with packets that may be reordered) runs
    /// serially, with a note saying why. `auto`
    /// takes as many of this machine's idle cores as the network is estimated to gain from (a
    /// fabric of k = 8 and up; a dumbbell stays serial; $ACCLAB_CORES sets the cores). Sweeps
    /// already run their runs in parallel. Default: $ACCLAB_THREADS, or auto.
    #[arg(long, value_parser = Threads::parse)]
    pub threads: Option<Threads>,
}

pub fn run(run: RunArgs) -> Result<()> {
    let args = &run.common;
    // Taken apart, not cloned: the scenario holds every flow of a workload (~0.5 KB each).
    let crate::load::Loaded {
        scenario: mut sc,
        def,
        has_sweep,
    } = load_with(&args.scenario, &args.set)?;
    if !args.quiet && has_sweep {
        println!(
            "note: {} has a [sweep] table; `acclab run` runs the scenario as written, `acclab sweep {}` runs the sweep",
            args.scenario.display(),
            args.scenario.display()
        );
    }
    if let Some(seed) = run.seed {
        sc.seed = seed;
    }
    let python = sc
        .flows
        .iter()
        .any(|f| matches!(f.scheme, acclab_core::config::SchemeConfig::Python(_)));
    if python {
        return through_python(&run);
    }
    if !run.controller.is_empty() {
        bail!(
            "{}: --controller binds the controller of a `kind = \"python\"` flow, and this scenario has none",
            args.scenario.display()
        );
    }
    if let Some(why) = sc.not_simulable() {
        bail!("{}: {why}", args.scenario.display());
    }
    let asked = acclab_study::threads_or_default(run.threads)?;
    // (Auto: what the network gains from; said when that is more than one.)
    let (threads, auto) = match asked {
        Threads::Count(n) => (n, false),
        Threads::Auto { cores, idle } => {
            let auto = |c| acclab_sim::parallelism::auto_threads(&sc, c);
            let (n, why) = auto(idle);
            if !args.quiet {
                if n > 1 {
                    println!(
                        "{}: on {n} threads ({why}; --threads 1 for one)",
                        args.scenario.display()
                    );
                } else if let (m @ 2.., _) = auto(cores) {
                    // Split on an idle machine: said, as the run is slower for it.
                    println!(
                        "{}: on one thread (cores busy: {} of {cores}; --threads {m} to split it anyway)",
                        args.scenario.display(),
                        cores - idle
                    );
                }
            }
            (n, true)
        }
    };
    let cost = acclab_sim::cost::estimate(&sc);
    // A parallel run holds a replica of the simulator per thread (measured: 1.65 times the
    // serial run's peak on 2 threads).
    let memory = cost.memory_bytes * threads as f64;
    if let Some(free) = acclab_sim::cost::available_memory() {
        if memory > free && !run.allow_large {
            bail!(
                "{}: the run needs up to {:.1} GB of memory{} and this machine has {:.1} GB available ({cost}); shorten it, shrink its buffers, use fewer threads, or pass --allow-large",
                args.scenario.display(),
                memory / 1e9,
                if threads > 1 { format!(" on {threads} threads") } else { String::new() },
                free / 1e9
            );
        }
    }
    if cost.wall_s > acclab_sim::cost::MAX_WALL_S && !run.allow_large {
        bail!(
            "{}: the run may take up to {} ({cost}), over the {} acclab starts without asking; shorten it, slow its sources, or pass --allow-large",
            args.scenario.display(),
            acclab_sim::cost::seconds(cost.wall_s),
            acclab_sim::cost::seconds(acclab_sim::cost::MAX_WALL_S)
        );
    }
    if cost.is_large() && !args.quiet {
        println!("{}: a large run: {cost}", args.scenario.display());
    }
    for w in sc.warnings() {
        eprintln!("warning: {w}");
    }
    let plots = args.plots.then(|| args.figures.options());
    if let Some(p) = &plots {
        p.check(&sc).map_err(anyhow::Error::msg)?;
    }
    let dir = output_dir(args.out.clone(), &sc.name, args.force)?;
    let provenance =
        crate::load::provenance_of(&def, Some(sc.seed), Some(&args.scenario), &args.set);
    simulate(
        sc,
        dir,
        plots,
        args.quiet,
        run.model,
        Some(provenance),
        (threads, auto),
    )
}

/// Hands a run with Python controllers to Python's acclab package (`python3 -m acclab run`, or
/// `$ACCLAB_PYTHON -m acclab run`) with the same scenario, seed, patches, output directory and
/// controller bindings; its exit status is this command's.
fn through_python(run: &RunArgs) -> Result<()> {
    let args = &run.common;
    for (given, flag) in [
        (args.plots, "--plots"),
        (run.model, "--model"),
        (args.force, "--force"),
        (run.allow_large, "--allow-large"),
    ] {
        if given {
            bail!(
                "{}: {flag} is not available for a scenario with Python controllers (Python's acclab package runs it)",
                args.scenario.display()
            );
        }
    }
    let python = std::env::var_os("ACCLAB_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "acclab", "run"]).arg(&args.scenario);
    if let Some(out) = &args.out {
        cmd.arg("--out").arg(out);
    }
    if let Some(seed) = run.seed {
        cmd.arg("--seed").arg(seed.to_string());
    }
    for kv in &args.set {
        cmd.arg("--set").arg(kv);
    }
    for c in &run.controller {
        cmd.arg("--controller").arg(c);
    }
    if args.quiet {
        cmd.arg("--quiet");
    }
    let status = cmd.status().with_context(|| {
        format!(
            "{}: this scenario has controllers written in Python, which run through Python's acclab package, and {} could not be started (install Python 3.11+ and `pip install ./python`, or set ACCLAB_PYTHON to a Python that has it)",
            args.scenario.display(),
            std::path::Path::new(&python).display()
        )
    })?;
    if !status.success() {
        bail!(
            "{}: the run through `{} -m acclab run` failed ({status}; a Python without the acclab package says `No module named acclab`: `pip install ./python`, or set ACCLAB_PYTHON)",
            args.scenario.display(),
            std::path::Path::new(&python).display()
        );
    }
    Ok(())
}

/// Runs `sc` into `out` on `threads` threads (`auto`: chosen by `acclab_sim::parallelism::auto_threads`,
/// and no note if it falls back to one), then publishes its files, plots and summary.
pub fn simulate(
    sc: acclab_scenario::Scenario,
    out: outdir::OutDir,
    plots: Option<acclab_results::plot::PlotOptions>,
    quiet: bool,
    model: bool,
    provenance: Option<acclab_results::provenance::Provenance>,
    (threads, auto): (usize, bool),
) -> Result<()> {
    let for_model = model.then(|| sc.clone());
    let dir = out.staging().to_path_buf();
    let dir = dir.as_path();
    let stale = out.stale_partials();
    if !stale.is_empty() && !quiet {
        let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "note: {} incomplete result director{} of runs that were interrupted or killed beside this one; remove with: rm -r {}",
            stale.len(),
            if stale.len() == 1 { "y" } else { "ies" },
            names.join(" ")
        );
    }
    let end = sc.duration;
    let mut bar = TimeBar::new(&sc, "ms simulated", quiet);
    // Ctrl-C (or SIGTERM) stops the run at its next progress tick: nothing is published, and
    // the staging directory, marked INCOMPLETE, keeps what was written so far.
    let interrupted = crate::interrupt::Watch::start();
    // Samples go to flows.csv / links.csv (and packets to the trace, if asked for) as they are
    // taken and are not kept: plots read them back from the files.
    let done = interrupted.guard((Some(end), "simulated"), out.final_path(), || {
        acclab_study::run_scenario_on(sc, Some(dir), provenance.as_ref(), threads, &mut |t| {
            interrupted.check(t);
            bar.at(t)
        })
    });
    let done = match done {
        Ok(done) => done,
        Err(e) => {
            bar.finish();
            return Err(e);
        }
    }
    .with_context(|| format!("cannot write results into {}", dir.display()))?;
    bar.finish();
    // (An automatic choice falls back without a note: it was never asked for.)
    if let (Some(why), false) = (&done.serial_because, auto) {
        eprintln!("note: the run was serial, not on {threads} threads: {why}");
    }
    let mut summary = done.summary;
    let model_dir = match &for_model {
        Some(sc) => model_beside(sc, dir, &mut summary, quiet)?,
        None => None,
    };
    write_results(
        &done.sim,
        &summary,
        done.no_theory,
        out,
        plots,
        quiet,
        model_dir.as_deref(),
    )
}

/// Runs the model tier on `sc` into `dir`/model (files as a run's, the theory attached), puts
/// its window means beside the run's in `summary` and rewrites `dir`/summary.json. Returns the
/// model's directory, or `None` (saying why) when the scenario is outside the model's domain.
pub fn model_beside(
    sc: &acclab_scenario::Scenario,
    dir: &Path,
    summary: &mut acclab_results::Summary,
    quiet: bool,
) -> Result<Option<PathBuf>> {
    let settings = acclab_model::Settings::default();
    if let Err(outside) = acclab_model::Model::new(sc, settings) {
        eprintln!("note: no model run: {outside}");
        return Ok(None);
    }
    let mdir = dir.join("model");
    std::fs::create_dir(&mdir).with_context(|| format!("cannot create {}", mdir.display()))?;
    let mut bar = TimeBar::new(sc, "ms integrated (model)", quiet);
    let done = acclab_study::model_scenario(sc, settings, &mdir, None, &mut |t| bar.at(t));
    bar.finish();
    let (ms, _) = done.map_err(|e| {
        anyhow::anyhow!(
            "cannot write the model's results into {}: {e}",
            mdir.display()
        )
    })?;
    summary.attach_model(&ms);
    acclab_results::summary::write_summary(dir, summary)?;
    Ok(Some(mdir))
}

/// Finishes a run whose files are written into `out`'s staging directory: draws its plots,
/// publishes the directory and prints the summary table.
pub fn write_results(
    sim: &acclab_sim::Simulator,
    summary: &acclab_results::Summary,
    no_theory: Option<String>,
    out: outdir::OutDir,
    plots: Option<acclab_results::plot::PlotOptions>,
    quiet: bool,
    model: Option<&Path>,
) -> Result<()> {
    let staging = out.staging().to_path_buf();
    let dir = staging.as_path();
    if let Some(e) = &no_theory {
        eprintln!("note: no theory prediction: {e}");
    }
    let plot_files = if let Some(options) = &plots {
        acclab_results::plot::write_run_figures(
            (dir, dir),
            sim.scenario(),
            Some(summary),
            model,
            options,
        )
        .with_context(|| format!("cannot write plots into {}", dir.display()))?
    } else {
        Vec::new()
    };
    let dir = out.publish()?;
    if !quiet {
        report::print_summary(summary);
        if let Some(t0) = STARTED.get() {
            // summary.json's wall_time_s times the event loop; this, everything the command did.
            println!(
                "The whole command took {:.2} s of wall time (reading, setup, run, files).",
                t0.elapsed().as_secs_f64()
            );
        }
        let trace = match sim.scenario().output.trace.as_ref().map(|t| t.format) {
            Some(acclab_scenario::TraceFormat::Pcap) => {
                ", pcap/ (a pcapng per link and capture point)"
            }
            Some(acclab_scenario::TraceFormat::Csv) => ", trace.csv",
            None => "",
        };
        let programs = match (
            dir.join("tcp_info.csv").is_file(),
            dir.join("programs").is_dir(),
        ) {
            (true, true) => ", tcp_info.csv; the programs' output in programs/",
            (true, false) => ", tcp_info.csv",
            (false, true) => "; the programs' output in programs/",
            (false, false) => "",
        };
        let fct = match (
            dir.join("fct.csv").is_file(),
            dir.join("traffic.txt").is_file(),
        ) {
            (true, true) => ", fct.csv, traffic.txt",
            (true, false) => ", fct.csv",
            _ => "",
        };
        println!(
            "\nResults in {}/: summary.json, flows.csv, links.csv{fct}{trace}{}{programs}",
            dir.display(),
            if model.is_some() {
                "; the model tier's in model/"
            } else {
                ""
            }
        );
        if !plot_files.is_empty() {
            println!("Plots: {}", plot_files.join(", "));
        }
    }
    Ok(())
}
