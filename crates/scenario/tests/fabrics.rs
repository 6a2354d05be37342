//! Generated fabrics and ECMP, end to end through the file and builder front ends.

use std::cell::Cell;
use std::collections::BTreeSet;

use acclab_core::config::{QueueConfig, RenoParams, SchemeConfig};
use acclab_core::{Duration, Rate};
use acclab_scenario::routing::Router;
use acclab_scenario::{parse, Ecmp, LinkId, NodeId, Scenario, Shape, Tier, TierLinks};

fn fat_tree(k: u32, extra: &str, flows: &str) -> String {
    format!(
        r#"
name = "ft"
duration = "1s"
{extra}
[topology]
kind = "fat-tree"
k = {k}
link_rate = "10Gbps"
link_delay = "1us"
queue = {{ kind = "droptail", limit = "200pkt" }}
core = {{ rate = "40Gbps" }}
{flows}
"#
    )
}

fn node(sc: &Scenario, name: &str) -> NodeId {
    NodeId(sc.nodes.iter().position(|n| n == name).unwrap() as u32)
}

/// Every shortest path from `a` to `b`, enumerated by driving ECMP's pick with every code.
fn all_paths(sc: &Scenario, a: &str, b: &str) -> BTreeSet<Vec<LinkId>> {
    let mut r = Router::new(sc.nodes.len(), &sc.links);
    let (a, b) = (node(sc, a), node(sc, b));
    (0..4096u64)
        .map(|code| {
            let code = Cell::new(code);
            r.ecmp_path(a, b, |_, count| {
                let c = code.get();
                code.set(c / count as u64);
                (c % count as u64) as usize
            })
            .unwrap()
        })
        .collect()
}

#[test]
fn a_fat_tree_file_expands_into_links_with_its_tiers() {
    let sc = parse(&fat_tree(4, "", ""), "ft.toml").unwrap();
    assert_eq!(sc.nodes.len(), 16 + 20);
    assert_eq!(sc.links.len(), 2 * (16 + 16 + 16));
    let link = |n: &str| sc.links.iter().find(|l| l.name == n).unwrap();
    assert_eq!(link("h0->edge0_0").rate, Rate::from_mbps(10_000));
    assert_eq!(link("agg0_1->core2").rate, Rate::from_mbps(40_000));
    assert_eq!(link("core2->agg3_1").rate, Rate::from_mbps(40_000));
    assert_eq!(link("edge0_0->agg0_1").delay, Duration::from_micros(1));
    // Every host reaches every other host.
    let mut r = Router::new(sc.nodes.len(), &sc.links);
    for a in 0..16 {
        for b in 0..16 {
            if a != b {
                let p = r.path(node(&sc, &format!("h{a}")), node(&sc, &format!("h{b}")));
                assert!(p.is_some(), "h{a} -> h{b}");
            }
        }
    }
}

#[test]
fn ecmp_path_counts_are_the_papers() {
    for k in [4u32, 8] {
        let sc = parse(&fat_tree(k, "", ""), "ft.toml").unwrap();
        let half = u64::from(k / 2);
        let hosts = u64::from(k) * half * half;
        let last = format!("h{}", hosts - 1);
        // Between pods: (k/2)² paths, each 6 hops.
        let between = all_paths(&sc, "h0", &last);
        assert_eq!(between.len() as u64, half * half, "k = {k}");
        let mut r = Router::new(sc.nodes.len(), &sc.links);
        assert_eq!(r.path_count(node(&sc, "h0"), node(&sc, &last)), half * half);
        assert_eq!(r.path_count(node(&sc, "h0"), node(&sc, "h1")), 1);
        assert!(between.iter().all(|p| p.len() == 6));
        // In a pod, under different edge switches: k/2 paths of 4 hops.
        let in_pod = all_paths(&sc, "h0", &format!("h{half}"));
        assert_eq!(in_pod.len() as u64, half, "k = {k}");
        // Under one edge switch: one path of 2 hops.
        let rack = all_paths(&sc, "h0", "h1");
        assert_eq!(rack.len(), 1);
        assert_eq!(rack.iter().next().unwrap().len(), 2);
    }
}

