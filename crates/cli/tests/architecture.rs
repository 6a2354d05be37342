//! The layout keeps its promises: no two source files of a crate import each other (outside
//! their unit tests; `crate::` and `super::` paths alike), and the crates depend on one another
//! as the tier graph below says — the tiers on the scenario model and the results crate, never
//! on each other, with the one exception it names.

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

/// The path that starts at byte `i` of `line`: `a::b::c` of `a::b::c::{…}` or `a::b::c(…)`.
fn path_at(line: &str, i: usize) -> Vec<&str> {
    let end = line[i..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .map_or(line.len(), |n| i + n);
    line[i..end].split("::").filter(|s| !s.is_empty()).collect()
}

/// The modules of its own crate that `text` (the file of module `module`) names as
/// `crate::a::b…` or `super::…` outside comments and its `#[cfg(test)]` part, resolved to the
/// longest known module.
fn imports(text: &str, module: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let here: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut paths: Vec<Vec<String>> = Vec::new();
        for (i, _) in line.match_indices("crate::") {
            let before = line[..i].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue; // `acclab_crate::`, not this crate
            }
            paths.push(path_at(line, i + 7).iter().map(|s| s.to_string()).collect());
        }
        for (i, _) in line.match_indices("super::") {
            if i >= 2 && &line[i - 2..i] == "::" {
                continue; // the second `super` of `super::super::`, counted with the first
            }
            let segments = path_at(line, i);
            let ups = segments.iter().take_while(|s| **s == "super").count();
            let Some(base) = here.len().checked_sub(ups) else {
                continue;
            };
            let mut path: Vec<String> = here[..base].iter().map(|s| s.to_string()).collect();
            path.extend(segments[ups..].iter().map(|s| s.to_string()));
            paths.push(path);
        }
        for segments in paths {
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
                let mut d = imports(&std::fs::read_to_string(f).unwrap(), m, &names);
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

/// The crates' dependencies on one another, as they must be: a crate, then every acclab crate
/// its `[dependencies]` name (tests and benches may use more).
///
/// - `core` holds the sans-IO state machines; `scenario` the scenario model over them;
///   `results` what every tier's run leaves behind (summary, CSV rows, plots).
/// - The tiers — `sim` (packets), `theory` (equilibria), `model` (fluid dynamics) — depend on
///   those alone, never on one another.
/// - `live` drives the same endpoints over real sockets; its router's emulated network *is* the
///   packet simulator's (SPEC §11: "all from the same crates/core code as the simulator"), so
///   it alone depends on `sim`.
/// - `study` (sweeps), `repro` (the papers' experiments) and `cli` compose the tiers.
const TIER_GRAPH: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("scenario", &["core"]),
    ("results", &["core", "scenario"]),
    ("sim", &["core", "results", "scenario"]),
    ("theory", &["core", "scenario"]),
    ("model", &["core", "results", "scenario"]),
    ("live", &["core", "results", "scenario", "sim"]),
    (
        "study",
        &["core", "model", "results", "scenario", "sim", "theory"],
    ),
    (
        "repro",
        &[
            "core", "live", "model", "results", "scenario", "sim", "study", "theory",
        ],
    ),
    (
        "cli",
        &[
            "core", "live", "model", "repro", "results", "scenario", "sim", "study", "theory",
        ],
    ),
];

/// The acclab crates a manifest's `[dependencies]` section names, without the `acclab-`.
fn acclab_dependencies(manifest: &str) -> Vec<String> {
    let deps = manifest.split("\n[dependencies]").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    let mut out: Vec<String> = deps
        .lines()
        .filter_map(|l| l.trim().strip_prefix("acclab-"))
        .map(|l| l.split(['.', ' ', '=']).next().unwrap_or("").to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn the_crates_depend_on_one_another_as_the_tier_graph_says() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found: Vec<String> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|c| crates.join(c).join("Cargo.toml").is_file())
        .collect();
    found.sort();
    let mut listed: Vec<String> = TIER_GRAPH.iter().map(|(c, _)| c.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "every crate has its place in TIER_GRAPH");
    let mut wrong = Vec::new();
    for (c, expected) in TIER_GRAPH {
        let manifest = std::fs::read_to_string(crates.join(c).join("Cargo.toml")).unwrap();
        let deps = acclab_dependencies(&manifest);
        if deps != *expected {
            wrong.push(format!(
                "{c}: depends on {deps:?}, the graph says {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn super_and_crate_paths_are_both_imports() {
    let modules: BTreeSet<String> = ["a", "a::b", "a::c", "d"].map(String::from).into();
    let text = "use super::c::X;\nuse crate::d;\n// use crate::a;\nlet x = acclab_crate::a;";
    let got = imports(text, "a::b", &modules);
    assert_eq!(got, ["a::c", "d"].map(String::from).into());
    let nested = imports("use super::super::d::Y;", "a::b", &modules);
    assert_eq!(nested, ["d"].map(String::from).into());
}
