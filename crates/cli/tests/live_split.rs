//! `acclab live router` and `acclab live endpoints` as two separate processes on loopback: the
//! same dumbbell as the live tests, the two halves meeting only through their sockets.

use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};

/// Two Monaco loops, weights 1 and 2, over one 10 Mb/s priority bottleneck.
const DUMBBELL: &str = include_str!("../../../scenarios/examples/live-dumbbell.toml");

/// A base port with `n` consecutive ports free on 127.0.0.1 a moment ago.
fn free_ports(n: u16) -> u16 {
    (20_000..60_000)
        .step_by(97)
        .find(|&p| (p..p + n).all(|q| UdpSocket::bind(("127.0.0.1", q)).is_ok()))
        .expect("free ports")
}

/// The tests choose free ports and then start processes that bind them: one test at a time, so
/// that they do not choose the same ones.
static PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ports_turn() -> std::sync::MutexGuard<'static, ()> {
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn acclab(args: &[&str], dir: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_acclab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("acclab starts")
}

fn json(path: std::path::PathBuf) -> serde_json::Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn router_and_endpoints_in_separate_processes_share_the_bottleneck() {
    let _turn = ports_turn();
    let tmp = tempfile::tempdir().unwrap();
    // Half real time (as the loopback tests, whose SCALE says why: the VM's stolen milliseconds
    // must be a small fraction of an RTT; at 5 the split run missed its utilisation, 8.1 of 8.5).
    let (router, ends) = split_commands(tmp.path());
    let (router, ends) = (start(&router, tmp.path()), start(&ends, tmp.path()));
    let (r, e) = (
        router.wait_with_output().unwrap(),
        ends.wait_with_output().unwrap(),
    );
    for (what, o) in [("router", &r), ("endpoints", &e)] {
        assert!(
            o.status.success(),
            "{what}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }

    let report = json(tmp.path().join("r/router.json"));
    let c = &report["counters"];
    assert!(c["accepted"].as_u64().unwrap() > 10_000, "{report}");
    assert_eq!(c["rejected_malformed"].as_u64(), Some(0), "{report}");
    assert_eq!(c["rejected_foreign"].as_u64(), Some(0), "{report}");
    let bottleneck = &report["links"][0];
    assert_eq!(bottleneck["id"], "r1->r2");
    assert!(
        bottleneck["utilization"].as_f64().unwrap() > 0.85,
        "{report}"
    );

    // Whole-run goodput, slow start included: weighted PF gives 1/3 and 2/3 of 10 Mb/s.
    let flows = json(tmp.path().join("e/endpoints.json"));
    let goodput = |i: usize| flows[i]["mean_goodput_bps"].as_f64().unwrap() / 1e6;
    let (w1, w2) = (goodput(0), goodput(1));
    eprintln!(
        "split: w1 {w1:.3} Mb/s, w2 {w2:.3} Mb/s, bottleneck utilisation {}",
        bottleneck["utilization"]
    );
    assert!(w1 + w2 > 8.5 && w1 + w2 < 10.0, "{flows}");
    assert!(
        (1.6..2.4).contains(&(w2 / w1)),
        "w2/w1 = {}: {flows}",
        w2 / w1
    );
}

/// Issue 21 §3: endpoints whose router is not there (never started, or gone) stop with an error
/// instead of running to the end and writing normal-looking results.
#[test]
fn endpoints_without_a_router_fail_clearly() {
    let _turn = ports_turn();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("split.toml"), DUMBBELL).unwrap();
    let base = free_ports(5);
    let nobody = format!("127.0.0.1:{base}");
    let endpoints = format!("127.0.0.1:{}", base + 1);
    let t0 = std::time::Instant::now();
    let ends = acclab(
        &[
            "live",
            "endpoints",
            "split.toml",
            "--router",
            &nobody,
            "--base",
            &endpoints,
            "--key-file",
            "key",
            "--time-scale",
            "1",
            "--out",
            "e",
        ],
        tmp.path(),
    )
    .wait_with_output()
    .unwrap();
    let err = String::from_utf8_lossy(&ends.stderr);
    assert!(!ends.status.success(), "{err}");
    assert!(
        err.contains("sent nothing") && err.contains("nothing listens there"),
        "{err}"
    );
    // Well before the scenario's 24 s end, and no results that look complete.
    assert!(t0.elapsed().as_secs() < 15, "{:?}", t0.elapsed());
    assert!(!tmp.path().join("e/endpoints.json").exists());
}

/// The router's and the endpoints' commands for `tmp`'s split.toml on fresh ports, at half
/// real time.
fn split_commands(tmp: &std::path::Path) -> (Vec<String>, Vec<String>) {
    std::fs::write(tmp.join("split.toml"), DUMBBELL).unwrap();
    let base = free_ports(5);
    let listen = format!("127.0.0.1:{base}");
    let endpoints = format!("127.0.0.1:{}", base + 1);
    let common = ["--key-file", "key", "--time-scale", "0.5"];
    let router = [
        "live",
        "router",
        "split.toml",
        "--listen",
        &listen,
        "--endpoints",
        &endpoints,
        "--out",
        "r",
    ];
    let ends = [
        "live",
        "endpoints",
        "split.toml",
        "--router",
        &listen,
        "--base",
        &endpoints,
        "--out",
        "e",
    ];
    let own = |a: &[&str]| a.iter().chain(&common).map(|s| s.to_string()).collect();
    (own(&router), own(&ends))
}

fn start(args: &[String], dir: &std::path::Path) -> Child {
    acclab(&args.iter().map(String::as_str).collect::<Vec<_>>(), dir)
}

/// Waits for `child` to exit, at most `limit`; its output and how long it took.
fn exit_within(
    mut child: Child,
    limit: std::time::Duration,
) -> (std::process::Output, std::time::Duration) {
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), t0.elapsed())
}

