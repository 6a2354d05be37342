//! Patching a scenario by key path: `flow.f0.params.weight = 10`,
//! `link."r1->r2".queue.limit = "100pkt"`, `duration = "30s"`.
//!
//! A flow is named by its id, a link by `"from->to"`, an event by its index (`event[0].at`);
//! any other key path is the file's own (`output.window`, `defaults.packet_size`, `seed`).
//! A patch is applied to the scenario written as its file ([`ScenarioSpec::to_toml`]) and read
//! back by the file front end and [`ScenarioSpec::resolve`], so a bad value gets exactly the
//! message the file would give, naming the patched key path. A rejected patch leaves the
//! scenario as it was.
//!
//! A fabric read from a `[topology]` is written back as that table ([`ScenarioSpec::to_toml`]),
//! so a patch of one of its keys (`topology.k = 8`, `topology.link_rate = "40Gbps"`,
//! `topology.core.queue.limit`) generates it again; a generated link patched by name keeps its
//! patch as the fabric's `[topology.links."a->b"]` (one the new fabric does not have is an
//! error naming it).

use crate::error::ScenarioError;
use crate::file::def_from_table;
use crate::scenario::Scenario;
use crate::spec::{key_segments, Fault, Item, ScenarioSpec};

/// The items a key path names by kind and name or index: `flow.ID`, `link."a->b"`, `event[N]`,
/// `shared_buffer[N]`.
const ITEMS: [&str; 4] = ["flow", "link", "event", "shared_buffer"];

impl ScenarioSpec {
    /// Checks the scenario and builds the model; an error names the key path as a patch writes
    /// it (`flow.f0.params.weight`).
    pub fn build(&self) -> Result<Scenario, ScenarioError> {
        self.resolve().map_err(|f| self.named_error(f))
    }

    fn named_error(&self, f: Fault) -> ScenarioError {
        ScenarioError {
            file: self.name.clone(),
            line: None,
            key: self.key_of(f.item, &f.key),
            message: f.message,
        }
    }

    /// Sets the value at `key` (see the module documentation) and checks the whole scenario.
    pub fn set(&mut self, key: &str, value: toml::Value) -> Result<(), ScenarioError> {
        self.set_all(&[(key.to_string(), value)])
    }

    /// Sets every `(key, value)` in turn and then checks the whole scenario once, so that
    /// values that only fit together (a shorter `duration` and its `output.window`) can be set
    /// together. A rejected patch leaves the scenario as it was.
    pub fn set_all(&mut self, values: &[(String, toml::Value)]) -> Result<(), ScenarioError> {
        let mut table = self.to_table();
        for (key, value) in values {
            self.put_at(&mut table, key, value.clone())?;
        }
        // A link patched before that the fabric patched now does not make: the fault of the
        // fabric's patch (one that names `topology.links` itself is its own).
        let fabric_patch = values
            .iter()
            .find(|(k, _)| k.starts_with("topology") && !k.starts_with("topology.links"));
        let def = def_from_table(table, &self.name).map_err(|e| match fabric_patch {
            Some((key, _)) if e.key.starts_with("topology.links.") => ScenarioError {
                key: key.clone(),
                message: format!(
                    "{} was patched before, and the fabric patched this way does not make it",
                    self.rename_indices(&e.key)
                ),
                ..e
            },
            _ => ScenarioError {
                key: self.rename_indices(&e.key),
                ..e
            },
        })?;
        def.resolve().map_err(|f| def.named_error(f))?;
        *self = def;
        Ok(())
    }

    /// Puts `value` at `key` in `table` (this scenario as a table).
    fn put_at(
        &self,
        table: &mut toml::Table,
        key: &str,
        value: toml::Value,
    ) -> Result<(), ScenarioError> {
        let err = |message: String| ScenarioError {
            file: self.name.clone(),
            line: None,
            key: key.to_string(),
            message,
        };
        let segments = key_segments(key);
        let (item, rest) = self.item_of(&segments).map_err(err)?;
        let generated = self.fabric.0.as_ref().map_or(0, |g| g.links);
        let target: &mut toml::Value = match item {
            Item::Top => table
                .entry(segments[0].clone())
                .or_insert_with(|| toml::Value::Table(Default::default())),
            // A generated link's values are its fabric's `[topology.links."a->b"]`; a key
            // patched there starts from the link's whole value (a queue's kind with its limit).
            Item::Link(i) if i < generated => {
                let name = self.links[i].name();
                let head = rest.first().cloned().unwrap_or_default();
                let toml::Value::Table(now) =
                    toml::Value::try_from(&self.links[i]).expect("a link always writes")
                else {
                    unreachable!("a link writes as a table")
                };
                let values = table["topology"]
                    .as_table_mut()
                    .expect("a fabric writes its [topology]")
                    .entry("links")
                    .or_insert_with(|| toml::Value::Table(Default::default()))
                    .as_table_mut()
                    .expect("links is a table")
                    .entry(name)
                    .or_insert_with(|| toml::Value::Table(Default::default()));
                if let (Some(t), Some(v)) = (values.as_table_mut(), now.get(&head)) {
                    t.entry(head.clone()).or_insert_with(|| v.clone());
                }
                values
            }
            Item::Link(i) => &mut table["link"][i - generated],
            Item::Flow(i) => &mut table["flow"][i],
            Item::Event(i) => &mut table["event"][i],
            Item::SharedBuffer(i) if self.fabric.0.as_ref().and_then(|g| g.pool) == Some(i) => {
                if rest.first().is_some_and(|k| k == "nodes") {
                    return Err(err(
                        "the fabric's pool is every switch's: its nodes are the fabric's".into(),
                    ));
                }
                &mut table["topology"]["shared_buffer"]
            }
            Item::SharedBuffer(i) => &mut table["shared_buffer"][i],
        };
        let rest = match item {
            Item::Top => &segments[1..],
            _ => rest,
        };
        if rest.is_empty() && item != Item::Top {
            return Err(err(
                "name a key of it, e.g. `flow.f0.start` or `link.\"a->b\".rate`".into(),
            ));
        }
        put(target, rest, value).map_err(err)
    }

