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
//! A patch of a `[topology]`'s key (`topology.k = 8`, `topology.link_rate = "40Gbps"`,
//! `topology.core.queue.limit`) generates the fabric again from the table as the file wrote it,
//! patched; the generated links patched by name before keep those patches (a patched link
//! the new fabric does not have is an error), and so does everything else the scenario holds.

use crate::error::ScenarioError;
use crate::file::def_from_table;
use crate::scenario::Scenario;
use crate::spec::{key_segments, quote_key, FabricSource, Fault, Generated, Item, ScenarioSpec};

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
        // The fabric first, so that the other patches apply to the links it makes.
        let (fabric, others): (Vec<_>, Vec<_>) = values
            .iter()
            .partition(|(key, _)| key_segments(key).first().is_some_and(|k| k == "topology"));
        let mut patched = self.clone();
        let carried = if fabric.is_empty() {
            Vec::new()
        } else {
            patched.generate_again(&fabric)?
        };
        let mut table = patched.to_table();
        for (key, value) in carried.iter().chain(others) {
            patched.put_at(&mut table, key, value.clone())?;
        }
        let mut def = def_from_table(table, &self.name).map_err(|e| ScenarioError {
            key: patched.rename_indices(&e.key),
            ..e
        })?;
        def.fabric = patched.fabric;
        def.resolve().map_err(|f| def.named_error(f))?;
        *self = def;
        Ok(())
    }

    /// Generates the fabric again from its `[topology]` with the patches `fabric` (keys
    /// `topology.…`), in place of the links it made before. Returns the patches of those links
    /// made since they were generated, by name, for the caller to apply to the new ones.
    fn generate_again(
        &mut self,
        fabric: &[&(String, toml::Value)],
    ) -> Result<Vec<(String, toml::Value)>, ScenarioError> {
        let first = &fabric[0].0;
        let err = |key: &str, message: String| ScenarioError {
            file: self.name.clone(),
            line: None,
            key: key.to_string(),
            message,
        };
        let Some(was) = self.fabric.0.clone() else {
            return Err(err(
                first,
                "the scenario has no [topology] to patch: its links are listed one by one (as \
                 in a scenario acclab wrote out, e.g. a run's scenario.toml, or one made by the \
                 builder); patch them by name (`link.\"edge0_0->h0\".rate`) or edit the file"
                    .into(),
            ));
        };
        let mut table = toml::Value::Table(was.table.clone());
        for (key, value) in fabric {
            put(&mut table, &key_segments(key)[1..], value.clone()).map_err(|m| err(key, m))?;
        }
        let toml::Value::Table(table) = table else {
            unreachable!("a table patched inside stays a table")
        };
        let (links, pool) = crate::file::regenerate(table.clone(), &self.defaults.queue)
            .map_err(|(key, message)| err(&key, message))?;
        let (before, made_pool) = crate::file::regenerate(was.table.clone(), &self.defaults.queue)
            .expect("the fabric was generated from this table before");
        // What was patched in the links since: every key whose value is not the generated one.
        let mut carried = Vec::new();
        for (made, now) in before.iter().zip(&self.links[..was.links]) {
            if made == now {
                continue;
            }
            let name = now.name();
            let as_table = |l| match toml::Value::try_from(l) {
                Ok(toml::Value::Table(t)) => t,
                _ => unreachable!("a link writes as a table"),
            };
            let (made, now) = (as_table(made), as_table(now));
            let keys: Vec<&String> = now.keys().filter(|k| made.get(*k) != now.get(*k)).collect();
            if !links.iter().any(|l| l.name() == name) {
                return Err(err(
                    first,
                    format!(
                        "link {name:?} was patched ({}), and the fabric patched this way has no such link",
                        keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            for k in keys {
                carried.push((format!("link.{}.{k}", quote_key(&name)), now[k].clone()));
            }
        }
        let count = links.len();
        self.links.splice(..was.links, links);
        let pool = match (was.pool, pool) {
            (Some(i), Some(mut p)) => {
                // A pool patched by index since (`shared_buffer[N].alpha`) keeps that, unless
                // these patches set the pool's own keys.
                let now = &self.shared_buffers[i].params;
                if made_pool.is_some_and(|m| m.params != *now && m.params == p.params) {
                    p.params = self.shared_buffers[i].params.clone();
                }
                self.shared_buffers[i] = p;
                Some(i)
            }
            (None, Some(p)) => {
                self.shared_buffers.push(p);
                Some(self.shared_buffers.len() - 1)
            }
            (Some(i), None) => {
                self.shared_buffers.remove(i);
                None
            }
            (None, None) => None,
        };
        self.fabric = FabricSource(Some(Generated {
            table,
            links: count,
            pool,
        }));
        Ok(carried)
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
        let target: &mut toml::Value = match item {
            Item::Top => table
                .entry(segments[0].clone())
                .or_insert_with(|| toml::Value::Table(Default::default())),
            Item::Link(i) => &mut table["link"][i],
            Item::Flow(i) => &mut table["flow"][i],
            Item::Event(i) => &mut table["event"][i],
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

    /// `flow[3].params.x` (the file's index form) → `flow.f3.params.x` (the patch's).
    fn rename_indices(&self, key: &str) -> String {
        let segments = key_segments(key);
        let named = match segments.as_slice() {
            [kind, i, ..] => match (kind.as_str(), i.parse::<usize>()) {
                ("flow", Ok(i)) if i < self.flows.len() => Some(Item::Flow(i)),
                ("link", Ok(i)) if i < self.links.len() => Some(Item::Link(i)),
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
