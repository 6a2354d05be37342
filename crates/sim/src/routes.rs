//! Every flow's routes, forward (data) and reverse (ACKs), in one table, each followed by an
//! end marker. A flow's books keep where its routes begin, and a packet's slot where its own
//! does (`Slab::alloc`), so that a hop reads the table only.
//!
//! A sprayed flow (`[routing] ecmp = "packet"`) has no list of links: its route names a
//! destination, and at each node the packet takes one of the links to a node one hop nearer,
//! picked by a seeded hash of the packet (flow, direction, sequence number, send time, ACK
//! fields) and the node — random packet spraying as a switch hashing each packet does. A
//! retransmission (another send time) may take another path than the original. The pick is a
//! function of the packet, not a draw from a stream, so a packet held in a queue discipline
//! (which keeps the packet, not its slot) finds the same next hop when it leaves.

use std::collections::BTreeMap;

use acclab_core::transport::EndpointSlot;
use acclab_core::{rng, Packet};
use acclab_scenario::routing::Router;
use acclab_scenario::{LinkId, NodeId, Scenario};

#[derive(Default)]
pub(crate) struct Routes {
    hops: Vec<LinkId>,
    /// The sprayed routes and what a hop of theirs reads (boxed: one word without spraying).
    spray: Option<Box<Spray>>,
}

/// What sprayed routes read: the network as adjacency lists and, per destination, every
/// node's distance to it.
struct Spray {
    seed: u64,
    nodes: usize,
    /// The node each link leads to.
    link_to: Vec<u32>,
    /// Outgoing links of node `n`: `out_links[out_start[n]..out_start[n + 1]]`, in the
    /// scenario's order.
    out_start: Vec<u32>,
    out_links: Vec<u32>,
    /// Hops to destination row `r` from node `n`: `dist[r * nodes + n]` (`u32::MAX`: none).
    dist: Vec<u32>,
    rows: BTreeMap<NodeId, u32>,
    routes: Vec<Sprayed>,
}

/// One sprayed route: from `src` to `dst` (distance row `row`), delivering to the endpoint
/// `deliver` names; `salt` tells its packets from another route's (flow and direction).
struct Sprayed {
    src: u32,
    dst: u32,
    row: u32,
    deliver: LinkId,
    salt: u64,
}

impl Routes {
    /// The bit that marks the entry after each route; the rest of the entry names the
    /// endpoint the route delivers to, for prefetches ([`Routes::delivers_to`]; a scenario of
    /// over 2^30 flows would alias, which only spoils a prefetch: a delivery's endpoint is read
    /// from its packet).
    pub const END: u32 = 1 << 31;

    /// The bit that marks a route start as a sprayed route's index.
    const SPRAYED: u32 = 1 << 31;

    /// The marker after a route to endpoint `to`.
    pub fn end(to: EndpointSlot) -> LinkId {
        LinkId(Routes::END | (to.index() as u32 & !Routes::END))
    }

    /// The endpoint an entry names if it is an end marker.
    #[inline(always)]
    pub fn delivers_to(entry: u32) -> Option<EndpointSlot> {
        (entry & Routes::END != 0).then(|| EndpointSlot::at((entry & !Routes::END) as usize))
    }

    /// A table for `hops` entries (a route's links and its end marker), reserved whole: grown
    /// by doubling, a million flows' 56 MB took up to 96 at the last doubling.
    pub fn with_capacity(hops: usize) -> Routes {
        Routes {
            hops: Vec::with_capacity(hops),
            spray: None,
        }
    }

    /// Adds `route`, which delivers to `to`; returns where it begins.
    pub fn push(&mut self, route: &[LinkId], to: EndpointSlot) -> u32 {
        let start = self.hops.len() as u32;
        assert!(
            start < Routes::SPRAYED,
            "the route table holds under 2^31 hops"
        );
        self.hops.extend_from_slice(route);
        self.hops.push(Routes::end(to));
        start
    }

    /// Adds a sprayed route from `src` to `dst` in `scenario`, delivering to `to`; `salt`
    /// tells its packets from other routes'. Returns where it "begins" (a marked index).
    pub fn push_sprayed(
        &mut self,
        scenario: &Scenario,
        src: NodeId,
        dst: NodeId,
        to: EndpointSlot,
        salt: u64,
    ) -> u32 {
        let spray = self
            .spray
            .get_or_insert_with(|| Box::new(Spray::new(scenario)));
        let row = match spray.rows.get(&dst) {
            Some(&r) => r,
            None => {
                let r = spray.rows.len() as u32;
                let mut router = Router::new(scenario.nodes.len(), &scenario.links);
                let hops = router.hops_to_node(dst);
                spray
                    .dist
                    .extend(hops.iter().map(|h| h.unwrap_or(u32::MAX)));
                spray.rows.insert(dst, r);
                r
            }
        };
        let i = spray.routes.len() as u32;
        spray.routes.push(Sprayed {
            src: src.0,
            dst: dst.0,
            row,
            deliver: Routes::end(to),
            salt,
        });
        i | Routes::SPRAYED
    }

