//! docs/tutorial.md works as written: each `acclab` command of its `sh` blocks runs, in order,
//! from a directory laid out as the repository's root (its `scenarios/`), and every line of the
//! `text` block after a command (but lines cut with "…") is in what the command printed — so
//! the numbers the tutorial quotes are the ones a run gives.

use std::path::Path;
use std::process::Command;

/// The tutorial's commands, each with the output it quotes (if any).
fn steps(md: &str) -> Vec<(String, Vec<String>)> {
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    let mut block: Option<&str> = None;
    for line in md.lines() {
        match (block, line.strip_prefix("```")) {
            (None, Some(kind)) => block = Some(if kind.is_empty() { "plain" } else { kind }),
            (Some(_), Some("")) => block = None,
            (Some("sh"), None) if line.starts_with("acclab ") => {
                steps.push((line.to_string(), Vec::new()))
            }
            (Some("text"), None) if !line.contains('…') && !line.trim().is_empty() => {
                if let Some(s) = steps.last_mut() {
                    s.1.push(line.trim_end().to_string());
                }
            }
            _ => {}
        }
    }
    steps
}

#[test]
fn the_tutorial_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let md = std::fs::read_to_string(root.join("docs/tutorial.md")).unwrap();
    let steps = steps(&md);
    assert!(steps.len() >= 6, "the tutorial's commands: {steps:?}");
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize(root.join("scenarios")).unwrap(),
        tmp.path().join("scenarios"),
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_acclab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (command, quoted) in steps {
        let o = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env("PATH", &path)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{command}:\n{said}");
        for line in quoted {
            assert!(
                said.contains(&line),
                "{command} did not print the tutorial's line\n{line}\nbut:\n{said}"
            );
        }
    }
    assert!(tmp
        .path()
        .join("results/sweeps/parking-lot/report/index.html")
        .is_file());
    assert!(tmp
        .path()
        .join("results/sweeps/parking-lot/figures/throughput_bps-vs-r1-_r2.rate.pdf")
        .is_file());
}
