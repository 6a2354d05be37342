//! One run as data: simulate a scenario (or integrate its model tier) and return its summary
//! with the theory's prediction beside the measurements — what `acclab run` and `acclab model`,
//! the reproductions, sweeps and the Python package all do.

use std::path::Path;

use acclab_results::summary::{FlowTheory, LinkTheory, TheorySummary};
use acclab_results::Summary;
use acclab_scenario::Scenario;
use acclab_sim::parallelism::Threads;
use acclab_sim::Simulator;
use acclab_theory::Equilibrium;

/// Puts the theory beside the measurements in a run's summary: each flow's and link's predicted
/// equilibrium (when `eq` is given) and the weighted fairness index against max-min (004 eq. 2;
/// not for runs with finite flows). Takes `eq` whole: its list of flows outside the domain moves
/// into the summary (a workload's million flows are all there).
pub fn attach_theory(sc: &Scenario, eq: Option<Equilibrium>, summary: &mut Summary) {
    if let Some(eq) = eq {
        for (fs, p) in summary.flows.iter_mut().zip(&eq.flows) {
            fs.theory = p.as_ref().map(|p| {
                Box::new(FlowTheory {
                    throughput_bps: p.throughput_bps,
                    rtt_s: p.rtt_s,
                    cwnd_bytes: p.window_bytes,
                    queueing_delay_s: p.queueing_delay_s,
                    base_rtt_s: p.base_rtt_s,
                })
            });
        }
        let any = eq.flows.iter().any(Option::is_some);
        for (ls, p) in summary.links.iter_mut().zip(&eq.links) {
            ls.theory = any.then_some(LinkTheory {
                price_s: p.price_s,
                queue_pkts: p.queue_pkts,
                utilization: p.utilization,
            });
        }
        let eq = condensed(sc, eq);
        summary.theory = Some(TheorySummary {
            model: eq.model,
            outside: eq.outside,
            notes: eq.notes,
        });
    }
    // The index compares long-lived flows' rates with their max-min shares; a run with finite
    // transfers (a workload's flows come and go) has no such allocation to compare with.
    if sc.flows.iter().any(|f| f.scheme.size().is_some()) {
        return;
    }
    let fair = acclab_theory::maxmin::scenario_max_min(sc);
    let x: Vec<f64> = summary.flows.iter().map(|f| f.throughput_bps).collect();
    summary.fairness.weighted_max_min = acclab_theory::maxmin::weighted_fairness(&x, &fair);
}

/// `eq` as a run's summary takes it: the flows summary.json leaves out (a workload's, `[output]
/// flow_summaries`) counted by reason in its notes, not listed as outside the domain — what
/// [`acclab_theory::predict_listed`] makes from the outset, as a run does (a workload's flows
/// listed took ~60 bytes each); [`attach_theory`] does it to any prediction. Doing it again
/// changes nothing. (Their places in `flows` stay: whether any flow has a prediction
/// decides whether the links get the theory's, and an unlisted flow may have one.)
pub fn condensed(sc: &Scenario, mut eq: Equilibrium) -> Equilibrium {
    let Some(listed) = sc.output.summary_flows else {
        return eq;
    };
    let ids: std::collections::HashSet<std::borrow::Cow<str>> = match listed <= sc.flows.len() {
        true => (0..listed).map(|i| sc.flows.id(i)).collect(),
        false => Default::default(),
    };
    let mut unlisted: std::collections::BTreeMap<std::sync::Arc<str>, usize> = Default::default();
    eq.outside.retain(|(id, why)| {
        ids.contains(id.as_str()) || {
            *unlisted.entry(why.clone()).or_default() += 1;
            false
        }
    });
    eq.outside.shrink_to_fit();
    for (why, n) in unlisted {
        eq.notes.push(acclab_theory::unlisted_note(n, &why));
    }
    eq
}

/// A finished run.
pub struct Finished {
    pub sim: Simulator,
    /// Its summary, with the theory's prediction attached where the theory has one.
    pub summary: Summary,
    /// Why a run asked to be parallel ran serially, if it did.
    pub serial_because: Option<String>,
    /// Why the theory has no prediction for the scenario, if it has none.
    pub no_theory: Option<String>,
}

/// Simulates `sc` and returns its summary with the theory attached. With `files`, the run's
/// files (summary.json, flows.csv, links.csv, a trace if asked for) are written there as it
/// goes, and with `provenance` too its effective scenario and provenance record (summary.json
/// then points to them); without, nothing is written and no sample is kept.
pub fn run_scenario(
    sc: Scenario,
    files: Option<&Path>,
    provenance: Option<&acclab_results::provenance::Provenance>,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> std::io::Result<Finished> {
    let threads = default_threads(&sc)?;
    run_scenario_on(sc, files, provenance, threads, progress)
}

/// `$ACCLAB_THREADS`, if set: `auto` or a thread count (the whole golden suite runs this way
/// on 2 and 3 threads). An error names the variable, its value and what is allowed.
pub fn env_threads() -> std::io::Result<Option<Threads>> {
    match std::env::var("ACCLAB_THREADS") {
        Err(_) => Ok(None),
        Ok(v) => Threads::parse(&v).map(Some).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("ACCLAB_THREADS={e}"),
            )
        }),
    }
}

