//! Copa end to end ([AB18], issue 53 §2): in default mode each flow keeps about 1/δ packets
//! in the bottleneck queue and flows share evenly; the competitive mode lifts Copa's share
//! beside a buffer-filling CUBIC flow.

use acclab_scenario::parse;

mod common;

/// `flows` (TOML `[[flow]]` tables from s{i} to d{i}) over a 20 Mb/s, 10 ms bottleneck with a
/// 500-packet buffer, 60 s measured from 20 s.
fn dumbbell(flows: &str) -> String {
    let bottleneck =
        "rate = \"20Mbps\"\ndelay = \"10ms\"\nqueue = { kind = \"droptail\", limit = \"500pkt\" }";
    common::dumbbell(bottleneck, 4, flows, "60s", ("20s", "60s"), 1)
}

/// [AB18] §2.2: in equilibrium each flow keeps 1/δ = 2 packets queued — 8 for four flows —
/// and the flows share the link evenly.
#[test]
fn four_copa_flows_keep_one_over_delta_packets_each_in_the_queue() {
    let sc = dumbbell(
        "[[flow]]\ncount = 4\nid = \"copa{i}\"\nkind = \"copa\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nstart_jitter = \"2s\"",
    );
    let (_, s) = acclab_sim::run(parse(&sc, "copa.toml").unwrap(), &mut |_| {});
    let link = &s.links[0];
    // Copa's oscillation (0 to about 2.5/δ per flow) averages near 1/δ: within 50%.
    assert!(
        (link.mean_queue_pkts - 8.0).abs() < 4.0,
        "mean queue {} packets",
        link.mean_queue_pkts
    );
    assert!(link.utilization > 0.95, "{}", link.utilization);
    let rates: Vec<f64> = s.flows.iter().map(|f| f.throughput_bps).collect();
    let jain = acclab_results::summary::jain(&rates).unwrap();
    assert!(jain > 0.99, "Jain {jain}: {rates:?}");
}

/// [AB18] §3: beside CUBIC the queue never empties; the competitive mode then raises 1/δ
/// (AIMD) and Copa keeps a share it would otherwise lose.
#[test]
fn the_competitive_mode_holds_a_share_beside_cubic() {
    let share = |competitive: bool| {
        let sc = dumbbell(&format!(
            "[[flow]]\nid = \"copa\"\nkind = \"copa\"\nparams = {{ competitive = {competitive} }}\nfrom = \"s0\"\nto = \"d0\"\n[[flow]]\nid = \"cubic\"\nkind = \"cubic\"\nfrom = \"s1\"\nto = \"d1\""
        ));
        let (_, s) = acclab_sim::run(parse(&sc, "copa.toml").unwrap(), &mut |_| {});
        s.flows[0].throughput_bps / 20e6
    };
    let (with, without) = (share(true), share(false));
    assert!(with > 0.10, "competitive share {with}");
    assert!(
        with > 3.0 * without,
        "competitive {with} vs default {without}"
    );
}
