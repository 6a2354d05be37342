//! The two front ends agree: every scenario file in the repository gives the same model read as
//! a file, written back with `to_toml` and read again, and rebuilt with the typed builder; patches
//! by key path change exactly what they name and reject a bad value with the file's own message.

use std::path::PathBuf;

use acclab_core::config::{DroptailParams, QueueConfig, RenoParams, SchemeConfig};
use acclab_core::link::LossModel;
use acclab_core::{Duration, Limit, Rate};
use acclab_scenario::{
    load, load_spec, parse, parse_spec, EventSpecAction, LinkDelay, LinkRate, Scenario,
    ScenarioBuilder, ScenarioSpec,
};

fn scenario_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    for dir in ["examples", "repro"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 40, "scenario files: {}", files.len());
    files
}

#[test]
fn toml_to_model_to_toml_round_trips_for_every_scenario_file() {
    for path in scenario_files() {
        let scenario = load(&path).unwrap();
        let def = load_spec(&path).unwrap();
        let text = def.to_toml();
        let again = parse_spec(&text, "written").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again, def, "{}", path.display());
        assert_eq!(again.to_toml(), text, "{}", path.display());
        assert_eq!(
            parse(&text, "written").unwrap(),
            scenario,
            "{}",
            path.display()
        );
    }
}

