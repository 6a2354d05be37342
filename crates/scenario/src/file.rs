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

use std::ops::Range;
use std::path::Path;

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::{Bytes, Duration, Rate};
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::ScenarioError;
use crate::routing::Ecmp;
use crate::scenario::Scenario;
use crate::spec::{
    join_key, key_segments, DefaultsSpec, EventSpec, EventSpecAction, FlowSpec, Item, LinkSpec,
    OutputSpec, RoutingSpec, ScenarioSpec, TraceSpec,
};
use crate::topology::{Shape, Tier, TierLinks};
use crate::workload::{Pattern, WorkloadSpec};

// ---------------------------------------------------------------------------------------------
// The file as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    duration: Duration,
    seed: Option<u64>,
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    routing: RawRouting,
    /// A generated fabric (see [`crate::topology`]), expanded into links before `[[link]]`'s.
    topology: Option<RawTopology>,
    #[serde(default)]
    link: Vec<RawLink>,
    #[serde(default)]
    flow: Vec<RawFlow>,
    #[serde(default)]
    workload: Vec<RawWorkload>,
    #[serde(default)]
    event: Vec<RawEvent>,
    #[serde(default)]
    output: RawOutput,
    /// A sweep over this scenario (`acclab sweep`; see [`crate::sweep_spec`]); a run ignores it.
    #[allow(dead_code)]
    sweep: Option<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    packet_size: Option<Bytes>,
    ack_size: Option<Bytes>,
    queue: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    // A list rather than `[String; 2]`, so that a third node is an error, not dropped.
    between: Option<Vec<String>>,
    from: Option<String>,
    to: Option<String>,
    rate: Rate,
    delay: Duration,
    queue: Option<toml::Table>,
    loss: Option<f64>,
    count: Option<u32>,
    first: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRouting {
    #[serde(default)]
    ecmp: Ecmp,
}

/// `[topology]`: a fabric's shape (the keys of its kind), its links' rate, delay and queue, and
/// per-tier overrides (`host = { rate = "25Gbps" }`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: String,
    k: Option<u32>,
    oversubscription: Option<u32>,
    leaves: Option<u32>,
    spines: Option<u32>,
    hosts_per_leaf: Option<u32>,
    link_rate: Rate,
    link_delay: Duration,
    queue: Option<toml::Table>,
    host: Option<RawTier>,
    aggregation: Option<RawTier>,
    core: Option<RawTier>,
    spine: Option<RawTier>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTier {
    rate: Option<Rate>,
    delay: Option<Duration>,
    queue: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    id: String,
    kind: String,
    from: String,
    to: String,
    start: Option<Duration>,
    start_jitter: Option<Duration>,
    stop: Option<Duration>,
    params: Option<toml::Table>,
    class: Option<String>,
    path: Option<Vec<String>>,
    count: Option<u32>,
    first: Option<u32>,
}

