//! The `acclab` command end to end.

mod common;

use std::path::Path;
use std::process::Command;

use common::{acclab, ok, text};

fn example(name: &str) -> String {
    format!(
        "{}/../../scenarios/examples/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn no_arguments_runs_the_demo_and_says_where_results_went() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(tmp.path(), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("Results in results/demo/"),
        "{}",
        text(&o)
    );
    for f in [
        "summary.json",
        "flows.csv",
        "links.csv",
        "throughput.png",
        "queue.svg",
    ] {
        assert!(
            tmp.path().join("results/demo").join(f).exists(),
            "missing {f}"
        );
    }
    // A second demo never overwrites the first.
    let o = acclab(tmp.path(), &[]);
    assert!(
        text(&o).contains("Results in results/demo-2/"),
        "{}",
        text(&o)
    );
}

#[test]
fn run_refuses_to_overwrite_results_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = example("parking-lot.toml");
    let o = acclab(tmp.path(), &["run", &sc, "--out", "out", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(tmp.path().join("out/summary.json")).unwrap();
    let o = acclab(tmp.path(), &["run", &sc, "--out", "out", "--seed", "5"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--force"), "{}", text(&o));
    assert_eq!(
        std::fs::read(tmp.path().join("out/summary.json")).unwrap(),
        before
    );
    let o = acclab(
        tmp.path(),
        &[
            "run", &sc, "--out", "out", "--seed", "5", "--force", "--plots",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["seed"], 5);
    assert!(
        std::fs::metadata(tmp.path().join("out/cwnd.png"))
            .unwrap()
            .len()
            > 1000
    );
}

/// The fabric example with `--plots` draws its completion-time figures and its queue
/// occupancy per kind of port; the parking lot (no fabric, no finite flows) draws neither.
#[test]
fn a_fabric_run_plots_its_slowdowns_and_queue_distribution() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(
        tmp.path(),
        &[
            "run",
            &example("fabric.toml"),
            "--out",
            "f",
            "--plots",
            "--quiet",
            "--set",
            "output.sample_interval=1ms",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    for f in [
        "queue-cdf.svg",
        "queue-cdf.png",
        "slowdown.svg",
        "fct-cdf.svg",
    ] {
        assert!(tmp.path().join("f").join(f).is_file(), "{f}");
    }
    let svg = std::fs::read_to_string(tmp.path().join("f/queue-cdf.svg")).unwrap();
    for kind in ["edge→host", "host→edge", "agg→core"] {
        assert!(svg.contains(kind), "{kind} missing from queue-cdf.svg");
    }
    let o = acclab(
        tmp.path(),
        &[
            "run",
            &example("parking-lot.toml"),
            "--out",
            "p",
            "--plots",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!tmp.path().join("p/queue-cdf.svg").exists());
    assert!(!tmp.path().join("p/slowdown.svg").exists());
}

#[test]
fn summary_has_the_contract_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(
        tmp.path(),
        &[
            "run",
            &example("cbr-reno-mix.toml"),
            "--out",
            "o",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("o/summary.json")).unwrap()).unwrap();
    for k in [
        "scenario",
        "seed",
        "sim_time_s",
        "wall_time_s",
        "events",
        "window",
        "flows",
        "links",
        "fairness",
    ] {
        assert!(s.get(k).is_some(), "summary.json lacks {k}");
    }
    assert!(s["window"]["from_s"].is_number() && s["window"]["to_s"].is_number());
    assert!(s["fairness"]["jain"].is_number());
    let f = &s["flows"][0];
    for k in [
        "id",
        "kind",
        "src",
        "dst",
        "throughput_bps",
        "sent_bytes",
        "delivered_bytes",
        "lost_packets",
        "mean_rtt_s",
        "mean_cwnd_bytes",
        "mean_accumulation_bytes",
    ] {
        assert!(f.get(k).is_some(), "flow entry lacks {k}");
    }
    let l = &s["links"][0];
    for k in [
        "id",
        "utilization",
        "mean_queue_pkts",
        "max_queue_pkts",
        "drops",
        "marks",
    ] {
        assert!(l.get(k).is_some(), "link entry lacks {k}");
    }
}

#[test]
fn a_bad_scenario_fails_with_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\nduration = \"1s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"fast\"\ndelay = \"1ms\"\n").unwrap();
    let o = acclab(tmp.path(), &["run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    assert!(
        t.contains("bad.toml:5") && t.contains("link[0].rate"),
        "{t}"
    );
    assert!(
        !tmp.path().join("results").exists(),
        "a failed load must not create results"
    );
}

#[test]
fn help_and_check_work() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["--help"][..], &["run", "--help"], &["bench", "--help"]] {
        let o = acclab(tmp.path(), args);
        assert!(
            o.status.success() && text(&o).contains("Usage"),
            "{}",
            text(&o)
        );
    }
    let o = acclab(tmp.path(), &["check", &example("dumbbell-reno.toml")]);
    assert!(
        o.status.success() && text(&o).contains("4 flows"),
        "{}",
        text(&o)
    );
}

/// The line of the 3-flow case in what a successful `acclab bench --flows 3` printed (`out`).
fn bench_line<'a>(o: &std::process::Output, out: &'a str) -> &'a str {
    assert!(o.status.success(), "{out}");
    out.lines()
        .find(|l| l.starts_with("3@100M"))
        .unwrap_or_else(|| panic!("no case line in:\n{out}"))
}

