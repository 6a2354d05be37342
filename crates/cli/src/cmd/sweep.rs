//! `acclab sweep`: a scenario's keys varied over values and seeds, every run on all cores,
//! resumable, as one tidy table, aggregates with confidence intervals, and charts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use acclab_scenario::sweep_spec::{self, Axis, Seeds, SweepSpec};
use acclab_study::plan::Plan;
use acclab_study::store::SweepDir;
use anyhow::{bail, Context, Result};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The scenario file (TOML). Its `[sweep]` table, if it has one, is the sweep; --set adds
    /// keys to it or replaces them.
    scenario: PathBuf,
    /// A swept key and its values: KEY=V1,V2,… where a value may be a range A..B/N (N values,
    /// evenly spaced, ends included) or A..B/N log, e.g. flow.f0.params.weight=1..1000/4 log.
    /// Repeat for more keys: they are crossed (a grid) unless zipped.
    #[arg(long = "set", visible_alias = "param", value_name = "KEY=VALUES")]
    set: Vec<String>,
    /// Swept keys varied together instead of crossed (equally many values each), e.g.
    /// --zip flow.f0.params.weight,flow.f1.params.weight. Repeatable.
    #[arg(long, value_name = "KEY,KEY,…")]
    zip: Vec<String>,
    /// Seeds per point: a count N (the scenario's seed and the N − 1 after it) or a list 1,5,9.
    #[arg(long)]
    seeds: Option<String>,
    /// Runs at once [default: the number of cores over --threads].
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Threads of each run (the parallel engine, as `acclab run --threads`): `auto` or a count
    /// [default: $ACCLAB_THREADS, or auto]. Runs at once × threads stay within the cores: a
    /// sweep of many runs is fastest with one thread each (what `auto` gives it); a sweep of
    /// fewer runs than cores gives each run's `auto` the cores left over.
    #[arg(long, value_parser = acclab_study::Threads::parse)]
    threads: Option<acclab_study::Threads>,
    /// The sweep's directory [default: results/sweeps/<scenario name>]. Running the same sweep
    /// into it again does only the runs it lacks.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep every run's own files (summary.json, flows.csv, links.csv) in runs/<id>/.
    #[arg(long)]
    keep_runs: bool,
    /// A metric to chart against each numeric swept key (repeatable; any column of runs.csv)
    /// [default: throughput_bps and mean_queue_pkts].
    #[arg(long = "metric", value_name = "METRIC")]
    metrics: Vec<String>,
    /// Print the runs (index, id, seed, values) and exit: nothing runs, nothing is written.
    #[arg(long, conflicts_with_all = ["only", "collect"])]
    list: bool,
    /// Run only run K (its index from --list, or its id) into the sweep's directory, e.g. one
    /// task of a Slurm array (--only $SLURM_ARRAY_TASK_ID); --collect merges afterwards.
    #[arg(long, value_name = "K", conflicts_with = "collect")]
    only: Option<String>,
    /// Run nothing: merge the finished runs into runs.csv, aggregate.csv and the charts.
    #[arg(long)]
    collect: bool,
    /// Replace another sweep's plan and tables in the directory (its run records are kept).
    #[arg(long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
    /// Run even when the runs at once may need more memory than this machine has available.
    #[arg(long)]
    allow_large: bool,
}

