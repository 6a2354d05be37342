//! Topology generators: a datacenter fabric described by its shape, expanded into ordinary
//! links (both directions of every cable) that patches, sweeps and events name like any other.
//!
//! - **fat-tree** (Al-Fares et al., SIGCOMM 2008, §3): `k` pods of k/2 edge and k/2 aggregation
//!   switches, (k/2)² core switches; aggregation switch `a` of every pod connects to core
//!   switches a·k/2 … a·k/2 + k/2 − 1. With `oversubscription = r` each edge switch has r·k/2
//!   hosts behind its k/2 uplinks (r = 1: the paper's k³/4 hosts, full bisection bandwidth).
//! - **leaf-spine**: every leaf connects to every spine; `hosts_per_leaf` hosts per leaf.
//!
//! Hosts are `h0`, `h1`, … in pod (leaf) order; switches say their tier and position: `edge3_1`
//! (pod 3, edge switch 1), `agg3_0`, `core5`; `leaf2`, `spine0`. Links are declared host links
//! first, then each tier upwards, pod by pod: shortest-path routing without ECMP then takes the
//! lowest-numbered switches on ties.
//!
//! Each cable belongs to a [`Tier`] (`host`, `aggregation`, `core` in a fat-tree; `host`, `spine`
//! in a leaf-spine), and each tier may have its own rate, delay and queue.

use acclab_core::config::QueueConfig;
use acclab_core::{Duration, Rate};

use crate::spec::LinkSpec;

/// The largest `k` of a fat-tree: 64 (65,536 hosts, 393,216 links).
pub const MAX_FAT_TREE_K: u32 = 64;
/// The largest oversubscription ratio at a fat-tree's edge.
pub const MAX_OVERSUBSCRIPTION: u32 = 16;
/// The most leaves, spines and hosts per leaf of a leaf-spine fabric.
pub const MAX_LEAF_SPINE: u32 = 4096;

/// A tier of cables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Host to edge switch (fat-tree) or leaf (leaf-spine).
    Host,
    /// Edge to aggregation switch (fat-tree).
    Aggregation,
    /// Aggregation to core switch (fat-tree).
    Core,
    /// Leaf to spine (leaf-spine).
    Spine,
}

impl Tier {
    /// The tier's key in a `[topology]` table.
    pub fn key(self) -> &'static str {
        match self {
            Tier::Host => "host",
            Tier::Aggregation => "aggregation",
            Tier::Core => "core",
            Tier::Spine => "spine",
        }
    }

    pub const ALL: [Tier; 4] = [Tier::Host, Tier::Aggregation, Tier::Core, Tier::Spine];
}

/// What a node named as the generators name them is: `host` (`h3`), `edge` (`edge0_1`), `agg`
/// (`agg2_0`), `core` (`core5`), `leaf` (`leaf1`) or `spine` (`spine0`); `None` for any other
/// name.
pub fn node_role(name: &str) -> Option<&'static str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let pair = |s: &str| {
        s.split_once('_')
            .is_some_and(|(a, b)| digits(a) && digits(b))
    };
    for (prefix, role, two) in [
        ("h", "host", false),
        ("edge", "edge", true),
        ("agg", "agg", true),
        ("core", "core", false),
        ("leaf", "leaf", false),
        ("spine", "spine", false),
    ] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if (two && pair(rest)) || (!two && digits(rest)) {
                return Some(role);
            }
        }
    }
    None
}

/// A fabric's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    FatTree {
        k: u32,
        oversubscription: u32,
    },
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
    },
}

/// What the cables of one tier are.
#[derive(Clone, Debug, PartialEq)]
pub struct TierLinks {
    pub rate: Rate,
    pub delay: Duration,
    pub queue: QueueConfig,
}

