//! `acclab check`: validate a scenario file without running it, and describe it.

use std::path::Path;

use anyhow::Result;

use acclab_scenario as scenario;

use crate::load::in_file;

pub fn check(path: &Path) -> Result<()> {
    let loaded = scenario::sweep_spec::load_file(path)?;
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
    let (hosts, switches, links, lo, hi) = scenario::routing::shape(&sc);
    let ecmp = loaded.def.routing.ecmp;
    if hi > 1 || !ecmp.is_none() {
        let paths = match lo == hi {
            true => format!("{hi}"),
            false => format!("{lo}–{hi}"),
        };
        let routing = match ecmp {
            scenario::Ecmp::None => "one used per pair: [routing] ecmp = \"none\"",
            scenario::Ecmp::Flow => "a flow's hash picks one: [routing] ecmp = \"flow\"",
            scenario::Ecmp::Packet => {
                "each packet's hash picks one at every switch: [routing] ecmp = \"packet\""
            }
        };
        println!(
            "  topology: {hosts} hosts, {switches} switches, {links} links; {paths} equal-cost paths per flow ({routing})"
        );
    }
    for l in &sc.links {
        let mut what = Vec::new();
        if let Some(c) = &l.capacity {
            what.push(format!(
                "capacity from the trace {} ({} opportunities in {}, mean {}: what the theory uses)",
                c.file,
                c.trace.opportunities(),
                c.trace.period(),
                l.rate
            ));
        }
        match l.loss {
            acclab_core::link::LossModel::Bernoulli(p) if p > 0.0 => {
                what.push(format!("random loss {:.3}%", 100.0 * p))
            }
            acclab_core::link::LossModel::GilbertElliott(_) => what.push(format!(
                "Gilbert–Elliott loss, {:.3}% in the long run",
                100.0 * l.loss.mean()
            )),
            _ => {}
        }
        if let Some(j) = &l.jitter {
            what.push(format!(
                "jitter {} ({}{})",
                j.amount,
                format!("{:?}", j.distribution).to_lowercase(),
                if j.reorder { ", reordering" } else { "" }
            ));
        }
        if !what.is_empty() {
            println!("  link {}: {}", l.name, what.join("; "));
        }
    }
    println!("  cost: {}", acclab_sim::cost::estimate(&sc));
    for w in sc.warnings() {
        println!("  warning: {w}");
    }
    if let Some(why) = sc.not_simulable() {
        println!("  note: the simulator cannot run it here: {why}");
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
