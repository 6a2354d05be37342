//! `acclab show`: what a scenario's network is, without running it — a picture of the topology,
//! or each flow's route with how many equal-cost alternatives it had.

use std::path::PathBuf;

use anyhow::{bail, Result};

use acclab_scenario as scenario;
use acclab_scenario::routing::Router;

#[derive(clap::Subcommand)]
pub enum ShowCommand {
    /// Draw the network: topology.svg and topology.png (hosts at the bottom, then each tier).
    Topology {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Directory for the pictures [default: the current directory].
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
    /// List flows' routes: the nodes of the data path and the number of equal-cost shortest
    /// paths its ends have (ECMP picks one per flow with `[routing] ecmp = "flow"`).
    Routes {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Only these flows (ids; repeatable) [default: all].
        #[arg(long)]
        flow: Vec<String>,
    },
}

pub fn show(cmd: ShowCommand) -> Result<()> {
    match cmd {
        ShowCommand::Topology { scenario, out } => {
            let sc = scenario::sweep_spec::load_file(&scenario)?.scenario;
            if !out.is_dir() {
                bail!("--out {}: no such directory", out.display());
            }
            let files = acclab_results::network::write_network(&out, "topology", &sc)?;
            println!("{}: {}", out.display(), files.join(", "));
        }
        ShowCommand::Routes { scenario, flow } => {
            let sc = scenario::sweep_spec::load_file(&scenario)?.scenario;
            if let Some(unknown) = flow
                .iter()
                .find(|id| !sc.flows.iter().any(|f| &&f.id == id))
            {
                bail!("no flow {unknown:?} in {}", scenario.display());
            }
            let mut router = Router::new(sc.nodes.len(), &sc.links);
            println!("{:<20} {:>6} {:>5}  path", "flow", "paths", "hops");
            for f in sc
                .flows
                .iter()
                .filter(|f| flow.is_empty() || flow.contains(&f.id))
            {
                let mut nodes = vec![sc.nodes[f.src.0 as usize].as_str()];
                nodes.extend(
                    f.forward
                        .iter()
                        .map(|l| sc.nodes[sc.links[l.0 as usize].to.0 as usize].as_str()),
                );
                println!(
                    "{:<20} {:>6} {:>5}  {}",
                    f.id,
                    router.path_count(f.src, f.dst),
                    f.forward.len(),
                    nodes.join(" ")
                );
            }
        }
    }
    Ok(())
}
