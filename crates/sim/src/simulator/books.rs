//! What the simulator keeps of each flow: its [`Books`] (one cache line, touched by every
//! packet) and drop counts, in the [`Ledger`]'s pages, and its [`FlowTimes`].

use std::sync::Arc;

use acclab_core::Time;
use acclab_scenario::Scenario;

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

/// Flows to a page of the [`Ledger`]: 96 KB of books and drop counts.
const PAGE: usize = 1024;

/// Every flow's [`Books`] and drop counts, in pages of [`PAGE`] flows: a page is made when the
/// first of its flows opens (or a packet of one is dropped) and freed once every one of its
/// flows is retired, so that a run of a million short flows holds the pages of those open now
/// and of the few long ones among them (a workload's flows are numbered in the order they
/// start), not of every flow it will see (issue 56: finished flows' memory reused). A retired
/// flow's counts are kept with its statistics (`endpoints.rs`). A flow that never retires (one
/// without a finite transfer) keeps its page to the end; so does, in a partition of a parallel
/// run, a page of flows the partition does not hold.
pub(super) struct Ledger {
    /// Each page's books (whole pages, so that a flow's place in one needs no bounds check).
    books: Vec<Option<Box<[Books; PAGE]>>>,
    /// Each page's packets dropped and their bytes, forward and backward (as in [`Books`]).
    dropped: Vec<Option<Box<[Dropped; PAGE]>>>,
    /// Each page's flows not yet retired.
    unretired: Vec<u32>,
    /// Where each flow's routes begin, forward and reverse: its books' `route` when its page is
    /// made.
    routes: Vec<[u32; 2]>,
}

/// A flow's packets dropped and their bytes, forward and backward.
type Dropped = [(u64, u64); 2];

/// `PAGE` copies of `v`, boxed (made on the heap, not the stack).
fn page<T: Clone>(v: T) -> Box<[T; PAGE]> {
    vec![v; PAGE]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("PAGE elements"))
}

impl Ledger {
    /// The ledger of flows whose routes begin at `routes`, no page made.
    pub(super) fn new(routes: Vec<[u32; 2]>) -> Ledger {
        let (n, pages) = (routes.len(), routes.len().div_ceil(PAGE));
        Ledger {
            books: (0..pages).map(|_| None).collect(),
            dropped: (0..pages).map(|_| None).collect(),
            unretired: (0..pages)
                .map(|p| (n - p * PAGE).min(PAGE) as u32)
                .collect(),
            routes,
        }
    }

    /// Flow `f` opens (starts, or is built to live to the end): its page is made if it was not.
    #[cold]
    pub(super) fn open(&mut self, f: usize) {
        let p = f / PAGE;
        if self.books[p].is_some() {
            return;
        }
        let mut books = page(Books {
            route: [0; 2],
            injected: [0; 2],
            arrived: [0; 2],
            armed: [Books::UNARMED; 2],
            generation: [0; 2],
        });
        for (b, &route) in books.iter_mut().zip(&self.routes[p * PAGE..]) {
            b.route = route;
        }
        self.books[p] = Some(books);
        self.dropped[p] = Some(page([(0, 0); 2]));
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
        let page = self.books[f / PAGE].as_mut().expect("an open flow's page");
        &mut page[f % PAGE]
    }

    /// Flow `f`'s books if its page is there (a timer's entry may outlive its flow's page; a
    /// prefetch may name any flow).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, f: usize) -> Option<&mut Books> {
        let page = self.books.get_mut(f / PAGE)?.as_mut()?;
        Some(&mut page[f % PAGE])
    }

    /// [`get_mut`](Self::get_mut), read only.
    #[inline(always)]
    pub(super) fn get(&self, f: usize) -> Option<&Books> {
        let page = self.books.get(f / PAGE)?.as_ref()?;
        Some(&page[f % PAGE])
    }

    /// Flow `f`'s drops, counted (its page made if it was not: in a partition of a parallel
    /// run, a packet may be dropped on a link far from both its endpoints).
    pub(super) fn count_drop(&mut self, f: usize, dir: usize, bytes: u64) {
        self.open(f);
        let page = self.dropped[f / PAGE].as_mut().expect("made");
        let c = &mut page[f % PAGE][dir];
        c.0 += 1;
        c.1 += bytes;
    }

    /// Flow `f`'s counts as the simulator has them (zero if its page was never made); a retired
    /// flow's are kept elsewhere (its page may be gone).
    pub(super) fn counts(&self, f: usize) -> [PacketCounts; 2] {
        let (Some(books), Some(dropped)) = (&self.books[f / PAGE], &self.dropped[f / PAGE]) else {
            return [PacketCounts::default(); 2];
        };
        let (b, dropped) = (&books[f % PAGE], &dropped[f % PAGE]);
        [0, 1].map(|d| PacketCounts {
            injected: b.injected[d],
            arrived: b.arrived[d],
            dropped: dropped[d].0,
            dropped_bytes: dropped[d].1,
        })
    }

    /// Flow `f` is retired: its counts, for the caller to keep; its page freed if it was the
    /// last of its flows there.
    pub(super) fn retire(&mut self, f: usize) -> [PacketCounts; 2] {
        let counts = self.counts(f);
        let p = f / PAGE;
        self.unretired[p] -= 1;
        if self.unretired[p] == 0 {
            (self.books[p], self.dropped[p]) = (None, None);
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a packet touches of its flow is one cache line (see [`Books`]).
    #[test]
    fn a_flows_books_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<Books>(), 64);
        assert_eq!(std::mem::align_of::<Books>(), 64);
    }

    /// A page is made when the first of its flows opens, holds every flow's books from their
    /// route starts, and is freed once its last flow is retired — not before, whatever the
    /// order; a retired flow's counts are handed back.
    #[test]
    fn a_page_lives_from_its_first_flows_opening_to_its_last_ones_retirement() {
        let flows = PAGE + 10;
        let mut l = Ledger::new((0..flows as u32).map(|i| [2 * i, 2 * i + 1]).collect());
        assert!(l.get(3).is_none() && l.get(PAGE).is_none() && l.get(flows).is_none());
        l.open(3);
        assert_eq!(l.get(PAGE - 1).map(|b| b.route), Some([2046, 2047]));
        assert!(l.get(PAGE).is_none(), "the second page is not made");
        l.books_mut(3).injected = [5, 2];
        l.books_mut(3).arrived = [4, 2];
        l.count_drop(3, 0, 1500);
        assert_eq!(l.route(PAGE + 9, 1), 2 * (PAGE as u32 + 9) + 1);
        // A drop on the second page (a partition far from the flow's ends) makes it.
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
        for f in (0..PAGE).rev().filter(|&f| f != 3) {
            assert!(l.get(f).is_some(), "freed with flow {f} not retired");
            l.retire(f);
        }
        assert!(l.get(3).is_none(), "freed once all its flows are retired");
        assert_eq!(l.counts(3), [PacketCounts::default(); 2]);
        assert!(l.get_mut(PAGE + 1).is_some(), "the other page stays");
    }
}
