//! What the simulator keeps of each flow: its [`Books`] (one cache line, touched by every
//! packet) and drop counts, in the [`Ledger`]'s pages, and its times.

use acclab_core::Time;

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

/// When a flow starts (its start jitter drawn) and stops.
pub(super) struct FlowState {
    pub(super) start: Time,
    pub(super) stop: Option<Time>,
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
    pages: Vec<Option<Page>>,
    /// Each page's flows not yet retired.
    unretired: Vec<u32>,
    /// Where each flow's routes begin, forward and reverse: its books' `route` when its page is
    /// made.
    routes: Vec<[u32; 2]>,
}

struct Page {
    books: Box<[Books]>,
    /// Packets dropped and their bytes, forward and backward (as in [`Books`]).
    dropped: Box<[[(u64, u64); 2]]>,
}

impl Ledger {
    /// The ledger of flows whose routes begin at `routes`, no page made.
    pub(super) fn new(routes: Vec<[u32; 2]>) -> Ledger {
        let n = routes.len();
        Ledger {
            pages: (0..n.div_ceil(PAGE)).map(|_| None).collect(),
            unretired: (0..n.div_ceil(PAGE))
                .map(|p| (n - p * PAGE).min(PAGE) as u32)
                .collect(),
            routes,
        }
    }

    /// Flow `f` opens (starts, or is built to live to the end): its page is made if it was not.
    #[cold]
    pub(super) fn open(&mut self, f: usize) {
        self.page_mut(f);
    }

    /// The page of flow `f`, made if it was not.
    fn page_mut(&mut self, f: usize) -> &mut Page {
        let p = f / PAGE;
        let routes = &self.routes;
        self.pages[p].get_or_insert_with(|| {
            let first = p * PAGE;
            let flows = &routes[first..(first + PAGE).min(routes.len())];
            Page {
                books: flows
                    .iter()
                    .map(|&route| Books {
                        route,
                        injected: [0; 2],
                        arrived: [0; 2],
                        armed: [Books::UNARMED; 2],
                        generation: [0; 2],
                    })
                    .collect(),
                dropped: vec![[(0, 0); 2]; flows.len()].into_boxed_slice(),
            }
        })
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
        let page = self.pages[f / PAGE].as_mut().expect("an open flow's page");
        &mut page.books[f % PAGE]
    }

    /// Flow `f`'s books if its page is there (a timer's entry may outlive its flow's page; a
    /// prefetch may name any flow).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, f: usize) -> Option<&mut Books> {
        let page = self.pages.get_mut(f / PAGE)?.as_mut()?;
        Some(&mut page.books[f % PAGE])
    }

    /// [`get_mut`](Self::get_mut), read only.
    #[inline(always)]
    pub(super) fn get(&self, f: usize) -> Option<&Books> {
        let page = self.pages.get(f / PAGE)?.as_ref()?;
        Some(&page.books[f % PAGE])
    }

    /// Flow `f`'s drops, counted (its page made if it was not: in a partition of a parallel
    /// run, a packet may be dropped on a link far from both its endpoints).
    pub(super) fn count_drop(&mut self, f: usize, dir: usize, bytes: u64) {
        let c = &mut self.page_mut(f).dropped[f % PAGE][dir];
        c.0 += 1;
        c.1 += bytes;
    }

    /// Flow `f`'s counts as the simulator has them (zero if its page was never made); a retired
    /// flow's are kept elsewhere (its page may be gone).
    pub(super) fn counts(&self, f: usize) -> [PacketCounts; 2] {
        let Some(page) = &self.pages[f / PAGE] else {
            return [PacketCounts::default(); 2];
        };
        let (b, dropped) = (&page.books[f % PAGE], &page.dropped[f % PAGE]);
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
            self.pages[p] = None;
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
}