#[test]
fn bench_with_model_reports_the_model_beside_the_packet_run() {
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["reno", "vegas", "monaco"] {
        let o = acclab(
            tmp.path(),
            &[
                "bench",
                "--flows",
                "3",
                "--duration-s",
                "2",
                "--repeat",
                "1",
                "--model",
                "--scheme",
                scheme,
            ],
        );
        let out = text(&o);
        let case = bench_line(&o, &out);
        assert_eq!(case.contains(scheme), scheme != "reno", "{scheme}: {case}");
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with("model:"))
            .unwrap_or_else(|| panic!("no model line in:\n{out}"));
        let nums: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(
            nums.len() == 2 && nums[0] > 0.0 && nums[1] > 0.0,
            "{scheme}: model seconds and share of the run: {line}"
        );
    }
}

/// `bench --files` times a run that writes its samples' files as `acclab run` does: the same
/// packets as the run that drops them, the case named so.
#[test]
fn bench_with_files_runs_the_same_packets() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "bench",
        "--flows",
        "3",
        "--duration-s",
        "2",
        "--repeat",
        "1",
    ];
    let cols = |extra: &[&str]| -> Vec<String> {
        let o = acclab(tmp.path(), &[&args[..], extra].concat());
        let out = text(&o);
        let line = bench_line(&o, &out);
        line.split_whitespace().map(String::from).collect()
    };
    let (plain, files) = (cols(&[]), cols(&["--files"]));
    assert_eq!(files[1], "files", "{files:?}");
    // Packet-hops a second (millions) and nanoseconds a packet-hop are one figure both ways.
    let (mhops, ns): (f64, f64) = (plain[7].parse().unwrap(), plain[8].parse().unwrap());
    assert!((mhops * ns / 1000.0 - 1.0).abs() < 0.02, "{plain:?}");
    // Events and bottleneck packets, counted from the case's name on.
    assert_eq!(plain[4], files[5], "{plain:?} {files:?}");
    assert_eq!(
        plain[plain.len() - 3],
        files[files.len() - 3],
        "{plain:?} {files:?}"
    );
}

