//! The theory on a fabric: long-lived flows routed by ECMP over a fat-tree are a NUM problem
//! over the paths ECMP chose (000 §III), and the packet run agrees with it as on a dumbbell.

/// A k = 4 fat-tree at 1 Gb/s with a 500 Mb/s core, eight Monaco flows from pods 0–1 to pods
/// 2–3 spread by ECMP: where two flows' hashes put them on one core link, proportional
/// fairness gives each 250 Mb/s; alone, 500 Mb/s. Monaco (ACC, 000 §IV-B) reaches that
/// allocation: every flow within 3% of the theory's rate over the second half of 300 ms.
#[test]
fn monaco_on_a_fat_tree_with_ecmp_reaches_the_theorys_allocation() {
    let text = r#"
name = "fat-tree-monaco"
duration = "300ms"
[routing]
ecmp = "flow"
[topology]
kind = "fat-tree"
k = 4
link_rate = "1Gbps"
link_delay = "10us"
queue = { kind = "droptail", limit = "1000pkt", priority = true }
core = { rate = "500Mbps" }
[[flow]]
id = "m{i}"
kind = "monaco"
from = "h{i}"
to = "h{i+8}"
count = 8
[output]
window = ["150ms", "300ms"]
"#;
    let sc = acclab_scenario::parse(text, "fat-tree-monaco").unwrap();
    let done = acclab_study::run::run_scenario(sc, None, None, &mut |_| {}).unwrap();
    assert_eq!(done.no_theory, None);
    let mut shares = std::collections::BTreeSet::new();
    for f in &done.summary.flows {
        let t = f
            .theory
            .as_ref()
            .expect("the theory predicts every Monaco flow");
        shares.insert((t.throughput_bps / 1e6).round() as u64);
        let err = (f.throughput_bps / t.throughput_bps - 1.0).abs();
        assert!(
            err < 0.03,
            "{}: {:.1} Mb/s measured, {:.1} predicted",
            f.id,
            f.throughput_bps / 1e6,
            t.throughput_bps / 1e6
        );
    }
    // This seed's ECMP draw shares some core links and not others: both cases are checked.
    assert_eq!(
        shares.into_iter().collect::<Vec<_>>(),
        vec![250, 500],
        "the ECMP draw no longer mixes shared and unshared paths"
    );
}
