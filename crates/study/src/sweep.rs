//! Running a sweep: the plan's missing runs on a thread pool, each recorded as it finishes, and
//! collecting the records into the tables and charts.

use std::path::Path;

use acclab_scenario::ScenarioSpec;
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::plan::{Plan, PlannedRun};
use crate::store::SweepDir;
use crate::table::{aggregate_csv, AggRow, Tidy};
use crate::{StudyError, Threads};
use acclab_results::plot::Chart;

/// The runs of `which` (plan indices) that are not finished in `dir`.
pub fn pending(plan: &Plan, dir: &SweepDir, which: &[usize], keep_runs: bool) -> Vec<usize> {
    which
        .iter()
        .copied()
        .filter(|&i| !dir.is_done(&plan.runs[i].id, keep_runs))
        .collect()
}

/// The record of a finished run: its point, seed and summary.
pub fn record(plan: &Plan, run: &PlannedRun, summary: &acclab_results::Summary) -> Value {
    let point: serde_json::Map<String, Value> = plan
        .keys
        .iter()
        .zip(&plan.points[run.point])
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    json!({
        "id": run.id,
        "acclab": acclab_results::provenance::build(),
        "scenario": plan.scenario,
        "seed": run.seed,
        "point": point,
        "summary": summary,
    })
}

/// Runs one run of the plan, saving its record (and with `keep_runs` its files).
pub fn run_one(
    base: &ScenarioSpec,
    plan: &Plan,
    dir: &SweepDir,
    run: &PlannedRun,
    keep_runs: bool,
    threads: Threads,
) -> Result<(), StudyError> {
    let def = plan.spec(base, run)?;
    let sc = def.build()?;
    let threads = threads.of(&sc);
    let staging = if keep_runs {
        Some(dir.staging_for(&run.id)?)
    } else {
        None
    };
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |err| StudyError::Io { path, err }
    };
    let provenance = keep_runs.then(|| {
        acclab_results::provenance::Provenance::of_spec(
            &def,
            Some(run.seed),
            std::env::args().collect(),
            None,
            &[],
        )
    });
    let done = crate::run_scenario_on(
        sc,
        staging.as_deref(),
        provenance.as_ref(),
        threads,
        &mut |_| {},
    )
    .map_err(io(staging.as_deref().unwrap_or(dir.root())))?;
    if let Some(s) = &staging {
        dir.publish_run_files(&run.id, s)?;
    }
    dir.save_record(&run.id, &record(plan, run, &done.summary))
}

/// How many runs of a sweep of `runs` go at once, and each on how many threads, with this
/// machine's cores: `jobs` if given, else as many as the cores hold at `threads` each; `auto`
/// gives each run the idle cores the runs at once leave (one each when there are more runs
/// than cores: a sweep of many runs is fastest serial per run).
pub fn jobs_and_threads(jobs: Option<usize>, threads: Threads, runs: usize) -> (usize, Threads) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match threads {
        Threads::Count(t) => (jobs.unwrap_or(cores / t).max(1), threads),
        Threads::Auto { cores: c, idle } => {
            let jobs = jobs.unwrap_or(c).max(1);
            let each = (idle / jobs.min(runs).max(1)).max(1);
            (
                jobs,
                Threads::Auto {
                    cores: each,
                    idle: each,
                },
            )
        }
    }
}

/// Runs `todo` (plan indices), `jobs` at once, each on `threads` threads of its own (the
/// parallel engine where a run can be: `jobs × threads` should not exceed the cores), calling
/// `done` after each run. Stops at the
/// first error (the runs finished until then are kept), and starts no further run once `stop`
/// is set (the runs under way finish and are kept: each run's record is written whole).
#[allow(clippy::too_many_arguments)]
pub fn execute(
    base: &ScenarioSpec,
    plan: &Plan,
    dir: &SweepDir,
    todo: &[usize],
    jobs: usize,
    threads: Threads,
    keep_runs: bool,
    stop: &std::sync::atomic::AtomicBool,
    done: &(dyn Fn(&PlannedRun) + Sync),
) -> Result<(), StudyError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| StudyError::Refused(format!("cannot start {jobs} threads: {e}")))?;
    pool.install(|| {
        todo.par_iter().with_max_len(1).try_for_each(|&i| {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(StudyError::Refused("the sweep was stopped".into()));
            }
            let run = &plan.runs[i];
            run_one(base, plan, dir, run, keep_runs, threads)?;
            done(run);
            Ok(())
        })
    })
}

