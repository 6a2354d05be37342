//! Selective acknowledgements: the receiver's SACK block (RFC 2018) and the sender's scoreboard
//! for SACK-based loss recovery (RFC 6675).
//!
//! Both sides keep the segments received above the cumulative ACK as a [`RangeSet`] of
//! half-open segment ranges. An ACK carries one block, the range holding the segment whose
//! arrival triggered it (RFC 2018 §4: "the first SACK block ... MUST specify the contiguous
//! block of data containing the segment which triggered this ACK"); with an ACK per arrival and
//! a lossless reverse path this tells the sender of every segment, as more blocks would.
//!
//! Departures: one block per ACK, not three or four (the packet has room for one: an offset
//! and a length of at most 2³² segments each, relative to the cumulative ACK); a block that
//! lost ACKs leave unreported is learnt from a later ACK only if it grows. Sequence numbers
//! count segments (`IsLost` counts DupThresh segments, RFC 6675 §4's "(DupThresh − 1) · SMSS
//! bytes" for full-size segments).
//!
//! Reordering: DupThresh is not fixed at 3 but learnt, as Linux learns `tp->reordering`
//! (tcp_input.c, `tcp_check_sack_reordering` and the cumulative-ACK check in
//! `tcp_clean_rtx_queue`): when a segment never retransmitted is SACKed or acknowledged below
//! the highest segment already SACKed (`fack`), the network reordered it by `fack − seq`
//! segments, and DupThresh becomes the largest such distance seen, between 3 and
//! [`MAX_REORDERING`] (Linux's `tcp_max_reordering`, 300). On a single path (FIFO links)
//! nothing is reordered and DupThresh stays 3; with packet spraying the first reorderings
//! beyond 3 still cause spurious retransmissions, later ones within the distance learnt do
//! not. Departures from Linux: no undo of the window reduction a spurious retransmission
//! caused (Linux's DSACK and Eifel undo), and no RACK-TLP (RFC 8985), Linux's default loss
//! detection since 4.18, which tolerates reordering by time instead of by count.

/// RFC 6675 §2: DupThresh, where it starts.
pub const DUP_THRESH: u64 = 3;

/// The largest DupThresh reordering may teach (Linux's `net.ipv4.tcp_max_reordering`).
pub const MAX_REORDERING: u64 = 300;

/// Disjoint, non-adjacent half-open ranges of segment numbers, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
    /// Segments in all the ranges (so that counts over most of the set need not walk it).
    total: u64,
}

impl RangeSet {
    /// Adds `[start, end)`, merging with what it touches; returns how many segments were new.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // The first range that ends at or after `start` (touching counts).
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let mut j = i;
        let (mut lo, mut hi) = (start, end);
        let mut covered = 0;
        while j < self.ranges.len() && self.ranges[j].0 <= end {
            let (s, e) = self.ranges[j];
            covered += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
            j += 1;
        }
        self.ranges.splice(i..j, [(lo, hi)]);
        let newly = (end - start) - covered;
        self.total += newly;
        newly
    }

    /// Forgets everything below `point`.
    pub fn remove_below(&mut self, point: u64) {
        let n = self.ranges.partition_point(|&(_, e)| e <= point);
        self.total -= self.ranges.drain(..n).map(|(s, e)| e - s).sum::<u64>();
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < point {
                self.total -= point - first.0;
                first.0 = point;
            }
        }
    }

    pub fn contains(&self, seq: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).is_some_and(|&(s, _)| s <= seq)
    }

    /// The range holding `seq`.
    pub fn range_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// Segments in `[a, b)`. Walks the ranges inside `[a, b)` or those outside it, whichever
    /// are fewer (`pipe()` asks this on every ACK, mostly about nearly the whole set).
    pub fn count_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        // The ranges overlapping [a, b) are i..j.
        let i = self.ranges.partition_point(|&(_, e)| e <= a);
        let j = self.ranges.partition_point(|&(s, _)| s < b);
        if i >= j {
            return 0;
        }
        let n = self.ranges.len();
        if j - i <= i + (n - j) {
            return self.ranges[i..j]
                .iter()
                .map(|&(s, e)| e.min(b) - s.max(a))
                .sum();
        }
        let outside: u64 = self.ranges[..i]
            .iter()
            .chain(&self.ranges[j..])
            .map(|&(s, e)| e - s)
            .sum();
        // The edge ranges may stick out of [a, b) (the same range at both edges when i + 1 = j).
        let below = a.saturating_sub(self.ranges[i].0);
        let above = self.ranges[j - 1].1.saturating_sub(b);
        self.total - outside - below - above
    }

    /// The lowest segment at or above `from`, below `below`, that is not in the set.
    pub fn first_gap(&self, from: u64, below: u64) -> Option<u64> {
        let s = match self.range_of(from) {
            Some((_, e)) => e,
            None => from,
        };
        (s < below).then_some(s)
    }

    /// The lowest segment such that `n` segments of the set lie above it (at or above the
    /// segment returned): RFC 6675's IsLost holds for every segment below it.
    pub fn nth_highest(&self, n: u64) -> Option<u64> {
        let mut left = n;
        for &(s, e) in self.ranges.iter().rev() {
            let len = e - s;
            if len >= left {
                return Some(e - left);
            }
            left -= len;
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.first().copied()
    }
}

