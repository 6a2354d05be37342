//! Scenario files (SPEC §9): TOML in, a [`ScenarioSpec`] and then a validated [`Scenario`] out.
//!
//! The key names are a contract shared with tools outside the project. Reading happens in three
//! steps: serde reads the file into `Raw*` structs (unknown keys, bad units and wrong types fail
//! here, with the key path from `serde_path_to_error`); the groups (`count`, `first`, `{i}`) are
//! expanded and the `kind`-tagged tables read into the algorithms' parameter structs, giving a
//! [`ScenarioSpec`]; and [`ScenarioSpec::resolve`] checks names, routes, times and parameters and
//! builds the scenario the tiers run. Every error names the file, the line and the key path
//! (`flow[2].params.weight`, `link[0].queue.classes[1].f_max`, `output.window`). Lines are found
//! only when there is an error, by looking the key path up in the parsed document, so the
//! structs carry no spans. Nothing is guessed and the run does not start.

mod expand;
mod fabric;
mod locate;
mod origins;
mod raw;
mod tables;

use std::path::Path;

use toml::de::DeTable;

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::spec::ScenarioSpec;
use expand::expand;
pub(crate) use fabric::regenerate;
use locate::{first_datetime, located, serde_error, syntax_error};
pub(crate) use locate::{line_of_key, located_error};
use origins::Origins;
use raw::RawScenario;
pub use tables::MAX_MEMBERS;

/// Reads and validates a scenario file. Files it names (a workload's traffic file, a link's
/// capacity trace) are relative
/// to its directory.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    parse_at(&read(path)?, &file, path.parent())
}

/// Parses scenario text; `file` names it in errors. Files it names are relative to the current
/// directory.
pub fn parse(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_at(src, file, None)
}

/// [`parse`] of the text of a file in `dir`: the files it names are relative to `dir`.
pub(crate) fn parse_at(
    src: &str,
    file: &str,
    dir: Option<&Path>,
) -> Result<Scenario, ScenarioError> {
    let (mut def, origins) = parse_with_origins(src, file)?;
    def.relative_to(dir);
    def.resolve().map_err(|f| {
        let key = origins.file_key(f.item, &f.key);
        located(src, file, None, key, f.message)
    })
}

/// Reads a scenario file into its [`ScenarioSpec`] (checked as far as reading goes: keys, types,
/// units, groups, parameter tables), for patching before it is resolved. Files it names are
/// made relative to its directory.
pub fn load_spec(path: &Path) -> Result<ScenarioSpec, ScenarioError> {
    let file = path.display().to_string();
    parse_spec_at(&read(path)?, &file, path.parent())
}

/// [`parse_spec`] of the text of a file in `dir`: the files it names are relative to `dir`.
pub(crate) fn parse_spec_at(
    src: &str,
    file: &str,
    dir: Option<&Path>,
) -> Result<ScenarioSpec, ScenarioError> {
    let mut def = parse_spec(src, file)?;
    def.relative_to(dir);
    Ok(def)
}

impl ScenarioSpec {
    /// Makes the relative paths of the files this scenario names relative to `dir` (the
    /// directory of the scenario file), so that the scenario resolves from any directory.
    fn relative_to(&mut self, dir: Option<&Path>) {
        let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) else {
            return;
        };
        self.map_relative_paths(|f| dir.join(f));
    }

    /// This scenario with the relative paths of the files it names made absolute (from the
    /// current directory): what a run directory keeps as its effective scenario, which must
    /// load from anywhere.
    pub fn with_absolute_paths(&self) -> ScenarioSpec {
        let mut def = self.clone();
        def.map_relative_paths(|f| std::path::absolute(f).unwrap_or_else(|_| f.to_path_buf()));
        def
    }

    /// Replaces each relative path of a file this scenario names (capacity and delay traces,
    /// workload traffic files and size distributions) by `f` of it.
    fn map_relative_paths(&mut self, f: impl Fn(&Path) -> std::path::PathBuf) {
        let traces = self
            .links
            .iter_mut()
            .flat_map(|l| [l.rate.trace_mut(), l.delay.trace_mut()])
            .flatten();
        let workloads = self.workloads.iter_mut().flat_map(|w| {
            let sizes = w
                .sizes
                .as_mut()
                .filter(|s| crate::workload::is_path(s.as_str()));
            w.file.iter_mut().chain(sizes)
        });
        for p in traces.chain(workloads) {
            if Path::new(p.as_str()).is_relative() {
                *p = f(Path::new(p.as_str())).display().to_string();
            }
        }
    }
}

