//! Every reproduction's quick variant runs and passes its checks.

use acclab_repro::{find, registry, Ctx};

fn quick(id: &str) {
    let e = find(id).unwrap_or_else(|| panic!("{id} is not registered"));
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        quick: true,
        out: dir.path().to_path_buf(),
        progress: &|_, _| {},
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
    for f in &report.files {
        assert!(
            dir.path().join(f).exists(),
            "{id} claims {f} but did not write it"
        );
    }
    report.write(dir.path()).unwrap();
    assert!(dir.path().join("comparison.csv").exists());
}

#[test]
fn registry_ids_are_unique_and_documented() {
    let ids: Vec<&str> = registry().iter().map(|e| e.id()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "duplicate IDs: {ids:?}");
    // The product definition lives beside the repository (../shared); check against it when
    // it is there (it is in CI).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/EXPERIMENTS.md"
    );
    match std::fs::read_to_string(path) {
        Ok(experiments) => {
            for id in ids {
                assert!(
                    experiments.contains(&format!("| {id} |")),
                    "{id} is not an EXPERIMENTS.md row"
                );
            }
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
