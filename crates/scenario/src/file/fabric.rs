//! `[topology]` read into its generated links (see [`crate::topology`]).

use acclab_core::config::QueueConfig;

use super::origins::LinkOrigin;
use super::raw::RawTopology;
use super::tables::{queue_config, Finding, MAX_MEMBERS};
use crate::spec::LinkSpec;
use crate::topology::{Shape, Tier, TierLinks};

/// `[topology]` into its links (see [`crate::topology`]), each with its origin.
pub(super) fn fabric(
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