#[test]
fn flow_ecmp_spreads_flows_over_the_core_and_is_a_function_of_the_seed() {
    let flows =
        "[[flow]]\nid = \"f{i}\"\nkind = \"reno\"\nfrom = \"h0\"\nto = \"h127\"\ncount = 64\n";
    let core_links = |sc: &Scenario| -> BTreeSet<String> {
        sc.flows
            .iter()
            .flat_map(|f| f.forward.to_vec())
            .map(|l| &sc.links[l.0 as usize])
            .filter(|l| l.to.0 as usize >= 1 && sc.nodes[l.to.0 as usize].starts_with("core"))
            .map(|l| l.name.clone())
            .collect()
    };
    let ecmp = parse(&fat_tree(8, "[routing]\necmp = \"flow\"", flows), "ft.toml").unwrap();
    let single = parse(&fat_tree(8, "", flows), "ft.toml").unwrap();
    // Without ECMP every flow of a pair takes one path; with it, 64 flows over 16 cores use
    // most of them (a deterministic draw: this seed reaches 16 of 16).
    assert_eq!(core_links(&single).len(), 1);
    let used = core_links(&ecmp).len();
    assert!(used >= 12, "64 flows used only {used} of 16 core switches");
    // Same seed, same paths; another seed, other paths; a flow's ACKs take a path back too.
    let again = parse(&fat_tree(8, "[routing]\necmp = \"flow\"", flows), "ft.toml").unwrap();
    assert_eq!(ecmp.flows, again.flows);
    let reseeded = parse(
        &fat_tree(8, "seed = 2\n[routing]\necmp = \"flow\"", flows),
        "ft.toml",
    )
    .unwrap();
    assert_ne!(ecmp.flows, reseeded.flows);
    for f in &ecmp.flows {
        assert_eq!(f.forward.len(), 6);
        assert_eq!(f.reverse.len(), 6);
    }
}

/// `ecmp = "packet"` sprays the flows routed by the scenario, not those with an explicit
/// `path`; a sprayed flow keeps per-flow ECMP's path as its representative (what the theory
/// and the model are told about, and refuse).
#[test]
fn packet_ecmp_marks_routed_flows_sprayed() {
    let flows = "[[flow]]\nid = \"a\"\nkind = \"reno\"\nfrom = \"h0\"\nto = \"h15\"\n\
                 [[flow]]\nid = \"b\"\nkind = \"reno\"\nfrom = \"h0\"\nto = \"h1\"\n\
                 path = [\"h0\", \"edge0_0\", \"h1\"]\n";
    let sprayed = parse(
        &fat_tree(4, "[routing]\necmp = \"packet\"", flows),
        "ft.toml",
    )
    .unwrap();
    let per_flow = parse(&fat_tree(4, "[routing]\necmp = \"flow\"", flows), "ft.toml").unwrap();
    assert!(sprayed.flows.get(0).spray && !sprayed.flows.get(1).spray);
    assert!(!per_flow.flows.get(0).spray);
    assert_eq!(sprayed.flows.get(0).forward, per_flow.flows.get(0).forward);
    let e = parse(
        &fat_tree(4, "[routing]\necmp = \"spray\"", flows),
        "ft.toml",
    )
    .unwrap_err();
    assert_eq!(e.key, "routing.ecmp");
    assert!(e.message.contains("packet"), "{}", e.message);
}