/// The sender's view of one recovery: what the receiver holds (SACKed) and what was resent;
/// and across recoveries, how far the network reorders.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    sacked: RangeSet,
    /// Retransmissions not yet SACKed or acknowledged, each with the highest segment sent
    /// before it left: once a segment above that is SACKed, the retransmission, sent before
    /// it, should have arrived too — it was lost again (Linux's `tcp_mark_lost_retrans`; RFC
    /// 6675 alone leaves a lost retransmission to the retransmission timer).
    resent: Vec<(u64, u64)>,
    /// Retransmissions found lost again, to resend before anything else.
    relost: Vec<u64>,
    /// Segments above the cumulative ACK ever retransmitted (Linux's `TCPCB_EVER_RETRANS`):
    /// their arrival below `fack` says nothing of reordering.
    retransmitted: RangeSet,
    /// One past the highest segment SACKed or acknowledged.
    fack: u64,
    /// DupThresh: 3, or the reordering seen (see the module header).
    dup_thresh: u64,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            sacked: RangeSet::default(),
            resent: Vec::new(),
            relost: Vec::new(),
            retransmitted: RangeSet::default(),
            fack: 0,
            dup_thresh: DUP_THRESH,
        }
    }
}

impl Scoreboard {
    /// An ACK's block `[start, end)`; returns how many segments it SACKed anew.
    pub fn on_block(&mut self, start: u64, end: u64, snd_una: u64) -> u64 {
        let start = start.max(snd_una);
        self.check_reordering(start, end);
        let newly = self.sacked.insert(start, end);
        let (sacked, relost) = (&self.sacked, &mut self.relost);
        self.resent.retain(|&(seq, sent_above)| {
            if sacked.contains(seq) {
                return false;
            }
            if end > sent_above {
                relost.push(seq);
                return false;
            }
            true
        });
        newly
    }

    /// Segments in `[start, end)` arrived (SACKed, or acknowledged by a cumulative ACK): the
    /// lowest of them neither SACKed before nor ever retransmitted, if below `fack`, was
    /// reordered by `fack − seq` segments (Linux's `tcp_check_sack_reordering`).
    fn check_reordering(&mut self, start: u64, end: u64) {
        let below = end.min(self.fack);
        let mut at = start;
        while let Some(seq) = self.sacked.first_gap(at, below) {
            match self.retransmitted.range_of(seq) {
                Some((_, past)) => at = past,
                None => {
                    let distance = self.fack - seq;
                    self.dup_thresh = self.dup_thresh.max(distance.min(MAX_REORDERING));
                    break;
                }
            }
        }
        self.fack = self.fack.max(end);
    }

    /// DupThresh now: 3, or the reordering seen.
    pub fn dup_thresh(&self) -> u64 {
        self.dup_thresh
    }

    /// Segment `seq` is sent again (in a recovery or after a timeout).
    pub fn on_ever_retransmitted(&mut self, seq: u64) {
        self.retransmitted.insert(seq, seq + 1);
    }

    /// An ACK's cumulative point moves from `from` to `to`: checked for reordering before
    /// the ACK's own block is read (its block, above `to`, would make the segments it
    /// acknowledges look reordered).
    pub fn on_acked(&mut self, from: u64, to: u64) {
        self.check_reordering(from, to);
    }

    /// The cumulative ACK moved to `snd_una`.
    pub fn on_cumulative(&mut self, snd_una: u64) {
        self.retransmitted.remove_below(snd_una);
        self.sacked.remove_below(snd_una);
        self.resent.retain(|&(seq, _)| seq >= snd_una);
        self.relost.retain(|&seq| seq >= snd_una);
    }

