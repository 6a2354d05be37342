//! `acclab sweep` end to end (issue 22's tests): the table equals the runs made one by one,
//! an interrupted sweep does only its missing runs, a Slurm-style `--only K` + `--collect`
//! equals the one-shot sweep.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{acclab, ok, text};

/// Two Reno flows with jittered starts over a lossy bottleneck, so seeds differ.
fn scenario(dir: &Path, duration: &str) -> String {
    let src = format!(
        r#"
name = "sw"
duration = "{duration}"
seed = 7

[[link]]
between = ["s", "r"]
rate = "100Mbps"
delay = "1ms"

[[link]]
between = ["r", "d"]
rate = "20Mbps"
delay = "10ms"
loss = 0.0005
queue = {{ kind = "droptail", limit = "50pkt" }}

[[flow]]
id = "a"
kind = "reno"
from = "s"
to = "d"
start_jitter = "200ms"

[[flow]]
id = "b"
kind = "reno"
from = "s"
to = "d"
start_jitter = "200ms"
"#
    );
    let p = dir.join("sw.toml");
    std::fs::write(&p, src).unwrap();
    p.display().to_string()
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    r.records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect()
}

#[test]
fn the_table_equals_the_runs_made_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "2s");
    let key = "link.\"r->d\".rate";
    ok(
        tmp.path(),
        &[
            "sweep",
            &sc,
            "--set",
            &format!("{key}=10Mbps,20Mbps"),
            "--seeds",
            "2",
            "--out",
            "s",
            "--quiet",
        ],
    );
    let rows = csv_rows(&tmp.path().join("s/runs.csv"));
    let header = &rows[0];
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let metrics_from = col("kind") + 1;
    let mut compared = 0;
    for (rate, seed) in [
        ("10Mbps", "7"),
        ("10Mbps", "8"),
        ("20Mbps", "7"),
        ("20Mbps", "8"),
    ] {
        let out = format!("one-{rate}-{seed}");
        ok(
            tmp.path(),
            &[
                "run",
                &sc,
                "--set",
                &format!("{key}={rate}"),
                "--seed",
                seed,
                "--out",
                &out,
                "--quiet",
            ],
        );
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        for row in rows[1..]
            .iter()
            .filter(|r| r[col(key)] == rate && r[col("seed")] == seed)
        {
            let entity = match row[col("entity")].as_str() {
                "run" => summary.clone(),
                kind => summary[format!("{kind}s")]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["id"] == row[col("id")].as_str())
                    .unwrap()
                    .clone(),
            };
            for (i, name) in header.iter().enumerate().skip(metrics_from) {
                // summary.json nests theory, fairness and the delays; the table joins them
                // with `_`.
                let value = ["theory", "fairness", "one_way_delay", "queueing_delay"]
                    .iter()
                    .find_map(|head| {
                        let rest = name.strip_prefix(head)?.strip_prefix('_')?;
                        entity[*head].is_object().then(|| &entity[*head][rest])
                    })
                    .unwrap_or(&entity[name.as_str()]);
                let expected = match value {
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                assert_eq!(
                    row[i],
                    expected,
                    "{rate} seed {seed} {} {name}",
                    row[col("id")]
                );
                compared += usize::from(!expected.is_empty());
            }
        }
    }
    assert!(compared > 100, "only {compared} values compared");
    // Seeds differ (the start jitter and the losses are random) …
    let thr = col("throughput_bps");
    let flow_a: Vec<&String> = rows[1..]
        .iter()
        .filter(|r| r[col("id")] == "a")
        .map(|r| &r[thr])
        .collect();
    assert_eq!(flow_a.len(), 4);
    assert_ne!(flow_a[0], flow_a[1]);
    // … and the aggregate holds their mean and standard deviation; no interval from two
    // seeds (issue 54 §2), which the note says.
    let agg = csv_rows(&tmp.path().join("s/aggregate.csv"));
    let h = &agg[0];
    let a = |name: &str| h.iter().position(|x| x == name).unwrap();
    let row = agg
        .iter()
        .find(|r| r[a("id")] == "a" && r[a("metric")] == "throughput_bps" && r[a(key)] == "10Mbps")
        .unwrap();
    let x: Vec<f64> = flow_a[..2].iter().map(|v| v.parse().unwrap()).collect();
    assert_eq!(row[a("n")], "2");
    assert_eq!(row[a("mean")].parse::<f64>().unwrap(), (x[0] + x[1]) / 2.0);
    let std: f64 = row[a("std")].parse().unwrap();
    assert!(
        (std - (x[0] - x[1]).abs() / 2f64.sqrt()).abs() < 1e-6 * std,
        "{std} {x:?}"
    );
    assert_eq!(
        (row[a("ci95_low")].as_str(), row[a("ci95_high")].as_str()),
        ("", "")
    );
    assert!(row[a("note")].contains("fewer than 3"), "{row:?}");
    assert!(tmp
        .path()
        .join("s/throughput_bps-vs-r-_d.rate.png")
        .is_file());
}

