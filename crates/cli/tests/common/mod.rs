//! What the command's end-to-end tests share: running `acclab` and reading what it said, and
//! a small scenario. (Each test file uses a part of it.)
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `acclab args…` in `cwd` and waits for it.
pub fn acclab(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acclab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("acclab starts")
}

/// What a finished command printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `acclab args…` in `cwd`, which must succeed; what it said.
pub fn ok(cwd: &Path, args: &[&str]) -> String {
    let o = acclab(cwd, args);
    assert!(o.status.success(), "acclab {args:?}:\n{}", text(&o));
    text(&o)
}

/// Runs `acclab args…` in `cwd`, which must fail with status 1; what it said.
pub fn failed(cwd: &Path, args: &[&str]) -> String {
    let o = acclab(cwd, args);
    assert_eq!(o.status.code(), Some(1), "acclab {args:?}:\n{}", text(&o));
    text(&o)
}

/// `two.toml` in `dir`: two Reno flows over a 50-packet bottleneck, measured over the last second.
pub fn two_flows(dir: &Path) -> String {
    let p = dir.join("two.toml");
    std::fs::write(
        &p,
        r#"
name = "two"
duration = "3s"
[output]
window = ["2s", "3s"]
[[link]]
between = ["s", "r"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["r", "d"]
rate = "20Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "50pkt" }
[[flow]]
id = "alpha"
kind = "reno"
from = "s"
to = "d"
[[flow]]
id = "beta"
kind = "reno"
from = "s"
to = "d"
start = "500ms"
[sweep]
seeds = [1]
[sweep.set]
"flow.beta.start" = ["0s", "1s"]
"#,
    )
    .unwrap();
    p.display().to_string()
}
