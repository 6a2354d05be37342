//! The quick variants of the reproductions that run live: over loopback sockets (acc-fig11,
//! qos-fig7), and with real stacks in network namespaces (real-stacks, as root). They are their own test binary so that they do not share the machine's cores with
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
        traces: None,
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

/// real-stacks needs network namespaces (root): skipped, saying why, elsewhere — and a failure
/// where `ACCLAB_REQUIRE_NETNS` is set (CI, as root), so that a skip there cannot pass for a check.
#[test]
fn real_stacks_quick_emulated_and_simulated() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let e = find("real-stacks").expect("registered");
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        quick: true,
        out: dir.path().to_path_buf(),
        progress: &|_, _| {},
        traces: None,
    };
    let report = match e.run(&ctx) {
        Err(acclab_repro::ReproError::Unavailable(why)) => {
            assert!(
                std::env::var_os("ACCLAB_REQUIRE_NETNS").is_none(),
                "ACCLAB_REQUIRE_NETNS is set but real-stacks cannot run here: {why}"
            );
            eprintln!("SKIPPED: {why}");
            return;
        }
        r => r.expect("runs"),
    };
    print!("{}", report.table());
    let failed: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.checked() && !r.pass)
        .collect();
    assert!(failed.is_empty(), "failed rows: {failed:#?}");
    let left: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.full_run_only.is_some())
        .collect();
    assert_eq!(left.len(), 1, "rows left to the full run: {left:#?}");
    assert!(report.rows.len() >= 12, "{} rows", report.rows.len());
    for f in [
        "table.csv",
        "live-avd/summary.json",
        "sim-droptail/flows.csv",
    ] {
        assert!(dir.path().join(f).exists(), "{f} is missing");
    }
}
