//! What the simulator keeps of each flow: its [`Books`] (one cache line, touched by every
//! packet) and drop counts, in the [`Ledger`]'s [`Pages`], and its [`FlowTimes`].

use std::collections::BTreeMap;
use std::sync::Arc;

use acclab_core::Time;
use acclab_scenario::Scenario;

use super::pages::Pages;

/// Packet counts of one flow in one direction, for conservation checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    pub injected: u64,
    pub arrived: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
}

/// What the simulator reads and writes of a flow for each of its packets, in one cache line:
/// where its routes begin, its packets injected and arrived, and its endpoints' timers. (At
/// 10,000 flows, the route table's index, the counts and the timers were a miss each.) In
/// each pair, [0] is for forward packets (data, OB, IB) or the sender, [1] for backward ones
/// (ACKs, reverse control) or the receiver. The counts are the simulator's own bookkeeping,
/// checked against the packets found in the network.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Books {
    pub(super) route: [u32; 2],
    pub(super) injected: [u64; 2],
    pub(super) arrived: [u64; 2],
    /// When each endpoint's timer entry in the event queue is due ([`Books::UNARMED`] if it
    /// has none), and the generation that entry carries: an entry of another generation was
    /// replaced (it moved earlier) and is ignored when it comes.
    pub(super) armed: [Time; 2],
    pub(super) generation: [u32; 2],
}

impl Books {
    /// No timer entry: a deadline at the end of time is never scheduled, since it never comes.
    pub(super) const UNARMED: Time = Time(u64::MAX);
}

/// When each flow starts (its start jitter drawn) and stops: a `[[flow]]` table's flow's as
/// drawn when the simulator was built, a workload's read from the scenario when asked (it has
/// neither jitter nor stop: nothing is kept for it).
pub(super) struct FlowTimes {
    written: Vec<(Time, Option<Time>)>,
    scenario: Arc<Scenario>,
}

impl FlowTimes {
    /// `scenario`'s flows' times, drawn now.
    pub(super) fn of(scenario: &Arc<Scenario>) -> FlowTimes {
        FlowTimes {
            written: (0..scenario.flows.written().len())
                .map(|i| scenario.flow_times(i))
                .collect(),
            scenario: Arc::clone(scenario),
        }
    }

    /// Flows of the run.
    pub(super) fn len(&self) -> usize {
        self.scenario.flows.len()
    }

    /// When flow `f` starts and stops.
    pub(super) fn get(&self, f: usize) -> (Time, Option<Time>) {
        match self.written.get(f) {
            Some(&times) => times,
            None => self.scenario.flow_times(f),
        }
    }
}

/// Every flow's [`Books`] and drop counts, in [`Pages`] (made as flows start, freed as they are
/// retired). A retired flow's counts are kept with its statistics (`endpoints.rs`). In a
/// partition of a parallel run, a page is freed once the flows of it the partition holds are
/// retired ([`Ledger::hold_only`]), and the drops of flows it does not hold (on its links far
/// from both their ends) are counted apart, to the end of the run.
pub(super) struct Ledger {
    books: Pages<Books>,
    /// Packets dropped and their bytes, forward and backward (as in [`Books`]).
    dropped: Pages<[(u64, u64); 2]>,
    /// Drops of flows a partition does not hold, as in `dropped`.
    strays: BTreeMap<u32, [(u64, u64); 2]>,
    /// Where each flow's routes begin, forward and reverse: its books' `route` when its page is
    /// made.
    routes: Vec<[u32; 2]>,
}

impl Ledger {
    /// The ledger of flows whose routes begin at `routes`, no page made.
    pub(super) fn new(routes: Vec<[u32; 2]>) -> Ledger {
        Ledger {
            books: Pages::new(routes.len()),
            dropped: Pages::new(routes.len()),
            strays: BTreeMap::new(),
            routes,
        }
    }

    /// Only the flows `holds` names are retired here (a partition's: [`Pages::hold_only`]).
    pub(super) fn hold_only(&mut self, holds: impl Fn(usize) -> bool + Copy) {
        self.books.hold_only(holds);
        self.dropped.hold_only(holds);
    }

    /// Flow `f` opens (starts, or is built to live to the end): its page is made if it was not.
    #[cold]
    pub(super) fn open(&mut self, f: usize) {
        let routes = &self.routes;
        self.books.open(f, |i| Books {
            route: routes.get(i).copied().unwrap_or_default(),
            injected: [0; 2],
            arrived: [0; 2],
            armed: [Books::UNARMED; 2],
            generation: [0; 2],
        });
        self.dropped.open(f, |_| [(0, 0); 2]);
    }