/// The threads of a run on its own (`acclab run`, a sweep, Python's `run`): as given, else
/// `$ACCLAB_THREADS`, else auto (up to the idle cores: [`Threads::auto`]).
pub fn threads_or_default(given: Option<Threads>) -> std::io::Result<Threads> {
    if let Some(t) = given {
        return Ok(t);
    }
    match env_threads()? {
        Some(t) => Ok(t),
        None => {
            Threads::auto().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
        }
    }
}

/// The threads of a run of `sc` that does not say and may run beside others (a
/// reproduction's, a sweep task's): `$ACCLAB_THREADS`, else 1.
pub fn default_threads(sc: &Scenario) -> std::io::Result<usize> {
    Ok(env_threads()?.unwrap_or(Threads::Count(1)).of(sc))
}

/// [`run_scenario`] on `threads` threads: the parallel engine
/// ([`Simulator::run_parallel`], the serial run's results) when `threads` > 1 and the run can
/// be parallel, the serial one otherwise ([`Finished::serial_because`] then says why).
pub fn run_scenario_on(
    sc: Scenario,
    files: Option<&Path>,
    provenance: Option<&acclab_results::provenance::Provenance>,
    threads: usize,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> std::io::Result<Finished> {
    if let Some(why) = sc.not_simulable() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why));
    }
    // How the run was made goes into its directory before it starts (a run that fails or is
    // interrupted keeps it too).
    let provenance = match (files, provenance) {
        (Some(dir), Some(p)) => {
            p.write(dir)?;
            Some(acclab_results::provenance::ProvenanceRef::default())
        }
        _ => None,
    };
    let (prediction, no_theory) = match acclab_theory::predict_listed(&sc, sc.listed_flows()) {
        Ok(eq) => (Some(eq), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut sim = Simulator::new(sc);
    if let Some(dir) = files {
        acclab_sim::output::stream_outputs(dir, &mut sim, false)?;
    }
    let t0 = std::time::Instant::now();
    let serial_because = sim.run_on(threads, progress);
    let mut summary = acclab_sim::output::summary(&sim, t0.elapsed().as_secs_f64());
    sim.finish_samples()?;
    attach_theory(sim.scenario(), prediction, &mut summary);
    summary.provenance = provenance;
    if let Some(dir) = files {
        acclab_sim::output::write_files(dir, &sim, &summary)?;
    }
    Ok(Finished {
        sim,
        summary,
        no_theory,
        serial_because,
    })
}

/// Integrates the model tier on `sc` into `dir`: flows.csv and links.csv as it goes, then
/// summary.json with the theory beside the model's values; `progress` is told the model time
/// reached; with `provenance`, the effective scenario and the provenance record first.
/// Returns the summary and why the theory has no prediction (or None).
pub fn model_scenario(
    sc: &Scenario,
    settings: acclab_model::Settings,
    dir: &Path,
    provenance: Option<&acclab_results::provenance::Provenance>,
    progress: &mut dyn FnMut(acclab_core::Time),
) -> Result<(Summary, Option<String>), Box<dyn std::error::Error + Send + Sync>> {
    if let Some(p) = provenance {
        p.write(dir)?;
    }
    let mut summary = acclab_model::run_to(sc, settings, dir, progress)?;
    summary.provenance = provenance.map(|_| acclab_results::provenance::ProvenanceRef::default());
    let (prediction, no_theory) = match acclab_theory::predict(sc) {
        Ok(eq) => (Some(eq), None),
        Err(e) => (None, Some(e.to_string())),
    };
    attach_theory(sc, prediction, &mut summary);
    acclab_results::summary::write_summary(dir, &summary)?;
    Ok((summary, no_theory))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload's flows leave the prediction as counts by reason, the listed flows stay as
    /// they were, and condensing again changes nothing.
    #[test]
    fn a_workloads_flows_are_counted_not_listed() {
        let text = acclab_scenario::templates::fat_tree("condensed", 4, 5)
            + r#"[[flow]]
id = "long"
kind = "vegas"
params = { alpha = 3, beta = 3 }
from = "h0"
to = "h5"
[[flow]]
id = "short"
kind = "reno"
from = "h1"
to = "h6"
params = { size = "30KB" }
[[workload]]
id = "ws"
kind = "dctcp"
sizes = "websearch"
load = 0.5
"#;
        let sc = acclab_scenario::parse(&text, "condensed.toml").unwrap();
        let eq = acclab_theory::predict(&sc).unwrap();
        let n = sc.flows.len();
        assert!(n > 20 && eq.flows.len() == n, "{n} flows");
        assert_eq!(eq.outside.len(), n - 1, "{:?}", &eq.outside[..3]);
        let once = condensed(&sc, eq);
        assert_eq!(once.flows.len(), n);
        assert!(once.flows[0].is_some());
        let ids: Vec<&str> = once.outside.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["short"]);
        let counted = format!("{} flows of workloads outside the domain: ", n - 2);
        assert_eq!(
            once.notes
                .iter()
                .filter(|s| s.starts_with(&counted))
                .count(),
            1,
            "{:?}",
            once.notes
        );
        let twice = condensed(&sc, once.clone());
        assert_eq!(
            (twice.flows.len(), &twice.outside, &twice.notes),
            (once.flows.len(), &once.outside, &once.notes)
        );
        // A run's prediction is condensed as it is made: the same.
        let made = acclab_theory::predict_listed(&sc, sc.listed_flows()).unwrap();
        assert_eq!(
            (&made.flows, &made.outside, &made.notes),
            (&once.flows, &once.outside, &once.notes)
        );
    }
}