#[test]
fn bench_against_another_build_pairs_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let me = env!("CARGO_BIN_EXE_acclab");
    let args = [
        "bench",
        "--flows",
        "3",
        "--duration-s",
        "1",
        "--repeat",
        "3",
    ];
    let o = acclab(tmp.path(), &[&args[..], &["--against", me]].concat());
    let out = text(&o);
    let case = bench_line(&o, &out);
    // flows, this build's and the other's medians, the ratio, its range, the speed-up, and
    // how far the bottleneck packet counts are apart: none, for the same executable.
    let cols: Vec<&str> = case.split_whitespace().collect();
    assert_eq!(cols.len(), 8, "{case}");
    let ratio: f64 = cols[4].parse().unwrap();
    assert!(ratio > 0.0 && ratio.is_finite(), "{case}");
    assert_eq!(
        cols[7], "0.00%",
        "the same build simulates the same packets: {case}"
    );
    assert!(out.contains("3 pairs per case"), "{out}");
    // Side by side on two CPUs where the process has two (each pinned to its own) and may pin
    // them, else back to back; --back-to-back asks for the latter.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let side = out.contains("run side by side, each on a CPU of its own");
    assert!(
        side || out.contains("run back to back in alternating order"),
        "{out}"
    );
    assert!(cpus >= 2 || !side, "side by side on {cpus} CPU: {out}");
    let o = acclab(
        tmp.path(),
        &[&args[..], &["--against", me, "--back-to-back"]].concat(),
    );
    let out = text(&o);
    assert_eq!(
        bench_line(&o, &out).split_whitespace().nth(7),
        Some("0.00%")
    );
    assert!(
        out.contains("run back to back in alternating order"),
        "{out}"
    );

    let o = acclab(
        tmp.path(),
        &[&args[..], &["--against", "no-such-acclab"]].concat(),
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--against no-such-acclab: no such file"),
        "{}",
        text(&o)
    );
    let o = acclab(
        tmp.path(),
        &[&args[..], &["--against", me, "--model"]].concat(),
    );
    assert!(
        !o.status.success(),
        "--model and --against together: {}",
        text(&o)
    );
}