    /// Entry `hop` of the route that begins at `start`, for `pkt`, which has just crossed
    /// link `from` (`None`: it leaves its endpoint): a link, or past its last the end marker
    /// ([`Routes::delivers_to`]).
    #[inline(always)]
    pub fn next(&self, start: u32, hop: u16, from: Option<usize>, pkt: &Packet) -> LinkId {
        if start & Routes::SPRAYED == 0 {
            return self.hops[start as usize + hop as usize];
        }
        self.sprayed_next(start, from, pkt)
    }

    /// The first link of the route that begins at `start`, for `pkt`.
    #[inline(always)]
    pub fn first(&self, start: u32, pkt: &Packet) -> usize {
        let l = self.next(start, 0, None, pkt);
        debug_assert!(Routes::delivers_to(l.0).is_none(), "a route has a link");
        l.0 as usize
    }

    /// The first link of the route that begins at `start` if it is known before a packet is
    /// (for a prefetch); an end marker, which names no link, for a sprayed route.
    #[inline(always)]
    pub fn first_hint(&self, start: u32) -> LinkId {
        match start & Routes::SPRAYED {
            0 => self.hops[start as usize],
            _ => LinkId(Routes::END),
        }
    }

    #[cold]
    fn sprayed_next(&self, start: u32, from: Option<usize>, pkt: &Packet) -> LinkId {
        let s = self.spray.as_ref().expect("a sprayed route has its tables");
        let r = &s.routes[(start & !Routes::SPRAYED) as usize];
        let node = from.map_or(r.src, |l| s.link_to[l]);
        if node == r.dst {
            return r.deliver;
        }
        let row = &s.dist[r.row as usize * s.nodes..][..s.nodes];
        let d = row[node as usize];
        let nearer = |&&l: &&u32| row[s.link_to[l as usize] as usize] == d.wrapping_sub(1);
        let (lo, hi) = (s.out_start[node as usize], s.out_start[node as usize + 1]);
        let out = &s.out_links[lo as usize..hi as usize];
        let count = out.iter().filter(nearer).count();
        let pick = match count {
            0 => unreachable!("a sprayed flow's ends are connected (its representative path)"),
            1 => 0,
            c => {
                let (next, echo) = pkt.ack_info().map_or((0, 0), |(n, e)| (n, e.0));
                let h = rng::hash(
                    s.seed,
                    &[r.salt, pkt.seq, pkt.sent_at.0, next, echo, u64::from(node)],
                );
                (h % c as u64) as usize
            }
        };
        LinkId(*out.iter().filter(nearer).nth(pick).expect("pick < count"))
    }
}

impl Spray {
    fn new(scenario: &Scenario) -> Spray {
        let nodes = scenario.nodes.len();
        let mut degree = vec![0u32; nodes + 1];
        for l in &scenario.links {
            degree[l.from.0 as usize + 1] += 1;
        }
        for n in 0..nodes {
            degree[n + 1] += degree[n];
        }
        let out_start = degree.clone();
        let mut fill = degree;
        let mut out_links = vec![0u32; scenario.links.len()];
        for (i, l) in scenario.links.iter().enumerate() {
            let at = &mut fill[l.from.0 as usize];
            out_links[*at as usize] = i as u32;
            *at += 1;
        }
        Spray {
            seed: rng::hash(scenario.seed, &[0x0053_7072_6179]), // "Spray"
            nodes,
            link_to: scenario.links.iter().map(|l| l.to.0).collect(),
            out_start,
            out_links,
            dist: Vec::new(),
            rows: BTreeMap::new(),
            routes: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::FlowId;

    /// Each route in the table ends in a marker naming the endpoint it delivers to: a hop past
    /// the last link finds no link, and the marker says who gets the packet.
    #[test]
    fn routes_end_in_the_endpoint_they_deliver_to() {
        let mut routes = Routes::default();
        let to = EndpointSlot::receiver(FlowId(7));
        let back = EndpointSlot::sender(FlowId(7));
        let a = routes.push(&[LinkId(3), LinkId(0)], to);
        let b = routes.push(&[LinkId(1)], back);
        let p = Packet::new(FlowId(7), acclab_core::PacketKind::Data, 1000);
        let next = |s, h| routes.next(s, h, None, &p);
        assert_eq!((next(a, 0), next(a, 1)), (LinkId(3), LinkId(0)));
        assert_eq!(Routes::delivers_to(next(a, 2).0), Some(to));
        assert_eq!(Routes::delivers_to(next(a, 1).0), None);
        assert_eq!(next(b, 0), LinkId(1));
        assert_eq!(Routes::delivers_to(next(b, 1).0), Some(back));
        assert_eq!(routes.first_hint(a), LinkId(3));
    }
}