/// The builder calls that make `def`, written as a user would write them.
fn rebuild(def: &ScenarioSpec) -> ScenarioBuilder {
    let mut b = Scenario::builder(&def.name, def.duration);
    if let Some(s) = def.seed {
        b = b.seed(s);
    }
    if let Some(s) = def.defaults.packet_size {
        b = b.packet_size(s);
    }
    if let Some(s) = def.defaults.ack_size {
        b = b.ack_size(s);
    }
    if let Some(q) = &def.defaults.queue {
        b = b.default_queue(q.clone());
    }
    for l in &def.links {
        let rate = match &l.rate {
            LinkRate::Fixed(r) => *r,
            LinkRate::Trace { .. } => Rate(1), // replaced by the trace below
        };
        let delay = match &l.delay {
            LinkDelay::Fixed(d) => *d,
            LinkDelay::Trace { .. } => Duration::ZERO, // replaced by the trace below
        };
        b = b.link(&l.from, &l.to, rate, delay).queue(l.queue.clone());
        if let LinkRate::Trace { trace } = &l.rate {
            b = b.capacity_trace(trace);
        }
        if let LinkDelay::Trace { trace } = &l.delay {
            b = b.delay_trace(trace);
        }
        match l.loss {
            LossModel::Bernoulli(p) if p > 0.0 => b = b.loss(p),
            LossModel::Bernoulli(_) => {}
            m => b = b.loss_model(m),
        }
        if let Some(j) = l.jitter {
            b = b.jitter(j);
        }
    }
    for s in &def.shared_buffers {
        let nodes: Vec<&str> = s.nodes.iter().map(String::as_str).collect();
        b = b.shared_buffer(&nodes, s.params.size, s.params.alpha);
    }
    for f in &def.flows {
        b = b.flow(&f.id, f.scheme.clone()).from(&f.from).to(&f.to);
        if let Some(t) = f.start {
            b = b.start(t);
        }
        if let Some(t) = f.start_jitter {
            b = b.start_jitter(t);
        }
        if let Some(t) = f.stop {
            b = b.stop(t);
        }
        if let Some(c) = &f.class {
            b = b.class(c);
        }
        if let Some(p) = &f.path {
            b = b.path(&p.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
    for e in &def.events {
        b = match &e.action {
            EventSpecAction::SetDelay { link, delay } => b.set_delay(e.at, link, *delay),
            EventSpecAction::SetRate { link, rate } => b.set_rate(e.at, link, *rate),
        };
    }
    if !def.routing.ecmp.is_none() {
        b = b.ecmp(def.routing.ecmp);
    }
    for w in &def.workloads {
        b = b.workload(w.clone());
    }
    if let Some(edges) = &def.output.fct_buckets {
        b = b.fct_buckets(edges);
    }
    if let Some([from, to]) = def.output.window {
        b = b.window(from, to);
    }
    if let Some(s) = def.output.sample_interval {
        b = b.sample_interval(s);
    }
    b
}

#[test]
fn the_builder_and_the_file_make_equal_models_for_every_scenario_file() {
    for path in scenario_files() {
        let def = load_spec(&path).unwrap();
        let built = rebuild(&def);
        assert_eq!(built.clone().into_def().unwrap(), def, "{}", path.display());
        assert_eq!(
            built.build().unwrap(),
            load(&path).unwrap(),
            "{}",
            path.display()
        );
    }
}

const DUMBBELL: &str = r#"
name = "dumbbell"
duration = "60s"

[[link]]
between = ["s{i}", "r1"]
count = 2
rate = "1Gbps"
delay = "1ms"

[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "200pkt" }

[[link]]
between = ["r2", "d{i}"]
count = 2
rate = "1Gbps"
delay = "1ms"

[[flow]]
id = "f{i}"
count = 2
kind = "reno"
from = "s{i}"
to = "d{i}"
start = "1s"
"#;

fn dumbbell_by_hand() -> ScenarioBuilder {
    let ms = Duration::from_millis;
    let mut b = Scenario::builder("dumbbell", Duration::from_secs(60));
    for i in 0..2 {
        b = b.duplex(&format!("s{i}"), "r1", Rate::from_mbps(1000), ms(1));
    }
    b = b
        .duplex("r1", "r2", Rate::from_mbps(100), ms(10))
        .queue(QueueConfig::Droptail(DroptailParams {
            limit: Limit::Packets(200),
            priority: false,
        }));
    for i in 0..2 {
        b = b.duplex("r2", &format!("d{i}"), Rate::from_mbps(1000), ms(1));
    }
    for i in 0..2 {
        b = b
            .flow(&format!("f{i}"), SchemeConfig::Reno(RenoParams::default()))
            .from(&format!("s{i}"))
            .to(&format!("d{i}"))
            .start(Duration::from_secs(1));
    }
    b
}

#[test]
fn a_dumbbell_written_by_hand_equals_its_file() {
    assert_eq!(
        dumbbell_by_hand().build().unwrap(),
        parse(DUMBBELL, "d.toml").unwrap()
    );
}

#[test]
fn builder_errors_name_the_key_path_of_a_patch() {
    let e = dumbbell_by_hand()
        .flow("f9", SchemeConfig::Reno(RenoParams::default()))
        .from("s0")
        .to("nowhere")
        .build()
        .unwrap_err();
    assert_eq!(e.key, "flow.f9.to", "{e}");
    assert!(e.message.contains("unknown node \"nowhere\""), "{e}");
    let e = dumbbell_by_hand()
        .link("r1", "r2", Rate::from_mbps(1), Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(e.key, "link.\"r1->r2\".to", "{e}");
    assert!(e.message.contains("declared twice"), "{e}");
    let e = Scenario::builder("x", Duration::from_secs(1))
        .from("a")
        .build()
        .unwrap_err();
    assert!(e.message.contains("before any flow"), "{e}");
}

#[test]
fn patches_change_what_they_name() {
    let mut def = parse_spec(DUMBBELL, "d.toml").unwrap();
    def.set_str("link.\"r1->r2\".rate", "50Mbps").unwrap();
    def.set_str("link.\"r1->r2\".queue.limit", "\"90pkt\"")
        .unwrap();
    def.set_str("flow.f1.start", "2s").unwrap();
    def.set_str("flow.f0.params.initial_window", "4").unwrap();
    def.set_str("output.window", "[\"10s\", \"60s\"]").unwrap();
    def.set_str("seed", "7").unwrap();
    let sc = def.build().unwrap();
    let bottleneck = sc.links.iter().find(|l| l.name == "r1->r2").unwrap();
    assert_eq!(bottleneck.rate, Rate::from_mbps(50));
    assert_eq!(bottleneck.queue.params().limits(), [Limit::Packets(90)]);
    let back = sc.links.iter().find(|l| l.name == "r2->r1").unwrap();
    assert_eq!(back.rate, Rate::from_mbps(100), "only the named direction");
    assert_eq!(sc.flows.get(1).start.0, 2_000_000_000);
    assert_eq!(sc.flows.get(0).start.0, 1_000_000_000);
    match &sc.flows.get(0).scheme {
        SchemeConfig::Reno(p) => assert_eq!(p.initial_window, 4),
        s => panic!("{s:?}"),
    }
    assert_eq!(sc.output.window.0 .0, 10_000_000_000);
    assert_eq!(sc.seed, 7);
    // A whole table at once.
    def.set_str(
        "link.\"r1->r2\".queue",
        "{ kind = \"priority\", limit = \"90pkt\" }",
    )
    .unwrap();
    assert!(matches!(
        def.build()
            .unwrap()
            .links
            .iter()
            .find(|l| l.name == "r1->r2")
            .unwrap()
            .queue,
        QueueConfig::Priority(_)
    ));
}

#[test]
fn a_kind_patch_carries_what_was_chosen_not_what_was_defaulted() {
    let mut def = parse_spec(DUMBBELL, "d.toml").unwrap();
    let queue = |def: &ScenarioSpec| {
        let sc = def.build().unwrap();
        sc.links
            .iter()
            .find(|l| l.name == "r1->r2")
            .unwrap()
            .queue
            .clone()
    };
    let bottleneck = "link.\"r1->r2\".queue";
    for kind in ["avq", "droptail", "priority", "avq", "droptail"] {
        def.set_str(&format!("{bottleneck}.kind"), kind)
            .unwrap_or_else(|e| panic!("to {kind}: {e}"));
        let q = queue(&def);
        assert_eq!(q.kind(), kind);
        assert_eq!(
            q.params().limits()[0],
            Limit::Packets(200),
            "{kind} keeps the limit"
        );
    }
    // A kind that needs more says what.
    let e = def
        .set_str(&format!("{bottleneck}.kind"), "red")
        .unwrap_err();
    assert_eq!(e.key, format!("{bottleneck}.min_th"), "{e}");
    // A parameter chosen away from its default stays, and a kind that has no such parameter
    // says so.
    def.set_str(&format!("{bottleneck}.kind"), "avq").unwrap();
    def.set_str(&format!("{bottleneck}.target_utilization"), "0.9")
        .unwrap();
    let e = def
        .set_str(&format!("{bottleneck}.kind"), "droptail")
        .unwrap_err();
    assert!(e.message.contains("target_utilization"), "{e}");
    for kind in ["vegas", "monaco", "reno"] {
        def.set_str("flow.f0.kind", kind).unwrap();
        assert_eq!(def.build().unwrap().flows.get(0).scheme.kind(), kind);
    }
}

#[test]
fn a_rejected_patch_leaves_the_scenario_as_it_was() {
    let mut def = parse_spec(DUMBBELL, "d.toml").unwrap();
    let before = def.clone();
    for (key, value) in [
        ("flow.f0.params.initial_window", "-3"),
        ("flow.f0.stop", "500ms"),
        ("flow.nope.start", "1s"),
        ("link.\"r1->r9\".rate", "1Mbps"),
        ("link.\"r1->r2\".rate", "10"),
        ("link.\"r1->r2\".queue.kind", "nonsense"),
        ("duration", "0s"),
        ("durration", "1s"),
        ("event[0].at", "1s"),
        ("flow.f0", "1"),
    ] {
        let e = def.set_str(key, value).unwrap_err();
        assert!(!e.message.is_empty(), "{key}");
        assert_eq!(def, before, "{key} = {value} changed the scenario: {e}");
    }
}

/// Every leaf key of `t`, as (key path in the file's index form, value).
fn leaves(prefix: &str, v: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = match prefix {
                    "" => k.clone(),
                    p => format!("{p}.{k}"),
                };
                leaves(&key, v, out);
            }
        }
        toml::Value::Array(a) if a.iter().all(|x| x.is_table()) && !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                leaves(&format!("{prefix}[{i}]"), v, out);
            }
        }
        v => out.push((prefix.to_string(), v.clone())),
    }
}

