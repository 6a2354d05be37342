//! Every example scenario, simulated, writes exactly the files recorded in tests/golden/examples/
//! (summary.json without its wall-clock line) — serially, and on 2 and 3 threads (the parallel
//! engine gives the serial run's results). Part of the safety net of behaviour-preserving
//! changes; `scripts/golden record` re-records after a change whose differences are understood.
//! (`./test` also checks the quick reproductions' goldens on 2 and 3 threads.)

use std::path::Path;
use std::process::Command;

/// Runs example `name` on `threads` threads and checks its files; returns why the run was
/// serial when it was asked to be parallel and could not be (the note `acclab run` prints).
fn check_example(name: &str, threads: usize) -> Option<String> {
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
        .arg(format!("--threads={threads}"))
        .env_remove("ACCLAB_THREADS")
        .output()
        .expect("acclab starts");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name}: {stderr}");
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
                "{name}/{file} on {threads} thread(s) differs from {} at line {}:\n  golden: {}\n  now:    {}",
                golden_path.display(),
                first + 1,
                golden.lines().nth(first).unwrap_or("<end>"),
                produced.lines().nth(first).unwrap_or("<end>")
            );
        }
    }
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("note: the run was serial, not on "))
        .map(str::to_string)
}

fn examples() -> Vec<String> {
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
    names
}

#[test]
fn examples_match_their_golden_outputs() {
    for name in examples() {
        assert_eq!(check_example(&name, 1), None);
    }
}

/// On 2 and 3 threads, the same files; every example runs in parallel but the cellular one,
/// a single bottleneck whose network is one partition.
#[test]
fn examples_match_their_golden_outputs_on_2_and_3_threads() {
    for threads in [2, 3] {
        for name in examples() {
            let serial = check_example(&name, threads);
            match name.as_str() {
                "cellular" => assert!(
                    serial
                        .as_deref()
                        .is_some_and(|w| w.contains("a single partition")),
                    "{name} on {threads} threads: {serial:?}"
                ),
                _ => assert_eq!(serial, None, "{name} on {threads} threads"),
            }
        }
    }
}
