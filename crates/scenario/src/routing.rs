//! Shortest-path routing by hop count with a deterministic tie-break.
//!
//! Breadth-first search that explores a node's outgoing links in the order the scenario declares
//! them, so among equal-length paths the one using earlier-declared links wins, on every machine.

use std::collections::VecDeque;

use crate::scenario::LinkDef;

/// Index of a node in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Index of a unidirectional link in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// The links of a shortest path from `src` to `dst`, or `None` when there is none.
pub fn shortest_path(
    node_count: usize,
    links: &[LinkDef],
    src: NodeId,
    dst: NodeId,
) -> Option<Vec<LinkId>> {
    let mut out: Vec<Vec<LinkId>> = vec![Vec::new(); node_count];
    for (i, l) in links.iter().enumerate() {
        out[l.from.0 as usize].push(LinkId(i as u32));
    }
    // via[n] = the link by which BFS first reached n.
    let mut via: Vec<Option<LinkId>> = vec![None; node_count];
    let mut seen = vec![false; node_count];
    let mut frontier = VecDeque::from([src]);
    seen[src.0 as usize] = true;
    while let Some(n) = frontier.pop_front() {
        if n == dst {
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
    if !seen[dst.0 as usize] {
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::config::QueueConfig;
    use acclab_core::{Duration, Rate};

    fn link(from: u32, to: u32) -> LinkDef {
        LinkDef {
            name: format!("{from}->{to}"),
            from: NodeId(from),
            to: NodeId(to),
            rate: Rate::from_mbps(1),
            delay: Duration::ZERO,
            queue: QueueConfig::default_queue(),
            loss: 0.0,
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
}
