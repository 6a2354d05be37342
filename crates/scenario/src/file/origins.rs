//! Where each entry of a spec read from a file came from, to name its keys in errors.

use crate::spec::{join_key, key_segments, quote_key, Item};
use crate::topology::Tier;

/// Where each entry of a [`ScenarioSpec`] made from a file came from, to name its keys.
pub(super) struct Origins {
    pub(super) links: Vec<LinkOrigin>,
    /// For each flow: the `[[flow]]` it came from.
    pub(super) flows: Vec<usize>,
    /// Whether the last shared buffer is `[topology]`'s `shared_buffer` (the others are
    /// `[[shared_buffer]]`s, in order).
    pub(super) fabric_buffer: bool,
    /// How many shared buffers there are.
    pub(super) buffers: usize,
}

/// Where a link came from.
#[derive(Clone)]
pub(super) enum LinkOrigin {
    /// The `[[link]]` at this index, and whether it used `between`.
    Table(usize, bool),
    /// `[topology]`, tier `tier`; `own[0..3]`: whether the tier's table sets its own rate, delay,
    /// queue; `values`: the keys `[topology.links."a->b"]` sets for this link, and its name.
    Topology {
        tier: Tier,
        own: [bool; 3],
        values: Option<(String, Vec<&'static str>)>,
    },
}

impl Origins {
    pub(super) fn file_key(&self, item: Item, key: &str) -> String {
        match item {
            Item::Top => key.to_string(),
            Item::Link(i) => match &self.links[i] {
                &LinkOrigin::Table(n, between) => {
                    let key = match key {
                        "from" | "to" if between => "between",
                        k => k,
                    };
                    join_key(&format!("link[{n}]"), key)
                }
                LinkOrigin::Topology { tier, own, values } => {
                    let head = key_segments(key).first().cloned().unwrap_or_default();
                    if let Some((name, _)) =
                        values.as_ref().filter(|(_, k)| k.contains(&head.as_str()))
                    {
                        return join_key(&format!("topology.links.{}", quote_key(name)), key);
                    }
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
            Item::SharedBuffer(i) if self.fabric_buffer && i + 1 == self.buffers => {
                join_key("topology.shared_buffer", key)
            }
            Item::SharedBuffer(i) => join_key(&format!("shared_buffer[{i}]"), key),
        }
    }
}
