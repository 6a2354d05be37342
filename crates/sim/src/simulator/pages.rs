//! Per-flow state in pages of [`PAGE`] flows, each made when the first of its flows opens and
//! freed once every one of its flows is retired (issue 56: finished flows' memory reused). A
//! workload's flows are numbered in the order they start, so the pages held at any time are
//! those of the flows open then, and of the few long ones among them: a run of a million short
//! flows holds a few thousand flows' state, not a million. A flow that is never retired (one
//! without a finite transfer) keeps its page to the end.
//!
//! Pages are whole arrays, so that a flow's place in its page needs no bounds check: a read is
//! the page's pointer, its test, and the flow's line.

/// Flows to a page.
pub(super) const PAGE: usize = 1024;

pub(super) struct Pages<T> {
    pages: Vec<Option<Box<[T; PAGE]>>>,
    /// Each page's flows not yet retired.
    unretired: Vec<u32>,
}

impl<T> Pages<T> {
    /// Pages for `flows` flows, none made.
    pub(super) fn new(flows: usize) -> Pages<T> {
        let pages = flows.div_ceil(PAGE);
        Pages {
            pages: (0..pages).map(|_| None).collect(),
            unretired: (0..pages)
                .map(|p| (flows - p * PAGE).min(PAGE) as u32)
                .collect(),
        }
    }

    /// Only the flows `holds` names are ever retired here (in a partition of a parallel run,
    /// those whose sender or receiver it holds, and those that live to the end, which are never
    /// retired and so keep their pages): a page is freed once those of its flows are. Called
    /// before any flow is retired.
    pub(super) fn hold_only(&mut self, holds: impl Fn(usize) -> bool) {
        for (p, unretired) in self.unretired.iter_mut().enumerate() {
            // Until a flow is retired, a page's count is its flows'.
            let flows = p * PAGE..p * PAGE + *unretired as usize;
            *unretired = flows.filter(|&f| holds(f)).count() as u32;
        }
    }

    /// Flow `f` opens: its page is made, each flow `i` of it given `make(i)` (also past the last
    /// flow, in the last page), if it was not there.
    #[cold]
    pub(super) fn open(&mut self, f: usize, make: impl FnMut(usize) -> T) {
        let p = f / PAGE;
        if self.pages[p].is_none() {
            let page: Box<[T]> = (p * PAGE..(p + 1) * PAGE).map(make).collect();
            self.pages[p] = Some(
                page.try_into()
                    .unwrap_or_else(|_| unreachable!("PAGE elements")),
            );
        }
    }

    /// Flow `f`'s state, if its page is there.
    #[inline(always)]
    pub(super) fn get(&self, f: usize) -> Option<&T> {
        Some(&self.pages.get(f / PAGE)?.as_ref()?[f % PAGE])
    }

    /// Flow `f`'s state, if its page is there.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, f: usize) -> Option<&mut T> {
        Some(&mut self.pages.get_mut(f / PAGE)?.as_mut()?[f % PAGE])
    }

    /// The state of open flow `f` (whose page the caller knows is there).
    #[inline(always)]
    pub(super) fn at_mut(&mut self, f: usize) -> &mut T {
        let page = self.pages[f / PAGE].as_mut().expect("an open flow's page");
        &mut page[f % PAGE]
    }

    /// Flow `f` is retired: its page is freed if it was the last of its flows there.
    pub(super) fn retire(&mut self, f: usize) {
        let p = f / PAGE;
        self.unretired[p] -= 1;
        if self.unretired[p] == 0 {
            self.pages[p] = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page is made when the first of its flows opens, from `make`, and freed once its last
    /// flow is retired — not before, whatever the order.
    #[test]
    fn a_page_lives_from_its_first_flows_opening_to_its_last_ones_retirement() {
        let flows = PAGE + 10;
        let mut p: Pages<usize> = Pages::new(flows);
        assert!(p.get(3).is_none() && p.get(PAGE).is_none() && p.get(flows).is_none());
        p.open(3, |i| 2 * i);
        assert_eq!(p.get(PAGE - 1), Some(&(2 * PAGE - 2)));
        assert!(p.get(PAGE).is_none(), "the second page is not made");
        *p.at_mut(5) = 7;
        p.open(5, |_| 0);
        assert_eq!(p.get(5), Some(&7), "opening again keeps the page");
        p.open(PAGE + 9, |i| i);
        p.retire(3);
        for f in (0..PAGE).rev().filter(|&f| f != 3) {
            assert!(p.get(f).is_some(), "freed with flow {f} not retired");
            p.retire(f);
        }
        assert!(p.get(3).is_none(), "freed once all its flows are retired");
        (PAGE..flows - 1).for_each(|f| p.retire(f));
        assert_eq!(
            p.get_mut(flows - 1),
            Some(&mut (flows - 1)),
            "one flow left"
        );
        p.retire(flows - 1);
        assert!(p.get(flows - 1).is_none(), "the last page has 10 flows");
    }

    /// Holding only some flows, a page is freed once those are retired, and one that holds
    /// none of them is never freed (it is never made).
    #[test]
    fn a_page_is_freed_once_the_flows_held_are_retired() {
        let mut p: Pages<u8> = Pages::new(2 * PAGE + 3);
        p.hold_only(|f| f % 3 == 0 && f < 2 * PAGE);
        p.open(0, |_| 1);
        p.open(PAGE + 2, |_| 2);
        for f in (0..PAGE).step_by(3) {
            assert!(p.get(0).is_some(), "freed before flow {f} was retired");
            p.retire(f);
        }
        assert!(p.get(0).is_none(), "freed once its held flows are retired");
        (PAGE..2 * PAGE)
            .filter(|f| f % 3 == 0)
            .for_each(|f| p.retire(f));
        assert!(p.get(PAGE + 2).is_none());
    }
}
