//! BBR's loss recovery, the same in v1 (draft-cardwell-iccrg-bbr-congestion-control-00
//! §4.2.3.4) and v3 (draft-ietf-ccwg-bbr §4.6.4.4): on entering fast recovery keep what is in
//! flight plus one segment (packet conservation) for a round, on a timeout fall to one segment,
//! and restore the saved window when recovery ends.

use crate::cc::{AckSample, Congestion, CongestionEvent};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    None,
    /// Fast recovery; packet conservation until round `conserve_until` has passed.
    Fast {
        conserve_until: u64,
    },
    /// After a timeout, until the cumulative ACK reaches `end` (set by the first ACK after it).
    Timeout {
        end: Option<u64>,
    },
}

/// Where a BBR sender is in loss recovery, and the window it saved.
#[derive(Clone, Debug)]
pub struct Recovery {
    state: State,
    /// BBR.prior_cwnd, bytes.
    prior_cwnd: u64,
}

impl Default for Recovery {
    fn default() -> Recovery {
        Recovery {
            state: State::None,
            prior_cwnd: 0,
        }
    }
}

impl Recovery {
    /// BBRSaveCwnd: the window to restore after recovery or ProbeRTT — `cwnd` itself outside
    /// both, else the larger of it and what was saved.
    pub fn save_cwnd(&self, cwnd: u64, in_probe_rtt: bool) -> u64 {
        if self.state == State::None && !in_probe_rtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        }
    }

    /// Saves the window (entering ProbeRTT).
    pub fn save(&mut self, cwnd: u64, in_probe_rtt: bool) {
        self.prior_cwnd = self.save_cwnd(cwnd, in_probe_rtt);
    }

    /// BBRRestoreCwnd: the window after recovery or ProbeRTT.
    pub fn restored(&self, cwnd: u64) -> u64 {
        cwnd.max(self.prior_cwnd)
    }

    /// A congestion event: the new window (`None`: unchanged). A loss saves the window and
    /// conserves packets until round `round` + 1 has passed ("packets_in_flight", the
    /// transport's pipe, plus one for the retransmission); a timeout saves it and falls to one
    /// segment ("upon retransmission timeout ... cwnd = 1"); ECN does not enter recovery.
    pub fn on_event(
        &mut self,
        ev: &CongestionEvent,
        cwnd: u64,
        mss: u64,
        round: u64,
        in_probe_rtt: bool,
    ) -> Option<u64> {
        match ev.kind {
            Congestion::Loss => {
                self.save(cwnd, in_probe_rtt);
                self.state = State::Fast {
                    conserve_until: round + 1,
                };
                Some(ev.pipe + mss)
            }
            Congestion::Timeout => {
                self.save(cwnd, in_probe_rtt);
                self.state = State::Timeout { end: None };
                Some(mss)
            }
            Congestion::Ecn => None,
        }
    }

    /// Whether packet conservation holds the window in round `round`.
    pub fn conserving(&self, round: u64) -> bool {
        matches!(self.state, State::Fast { conserve_until } if round <= conserve_until)
    }

    /// After a timeout, the end of its recovery: the cumulative ACK has passed what was
    /// outstanding at the first ACK after it. Returns the window restored then.
    pub fn on_ack(&mut self, ack: &AckSample, cwnd: u64) -> Option<u64> {
        if let State::Timeout { end } = &mut self.state {
            let end = *end.get_or_insert(ack.highest_sent);
            if ack.cumulative_ack >= end {
                self.state = State::None;
                return Some(self.restored(cwnd));
            }
        }
        None
    }

    /// The transport left recovery ("Upon exiting loss recovery ... BBRRestoreCwnd()"): the
    /// window restored.
    pub fn end(&mut self, cwnd: u64) -> u64 {
        self.state = State::None;
        self.restored(cwnd)
    }
}