/// Issue 55 §4: the endpoints killed in the middle of a run — the router finds them silent
/// within a second (five round trips, floored at 0.5 s of wall time), fails, and publishes
/// nothing; it used to run to the end and exit 0 with results.
#[test]
fn a_router_whose_endpoints_die_fails_at_once_and_publishes_nothing() {
    let _turn = ports_turn();
    let tmp = tempfile::tempdir().unwrap();
    let (router, ends) = split_commands(tmp.path());
    let router = start(&router, tmp.path());
    let mut ends = start(&ends, tmp.path());
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        ends.try_wait().unwrap().is_none(),
        "the endpoints ended early"
    );
    ends.kill().unwrap();
    ends.wait().unwrap();
    // The run has 45 s of wall time left: the router must give up long before.
    let (r, took) = exit_within(router, std::time::Duration::from_secs(20));
    found_silent_at_once(&r, took, &tmp.path().join("r/router.json"));
}

/// Issue 55 §4: the router stopped (SIGSTOP) in the middle of a run — the endpoints find it
/// silent within a second, fail, and publish nothing; they used to run to the end and exit 0
/// with halved goodput (their 65 s threshold was longer than the run).
#[test]
fn endpoints_whose_router_stops_fail_at_once_and_publish_nothing() {
    let _turn = ports_turn();
    let tmp = tempfile::tempdir().unwrap();
    let (router, ends) = split_commands(tmp.path());
    let mut router = start(&router, tmp.path());
    let ends = start(&ends, tmp.path());
    std::thread::sleep(std::time::Duration::from_secs(3));
    let pid = router.id().to_string();
    let stopped = Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    assert!(stopped.success());
    let (e, took) = exit_within(ends, std::time::Duration::from_secs(20));
    router.kill().unwrap();
    router.wait().unwrap();
    found_silent_at_once(&e, took, &tmp.path().join("e/endpoints.json"));
}

/// The process whose peer went silent failed, saying so, within 2.5 s (the silence is 0.5 s
/// here), and left no `results` file.
fn found_silent_at_once(
    o: &std::process::Output,
    took: std::time::Duration,
    results: &std::path::Path,
) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("sent nothing") && err.contains("stopped or gone"),
        "{err}"
    );
    eprintln!("found silent after {took:?}: {err}");
    assert!(took.as_secs_f64() < 2.5, "found after {took:?}: {err}");
    assert!(!results.exists(), "{}", results.display());
}