    /// Segment `seq` was retransmitted when segments below `snd_max` had been sent.
    pub fn on_retransmit(&mut self, seq: u64, snd_max: u64) {
        self.relost.retain(|&s| s != seq);
        self.resent.push((seq, snd_max));
    }

    /// A retransmission found lost again, to resend first.
    pub fn next_relost(&self) -> Option<u64> {
        self.relost.iter().copied().min()
    }

    /// Recovery ended or a timeout struck: forget the retransmissions.
    pub fn end_recovery(&mut self) {
        self.resent.clear();
        self.relost.clear();
    }

    /// Segments in `[a, b)` SACKed.
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        self.sacked.count_in(a, b)
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        self.sacked.contains(seq)
    }

    /// RFC 6675 §4 IsLost(seq): DupThresh or more segments above it are SACKed.
    pub fn is_lost(&self, seq: u64) -> bool {
        self.lost_below().is_some_and(|b| seq < b) && !self.sacked.contains(seq)
    }

    /// Every unSACKed segment below this is lost.
    fn lost_below(&self) -> Option<u64> {
        self.sacked.nth_highest(self.dup_thresh)
    }

    /// RFC 6675 §4 NextSeg rule (1): the lowest lost segment above `high_rxt` (the highest
    /// segment retransmitted in this recovery, `None` before the first), from `snd_una`.
    pub fn next_lost(&self, snd_una: u64, high_rxt: Option<u64>) -> Option<u64> {
        let from = high_rxt.map_or(snd_una, |h| (h + 1).max(snd_una));
        let below = self.lost_below()?;
        self.sacked.first_gap(from, below)
    }

    /// RFC 6675 §4 SetPipe: the segments in `[snd_una, snd_max)` believed in the network —
    /// each neither SACKed nor lost counts once, each retransmitted (at or below `high_rxt`)
    /// and not SACKed once more.
    pub fn pipe(&self, snd_una: u64, snd_max: u64, high_rxt: Option<u64>) -> u64 {
        let outstanding = snd_max.saturating_sub(snd_una);
        let sacked = self.sacked.count_in(snd_una, snd_max);
        let lost = match self.lost_below() {
            Some(b) if b > snd_una => (b - snd_una) - self.sacked.count_in(snd_una, b),
            _ => 0,
        };
        let resent = match high_rxt {
            Some(h) if h >= snd_una => (h + 1 - snd_una) - self.sacked.count_in(snd_una, h + 1),
            _ => 0,
        };
        // A retransmission lost again has left the network.
        let relost = self.relost.iter().filter(|&&s| s >= snd_una).count() as u64;
        (outstanding - sacked - lost + resent).saturating_sub(relost)
    }

    /// SACK information exists.
    pub fn any(&self) -> bool {
        !self.sacked.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Counts, membership and the running total agree with a plain set of segments after
        /// any sequence of inserts and removals.
        #[test]
        fn range_set_counts_match_a_plain_set(
            ops in proptest::collection::vec((0u8..4, 0u64..200, 0u64..40), 1..120),
            queries in proptest::collection::vec((0u64..260, 0u64..260), 1..40),
        ) {
            let mut r = RangeSet::default();
            let mut plain = std::collections::BTreeSet::new();
            for (op, at, len) in ops {
                if op == 0 {
                    r.remove_below(at);
                    plain.retain(|&x| x >= at);
                } else {
                    let newly = r.insert(at, at + len);
                    let before = plain.len();
                    plain.extend(at..at + len);
                    prop_assert_eq!(newly, (plain.len() - before) as u64);
                }
                prop_assert_eq!(r.total, plain.len() as u64);
            }
            for (a, b) in queries {
                let want = plain.iter().filter(|&&x| x >= a && x < b).count() as u64;
                prop_assert_eq!(r.count_in(a, b), want, "count_in({}, {})", a, b);
            }
        }
    }

    #[test]
    fn ranges_merge_count_and_forget() {
        let mut r = RangeSet::default();
        assert_eq!(r.insert(5, 7), 2);
        assert_eq!(r.insert(10, 12), 2);
        assert_eq!(r.insert(7, 10), 3, "fills the gap, merging all three");
        assert_eq!(r.first(), Some((5, 12)));
        assert_eq!(r.insert(6, 8), 0);
        r.insert(20, 21);
        assert_eq!(r.count_in(0, 100), 8);
        assert_eq!(r.count_in(6, 21), 7);
        assert!(r.contains(11) && !r.contains(12) && !r.contains(4));
        assert_eq!(r.range_of(9), Some((5, 12)));
        assert_eq!(r.first_gap(5, 30), Some(12));
        assert_eq!(r.first_gap(3, 30), Some(3));
        assert_eq!(r.nth_highest(1), Some(20));
        assert_eq!(r.nth_highest(3), Some(10));
        assert_eq!(r.nth_highest(9), None);
        r.remove_below(8);
        assert_eq!(r.first(), Some((8, 12)));
        r.remove_below(15);
        assert_eq!(r.first(), Some((20, 21)));
    }

    #[test]
    fn rfc6675_is_lost_next_seg_and_pipe() {
        // Segments 0..20 outstanding; 2 and 5 lost, the rest above 2 SACKed as they arrive.
        let mut sb = Scoreboard::default();
        sb.on_block(3, 5, 0);
        sb.on_block(6, 20, 0);
        sb.on_cumulative(2);
        assert!(sb.is_lost(2) && sb.is_lost(5) && !sb.is_lost(3));
        assert!(
            !sb.is_lost(19),
            "the top segments are never lost by the rule"
        );
        assert_eq!(sb.next_lost(2, None), Some(2));
        // 18 outstanding, 16 SACKed, 2 lost: nothing in the pipe.
        assert_eq!(sb.pipe(2, 20, None), 0);
        // After resending 2: it counts, and the next lost is 5.
        assert_eq!(sb.pipe(2, 20, Some(2)), 1);
        assert_eq!(sb.next_lost(2, Some(2)), Some(5));
        assert_eq!(sb.pipe(2, 20, Some(5)), 2);
        assert_eq!(sb.next_lost(2, Some(5)), None);
        // Two new segments in flight (not lost: fewer than 3 SACKed above them).
        assert_eq!(sb.pipe(2, 22, Some(5)), 4);
        // The retransmission of 2 left when 22 segments had been sent; a SACK of segment 22
        // (sent after it) without 2 means it was lost again: resend it first.
        sb.on_retransmit(2, 22);
        sb.on_retransmit(5, 22);
        sb.on_block(21, 22, 2);
        assert_eq!(
            sb.next_relost(),
            None,
            "21 was sent before the retransmissions"
        );
        sb.on_block(22, 23, 2);
        assert_eq!(sb.next_relost(), Some(2));
        assert_eq!(
            sb.pipe(2, 23, Some(5)),
            1,
            "the two retransmissions left the pipe"
        );
        sb.on_retransmit(2, 23);
        assert_eq!(sb.next_relost(), Some(5), "5 was resent before 22 left too");
        sb.on_retransmit(5, 23);
        assert_eq!(sb.next_relost(), None);
        sb.on_cumulative(6);
        sb.end_recovery();
        assert_eq!(sb.next_relost(), None);
    }

    /// DupThresh learns the reordering: a segment never retransmitted that arrives (SACKed or
    /// acknowledged) below the highest one SACKed was late by their distance; a
    /// retransmission arriving there says nothing; the most it learns is 300.
    #[test]
    fn dup_thresh_learns_how_far_segments_are_reordered() {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.dup_thresh(), 3);
        // 0 is late: 1..5 arrive first, then 0 fills the hole (a cumulative ACK to 5).
        sb.on_block(1, 5, 0);
        assert_eq!(
            sb.dup_thresh(),
            3,
            "nothing below the highest SACKed has come yet"
        );
        sb.on_acked(0, 5);
        sb.on_cumulative(5);
        assert_eq!(sb.dup_thresh(), 5, "segment 0 came 5 segments late");
        // 5 is lost and resent; 6..12 SACKed; the retransmission of 5 arrives: no reordering.
        sb.on_block(6, 12, 5);
        sb.on_ever_retransmitted(5);
        sb.on_acked(5, 12);
        sb.on_cumulative(12);
        assert_eq!(sb.dup_thresh(), 5);
        // A SACK block below the highest SACKed, never resent: 13 came after 14..20.
        sb.on_block(14, 20, 12);
        sb.on_block(13, 14, 12);
        assert_eq!(sb.dup_thresh(), 7, "13 arrived 7 below 20");
        sb.on_block(1000, 1001, 12);
        sb.on_block(20, 21, 12);
        assert_eq!(sb.dup_thresh(), MAX_REORDERING);
    }
}
