//! Shortest-path routing by hop count with a deterministic tie-break.
//!
//! Breadth-first search that explores a node's outgoing links in the order the scenario declares
//! them, so among equal-length paths the one using earlier-declared links wins, on every machine.
//!
//! Routing a scenario's flows one BFS at a time is quadratic: in a dumbbell of N hosts every
//! search crosses the router that all N hosts hang off. [`Router`] keeps the adjacency lists and
//! one BFS tree per search origin, and a host with a single outgoing link starts its path with
//! that link and takes the rest from its neighbour's tree. The paths are exactly those of a BFS
//! from the host itself: BFS from `s` visits its only neighbour `n` first and then explores in
//! `n`'s order; `s` itself appears in `n`'s tree but never on a shortest path from `s`.

use std::collections::{BTreeMap, VecDeque};

use crate::scenario::{LinkDef, LinkId, NodeId, Scenario};

/// Multipath routing of flows without an explicit `path` (`[routing] ecmp = …`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ecmp {
    /// One shortest path per (source, destination), the same for every flow: the first
    /// declared links win ties.
    #[default]
    None,
    /// Per flow: at each node with several next hops on a shortest path, a seeded hash of the
    /// flow's 5-tuple and the node picks one, so a flow keeps one path (no reordering) and
    /// flows spread over the fabric.
    Flow,
    /// Per packet (random packet spraying): at each node with several next hops on a shortest
    /// path, a seeded hash of the packet (flow, direction, sequence number, send time) and
    /// the node picks one. Packets of one flow take different paths and arrive out of order;
    /// a retransmission may take another path than the original.
    Packet,
}

impl Ecmp {
    pub fn is_none(&self) -> bool {
        *self == Ecmp::None
    }
}

/// At most this many nodes × cached trees are kept (about 128 MB of tree entries); past it, a
/// search runs without the cache (each such search is then O(nodes + links) again).
const CACHE_ENTRIES: usize = 32 << 20;

/// Shortest paths over one topology, with the BFS trees it has grown so far.
pub struct Router<'a> {
    links: &'a [LinkDef],
    /// Outgoing links of each node, in declaration order.
    out: Vec<Vec<LinkId>>,
    /// BFS trees by origin: `via[n]` = the link by which BFS first reached n.
    trees: BTreeMap<NodeId, Vec<Option<LinkId>>>,
    /// Hops to each destination ECMP has routed to: `hops[n]` from node n.
    hops: BTreeMap<NodeId, Vec<Option<u32>>>,
    /// The nodes with a link into each node (made at the first ECMP route).
    into: Vec<Vec<NodeId>>,
}

impl<'a> Router<'a> {
    pub fn new(node_count: usize, links: &'a [LinkDef]) -> Router<'a> {
        let mut out: Vec<Vec<LinkId>> = vec![Vec::new(); node_count];
        for (i, l) in links.iter().enumerate() {
            out[l.from.0 as usize].push(LinkId(i as u32));
        }
        Router {
            links,
            out,
            trees: BTreeMap::new(),
            hops: BTreeMap::new(),
            into: Vec::new(),
        }
    }

    /// The links of a shortest path from `src` to `dst`, or `None` when there is none.
    pub fn path(&mut self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        // Follow single-link hosts: their path must start with that link.
        let mut head = Vec::new();
        let mut origin = src;
        while origin != dst {
            match self.out[origin.0 as usize].as_slice() {
                [only] if self.links[only.0 as usize].to != src => {
                    head.push(*only);
                    origin = self.links[only.0 as usize].to;
                }
                _ => break,
            }
            if head.len() > self.out.len() {
                return None; // a cycle of single-link nodes that never reaches dst
            }
        }
        if origin == dst {
            return Some(head);
        }
        let nodes = self.out.len();
        let tail = if self.trees.contains_key(&origin)
            || (self.trees.len() + 1) * nodes <= CACHE_ENTRIES
        {
            let tree = self
                .trees
                .entry(origin)
                .or_insert_with(|| bfs(&self.out, self.links, origin, None));
            walk(tree, self.links, origin, dst)?
        } else {
            walk(
                &bfs(&self.out, self.links, origin, Some(dst)),
                self.links,
                origin,
                dst,
            )?
        };
        head.extend(tail);
        Some(head)
    }
}

impl Router<'_> {
    /// Equal-cost multipath (`[routing] ecmp = "flow"`): the links of a shortest path from `src`
    /// to `dst` on which every node with several next hops on a shortest path takes the one
    /// `pick(node, count)` names (an index below `count`, in the order the scenario declares
    /// the links), as a switch hashing the flow's 5-tuple does. `None` when there is no path.
    pub fn ecmp_path(
        &mut self,
        src: NodeId,
        dst: NodeId,
        pick: impl Fn(NodeId, usize) -> usize,
    ) -> Option<Vec<LinkId>> {
        let nodes = self.out.len();
        let cache = self.hops.contains_key(&dst) || (self.hops.len() + 1) * nodes <= CACHE_ENTRIES;
        let fresh;
        let hops = if cache {
            if self.into.is_empty() {
                self.into = into(nodes, self.links);
            }
            let into = &self.into;
            self.hops.entry(dst).or_insert_with(|| hops_to(into, dst))
        } else {
            if self.into.is_empty() {
                self.into = into(nodes, self.links);
            }
            fresh = hops_to(&self.into, dst);
            &fresh
        };
        let mut d = hops[src.0 as usize]?;
        let mut path = Vec::with_capacity(d as usize);
        let mut n = src;
        let mut next = Vec::new();
        while n != dst {
            next.clear();
            next.extend(
                self.out[n.0 as usize]
                    .iter()
                    .copied()
                    .filter(|l| hops[self.links[l.0 as usize].to.0 as usize] == Some(d - 1)),
            );
            let l = match next.len() {
                1 => next[0],
                c => next[pick(n, c) % c],
            };
            path.push(l);
            n = self.links[l.0 as usize].to;
            d -= 1;
        }
        Some(path)
    }
}