#[test]
fn every_example_scenario_is_valid() {
    let dir = format!("{}/../../scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for entry in walk(Path::new(&dir)) {
        let o = acclab(Path::new(&dir), &["check", entry.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        checked += 1;
    }
    assert!(checked >= 4);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Issue 21 §1: a run whose memory estimate exceeds the machine is refused before it starts
/// (an unlimited buffer at 10 Tb/s can hold 1.25 G packets, 80 GB), and `check` prints every
/// scenario's estimated cost.
#[test]
fn a_run_larger_than_the_machine_is_refused_up_front_and_check_prints_the_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.toml");
    std::fs::write(
        &file,
        r#"name = "huge"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10000Gbps"
delay = "1ms"
queue = { kind = "droptail", limit = "inf" }
[[flow]]
id = "f"
kind = "reno"
from = "a"
to = "b"
"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = acclab(tmp.path(), &["check", f]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("cost: about"), "{}", text(&o));
    let o = acclab(tmp.path(), &["run", f, "--out", "r"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("--allow-large"), "{}", text(&o));
    assert!(
        !tmp.path().join("r").exists(),
        "nothing is written for a refused run"
    );
}

/// Issue 21 §2: two runs of one scenario started together used to share results/<name>/ and
/// corrupt each other; a name of ".." wrote into the working directory; an unwritable --out was
/// found only after the simulation. Now each run claims its own directory, publishes whole, and
/// an unwritable place fails first.
#[test]
fn concurrent_runs_get_their_own_directories_and_names_cannot_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("dots.toml");
    let demo = std::fs::read_to_string(example("demo.toml")).unwrap();
    let start = demo.find("name = ").unwrap();
    let end = start + demo[start..].find('\n').unwrap();
    std::fs::write(
        &file,
        format!("{}name = \"..\"{}", &demo[..start], &demo[end..]),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_acclab"))
            .args(["run", f, "--quiet"])
            .current_dir(tmp.path())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn(), spawn());
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    assert!(
        !tmp.path().join("summary.json").exists(),
        "wrote into the working directory"
    );
    for d in ["results/run", "results/run-2"] {
        let d = tmp.path().join(d);
        let summary = std::fs::read_to_string(d.join("summary.json")).unwrap();
        assert!(summary.trim_end().ends_with('}'), "{}", d.display());
        let flows = std::fs::read_to_string(d.join("flows.csv")).unwrap();
        let widths: std::collections::BTreeSet<usize> =
            flows.lines().map(|l| l.split(',').count()).collect();
        assert_eq!(
            widths.len(),
            1,
            "rows of different widths in {}",
            d.display()
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "staging left behind: {leftovers:?}");
    let o = acclab(
        tmp.path(),
        &["run", f, "--out", "/proc/acclab-cannot-write-here"],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("cannot create"), "{}", text(&o));
    assert!(!text(&o).contains("Results in"), "{}", text(&o));
}

/// Issue 21 §2: a `--netns` run interrupted by SIGINT or SIGTERM removes its namespaces and
/// exits with the signal's status. Needs root and iproute2's `ip` (as the live netns tests do).
#[test]
fn an_interrupted_netns_run_removes_its_namespaces() {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let ip = std::process::Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        root && ip,
        "this test needs root and iproute2's `ip` (apt-get install iproute2); root: {root}, ip: {ip}"
    );
    let own = |pid: u32| -> Vec<String> {
        std::fs::read_dir("/run/netns")
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with(&format!("acclab-{pid}-")))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let tmp = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_acclab"))
            .args([
                "live",
                "run",
                &example("live-dumbbell.toml"),
                "--netns",
                "--time-scale",
                "1",
                "--quiet",
                "--out",
                "out",
            ])
            .current_dir(tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let t0 = std::time::Instant::now();
        while own(pid).len() < 4 {
            assert!(t0.elapsed().as_secs() < 30, "the run made no namespaces");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Running for a moment (the scenario lasts 24 s at time scale 1).
        std::thread::sleep(std::time::Duration::from_millis(500));
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "SIG{signal}: {err}");
        assert!(
            err.contains("removed this run's network namespaces"),
            "{err}"
        );
        assert!(own(pid).is_empty(), "SIG{signal} left {:?}", own(pid));
        // No result that looks complete.
        assert!(!tmp.path().join("out/summary.json").exists());
    }
}

/// Flows of real stacks (issue 25) run only in live mode's namespaces: the simulator and the
/// loopback live mode refuse them before any output directory exists, naming the flow.
#[test]
fn real_stacks_flows_are_refused_outside_live_namespaces() {
    let tmp = tempfile::tempdir().unwrap();
    let file = format!(
        "{}/../../scenarios/live/real-stacks.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = acclab(tmp.path(), &["check", &file]);
    assert!(o.status.success(), "{}", text(&o));
    for args in [
        vec!["run", file.as_str(), "--out", "sim"],
        vec!["live", "run", file.as_str(), "--out", "live"],
    ] {
        let o = acclab(tmp.path(), &args);
        assert!(!o.status.success(), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("\"linux-cubic\"") && text(&o).contains("--netns"),
            "{args:?}: {}",
            text(&o)
        );
        assert!(!tmp.path().join(args[args.len() - 1]).exists(), "{args:?}");
    }
}

/// Issue 55 §3: output into a pipe that closed (`acclab params | head -1`) panicked with exit
/// 101. Now: nothing on stderr, and the status the shell's tools give (141), or 0 when all was
/// written before the pipe closed.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    for args in [
        &["params"][..],
        &["params", "--json"],
        &["reproduce", "--list"],
        &["theory", &example("parking-lot.toml"), "--json"],
        &["check", &example("dumbbell-reno.toml")],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader); // closed before acclab writes a byte
        let out = Command::new(env!("CARGO_BIN_EXE_acclab"))
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(code, Some(141) | Some(0)) && stderr.is_empty(),
            "acclab {args:?} into a closed pipe: {:?}\n{stderr}",
            out.status
        );
    }
}

