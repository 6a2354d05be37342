//! The `acclab` command.

mod cmd;
mod interrupt;
mod load;
mod outdir;
mod progress;
mod report;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use cmd::{bench, live, sweep};

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
    Run(cmd::run::RunArgs),
    /// Integrate the model tier (the papers' fluid and discrete-time dynamics) on a scenario and
    /// write the same files as a run: summary.json, flows.csv, links.csv (and plots).
    Model(cmd::model::ModelArgs),
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
    /// Show a scenario's network without running it: its topology drawn, or its flows' routes.
    #[command(subcommand)]
    Show(cmd::show::ShowCommand),
    /// Link capacity traces (Mahimahi's format): make a synthetic one, or describe some.
    #[command(subcommand)]
    Capacity(cmd::capacity::CapacityCommand),
    /// Run the built-in demo scenario (what `acclab` with no arguments does).
    Demo {
        /// Output directory [default: results/demo, or the next free results/demo-N].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Reproduce a paper experiment: run it, compare with the paper and the theory, draw its figure.
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// Sweep a scenario's keys over values and seeds on all cores: one tidy table, aggregates
    /// with 95% confidence intervals, charts; resumable, and runnable as a Slurm array.
    Sweep(sweep::SweepArgs),
    /// Draw a finished run's or sweep's figures again from its files: paper sizes (--preset
    /// column|page), PDF, a time range, log axes, chosen flows and links; nothing is simulated.
    Plot(cmd::plot::PlotArgs),
    /// Write a static HTML page of a finished run, sweep or reproduction, or of a directory of
    /// them (results/repro): comparison tables with pass/fail, theory and model beside the
    /// measurement, every figure, the provenance — to publish as it is.
    Report(cmd::report::ReportArgs),
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
        /// Instead of the dumbbell: a k-ary fat-tree under the web-search workload (`flows`
        /// is then ignored, `duration_s` replaced by --duration-ms).
        #[arg(long, value_name = "K")]
        fattree: Option<u32>,
        /// The fat-tree case's simulated milliseconds.
        #[arg(long, requires = "fattree")]
        duration_ms: Option<u64>,
        /// The fat-tree carries a permutation of long flows, not the web-search workload.
        #[arg(long, requires = "fattree")]
        permutation: bool,
        /// Threads of the run (1: the serial engine).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// The links keep their queueing delays' mean alone (`[output] queueing_percentiles =
        /// false`).
        #[arg(long)]
        queueing_mean: bool,
        /// Write the samples' files as `acclab run` does (into a temporary directory).
        #[arg(long)]
        files: bool,
    },
}

/// mimalloc, for its huge pages: the simulator's hot state (links, packets, endpoints) is spread
/// over tens of megabytes at 10,000 flows (see the workspace's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// When the process started: the wall time reported for a whole command counts from here.
pub(crate) static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() {
    STARTED.get_or_init(std::time::Instant::now);
    // Output into a pipe that closed (`acclab params | head -1`): `println!` panics on the
    // broken pipe. That panic prints nothing, unwinds (a claimed output directory is cleaned up
    // or left marked incomplete as for any failure) and the process exits 141, as the shell's
    // own tools do when SIGPIPE ends them.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Neither a closed pipe nor an interrupted run is a bug to report.
        if !is_broken_pipe(info.payload()) && !info.payload().is::<interrupt::Interrupted>() {
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
        None => cmd::demo::demo(None),
        Some(Command::Demo { out }) => cmd::demo::demo(out),
        Some(Command::Run(args)) => cmd::run::run(args),
        Some(Command::Model(args)) => cmd::model::model(args),
        Some(Command::Check { scenario }) => cmd::check::check(&scenario),
        Some(Command::Show(cmd)) => cmd::show::show(cmd),
        Some(Command::Capacity(cmd)) => cmd::capacity::capacity(cmd),
        Some(Command::Theory { scenario, json }) => cmd::theory::theory(&scenario, json),
        Some(Command::Reproduce(args)) => cmd::reproduce::reproduce(args),
        Some(Command::Sweep(args)) => sweep::sweep(args),
        Some(Command::Plot(args)) => cmd::plot::plot(args),
        Some(Command::Report(args)) => cmd::report::report(args),
        Some(Command::Live(cmd)) => live::live(cmd),
        Some(Command::Params { kind, json }) => cmd::params::run(kind.as_deref(), json),
        Some(Command::Bench(args)) => bench::bench(args),
        Some(Command::BenchCase {
            flows,
            duration_s,
            rate_mbps,
            scheme,
            model,
            fattree,
            duration_ms,
            permutation,
            threads,
            queueing_mean,
            files,
        }) => bench::run_case(
            bench::Case {
                flows,
                rate_mbps,
                duration_ms: duration_ms.unwrap_or(duration_s.saturating_mul(1000)),
                scheme,
                fattree,
                permutation,
                threads,
                queueing_percentiles: !queueing_mean,
                files,
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