impl Shape {
    /// The `kind` a file writes.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::FatTree { .. } => "fat-tree",
            Shape::LeafSpine { .. } => "leaf-spine",
        }
    }

    /// The tiers this shape has, host tier first.
    pub fn tiers(&self) -> &'static [Tier] {
        match self {
            Shape::FatTree { .. } => &[Tier::Host, Tier::Aggregation, Tier::Core],
            Shape::LeafSpine { .. } => &[Tier::Host, Tier::Spine],
        }
    }

    /// Checks the sizes: the key at fault and what is wrong.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let range = |key: &'static str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err((key, format!("must be in [{lo}, {hi}], not {v}")))
            }
        };
        match *self {
            Shape::FatTree {
                k,
                oversubscription,
            } => {
                range("k", k, 2, MAX_FAT_TREE_K)?;
                if k % 2 != 0 {
                    return Err((
                        "k",
                        format!("must be even (k/2 up- and downlinks), not {k}"),
                    ));
                }
                range(
                    "oversubscription",
                    oversubscription,
                    1,
                    MAX_OVERSUBSCRIPTION,
                )
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                range("leaves", leaves, 1, MAX_LEAF_SPINE)?;
                range("spines", spines, 1, MAX_LEAF_SPINE)?;
                range("hosts_per_leaf", hosts_per_leaf, 1, MAX_LEAF_SPINE)
            }
        }
    }

    /// Hosts.
    pub fn hosts(&self) -> u64 {
        match *self {
            Shape::FatTree {
                k,
                oversubscription,
            } => {
                let half = u64::from(k / 2);
                u64::from(k) * half * half * u64::from(oversubscription)
            }
            Shape::LeafSpine {
                leaves,
                hosts_per_leaf,
                ..
            } => u64::from(leaves) * u64::from(hosts_per_leaf),
        }
    }

    /// Switches.
    pub fn switches(&self) -> u64 {
        match *self {
            Shape::FatTree { k, .. } => {
                let (k, half) = (u64::from(k), u64::from(k / 2));
                k * k + half * half
            }
            Shape::LeafSpine { leaves, spines, .. } => u64::from(leaves) + u64::from(spines),
        }
    }

    /// Cables (each two links, one per direction).
    pub fn cables(&self) -> u64 {
        match *self {
            Shape::FatTree { k, .. } => {
                let (k, half) = (u64::from(k), u64::from(k / 2));
                self.hosts() + 2 * k * half * half
            }
            Shape::LeafSpine { leaves, spines, .. } => {
                self.hosts() + u64::from(leaves) * u64::from(spines)
            }
        }
    }

    /// Equal-cost shortest paths between two hosts under different top-of-rack switches in
    /// different pods (fat-tree: (k/2)²; leaf-spine: one per spine).
    pub fn paths_between_pods(&self) -> u64 {
        match *self {
            Shape::FatTree { k, .. } => u64::from(k / 2).pow(2),
            Shape::LeafSpine { spines, .. } => u64::from(spines),
        }
    }

    /// The fabric's links, both directions of each cable (a → b, then b → a), with their tiers;
    /// `tier` gives each tier's rate, delay and queue. Call [`validate`](Self::validate) first.
    pub fn generate(&self, tier: &dyn Fn(Tier) -> TierLinks) -> Vec<(Tier, LinkSpec)> {
        let mut out = Vec::with_capacity(2 * self.cables() as usize);
        let mut cable = |t: Tier, a: String, b: String| {
            let l = tier(t);
            for (from, to) in [(a.clone(), b.clone()), (b, a)] {
                out.push((
                    t,
                    LinkSpec {
                        from,
                        to,
                        rate: l.rate.into(),
                        delay: l.delay.into(),
                        queue: l.queue.clone(),
                        loss: Default::default(),
                        jitter: None,
                    },
                ));
            }
        };
        match *self {
            Shape::FatTree {
                k,
                oversubscription,
            } => {
                let half = k / 2;
                let per_edge = half * oversubscription;
                let mut h = 0u64;
                for p in 0..k {
                    for e in 0..half {
                        for _ in 0..per_edge {
                            cable(Tier::Host, format!("h{h}"), format!("edge{p}_{e}"));
                            h += 1;
                        }
                    }
                }
                for p in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            cable(
                                Tier::Aggregation,
                                format!("edge{p}_{e}"),
                                format!("agg{p}_{a}"),
                            );
                        }
                    }
                }
                for p in 0..k {
                    for a in 0..half {
                        for j in 0..half {
                            cable(
                                Tier::Core,
                                format!("agg{p}_{a}"),
                                format!("core{}", a * half + j),
                            );
                        }
                    }
                }
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                let mut h = 0u64;
                for l in 0..leaves {
                    for _ in 0..hosts_per_leaf {
                        cable(Tier::Host, format!("h{h}"), format!("leaf{l}"));
                        h += 1;
                    }
                }
                for l in 0..leaves {
                    for s in 0..spines {
                        cable(Tier::Spine, format!("leaf{l}"), format!("spine{s}"));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn node_roles_follow_the_generators_names() {
        for (name, role) in [
            ("h0", Some("host")),
            ("h1023", Some("host")),
            ("edge3_1", Some("edge")),
            ("agg0_0", Some("agg")),
            ("core12", Some("core")),
            ("leaf2", Some("leaf")),
            ("spine0", Some("spine")),
            ("h", None),
            ("host1", None),
            ("edge3", None),
            ("core1_2", None),
            ("r1", None),
        ] {
            assert_eq!(node_role(name), role, "{name}");
        }
    }

    use super::*;
    use std::collections::BTreeSet;

    fn links(shape: Shape) -> Vec<(Tier, LinkSpec)> {
        shape.validate().unwrap();
        shape.generate(&|t| TierLinks {
            rate: Rate::from_mbps(if t == Tier::Host { 10_000 } else { 40_000 }),
            delay: Duration::from_micros(1),
            queue: QueueConfig::default_queue(),
        })
    }

    fn nodes(l: &[(Tier, LinkSpec)]) -> BTreeSet<String> {
        l.iter()
            .flat_map(|(_, l)| [l.from.clone(), l.to.clone()])
            .collect()
    }

    #[test]
    fn a_fat_tree_has_the_papers_counts() {
        for k in [2, 4, 8, 16] {
            let shape = Shape::FatTree {
                k,
                oversubscription: 1,
            };
            let l = links(shape);
            let n = nodes(&l);
            let k = u64::from(k);
            assert_eq!(shape.hosts(), k * k * k / 4);
            assert_eq!(shape.switches(), 5 * k * k / 4);
            let hosts = n.iter().filter(|s| s.starts_with('h')).count() as u64;
            assert_eq!(hosts, shape.hosts());
            assert_eq!(n.len() as u64, shape.hosts() + shape.switches());
            assert_eq!(l.len() as u64, 2 * shape.cables());
            // Every switch has k ports (every host one).
            for node in &n {
                let ports = l.iter().filter(|(_, l)| &l.from == node).count() as u64;
                let want = if node.starts_with('h') { 1 } else { k };
                assert_eq!(ports, want, "{node}");
            }
            // Host tier at the host rate, the rest at the fabric's.
            for (t, l) in &l {
                let host = l.from.starts_with('h') || l.to.starts_with('h');
                assert_eq!(*t == Tier::Host, host, "{}", l.name());
            }
            // Names unique per direction.
            let names: BTreeSet<String> = l.iter().map(|(_, l)| l.name()).collect();
            assert_eq!(names.len(), l.len());
        }
    }

    #[test]
    fn oversubscription_puts_more_hosts_behind_each_edge_switch() {
        let shape = Shape::FatTree {
            k: 4,
            oversubscription: 3,
        };
        let l = links(shape);
        assert_eq!(shape.hosts(), 4 * 2 * 6);
        let behind_edge00 = l
            .iter()
            .filter(|(_, l)| l.to == "edge0_0" && l.from.starts_with('h'))
            .count();
        assert_eq!(behind_edge00, 6);
        // Hosts are numbered in pod order: pod 0 has h0..h11.
        assert!(l.iter().any(|(_, l)| l.name() == "h11->edge0_1"));
        assert!(l.iter().any(|(_, l)| l.name() == "h12->edge1_0"));
    }

    #[test]
    fn a_leaf_spine_connects_every_leaf_to_every_spine() {
        let shape = Shape::LeafSpine {
            leaves: 4,
            spines: 3,
            hosts_per_leaf: 5,
        };
        let l = links(shape);
        assert_eq!(nodes(&l).len(), 20 + 7);
        for leaf in 0..4 {
            for spine in 0..3 {
                let name = format!("leaf{leaf}->spine{spine}");
                assert!(l.iter().any(|(t, l)| l.name() == name && *t == Tier::Spine));
            }
        }
        assert_eq!(l.len() as u64, 2 * shape.cables());
        assert_eq!(shape.paths_between_pods(), 3);
    }

    #[test]
    fn sizes_out_of_range_are_refused_with_the_key() {
        let bad = [
            (
                Shape::FatTree {
                    k: 5,
                    oversubscription: 1,
                },
                "k",
            ),
            (
                Shape::FatTree {
                    k: 0,
                    oversubscription: 1,
                },
                "k",
            ),
            (
                Shape::FatTree {
                    k: 66,
                    oversubscription: 1,
                },
                "k",
            ),
            (
                Shape::FatTree {
                    k: 4,
                    oversubscription: 0,
                },
                "oversubscription",
            ),
            (
                Shape::LeafSpine {
                    leaves: 0,
                    spines: 1,
                    hosts_per_leaf: 1,
                },
                "leaves",
            ),
            (
                Shape::LeafSpine {
                    leaves: 1,
                    spines: 1,
                    hosts_per_leaf: 5000,
                },
                "hosts_per_leaf",
            ),
        ];
        for (shape, key) in bad {
            let (k, message) = shape.validate().unwrap_err();
            assert_eq!(k, key, "{shape:?}: {message}");
        }
    }
}