#[test]
fn an_interrupted_sweep_does_only_its_missing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "40s");
    let args = |out: &str| -> Vec<String> {
        [
            "sweep",
            &sc,
            "--set",
            "flow.a.params.initial_window=1..4/4",
            "--seeds",
            "4",
            "--jobs",
            "1",
            "--quiet",
            "--out",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_acclab"))
        .args(args("s"))
        .current_dir(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = tmp.path().join("s/runs");
    let records = || -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(&runs)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                    .map(|n| {
                        let bytes = std::fs::read(runs.join(&n)).unwrap();
                        (n, bytes)
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let t0 = std::time::Instant::now();
    while records().len() < 3 {
        assert!(t0.elapsed().as_secs() < 120, "no run finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records();
    assert!(before.len() < 16, "the sweep ended before it was killed");
    assert!(!tmp.path().join("s/runs.csv").exists());
    let args_s = args("s");
    let a: Vec<&str> = args_s.iter().map(String::as_str).collect();
    let mut rerun = a.clone();
    rerun.retain(|x| *x != "--quiet");
    let said = ok(tmp.path(), &rerun);
    assert!(
        said.contains(&format!("{} to run", 16 - before.len()))
            && said.contains(&format!("({} finished before", before.len())),
        "{said}"
    );
    // The records made before the kill were not redone: their wall times are still theirs.
    let after = records();
    assert_eq!(after.len(), 16);
    for (name, bytes) in &before {
        assert_eq!(
            &after.iter().find(|(n, _)| n == name).unwrap().1,
            bytes,
            "{name}"
        );
    }
    // The table is the one-shot sweep's.
    let args_f = args("fresh");
    ok(
        tmp.path(),
        &args_f.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for f in ["runs.csv", "aggregate.csv"] {
        assert_eq!(
            std::fs::read(tmp.path().join("s").join(f)).unwrap(),
            std::fs::read(tmp.path().join("fresh").join(f)).unwrap(),
            "{f}"
        );
    }
    // A third run does nothing.
    let said = ok(tmp.path(), &rerun);
    assert!(said.contains("0 to run"), "{said}");
}

#[test]
fn only_each_run_then_collect_equals_the_one_shot_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "1s");
    let base = [
        "sweep",
        sc.as_str(),
        "--set",
        "flow.a.params.initial_window=2,10",
        "--set",
        "flow.b.params.initial_window=2,10",
        "--zip",
        "flow.a.params.initial_window,flow.b.params.initial_window",
        "--set",
        "link.\"r->d\".queue.kind=droptail,codel",
        "--seeds",
        "3",
        "--quiet",
    ];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        base.iter().chain(extra).copied().collect()
    }
    let listed = ok(tmp.path(), &with(&base, &["--list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2 * 2 * 3, "{listed}");
    assert!(
        lines[0].starts_with("0\t") && lines[0].contains("seed=7"),
        "{listed}"
    );
    assert!(
        !tmp.path().join("results").exists(),
        "--list wrote something"
    );
    // Collecting before every run is done says which are missing.
    ok(tmp.path(), &with(&base, &["--out", "arr", "--only", "0"]));
    let o = acclab(tmp.path(), &with(&base, &["--out", "arr", "--collect"]));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("11 of 12 runs are not finished"));
    for k in 1..lines.len() {
        ok(
            tmp.path(),
            &with(&base, &["--out", "arr", "--only", &k.to_string()]),
        );
    }
    ok(tmp.path(), &with(&base, &["--out", "arr", "--collect"]));
    ok(tmp.path(), &with(&base, &["--out", "one"]));
    for f in ["runs.csv", "aggregate.csv", "sweep.json"] {
        assert_eq!(
            std::fs::read(tmp.path().join("arr").join(f)).unwrap(),
            std::fs::read(tmp.path().join("one").join(f)).unwrap(),
            "{f}"
        );
    }
    // Another sweep into the same directory is refused: its tables are not this one's.
    let o = acclab(
        tmp.path(),
        &[&base[..4], &["--seeds", "1", "--out", "one"]].concat(),
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds another sweep"));
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "1s");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--set", "flow.a.params.initial_window=4,0"],
            "sweep point 1 (flow.a.params.initial_window = 0)",
        ),
        (&["--set", "flow.zz.start=1s"], "no flow \"zz\""),
        (&["--set", "link.\"r->d\".rate=1Mbps..5Mbps"], "A..B/N"),
        (&["--set", "seed=1,2"], "--seeds"),
        (
            &["--set", "duration=1s,2s", "--zip", "duration,output.window"],
            "not swept",
        ),
    ];
    for (extra, says) in cases {
        let args: Vec<&str> = ["sweep", sc.as_str(), "--out", "x"]
            .iter()
            .chain(extra)
            .copied()
            .collect();
        let o = acclab(tmp.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(says),
            "{extra:?}: {err}"
        );
        assert!(
            !tmp.path().join("x").exists(),
            "{extra:?} wrote its directory"
        );
    }
}

#[test]
fn a_sweep_table_in_the_file_and_keep_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "1s");
    let mut text = std::fs::read_to_string(&sc).unwrap();
    text.push_str(
        "\n[sweep]\nseeds = [1, 2]\nmetrics = [\"throughput_bps\"]\n[sweep.set]\n'link.\"r->d\".rate' = \"10Mbps..20Mbps/2\"\n",
    );
    std::fs::write(&sc, text).unwrap();
    let said = ok(tmp.path(), &["check", &sc]);
    assert!(said.contains("2 points × 2 seeds = 4 runs"), "{said}");
    let said = ok(tmp.path(), &["run", &sc, "--out", "plain"]);
    assert!(said.contains("has a [sweep] table"), "{said}");
    ok(tmp.path(), &["sweep", &sc, "--keep-runs", "--quiet"]);
    let dir = tmp.path().join("results/sweeps/sw");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(plan["seeds"], serde_json::json!([1, 2]));
    for r in plan["runs"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        for f in ["summary.json", "flows.csv", "links.csv"] {
            assert!(dir.join("runs").join(id).join(f).is_file(), "{id}/{f}");
        }
    }
    assert!(dir.join("throughput_bps-vs-r-_d.rate.svg").is_file());
    assert!(!dir.join("mean_queue_pkts-vs-r-_d.rate.svg").exists());
}

/// A fabric workload swept over load and scheme (issue 51 §3): the tables hold an `fct` entity
/// per size bucket and for all flows, the slowdown is charted against the load with a line per
/// bucket and scheme, and a patch of the workload's `kind` carries only the parameters chosen
/// (DCTCP's defaulted `g` is no key of CUBIC's).
#[test]
fn a_sweep_over_load_and_scheme_charts_slowdown_by_size() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = tmp.path().join("ft.toml");
    std::fs::write(
        &sc,
        r#"name = "ft"
duration = "20ms"
[routing]
ecmp = "flow"
[topology]
kind = "fat-tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
queue = { kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }
[[workload]]
id = "ws"
kind = "dctcp"
params = { initial_window = 10, min_rto = "1ms" }
sizes = "websearch"
load = 0.3
stop = "10ms"
[sweep]
metrics = ["slowdown_p99"]
[sweep.set]
"workload[0].load" = [0.2, 0.5]
"workload[0].kind" = ["dctcp", "cubic"]
"#,
    )
    .unwrap();
    ok(tmp.path(), &["sweep", "ft.toml", "--out", "out", "--quiet"]);
    let dir = tmp.path().join("out");
    let rows = csv_rows(&dir.join("aggregate.csv"));
    let head = &rows[0];
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let fct: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("entity")] == "fct" && r[col("metric")] == "slowdown_p99")
        .collect();
    // 2 loads × 2 schemes × (4 buckets + all).
    assert_eq!(fct.len(), 20, "{fct:?}");
    assert!(fct.iter().any(|r| r[col("id")] == "all"));
    assert!(dir.join("slowdown_p99-vs-0.load.svg").is_file());
}

