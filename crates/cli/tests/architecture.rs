//! The layout keeps its promises: no two source files of a crate import each other (outside
//! their unit tests), and the tiers depend on the scenario model, not on one another.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `a/b/mod.rs`, `a/b.rs` → `a::b`; `lib.rs`, `main.rs` → ``.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The modules of its own crate that `text` names as `crate::a::b…` outside comments and its
/// `#[cfg(test)]` part, resolved to the longest known module.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let path: String = line[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            for k in (1..=segments.len()).rev() {
                let m = segments[..k].join("::");
                if modules.contains(&m) {
                    out.insert(m);
                    break;
                }
            }
        }
    }
    out
}

#[test]
fn no_two_files_import_each_other() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut pairs = Vec::new();
    let mut checked = 0;
    for c in std::fs::read_dir(&crates).unwrap() {
        let src = c.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|f| (module_of(&src, f), f.clone()))
            .collect();
        let names: BTreeSet<String> = modules.keys().cloned().collect();
        let deps: BTreeMap<&String, BTreeSet<String>> = modules
            .iter()
            .map(|(m, f)| {
                let mut d = imports(&std::fs::read_to_string(f).unwrap(), &names);
                d.remove(m);
                (m, d)
            })
            .collect();
        for (a, da) in &deps {
            for b in da {
                if a.as_str() < b.as_str() && deps.get(b).is_some_and(|db| db.contains(*a)) {
                    pairs.push(format!("{}: {a} <-> {b}", src.display()));
                }
            }
        }
        checked += files.len();
    }
    assert!(checked > 50, "only {checked} files found");
    assert!(
        pairs.is_empty(),
        "files that import each other:\n{}",
        pairs.join("\n")
    );
}

#[test]
fn the_theory_does_not_depend_on_the_simulator() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../theory/Cargo.toml");
    let text = std::fs::read_to_string(manifest).unwrap();
    let deps = text.split("[dependencies]").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    assert!(deps.contains("acclab-scenario"), "{deps}");
    assert!(!deps.contains("acclab-sim"), "{deps}");
}
