//! Every rejected scenario names the file, a line, and a real key path — checked on thousands of
//! seeded, structure-aware mutations of the repository's own scenario files: values replaced by
//! bad ones, keys dropped, duplicated or misspelt, tables duplicated, syntax broken.

use std::path::PathBuf;

use acclab_scenario::parse;

/// The scenario files small enough to mutate many times.
fn sources() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut out = Vec::new();
    for dir in ["examples", "repro"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            if p.extension().is_some_and(|x| x == "toml") && text.len() < 6000 {
                out.push((p.display().to_string(), text));
            }
        }
    }
    out.sort();
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Values that are wrong for most keys, in different ways.
const BAD_VALUES: &[&str] = &[
    "\"60sec\"",
    "-4",
    "\"1%\"",
    "[20, 60]",
    "[\"1s\", \"2s\", \"3s\"]",
    "nan",
    "inf",
    "-inf",
    "\"abc\"",
    "true",
    "{}",
    "{ kind = \"nope\" }",
    "\"0s\"",
    "0",
    "\"-1Mbps\"",
    "1e308",
    "\"\"",
    "\"x{i+y}\"",
    "\"r{j}\"",
    "4294967296",
    "\"1e30Gbps\"",
    "\"10Mbs\"",
    "\"inf\"",
    "[]",
    "\"a->b\"",
];

/// One structure-aware mutation of `src`.
fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    let assignments: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let t = lines[i].trim_start();
            !t.starts_with('#') && !t.starts_with('[') && t.contains('=')
        })
        .collect();
    let headers: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with('['))
        .collect();
    let i = *rng.pick(&assignments);
    let (key, value) = {
        let (k, v) = lines[i].split_once('=').unwrap();
        (k.trim().to_string(), v.trim().to_string())
    };
    match rng.below(10) {
        // A bad value for the key.
        0..=3 => lines[i] = format!("{key} = {}", rng.pick(BAD_VALUES)),
        // A bad value inside an inline table or list.
        4 if value.starts_with('{') || value.starts_with('[') => {
            let inner: Vec<&str> = value
                .trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .collect();
            let part = rng.pick(&inner).to_string();
            let replaced = match part.split_once('=') {
                Some((k, _)) => format!("{} = {}", k.trim(), rng.pick(BAD_VALUES)),
                None => rng.pick(BAD_VALUES).to_string(),
            };
            lines[i] = lines[i].replacen(part.trim(), &replaced, 1);
        }
        // A key dropped (a required one is then missing).
        4 | 5 => {
            lines.remove(i);
        }
        // A key written twice.
        6 => {
            let l = lines[i].clone();
            lines.insert(i + 1, l);
        }
        // A misspelt key.
        7 => lines[i] = format!("{key}x = {value}"),
        // A table declared twice, or a stray header.
        8 if !headers.is_empty() => {
            let h = lines[*rng.pick(&headers)].clone();
            let at = rng.below(lines.len() + 1);
            lines.insert(at, h);
        }
        // Broken syntax.
        _ => {
            let l = &lines[i];
            lines[i] = match rng.below(3) {
                0 => l[..l.len() - 1].to_string(),
                1 => format!("{l} {key}"),
                _ => l.replacen('=', "", 1),
            };
        }
    }
    lines.join("\n") + "\n"
}

/// A key path as acclab writes it: `a.b[2].c`, segments of letters, digits, `_` and `-`.
fn is_key_path(k: &str) -> bool {
    let mut segments = 0;
    for seg in k.split('.') {
        let name = match seg.split_once('[') {
            Some((name, index)) => {
                let ok = index.split('[').all(|ix| {
                    ix.strip_suffix(']')
                        .is_some_and(|d| d.parse::<usize>().is_ok())
                });
                if !ok {
                    return false;
                }
                name
            }
            None => seg,
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return false;
        }
        segments += 1;
    }
    segments > 0
}

#[test]
fn every_rejected_mutation_names_file_line_and_key() {
    let sources = sources();
    assert!(sources.len() >= 20, "{} sources", sources.len());
    let mut rng = Rng(0x5eed_acc1_ab00_0019);
    let (mut rejected, mut accepted) = (0, 0);
    let mut failures = Vec::new();
    for n in 0..6000 {
        let (name, src) = &sources[n % sources.len()];
        let text = mutate(&mut rng, src);
        let e = match parse(&text, "m.toml") {
            Ok(_) => {
                accepted += 1;
                continue;
            }
            Err(e) => e,
        };
        rejected += 1;
        let lines: Vec<&str> = text.lines().collect();
        let problem = if e.file != "m.toml" {
            Some("wrong file")
        } else if !e.line.is_some_and(|l| l >= 1 && l <= lines.len()) {
            Some("no line, or a line past the end")
        } else if !is_key_path(&e.key) {
            Some("not a key path")
        } else {
            // The line named writes the key, or is the header of the table that holds it; a
            // missing key is reported where its table is written (a missing top-level key, on
            // the first line).
            let line = lines[e.line.unwrap() - 1];
            let names: Vec<&str> = e
                .key
                .split(['.', '[', ']'])
                .filter(|s| !s.is_empty() && s.parse::<usize>().is_err())
                .collect();
            let last = names.last().copied().unwrap_or("");
            let header = line.trim_start().starts_with('[') && line.contains(names[0]);
            let missing = e.message.contains("missing");
            let holder = match names.len() {
                1 => e.line == Some(1),
                n => line.contains(names[n - 2]),
            };
            let ok = line.contains(last) || header || (missing && holder);
            (!ok).then_some("the line does not write the key")
        };
        if let Some(p) = problem {
            failures.push(format!("{name} (mutation {n}): {p}: {e}\n{text}"));
        }
    }
    eprintln!("{rejected} mutations rejected, {accepted} accepted");
    assert!(
        rejected > 3000,
        "only {rejected} of 6000 mutations rejected"
    );
    assert!(
        failures.is_empty(),
        "{} of {rejected} errors break the file:line:key shape; the first:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n---\n")
    );
}