/// `[[workload]]`: see [`crate::workload`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    id: String,
    kind: String,
    params: Option<toml::Table>,
    sizes: Option<String>,
    load: Option<f64>,
    #[serde(default)]
    pattern: Pattern,
    senders: Option<u32>,
    receiver: Option<String>,
    size: Option<Bytes>,
    period: Option<Duration>,
    file: Option<String>,
    #[serde(default)]
    hosts: Vec<String>,
    start: Option<Duration>,
    stop: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at: Duration,
    set_delay: Option<RawSetDelay>,
    set_rate: Option<RawSetRate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetDelay {
    link: String,
    delay: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetRate {
    link: String,
    rate: Rate,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    // A list rather than `[Duration; 2]`, so that a third value is an error, not dropped.
    window: Option<Vec<Duration>>,
    sample_interval: Option<Duration>,
    trace: Option<TraceSpec>,
    #[serde(default)]
    plot_links: Vec<String>,
    fct_buckets: Option<Vec<Bytes>>,
}

// ---------------------------------------------------------------------------------------------
// Entry points.

/// Reads and validates a scenario file. Files it names (a workload's traffic file) are relative
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
        for w in &mut self.workloads {
            let sizes = w
                .sizes
                .as_mut()
                .filter(|s| crate::workload::is_path(s.as_str()));
            for f in w.file.iter_mut().chain(sizes) {
                if Path::new(f.as_str()).is_relative() {
                    *f = dir.join(&*f).display().to_string();
                }
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

// ---------------------------------------------------------------------------------------------
// Errors: key paths and lines.

/// An error at `key` of scenario text, on the line the key path leads to.
pub(crate) fn located_error(src: &str, file: &str, key: String, message: String) -> ScenarioError {
    located(src, file, None, key, message)
}

/// An error at `key`, on the line of `span` if known, else on the line the key path leads to.
fn located(
    src: &str,
    file: &str,
    span: Option<Range<usize>>,
    key: String,
    message: String,
) -> ScenarioError {
    let span = span.or_else(|| {
        let (doc, _) = DeTable::parse_recoverable(src);
        locate(doc.get_ref(), &key).or(Some(doc.span()))
    });
    ScenarioError {
        file: file.to_string(),
        line: span.map(|s| line_of(src, s.start)),
        key,
        message,
    }
}

/// A serde error: the key path it happened at (plus the missing field, for "missing field").
fn serde_error(
    e: serde_path_to_error::Error<toml::de::Error>,
    src: &str,
    file: &str,
    span: Option<Range<usize>>,
) -> ScenarioError {
    let message = e.inner().message().trim().to_string();
    let key = match e.path().to_string() {
        p if p == "." => String::new(),
        p => p,
    };
    let key = with_missing_field(&key, &message);
    if src.is_empty() {
        return ScenarioError {
            file: file.to_string(),
            line: None,
            key,
            message,
        };
    }
    located(src, file, span, key, message)
}

/// `key`, or for a "missing field `x`" message the key of the missing field, `key.x`.
fn with_missing_field(key: &str, message: &str) -> String {
    match message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next())
    {
        Some(field) => join_key(key, field),
        None => key.to_string(),
    }
}

/// A TOML syntax error: the key is the table the error is in, plus the key being written on the
/// offending line, if any (e.g. `link[1].rate` for a duplicate `rate`, `output` for a duplicate
/// `[output]`).
fn syntax_error(src: &str, file: &str, e: &toml::de::Error) -> ScenarioError {
    let at = e.span().map_or(src.len(), |s| s.start.min(src.len()));
    let line = line_of(src, at);
    let column = at - src[..at].rfind('\n').map_or(0, |n| n + 1);
    ScenarioError {
        file: file.to_string(),
        line: Some(line),
        key: key_at(src, line, column),
        message: e.message().trim().to_string(),
    }
}

/// 1-based line of byte `offset`.
fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    src.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key path at byte `column` of `line` of a TOML file: the enclosing table header (with the
/// index of an array of tables), then the key written there — inside inline tables and arrays
/// on the line (`queue.limit`, `classes[1].name`) or, failing that, the line's first key.
fn key_at(src: &str, line: usize, column: usize) -> String {
    let mut table = String::new();
    let mut arrays: std::collections::BTreeMap<String, usize> = Default::default();
    for (n, text) in src.lines().enumerate() {
        let t = text.trim();
        let header = t
            .strip_prefix("[[")
            .and_then(|r| r.split("]]").next())
            .map(|h| (h.trim().to_string(), true))
            .or_else(|| {
                t.strip_prefix('[')
                    .and_then(|r| r.split(']').next())
                    .map(|h| (h.trim().to_string(), false))
            });
        if let Some((name, array)) = header {
            table = match array {
                true => {
                    let k = arrays
                        .entry(name.clone())
                        .and_modify(|k| *k += 1)
                        .or_insert(0);
                    format!("{name}[{k}]")
                }
                false => name,
            };
            if n + 1 == line {
                return table;
            }
            continue;
        }
        if n + 1 == line {
            // The key the line starts with (before its `=`, or where the `=` should be).
            let first: String = t
                .chars()
                .take_while(|&c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                .collect();
            let key = inline_key(text, column).or(Some(first).filter(|k| !k.is_empty()));
            return match (table.is_empty(), key) {
                (true, Some(k)) => k,
                (false, Some(k)) => format!("{table}.{k}"),
                (false, None) => table,
                (true, None) => String::new(),
            };
        }
    }
    table
}

/// The key path, inside the line's own inline tables and arrays, of the key that starts at or
/// spans byte `column` of `text` (`queue.limit` for the second `limit` of
/// `queue = { limit = 1, limit = 2 }`); `None` when no key is there.
fn inline_key(text: &str, column: usize) -> Option<String> {
    // Each open `{` or `[` on the line: the key path of its value, and an array's element index.
    let mut open: Vec<(String, Option<usize>)> = Vec::new();
    let mut pending = String::new(); // the last key written before an `=`
    let value_path = |open: &[(String, Option<usize>)], pending: &str| match open.last() {
        Some((p, Some(i))) => format!("{p}[{i}]"),
        Some((p, None)) => join_key(p, pending),
        None => pending.to_string(),
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' => {
                // A string, or a quoted key: skip to its end.
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    i += if c == b'"' && bytes[i] == b'\\' { 2 } else { 1 };
                }
                if start <= column && column <= i {
                    return None;
                }
            }
            b'{' | b'[' => {
                let path = value_path(&open, &pending);
                open.push((path, (c == b'[').then_some(0)));
            }
            b'}' | b']' => {
                open.pop();
            }
            b',' => {
                if let Some((_, Some(k))) = open.last_mut() {
                    *k += 1;
                }
            }
            b'#' => return None,
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || b"_-.".contains(&bytes[i]))
                {
                    i += 1;
                }
                let token = &text[start..i];
                let is_key = text[i..].trim_start().starts_with('=');
                if is_key {
                    if (start..i.max(start + 1)).contains(&column) {
                        let table = match open.last() {
                            Some((p, Some(k))) => format!("{p}[{k}]"),
                            Some((p, None)) => p.clone(),
                            None => String::new(),
                        };
                        return Some(join_key(&table, token));
                    }
                    pending = token.to_string();
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The key path and span of the first TOML date-time in `table` (under `prefix`): no key of a
/// scenario takes one, and serde would otherwise read it as the text of a string key.
fn first_datetime(table: &DeTable, prefix: &str) -> Option<(String, Range<usize>)> {
    fn walk(v: &Spanned<DeValue>, key: String) -> Option<(String, Range<usize>)> {
        match v.get_ref() {
            DeValue::Datetime(_) => Some((key, v.span())),
            DeValue::Table(t) => first_datetime(t, &key),
            DeValue::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, format!("{key}[{i}]"))),
            _ => None,
        }
    }
    table
        .iter()
        .find_map(|(k, v)| walk(v, join_key(prefix, &crate::spec::quote_key(k.get_ref()))))
}

/// The line of the value at the key path given as `segments` (each a key as written, quotes
/// and dots inside it kept: `["sweep", "set", "link.\"a->b\".rate"]`).
pub(crate) fn line_of_key(src: &str, segments: &[&str]) -> Option<usize> {
    let doc = DeTable::parse(src).ok()?;
    let (first, rest) = segments.split_first()?;
    let mut at = doc.get_ref().iter().find(|(k, _)| k.get_ref() == first)?.1;
    for seg in rest {
        let DeValue::Table(t) = at.get_ref() else {
            return None;
        };
        at = t.iter().find(|(k, _)| k.get_ref() == seg)?.1;
    }
    Some(line_of(src, at.span().start))
}

/// The span of the value at `key` (`flow[2].params.weight`) in `doc`, or of the deepest table
/// on the way that exists.
fn locate(doc: &DeTable, key: &str) -> Option<Range<usize>> {
    let mut segments = key_segments(key).into_iter();
    let first = segments.next()?;
    let mut at: &Spanned<DeValue> = doc.iter().find(|(k, _)| k.get_ref() == &first)?.1;
    let mut span = at.span();
    for seg in segments {
        let next = match (at.get_ref(), seg.parse::<usize>()) {
            (DeValue::Array(a), Ok(i)) => a.get(i),
            (DeValue::Table(t), _) => t.iter().find(|(k, _)| k.get_ref() == &seg).map(|(_, v)| v),
            _ => None,
        };
        match next {
            Some(v) => {
                at = v;
                span = v.span();
            }
            None => break,
        }
    }
    Some(span)
}

/// Where each entry of a [`ScenarioSpec`] made from a file came from, to name its keys.
struct Origins {
    links: Vec<LinkOrigin>,
    /// For each flow: the `[[flow]]` it came from.
    flows: Vec<usize>,
}

/// Where a link came from.
#[derive(Clone, Copy)]
enum LinkOrigin {
    /// The `[[link]]` at this index, and whether it used `between`.
    Table(usize, bool),
    /// `[topology]`, tier `tier`; `own[0..3]`: whether the tier's table sets its own rate, delay,
    /// queue.
    Topology { tier: Tier, own: [bool; 3] },
}

impl Origins {
    fn file_key(&self, item: Item, key: &str) -> String {
        match item {
            Item::Top => key.to_string(),
            Item::Link(i) => match self.links[i] {
                LinkOrigin::Table(n, between) => {
                    let key = match key {
                        "from" | "to" if between => "between",
                        k => k,
                    };
                    join_key(&format!("link[{n}]"), key)
                }
                LinkOrigin::Topology { tier, own } => {
                    let head = key_segments(key).first().cloned().unwrap_or_default();
                    let (at, top) = match head.as_str() {
                        "rate" => (own[0], "link_rate"),
                        "delay" => (own[1], "link_delay"),
                        "queue" => (own[2], "queue"),
                        _ => return "topology".into(),
                    };
                    match at {
                        true => join_key(&format!("topology.{}", tier.key()), key),
                        false => join_key("topology", &format!("{top}{}", &key[head.len()..])),
                    }
                }
            },
            Item::Flow(i) => join_key(&format!("flow[{}]", self.flows[i]), key),
            Item::Event(i) => join_key(&format!("event[{i}]"), key),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Expansion: groups, placeholders, tagged tables.

/// A finding of expansion: the key path and what is wrong (the caller adds file and line).
type Finding = (String, String);

fn expand(raw: RawScenario) -> Result<(ScenarioSpec, Origins), Finding> {
    let default_queue = raw
        .defaults
        .queue
        .map(|t| queue_config(t, "defaults.queue"))
        .transpose()?;
    let mut origins = Origins {
        links: Vec::new(),
        flows: Vec::new(),
    };
    // Bound what the groups expand to before expanding them (`count = 4294967295` would
    // otherwise fill memory while reading the file).
    for (key, count) in raw
        .link
        .iter()
        .enumerate()
        .map(|(n, l)| (format!("link[{n}].count"), l.count))
        .chain(
            raw.flow
                .iter()
                .enumerate()
                .map(|(n, f)| (format!("flow[{n}].count"), f.count)),
        )
    {
        group(count, None, &key)?;
    }
    let fabric = match raw.topology {
        Some(t) => fabric(t, &default_queue)?,
        None => Vec::new(),
    };
    // The group at which the members pass the bound is the one named (`flow[3].count`).
    let mut members = fabric.len() as u64;
    let groups = raw
        .link
        .iter()
        .enumerate()
        .map(|(n, l)| {
            let per = if l.between.is_some() { 2 } else { 1 };
            (format!("link[{n}]"), u64::from(l.count.unwrap_or(1)) * per)
        })
        .chain(
            raw.flow
                .iter()
                .enumerate()
                .map(|(n, f)| (format!("flow[{n}]"), u64::from(f.count.unwrap_or(1)))),
        );
    for (table, size) in groups {
        members += size;
        if members > MAX_MEMBERS {
            return Err((
                format!("{table}.count"),
                format!(
                    "with this group the groups expand to {members} links and flows; a scenario may have at most {MAX_MEMBERS}"
                ),
            ));
        }
    }
    let mut links = Vec::with_capacity(fabric.len());
    for (origin, l) in fabric {
        links.push(l);
        origins.links.push(origin);
    }
    for (n, l) in raw.link.into_iter().enumerate() {
        let key = |k: &str| format!("link[{n}].{k}");
        let ends: Vec<(String, String, &str, &str)> = match (l.between, l.from, l.to) {
            (Some(b), None, None) if b.len() != 2 => {
                return Err((
                    key("between"),
                    format!("give exactly two nodes, [a, b], not {}", b.len()),
                ))
            }
            (Some(b), None, None) => {
                let [a, z]: [String; 2] = b.try_into().expect("two nodes, checked above");
                vec![
                    (a.clone(), z.clone(), "between", "between"),
                    (z, a, "between", "between"),
                ]
            }
            (None, Some(a), Some(z)) => vec![(a, z, "from", "to")],
            _ => {
                return Err((
                    format!("link[{n}]"),
                    "give either `between = [a, b]` (both directions) or both `from` and `to`"
                        .into(),
                ))
            }
        };
        let queue = match l.queue {
            Some(t) => queue_config(t, &key("queue"))?,
            None => default_queue
                .clone()
                .unwrap_or_else(QueueConfig::default_queue),
        };
        let between = ends.len() == 2;
        for i in group(l.count, l.first, &key("count"))? {
            for (a, z, ka, kz) in &ends {
                links.push(LinkSpec {
                    from: subst(a, i, &key(ka))?,
                    to: subst(z, i, &key(kz))?,
                    rate: l.rate,
                    delay: l.delay,
                    queue: queue.clone(),
                    loss: l.loss.unwrap_or(0.0),
                });
                origins.links.push(LinkOrigin::Table(n, between));
            }
        }
    }
    let mut flows = Vec::new();
    for (n, f) in raw.flow.into_iter().enumerate() {
        let key = |k: &str| format!("flow[{n}].{k}");
        let members = group(f.count, f.first, &key("count"))?;
        let first_id = subst(&f.id, members.start, &key("id"))?;
        let scheme = scheme(
            &f.kind,
            f.params.unwrap_or_default(),
            &key("params"),
            &first_id,
        )?;
        for i in members {
            let path = match &f.path {
                Some(p) => Some(
                    p.iter()
                        .map(|s| subst(s, i, &key("path")))
                        .collect::<Result<_, _>>()?,
                ),
                None => None,
            };
            flows.push(FlowSpec {
                id: subst(&f.id, i, &key("id"))?,
                scheme: scheme.clone(),
                from: subst(&f.from, i, &key("from"))?,
                to: subst(&f.to, i, &key("to"))?,
                start: f.start,
                start_jitter: f.start_jitter,
                stop: f.stop,
                class: match &f.class {
                    Some(c) => Some(subst(c, i, &key("class"))?),
                    None => None,
                },
                path,
            });
            origins.flows.push(n);
        }
    }
    let workloads = raw
        .workload
        .into_iter()
        .enumerate()
        .map(|(n, w)| {
            let key = format!("workload[{n}].params");
            Ok(WorkloadSpec {
                scheme: scheme(&w.kind, w.params.unwrap_or_default(), &key, &w.id)?,
                id: w.id,
                sizes: w.sizes,
                load: w.load,
                pattern: w.pattern,
                senders: w.senders,
                receiver: w.receiver,
                size: w.size,
                period: w.period,
                file: w.file,
                hosts: w.hosts,
                start: w.start,
                stop: w.stop,
            })
        })
        .collect::<Result<_, Finding>>()?;
    let events = raw
        .event
        .into_iter()
        .enumerate()
        .map(|(n, e)| {
            let action = match (e.set_delay, e.set_rate) {
                (Some(d), None) => EventSpecAction::SetDelay {
                    link: d.link,
                    delay: d.delay,
                },
                (None, Some(r)) => EventSpecAction::SetRate {
                    link: r.link,
                    rate: r.rate,
                },
                _ => {
                    return Err((
                        format!("event[{n}]"),
                        "give exactly one of `set_delay` or `set_rate`".into(),
                    ))
                }
            };
            Ok(EventSpec { at: e.at, action })
        })
        .collect::<Result<_, Finding>>()?;
    let window = match raw.output.window {
        None => None,
        Some(w) => match w[..] {
            [a, b] => Some([a, b]),
            _ => {
                return Err((
                    "output.window".into(),
                    format!("give two times, [from, to], not {}", w.len()),
                ))
            }
        },
    };
    let def = ScenarioSpec {
        name: raw.name,
        duration: raw.duration,
        seed: raw.seed,
        defaults: DefaultsSpec {
            packet_size: raw.defaults.packet_size,
            ack_size: raw.defaults.ack_size,
            queue: default_queue,
        },
        routing: RoutingSpec {
            ecmp: raw.routing.ecmp,
        },
        links,
        flows,
        workloads,
        events,
        output: OutputSpec {
            window,
            sample_interval: raw.output.sample_interval,
            trace: raw.output.trace,
            plot_links: raw.output.plot_links,
            fct_buckets: raw.output.fct_buckets,
        },
    };
    Ok((def, origins))
}

/// `[topology]` into its links (see [`crate::topology`]), each with its origin.
fn fabric(
    t: RawTopology,
    default_queue: &Option<QueueConfig>,
) -> Result<Vec<(LinkOrigin, LinkSpec)>, Finding> {
    let key = |k: &str| format!("topology.{k}");
    let sizes = [
        ("k", t.k),
        ("oversubscription", t.oversubscription),
        ("leaves", t.leaves),
        ("spines", t.spines),
        ("hosts_per_leaf", t.hosts_per_leaf),
    ];
    let (shape, own_keys): (Shape, &[&str]) = match t.kind.as_str() {
        "fat-tree" => (
            Shape::FatTree {
                k: t.k
                    .ok_or_else(|| (key("k"), "missing: the fat-tree's arity".into()))?,
                oversubscription: t.oversubscription.unwrap_or(1),
            },
            &["k", "oversubscription"],
        ),
        "leaf-spine" => {
            let need = |v: Option<u32>, k: &str| {
                v.ok_or_else(|| (key(k), format!("missing: a leaf-spine needs `{k}`")))
            };
            (
                Shape::LeafSpine {
                    leaves: need(t.leaves, "leaves")?,
                    spines: need(t.spines, "spines")?,
                    hosts_per_leaf: need(t.hosts_per_leaf, "hosts_per_leaf")?,
                },
                &["leaves", "spines", "hosts_per_leaf"],
            )
        }
        other => {
            return Err((
                key("kind"),
                format!("unknown topology kind {other:?}; one of fat-tree, leaf-spine"),
            ))
        }
    };
    for (k, v) in sizes {
        if v.is_some() && !own_keys.contains(&k) {
            return Err((
                key(k),
                format!(
                    "is not a key of kind = {:?} (its keys: {})",
                    t.kind,
                    own_keys.join(", ")
                ),
            ));
        }
    }
    shape.validate().map_err(|(k, m)| (key(k), m))?;
    let queue = match t.queue {
        Some(q) => queue_config(q, &key("queue"))?,
        None => default_queue
            .clone()
            .unwrap_or_else(QueueConfig::default_queue),
    };
    let base = TierLinks {
        rate: t.link_rate,
        delay: t.link_delay,
        queue,
    };
    let mut tiers = std::collections::BTreeMap::new();
    for (tier, raw) in [
        (Tier::Host, t.host),
        (Tier::Aggregation, t.aggregation),
        (Tier::Core, t.core),
        (Tier::Spine, t.spine),
    ] {
        let Some(raw) = raw else { continue };
        if !shape.tiers().contains(&tier) {
            let names: Vec<&str> = shape.tiers().iter().map(|t| t.key()).collect();
            return Err((
                key(tier.key()),
                format!(
                    "a {} has no tier {:?} (its tiers: {})",
                    shape.kind(),
                    tier.key(),
                    names.join(", ")
                ),
            ));
        }
        let own = [raw.rate.is_some(), raw.delay.is_some(), raw.queue.is_some()];
        let links = TierLinks {
            rate: raw.rate.unwrap_or(base.rate),
            delay: raw.delay.unwrap_or(base.delay),
            queue: match raw.queue {
                Some(q) => queue_config(q, &key(&format!("{}.queue", tier.key())))?,
                None => base.queue.clone(),
            },
        };
        tiers.insert(tier, (links, own));
    }
    if 2 * shape.cables() > MAX_MEMBERS {
        return Err((
            "topology".into(),
            format!(
                "expands to {} links; a scenario may have at most {MAX_MEMBERS}",
                2 * shape.cables()
            ),
        ));
    }
    let links = shape.generate(&|tier| match tiers.get(&tier) {
        Some((l, _)) => l.clone(),
        None => base.clone(),
    });
    Ok(links
        .into_iter()
        .map(|(tier, l)| {
            let own = tiers.get(&tier).map_or([false; 3], |(_, own)| *own);
            (LinkOrigin::Topology { tier, own }, l)
        })
        .collect())
}

/// The most links (each direction one) and flows a scenario's groups may expand to.
pub const MAX_MEMBERS: u64 = 2_000_000;

/// Indices of a group: `count` members numbered from `first` (default 0); one member otherwise.
fn group(count: Option<u32>, first: Option<u32>, key: &str) -> Result<Range<u32>, Finding> {
    let first = first.unwrap_or(0);
    let count = count.unwrap_or(1);
    if u64::from(count) > MAX_MEMBERS {
        return Err((
            key.to_string(),
            format!("must be in [0, {MAX_MEMBERS}], not {count}"),
        ));
    }
    match first.checked_add(count) {
        Some(end) => Ok(first..end),
        None => Err((
            key.to_string(),
            format!("members {first} to {first} + {count} run past {}", u32::MAX),
        )),
    }
}

/// Replaces the placeholders of a group member: `{i}`, and `{i+N}`, `{i-N}`, `{i*N}`,
/// `{i*N+M}`, `{i*N-M}` with whole numbers N, M. Anything else in braces is an error.
fn subst(s: &str, i: u32, key: &str) -> Result<String, Finding> {
    if !s.contains(['{', '}']) {
        return Ok(s.to_string());
    }
    let bad = |what: &str| {
        (
            key.to_string(),
            format!(
                "{what} in {s:?}: placeholders are {{i}}, {{i+N}}, {{i-N}}, {{i*N}}, {{i*N+M}} \
                 and {{i*N-M}} with whole numbers N, M"
            ),
        )
    };
    let mut out = String::with_capacity(s.len() + 4);
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| bad("an unclosed `{`"))?;
        let expr: String = rest[open + 1..open + close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let value = placeholder(&expr, i as i64)
            .ok_or_else(|| bad(&format!("unknown placeholder {{{expr}}}")))?;
        if value < 0 {
            return Err(bad(&format!(
                "{{{expr}}} is {value} for member {i}, below zero"
            )));
        }
        out.push_str(&value.to_string());
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') {
        return Err(bad("an unopened `}`"));
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of `i`, `i+N`, `i-N`, `i*N`, `i*N+M` or `i*N-M`.
fn placeholder(expr: &str, i: i64) -> Option<i64> {
    let rest = expr.strip_prefix('i')?;
    let number = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (scaled, rest) = match rest.strip_prefix('*') {
        Some(r) => {
            let end = r.find(['+', '-']).unwrap_or(r.len());
            (i.checked_mul(number(&r[..end])?)?, &r[end..])
        }
        None => (i, rest),
    };
    match rest.chars().next() {
        None => Some(scaled),
        Some('+') => scaled.checked_add(number(&rest[1..])?),
        Some('-') => scaled.checked_sub(number(&rest[1..])?),
        _ => None,
    }
}

/// Reads a tagged parameter table into `T` with `from_kind`; an error names the full key path
/// of the offending parameter (`prefix.key`).
fn tagged<T>(
    prefix: &str,
    kind: &str,
    params: toml::Table,
    from_kind: impl FnOnce(
        &str,
        serde_path_to_error::Deserializer<'_, '_, toml::Value>,
    ) -> Result<T, toml::de::Error>,
) -> Result<T, Finding> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(params), &mut track);
    from_kind(kind, de).map_err(|e| {
        let path = track.path().to_string();
        let key = match path.as_str() {
            "." | "" => prefix.to_string(),
            p => format!("{prefix}.{p}"),
        };
        let message = e.message().trim().to_string();
        (with_missing_field(&key, &message), message)
    })
}

/// A `queue = { kind = …, … }` table at `key`, read (validation is [`ScenarioSpec::resolve`]'s).
fn queue_config(mut params: toml::Table, key: &str) -> Result<QueueConfig, Finding> {
    let kind_key = format!("{key}.kind");
    let kind = match params.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(_) => return Err((kind_key, "must be a string".into())),
        None => {
            return Err((
                kind_key,
                format!("missing; one of {}", QueueConfig::KINDS.join(", ")),
            ))
        }
    };
    tagged(key, &kind, params, |k, d| QueueConfig::from_kind(k, d)).map_err(|(k, message)| {
        // An unknown `kind` is reported at the table itself (no parameter was read yet); an
        // unknown variant of a parameter (`avd_stamp = "some"`) at that parameter.
        match message.starts_with("unknown variant") && k == key {
            true => (kind_key.clone(), message),
            false => (k, message),
        }
    })
}

/// `kind` + `params` of flow `id` into the scheme enum (validation is `resolve`'s).
fn scheme(kind: &str, params: toml::Table, key: &str, id: &str) -> Result<SchemeConfig, Finding> {
    if !SchemeConfig::KINDS.contains(&kind) {
        return Err((
            key.replace("params", "kind"),
            format!(
                "flow {id:?}: unknown kind {kind:?}, expected one of {}",
                SchemeConfig::KINDS.join(", ")
            ),
        ));
    }
    tagged(key, kind, params, |k, d| SchemeConfig::from_kind(k, d))
        .map_err(|(k, message)| (k, format!("flow {id:?}: {message}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        let s = |t: &str, i| subst(t, i, "k");
        assert_eq!(s("h{i}", 3).unwrap(), "h3");
        assert_eq!(s("r{i+1}-{i - 1}", 3).unwrap(), "r4-2");
        assert_eq!(s("n{i*2}x{i*2+1}y{i*3-1}", 4).unwrap(), "n8x9y11");
        assert_eq!(s("plain", 4).unwrap(), "plain");
        for bad in ["r{j}", "r{i+}", "r{i/2}", "r{i", "r}", "r{2*i}", "r{i-5}"] {
            let e = s(bad, 3).unwrap_err();
            assert_eq!(e.0, "k");
            assert!(e.1.contains("placeholders are"), "{bad}: {}", e.1);
        }
    }

    #[test]
    fn the_key_of_a_line() {
        let src = "name = \"x\"\n[[link]]\nrate = 1\n[[link]]\nrate = 2\n[output]\nwindow = 3\n";
        assert_eq!(key_at(src, 1, 0), "name");
        assert_eq!(key_at(src, 3, 0), "link[0].rate");
        assert_eq!(key_at(src, 4, 0), "link[1]");
        assert_eq!(key_at(src, 5, 0), "link[1].rate");
        assert_eq!(key_at(src, 7, 0), "output.window");
        // Inside inline tables and arrays of them (issue 55 §6: a duplicate key there was
        // reported as its table's).
        let src = "[[link]]\nqueue = { kind = \"red\", limit = 1, limit = 2 }\n\
                   q = { classes = [{ name = \"a\" }, { c = 1, name = \"b\" }] }\n";
        let col = |line: &str, pat: &str| line.rfind(pat).unwrap();
        let l2 = src.lines().nth(1).unwrap();
        assert_eq!(key_at(src, 2, col(l2, "limit")), "link[0].queue.limit");
        assert_eq!(key_at(src, 2, 0), "link[0].queue");
        let l3 = src.lines().nth(2).unwrap();
        assert_eq!(key_at(src, 3, col(l3, "name")), "link[0].q.classes[1].name");
    }
}
