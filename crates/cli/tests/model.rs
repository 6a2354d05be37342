//! `acclab model` and `acclab run --model` end to end: the model tier's files have the
//! simulator's names and columns, its values sit beside the measured ones, and a scenario
//! outside its domain is refused naming what is outside.

mod common;
use common::{acclab, text};

use std::path::Path;

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/examples")
        .join(name)
        .display()
        .to_string()
}

fn header(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn model_writes_the_simulators_files_and_run_puts_it_beside() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = example("live-dumbbell.toml");
    let o = acclab(tmp.path(), &["model", &sc, "--out", "m", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = acclab(
        tmp.path(),
        &["run", &sc, "--out", "r", "--model", "--plots", "-q"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let (m, r) = (tmp.path().join("m"), tmp.path().join("r"));
    for f in ["flows.csv", "links.csv"] {
        assert_eq!(header(&m.join(f)), header(&r.join(f)), "{f}");
        // The model run beside the packet run is the same as one on its own.
        assert_eq!(
            std::fs::read(m.join(f)).unwrap(),
            std::fs::read(r.join("model").join(f)).unwrap()
        );
    }
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.join("summary.json")).unwrap()).unwrap();
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.join("summary.json")).unwrap()).unwrap();
    assert_eq!(model["mode"], "model");
    for i in 0..2 {
        let beside = &run["flows"][i]["model"]["throughput_bps"];
        assert_eq!(beside, &model["flows"][i]["throughput_bps"]);
        // Monaco at weights 1 and 2 over 10 Mb/s: the model sits at the theory's 3.33/6.67.
        let x = beside.as_f64().unwrap();
        let p = run["flows"][i]["theory"]["throughput_bps"]
            .as_f64()
            .unwrap();
        assert!((x - p).abs() < 0.005 * p, "{x} vs {p}");
    }
    assert!(run["links"][0]["model"]["mean_queue_pkts"].is_number());
    assert!(r.join("throughput.png").exists());
}

#[test]
fn a_scenario_outside_the_model_is_refused_naming_why() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(
        tmp.path(),
        &["model", &example("modern-mix.toml"), "--out", "m"],
    );
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("flow cubic: cubic has no fluid law"), "{t}");
    assert!(!tmp.path().join("m").exists(), "nothing is claimed");
    // Beside a run it is a note, and the run goes on.
    let o = acclab(
        tmp.path(),
        &[
            "run",
            &example("modern-mix.toml"),
            "--out",
            "r",
            "--model",
            "-q",
            "--set",
            "duration=5s",
            "--set",
            "output.window=[\"1s\", \"5s\"]",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("no model run"), "{}", text(&o));
    assert!(!tmp.path().join("r/model").exists());
    let o = acclab(
        tmp.path(),
        &["model", &example("live-dumbbell.toml"), "--step", "0s"],
    );
    assert!(
        !o.status.success() && text(&o).contains("--step"),
        "{}",
        text(&o)
    );
}

#[test]
fn theory_gives_the_models_fixed_point_where_num_has_none() {
    let tmp = tempfile::tempdir().unwrap();
    // Reno flows on a parking lot: outside NUM, inside the model.
    let o = acclab(tmp.path(), &["theory", &example("parking-lot.toml")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Beyond the NUM theory"), "{}", text(&o));
    let o = acclab(
        tmp.path(),
        &["theory", &example("parking-lot.toml"), "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fp = &v["model_fixed_point"];
    assert_eq!(fp["settled"], true);
    let x: Vec<f64> = fp["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["throughput_bps"].as_f64().unwrap())
        .collect();
    // Two 9 Mb/s links, full: the long flow and each short one fill them.
    assert_eq!(x.len(), 3);
    assert!((x[0] + x[1] - 9e6).abs() < 0.01 * 9e6, "{x:?}");
    assert!(
        x[1] > x[0],
        "the short flow gets more than the long one: {x:?}"
    );
    // A scenario the NUM theory covers whole gets no fixed point.
    let o = acclab(
        tmp.path(),
        &["theory", &example("live-dumbbell.toml"), "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("model_fixed_point").is_none());
}

#[test]
fn theory_gives_the_acc_loops_stability_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    // Monaco at weights 1 and 2 over one bottleneck: κ_max ≈ 0.80 (stability.rs), so the
    // default κ = 0.5 is stable with a margin of about 1.6.
    let o = acclab(
        tmp.path(),
        &["theory", &example("live-dumbbell.toml"), "--json"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let st = &v["acc_stability"];
    let k = st["kappa_max"].as_f64().unwrap();
    assert!((0.7..0.9).contains(&k), "{st}");
    assert_eq!(st["stable"], true);
    assert_eq!(st["bottlenecks"][0], "r1->r2");
    let o = acclab(tmp.path(), &["theory", &example("live-dumbbell.toml")]);
    assert!(text(&o).contains("stable for kappa < 0.7"), "{}", text(&o));
    // Reno flows only: no ACC loop, no analysis.
    let o = acclab(
        tmp.path(),
        &["theory", &example("parking-lot.toml"), "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("acc_stability").is_none(), "{v}");
}

#[test]
fn model_takes_a_grouping_and_an_acc_law() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let o = acclab(
        tmp.path(),
        &[
            "model",
            &example("live-dumbbell.toml"),
            "--grouping",
            "homogeneous",
            "--acc-law",
            "period",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    // Two flows of different weights: two classes whatever the grouping.
    assert!(text(&o).contains("2 flows as 2 classes"), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // Weights 1 and 2 over 10 Mb/s: 1/3 and 2/3 with the policy applied per period too.
    let x = v["flows"][0]["throughput_bps"].as_f64().unwrap();
    assert!((x - 10e6 / 3.0).abs() < 0.03 * 10e6 / 3.0, "{x}");
    let o = acclab(
        tmp.path(),
        &[
            "model",
            &example("live-dumbbell.toml"),
            "--acc-law",
            "sometimes",
        ],
    );
    assert!(
        !o.status.success() && text(&o).contains("rate, period"),
        "{}",
        text(&o)
    );
}