/// A fabric end to end through the command line: `check` describes it, `show routes` lists the
/// ECMP paths, `show topology` draws it, and a workload run writes fct.csv and traffic.txt.
#[test]
fn a_fabric_is_checked_shown_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("ft.toml");
    std::fs::write(
        &file,
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
[[flow]]
id = "long"
kind = "dctcp"
from = "h0"
to = "h15"
stop = "10ms"
[[workload]]
id = "ws"
kind = "dctcp"
params = { initial_window = 10 }
sizes = "websearch"
load = 0.2
stop = "10ms"
"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = acclab(tmp.path(), &["check", f]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("topology: 16 hosts, 20 switches, 96 links"),
        "{}",
        text(&o)
    );
    let o = acclab(tmp.path(), &["show", "routes", f, "--flow", "long"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let row = out.lines().find(|l| l.starts_with("long")).unwrap();
    assert!(
        row.contains(" 4 ") && row.contains(" 6 ") && row.ends_with(" h15"),
        "{out}"
    );
    let o = acclab(tmp.path(), &["show", "routes", f, "--flow", "nope"]);
    assert!(!o.status.success() && text(&o).contains("no flow \"nope\""));
    let o = acclab(tmp.path(), &["show", "topology", f, "--out", "."]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(tmp.path().join("topology.svg").is_file());
    let o = acclab(tmp.path(), &["run", f, "--out", "out"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("FCT slowdown"), "{}", text(&o));
    for name in ["fct.csv", "traffic.txt"] {
        assert!(tmp.path().join("out").join(name).is_file(), "{name}");
    }
    // summary.json lists the [[flow]] tables' flows and counts the workload's, which fct.csv
    // lists (`[output] flow_summaries`, off by default with a workload); on, it lists them all.
    let summary = |dir: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(tmp.path().join(dir).join("summary.json")).unwrap())
            .unwrap()
    };
    let workload = std::fs::read_to_string(tmp.path().join("out/fct.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("ws"))
        .count();
    assert!(workload > 20, "{workload} workload flows");
    let s = summary("out");
    let ids: Vec<&str> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["long"]);
    assert_eq!(s["unlisted_flows"], workload);
    assert_eq!(s["fct"]["overall"]["flows"], workload);
    let o = acclab(
        tmp.path(),
        &[
            "run",
            f,
            "--set",
            "output.flow_summaries=true",
            "--out",
            "all",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let all = summary("all");
    assert_eq!(all["flows"].as_array().unwrap().len(), 1 + workload);
    assert_eq!(all["flows"][0], s["flows"][0], "the same run, listed alike");
    assert!(all.get("unlisted_flows").is_none());
    assert_eq!(all["fct"], s["fct"]);
    // The topology's own keys patched: the fabric is generated again (k = 6: 54 hosts).
    let o = acclab(
        tmp.path(),
        &[
            "run",
            f,
            "--set",
            "topology.k=6",
            "--set",
            "duration=5ms",
            "--out",
            "k6",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The effective scenario keeps the fabric as its [topology], patched.
    let effective = std::fs::read_to_string(tmp.path().join("k6/scenario.toml")).unwrap();
    assert!(
        effective.contains("[topology]") && effective.contains("k = 6"),
        "{effective}"
    );
    assert!(!effective.contains("[[link]]"), "{effective}");
    let o = acclab(tmp.path(), &["check", "k6/scenario.toml"]);
    assert!(text(&o).contains("topology: 54 hosts"), "{}", text(&o));
    let o = acclab(
        tmp.path(),
        &["run", f, "--set", "topology.k=7", "--out", "k7"],
    );
    assert!(
        !o.status.success() && text(&o).contains("topology.k"),
        "{}",
        text(&o)
    );
}

/// `acclab capacity`: a synthetic trace written in Mahimahi's format, never over a file
/// without --force, and described by `info`; a run over it follows it.
#[test]
fn capacity_makes_a_trace_describes_it_and_a_run_follows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "capacity",
        "markov",
        "--state",
        "12Mbps:1s",
        "--state",
        "0Mbps:200ms",
        "--duration",
        "20s",
        "--seed",
        "3",
        "--out",
        "t.down",
    ];
    let o = acclab(tmp.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let first = std::fs::read_to_string(tmp.path().join("t.down")).unwrap();
    let trace = acclab_core::link::CapacityTrace::parse(&first).unwrap();
    assert_eq!(trace.period(), acclab_core::Duration::from_secs(20));
    // The same seed, the same trace; without --force the file stays.
    let o = acclab(tmp.path(), &args);
    assert!(
        !o.status.success() && text(&o).contains("--force"),
        "{}",
        text(&o)
    );
    let o = acclab(tmp.path(), &[&args[..], &["--force"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("t.down")).unwrap(),
        first
    );
    let o = acclab(
        tmp.path(),
        &[
            "capacity",
            "markov",
            "--state",
            "12Mbps",
            "--duration",
            "1s",
            "--out",
            "x",
        ],
    );
    assert!(
        !o.status.success() && text(&o).contains("RATE:DWELL"),
        "{}",
        text(&o)
    );
    let o = acclab(tmp.path(), &["capacity", "info", "t.down"]);
    let mean = format!("{:.2}", trace.mean_rate().as_f64() / 1e6);
    assert!(
        o.status.success() && text(&o).contains(&mean),
        "{}",
        text(&o)
    );
    // A run over the trace: the link's rate is its mean.
    let sc = "name = \"t\"\nduration = \"5s\"\n[[link]]\nfrom = \"a\"\nto = \"b\"\n\
              rate = { trace = \"t.down\" }\ndelay = \"10ms\"\n[[link]]\nfrom = \"b\"\nto = \"a\"\n\
              rate = \"10Mbps\"\ndelay = \"10ms\"\n[[flow]]\nid = \"f\"\nkind = \"cubic\"\n\
              from = \"a\"\nto = \"b\"\n";
    std::fs::write(tmp.path().join("t.toml"), sc).unwrap();
    let o = acclab(tmp.path(), &["run", "t.toml", "--out", "out", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary = std::fs::read_to_string(tmp.path().join("out/summary.json")).unwrap();
    let rate = format!("\"rate_bps\": {}", trace.mean_rate().bps());
    assert!(summary.contains(&rate), "{rate} not in {summary}");
}

#[test]
fn bench_parallelism_reports_each_partition_count() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(
        tmp.path(),
        &["bench", "--case", "fattree-k8-perm", "--parallelism", "1,4"],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("fattree-k8-perm"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    // case, parts, lookahead, events, windows, ev/window, crossing %, imbalance, available ×
    assert_eq!((rows[0][1], rows[0][8]), ("1", "1.00"), "{out}");
    assert_eq!(rows[1][2], "1us", "{out}");
    let available: f64 = rows[1][8].parse().unwrap();
    assert!(available > 2.0 && available <= 4.0, "{out}");
    // Partition counts out of range are refused.
    let o = acclab(tmp.path(), &["bench", "--parallelism", "0"]);
    assert!(
        !o.status.success() && text(&o).contains("0"),
        "{}",
        text(&o)
    );
}

#[test]
fn plots_of_more_flows_than_colours_say_so_and_draw_the_mean_of_all() {
    // Issue 54 §3: a 20-flow run drew reno0–reno11 and said nothing.
    let tmp = tempfile::tempdir().unwrap();
    let sc = tmp.path().join("many.toml");
    std::fs::write(
        &sc,
        r#"
name = "many"
duration = "2s"
[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "5ms"
[[link]]
count = 20
between = ["s{i}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = 20
between = ["r2", "d{i}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
count = 20
id = "reno{i}"
kind = "reno"
from = "s{i}"
to = "d{i}"
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = acclab(
        tmp.path(),
        &[
            "run",
            sc.to_str().unwrap(),
            "--plots",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    for chart in ["throughput.svg", "cwnd.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        assert!(svg.contains("12 of 20 flows drawn"), "{chart}");
        assert!(svg.contains("mean of all 20 flows"), "{chart}");
        assert!(svg.contains("reno11") && !svg.contains("reno12"), "{chart}");
    }
}

#[test]
fn an_interrupted_run_says_so_and_where_its_partial_files_are() {
    // Issue 54 §8: Ctrl-C stops the run, publishes nothing and says where the partial files
    // are; the next run beside it reports them as stale.
    let tmp = tempfile::tempdir().unwrap();
    let err = interrupt(
        tmp.path(),
        "long",
        &[
            "run",
            &example("dumbbell-reno.toml"),
            "--set",
            "duration=3600s",
            "--allow-large",
            "--quiet",
        ],
        "flows.csv.part",
    );
    assert!(err.contains("interrupted at"), "{err}");
    // The next run here names the stale directory and how to remove it.
    let o = acclab(
        tmp.path(),
        &["run", &example("dumbbell-reno.toml"), "--out", "next"],
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("1 incomplete result directory") && said.contains("rm -r"),
        "{said}"
    );
}

/// Starts `acclab args…` (writing into `tmp/NAME`), waits until its staging directory has a
/// file (on a busy machine too), interrupts it and returns what it said on stderr after
/// checking that it failed, published nothing and left its staging directory marked.
fn interrupt(tmp: &Path, name: &str, args: &[&str], file: &str) -> String {
    let out = tmp.join(name);
    let child = Command::new(env!("CARGO_BIN_EXE_acclab"))
        .current_dir(tmp)
        .args(args)
        .args(["--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let staging = tmp.join(format!(".{name}.partial-{}", child.id()));
    let t0 = std::time::Instant::now();
    while !staging.join(file).exists() {
        assert!(
            t0.elapsed().as_secs() < 60,
            "{args:?} never started writing"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("nothing was published"), "{err}");
    assert!(err.contains(&staging.display().to_string()), "{err}");
    assert!(staging.join("INCOMPLETE").is_file(), "{err}");
    assert!(!out.join("summary.json").exists() && !out.join("comparison.json").exists());
    err
}

#[test]
fn an_interrupted_model_or_reproduction_says_so_too() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = example("dumbbell-reno.toml");
    let err = interrupt(
        tmp.path(),
        "m",
        &["model", &sc, "--set", "duration=3000s", "--quiet"],
        "flows.csv.part",
    );
    assert!(err.contains("s integrated: nothing was published"), "{err}");
    // A full reproduction runs long enough to be interrupted while its runs go.
    let err = interrupt(tmp.path(), "r", &["reproduce", "vegas-fig8"], "INCOMPLETE");
    assert!(err.contains("interrupted: nothing was published"), "{err}");
}

/// A live run keeps its provenance as a simulated one does (issue 54 §1), and its page can be
/// written.
#[test]
fn a_live_run_keeps_how_it_was_made() {
    let tmp = tempfile::tempdir().unwrap();
    let o = acclab(
        tmp.path(),
        &[
            "live",
            "run",
            &example("live-dumbbell.toml"),
            "--time-scale",
            "24",
            "--quiet",
            "--out",
            "lv",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let dir = tmp.path().join("lv");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("provenance.json")).unwrap())
            .unwrap();
    assert_eq!(record["command"][1], "live");
    assert!(std::fs::read_to_string(dir.join("scenario.toml"))
        .unwrap()
        .contains("name = \"live-dumbbell\""));
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(
        summary.contains("\"record\": \"provenance.json\""),
        "{summary}"
    );
    // Its files are written from memory at the end, the delay histograms too.
    let delays = std::fs::read_to_string(dir.join("delays.csv")).unwrap();
    assert!(
        delays.starts_with("flow,delay_from_s,delay_to_s,packets\n"),
        "{delays}"
    );
    let o = acclab(tmp.path(), &["report", "lv", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join("report/index.html").is_file());
}

/// delays.csv (issue 54 §5): every flow's one-way delay histogram over the window, streamed as
/// a run goes; on an idle path every datagram of a CBR flow takes 1 ms + 0.8 ms + 2 ms + 1.6 ms
/// (propagation and store-and-forward serialisation of 1000 B at 10 and 5 Mb/s), so one bucket
/// holds them all, as many as summary.json counts.
#[test]
fn delay_histograms_are_written_for_every_flow() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("owd.toml"),
        r#"name = "owd"
duration = "2s"
[[link]]
between = ["a", "r"]
rate = "10Mbps"
delay = "1ms"
[[link]]
between = ["r", "b"]
rate = "5Mbps"
delay = "2ms"
[[flow]]
id = "udp"
kind = "cbr"
from = "a"
to = "b"
params = { rate = "2Mbps" }
[[flow]]
id = "tcp"
kind = "reno"
from = "a"
to = "b"
start = "1s"
"#,
    )
    .unwrap();
    let o = acclab(tmp.path(), &["run", "owd.toml", "--out", "o", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("o/summary.json")).unwrap())
            .unwrap();
    let delays = std::fs::read_to_string(tmp.path().join("o/delays.csv")).unwrap();
    let mut lines = delays.lines();
    assert_eq!(lines.next(), Some("flow,delay_from_s,delay_to_s,packets"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    for (i, flow) in ["udp", "tcp"].iter().enumerate() {
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == *flow).collect();
        let packets: u64 = mine.iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
        assert_eq!(
            serde_json::json!(packets),
            summary["flows"][i]["one_way_delay"]["packets"],
            "{flow}"
        );
    }
    let udp: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == "udp").collect();
    // Alone until the TCP flow starts at 1 s, then queued behind it: the first bucket is the
    // idle path's 5.4 ms.
    let (from, to): (f64, f64) = (udp[0][1].parse().unwrap(), udp[0][2].parse().unwrap());
    assert!(from <= 5.4e-3 && 5.4e-3 < to, "{:?}", udp[0]);
}

/// `ACCLAB_THREADS`, the default of --threads, must be `auto` or a thread count, and
/// `ACCLAB_CORES` a core count: anything else is an error naming it and what is allowed,
/// before any result directory is made.
#[test]
fn a_bad_acclab_threads_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = common::two_flows(tmp.path());
    let threads = "`auto` or a thread count from 1 to 256";
    let cores = "a core count from 1 to 256";
    for (var, bad, allowed) in [
        ("ACCLAB_THREADS", "0", threads),
        ("ACCLAB_THREADS", "many", threads),
        ("ACCLAB_THREADS", "300", threads),
        // The cores auto may use.
        ("ACCLAB_CORES", "0", cores),
        ("ACCLAB_CORES", "lots", cores),
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_acclab"))
            .args(["run", &sc, "--out", "r", "--quiet"])
            .env_remove("ACCLAB_THREADS")
            .env(var, bad)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let said = common::text(&o);
        assert_eq!(o.status.code(), Some(1), "{said}");
        assert!(
            said.contains(&format!("{var}=\"{bad}\": {allowed}")),
            "{said}"
        );
        assert!(
            !tmp.path().join("r").exists(),
            "{var}={bad}: a result directory was made"
        );
    }
}

/// `--threads auto` (the default) runs a network that gains from it on several threads and says
/// so, and keeps a dumbbell serial without a word; the files are the serial run's either way.
#[test]
fn auto_threads_split_a_large_fabric_and_keep_a_dumbbell_serial() {
    let tmp = tempfile::tempdir().unwrap();
    let k8 = include_str!("../../../scenarios/examples/fabric.toml")
        .replace("\nk = 4\n", "\nk = 8\n")
        .replace("duration = \"40ms\"", "duration = \"10ms\"")
        .replace("window = [\"0s\", \"40ms\"]", "window = [\"0s\", \"10ms\"]");
    assert!(k8.contains("k = 8") && k8.contains("\"10ms\""));
    std::fs::write(tmp.path().join("k8.toml"), k8).unwrap();
    // Auto takes the idle cores; $ACCLAB_CORES says how many there are, so that the test does
    // not depend on what else the machine runs.
    let auto = |cores: &str, out: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_acclab"))
            .args(["run", "k8.toml", "--out", out, "--threads", "auto"])
            .env("ACCLAB_CORES", cores)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let said = common::text(&o);
        assert!(o.status.success(), "{said}");
        said
    };
    let said = auto("2", "auto");
    assert!(said.contains("k8.toml: on 2 threads (estimated "), "{said}");
    let said = auto("1", "auto1");
    assert!(!said.contains(" thread"), "one core: serial\n{said}");
    ok(
        tmp.path(),
        &[
            "run",
            "k8.toml",
            "--out",
            "one",
            "--threads",
            "1",
            "--quiet",
        ],
    );
    for f in ["flows.csv", "links.csv", "fct.csv"] {
        let read = |d: &str| std::fs::read(tmp.path().join(d).join(f)).unwrap();
        assert!(read("auto") == read("one"), "{f} differs");
    }
    // The default is auto: a dumbbell gains nothing and runs serially, and nothing is said.
    let sc = common::two_flows(tmp.path());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_acclab"))
        .args(["run", &sc, "--out", "db"])
        .env_remove("ACCLAB_THREADS")
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let said = common::text(&o);
    assert!(o.status.success(), "{said}");
    assert!(!said.contains("thread"), "{said}");
}
