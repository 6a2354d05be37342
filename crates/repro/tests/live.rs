//! The quick variants of the reproductions that run live over loopback sockets (acc-fig11,
//! qos-fig7). They are their own test binary so that they do not share the machine's cores with
//! the simulation tests (cargo runs test binaries one after another), and they run one at a time.

use acclab_repro::{find, Ctx};

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn acc_fig11_quick_live_and_simulated() {
    live_quick("acc-fig11");
}

#[test]
fn qos_fig7_quick_live_and_simulated() {
    live_quick("qos-fig7");
}

fn live_quick(id: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let e = find(id).expect("registered");
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        quick: true,
        out: dir.path().to_path_buf(),
        progress: &|_, _| {},
    };
    let report = e.run(&ctx).expect("runs");
    print!("{}", report.table());
    let failed: Vec<_> = report.rows.iter().filter(|r| !r.pass).collect();
    assert!(failed.is_empty(), "failed rows: {failed:#?}");
    assert!(report.rows.iter().any(|r| r.quantity.starts_with("live,")));
    assert!(dir.path().join("live/summary.json").exists());
    let live = std::fs::read_to_string(dir.path().join("live/summary.json")).unwrap();
    assert!(live.contains("\"mode\": \"live\""));
}
