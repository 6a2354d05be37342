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

/// Each link's packets over the run, estimated from the scenario alone: data on each flow's
/// forward path, as many ACKs on its reverse one. A flow offers its path's slowest link's rate
/// while it is active (a finite flow its size at most); where flows together offer a link more
/// than it carries, each gets the link's share (the tightest link of its path).
pub fn link_packets(sc: &Scenario) -> Vec<f64> {
    let duration = sc.duration.as_secs_f64();
    let bits = 8.0 * f64::from(sc.packet_size.max(1));
    let link = |l: &acclab_scenario::LinkId| &sc.links[l.0 as usize];
    let offered: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| {
            let rate = f
                .forward
                .iter()
                .map(|l| link(l).rate.as_f64())
                .fold(f64::INFINITY, f64::min);
            let end = f.stop.map_or(sc.duration.0, |s| s.0.min(sc.duration.0));
            let active = end.saturating_sub(f.start.0) as f64 / 1e9;
            let volume = rate * active;
            f.scheme
                .size()
                .map_or(volume, |s| volume.min(8.0 * s.0 as f64))
        })
        .collect();
    let mut load = vec![0.0; sc.links.len()];
    for (f, v) in sc.flows.iter().zip(&offered) {
        for l in &f.forward {
            load[l.0 as usize] += v;
        }
    }
    let share: Vec<f64> = sc
        .links
        .iter()
        .zip(&load)
        .map(|(l, &v)| match v > 0.0 {
            true => (l.rate.as_f64() * duration / v).min(1.0),
            false => 1.0,
        })
        .collect();
    let mut packets = vec![0.0; sc.links.len()];
    for (f, v) in sc.flows.iter().zip(&offered) {
        let tightest = f
            .forward
            .iter()
            .map(|l| share[l.0 as usize])
            .fold(1.0, f64::min);
        let n = v * tightest / bits;
        for l in f.forward.iter().chain(&f.reverse) {
            packets[l.0 as usize] += n;
        }
    }
    packets
}

/// A packet crossing partitions costs, at each end (posted, then put in the far end's pipe),
/// about this many packet-hops of work; and each window, every partition this many (the
/// barrier and the coordinator's turn). Fitted to `acclab bench --threads 1,2` on this
/// project's cases (docs/performance.md, "One run on many cores"): the dumbbells' 0.95–1.15×
/// are estimated 1.16–1.20×; the fat-trees' 1.38–2.32×, 1.44–1.50× (a fabric's halves fit the
/// caches better than the whole, which the estimate does not count).
const CROSSING_HOPS: f64 = 1.0;
const WINDOW_HOPS: f64 = 20.0;

/// The speed-up a parallel run of `sc` on `p`'s partitions should reach, estimated before the
/// run from the scenario alone ([`link_packets`]): a hop's work falls to the partition of the
/// link's receiving node (the arrival and what the node does with the packet), a crossing
/// packet costs both ends [`CROSSING_HOPS`] more, and every window costs each partition
/// [`WINDOW_HOPS`]. The serial run's work over the busiest partition's. Unlike
/// [`Profile::available_parallelism`] it counts what synchronisation costs, so it is a
/// prediction (within about 35% on the bench cases, below on fabrics), not a ceiling; `None`
/// when nothing crosses partitions. `packets`: [`link_packets`] of `sc`.
pub fn estimated_speedup(sc: &Scenario, p: &Partitioning, packets: &[f64]) -> Option<f64> {
    let lookahead = p.lookahead(sc)?;
    let part = |n: acclab_scenario::NodeId| p.of_node[n.0 as usize] as usize;
    let mut work = vec![0.0; p.parts as usize];
    let mut serial = 0.0;
    for (l, &n) in sc.links.iter().zip(packets) {
        let (from, to) = (part(l.from), part(l.to));
        serial += n;
        work[to] += n;
        if from != to {
            work[to] += CROSSING_HOPS * n;
            work[from] += CROSSING_HOPS * n;
        }
    }
    let windows = sc.duration.0 as f64 / lookahead.0.max(1) as f64;
    let busiest = work.iter().copied().fold(0.0, f64::max) + WINDOW_HOPS * windows;
    Some(serial / busiest.max(1.0))
}

/// How many threads a run gets (`acclab run --threads`, `$ACCLAB_THREADS`, Python's
/// `threads=`): `auto` or a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// As many as the network gains from, up to the `idle` of the machine's `cores`
    /// ([`auto_threads`], [`machine_cores`]).
    Auto { cores: usize, idle: usize },
    /// This many (1: the serial engine).
    Count(usize),
}