    /// [`set`](Self::set) with the value written as in a file (`10`, `"10Mbps"`, `[1, 2]`) or
    /// bare (`10Mbps`, `avq`: a string), as on a command line.
    pub fn set_str(&mut self, key: &str, value: &str) -> Result<(), ScenarioError> {
        self.set(key, value_of(value))
    }

    /// Which item `segments` start with, and the segments inside it.
    fn item_of<'s>(&self, segments: &'s [String]) -> Result<(Item, &'s [String]), String> {
        let (kind, name) = match segments {
            [] => return Err("empty key".into()),
            [kind, name, ..] if ITEMS.contains(&kind.as_str()) => (kind, name),
            [kind, ..] if kind == "topology" && self.fabric.0.is_none() => {
                return Err(
                    "the scenario has no [topology] to patch: its links are listed one by one \
                     (as in one the builder made); patch them by name (`link.\"edge0_0->h0\".rate`)"
                        .into(),
                )
            }
            [kind] if ITEMS.contains(&kind.as_str()) => {
                return Err(format!(
                    "name the {kind}: `flow.ID.key`, `link.\"a->b\".key`, `event[N].key` or `shared_buffer[N].key`"
                ))
            }
            _ => return Ok((Item::Top, segments)),
        };
        let rest = &segments[2..];
        let item = match kind.as_str() {
            "flow" => self
                .flows
                .iter()
                .position(|f| &f.id == name)
                .map(Item::Flow)
                .ok_or_else(|| format!("no flow {name:?} in the scenario"))?,
            "link" => self
                .links
                .iter()
                .position(|l| &l.name() == name)
                .map(Item::Link)
                .ok_or_else(|| format!("no link {name:?} in the scenario (links are \"a->b\")"))?,
            // Tables without a name, by index: `shared_buffer[0]`, `event[2]`.
            kind => {
                let (len, item): (usize, fn(usize) -> Item) = match kind {
                    "shared_buffer" => (self.shared_buffers.len(), Item::SharedBuffer),
                    _ => (self.events.len(), Item::Event),
                };
                name.parse::<usize>()
                    .ok()
                    .filter(|&i| i < len)
                    .map(item)
                    .ok_or_else(|| format!("no {kind}[{name}] (the scenario has {len})"))?
            }
        };
        Ok((item, rest))
    }

    /// `flow[3].params.x` (the file's index form) → `flow.f3.params.x` (the patch's);
    /// `topology.links."a->b".rate` → `link."a->b".rate`.
    fn rename_indices(&self, key: &str) -> String {
        if let Some(link) = key.strip_prefix("topology.links.") {
            return format!("link.{link}");
        }
        let generated = self.fabric.0.as_ref().map_or(0, |g| g.links);
        let segments = key_segments(key);
        let named = match segments.as_slice() {
            [kind, i, ..] => match (kind.as_str(), i.parse::<usize>()) {
                ("flow", Ok(i)) if i < self.flows.len() => Some(Item::Flow(i)),
                // The written links are those after the fabric's.
                ("link", Ok(i)) if i + generated < self.links.len() => {
                    Some(Item::Link(i + generated))
                }
                _ => None,
            },
            _ => None,
        };
        match named {
            Some(item) => {
                let head = format!("{}[{}]", segments[0], segments[1]);
                let rest = key[head.len()..].trim_start_matches('.');
                self.key_of(item, rest)
            }
            None => key.to_string(),
        }
    }
}

/// Puts `value` at `path` inside `at`, making the tables on the way.
fn put(at: &mut toml::Value, path: &[String], value: toml::Value) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *at = value;
        return Ok(());
    };
    let next = match at {
        toml::Value::Table(t) => t
            .entry(first.clone())
            .or_insert_with(|| toml::Value::Table(Default::default())),
        toml::Value::Array(a) => {
            let n = a.len();
            first
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get_mut(i))
                .ok_or_else(|| format!("no element {first} in a list of {n}"))?
        }
        other => {
            return Err(format!(
                "{first}: inside a {}, not a table",
                other.type_str()
            ))
        }
    };
    put(next, rest, value)
}

/// A value as written on a command line: TOML (`10`, `"10Mbps"`, `[1, 2]`, `true`) or else a
/// bare string (`10Mbps`, `avq`).
pub fn value_of(text: &str) -> toml::Value {
    format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}
