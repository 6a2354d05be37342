//! Flows resolved: a workload's hosts, a flow's route (shortest path or ECMP's pick), its
//! parameters checked.

use std::collections::BTreeSet;

use acclab_core::config::SchemeConfig;
use acclab_core::{Duration, Time};

use super::network::Topology;
use super::{fault, Fault, FlowSpec, Item};
use crate::routing::{self, Ecmp};
use crate::scenario::{FlowDef, LinkId, NodeId};
use crate::workload::WorkloadSpec;

/// A workload's hosts with the rate of each one's outgoing link (its first, if several): the
/// ones it names, or every node named `h<number>`, in number order.
pub(super) fn workload_hosts(
    topo: &Topology,
    w: &WorkloadSpec,
) -> Result<Vec<(String, u64)>, (&'static str, String)> {
    let names: Vec<String> = match w.hosts.is_empty() {
        false => w.hosts.clone(),
        true => {
            let mut h: Vec<(u64, &String)> = topo
                .nodes
                .iter()
                .filter_map(|n| Some((n.strip_prefix('h')?.parse::<u64>().ok()?, n)))
                .collect();
            h.sort();
            h.into_iter().map(|(_, n)| n.clone()).collect()
        }
    };
    let mut rate = vec![None; topo.nodes.len()];
    for l in &topo.links {
        rate[l.from.0 as usize].get_or_insert(l.rate.bps());
    }
    names
        .into_iter()
        .map(|n| {
            let id = topo
                .node_ids
                .get(&n)
                .ok_or_else(|| ("hosts", format!("unknown node {n:?} (no link touches it)")))?;
            let r = rate[id.0 as usize]
                .ok_or_else(|| ("hosts", format!("host {n:?} has no outgoing link")))?;
            Ok((n, r))
        })
        .collect()
}

/// How a flow without an explicit path is routed.
pub(super) struct Route {
    pub(super) ecmp: Ecmp,
    pub(super) seed: u64,
    /// The flow's index: its source port in the 5-tuple (as the packet traces write it).
    pub(super) flow: u64,
}

impl Route {
    /// The links from `a` to `b`: the shortest path, or ECMP's pick by the flow's 5-tuple
    /// (source and destination node, ports as the packet traces synthesise them, protocol).
    fn path(
        &self,
        router: &mut routing::Router,
        a: NodeId,
        b: NodeId,
        tcp: bool,
        forward: bool,
    ) -> Option<Vec<LinkId>> {
        match self.ecmp {
            Ecmp::None => router.path(a, b),
            // A sprayed flow's representative path is per-flow ECMP's.
            Ecmp::Flow | Ecmp::Packet => {
                let flow_port = 10_000 + self.flow % 50_000;
                let (sport, dport) = match forward {
                    true => (flow_port, 5001),
                    false => (5001, flow_port),
                };
                let proto = if tcp { 6 } else { 17 };
                let tuple = [u64::from(a.0), u64::from(b.0), sport, dport, proto];
                router.ecmp_path(a, b, |node, count| {
                    let mut words = tuple.to_vec();
                    words.push(u64::from(node.0));
                    (acclab_core::rng::hash(self.seed, &words) % count as u64) as usize
                })
            }
        }
    }
}

