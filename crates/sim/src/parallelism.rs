//! How much a conservative parallel engine could gain on a run (issue 56 §2), measured on the
//! serial run: the network split into partitions, each event counted to the partition that
//! would handle it, and time cut into windows one lookahead long — the smallest propagation
//! delay of a link between two partitions, the bound within which no partition can affect
//! another (Chandy–Misra–Bryant's conservative synchronisation; ns-3's MPI simulator and
//! Unison, EuroSys 2024, use the same windows).
//!
//! The **available parallelism** is the speed-up an ideal machine with one core per partition
//! would reach with that partitioning and lookahead: the run's events over its critical path,
//! Σ over windows of the busiest partition's events in the window (+ the events every
//! partition must stop for: samples, measurement windows, scenario events). Synchronisation
//! and cross-partition messages cost nothing in it: it is the ceiling, not a prediction.
//!
//! Which partition handles an event: a transmission (`TxDone`, `TxStart`) the link's sending
//! node's; an arrival (`Arrive`, `Land`) the receiving node's (a packet crossing partitions is
//! a message); an endpoint's timer, start or stop its host's.
//!
//! The partitioning ([`Partitioning::by_racks`]) is made from the link graph alone: hosts
//! (flow endpoints and nodes with one neighbour) go with their switch; the switches next to
//! hosts (racks: a fat-tree's edge, a leaf) are cut into contiguous blocks in the order the
//! topology names them, which keeps a fat-tree's pods whole; every switch above takes the
//! partition most of its lower neighbours are in, and where they are split evenly (a core, a
//! spine) the switches take the tied partitions in turn.

use std::collections::VecDeque;

use acclab_core::transport::{EndpointSlot, Side};
use acclab_core::{Duration, Time};
use acclab_scenario::Scenario;

use crate::events::Event;
use crate::simulator::EventProbe;

/// Which partition each node is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    pub parts: u32,
    pub of_node: Vec<u32>,
}

impl Partitioning {
    /// `parts` partitions of `sc`'s network, racks kept whole (see the module's header).
    pub fn by_racks(sc: &Scenario, parts: u32) -> Partitioning {
        let parts = parts.max(1);
        let n = sc.nodes.len();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for l in &sc.links {
            let (a, b) = (l.from.0 as usize, l.to.0 as usize);
            if a != b && !adj[a].contains(&b) {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
        let mut host = vec![false; n];
        for f in &sc.flows {
            host[f.src.0 as usize] = true;
            host[f.dst.0 as usize] = true;
        }
        for (i, a) in adj.iter().enumerate() {
            host[i] |= a.len() == 1;
        }
        // Tiers: hops from the nearest host (multi-source BFS).
        let mut tier = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for i in (0..n).filter(|&i| host[i]) {
            tier[i] = 0;
            queue.push_back(i);
        }
        while let Some(i) = queue.pop_front() {
            for &j in &adj[i] {
                if tier[j] == u32::MAX {
                    tier[j] = tier[i] + 1;
                    queue.push_back(j);
                }
            }
        }
        let mut of_node = vec![u32::MAX; n];
        let racks: Vec<usize> = (0..n).filter(|&i| tier[i] == 1).collect();
        for (r, &i) in racks.iter().enumerate() {
            of_node[i] = (r as u64 * parts as u64 / racks.len() as u64) as u32;
        }
        let top = tier
            .iter()
            .filter(|&&t| t != u32::MAX)
            .max()
            .copied()
            .unwrap_or(0);
        for t in 2..=top {
            let mut turn = 0usize;
            for i in (0..n).filter(|&i| tier[i] == t) {
                let mut count = vec![0u32; parts as usize];
                for &j in adj[i].iter().filter(|&&j| tier[j] < t) {
                    count[of_node[j] as usize] += 1;
                }
                let best = count.iter().copied().max().unwrap_or(0);
                let tied: Vec<u32> = (0..parts).filter(|&p| count[p as usize] == best).collect();
                of_node[i] = if tied.len() == 1 {
                    tied[0]
                } else {
                    turn += 1;
                    tied[(turn - 1) % tied.len()]
                };
            }
        }
        // Hosts with their switch; anything unreached (no path to a host) in partition 0.
        for i in 0..n {
            if tier[i] == 0 {
                of_node[i] = adj[i]
                    .iter()
                    .map(|&j| of_node[j])
                    .find(|&p| p != u32::MAX)
                    .unwrap_or(0);
            }
        }
        for p in of_node.iter_mut().filter(|p| **p == u32::MAX) {
            *p = 0;
        }
        Partitioning { parts, of_node }
    }

    /// The smallest propagation delay of a link between two partitions (None: no such link).
    pub fn lookahead(&self, sc: &Scenario) -> Option<Duration> {
        sc.links
            .iter()
            .filter(|l| self.of_node[l.from.0 as usize] != self.of_node[l.to.0 as usize])
            .map(|l| l.delay)
            .min()
    }
}

/// What one partitioning of a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub parts: u32,
    /// The window length (None: nothing crosses partitions, one window).
    pub lookahead: Option<Duration>,
    /// Every event counted (housekeeping retirements aside, as the run's own count).
    pub events: u64,
    /// Events every partition stops for (samples, measurement windows, scenario events).
    pub global: u64,
    /// Each partition's events.
    pub per_part: Vec<u64>,
    /// Σ over windows of the busiest partition's events, plus `global`.
    pub critical: u64,
    /// Windows with at least one event.
    pub windows: u64,
    /// Packets that arrived from another partition (messages between partitions).
    pub crossing: u64,
}

impl Profile {
    /// The speed-up an ideal machine with one core per partition would reach.
    pub fn available_parallelism(&self) -> f64 {
        self.events as f64 / self.critical.max(1) as f64
    }

