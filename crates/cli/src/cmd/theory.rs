//! `acclab theory`: the equilibrium the theory predicts, the Vegas equilibrium set, the model's
//! fixed point beyond the theory, and the ACC loops' stability.

use std::path::Path;

use anyhow::{Context, Result};

use acclab_scenario as scenario;

use crate::report;

pub fn theory(path: &Path, json: bool) -> Result<()> {
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