impl Router<'_> {
    /// Hops from every node to `dst` along the links (`None`: no path) — what a switch
    /// spraying packets toward `dst` picks among: the links to a node one hop nearer.
    pub fn hops_to_node(&mut self, dst: NodeId) -> Vec<Option<u32>> {
        if self.into.is_empty() {
            self.into = into(self.out.len(), self.links);
        }
        hops_to(&self.into, dst)
    }

    /// How many shortest paths lead from `src` to `dst` (0: none), saturating at `u64::MAX`.
    pub fn path_count(&mut self, src: NodeId, dst: NodeId) -> u64 {
        if self.into.is_empty() {
            self.into = into(self.out.len(), self.links);
        }
        let hops = hops_to(&self.into, dst);
        let Some(d) = hops[src.0 as usize] else {
            return 0;
        };
        // Paths to dst from every node on a shortest path, nearest first.
        let mut order: Vec<usize> = (0..hops.len())
            .filter(|&n| hops[n].is_some_and(|h| h <= d))
            .collect();
        order.sort_by_key(|&n| hops[n]);
        let mut count = vec![0u64; hops.len()];
        count[dst.0 as usize] = 1;
        for n in order {
            let Some(h) = hops[n].filter(|&h| h > 0) else {
                continue;
            };
            count[n] = self.out[n]
                .iter()
                .map(|l| self.links[l.0 as usize].to.0 as usize)
                .filter(|&m| hops[m] == Some(h - 1))
                .fold(0u64, |c, m| c.saturating_add(count[m]));
        }
        count[src.0 as usize]
    }
}

/// The nodes with a link into each node.
fn into(nodes: usize, links: &[LinkDef]) -> Vec<Vec<NodeId>> {
    let mut into: Vec<Vec<NodeId>> = vec![Vec::new(); nodes];
    for l in links {
        into[l.to.0 as usize].push(l.from);
    }
    into
}

/// Hops from every node to `dst` (BFS over the links backwards); `None`: no path.
fn hops_to(into: &[Vec<NodeId>], dst: NodeId) -> Vec<Option<u32>> {
    let mut hops: Vec<Option<u32>> = vec![None; into.len()];
    hops[dst.0 as usize] = Some(0);
    let mut frontier = VecDeque::from([dst]);
    while let Some(n) = frontier.pop_front() {
        let d = hops[n.0 as usize].expect("set before it was queued");
        for &m in &into[n.0 as usize] {
            if hops[m.0 as usize].is_none() {
                hops[m.0 as usize] = Some(d + 1);
                frontier.push_back(m);
            }
        }
    }
    hops
}

/// A scenario network's shape for `acclab check`: hosts (nodes with one outgoing link), switches
/// (the others), links, and how many equal-cost shortest paths the flows' ends have (the
/// first 10,000 flows), as `(hosts, switches, links, min, max)`.
pub fn shape(sc: &Scenario) -> (usize, usize, usize, u64, u64) {
    let mut out = vec![0usize; sc.nodes.len()];
    for l in &sc.links {
        out[l.from.0 as usize] += 1;
    }
    let hosts = out.iter().filter(|&&n| n == 1).count();
    let mut router = Router::new(sc.nodes.len(), &sc.links);
    let (mut lo, mut hi) = (u64::MAX, 0);
    for f in sc.flows.iter().take(10_000) {
        let n = router.path_count(f.src, f.dst);
        lo = lo.min(n);
        hi = hi.max(n);
    }
    (
        hosts,
        sc.nodes.len() - hosts,
        sc.links.len(),
        lo.min(hi),
        hi,
    )
}

