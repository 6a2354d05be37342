//! `acclab live …`: scenarios over real UDP sockets (SPEC §11).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use acclab_live::LiveOptions;
use acclab_sim::scenario;
use anyhow::{bail, Context, Result};

#[derive(clap::Subcommand)]
pub enum LiveCommand {
    /// Run a scenario live: the router emulator and one task per sender and receiver, each on its
    /// own UDP socket, in real time (or faster, with --time-scale). Writes the same files as
    /// `acclab run`, marked "mode": "live".
    Run(RunArgs),
    /// Run only the router emulator, for endpoints in another process (`acclab live endpoints`):
    /// flow f's sender must send from BASE port + 2f, its receiver from BASE port + 2f + 1.
    Router(RouterArgs),
    /// Run only the endpoints of a scenario, against a router started with `acclab live router`.
    Endpoints(EndpointArgs),
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Scenario seconds per wall-clock second: 10 runs rates 10× higher and delays 10× shorter,
    /// in a tenth of the time. Results are in scenario units either way.
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Output directory [default: results/<name>-live, or the next free one].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite results already in the output directory.
    #[arg(long)]
    force: bool,
    /// Also write plots.
    #[arg(long)]
    plots: bool,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// The router's address.
    #[arg(long, default_value = "127.0.0.1:0")]
    router: SocketAddr,
    /// The local address endpoints bind to.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(clap::Args)]
pub struct RouterArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Address to listen on.
    #[arg(long)]
    listen: SocketAddr,
    /// Address and first port of the endpoints (see above).
    #[arg(long)]
    endpoints: SocketAddr,
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Where links.csv and router.json go [default: results/<name>-router].
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args)]
pub struct EndpointArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// The router's address.
    #[arg(long)]
    router: SocketAddr,
    /// Address and first port for the endpoints (flow f: port + 2f and port + 2f + 1).
    #[arg(long)]
    base: SocketAddr,
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
}

pub fn live(cmd: LiveCommand) -> Result<()> {
    match cmd {
        LiveCommand::Run(a) => run(a),
        LiveCommand::Router(a) => router(a),
        LiveCommand::Endpoints(a) => endpoints(a),
    }
}

fn check_scale(s: f64) -> Result<()> {
    if !(s.is_finite() && s > 0.0) {
        bail!("--time-scale {s}: must be a positive number (1 = real time)");
    }
    Ok(())
}

fn run(a: RunArgs) -> Result<()> {
    check_scale(a.time_scale)?;
    let mut sc = scenario::load(&a.scenario)?;
    if let Some(seed) = a.seed {
        sc.seed = seed;
    }
    let dir = crate::output_dir(a.out, &format!("{}-live", sc.name), a.force)?;
    let wall = sc.duration.as_secs_f64() / a.time_scale;
    if !a.quiet {
        println!(
            "acclab live: {} flows over {} emulated links, {:.1} s of scenario time in {wall:.1} s of wall time",
            sc.flows.len(),
            sc.links.len(),
            sc.duration.as_secs_f64()
        );
    }
    let bar = if a.quiet {
        None
    } else {
        crate::progress_bar(sc.duration.0 / 1_000_000)
    };
    if let Some(b) = &bar {
        b.set_message("scenario ms, live");
    }
    let prediction = acclab_theory::predict(&sc);
    let opts = LiveOptions {
        time_scale: a.time_scale,
        router: a.router,
        endpoint_ip: a.bind,
        threads: 0,
    };
    let (sim, summary) = acclab_live::run(sc, &opts, &mut |t| {
        if let Some(b) = &bar {
            b.set_position(t.0 / 1_000_000);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let (false, Some(l)) = (a.quiet, &summary.live) {
        println!(
            "router: {} datagrams forwarded in, {} delivered, {} malformed and {} foreign rejected; lag mean {:.3} ms, max {:.3} ms (scenario time)",
            l.router_accepted,
            l.router_delivered,
            l.router_rejected_malformed,
            l.router_rejected_foreign,
            l.router_mean_lag_s * 1e3,
            l.router_max_lag_s * 1e3
        );
    }
    crate::write_results(&sim, summary, prediction, &dir, a.plots, a.quiet)
}

fn router(a: RouterArgs) -> Result<()> {
    check_scale(a.time_scale)?;
    let sc = scenario::load(&a.scenario)?;
    let dir = crate::output_dir(a.out, &format!("{}-router", sc.name), a.force)?;
    println!(
        "acclab live router on {} for {} flows (endpoints from {}), {:.1} s wall",
        a.listen,
        sc.flows.len(),
        a.endpoints,
        sc.duration.as_secs_f64() / a.time_scale
    );
    let (sim, counters) = acclab_live::run::router_only(sc, a.listen, a.endpoints, a.time_scale)?;
    let report = acclab_live::run::router_report(&sim, &counters);
    std::fs::write(
        dir.join("router.json"),
        serde_json::to_string_pretty(&report)? + "\n",
    )
    .with_context(|| format!("cannot write {}", dir.display()))?;
    acclab_sim::output::write_links_csv(&dir, &sim)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!("Results in {}/: router.json, links.csv", dir.display());
    Ok(())
}

fn endpoints(a: EndpointArgs) -> Result<()> {
    check_scale(a.time_scale)?;
    let sc = scenario::load(&a.scenario)?;
    let names: Vec<String> = sc.flows.iter().map(|f| f.id.clone()).collect();
    let secs = sc.duration.as_secs_f64();
    let stats = acclab_live::run::endpoints_only(sc, a.router, a.base, a.time_scale)?;
    println!("flow                 sent pkts   delivered bytes   mean goodput");
    for (i, name) in names.iter().enumerate() {
        let (tx, rx) = (&stats[2 * i], &stats[2 * i + 1]);
        println!(
            "{name:<20} {:>10} {:>17} {:>10.3} Mb/s",
            tx.sent_packets,
            rx.delivered_bytes,
            rx.delivered_bytes as f64 * 8.0 / secs / 1e6
        );
    }
    Ok(())
}
