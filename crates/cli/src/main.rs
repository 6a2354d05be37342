//! The `acclab` command.

mod bench;
mod live;
mod outdir;
mod params;
mod report;
mod sweep;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use acclab_scenario as scenario;
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

/// acclab — a laboratory for closed-loop congestion control.
///
/// With no command, runs a small built-in demo and says where its results went.
#[derive(Parser)]
#[command(name = "acclab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scenario file and write summary.json, flows.csv, links.csv (and plots).
    Run(RunArgs),
    /// Integrate the model tier (the papers' fluid and discrete-time dynamics) on a scenario and
    /// write the same files as a run: summary.json, flows.csv, links.csv (and plots).
    Model(ModelArgs),
    /// Print the equilibrium the theory predicts for a scenario (a table, or JSON with --json).
    Theory {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List every flow and queue kind, or one kind's parameters: default, allowed values and
    /// meaning, from the code that reads and checks them.
    Params {
        /// A flow kind (monaco, reno, …) or queue kind (droptail, avq, …).
        kind: Option<String>,
        /// Print JSON (the parameters and the kind's JSON Schema).
        #[arg(long)]
        json: bool,
    },
    /// Check a scenario file without running it, and describe what it contains.
    Check {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
    /// Run the built-in demo scenario (what `acclab` with no arguments does).
    Demo {
        /// Output directory [default: results/demo, or the next free results/demo-N].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Reproduce a paper experiment: run it, compare with the paper and the theory, draw its figure.
    Reproduce(ReproduceArgs),
    /// Sweep a scenario's keys over values and seeds on all cores: one tidy table, aggregates
    /// with 95% confidence intervals, charts; resumable, and runnable as a Slurm array.
    Sweep(sweep::SweepArgs),
    /// Live mode: run a scenario over real UDP sockets through the router emulator.
    #[command(subcommand)]
    Live(live::LiveCommand),
    /// Measure simulator throughput on fixed Reno dumbbells (the ns-3 and htsim comparisons).
    Bench(bench::BenchArgs),
    /// Internal: one benchmark case in a fresh process (so its peak memory is its own).
    #[command(hide = true)]
    BenchCase {
        flows: usize,
        duration_s: u64,
        #[arg(long, default_value_t = 100)]
        rate_mbps: u64,
        #[arg(long, value_enum, default_value_t = bench::Scheme::Reno)]
        scheme: bench::Scheme,
        /// Also integrate the model tier on the case.
        #[arg(long)]
        model: bool,
    },
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// An experiment ID (see --list), or "all".
    #[arg(required_unless_present = "list")]
    id: Option<String>,
    /// List the experiments and exit.
    #[arg(long)]
    list: bool,
    /// Run the scaled-down variant (seconds instead of minutes) that checks the same claim.
    #[arg(long)]
    quick: bool,
    /// Output directory [default: results/repro/<id>, or the next free results/repro/<id>-N].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite results already in the output directory.
    #[arg(long)]
    force: bool,
}

/// What `run` and `model` both take: a scenario, its patches, where results go and how.
#[derive(clap::Args)]
struct ScenarioArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Output directory [default: results/<scenario name> (`model`: <name>-model), or the next
    /// free one with -2, -3, …].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Set a key of the scenario before running: KEY=VALUE, e.g. flow.f0.params.weight=10 or
    /// 'link."r1->r2".queue.kind=avq' (repeatable; checked as the file would be).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Also write plots (PNG and SVG) of goodput, cwnd, queues and utilisation, with the
    /// theory's equilibrium (dotted) and the model tier's trajectory (dashed) where there are.
    #[arg(long)]
    plots: bool,
    /// The goodput plot's trailing mean: auto (1 s, or a twentieth of the run if shorter), none
    /// (each sample as it is), or a window such as 500ms. The plot's title says which.
    #[arg(long, value_name = "WINDOW", default_value = "auto", value_parser = acclab_results::plot::Smoothing::parse)]
    smooth: acclab_results::plot::Smoothing,
    /// Overwrite results already in the output directory.
    #[arg(long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    common: ScenarioArgs,
    /// Override the scenario's seed (0 to 2^63 - 1, a TOML integer).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=acclab_scenario::def::MAX_SEED))]
    seed: Option<u64>,
    /// Run even when the estimated memory exceeds what this machine has available.
    #[arg(long)]
    allow_large: bool,
    /// Also integrate the model tier on the scenario: its files go to model/ in the output
    /// directory, its window means beside the measured ones (summary.json and the table), its
    /// trajectories dashed beside the packet run's on every plot.
    #[arg(long)]
    model: bool,
}

#[derive(clap::Args)]
struct ModelArgs {
    #[command(flatten)]
    common: ScenarioArgs,
    /// The integration step, e.g. "500us" [default: the shortest round-trip propagation delay
    /// / 16, between 10 µs and 2 ms, dividing the sample interval].
    #[arg(long)]
    step: Option<String>,
    /// Which flows are integrated as one: `homogeneous` (flows whose trajectories are the same,
    /// and flows that differ only in their start jitter, a class starting at its members' mean
    /// start — the fluid literature's N homogeneous flows), `identical` (only flows whose
    /// trajectories are the same: exact, slower with many jittered flows), or `each`.
    #[arg(long, value_enum, default_value_t = GroupingArg::Homogeneous)]
    grouping: GroupingArg,
    /// How ACC (Monaco) sources apply their policy: `rate` (000 eqs. (3), (5), (6): the window
    /// moves continuously) or `period` (000 eq. (10): one step per control period, as Monaco's
    /// sender does).
    #[arg(long, value_enum, default_value_t = AccLawArg::Rate)]
    acc_law: AccLawArg,
}

#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
enum AccLawArg {
    Rate,
    Period,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum GroupingArg {
    Each,
    Identical,
    Homogeneous,
}

impl From<GroupingArg> for acclab_model::Grouping {
    fn from(g: GroupingArg) -> Self {
        match g {
            GroupingArg::Each => acclab_model::Grouping::Each,
            GroupingArg::Identical => acclab_model::Grouping::Identical,
            GroupingArg::Homogeneous => acclab_model::Grouping::Homogeneous,
        }
    }
}

const DEMO: &str = include_str!("../../../scenarios/examples/demo.toml");

/// mimalloc, for its huge pages: the simulator's hot state (links, packets, endpoints) is spread
/// over tens of megabytes at 10,000 flows (see the workspace's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// When the process started: the wall time reported for a whole command counts from here.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() {
    STARTED.get_or_init(std::time::Instant::now);
    // Output into a pipe that closed (`acclab params | head -1`): `println!` panics on the
    // broken pipe. That panic prints nothing, unwinds (a claimed output directory is cleaned up
    // or left marked incomplete as for any failure) and the process exits 141, as the shell's
    // own tools do when SIGPIPE ends them.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            hook(info)
        }
    }));
    match std::panic::catch_unwind(command) {
        Ok(()) => {}
        Err(p) if is_broken_pipe(&*p) => std::process::exit(141),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Whether a panic (or an error's text) is a write into a closed pipe.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.starts_with("failed printing to std") && text.contains("Broken pipe")
}

fn command() {
    let cli = Cli::parse();
    let result = match cli.command {
        None => demo(None),
        Some(Command::Demo { out }) => demo(out),
        Some(Command::Run(args)) => run(args),
        Some(Command::Model(args)) => model(args),
        Some(Command::Check { scenario }) => check(&scenario),
        Some(Command::Theory { scenario, json }) => theory(&scenario, json),
        Some(Command::Reproduce(args)) => reproduce(args),
        Some(Command::Sweep(args)) => sweep::sweep(args),
        Some(Command::Live(cmd)) => live::live(cmd),
        Some(Command::Params { kind, json }) => params::run(kind.as_deref(), json),
        Some(Command::Bench(args)) => bench::bench(args),
        Some(Command::BenchCase {
            flows,
            duration_s,
            rate_mbps,
            scheme,
            model,
        }) => bench::run_case(
            bench::Case {
                flows,
                rate_mbps,
                duration_s,
                scheme,
            },
            model,
        ),
    };
    if let Err(e) = result {
        let pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if pipe {
            std::process::exit(141);
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn demo(out: Option<PathBuf>) -> Result<()> {
    let sc = scenario::parse(DEMO, "<built-in demo>")?;
    println!("acclab demo: 3 Reno flows (RTT 24, 42, 82 ms) and a 20 Mb/s CBR flow over a 100 Mb/s bottleneck, 20 s simulated.");
    let dir = output_dir(out, &sc.name, false)?;
    simulate(sc, dir, Some(Default::default()), false, false)?;
    // Started by `cargo run` (which sets CARGO), `acclab` is not on the PATH yet: say the
    // command that works from here.
    let acclab = if std::env::var_os("CARGO").is_some() {
        "cargo run --release -p acclab-cli --"
    } else {
        "acclab"
    };
    println!(
        "\nNext: {acclab} run scenarios/examples/dumbbell-reno.toml --plots   (see README.md)"
    );
    Ok(())
}

/// Reads a scenario file once with `--set KEY=VALUE` patches applied (checked as the file would
/// be); also says whether the file has a `[sweep]` table.
fn load_with(path: &Path, set: &[String]) -> Result<(acclab_scenario::Scenario, bool)> {
    let loaded = scenario::sweep::load_file(path)?;
    let has_sweep = loaded.sweep.is_some();
    if set.is_empty() {
        return Ok((loaded.scenario, has_sweep));
    }
    let mut def = loaded.def;
    let patches = set
        .iter()
        .map(|s| scenario::sweep::assignment(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    def.set_all(&patches).map_err(|e| given_by_set(e, path))?;
    Ok((def.build().map_err(|e| given_by_set(e, path))?, has_sweep))
}

/// An error of a scenario patched on the command line: in the file named, from `--set` (no line
/// of the file wrote the value).
fn given_by_set(e: acclab_scenario::ScenarioError, path: &Path) -> acclab_scenario::ScenarioError {
    let e = in_file(e, path);
    acclab_scenario::ScenarioError {
        message: format!("(with --set) {}", e.message),
        ..e
    }
}

fn run(run: RunArgs) -> Result<()> {
    let args = &run.common;
    let (mut sc, has_sweep) = load_with(&args.scenario, &args.set)?;
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
    if let Some(why) = sc.not_simulable() {
        bail!("{}: {why}", args.scenario.display());
    }
    let cost = acclab_sim::cost::estimate(&sc);
    if let Some(free) = acclab_sim::cost::available_memory() {
        if cost.memory_bytes > free && !run.allow_large {
            bail!(
                "{}: the run needs up to {:.1} GB of memory and this machine has {:.1} GB available ({cost}); shorten it, shrink its buffers, or pass --allow-large",
                args.scenario.display(),
                cost.memory_bytes / 1e9,
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
    let dir = output_dir(args.out.clone(), &sc.name, args.force)?;
    let plots = args.plots.then_some(acclab_results::plot::PlotOptions {
        smooth: args.smooth,
    });
    simulate(sc, dir, plots, args.quiet, run.model)
}

fn model(model: ModelArgs) -> Result<()> {
    let args = &model.common;
    let (sc, _) = load_with(&args.scenario, &args.set)?;
    let step_ns = match &model.step {
        None => None,
        Some(s) => {
            Some(acclab_model::parse_step(&sc, s).map_err(|e| anyhow::anyhow!("--step {e}"))?)
        }
    };
    let settings = acclab_model::Settings {
        step_ns,
        grouping: model.grouping.into(),
        acc_per_period: model.acc_law == AccLawArg::Period,
        ..Default::default()
    };
    // Refuse a scenario outside the domain before claiming a directory.
    let probe = acclab_model::Model::new(&sc, settings)
        .with_context(|| format!("{}: no model run", args.scenario.display()))?;
    let step = probe.step_s();
    let classes = probe.classes();
    drop(probe);
    let out = output_dir(args.out.clone(), &format!("{}-model", sc.name), args.force)?;
    let dir = out.staging().to_path_buf();
    let mut bar = TimeBar::new(&sc, "ms integrated", args.quiet);
    let done = acclab_study::model_scenario(&sc, settings, &dir, &mut |t| bar.at(t));
    bar.finish();
    let (summary, _) =
        done.map_err(|e| anyhow::anyhow!("cannot write results into {}: {e}", dir.display()))?;
    let plot_files = if args.plots {
        let options = acclab_results::plot::PlotOptions {
            smooth: args.smooth,
        };
        acclab_results::plot::write_plots(&dir, &sc, Some(&summary), None, &options)
            .with_context(|| format!("cannot write plots into {}", dir.display()))?
    } else {
        Vec::new()
    };
    let dir = out.publish()?;
    if !args.quiet {
        report::print_summary(&summary);
        println!(
            "Model tier: fluid integration at a step of {:.1} µs ({} steps; {} flows as {} classes), {:.3} s.",
            step * 1e6,
            summary.events,
            sc.flows.len(),
            classes,
            summary.wall_time_s
        );
        println!(
            "\nResults in {}/: summary.json, flows.csv, links.csv",
            dir.display()
        );
        if !plot_files.is_empty() {
            println!("Plots: {}", plot_files.join(", "));
        }
    }
    Ok(())
}

fn theory(path: &Path, json: bool) -> Result<()> {
    let sc = scenario::load(path)?;
    let eq = acclab_theory::predict(&sc)
        .with_context(|| format!("the theory cannot solve {}", path.display()))?;
    // Beyond NUM: where flows are outside the theory but inside the model tier (Reno over RED
    // or DropTail, Vegas with α < β, …), the model's fixed point gives an equilibrium.
    let beyond = eq.flows.iter().zip(&sc.flows).any(|(p, f)| {
        p.is_none() && !matches!(f.scheme, acclab_core::config::SchemeConfig::Cbr(_))
    });
    let fixed = if beyond {
        acclab_model::fixed_point(&sc).ok()
    } else {
        None
    };
    let bounds = acclab_theory::equilibrium::vegas_bounds(&sc);
    // The ACC loops' stability with feedback delay (acclab_model::stability), where there are
    // Monaco flows: κ_max, or why there is none.
    let stability = sc
        .flows
        .iter()
        .any(|f| matches!(f.scheme, acclab_core::config::SchemeConfig::Monaco(_)))
        .then(|| acclab_model::stability::analyse(&sc));
    if json {
        let mut v = eq.to_json(&sc);
        if !bounds.is_empty() {
            v["vegas_equilibrium_set"] = serde_json::json!(bounds
                .iter()
                .map(|(id, lo, hi)| serde_json::json!({"id": id, "min_throughput_bps": lo, "max_throughput_bps": hi}))
                .collect::<Vec<_>>());
        }
        if let Some(fp) = &fixed {
            v["model_fixed_point"] = serde_json::json!({
                "what": "the model tier's fixed point: its laws without feedback delay, integrated until the rates settle",
                "settled": fp.settled,
                "flows": sc.flows.iter().zip(&fp.throughput_bps).map(|(f, x)| serde_json::json!({"id": f.id, "throughput_bps": x})).collect::<Vec<_>>(),
                "links": sc.links.iter().zip(&fp.queue_pkts).map(|(l, q)| serde_json::json!({"id": l.name, "queue_pkts": q})).collect::<Vec<_>>(),
            });
        }
        match &stability {
            Some(Ok(st)) => v["acc_stability"] = stability_json(st),
            Some(Err(outside)) => {
                v["acc_stability"] = serde_json::json!({ "outside": outside.to_string() })
            }
            None => {}
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        report::print_equilibrium(&sc, &eq);
        if !bounds.is_empty() {
            println!("\nVegas with alpha < beta holds anywhere in a set of equilibria (002 §3): each flow's rate lies between its weighted-PF rate at weight α against the others' β and at β against their α (exact on one bottleneck)");
            println!("{:<20} {:>14} {:>14}", "flow", "min Mb/s", "max Mb/s");
            for (id, lo, hi) in &bounds {
                println!("{id:<20} {:>14.4} {:>14.4}", lo / 1e6, hi / 1e6);
            }
        }
        if let Some(fp) = &fixed {
            report::print_fixed_point(&sc, fp);
        }
        match &stability {
            Some(Ok(st)) => report::print_stability(st),
            Some(Err(outside)) => println!("\nNo stability analysis of the ACC loops: {outside}"),
            None => {}
        }
    }
    Ok(())
}

/// `acclab theory --json`'s `acc_stability`.
fn stability_json(st: &acclab_model::stability::Stability) -> serde_json::Value {
    let finite = |x: f64| x.is_finite().then_some(x);
    serde_json::json!({
        "what": "ACC loops linearised about the model's fixed point, with feedback delays: the largest common gain with every characteristic root in the left half-plane",
        "kappa_max": st.kappa_max.and_then(finite),
        "scale_max": finite(st.scale_max),
        "measured_delays": {
            "what": "the same with the feedback delays a packet sender measures a queue with: the propagation delay back plus the queueing the reporting packet met at that queue and every later one; the packet runs change here",
            "kappa_max": st.kappa_max_measured.and_then(finite),
            "scale_max": finite(st.scale_max_measured),
        },
        "stable": st.stable(),
        "rightmost_root_real_per_s": st.abscissa,
        "rightmost_root_hz": st.frequency_hz,
        "boundary_oscillation_hz": st.boundary_frequency_hz,
        "bottlenecks": st.bottlenecks,
    })
}

fn check(path: &Path) -> Result<()> {
    let loaded = scenario::sweep::load_file(path)?;
    let sc = loaded.scenario;
    println!(
        "{}: scenario {:?} is valid: {} nodes, {} links, {} flows, {} events, {} simulated, seed {}",
        path.display(),
        sc.name,
        sc.nodes.len(),
        sc.links.len(),
        sc.flows.len(),
        sc.events.len(),
        sc.duration,
        sc.seed
    );
    println!("  cost: {}", acclab_sim::cost::estimate(&sc));
    for w in sc.warnings() {
        println!("  warning: {w}");
    }
    if let Some(spec) = loaded.sweep {
        let plan = acclab_study::Plan::new(&loaded.def, &spec).map_err(|e| in_file(e, path))?;
        println!(
            "  sweep: {} key(s) ({}) → {} points × {} seeds = {} runs, every point valid; up to {} events in all",
            plan.keys.len(),
            plan.keys.join(", "),
            plan.points.len(),
            plan.seeds.len(),
            plan.runs.len(),
            acclab_sim::cost::count(plan.total_events)
        );
    }
    Ok(())
}

/// An error of a scenario built from the file at `path` (a sweep point, a patch): the file is
/// named as it was given, not by the scenario's name.
pub(crate) fn in_file(
    e: acclab_scenario::ScenarioError,
    path: &Path,
) -> acclab_scenario::ScenarioError {
    acclab_scenario::ScenarioError {
        file: path.display().to_string(),
        ..e
    }
}

/// Claims where results go (outdir.rs): an explicit directory that already holds results is
/// refused unless `force`; the default directory never overwrites: it moves on to `-2`, `-3`, …
fn output_dir(out: Option<PathBuf>, name: &str, force: bool) -> Result<outdir::OutDir> {
    outdir::OutDir::claim(out, Path::new("results"), name, force)
}

fn reproduce(args: ReproduceArgs) -> Result<()> {
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
            None => bail!(
                "no experiment {id:?}; `acclab reproduce --list` shows the {} there are",
                all.len()
            ),
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
        };
        let outcome = e.run(&ctx);
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
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

/// A run's progress in milliseconds of its scenario time, on stderr when it is a terminal and
/// the run is not quiet.
struct TimeBar(Option<indicatif::ProgressBar>);

impl TimeBar {
    fn new(sc: &acclab_scenario::Scenario, label: &'static str, quiet: bool) -> TimeBar {
        let bar = if quiet {
            None
        } else {
            progress_bar(sc.duration.0 / 1_000_000)
        };
        if let Some(b) = &bar {
            b.set_message(label);
        }
        TimeBar(bar)
    }

    fn at(&mut self, t: acclab_core::Time) {
        if let Some(b) = &self.0 {
            b.set_position(t.0 / 1_000_000);
        }
    }

    fn finish(self) {
        if let Some(b) = self.0 {
            b.finish_and_clear();
        }
    }
}

/// A progress bar on stderr when it is a terminal.
fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(len.max(1));
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len}, {elapsed} elapsed",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    Some(b)
}

fn simulate(
    sc: acclab_scenario::Scenario,
    out: outdir::OutDir,
    plots: Option<acclab_results::plot::PlotOptions>,
    quiet: bool,
    model: bool,
) -> Result<()> {
    let for_model = model.then(|| sc.clone());
    let dir = out.staging().to_path_buf();
    let dir = dir.as_path();
    let mut bar = TimeBar::new(&sc, "ms simulated", quiet);
    // Samples go to flows.csv / links.csv (and packets to the trace, if asked for) as they are
    // taken and are not kept: plots read them back from the files.
    let done = acclab_study::run_scenario(sc, Some(dir), &mut |t| bar.at(t))
        .with_context(|| format!("cannot write results into {}", dir.display()))?;
    bar.finish();
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
fn model_beside(
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
    let done = acclab_study::model_scenario(sc, settings, &mdir, &mut |t| bar.at(t));
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
fn write_results(
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
        acclab_results::plot::write_plots(dir, sim.scenario(), Some(summary), model, options)
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
            Some(acclab_scenario::TraceFormat::Pcap) => ", trace.pcapng",
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
        println!(
            "\nResults in {}/: summary.json, flows.csv, links.csv{trace}{}{programs}",
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
