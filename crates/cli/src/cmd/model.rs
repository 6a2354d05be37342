//! `acclab model`: integrate the model tier on a scenario and write a run's files.

use anyhow::{Context, Result};

use crate::load::{load_with, output_dir, ScenarioArgs};
use crate::progress::TimeBar;
use crate::report;

#[derive(clap::Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub common: ScenarioArgs,
    /// The integration step, e.g. "500us" [default: the shortest round-trip propagation delay
    /// / 16, between 10 µs and 2 ms, dividing the sample interval].
    #[arg(long)]
    pub step: Option<String>,
    /// Which flows are integrated as one: `homogeneous` (flows whose trajectories are the same,
    /// and flows that differ only in their start jitter, a class starting at its members' mean
    /// start — the fluid literature's N homogeneous flows), `identical` (only flows whose
    /// trajectories are the same: exact, slower with many jittered flows), or `each`.
    #[arg(long, value_enum, default_value_t = GroupingArg::Homogeneous)]
    pub grouping: GroupingArg,
    /// How ACC (Monaco) sources apply their policy: `rate` (000 eqs. (3), (5), (6): the window
    /// moves continuously) or `period` (000 eq. (10): one step per control period, as Monaco's
    /// sender does).
    #[arg(long, value_enum, default_value_t = AccLawArg::Rate)]
    pub acc_law: AccLawArg,
}

#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum AccLawArg {
    Rate,
    Period,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum GroupingArg {
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

pub fn model(model: ModelArgs) -> Result<()> {
    let args = &model.common;
    let loaded = load_with(&args.scenario, &args.set)?;
    let sc = &loaded.scenario;
    let step_ns = match &model.step {
        None => None,
        Some(s) => {
            Some(acclab_model::parse_step(sc, s).map_err(|e| anyhow::anyhow!("--step {e}"))?)
        }
    };
    let settings = acclab_model::Settings {
        step_ns,
        grouping: model.grouping.into(),
        acc_per_period: model.acc_law == AccLawArg::Period,
        ..Default::default()
    };
    // Refuse a scenario outside the domain before claiming a directory.
    let probe = acclab_model::Model::new(sc, settings)
        .with_context(|| format!("{}: no model run", args.scenario.display()))?;
    let step = probe.step_s();
    let classes = probe.classes();
    drop(probe);
    if args.plots {
        args.figures
            .options()
            .check(sc)
            .map_err(anyhow::Error::msg)?;
    }
    let out = output_dir(args.out.clone(), &format!("{}-model", sc.name), args.force)?;
    let dir = out.staging().to_path_buf();
    let mut bar = TimeBar::new(sc, "ms integrated", args.quiet);
    let provenance = loaded.provenance(sc.seed, &args.scenario, &args.set);
    // Ctrl-C (or SIGTERM) stops the integration at its next tick, as it does a run.
    let interrupted = crate::interrupt::Watch::start();
    let done = interrupted.guard((Some(sc.duration), "integrated"), out.final_path(), || {
        acclab_study::model_scenario(sc, settings, &dir, Some(&provenance), &mut |t| {
            interrupted.check(t);
            bar.at(t)
        })
    });
    bar.finish();
    let done = done?;
    let (summary, _) =
        done.map_err(|e| anyhow::anyhow!("cannot write results into {}: {e}", dir.display()))?;
    let plot_files = if args.plots {
        let options = args.figures.options();
        acclab_results::plot::write_run_figures((&dir, &dir), sc, Some(&summary), None, &options)
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