/// The sweep the arguments describe: the file's `[sweep]` with the command line's changes.
fn spec_of(a: &SweepArgs, file_spec: Option<SweepSpec>) -> Result<SweepSpec> {
    let mut spec = file_spec.unwrap_or_else(SweepSpec::empty);
    sweep_spec::assignments(&a.set).map_err(anyhow::Error::msg)?;
    for s in &a.set {
        let axis = Axis::from_assignment(s).map_err(anyhow::Error::msg)?;
        if !a.quiet && spec.axes.iter().any(|x| x.key == axis.key) {
            println!(
                "note: --set {} replaces the scenario file's [sweep] axis of that key",
                axis.key
            );
        }
        spec.set_axis(axis);
    }
    for z in &a.zip {
        spec.zip
            .push(z.split(',').map(|k| k.trim().to_string()).collect());
    }
    spec.check_zip()
        .map_err(|m| anyhow::anyhow!("--zip: {m}"))?;
    if let Some(s) = &a.seeds {
        spec.seeds = Some(Seeds::parse(s).map_err(anyhow::Error::msg)?);
    }
    if !a.metrics.is_empty() {
        spec.metrics = a.metrics.clone();
    }
    if spec.axes.iter().any(|x| x.key == "seed") {
        bail!("`seed` is not swept with --set: use --seeds N (or a list, --seeds 1,5,9)");
    }
    Ok(spec)
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let (base, file_spec) = sweep_spec::load(&a.scenario)?;
    let spec = spec_of(&a, file_spec)?;
    let plan = Plan::new(&base, &spec).map_err(|e| crate::load::in_file(e, &a.scenario))?;
    if a.list {
        for r in &plan.runs {
            let values: Vec<String> = plan
                .keys
                .iter()
                .zip(&plan.points[r.point])
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            println!(
                "{}\t{}\tseed={}\t{}",
                r.index,
                r.id,
                r.seed,
                values.join("\t")
            );
        }
        return Ok(());
    }
    let threads = acclab_study::threads_or_default(a.threads)?;
    let (jobs, threads) = acclab_study::sweep::jobs_and_threads(a.jobs, threads, plan.runs.len());
    if let Some(free) = acclab_sim::cost::available_memory() {
        let need = plan.max_memory_bytes * jobs.min(plan.runs.len()) as f64;
        if need > free && !a.allow_large && !a.collect {
            bail!(
                "{}: {jobs} runs at once may need up to {:.1} GB of memory and this machine has {:.1} GB available; use fewer --jobs, shrink the runs, or pass --allow-large",
                a.scenario.display(),
                need / 1e9,
                free / 1e9
            );
        }
    }
    let root = a.out.clone().unwrap_or_else(|| {
        PathBuf::from("results/sweeps").join(crate::outdir::safe_name(&plan.scenario))
    });
    let dir = SweepDir::open(&root, &plan, a.force)?;
    // How the sweep was made, from its first invocation (a resumed sweep keeps it): the base
    // scenario as the runs start from it, and the command line.
    if !root.join(acclab_results::provenance::RECORD_FILE).exists() {
        crate::load::provenance_of(&base, None, Some(&a.scenario), &a.set)
            .write(&root)
            .with_context(|| format!("cannot write into {}", root.display()))?;
    }
    let which: Vec<usize> = match &a.only {
        Some(k) => match plan.find(k) {
            Some(r) => vec![r.index],
            None => bail!(
                "--only {k}: no such run; the sweep has runs 0 to {} (see --list)",
                plan.runs.len() - 1
            ),
        },
        None if a.collect => Vec::new(),
        None => (0..plan.runs.len()).collect(),
    };
    let todo = acclab_study::sweep::pending(&plan, &dir, &which, a.keep_runs);
    if !a.quiet && !a.collect {
        println!(
            "sweep of {:?}: {} key{} → {} point{} × {} seed{} = {} runs; {} to run on {jobs} thread{} ({} finished before; all runs ~{} on one core, estimated) → {}/",
            plan.scenario,
            plan.keys.len(),
            plural(plan.keys.len()),
            plan.points.len(),
            plural(plan.points.len()),
            plan.seeds.len(),
            plural(plan.seeds.len()),
            plan.runs.len(),
            todo.len(),
            plural(jobs),
            which.len() - todo.len(),
            acclab_sim::cost::seconds(plan.total_wall_s),
            root.display()
        );
    }
    let t0 = std::time::Instant::now();
    if !todo.is_empty() {
        let bar = if a.quiet {
            None
        } else {
            progress(todo.len() as u64)
        };
        let finished = AtomicUsize::new(0);
        let total = todo.len();
        // Ctrl-C ends the process (each run's record is written whole, so the sweep resumes).
        let never = std::sync::atomic::AtomicBool::new(false);
        let result = acclab_study::sweep::execute(
            &base,
            &plan,
            &dir,
            &todo,
            jobs,
            threads,
            a.keep_runs,
            &never,
            &|_| {
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                match &bar {
                    Some(b) => b.inc(1),
                    // Not a terminal: a line at every tenth of the runs.
                    None if !a.quiet && (n * 10 / total != (n - 1) * 10 / total || n == total) => {
                        eprintln!("{n}/{total} runs, {:.1} s", t0.elapsed().as_secs_f64())
                    }
                    None => {}
                }
            },
        );
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        result.with_context(|| {
            format!(
                "the sweep stopped; the {} finished runs are kept in {}/runs and a rerun does the rest",
                finished.load(Ordering::Relaxed),
                root.display()
            )
        })?;
        if !a.quiet {
            let s = t0.elapsed().as_secs_f64();
            println!(
                "{} runs in {s:.1} s ({:.3} s per run of wall time)",
                todo.len(),
                s / todo.len() as f64
            );
        }
    }
    if a.only.is_some() {
        if !a.quiet {
            let r = &plan.runs[which[0]];
            println!(
                "run {} ({}) is in {}/runs/; when every run is, `acclab sweep … --collect` merges them",
                r.index,
                r.id,
                root.display()
            );
        }
        return Ok(());
    }
    let c = acclab_study::sweep::collect(&plan, &dir)?;
    if !a.quiet {
        print_aggregate(&plan, &c.aggregate);
        for n in &c.notes {
            println!("note: {n}");
        }
        println!(
            "\nResults in {}/: {} ({} rows), sweep.json, runs/",
            root.display(),
            c.files.join(", "),
            c.tidy.rows.len()
        );
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A progress bar with an ETA, on a terminal.
fn progress(len: u64) -> Option<indicatif::ProgressBar> {
    let b = crate::progress::progress_bar(len)?;
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{bar:40}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    Some(b)
}

/// The first charted metric's means with their confidence intervals, a line per point and
/// entity (the first 40).
fn print_aggregate(plan: &Plan, agg: &[acclab_study::table::AggRow]) {
    let Some(metric) = plan
        .metrics
        .iter()
        .find(|m| agg.iter().any(|r| &r.metric == *m))
    else {
        return;
    };
    let rows: Vec<_> = agg.iter().filter(|r| &r.metric == metric).collect();
    println!(
        "\n{metric}, mean over {} seed(s) [95% CI]:",
        plan.seeds.len()
    );
    for r in rows.iter().take(40) {
        let point: Vec<String> = plan
            .keys
            .iter()
            .zip(&plan.points[r.point])
            .enumerate()
            .filter(|&(k, _)| acclab_study::chart::varies(plan, k))
            .map(|(_, (k, v))| format!("{k}={v}"))
            .collect();
        let ci = r
            .ci95
            .map_or(String::new(), |(lo, hi)| format!(" [{lo:.6e}, {hi:.6e}]"));
        let note = r.note.map_or(String::new(), |n| format!(" ({n})"));
        println!(
            "  {} {} {}: {:.6e}{ci}{note}",
            point.join(" "),
            r.entity,
            r.id,
            r.mean
        );
    }
    if rows.len() > 40 {
        println!("  … {} more in aggregate.csv", rows.len() - 40);
    }
    let identical = rows
        .iter()
        .filter(|r| r.note == Some(acclab_study::table::IDENTICAL))
        .count();
    if identical > 0 && plan.seeds.len() > 1 {
        println!(
            "note: {identical} of {} rows had the same {metric} from every seed: nothing in the \
             scenario that the seed draws (start jitter, random loss, workloads) changed it, so \
             the seeds are not independent replicates there and no interval is given",
            rows.len()
        );
    }
}
