//! Where things are in a history row (`Layout`) and what each flow reads of it, where and how
//! far back (`Lags`, computed from the paths' delays).

use super::{
    HopRead, Lags, Layout, Model, ABSENT, DEP, DROPPED, MARKED, MARK_PROB, QDELAY, QUEUED, STAMP,
};
use crate::history::Lag;

impl Layout {
    /// The series of `hops` hops and `links` live links; `keep_hop[s]` and `keep_link[s]` say
    /// which are kept. Returns the layout and the row's width.
    pub(super) fn of(
        hops: usize,
        links: usize,
        keep_hop: [bool; 4],
        keep_link: [bool; 3],
    ) -> (Layout, usize) {
        let mut width = 0;
        let mut place = |keep: bool, n: usize| {
            if keep {
                width += n;
                width - n
            } else {
                ABSENT
            }
        };
        let hop = keep_hop.map(|k| place(k, hops));
        let link = keep_link.map(|k| place(k, links));
        (Layout { hop, link }, width)
    }
}

impl Model<'_> {
    pub(super) fn compute_lags(&mut self) {
        let h = self.h;
        // Without delays every read is of the newest row.
        let scale = if self.instantaneous { 0.0 } else { 1.0 };
        let lag = |tau: f64| Lag::of(tau * scale, h);
        // A hop's service is recorded as a rate over the step before its row ([t − h, t] in the
        // row of t); what is read as the arrivals over [t, t + h] a delay τ downstream is the
        // service over [t − τ, t − τ + h]: the row τ − h back (else every hop adds a step of
        // delay to the loop — at the default step an eighth of an RTT over two hops, enough
        // to move the stability boundary, stability.rs).
        let served = |tau: f64| Lag::of((tau * scale - h).max(0.0), h);
        let instantaneous = self.instantaneous;
        let lags: Vec<Lags> = self
            .net
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if self.classes.rep[i] != i {
                    return Lags::default();
                }
                // The hops that can queue (the j-th is `hop(j)`, at path position `kept[j]`);
                // each one's output reaches the next (or the receiver) through the pure delays
                // between them, `onward(j)` later.
                let kept: Vec<usize> = (0..f.hops.len())
                    .filter(|&k| !self.pure_delay[f.hops[k]])
                    .collect();
                let hop = |j: usize| self.route_hop[self.first[i] + j];
                let until = |j: usize| kept.get(j + 1).copied().unwrap_or(f.hops.len());
                let onward = |j: usize| f.hop_delay[kept[j]..until(j)].iter().sum::<f64>();
                let last = kept.len().checked_sub(1);
                Lags {
                    back: kept
                        .iter()
                        .enumerate()
                        .map(|(j, &k)| {
                            let l = f.hops[k];
                            HopRead {
                                lag: lag(f.back[k]),
                                qdelay: self.link_series(l, QDELAY),
                                queued: self.hop_series(hop(j), QUEUED),
                                stamp: self.can_stamp[l].then(|| self.link_series(l, STAMP)),
                                // A FIFO drops only when full: discrete loss events — but as a
                                // rate where the fixed point is sought (no delay, no saw-tooth).
                                dropped: self.can_drop[l].then(|| {
                                    (
                                        self.hop_series(hop(j), DROPPED),
                                        self.tail_drop[l] && !instantaneous,
                                    )
                                }),
                                marks: self.can_mark[l].then(|| {
                                    (
                                        self.hop_series(hop(j), MARKED),
                                        self.link_series(l, MARK_PROB),
                                    )
                                }),
                            }
                        })
                        .collect(),
                    // What the last queueing hop serves reaches the source after its `back`
                    // (the pure delays after it included).
                    egress: last.map(|j| (self.hop_series(hop(j), DEP), served(f.back[kept[j]]))),
                    input: (1..kept.len())
                        .map(|j| (self.hop_series(hop(j - 1), DEP), served(onward(j - 1))))
                        .collect(),
                    receiver: last.map(|j| (self.hop_series(hop(j), DEP), served(onward(j)))),
                    through: (0..kept.len())
                        .flat_map(|j| (kept[j] + 1..until(j)).map(move |k| (j, k)))
                        .filter(|&(_, k)| self.classes.link_rep[f.hops[k]] == f.hops[k])
                        .map(|(j, k)| {
                            let l = f.hops[k];
                            let d = f.hop_delay[kept[j]..k].iter().sum::<f64>();
                            (
                                l,
                                self.hop_series(hop(j), DEP),
                                served(d),
                                self.classes.multiplicity(i, l),
                            )
                        })
                        .collect(),
                    // Only links with a state of their own: the others' queues are always empty
                    // (their series stay zero), so reading them adds nothing.
                    reverse: f
                        .reverse
                        .iter()
                        .filter(|(l, _)| self.live_links.binary_search(l).is_ok())
                        .map(|&(l, b)| (self.link_series(l, QDELAY), lag(b)))
                        .collect(),
                }
            })
            .collect();
        self.lags = lags;
    }

    /// Series `s` of hop `hop` in a history row.
    pub(super) fn hop_series(&self, hop: usize, s: usize) -> usize {
        debug_assert!(self.layout.hop[s] != ABSENT, "series {s} is not kept");
        self.layout.hop[s] + hop
    }

    /// Series `s` of live link `l` in a history row.
    pub(super) fn link_series(&self, l: usize, s: usize) -> usize {
        debug_assert!(self.slot[l] != usize::MAX, "link {l} has no series");
        debug_assert!(self.layout.link[s] != ABSENT, "link series {s} is not kept");
        self.layout.link[s] + self.slot[l]
    }
}
