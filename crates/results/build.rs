//! The commit acclab is built from, for the provenance every run records
//! (src/provenance.rs): `git rev-parse HEAD` at build time, "unknown" outside a git checkout.

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let commit = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ACCLAB_COMMIT={commit}");
    // Built again when HEAD moves (a commit, a checkout).
    let git = root.join(".git");
    for f in ["HEAD", "refs/heads", "packed-refs"] {
        let p = git.join(f);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
