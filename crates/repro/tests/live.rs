//! acc-fig11's quick variant, which runs live over loopback sockets. It is its own test binary
//! so that it does not share the machine's cores with the simulation tests (cargo runs test
//! binaries one after another).

use acclab_repro::{find, Ctx};

#[test]
fn acc_fig11_quick_live_and_simulated() {
    let e = find("acc-fig11").expect("acc-fig11 is registered");
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        quick: true,
        out: dir.path().to_path_buf(),
        progress: &|_, _| {},
    };
    let report = e.run(&ctx).expect("acc-fig11 runs");
    print!("{}", report.table());
    let failed: Vec<_> = report.rows.iter().filter(|r| !r.pass).collect();
    assert!(failed.is_empty(), "failed rows: {failed:#?}");
    assert!(report.rows.iter().any(|r| r.quantity.starts_with("live,")));
    assert!(dir.path().join("live/summary.json").exists());
    let live = std::fs::read_to_string(dir.path().join("live/summary.json")).unwrap();
    assert!(live.contains("\"mode\": \"live\""));
}