    /// The busiest partition's events over the mean partition's (1 = perfectly balanced).
    pub fn imbalance(&self) -> f64 {
        let max = self.per_part.iter().copied().max().unwrap_or(0) as f64;
        let mean = self.per_part.iter().sum::<u64>() as f64 / self.per_part.len().max(1) as f64;
        if mean > 0.0 {
            max / mean
        } else {
            1.0
        }
    }
}

/// Counts a run's events by partition and window for one partitioning.
struct Counter {
    profile: Profile,
    link_from: Vec<u32>,
    link_to: Vec<u32>,
    flow_src: Vec<u32>,
    flow_dst: Vec<u32>,
    window_ns: u64,
    window: u64,
    in_window: Vec<u64>,
}

impl Counter {
    fn new(sc: &Scenario, p: &Partitioning) -> Counter {
        let part = |n: acclab_scenario::NodeId| p.of_node[n.0 as usize];
        let lookahead = p.lookahead(sc);
        Counter {
            profile: Profile {
                parts: p.parts,
                lookahead,
                events: 0,
                global: 0,
                per_part: vec![0; p.parts as usize],
                critical: 0,
                windows: 0,
                crossing: 0,
            },
            link_from: sc.links.iter().map(|l| part(l.from)).collect(),
            link_to: sc.links.iter().map(|l| part(l.to)).collect(),
            flow_src: sc.flows.iter().map(|f| part(f.src)).collect(),
            flow_dst: sc.flows.iter().map(|f| part(f.dst)).collect(),
            window_ns: lookahead.map_or(u64::MAX, |d| d.0.max(1)),
            window: 0,
            in_window: vec![0; p.parts as usize],
        }
    }

    fn close_window(&mut self) {
        let busiest = self.in_window.iter().copied().max().unwrap_or(0);
        if busiest > 0 {
            self.profile.critical += busiest;
            self.profile.windows += 1;
            self.in_window.iter_mut().for_each(|c| *c = 0);
        }
    }

    fn on_event(&mut self, t: Time, ev: Event) {
        let part = match ev {
            Event::TxDone(l) | Event::TxStart(l) => Some(self.link_from[l as usize]),
            Event::Arrive(l, _, _) | Event::Land(l) => {
                let (from, to) = (self.link_from[l as usize], self.link_to[l as usize]);
                self.profile.crossing += u64::from(from != to);
                Some(to)
            }
            Event::Timer { endpoint, .. } => {
                let slot = EndpointSlot::at(endpoint as usize);
                let f = slot.flow().0 as usize;
                Some(match slot.side() {
                    Side::Sender => self.flow_src[f],
                    Side::Receiver => self.flow_dst[f],
                })
            }
            Event::FlowStart(f) | Event::FlowStop(f) => Some(self.flow_src[f as usize]),
            Event::Retire(_) => return,
            Event::Scheduled(_) | Event::Sample | Event::WindowStart | Event::WindowEnd => None,
        };
        self.profile.events += 1;
        let w = t.0 / self.window_ns;
        if w != self.window {
            self.close_window();
            self.window = w;
        }
        match part {
            Some(p) => {
                self.profile.per_part[p as usize] += 1;
                self.in_window[p as usize] += 1;
            }
            None => {
                // Every partition stops at it: the window's work so far, then this one event.
                self.close_window();
                self.profile.global += 1;
                self.profile.critical += 1;
            }
        }
    }
}

/// A probe measuring several partitionings of one run at once.
pub struct ParallelismProbe {
    counters: Vec<Counter>,
}

impl ParallelismProbe {
    /// One partitioning per count in `parts`, by [`Partitioning::by_racks`].
    pub fn new(sc: &Scenario, parts: &[u32]) -> ParallelismProbe {
        ParallelismProbe {
            counters: parts
                .iter()
                .map(|&n| Counter::new(sc, &Partitioning::by_racks(sc, n)))
                .collect(),
        }
    }