pub(super) fn resolve_flow(
    topo: &Topology,
    router: &mut routing::Router,
    route: Route,
    i: usize,
    f: &FlowSpec,
    duration: Duration,
) -> Result<FlowDef, Fault> {
    let item = Item::Flow(i);
    let id = &f.id;
    let node = |name: &str, key: &str| {
        topo.node_ids.get(name).copied().ok_or_else(|| {
            fault(
                item,
                key,
                format!("flow {id:?}: unknown node {name:?} (no link touches it)"),
            )
        })
    };
    let src = node(&f.from, "from")?;
    let dst = node(&f.to, "to")?;
    if src == dst {
        return Err(fault(
            item,
            "to",
            format!("flow {id:?} goes from a node to itself"),
        ));
    }
    let scheme = &f.scheme;
    scheme.validate().map_err(|e| {
        let e = e.within("params");
        fault(item, &e.key, format!("flow {id:?}: {}", e.message))
    })?;
    // HPCC (Li et al. 2019 §3.2) keeps the last telemetry record of each hop by the hop's
    // place on the flow's path, and compares the next with it: packets sprayed over several
    // paths would compare one link's counters with another's.
    if matches!(scheme, SchemeConfig::Hpcc(_)) && route.ecmp == Ecmp::Packet && f.path.is_none() {
        return Err(fault(
            item,
            "kind",
            format!(
                "flow {id:?}: HPCC keeps each hop's telemetry by its place on one path, and \
                 [routing] ecmp = \"packet\" sprays its packets over several: use ecmp = \"flow\" \
                 (as the HPCC paper does) or give the flow a `path`"
            ),
        ));
    }
    let start = Time(f.start.unwrap_or(Duration::ZERO).0);
    if start >= Time(duration.0) {
        return Err(fault(
            item,
            "start",
            format!(
                "flow {id:?} starts at {}, at or after the end of the run ({duration})",
                Duration(start.0)
            ),
        ));
    }
    let stop = match f.stop {
        Some(s) if Time(s.0) <= start => {
            return Err(fault(
                item,
                "stop",
                format!(
                    "flow {id:?} stops at {s} but starts at {}",
                    Duration(start.0)
                ),
            ))
        }
        Some(s) => Some(Time(s.0)),
        None => None,
    };
    let feedback = scheme.sends_feedback();
    let (forward, reverse) = match &f.path {
        Some(names) => {
            if names.len() < 2 || (names.first(), names.last()) != (Some(&f.from), Some(&f.to)) {
                return Err(fault(
                    item,
                    "path",
                    format!(
                        "flow {id:?}: the path must start at {:?} and end at {:?}",
                        f.from, f.to
                    ),
                ));
            }
            // A route is a path: a node visited twice would put a loop in it, and its packets
            // would cross the links of the loop twice.
            let mut seen = BTreeSet::new();
            if let Some(again) = names.iter().find(|n| !seen.insert(n.as_str())) {
                return Err(fault(
                    item,
                    "path",
                    format!("flow {id:?}: the path visits {again:?} twice"),
                ));
            }
            let mut hops: Vec<&String> = names.iter().collect();
            let fwd = path_links(topo, item, &hops, id, "data")?;
            hops.reverse();
            let rev = match feedback {
                true => path_links(topo, item, &hops, id, "acknowledgements (reverse path)")?,
                false => Vec::new(),
            };
            (fwd, rev)
        }
        None => {
            let unroutable = |key: &str, a: &str, b: &str| {
                fault(
                    item,
                    key,
                    format!("flow {id:?}: no route from {a:?} to {b:?}"),
                )
            };
            let fwd = route
                .path(router, src, dst, feedback, true)
                .ok_or_else(|| unroutable("to", &f.from, &f.to))?;
            // The data's way exists; a missing way back is the acknowledgements', and says so.
            let rev = match feedback {
                true => route
                    .path(router, dst, src, feedback, false)
                    .ok_or_else(|| {
                        fault(
                            item,
                            "from",
                            format!(
                                "flow {id:?}: no route from {:?} to {:?} for its acknowledgements \
                             (its data has a route from {:?} to {:?}; links declared with \
                             `from`/`to` carry one direction: add the way back, or declare the \
                             link with `between`, which makes both)",
                                f.to, f.from, f.from, f.to
                            ),
                        )
                    })?,
                false => Vec::new(),
            };
            (fwd, rev)
        }
    };
    Ok(FlowDef {
        id: id.clone(),
        class: match &f.class {
            Some(c) => c.clone().into(),
            None => scheme.default_class().into(),
        },
        scheme: scheme.clone(),
        src,
        dst,
        start,
        start_jitter: f.start_jitter.unwrap_or(Duration::ZERO),
        stop,
        spray: route.ecmp == Ecmp::Packet && f.path.is_none(),
        forward: forward.into_boxed_slice(),
        reverse: reverse.into_boxed_slice(),
    })
}

/// The links along an explicit path, in the order given.
pub(super) fn path_links(
    topo: &Topology,
    item: Item,
    names: &[&String],
    id: &str,
    what: &str,
) -> Result<Vec<LinkId>, Fault> {
    names
        .windows(2)
        .map(|w| {
            let name = format!("{}->{}", w[0], w[1]);
            topo.link_ids.get(&name).copied().ok_or_else(|| {
                fault(
                    item,
                    "path",
                    format!("flow {id:?}: no link {name} for its {what}"),
                )
            })
        })
        .collect()
}
