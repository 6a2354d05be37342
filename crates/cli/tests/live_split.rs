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
    std::fs::write(tmp.path().join("split.toml"), DUMBBELL).unwrap();
    let base = free_ports(5);
    let listen = format!("127.0.0.1:{base}");
    let endpoints = format!("127.0.0.1:{}", base + 1);
    // Half real time (as the loopback tests, whose SCALE says why: the VM's stolen milliseconds
    // must be a small fraction of an RTT; at 5 the split run missed its utilisation, 8.1 of 8.5).
    let scale = ["--time-scale", "0.5"];
    let router = acclab(
        &[
            &[
                "live",
                "router",
                "split.toml",
                "--listen",
                &listen,
                "--endpoints",
                &endpoints,
                "--key-file",
                "key",
                "--out",
                "r",
            ][..],
            &scale,
        ]
        .concat(),
        tmp.path(),
    );
    let ends = acclab(
        &[
            &[
                "live",
                "endpoints",
                "split.toml",
                "--router",
                &listen,
                "--base",
                &endpoints,
                "--key-file",
                "key",
                "--out",
                "e",
            ][..],
            &scale,
        ]
        .concat(),
        tmp.path(),
    );
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
