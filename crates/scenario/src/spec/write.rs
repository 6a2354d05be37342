//! A [`ScenarioSpec`] written back as a scenario file, with only the keys that differ from their
//! defaults.

use std::collections::BTreeMap;

use acclab_core::config::{QueueConfig, SchemeConfig};

use super::ScenarioSpec;

impl ScenarioSpec {
    /// The scenario as a TOML file: every group expanded, one `[[link]]` per direction, and
    /// only the keys that differ from their defaults. Loading it gives this `ScenarioSpec` again.
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.to_table()).expect("a TOML table always serialises")
    }

    /// The scenario as the TOML table [`to_toml`](Self::to_toml) writes. A scheme's `params` and
    /// a queue's table hold only the parameters that differ from the kind's defaults, so that
    /// a patch of `kind` carries over what was chosen, not what was defaulted.
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::try_from(self)
            .expect("a scenario always serialises: string keys, finite values");
        let mut memo = Memo::default();
        // Flows' and workloads' schemes alike.
        for key in ["flow", "workload"] {
            for flow in tables_in(&mut t, key) {
                let kind = flow
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .unwrap_or("")
                    .to_string();
                if let Some(toml::Value::Table(p)) = flow.get_mut("params") {
                    memo.strip(p, &kind, |k, v| SchemeConfig::from_kind(k, v).ok());
                    if p.is_empty() {
                        flow.remove("params");
                    }
                }
            }
        }
        for link in tables_in(&mut t, "link") {
            if let Some(toml::Value::Table(q)) = link.get_mut("queue") {
                memo.strip_queue(q);
            }
        }
        if let Some(toml::Value::Table(d)) = t.get_mut("defaults") {
            if let Some(toml::Value::Table(q)) = d.get_mut("queue") {
                memo.strip_queue(q);
            }
        }
        self.fabric_to_table(&mut t);
        t
    }

    /// A fabric read from a `[topology]` is written back as that table, not link by link: its
    /// links that differ from what it generates (patched since) as `[topology.links."a->b"]`
    /// with the keys that differ, its pool (patched since, maybe) as its `shared_buffer`.
    fn fabric_to_table(&self, t: &mut toml::Table) {
        let Some(g) = &self.fabric.0 else {
            return;
        };
        let (made, _) = crate::file::regenerate(g.table.clone(), &self.defaults.queue)
            .expect("the fabric was generated from this table");
        let mut topology = g.table.clone();
        let Some(toml::Value::Array(mut written)) = t.remove("link") else {
            unreachable!("a fabric has links")
        };
        let rest = written.split_off(g.links);
        let as_table = |v: toml::Value| match v {
            toml::Value::Table(t) => t,
            _ => unreachable!("a link writes as a table"),
        };
        for ((made, now), table) in made.iter().zip(&self.links).zip(written) {
            if made == now {
                continue;
            }
            let written = |l: &super::LinkSpec| {
                as_table(toml::Value::try_from(l).expect("a link always writes"))
            };
            let (made, now_table) = (written(made), written(now));
            let values = topology
                .entry("links")
                .or_insert_with(|| toml::Value::Table(Default::default()))
                .as_table_mut()
                .expect("links is a table")
                .entry(now.name())
                .or_insert_with(|| toml::Value::Table(Default::default()))
                .as_table_mut()
                .expect("a link's values are a table");
            for (k, v) in as_table(table) {
                if !matches!(k.as_str(), "from" | "to") && made.get(&k) != now_table.get(&k) {
                    values.insert(k, v);
                }
            }
        }
        if !rest.is_empty() {
            t.insert("link".into(), toml::Value::Array(rest));
        }
        if let Some(i) = g.pool {
            let params = toml::Value::try_from(&self.shared_buffers[i].params)
                .expect("a pool's parameters write");
            topology.insert("shared_buffer".into(), params);
            if let Some(toml::Value::Array(pools)) = t.get_mut("shared_buffer") {
                pools.remove(i);
                if pools.is_empty() {
                    t.remove("shared_buffer");
                }
            }
        }
        t.insert("topology".into(), toml::Value::Table(topology));
    }
}

/// The tables of the array `key` of `t`.
fn tables_in<'t>(t: &'t mut toml::Table, key: &str) -> Vec<&'t mut toml::Table> {
    match t.get_mut(key) {
        Some(toml::Value::Array(a)) => a.iter_mut().filter_map(|v| v.as_table_mut()).collect(),
        _ => Vec::new(),
    }
}

/// Parameter tables already stripped of their defaults, by kind and text (the flows of a group
/// share theirs).
#[derive(Default)]
struct Memo(BTreeMap<(String, String), toml::Table>);

impl Memo {
    /// A queue table (`kind` and its parameters) without the parameters at their defaults.
    fn strip_queue(&mut self, q: &mut toml::Table) {
        let Some(toml::Value::String(kind)) = q.remove("kind") else {
            return;
        };
        self.strip(q, &kind, |k, v| QueueConfig::from_kind(k, v).ok());
        q.insert("kind".into(), toml::Value::String(kind));
    }

    /// Removes from `t` every key whose removal reads back, with `read`, as the same parameters:
    /// the ones at their default.
    fn strip<T: PartialEq>(
        &mut self,
        t: &mut toml::Table,
        kind: &str,
        read: impl Fn(&str, toml::Value) -> Option<T>,
    ) {
        let key = (
            format!("{}:{kind}", std::any::type_name::<T>()),
            t.to_string(),
        );
        if let Some(done) = self.0.get(&key) {
            *t = done.clone();
            return;
        }
        let Some(full) = read(kind, toml::Value::Table(t.clone())) else {
            return;
        };
        let keys: Vec<String> = t.keys().cloned().collect();
        for k in keys {
            let mut without = t.clone();
            without.remove(&k);
            if read(kind, toml::Value::Table(without.clone())).as_ref() == Some(&full) {
                *t = without;
            }
        }
        self.0.insert(key, t.clone());
    }
}