/// What collecting wrote.
pub struct Collected {
    pub tidy: Tidy,
    pub aggregate: Vec<AggRow>,
    /// The files written into the sweep's directory.
    pub files: Vec<String>,
    /// What the charts left out.
    pub notes: Vec<String>,
}

/// Reads every run's record and writes runs.csv, aggregate.csv and the charts. Every run of the
/// plan must be finished; the error lists the missing ones.
pub fn collect(plan: &Plan, dir: &SweepDir) -> Result<Collected, StudyError> {
    let missing: Vec<usize> = pending(plan, dir, &(0..plan.runs.len()).collect::<Vec<_>>(), false);
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(10).map(usize::to_string).collect();
        return Err(StudyError::Refused(format!(
            "{} of {} runs are not finished (runs {}{}); run them (the sweep without --collect, or --only K for each) and collect again",
            missing.len(),
            plan.runs.len(),
            shown.join(", "),
            if missing.len() > 10 { ", …" } else { "" }
        )));
    }
    let tidy = tidy(plan, dir)?;
    let aggregate = tidy.aggregate(plan);
    let (charts, notes) = crate::chart::charts(plan, &aggregate);
    let mut files = vec!["runs.csv".to_string(), "aggregate.csv".to_string()];
    // Charts are drawn into a scratch directory and moved in whole.
    let scratch = tempdir_in(dir.root())?;
    for (stem, chart) in &charts {
        let written = acclab_results::plot::write_chart(&scratch, stem, chart).map_err(|err| {
            StudyError::Io {
                path: scratch.display().to_string(),
                err,
            }
        })?;
        files.extend(written);
    }
    dir.replace_outputs(&files)?;
    dir.write_output("runs.csv", &tidy.to_csv(plan))?;
    dir.write_output("aggregate.csv", &aggregate_csv(plan, &aggregate))?;
    for f in files.iter().skip(2) {
        let to = dir.root().join(f);
        std::fs::rename(scratch.join(f), &to).map_err(|err| StudyError::Io {
            path: to.display().to_string(),
            err,
        })?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(Collected {
        tidy,
        aggregate,
        files,
        notes,
    })
}

/// The table of every run's record.
fn tidy(plan: &Plan, dir: &SweepDir) -> Result<Tidy, StudyError> {
    let mut runs = Vec::with_capacity(plan.runs.len());
    for r in &plan.runs {
        let mut rec = dir.load_record(&r.id)?;
        runs.push((r.index, rec["summary"].take()));
    }
    Ok(Tidy::of(&runs))
}

/// A finished sweep in `root` read again from its plan and run records, without running or
/// writing anything: the plan, the aggregate over seeds and the charts as [`collect`] drew
/// them (file stem and chart).
pub struct SweepResults {
    pub plan: Plan,
    pub aggregate: Vec<crate::table::AggRow>,
    pub charts: Vec<(String, Chart)>,
}

/// Reads the finished sweep in `root` (see [`SweepResults`]).
pub fn results_of(root: &Path) -> Result<SweepResults, StudyError> {
    let (dir, plan) = SweepDir::read(root)?;
    let tidy = tidy(&plan, &dir)?;
    let aggregate = tidy.aggregate(&plan);
    let (charts, _) = crate::chart::charts(&plan, &aggregate);
    Ok(SweepResults {
        plan,
        aggregate,
        charts,
    })
}

/// A fresh hidden directory inside `root`.
fn tempdir_in(root: &Path) -> Result<std::path::PathBuf, StudyError> {
    let d = root.join(format!(".charts.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).map_err(|err| StudyError::Io {
        path: d.display().to_string(),
        err,
    })?;
    Ok(d)
}