/// This machine's cores (those this process may use), and how many of them are idle now: not
/// running another task (Linux's count of runnable tasks, `/proc/loadavg`, less this one). A
/// parallel run's threads meet at every window, so a thread that waits for the core another
/// program holds makes the run slower than a serial one (measured: `fattree-k8-perm` on 2
/// threads beside a busy loop took 1.5 times the serial run's time; sleeping at the barrier
/// rather than yielding made it worse). `$ACCLAB_CORES` sets both (a share of a machine, or a
/// test that must not depend on what else runs); the error names it, its value and the range.
pub fn machine_cores() -> Result<(usize, usize), String> {
    if let Ok(v) = std::env::var("ACCLAB_CORES") {
        return match v.trim().parse::<usize>() {
            Ok(n @ 1..=Threads::MAX) => Ok((n, n)),
            _ => Err(format!(
                "ACCLAB_CORES={v:?}: a core count from 1 to {}",
                Threads::MAX
            )),
        };
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let others = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| running_others(&l))
        .unwrap_or(0);
    Ok((cores, cores.saturating_sub(others).max(1)))
}

/// The runnable tasks other than the reader in `/proc/loadavg`'s text (its fourth field:
/// runnable/total).
fn running_others(loadavg: &str) -> Option<usize> {
    let field = loadavg.split_whitespace().nth(3)?;
    let running: usize = field.split('/').next()?.parse().ok()?;
    Some(running.saturating_sub(1))
}

impl Threads {
    /// The most threads a run takes.
    pub const MAX: usize = 256;

    /// Auto, up to this machine's idle cores ([`machine_cores`]).
    pub fn auto() -> Result<Threads, String> {
        let (cores, idle) = machine_cores()?;
        Ok(Threads::Auto { cores, idle })
    }

    /// `auto` (up to this machine's idle cores) or a thread count from 1 to [`Threads::MAX`];
    /// the error names the value and what is allowed.
    pub fn parse(s: &str) -> Result<Threads, String> {
        match s.trim() {
            "auto" => Threads::auto(),
            v => match v.parse::<usize>() {
                Ok(n @ 1..=Threads::MAX) => Ok(Threads::Count(n)),
                _ => Err(format!(
                    "{s:?}: `auto` or a thread count from 1 to {}",
                    Threads::MAX
                )),
            },
        }
    }

    /// The threads a run of `sc` gets: a count as given, `auto` as [`auto_threads`] says.
    pub fn of(self, sc: &Scenario) -> usize {
        match self {
            Threads::Count(n) => n,
            Threads::Auto { idle, .. } => auto_threads(sc, idle).0,
        }
    }
}

impl std::str::FromStr for Threads {
    type Err = String;
    fn from_str(s: &str) -> Result<Threads, String> {
        Threads::parse(s)
    }
}

/// A parallel run is chosen when it should be at least this much faster ...
pub const AUTO_GAIN: f64 = 1.3;
/// ... and the run has at least this many packet-hops: a smaller one is over before the
/// replicas a parallel run builds (one per thread) have paid for themselves.
pub const AUTO_MIN_HOPS: f64 = 2e6;

