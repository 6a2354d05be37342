//! Every reproduction's quick variant runs, passes its checks, and writes the comparison.csv
//! recorded in tests/golden/repro/ (the safety net of behaviour-preserving changes: a change of
//! dynamics shows up here as a diff; `scripts/golden record` re-records after a change whose every
//! difference is understood and explained).

use acclab_repro::{find, registry, Ctx};

fn quick(id: &str) {
    quick_leaving_to_the_full_run(id, &[]);
}

/// Runs the quick variant and requires every checked row to pass, and exactly the rows listed
/// (by quantity prefix) to be left to the full run, which the quick run's scale cannot
/// establish (the experiment says why in the row).
fn quick_leaving_to_the_full_run(id: &str, full_only: &[&str]) {
    let e = find(id).unwrap_or_else(|| panic!("{id} is not registered"));
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        quick: true,
        out: dir.path().to_path_buf(),
        progress: &|_, _| {},
        traces: None,
    };
    let report = e
        .run(&ctx)
        .unwrap_or_else(|err| panic!("{id} did not run: {err}"));
    assert!(!report.rows.is_empty(), "{id} checked nothing");
    assert!(
        report.passed(),
        "{id} quick variant failed:\n{}",
        report.table()
    );
    let left: Vec<&str> = report
        .rows
        .iter()
        .filter(|r| r.full_run_only.is_some())
        .map(|r| r.quantity.as_str())
        .collect();
    assert_eq!(
        left.len(),
        full_only.len(),
        "{id}: rows left to the full run: {left:?}"
    );
    for k in full_only {
        assert!(
            left.iter().any(|q| q.starts_with(k)),
            "{id}: {k:?} should be left to the full run, not checked: {left:?}"
        );
    }
    for f in &report.files {
        assert!(
            dir.path().join(f).exists(),
            "{id} claims {f} but did not write it"
        );
    }
    report.write(dir.path()).unwrap();
    let produced = std::fs::read_to_string(dir.path().join("comparison.csv")).unwrap();
    let golden_path = format!(
        "{}/../../tests/golden/repro/{id}.quick.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let golden = std::fs::read_to_string(&golden_path)
        .unwrap_or_else(|e| panic!("{golden_path}: {e} (record it with scripts/golden record)"));
    assert!(
        produced == golden,
        "{id}: comparison.csv differs from {golden_path}\n--- golden\n{golden}\n--- now\n{produced}"
    );
}

/// Experiments of acclab's own, with claims of their own rather than a paper's.
const OWN_EXPERIMENTS: [&str; 4] = [
    "modern-comparison",
    "dc-comparison",
    "cellular-comparison",
    "real-stacks",
];

#[test]
fn registry_ids_are_unique_and_documented() {
    let ids: Vec<&str> = registry().iter().map(|e| e.id()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "duplicate IDs: {ids:?}");
    // The product definition lives beside the repository (../shared); check against it when
    // it is there (it must be under CI).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/EXPERIMENTS.md"
    );
    match std::fs::read_to_string(path) {
        Ok(experiments) => {
            // acclab's own experiments (not a paper's figure) are documented in the reference.
            let readme = include_str!("../../../docs/reference.md");
            for id in OWN_EXPERIMENTS {
                assert!(
                    readme.contains(&format!("| {id} |")),
                    "{id} is not in docs/reference.md's table of reproductions"
                );
            }
            for id in ids.into_iter().filter(|id| !OWN_EXPERIMENTS.contains(id)) {
                assert!(
                    experiments.contains(&format!("| {id} |")),
                    "{id} is not an EXPERIMENTS.md row"
                );
            }
        }
        // Under CI (`CI` set, as .ci/run is run) the product definition is always beside the
        // clone: its absence there is a failure, not a skip that passes.
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("{path} not readable under CI ({e}): the IDs cannot be checked against it")
        }
        Err(e) => eprintln!("note: {path} not readable ({e}); IDs not checked against it"),
    }
}

#[test]
fn vegas_table1_quick() {
    quick("vegas-table1");
}

#[test]
fn vegas_table2_quick() {
    quick("vegas-table2");
}

#[test]
fn vegas_table5_quick() {
    quick("vegas-table5");
}

#[test]
fn vegas_fig5_quick() {
    quick("vegas-fig5");
}

#[test]
fn vegas_fig8_quick() {
    quick("vegas-fig8");
}

#[test]
fn acc_fig2_quick() {
    quick("acc-fig2");
}

#[test]
fn acc_fig4_quick() {
    quick("acc-fig4");
}

#[test]
fn acc_fig5_quick() {
    quick("acc-fig5");
}

#[test]
fn acc_fig6_quick() {
    quick("acc-fig6");
}

#[test]
fn acc_fig7_quick() {
    quick("acc-fig7");
}

#[test]
fn acc_fig8_quick() {
    quick("acc-fig8");
}

#[test]
fn acc_fig9_quick() {
    // The N = 2 mix's long-flow CoV is left to the full run (the 78 ms flow still climbs at
    // 50 s).
    quick_leaving_to_the_full_run(
        "acc-fig9",
        &["N=2 DropTail/AVD mix: coefficient of variation of the long flows"],
    );
}

#[test]
fn acc_fig10_quick() {
    quick("acc-fig10");
}

#[test]
fn clcc_fig1_quick() {
    quick("clcc-fig1");
}

#[test]
fn clcc_fig8_quick() {
    quick("clcc-fig8");
}

#[test]
fn clcc_fig9_quick() {
    quick("clcc-fig9");
}

#[test]
fn clcc_fig3_quick() {
    quick("clcc-fig3");
}

#[test]
fn clcc_fig6_quick() {
    quick("clcc-fig6");
}

#[test]
fn clcc_fig7_quick() {
    quick("clcc-fig7");
}

#[test]
fn vegas_rem_fig7_quick() {
    quick("vegas-rem-fig7");
}

#[test]
fn qos_fig4_quick() {
    // A 3000 KB accumulation takes about 330 s to build (the full run gives that limit 600 s
    // and passes): after the quick run's 60 s the FIFO queue at r = 110 Mb/s is about 1100
    // packets, not 3027, and the row is left to the full run.
    quick_leaving_to_the_full_run("qos-fig4", &["A = 3000 KB, FIFO: mean queue"]);
}

#[test]
fn qos_fig5_quick() {
    quick("qos-fig5");
}

#[test]
fn qos_fig6_quick() {
    quick("qos-fig6");
}

#[test]
fn modern_comparison_quick() {
    quick("modern-comparison");
}

#[test]
fn dc_comparison_quick() {
    quick("dc-comparison");
}

#[test]
fn cellular_comparison_quick() {
    quick("cellular-comparison");
}
