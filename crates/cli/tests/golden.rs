//! Every example scenario, simulated, writes exactly the files recorded in tests/golden/examples/
//! (summary.json without its wall-clock line). Part of the safety net of behaviour-preserving
//! changes; `scripts/golden record` re-records after a change whose differences are understood.

use std::path::Path;
use std::process::Command;

fn check_example(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scenario = root.join(format!("scenarios/examples/{name}.toml"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_acclab"))
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .expect("acclab starts");
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for file in ["flows.csv", "links.csv", "summary.json"] {
        let mut produced = std::fs::read_to_string(out.join(file)).unwrap();
        if file == "summary.json" {
            produced = produced
                .lines()
                .filter(|l| !l.contains("\"wall_time_s\""))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        let golden_path = root.join(format!("tests/golden/examples/{name}/{file}"));
        let golden = std::fs::read_to_string(&golden_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (record it with scripts/golden record)",
                golden_path.display()
            )
        });
        if produced != golden {
            let first = produced
                .lines()
                .zip(golden.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{name}/{file} differs from {} at line {}:\n  golden: {}\n  now:    {}",
                golden_path.display(),
                first + 1,
                golden.lines().nth(first).unwrap_or("<end>"),
                produced.lines().nth(first).unwrap_or("<end>")
            );
        }
    }
}

#[test]
fn examples_match_their_golden_outputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "toml" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 5, "examples found: {names:?}");
    for name in names {
        check_example(&name);
    }
}
