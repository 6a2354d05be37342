//! What the command's end-to-end tests share: running `acclab` and reading what it said.

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