/// Sets `key` (index form) in `t`.
fn set_in(t: &mut toml::Value, key: &str, value: toml::Value) {
    let mut at = t;
    for seg in acclab_scenario::spec::key_segments(key) {
        at = match at {
            toml::Value::Array(a) => &mut a[seg.parse::<usize>().unwrap()],
            toml::Value::Table(t) => t.get_mut(&seg).unwrap(),
            _ => unreachable!(),
        };
    }
    *at = value;
}

#[test]
fn every_patchable_key_rejects_a_bad_value_with_the_files_message() {
    let mut checked = 0;
    for path in scenario_files() {
        let def = load_spec(&path).unwrap();
        // Every patch re-reads the whole scenario: small ones keep this test quick.
        if def.links.len() + def.flows.len() > 40 {
            continue;
        }
        let table = toml::Value::Table(toml::Table::try_from(&def).unwrap());
        let mut keys = Vec::new();
        leaves("", &table, &mut keys);
        for (key, value) in keys {
            // A value of the wrong type for every key: a string where it was not, a table
            // where it was.
            let bad = match value {
                toml::Value::String(_) => toml::Value::Table(Default::default()),
                _ => toml::Value::String("bogus".into()),
            };
            let mut edited = table.clone();
            set_in(&mut edited, &key, bad.clone());
            let text = toml::to_string(&edited).unwrap();
            let from_file = match parse(&text, "f.toml") {
                Ok(_) => continue, // e.g. a name may be anything
                Err(e) => e,
            };
            // The same key, as a patch names it.
            let named = patch_key(&def, &key);
            let mut patched = def.clone();
            let from_patch = patched
                .set(&named, bad)
                .expect_err(&format!("{}: {named} accepted", path.display()));
            assert_eq!(from_patch.message, from_file.message, "{named} vs {key}");
            assert!(
                from_patch.key.starts_with(&named) || named.starts_with(&from_patch.key),
                "patch {named} reported at {}; the file at {}",
                from_patch.key,
                from_file.key
            );
            assert!(from_file.line.is_some(), "{from_file}");
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} keys checked");
}

/// `flow[3].params.x` → `flow.<id>.params.x`, `link[2].rate` → `link."a->b".rate`.
fn patch_key(def: &ScenarioSpec, key: &str) -> String {
    use acclab_scenario::spec::quote_key;
    let segs = acclab_scenario::spec::key_segments(key);
    let head = match segs.first().map(String::as_str) {
        Some(kind @ ("flow" | "link")) => format!("{kind}[{}]", segs[1]),
        _ => return key.to_string(),
    };
    let i: usize = segs[1].parse().unwrap();
    let name = match segs[0].as_str() {
        "flow" => def.flows[i].id.clone(),
        _ => def.links[i].name(),
    };
    format!("{}.{}{}", segs[0], quote_key(&name), &key[head.len()..])
}