#[test]
fn a_run_keeps_its_effective_scenario_which_repeats_it_byte_for_byte() {
    // Issue 54 §1: scenario.toml (patched, seeded, paths absolute) and provenance.json beside
    // the results, summary.json pointing to them; running scenario.toml again gives the same
    // files.
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "2s");
    let first = tmp.path().join("first");
    ok(
        tmp.path(),
        &[
            "run",
            &sc,
            "--set",
            "link.\"r->d\".rate=15Mbps",
            "--seed",
            "11",
            "--out",
            first.to_str().unwrap(),
            "--quiet",
        ],
    );
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("provenance.json")).unwrap())
            .unwrap();
    assert_eq!(rec["seed"], 11);
    assert_eq!(rec["set"][0], "link.\"r->d\".rate=15Mbps");
    assert!(rec["command"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--seed"));
    assert!(rec["acclab"]["commit"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));
    assert!(rec["machine"]["cpus"].as_u64().unwrap() >= 1);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["provenance"]["scenario"], "scenario.toml");
    assert_eq!(summary["provenance"]["record"], "provenance.json");
    let effective = std::fs::read_to_string(first.join("scenario.toml")).unwrap();
    assert!(
        effective.contains("seed = 11") && effective.contains("15Mbps"),
        "{effective}"
    );
    // Fed back from another directory, it gives the same run.
    let again = tmp.path().join("again");
    let elsewhere = tempfile::tempdir().unwrap();
    ok(
        elsewhere.path(),
        &[
            "run",
            first.join("scenario.toml").to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
            "--quiet",
        ],
    );
    for f in ["flows.csv", "links.csv"] {
        assert_eq!(
            std::fs::read(first.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
    let no_wall = |p: &Path| -> String {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.contains("wall_time_s"))
            .collect()
    };
    assert_eq!(
        no_wall(&first.join("summary.json")),
        no_wall(&again.join("summary.json"))
    );
}

#[test]
fn a_sweep_made_by_another_acclab_is_not_resumed_silently() {
    // Issue 54 §1: run ids name the acclab build, sweep.json and every record say which build
    // made them, and a sweep directory planned by another build is refused, saying so.
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "1s");
    let out = tmp.path().join("sw");
    let args = [
        "sweep",
        &sc,
        "--set",
        "link.\"r->d\".rate=10Mbps,20Mbps",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    ok(tmp.path(), &args);
    let plan_path = out.join("sweep.json");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    let build = plan["acclab"].as_str().unwrap().to_string();
    assert!(out.join("scenario.toml").is_file() && out.join("provenance.json").is_file());
    let id = plan["runs"][0]["id"].as_str().unwrap();
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("runs").join(format!("{id}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(record["acclab"], build.as_str());
    // The same sweep again resumes (nothing to do).
    ok(tmp.path(), &args);
    // As if an older acclab had planned it.
    let old = std::fs::read_to_string(&plan_path)
        .unwrap()
        .replace(&build, "0.0.1+old");
    std::fs::write(&plan_path, old).unwrap();
    let o = acclab(tmp.path(), &args);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("acclab 0.0.1+old") && said.contains(&build) && said.contains("--force"),
        "{said}"
    );
}

#[test]
fn identical_replicates_get_no_interval_and_are_said() {
    // Issue 54 §2: a scenario in which the seed draws nothing gives the same run for every
    // seed; a zero-width interval would claim certainty no replicate tested.
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(scenario(tmp.path(), "1s"))
        .unwrap()
        .replace("loss = 0.0005\n", "")
        .replace("start_jitter = \"200ms\"\n", "");
    let p = tmp.path().join("fixed.toml");
    std::fs::write(&p, src).unwrap();
    let out = ok(
        tmp.path(),
        &[
            "sweep",
            p.to_str().unwrap(),
            "--set",
            "link.\"r->d\".rate=10Mbps,20Mbps",
            "--seeds",
            "3",
            "--out",
            tmp.path().join("s").to_str().unwrap(),
        ],
    );
    assert!(
        out.contains("identical replicates") && out.contains("no interval is given"),
        "{out}"
    );
    let agg = csv_rows(&tmp.path().join("s/aggregate.csv"));
    let h = &agg[0];
    let a = |name: &str| h.iter().position(|x| x == name).unwrap();
    let rows: Vec<_> = agg[1..]
        .iter()
        .filter(|r| r[a("metric")] == "throughput_bps" && r[a("entity")] == "flow")
        .collect();
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(
            (r[a("std")].as_str(), r[a("ci95_low")].as_str()),
            ("0", ""),
            "{r:?}"
        );
        assert_eq!(r[a("note")], "identical replicates");
    }
}

/// Each run of a sweep on 2 threads (the parallel engine: the bottleneck between two routers
/// is cut, each router with its host a partition) gives the same table as on one.
#[test]
fn a_sweep_with_threads_per_run_gives_the_same_table() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path(), "1s");
    let changed = std::fs::read_to_string(&sc)
        .unwrap()
        .replacen("between = [\"r\", \"d\"]", "between = [\"r\", \"r2\"]", 1)
        .replacen(
            "[[flow]]",
            "[[link]]\nbetween = [\"r2\", \"d\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\n\n[[flow]]",
            1,
        );
    let two_routers = tmp.path().join("sw2.toml");
    std::fs::write(&two_routers, changed).unwrap();
    let sc = two_routers.display().to_string();
    // It runs in parallel (no note that it was serial).
    let said = ok(
        tmp.path(),
        &["run", &sc, "--threads", "2", "--out", "r", "--quiet"],
    );
    assert!(!said.contains("serial"), "{said}");
    let key = "link.\"r->r2\".rate";
    let rate = format!("{key}=10Mbps,20Mbps");
    for (out, threads) in [("one", "1"), ("two", "2")] {
        ok(
            tmp.path(),
            &[
                "sweep",
                &sc,
                "--set",
                &rate,
                "--out",
                out,
                "--threads",
                threads,
                "--jobs",
                "1",
                "--quiet",
            ],
        );
    }
    let (one, two) = (
        csv_rows(&tmp.path().join("one/runs.csv")),
        csv_rows(&tmp.path().join("two/runs.csv")),
    );
    let wall = one[0].iter().position(|h| h.contains("wall"));
    let strip = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
        rows.into_iter()
            .map(|mut r| {
                if let Some(w) = wall {
                    r.remove(w);
                }
                r
            })
            .collect()
    };
    assert!(one.len() > 2, "{one:?}");
    assert_eq!(strip(one), strip(two));
    // A thread count outside 1–256 (or `auto`) is refused before anything runs.
    let bad = acclab(
        tmp.path(),
        &["sweep", &sc, "--set", &rate, "--threads", "0"],
    );
    let said = text(&bad);
    assert!(
        !bad.status.success() && said.contains("`auto` or a thread count from 1 to 256"),
        "{said}"
    );
}