/// Scenario text into its [`ScenarioSpec`]; see [`load_spec`].
pub fn parse_spec(src: &str, file: &str) -> Result<ScenarioSpec, ScenarioError> {
    parse_with_origins(src, file).map(|(def, _)| def)
}

/// A scenario given as a TOML table (e.g. a patched [`ScenarioSpec::to_toml`]) into its
/// [`ScenarioSpec`]. Errors name the key path; there are no lines. The groups a file may use are
/// allowed here too.
pub(crate) fn def_from_table(
    table: toml::Table,
    file: &str,
) -> Result<ScenarioSpec, ScenarioError> {
    let raw: RawScenario = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| serde_error(e, "", file, None))?;
    expand(raw)
        .map(|(def, _)| def)
        .map_err(|(key, message)| ScenarioError {
            file: file.to_string(),
            line: None,
            key,
            message,
        })
}

/// One `[[workload]]` table, its keys as in a file (the Python builder's `workload`); the error
/// names the key.
pub fn workload_from_table(t: toml::Table) -> Result<crate::WorkloadSpec, String> {
    let raw: raw::RawWorkload = toml::Value::Table(t)
        .try_into()
        .map_err(|e: toml::de::Error| format!("workload: {}", e.message()))?;
    expand::workload(raw, "workload").map_err(|(k, m)| format!("{k}: {m}"))
}

/// The largest scenario file read: 16 MiB (a 10,000-flow file written flow by flow is ~2 MB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a scenario file, refusing one larger than [`MAX_FILE_BYTES`] before reading it whole
/// (or, for a stream such as /dev/zero whose size is unknown, as soon as it passes the bound).
pub(crate) fn read(path: &Path) -> Result<String, ScenarioError> {
    use std::io::Read;
    let error = |message: String| ScenarioError {
        file: path.display().to_string(),
        line: None,
        key: String::new(),
        message,
    };
    let file =
        std::fs::File::open(path).map_err(|e| error(format!("cannot read the file: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(error(format!(
            "the file is larger than {} MiB; a scenario file that large is not one (use groups, `count = N`, for many links or flows)",
            MAX_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        // Where the first bad byte is, as an editor counts: line, and column in characters.
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        ScenarioError {
            line: Some(line),
            ..error(format!(
                "the file is not UTF-8 text: byte 0x{:02x} at column {column} (save it as UTF-8)",
                e.as_bytes()[good.len()]
            ))
        }
    })
}

fn parse_with_origins(src: &str, file: &str) -> Result<(ScenarioSpec, Origins), ScenarioError> {
    let doc = DeTable::parse(src).map_err(|e| syntax_error(src, file, &e))?;
    if let Some((key, span)) = first_datetime(doc.get_ref(), "") {
        return Err(located(
            src,
            file,
            Some(span),
            key,
            "a TOML date or time literal is no value of a scenario: write durations as strings with a unit (\"10s\") and text in quotes".into(),
        ));
    }
    let raw: RawScenario = serde_path_to_error::deserialize(toml::Deserializer::from(doc))
        .map_err(|e| {
            let span = e.inner().span();
            serde_error(e, src, file, span)
        })?;
    expand(raw).map_err(|(key, message)| located(src, file, None, key, message))
}
