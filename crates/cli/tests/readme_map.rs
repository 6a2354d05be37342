//! docs/architecture.md's "Where things live" (linked from the README) cannot drift from the
//! code: every source file and folder it names exists in the crate it is listed under, and
//! every source file of every crate is named there (lib.rs, main.rs, mod.rs and a folder's tests.rs aside: a folder stands for them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The map: the fenced block under the heading.
fn map() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let text = std::fs::read_to_string(readme).unwrap();
    let section = text
        .split("## Where things live")
        .nth(1)
        .expect("docs/architecture.md has a \"Where things live\" section");
    section
        .split("```")
        .nth(1)
        .expect("the section's map is a fenced block")
        .to_string()
}

/// The crate each line of the map is about (`crates/NAME` opens a crate's part), and the file
/// names (`x.rs`) and folder names (`x/`) its lines mention.
fn mentioned(map: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in map.lines() {
        if let Some(rest) = line.strip_prefix("crates/") {
            current = rest.split_whitespace().next().map(String::from);
        } else if !line.starts_with(' ') {
            current = None; // scenarios/, python/, …: not a crate
        }
        let Some(c) = &current else { continue };
        let names = out.entry(c.clone()).or_default();
        for word in line.split(|ch: char| !(ch.is_ascii_alphanumeric() || "_./".contains(ch))) {
            let word = word.trim_end_matches('.');
            let last = word.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            if word.ends_with(".rs") {
                names.insert(last.to_string());
            } else if word.ends_with('/') && !last.is_empty() && last != "src" {
                names.insert(format!("{last}/"));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir` (its name) and every folder (its name and `/`).
fn source_names(dir: &Path, files: &mut BTreeSet<String>, folders: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            folders.insert(format!("{name}/"));
            source_names(&p, files, folders);
        } else if name.ends_with(".rs") {
            files.insert(name);
        }
    }
}

#[test]
fn the_readme_map_names_every_source_file_and_only_files_that_exist() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let map = mentioned(&map());
    let mut problems = Vec::new();
    let mut crate_names: Vec<String> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|c| crates.join(c).join("src").is_dir())
        .collect();
    crate_names.sort();
    for c in &crate_names {
        let (mut files, mut folders) = (BTreeSet::new(), BTreeSet::new());
        source_names(&crates.join(c).join("src"), &mut files, &mut folders);
        let named = map.get(c).cloned().unwrap_or_default();
        if !map.contains_key(c) {
            problems.push(format!("crates/{c} is not in the map"));
        }
        for n in &named {
            if !files.contains(n) && !folders.contains(n) {
                problems.push(format!("crates/{c}: the map names {n}, which is not there"));
            }
        }
        for f in &files {
            if !["lib.rs", "main.rs", "mod.rs", "tests.rs"].contains(&f.as_str())
                && !named.contains(f)
            {
                problems.push(format!("crates/{c}: src/…/{f} is not in the map"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/architecture.md's \"Where things live\" is out of date:\n{}",
        problems.join("\n")
    );
}