#[test]
fn topology_mistakes_name_their_key_and_line() {
    let cases = [
        ("k = 4", "k = 5", "topology.k", "even"),
        (
            "k = 4",
            "k = 4\nleaves = 2",
            "topology.leaves",
            "not a key of kind",
        ),
        (
            "core = { rate = \"40Gbps\" }",
            "spine = { rate = \"40Gbps\" }",
            "topology.spine",
            "no tier",
        ),
        (
            "kind = \"fat-tree\"",
            "kind = \"torus\"",
            "topology.kind",
            "fat-tree, leaf-spine",
        ),
        (
            "core = { rate = \"40Gbps\" }",
            "core = { rate = \"100Tbps\" }",
            "topology.core.rate",
            "not in",
        ),
        (
            "link_rate = \"10Gbps\"",
            "link_rate = \"100Tbps\"",
            "topology.link_rate",
            "not in",
        ),
        (
            "limit = \"200pkt\"",
            "limit = \"10B\"",
            "topology.queue.limit",
            "cannot hold",
        ),
    ];
    for (from, to, key, says) in cases {
        let text = fat_tree(4, "", "").replacen(from, to, 1);
        let e = parse(&text, "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{to}: {e}");
        assert!(e.to_string().contains(says), "{to}: {e}");
        assert!(e.line.is_some(), "{to}: {e}");
    }
    for (buckets, key, says) in [
        ("[\"1MB\", \"10KB\"]", "output.fct_buckets", "must increase"),
        ("[\"0B\"]", "output.fct_buckets[0]", "greater than zero"),
    ] {
        let text = fat_tree(4, "", &format!("[output]\nfct_buckets = {buckets}\n"));
        let e = parse(&text, "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.to_string().contains(says) && e.line.is_some(), "{e}");
    }
    let e = parse(
        &fat_tree(4, "[routing]\necmp = \"sometimes\"", ""),
        "ft.toml",
    )
    .unwrap_err();
    assert_eq!(e.key, "routing.ecmp", "{e}");
    assert!(e.to_string().contains("flow"), "{e}");
}

#[test]
fn generated_links_are_patched_by_name_and_the_builder_makes_the_same_fabric() {
    let text = fat_tree(4, "[routing]\necmp = \"flow\"", "");
    let mut spec = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    spec.set_str("link.\"agg0_1->core2\".rate", "100Gbps")
        .unwrap();
    let sc = spec.build().unwrap();
    let l = sc.links.iter().find(|l| l.name == "agg0_1->core2").unwrap();
    assert_eq!(l.rate, Rate::from_mbps(100_000));
    // Written back and read again: the same scenario.
    let again = acclab_scenario::parse_spec(&spec.to_toml(), "ft.toml").unwrap();
    assert_eq!(again, spec);

    let file = parse(&text, "ft.toml").unwrap();
    let queue = QueueConfig::from_kind(
        "droptail",
        toml::Value::Table(toml::from_str("limit = \"200pkt\"").unwrap()),
    )
    .unwrap();
    let built = Scenario::builder("ft", Duration::from_secs(1))
        .topology(
            Shape::FatTree {
                k: 4,
                oversubscription: 1,
            },
            |t| TierLinks {
                rate: Rate::from_mbps(if t == Tier::Core { 40_000 } else { 10_000 }),
                delay: Duration::from_micros(1),
                queue: queue.clone(),
            },
        )
        .ecmp(Ecmp::Flow)
        .flow("f", SchemeConfig::Reno(RenoParams::default()))
        .from("h0")
        .to("h15")
        .build()
        .unwrap();
    assert_eq!(built.links, file.links);
    assert_eq!(built.nodes, file.nodes);
    assert_eq!(built.flows.get(0).forward.len(), 6);
}

/// A patch of a `[topology]` key generates the fabric again: the other tiers keep their own
/// values, links patched by name keep their patches, and everything else stays.
#[test]
fn topology_keys_are_patched_and_the_fabric_generated_again() {
    let flows = "[[flow]]\nid = \"f\"\nkind = \"reno\"\nfrom = \"h0\"\nto = \"h15\"\n";
    let text = fat_tree(4, "[routing]\necmp = \"flow\"", flows);
    let mut spec = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    spec.set_str("link.\"agg0_0->core1\".rate", "100Gbps")
        .unwrap();
    spec.set_str("link.\"h3->edge0_1\".queue.limit", "\"50pkt\"")
        .unwrap();
    let link = |sc: &Scenario, n: &str| sc.links.iter().find(|l| l.name == n).unwrap().clone();
    let mut k6 = spec.clone();
    k6.set_str("topology.k", "6").unwrap();
    let sc = k6.build().unwrap();
    // k = 6: 54 hosts, 45 switches; 162 cables.
    assert_eq!(sc.nodes.len(), 54 + 45);
    assert_eq!(sc.links.len(), 2 * 162);
    assert_eq!(link(&sc, "agg0_0->core1").rate, Rate::from_mbps(100_000));
    assert_eq!(link(&sc, "agg0_0->core2").rate, Rate::from_mbps(40_000));
    assert_eq!(link(&sc, "h53->edge5_2").rate, Rate::from_mbps(10_000));
    let limit = |sc: &Scenario, n: &str| format!("{:?}", link(sc, n).queue);
    assert!(
        limit(&sc, "h3->edge0_1").contains("50"),
        "{}",
        limit(&sc, "h3->edge0_1")
    );
    assert!(
        limit(&sc, "h5->edge0_1").contains("200"),
        "{}",
        limit(&sc, "h5->edge0_1")
    );
    assert_eq!(sc.flows.len(), 1);
    // The base rate moves every link of a tier without its own; the core keeps its 40 Gb/s, and
    // a patched core link its 100.
    let mut fast = spec.clone();
    fast.set_all(&[
        ("topology.link_rate".into(), "25Gbps".into()),
        (
            "topology.aggregation".into(),
            toml::from_str::<toml::Table>("delay = \"2us\"")
                .unwrap()
                .into(),
        ),
    ])
    .unwrap();
    let sc = fast.build().unwrap();
    assert_eq!(sc.links.len(), 2 * 48);
    assert_eq!(link(&sc, "h0->edge0_0").rate, Rate::from_mbps(25_000));
    assert_eq!(link(&sc, "edge0_0->agg0_1").delay, Duration::from_micros(2));
    assert_eq!(link(&sc, "agg0_1->core2").rate, Rate::from_mbps(40_000));
    assert_eq!(link(&sc, "agg0_0->core1").rate, Rate::from_mbps(100_000));
    // Patched twice: from the table as patched the first time.
    k6.set_str("topology.link_rate", "40Gbps").unwrap();
    let sc = k6.build().unwrap();
    assert_eq!(sc.links.len(), 2 * 162);
    assert_eq!(link(&sc, "h53->edge5_2").rate, Rate::from_mbps(40_000));

    // Mistakes name the topology's key; a rejected patch changes nothing.
    for (key, value, says) in [
        ("topology.k", "5", "even"),
        ("topology.k", "\"four\"", "expected u32"),
        ("topology.leaves", "4", "not a key of kind"),
        ("topology.core.rate", "\"fast\"", ""),
    ] {
        let before = spec.clone();
        let e = spec.set_str(key, value).unwrap_err();
        assert!(e.key.starts_with(key), "{key}: {e}");
        assert!(e.to_string().contains(says), "{key}: {e}");
        assert_eq!(spec, before);
    }
    // A patched link the new fabric does not have; a flow's host it does not have.
    let e = spec.clone().set_str("topology.k", "2").unwrap_err();
    assert_eq!(e.key, "topology.k", "{e}");
    assert!(e.to_string().contains("was patched before"), "{e}");
    let mut plain = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    let e = plain.set_str("topology.k", "2").unwrap_err();
    assert!(e.key.starts_with("flow.f"), "{e}");
    assert!(e.to_string().contains("h15"), "{e}");
    // Written out, the fabric is its [topology] again, its patched links' own values in
    // [topology.links."a->b"]: read back, it is the same scenario, and patches the same way (as
    // a Dask worker or a run's scenario.toml read it).
    let text = spec.to_toml();
    assert!(!text.contains("[[link]]"), "{text}");
    assert!(
        text.contains("[topology.links.\"agg0_0->core1\"]"),
        "{text}"
    );
    let mut written = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    assert_eq!(written, spec);
    assert_eq!(written.build().unwrap().links, spec.build().unwrap().links);
    written.set_str("topology.k", "6").unwrap();
    let sc = written.build().unwrap();
    assert_eq!(sc.links.len(), 2 * 162);
    assert_eq!(link(&sc, "agg0_0->core1").rate, Rate::from_mbps(100_000));
    // One made by the builder lists its links: its topology's keys are not there to patch.
    let mut built = acclab_scenario::ScenarioSpec::new("b", Duration::from_secs(1));
    built.links = spec.links.clone();
    let e = built.set_str("topology.k", "6").unwrap_err();
    assert_eq!(e.key, "topology.k", "{e}");
    assert!(e.to_string().contains("no [topology]"), "{e}");
}

/// A fabric beside links and pools of its own: patches reach the right ones, and the scenario
/// written back reads the same (the fabric's links first, then the `[[link]]`s; the fabric's
/// pool after the `[[shared_buffer]]`s).
#[test]
fn patches_reach_a_fabrics_links_and_the_links_beside_it() {
    let extra = "[[link]]\nbetween = [\"h0\", \"x\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [[shared_buffer]]\nnodes = [\"x\"]\nsize = \"1MB\"\n";
    let text =
        fat_tree(4, "", extra).replace("core = {", "shared_buffer = { size = \"4MB\" }\ncore = {");
    let mut spec = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    spec.set_all(&[
        ("link.\"h0->x\".rate".into(), "2Gbps".into()),
        ("link.\"x->h0\".delay".into(), "3ms".into()),
        ("link.\"h1->edge0_0\".rate".into(), "5Gbps".into()),
        ("shared_buffer[0].alpha".into(), toml::Value::Float(0.5)),
        ("shared_buffer[1].alpha".into(), toml::Value::Float(2.0)),
    ])
    .unwrap();
    let check = |spec: &acclab_scenario::ScenarioSpec| {
        let sc = spec.build().unwrap();
        let link = |n: &str| sc.links.iter().find(|l| l.name == n).unwrap().clone();
        assert_eq!(link("h0->x").rate, Rate::from_mbps(2_000));
        assert_eq!(link("x->h0").delay, Duration::from_millis(3));
        assert_eq!(link("h1->edge0_0").rate, Rate::from_mbps(5_000));
        assert_eq!(link("h0->edge0_0").rate, Rate::from_mbps(10_000));
        let x = sc.nodes.iter().position(|n| n == "x").unwrap();
        for b in &sc.shared_buffers {
            let alpha = if b.node.0 as usize == x { 0.5 } else { 2.0 };
            assert_eq!(b.params.alpha, alpha, "{:?}", b.node);
        }
        assert_eq!(sc.shared_buffers.len(), 21);
        sc
    };
    let sc = check(&spec);
    let again = acclab_scenario::parse_spec(&spec.to_toml(), "ft.toml").unwrap();
    assert_eq!(again.build().unwrap().links, sc.links);
    check(&again);
    // Patched again after the round trip, by index and by name, and the fabric regenerated.
    let mut again = again;
    again.set_str("topology.k", "6").unwrap();
    let sc = again.build().unwrap();
    assert_eq!(sc.links.len(), 2 * 162 + 2);
    assert_eq!(sc.shared_buffers.len(), 1 + 45);
}

/// `[topology.links."a->b"]` gives one generated link values of its own; mistakes in it name
/// the key and the line.
#[test]
fn a_generated_link_takes_values_of_its_own() {
    let own = "[topology.links.\"agg0_0->core1\"]\nrate = \"1Gbps\"\nloss = 0.01\n";
    let sc = parse(&fat_tree(4, "", own), "ft.toml").unwrap();
    let l = sc.links.iter().find(|l| l.name == "agg0_0->core1").unwrap();
    assert_eq!(l.rate, Rate::from_mbps(1_000));
    assert!(!l.loss.is_none());
    let back = sc.links.iter().find(|l| l.name == "core1->agg0_0").unwrap();
    assert_eq!(back.rate, Rate::from_mbps(40_000));
    for (text, key) in [
        (
            "[topology.links.\"x->y\"]\nrate = \"1Gbps\"\n",
            "topology.links.\"x->y\"",
        ),
        (
            "[topology.links.\"h0->edge0_0\"]\nqueue = { kind = \"droptail\", limit = \"-1pkt\" }\n",
            "topology.links.\"h0->edge0_0\".queue.limit",
        ),
        (
            "[topology.links.\"h0->edge0_0\"]\nspeed = \"1Gbps\"\n",
            "topology.links.\"h0->edge0_0\".speed",
        ),
    ] {
        let e = parse(&fat_tree(4, "", text), "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

/// HPCC over packet spraying is refused, naming the flow's or the workload's kind: its sender
/// keeps each hop's telemetry by the hop's place on one path.
#[test]
fn hpcc_flows_are_not_sprayed() {
    let flow = "[[flow]]\nid = \"f\"\nkind = \"hpcc\"\nfrom = \"h0\"\nto = \"h15\"\n";
    let e = parse(
        &fat_tree(4, "[routing]\necmp = \"packet\"", flow),
        "ft.toml",
    )
    .unwrap_err();
    assert_eq!(e.key, "flow[0].kind", "{e}");
    assert!(
        e.to_string().contains("ecmp = \"flow\"") && e.line.is_some(),
        "{e}"
    );
    let wl =
        "[[workload]]\nid = \"w\"\nkind = \"hpcc\"\nsizes = \"rpc\"\nload = 0.1\nstop = \"1ms\"\n";
    let e = parse(&fat_tree(4, "[routing]\necmp = \"packet\"", wl), "ft.toml").unwrap_err();
    assert_eq!(e.key, "workload[0].kind", "{e}");
    // Per-flow ECMP, and spraying of other schemes, stand.
    parse(&fat_tree(4, "[routing]\necmp = \"flow\"", flow), "ft.toml").unwrap();
    parse(
        &fat_tree(
            4,
            "[routing]\necmp = \"packet\"",
            &flow.replace("hpcc", "dctcp"),
        ),
        "ft.toml",
    )
    .unwrap();
}

/// The pool of `[topology] shared_buffer` follows the switches of the fabric generated again.
#[test]
fn a_fabric_generated_again_gives_its_new_switches_the_pool() {
    let text =
        fat_tree(4, "", "").replace("core = {", "shared_buffer = { size = \"4MB\" }\ncore = {");
    let mut spec = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    spec.set_str("shared_buffer[0].alpha", "0.5").unwrap();
    spec.set_str("topology.k", "6").unwrap();
    let sc = spec.build().unwrap();
    // 18 edge, 18 aggregation and 9 core switches.
    assert_eq!(sc.shared_buffers.len(), 45);
    assert!(sc.shared_buffers.iter().all(|b| b.params.alpha == 0.5));
    spec.set_str("topology.shared_buffer.alpha", "2").unwrap();
    let sc = spec.build().unwrap();
    assert!(sc.shared_buffers.iter().all(|b| b.params.alpha == 2.0));
}

#[test]
fn a_workload_draws_its_flows_when_the_scenario_resolves() {
    let wl = "[[workload]]\nid = \"ws\"\nkind = \"dctcp\"\nsizes = \"websearch\"\nload = 0.3\nstop = \"500ms\"\n";
    let text = fat_tree(4, "[routing]\necmp = \"flow\"", wl);
    let mut spec = acclab_scenario::parse_spec(&text, "ft.toml").unwrap();
    let sc = spec.build().unwrap();
    // 16 hosts at 10 Gb/s, 30% load, websearch's mean ≈ 1.71 MB: 219 flows/s per host, ≈ 1,750
    // flows in 0.5 s.
    let n = sc.flows.len();
    assert!((1550..1950).contains(&n), "{n} flows");
    assert!(sc.flows.iter().all(|f| f.id.starts_with("ws")));
    assert!((1..n).all(|i| sc.flows.start(i - 1) <= sc.flows.start(i)));
    // Patching the load or the seed draws the flows anew; the spec keeps the workload.
    spec.set_str("workload[0].load", "0.6").unwrap();
    let more = spec.build().unwrap().flows.len();
    assert!(more > n * 3 / 2, "{more} flows at 60% vs {n} at 30%");
    spec.set_str("seed", "9").unwrap();
    assert_ne!(spec.build().unwrap().flows, sc.flows);
    let again = acclab_scenario::parse_spec(&spec.to_toml(), "ft.toml").unwrap();
    assert_eq!(again, spec);
    // Mistakes name the workload's key and line.
    for (from, to, key) in [
        ("load = 0.3", "load = 3", "workload[0].load"),
        (
            "sizes = \"websearch\"",
            "sizes = \"fb\"",
            "workload[0].sizes",
        ),
        ("kind = \"dctcp\"", "kind = \"onoff\"", "workload[0].kind"),
    ] {
        let e = parse(&text.replacen(from, to, 1), "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

#[test]
fn a_generated_workload_round_trips_through_an_hpcc_traffic_file() {
    let wl = "[[workload]]\nid = \"ws\"\nkind = \"dctcp\"\nsizes = \"websearch\"\nload = 0.3\nstop = \"100ms\"\n";
    let generated = parse(&fat_tree(4, "[routing]\necmp = \"flow\"", wl), "ft.toml").unwrap();
    let mut text = Vec::new();
    acclab_scenario::workload::write_flow_file(&mut text, &generated.traffic()).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        generated.flows.len().to_string()
    );
    // Written beside a scenario that reads it back by a relative path.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("traffic.txt"), &text).unwrap();
    let file_wl =
        "[[workload]]\nid = \"ws\"\nkind = \"dctcp\"\npattern = \"file\"\nfile = \"traffic.txt\"\n";
    let path = dir.path().join("replay.toml");
    std::fs::write(&path, fat_tree(4, "[routing]\necmp = \"flow\"", file_wl)).unwrap();
    let replayed = acclab_scenario::load(&path).unwrap();
    let key = |sc: &Scenario| -> Vec<_> {
        sc.flows
            .iter()
            .map(|f| (f.src, f.dst, f.start, f.scheme.size(), f.forward.clone()))
            .collect()
    };
    assert_eq!(key(&replayed), key(&generated));
    // The same file from another directory: found all the same.
    let spec = acclab_scenario::load_spec(&path).unwrap();
    assert_eq!(key(&spec.build().unwrap()), key(&generated));
    // A host index past the fabric's is named with its line.
    std::fs::write(dir.path().join("traffic.txt"), "1\n0 99 3 100 1000 0.001\n").unwrap();
    let e = acclab_scenario::load(&path).unwrap_err();
    assert_eq!(e.key, "workload[0].file", "{e}");
    assert!(
        e.to_string().contains("line 2") && e.to_string().contains("host 99"),
        "{e}"
    );
}

/// `shared_buffer` in `[topology]` gives every switch of the fabric (and no host) a pool; a
/// `[[shared_buffer]]` names its switches. Mistakes name their key and line; the pool is
/// patched by index and written back.
#[test]
fn shared_buffers_cover_the_fabrics_switches_and_their_mistakes_are_named() {
    let pool = "shared_buffer = { size = \"4MB\", alpha = 0.5 }\n";
    let text = fat_tree(4, "", "").replace("core = {", &format!("{pool}core = {{"));
    let sc = parse(&text, "ft.toml").unwrap();
    // k = 4: 8 edge, 8 aggregation and 4 core switches.
    assert_eq!(sc.shared_buffers.len(), 20);
    let names: BTreeSet<&str> = sc
        .shared_buffers
        .iter()
        .map(|b| sc.nodes[b.node.0 as usize].as_str())
        .collect();
    assert!(names.contains("edge0_0") && names.contains("agg3_1") && names.contains("core3"));
    assert!(names.iter().all(|n| !n.starts_with('h')));
    assert!(sc.shared_buffers.iter().all(|b| b.params.alpha == 0.5));

    let cases = [
        (
            "alpha = 0.5",
            "alpha = 0",
            "topology.shared_buffer.alpha",
            "[0.0009765625, 1024]",
        ),
        (
            "size = \"4MB\"",
            "size = \"1KB\"",
            "topology.shared_buffer.size",
            "less than one",
        ),
        (
            "alpha = 0.5",
            "alpha = 0.5, beta = 1",
            "topology.shared_buffer.beta",
            "beta",
        ),
    ];
    for (from, to, key, says) in cases {
        let e = parse(&text.replacen(from, to, 1), "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{to}: {e}");
        assert!(e.to_string().contains(says), "{to}: {e}");
        assert!(e.line.is_some(), "{to}: {e}");
    }
    let table = |body: &str| fat_tree(4, "", &format!("[[shared_buffer]]\n{body}\n"));
    for (body, key, says) in [
        (
            "nodes = [\"core0\", \"core9\"]\nsize = \"1MB\"",
            "shared_buffer[0].nodes[1]",
            "unknown node",
        ),
        (
            "nodes = [\"core0\", \"core0\"]\nsize = \"1MB\"",
            "shared_buffer[0].nodes[1]",
            "already has",
        ),
        (
            "nodes = []\nsize = \"1MB\"",
            "shared_buffer[0].nodes",
            "name the switches",
        ),
        (
            "nodes = [\"core0\"]\nsize = \"1MB\"\nalpha = 5000",
            "shared_buffer[0].alpha",
            "1024",
        ),
        ("nodes = [\"core0\"]", "shared_buffer[0].size", "missing"),
    ] {
        let e = parse(&table(body), "ft.toml").unwrap_err();
        assert_eq!(e.key, key, "{body}: {e}");
        assert!(e.to_string().contains(says), "{body}: {e}");
        assert!(e.line.is_some(), "{body}: {e}");
    }

    let mut spec = acclab_scenario::parse_spec(
        &table("nodes = [\"core0\", \"edge1_0\"]\nsize = \"1MB\""),
        "ft.toml",
    )
    .unwrap();
    spec.set_str("shared_buffer[0].alpha", "2").unwrap();
    let e = spec
        .clone()
        .set_str("shared_buffer[3].alpha", "2")
        .unwrap_err();
    assert!(e.to_string().contains("no shared_buffer[3]"), "{e}");
    let e = spec
        .clone()
        .set_str("shared_buffer[0].alpha", "-1")
        .unwrap_err();
    assert_eq!(e.key, "shared_buffer[0].alpha", "{e}");
    let sc = spec.build().unwrap();
    assert_eq!(sc.shared_buffers.len(), 2);
    assert_eq!(sc.shared_buffers[1].params.alpha, 2.0);
    assert_eq!(sc.shared_buffers[1].params.size.0, 1_000_000);
    let again = acclab_scenario::parse_spec(&spec.to_toml(), "ft.toml").unwrap();
    assert_eq!(again, spec);
}