    /// Each partitioning's profile, in the order asked for.
    pub fn finish(mut self) -> Vec<Profile> {
        self.counters
            .iter_mut()
            .map(|c| {
                c.close_window();
                c.profile.clone()
            })
            .collect()
    }
}

impl EventProbe for ParallelismProbe {
    fn on_event(&mut self, t: Time, ev: Event) {
        for c in &mut self.counters {
            c.on_event(t, ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fat_tree(k: u32) -> Scenario {
        let text = acclab_scenario::templates::fat_tree_permutation(k, 1);
        acclab_scenario::parse(&text, "<test>").unwrap()
    }

    #[test]
    fn a_fat_tree_is_cut_by_pods_with_the_cores_spread() {
        let sc = fat_tree(4);
        let name = |i: usize| sc.nodes[i].as_str();
        let p = Partitioning::by_racks(&sc, 4);
        for (i, &part) in p.of_node.iter().enumerate() {
            let n = name(i);
            // edge{pod}_{e}, agg{pod}_{a}: pod p in partition p.
            if let Some(rest) = n.strip_prefix("edge").or_else(|| n.strip_prefix("agg")) {
                let pod: u32 = rest.split('_').next().unwrap().parse().unwrap();
                assert_eq!(part, pod, "{n}");
            }
            // h{i}: k²/4 = 4 hosts per pod.
            if let Some(h) = n.strip_prefix('h') {
                assert_eq!(part, h.parse::<u32>().unwrap() / 4, "{n}");
            }
        }
        // The four cores, one per partition.
        let mut cores: Vec<u32> = (0..sc.nodes.len())
            .filter(|&i| name(i).starts_with("core"))
            .map(|i| p.of_node[i])
            .collect();
        cores.sort();
        assert_eq!(cores, vec![0, 1, 2, 3]);
        assert_eq!(p.lookahead(&sc), Some(Duration::from_micros(1)));
        // Two partitions: two pods each.
        let p2 = Partitioning::by_racks(&sc, 2);
        assert_eq!(
            p2.of_node.iter().filter(|&&x| x == 0).count(),
            sc.nodes.len() / 2
        );
    }

    fn profile_of(events: &[(u64, Event)], parts: u32) -> Profile {
        let sc = fat_tree(4);
        let mut probe = ParallelismProbe::new(&sc, &[parts]);
        for (t, ev) in events {
            probe.on_event(Time(*t), *ev);
        }
        probe.finish().remove(0)
    }

    #[test]
    fn the_critical_path_is_the_busiest_partition_per_window() {
        let sc = fat_tree(4);
        let p = Partitioning::by_racks(&sc, 4);
        // A link inside each pod: its sender's partition handles its transmissions.
        let link_in = |pod: u32| {
            sc.links
                .iter()
                .position(|l| {
                    p.of_node[l.from.0 as usize] == pod && p.of_node[l.to.0 as usize] == pod
                })
                .unwrap() as u32
        };
        let (a, b) = (link_in(0), link_in(1));
        // Window 0 (0–1 µs): 3 events in pod 0, 1 in pod 1 → 3. Window 5: 2 and 2 → 2. A
        // sample between: 1. Total 9 events (5 in pod 0, 3 in pod 1), critical path 6.
        let ev = [
            (0, Event::TxDone(a)),
            (100, Event::TxDone(a)),
            (200, Event::TxDone(b)),
            (900, Event::TxDone(a)),
            (3_000, Event::Sample),
            (5_000, Event::TxDone(a)),
            (5_100, Event::TxDone(b)),
            (5_200, Event::TxDone(b)),
            (5_300, Event::TxDone(a)),
        ];
        let prof = profile_of(&ev, 4);
        assert_eq!(
            (prof.events, prof.critical, prof.global, prof.windows),
            (9, 6, 1, 2)
        );
        assert_eq!(prof.available_parallelism(), 1.5);
        assert_eq!(prof.per_part, vec![5, 3, 0, 0]);
        assert_eq!(prof.imbalance(), 2.5); // 5 against a mean of 2 over four partitions
                                           // One partition: everything is on the critical path.
        assert_eq!(profile_of(&ev, 1).available_parallelism(), 1.0);
    }

    #[test]
    fn a_run_of_a_fabric_has_parallelism_and_a_dumbbell_little() {
        let mut sim = crate::Simulator::new(fat_tree(4));
        let probe = ParallelismProbe::new(sim.scenario(), &[1, 4]);
        let p = sim.run_probed(probe, &mut |_| {}).finish();
        assert_eq!(p[0].available_parallelism(), 1.0);
        assert_eq!(p[0].crossing, 0);
        assert!(p[1].events == p[0].events && p[1].crossing > 0);
        let a = p[1].available_parallelism();
        assert!(a > 1.5 && a <= 4.0, "{a}");
    }
}