/// How many threads pay for a run of `sc` on `cores` cores (issue 56 §2: the default picks
/// serial where the topology has nothing to gain): the partition count — a power of two up to
/// `cores`, or `cores` — of the highest [`estimated_speedup`], if that is at least
/// [`AUTO_GAIN`] and the run has [`AUTO_MIN_HOPS`]; 1 otherwise. A dumbbell is serial (its one
/// bottleneck's packets all cross: estimated 1.16–1.20×), a k = 4 fat-tree too (windows of a
/// microsecond hold too little), k = 8 and above parallel. With what decided it.
pub fn auto_threads(sc: &Scenario, cores: usize) -> (usize, String) {
    let cores = cores.clamp(1, Threads::MAX);
    let packets = link_packets(sc);
    let hops: f64 = packets.iter().sum();
    if cores < 2 {
        return (1, "one core".into());
    }
    if hops < AUTO_MIN_HOPS {
        return (
            1,
            format!(
                "a small run (about {} packet-hops)",
                crate::cost::count(hops)
            ),
        );
    }
    let counts = (1..)
        .map(|k| 1usize << k)
        .take_while(|&n| n < cores)
        .chain([cores]);
    let best = counts
        .filter_map(|n| {
            let p = Partitioning::by_racks(sc, n as u32);
            estimated_speedup(sc, &p, &packets).map(|s| (n, s))
        })
        .fold(None::<(usize, f64)>, |b, (n, s)| match b {
            Some((_, bs)) if bs >= s => b,
            _ => Some((n, s)),
        });
    match best {
        Some((n, s)) if s >= AUTO_GAIN => (n, format!("estimated {s:.2}× on {n} threads")),
        Some((n, s)) => (
            1,
            format!("estimated {s:.2}× at best (on {n} threads), under the {AUTO_GAIN}× a parallel run is chosen from"),
        ),
        None => (1, "the network has a single partition".into()),
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
            flow_src: (0..sc.flows.len())
                .map(|i| part(sc.flows.ends(i).0))
                .collect(),
            flow_dst: (0..sc.flows.len())
                .map(|i| part(sc.flows.ends(i).1))
                .collect(),
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

    fn parse(text: &str) -> Scenario {
        acclab_scenario::parse(text, "<test>").unwrap()
    }

    #[test]
    fn auto_keeps_a_dumbbell_and_a_small_fabric_serial_and_splits_a_large_one() {
        use acclab_scenario::templates::{fat_tree_permutation, reno_dumbbell};
        // 100 Reno flows for 60 s: one bottleneck whose every packet crosses.
        let (n, why) = auto_threads(&parse(&reno_dumbbell(100, 100, 60)), 8);
        assert_eq!(n, 1, "{why}");
        assert!(why.contains("at best"), "{why}");
        // k = 4: windows of a microsecond hold a few packets each.
        let (n, why) = auto_threads(&parse(&fat_tree_permutation(4, 20)), 8);
        assert_eq!(n, 1, "{why}");
        // k = 8 and 16: the pods split (measured 1.38× and 1.99× on 2 threads).
        for (k, ms) in [(8, 20), (16, 5)] {
            let sc = parse(&fat_tree_permutation(k, ms));
            let (n, why) = auto_threads(&sc, 2);
            assert_eq!(n, 2, "k = {k}: {why}");
            assert_eq!(auto_threads(&sc, 1).0, 1);
            // More cores: more threads, as long as they are estimated to pay.
            let (n8, why8) = auto_threads(&sc, 8);
            assert!((2..=8).contains(&n8), "k = {k}: {why8}");
        }
        // A short run is not worth the replicas.
        let (n, why) = auto_threads(&parse(&fat_tree_permutation(8, 1)), 8);
        assert_eq!(n, 1, "{why}");
    }

    #[test]
    fn threads_parse_auto_and_counts_and_name_what_is_allowed() {
        assert_eq!(Threads::parse("3"), Ok(Threads::Count(3)));
        assert_eq!(Threads::parse(" 256 "), Ok(Threads::Count(256)));
        assert!(matches!(Threads::parse("auto"),
            Ok(Threads::Auto { cores, idle }) if (1..=cores).contains(&idle)));
        for bad in ["0", "257", "-1", "two", ""] {
            let e = Threads::parse(bad).unwrap_err();
            assert!(
                e.contains("`auto` or a thread count from 1 to 256")
                    && e.contains(&format!("{bad:?}")),
                "{e}"
            );
        }
    }

    /// Idle cores: the runnable tasks /proc/loadavg counts, less the one reading it.
    #[test]
    fn the_tasks_running_besides_this_one() {
        assert_eq!(running_others("0.52 0.58 0.59 3/345 12345\n"), Some(2));
        assert_eq!(running_others("0.00 0.01 0.05 1/120 999"), Some(0));
        assert_eq!(running_others("garbage"), None);
    }

    #[test]
    fn link_packets_carry_a_flow_both_ways_capped_by_its_size_and_the_links() {
        // Two flows share the dumbbell's bottleneck: together they get its rate, each half.
        let sc = parse(&acclab_scenario::templates::reno_dumbbell(2, 100, 10));
        let p = link_packets(&sc);
        let bottleneck = sc
            .links
            .iter()
            .position(|l| {
                l.rate.as_f64()
                    == sc
                        .links
                        .iter()
                        .map(|l| l.rate.as_f64())
                        .fold(f64::INFINITY, f64::min)
            })
            .unwrap();
        let full = sc.links[bottleneck].rate.as_f64() * 10.0 / (8.0 * f64::from(sc.packet_size));
        assert!(
            (p[bottleneck] - full).abs() < 1e-6 * full,
            "{} vs {full}",
            p[bottleneck]
        );
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