/// BFS from `src` over `out`; stops once `stop` is reached when given.
fn bfs(
    out: &[Vec<LinkId>],
    links: &[LinkDef],
    src: NodeId,
    stop: Option<NodeId>,
) -> Vec<Option<LinkId>> {
    let mut via: Vec<Option<LinkId>> = vec![None; out.len()];
    let mut seen = vec![false; out.len()];
    let mut frontier = VecDeque::from([src]);
    seen[src.0 as usize] = true;
    while let Some(n) = frontier.pop_front() {
        if Some(n) == stop {
            break;
        }
        for &l in &out[n.0 as usize] {
            let next = links[l.0 as usize].to;
            if !seen[next.0 as usize] {
                seen[next.0 as usize] = true;
                via[next.0 as usize] = Some(l);
                frontier.push_back(next);
            }
        }
    }
    via
}

/// The path from `src` to `dst` in a BFS tree rooted at `src`.
fn walk(
    via: &[Option<LinkId>],
    links: &[LinkDef],
    src: NodeId,
    dst: NodeId,
) -> Option<Vec<LinkId>> {
    let mut path = Vec::new();
    let mut n = dst;
    while n != src {
        let l = via[n.0 as usize]?;
        path.push(l);
        n = links[l.0 as usize].from;
    }
    path.reverse();
    Some(path)
}

/// The links of a shortest path from `src` to `dst`, or `None` when there is none (one search;
/// use a [`Router`] to route many flows over one topology).
pub fn shortest_path(
    node_count: usize,
    links: &[LinkDef],
    src: NodeId,
    dst: NodeId,
) -> Option<Vec<LinkId>> {
    Router::new(node_count, links).path(src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::config::QueueConfig;
    use acclab_core::{Duration, Rate};
    use proptest::prelude::*;

    fn link(from: u32, to: u32) -> LinkDef {
        LinkDef {
            name: format!("{from}->{to}"),
            from: NodeId(from),
            to: NodeId(to),
            rate: Rate::from_mbps(1),
            capacity: None,
            delay: Duration::ZERO,
            delay_trace: None,
            queue: QueueConfig::default_queue(),
            loss: Default::default(),
            jitter: None,
        }
    }

    #[test]
    fn takes_fewest_hops_and_first_declared_on_ties() {
        // 0 -> 1 -> 3 and 0 -> 2 -> 3 tie; 0 -> 1 was declared first.
        let links = vec![link(0, 1), link(0, 2), link(2, 3), link(1, 3), link(3, 4)];
        let p = shortest_path(5, &links, NodeId(0), NodeId(4)).unwrap();
        assert_eq!(p, vec![LinkId(0), LinkId(3), LinkId(4)]);
    }

    #[test]
    fn respects_direction() {
        let links = vec![link(0, 1)];
        assert!(shortest_path(2, &links, NodeId(1), NodeId(0)).is_none());
    }

    #[test]
    fn a_chain_of_single_link_nodes_is_followed_to_its_end() {
        // 0 -> 1 -> 2 -> 3, each with one outgoing link; 4 is unreachable.
        let links = vec![link(0, 1), link(1, 2), link(2, 3), link(4, 0)];
        let mut r = Router::new(5, &links);
        assert_eq!(
            r.path(NodeId(0), NodeId(3)),
            Some(vec![LinkId(0), LinkId(1), LinkId(2)])
        );
        assert_eq!(r.path(NodeId(0), NodeId(4)), None);
        assert_eq!(r.path(NodeId(1), NodeId(2)), Some(vec![LinkId(1)]));
        // A ring of single-link nodes that never reaches the destination ends.
        let ring = vec![link(0, 1), link(1, 2), link(2, 0), link(3, 0)];
        assert_eq!(Router::new(4, &ring).path(NodeId(0), NodeId(3)), None);
    }

    /// Plain BFS from the source: the definition the cached router must agree with.
    fn reference(n: usize, links: &[LinkDef], src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut out: Vec<Vec<LinkId>> = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            out[l.from.0 as usize].push(LinkId(i as u32));
        }
        walk(&bfs(&out, links, src, Some(dst)), links, src, dst)
    }

    proptest! {
        #[test]
        fn the_cached_router_finds_the_paths_of_a_plain_bfs(
            n in 2usize..9,
            raw in proptest::collection::vec((0u32..9, 0u32..9), 0..24),
        ) {
            let mut links = Vec::new();
            let mut names = std::collections::BTreeSet::new();
            for (a, b) in raw {
                let (a, b) = (a % n as u32, b % n as u32);
                if a != b && names.insert((a, b)) {
                    links.push(link(a, b));
                }
            }
            let mut r = Router::new(n, &links);
            for s in 0..n as u32 {
                for d in 0..n as u32 {
                    if s != d {
                        prop_assert_eq!(
                            r.path(NodeId(s), NodeId(d)),
                            reference(n, &links, NodeId(s), NodeId(d)),
                            "{} -> {}", s, d
                        );
                    }
                }
            }
        }
    }
}
