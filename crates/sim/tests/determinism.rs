//! Same scenario and seed: byte-identical outputs. Another seed: a different run.

use std::path::Path;

use acclab_scenario::parse;

/// Random start times make this scenario depend on its seed.
fn scenario(seed: u64) -> String {
    format!(
        r#"name = "det"
duration = "8s"
seed = {seed}
[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "5ms"
queue = {{ kind = "droptail", limit = "30pkt" }}
[[link]]
count = 3
between = ["s{{i}}", "r1"]
rate = "100Mbps"
delay = "1ms"
[[link]]
count = 3
between = ["r2", "d{{i}}"]
rate = "100Mbps"
delay = "1ms"
[[flow]]
count = 3
id = "f{{i}}"
kind = "reno"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "2s"
[[flow]]
id = "udp"
kind = "cbr"
from = "s0"
to = "d0"
params = {{ rate = "3Mbps" }}
"#
    )
}

fn run_into(dir: &Path, seed: u64) {
    let sc = parse(&scenario(seed), "det").unwrap();
    let (sim, mut summary) = acclab_sim::run(sc, &mut |_| {});
    // The wall-clock time measures the machine, not the simulation; it is the one field of
    // summary.json that may differ between identical runs.
    summary.wall_time_s = 0.0;
    acclab_sim::output::write_files(dir, &sim, &summary).unwrap();
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap()
}

#[test]
fn same_seed_gives_identical_files_and_another_seed_does_not() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    run_into(a.path(), 7);
    run_into(b.path(), 7);
    run_into(c.path(), 8);
    for f in ["summary.json", "flows.csv", "links.csv"] {
        assert_eq!(
            read(a.path(), f),
            read(b.path(), f),
            "{f} differs between identical runs"
        );
    }
    assert_ne!(
        read(a.path(), "flows.csv"),
        read(c.path(), "flows.csv"),
        "the seed changed nothing"
    );
}

#[test]
fn a_thousand_web_users_over_fifty_access_links_in_one_block() {
    // The compact form SPEC §6 asks for: 50 flows × 20 users, one [[flow]] block.
    let src = r#"name = "web"
duration = "20s"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "5ms"
queue = { kind = "droptail", limit = "300pkt" }
[[link]]
count = 50
between = ["srv{i}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = 50
between = ["r2", "users{i}"]
rate = "100Mbps"
delay = "2ms"
[[flow]]
count = 50
id = "web{i}"
kind = "web"
from = "srv{i}"
to = "users{i}"
params = { users = 20, think_time = "2s" }
"#;
    let sc = parse(src, "web").unwrap();
    let (sim, s) = acclab_sim::run(sc, &mut |_| {});
    let delivered: u64 = s.flows.iter().map(|f| f.delivered_bytes).sum();
    // 1000 users, a page every ~2 s of ~1.7 objects of ~12 KB: ~10 MB/s offered, heavy-tailed.
    assert!(delivered > 20_000_000, "delivered {delivered} B in 20 s");
    let inside = sim.packets_in_network();
    for (f, inside) in inside.iter().enumerate() {
        let c = sim.packet_counts(f);
        for dir in 0..2 {
            assert_eq!(
                c[dir].injected,
                c[dir].arrived + c[dir].dropped + inside[dir]
            );
        }
    }
}

#[test]
fn web_users_offer_the_load_their_model_predicts() {
    web_load("{ users = 500 }", "droptail");
}

#[test]
fn web_users_on_monaco_loops_offer_the_load_their_model_predicts() {
    // 003 Table I's web users: each object a fresh Monaco loop of weight 1.
    web_load("{ users = 500, monaco = { weight = 1 } }", "priority");
}

/// 500 users on an uncongested path: the delivered rate is the offered load. Heavy tails
/// (object sizes Pareto 1.2) make the sample mean slow to converge, hence 400 s.
fn web_load(params: &str, queue: &str) {
    let src = format!(
        r#"name = "web-load"
duration = "400s"
[[link]]
between = ["srv", "users"]
rate = "1Gbps"
delay = "2ms"
queue = {{ kind = "{queue}", limit = "inf" }}
[[flow]]
id = "web"
kind = "web"
from = "srv"
to = "users"
params = {params}
[output]
window = ["50s", "400s"]
"#
    );
    let sc = parse(&src, "web-load").unwrap();
    let acclab_core::config::SchemeConfig::Web(p) = &sc.flows.get(0).scheme else {
        panic!("not a web flow")
    };
    let predicted = p.model().offered_load() * 8.0;
    let (_, s) = acclab_sim::run(sc, &mut |_| {});
    let measured = s.flows[0].throughput_bps;
    eprintln!(
        "offered {:.3} Mb/s, delivered {:.3} Mb/s",
        predicted / 1e6,
        measured / 1e6
    );
    assert!(
        (measured - predicted).abs() / predicted < 0.10,
        "delivered {measured} b/s vs offered {predicted} b/s"
    );
}
