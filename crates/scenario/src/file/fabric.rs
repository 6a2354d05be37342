//! `[topology]` read into its generated links (see [`crate::topology`]), when the file is read
//! and again when one of its keys is patched ([`regenerate`]).

use acclab_core::config::QueueConfig;
use serde::Deserialize;

use super::origins::LinkOrigin;
use super::raw::RawTopology;
use super::tables::{queue_config, Finding, MAX_MEMBERS};
use crate::spec::{quote_key, LinkSpec, SharedBufferSpec};
use crate::topology::{Shape, Tier, TierLinks};

/// What a `[topology]` makes: its links (both directions of every cable), each with its origin,
/// and the pool every switch shares if it asks for one (`shared_buffer`).
pub(super) struct Fabric {
    pub(super) links: Vec<(LinkOrigin, LinkSpec)>,
    pub(super) pool: Option<SharedBufferSpec>,
}

/// The fabric of `table`, a `[topology]` as a file writes it (patched: `topology.k = 8`), with
/// `default_queue` for links that name no queue. A mistake names its key (`topology.k`).
pub(crate) fn regenerate(
    table: toml::Table,
    default_queue: &Option<QueueConfig>,
) -> Result<(Vec<LinkSpec>, Option<SharedBufferSpec>), Finding> {
    #[derive(Deserialize)]
    struct Wrapped {
        topology: RawTopology,
    }
    let wrapped = toml::Table::from_iter([("topology".to_string(), toml::Value::Table(table))]);
    let raw: Wrapped =
        serde_path_to_error::deserialize(toml::Value::Table(wrapped)).map_err(|e| {
            let e = super::locate::serde_error(e, "", "", None);
            (e.key, e.message)
        })?;
    let f = fabric(raw.topology, default_queue)?;
    Ok((f.links.into_iter().map(|(_, l)| l).collect(), f.pool))
}

/// `[topology]` into its [`Fabric`] (see [`crate::topology`]).
pub(super) fn fabric(
    mut t: RawTopology,
    default_queue: &Option<QueueConfig>,
) -> Result<Fabric, Finding> {
    let pool = t.shared_buffer.take();
    let values = std::mem::take(&mut t.links);
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
    let mut links: Vec<(LinkOrigin, LinkSpec)> = shape
        .generate(&|tier| match tiers.get(&tier) {
            Some((l, _)) => l.clone(),
            None => base.clone(),
        })
        .into_iter()
        .map(|(tier, l)| {
            let own = tiers.get(&tier).map_or([false; 3], |(_, own)| *own);
            (
                LinkOrigin::Topology {
                    tier,
                    own,
                    values: None,
                },
                l,
            )
        })
        .collect();
    for (name, v) in values {
        let key = |k: &str| format!("topology.links.{}{k}", quote_key(&name));
        let Some((origin, l)) = links.iter_mut().find(|(_, l)| l.name() == name) else {
            return Err((
                key(""),
                format!(
                    "the fabric has no link {name:?} (its links join its nodes: \"h0->edge0_0\", …)"
                ),
            ));
        };
        let mut set = Vec::new();
        if let Some(r) = v.rate {
            l.rate = r;
            set.push("rate");
        }
        if let Some(d) = v.delay {
            l.delay = d;
            set.push("delay");
        }
        if let Some(q) = v.queue {
            l.queue = queue_config(q, &key(".queue"))?;
            set.push("queue");
        }
        if let Some(loss) = v.loss {
            l.loss = loss;
            set.push("loss");
        }
        if let Some(j) = v.jitter {
            l.jitter = Some(j);
            set.push("jitter");
        }
        if let LinkOrigin::Topology { values, .. } = origin {
            *values = Some((name.clone(), set));
        }
    }
    // Every switch: every node with a link of the fabric's inner tiers leaving it.
    let pool = pool.map(|params| {
        let mut seen = std::collections::BTreeSet::new();
        let mut nodes: Vec<String> = Vec::new();
        for (origin, l) in &links {
            let inner = !matches!(
                origin,
                LinkOrigin::Topology {
                    tier: Tier::Host,
                    ..
                }
            );
            if inner && seen.insert(l.from.as_str()) {
                nodes.push(l.from.clone());
            }
        }
        SharedBufferSpec { nodes, params }
    });
    Ok(Fabric { links, pool })
}
