//! A parallel run gives the serial run's results (issue 56 §2): the summary, every sample, and
//! the flows' completion times, byte for byte, on 2 and 3 threads.

use acclab_scenario::templates;
use acclab_sim::Simulator;

/// The run's summary (wall time left out) as JSON, and its samples as text.
fn outcome(text: &str, threads: usize) -> (String, String) {
    let sc = acclab_scenario::parse(text, "parallel.toml").unwrap();
    let mut sim = Simulator::new(sc);
    if threads > 1 {
        sim.run_parallel(threads, &mut |_| {}).unwrap();
    } else {
        sim.run(&mut |_| {});
    }
    let summary = acclab_sim::output::summary(&sim, 0.0);
    let json = serde_json::to_string_pretty(&summary).unwrap();
    let m = sim.monitor();
    let samples = format!("{:?}\n{:?}", m.flow_samples, m.link_samples);
    (json, samples)
}

fn same_on_threads(text: &str) {
    let serial = outcome(text, 1);
    for threads in [2, 3] {
        let parallel = outcome(text, threads);
        assert!(
            serial.0 == parallel.0,
            "summary differs on {threads} threads:\n{}",
            first_difference(&serial.0, &parallel.0)
        );
        assert!(
            serial.1 == parallel.1,
            "samples differ on {threads} threads:\n{}",
            first_difference(&serial.1, &parallel.1)
        );
    }
}

fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
        if x != y {
            return format!("line {i}:\n serial:   {x}\n parallel: {y}");
        }
    }
    format!("lengths {} vs {}", la.len(), lb.len())
}

#[test]
fn a_fat_tree_of_long_flows() {
    same_on_threads(&templates::fat_tree_permutation(4, 20));
}

#[test]
fn a_fat_tree_under_web_search() {
    same_on_threads(&templates::fat_tree_websearch(4, 0.5, 20));
}