    /// Where flow `f`'s route in direction `dir` begins, whether or not its page is here (a
    /// packet leaving a queue reads it, in a partition of a parallel run far from both ends).
    #[inline(always)]
    pub(super) fn route(&self, f: usize, dir: usize) -> u32 {
        self.routes[f][dir]
    }

    /// The books of open flow `f` (a flow with a packet in the network or a timer pending, or
    /// one that has started and is not retired).
    #[inline(always)]
    pub(super) fn books_mut(&mut self, f: usize) -> &mut Books {
        self.books.at_mut(f)
    }

    /// Flow `f`'s books if its page is there (a timer's entry may outlive its flow's page; a
    /// prefetch may name any flow).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, f: usize) -> Option<&mut Books> {
        self.books.get_mut(f)
    }

    /// [`get_mut`](Self::get_mut), read only.
    #[inline(always)]
    pub(super) fn get(&self, f: usize) -> Option<&Books> {
        self.books.get(f)
    }

    /// Flow `f`'s drops, counted (its page made if it was not: in a partition of a parallel
    /// run, a packet may be dropped on a link far from both its endpoints).
    pub(super) fn count_drop(&mut self, f: usize, dir: usize, bytes: u64) {
        self.open(f);
        let c = &mut self.dropped.at_mut(f)[dir];
        c.0 += 1;
        c.1 += bytes;
    }

    /// Flow `f`'s drop, in a partition that does not hold it: counted apart (its page, if the
    /// partition has it for other flows, is freed with theirs).
    #[cold]
    pub(super) fn count_stray_drop(&mut self, f: usize, dir: usize, bytes: u64) {
        let c = &mut self.strays.entry(f as u32).or_default()[dir];
        c.0 += 1;
        c.1 += bytes;
    }

    /// Flow `f`'s counts as the simulator has them (zero if its page was never made), with its
    /// drops counted apart; a retired flow's are kept elsewhere (its page may be gone).
    pub(super) fn counts(&self, f: usize) -> [PacketCounts; 2] {
        let none = [(0, 0); 2];
        let stray = self.strays.get(&(f as u32)).unwrap_or(&none);
        let (Some(b), Some(dropped)) = (self.books.get(f), self.dropped.get(f)) else {
            return [0, 1].map(|d| PacketCounts {
                dropped: stray[d].0,
                dropped_bytes: stray[d].1,
                ..PacketCounts::default()
            });
        };
        [0, 1].map(|d| PacketCounts {
            injected: b.injected[d],
            arrived: b.arrived[d],
            dropped: dropped[d].0 + stray[d].0,
            dropped_bytes: dropped[d].1 + stray[d].1,
        })
    }

    /// Flow `f` is retired: its counts, for the caller to keep; its page freed if it was the
    /// last of its flows there.
    pub(super) fn retire(&mut self, f: usize) -> [PacketCounts; 2] {
        let counts = self.counts(f);
        self.books.retire(f);
        self.dropped.retire(f);
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::super::pages::PAGE;
    use super::*;

    /// What a packet touches of its flow is one cache line (see [`Books`]).
    #[test]
    fn a_flows_books_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<Books>(), 64);
        assert_eq!(std::mem::align_of::<Books>(), 64);
    }

    /// A page of books is made from the flows' route starts; a drop on a page not made (a
    /// partition far from the flow's ends) makes it; a retired flow's counts are handed back,
    /// and its page freed with the last of its flows.
    #[test]
    fn a_retired_flows_counts_are_handed_back() {
        let flows = PAGE + 10;
        let mut l = Ledger::new((0..flows as u32).map(|i| [2 * i, 2 * i + 1]).collect());
        l.open(3);
        assert_eq!(l.get(PAGE - 1).map(|b| b.route), Some([2046, 2047]));
        l.books_mut(3).injected = [5, 2];
        l.books_mut(3).arrived = [4, 2];
        l.count_drop(3, 0, 1500);
        assert_eq!(l.route(PAGE + 9, 1), 2 * (PAGE as u32 + 9) + 1);
        assert!(l.get(PAGE + 1).is_none());
        l.count_drop(PAGE + 1, 1, 40);
        assert_eq!(l.counts(PAGE + 1)[1].dropped_bytes, 40);
        let counts = l.retire(3);
        assert_eq!(
            counts[0],
            PacketCounts {
                injected: 5,
                arrived: 4,
                dropped: 1,
                dropped_bytes: 1500
            }
        );
        (0..PAGE).filter(|&f| f != 3).for_each(|f| _ = l.retire(f));
        assert!(l.get(3).is_none(), "freed once all its flows are retired");
        assert_eq!(l.counts(3), [PacketCounts::default(); 2]);
        assert!(l.get_mut(PAGE + 1).is_some(), "the other page stays");
    }
}
