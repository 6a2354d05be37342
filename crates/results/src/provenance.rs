//! How a run was made, kept beside its results (issue 54 §1): every run directory holds the
//! effective scenario as run (`scenario.toml`: the file with its `--set` patches and the seed
//! applied, the files it names made absolute — `acclab run scenario.toml` in that directory
//! gives the same run) and `provenance.json` (the command line, the seed, acclab's version and
//! the commit it was built from, the machine, when it started); summary.json points to both.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The effective scenario's file in a run directory.
pub const SCENARIO_FILE: &str = "scenario.toml";
/// The provenance record's file in a run directory.
pub const RECORD_FILE: &str = "provenance.json";

/// acclab's version and the commit it was built from ("unknown" outside a git checkout).
pub fn build() -> String {
    format!("{}+{}", env!("CARGO_PKG_VERSION"), env!("ACCLAB_COMMIT"))
}

/// What summary.json says about the run's provenance: where its files are.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProvenanceRef {
    pub scenario: String,
    pub record: String,
}

impl Default for ProvenanceRef {
    fn default() -> ProvenanceRef {
        ProvenanceRef {
            scenario: SCENARIO_FILE.into(),
            record: RECORD_FILE.into(),
        }
    }
}

/// A run's provenance, written into its directory before it starts.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// The effective scenario, as TOML.
    pub scenario_toml: String,
    /// provenance.json's content.
    pub record: serde_json::Value,
}

impl Provenance {
    /// The provenance of a run of `scenario_toml` with `seed` (None: the scenario's own, for a
    /// sweep's base), started by `command` (the
    /// program's arguments, or a description of the API call), from `scenario_file` (the file
    /// given, if any) patched with `set`.
    pub fn new(
        scenario_toml: String,
        seed: Option<u64>,
        command: Vec<String>,
        scenario_file: Option<&Path>,
        set: &[String],
    ) -> Provenance {
        let mut record = record(command);
        record.extend([
            (
                "scenario_file".into(),
                serde_json::json!(scenario_file.map(|p| p.display().to_string())),
            ),
            ("set".into(), serde_json::json!(set)),
            ("seed".into(), serde_json::json!(seed)),
            (
                "effective_scenario".into(),
                serde_json::json!(SCENARIO_FILE),
            ),
        ]);
        let record = serde_json::Value::Object(record);
        Provenance {
            scenario_toml,
            record,
        }
    }

    /// The provenance of a run of `def` (with `seed`, if given; a sweep's base has none): the
    /// effective scenario with its seed and the files it names made absolute, so that it
    /// loads from anywhere.
    pub fn of_spec(
        def: &acclab_scenario::ScenarioSpec,
        seed: Option<u64>,
        command: Vec<String>,
        scenario_file: Option<&Path>,
        set: &[String],
    ) -> Provenance {
        let mut effective = def.with_absolute_paths();
        if seed.is_some() {
            effective.seed = seed;
        }
        Provenance::new(
            effective.to_toml(),
            effective.seed,
            command,
            scenario_file,
            set,
        )
    }

    /// Writes scenario.toml and provenance.json into `dir`, each whole or not at all.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let head = format!(
            "# The effective scenario of this run ({}): `acclab run {SCENARIO_FILE}` here\n\
             # repeats it. How it was started: {RECORD_FILE}.\n",
            build()
        );
        crate::files::write_atomic(
            &dir.join(SCENARIO_FILE),
            format!("{head}{}", self.scenario_toml).as_bytes(),
        )?;
        write_record(dir, &self.record)
    }
}

/// What every provenance record holds: acclab's version and commit, the command (the
/// program's arguments, or a description of the API call), the working directory, when it
/// started and the machine. A run's record adds its scenario, seed and patches; a
/// reproduction's, the experiment.
pub fn record(command: Vec<String>) -> serde_json::Map<String, serde_json::Value> {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let serde_json::Value::Object(map) = serde_json::json!({
        "acclab": {
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("ACCLAB_COMMIT"),
        },
        "command": command,
        "cwd": std::env::current_dir().ok().map(|d| d.display().to_string()),
        "started_unix_s": started,
        "machine": machine(),
    }) else {
        unreachable!("a JSON object literal")
    };
    map
}

/// Writes a provenance record as `provenance.json` into `dir`, whole or not at all.
pub fn write_record(dir: &Path, record: &serde_json::Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
    crate::files::write_atomic(&dir.join(RECORD_FILE), format!("{text}\n").as_bytes())
}

/// The machine: host name, OS, architecture, logical CPUs, CPU model and memory (from /proc
/// where there is one).
pub fn machine() -> serde_json::Value {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let field = |text: &Option<String>, key: &str| {
        text.as_deref().and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
    };
    let cpuinfo = read("/proc/cpuinfo");
    let meminfo = read("/proc/meminfo");
    let mem_gb = field(&meminfo, "MemTotal")
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0);
    serde_json::json!({
        "hostname": read("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "cpu_model": field(&cpuinfo, "model name"),
        "memory_gb": mem_gb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_files_are_written_and_the_record_says_how() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Provenance::new(
            "name = \"x\"\n".into(),
            Some(7),
            vec!["acclab".into(), "run".into(), "x.toml".into()],
            Some(Path::new("x.toml")),
            &["seed=7".into()],
        );
        p.write(tmp.path()).unwrap();
        let toml = std::fs::read_to_string(tmp.path().join(SCENARIO_FILE)).unwrap();
        assert!(toml.starts_with("# The effective scenario") && toml.ends_with("name = \"x\"\n"));
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(RECORD_FILE)).unwrap())
                .unwrap();
        assert_eq!(rec["seed"], 7);
        assert_eq!(rec["command"][1], "run");
        assert_eq!(rec["acclab"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(rec["machine"]["cpus"].as_u64().unwrap() >= 1);
        assert!(build().starts_with(env!("CARGO_PKG_VERSION")));
    }
}
