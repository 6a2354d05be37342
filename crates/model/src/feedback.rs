//! What a source sees at time t: the network's state as its feedback reports it, each part as
//! it was when it happened (the integrator reads the history at the right delay).

/// A source's view of its path, in packets and seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Seen {
    /// Round-trip propagation delay d.
    pub prop_delay: f64,
    /// Forward queueing delay Σ b_l/c_l, each link's as the packet now acknowledged met it.
    pub forward_queueing: f64,
    /// Queueing delay on the reverse path (ACKs wait there; Monaco's reverse packets do not at
    /// a priority-capable link).
    pub reverse_queueing: f64,
    /// The flow's accumulation, 000 eq. (1): its queued packets at each forward link, each
    /// time-shifted by the delay from there to the receiver (and back to the source).
    pub accumulation: f64,
    /// Σ AVD virtual delays stamped on the in-band packet (000 §IV-D).
    pub virtual_delay: f64,
    /// The flow's rate at the receiver, packets per second.
    pub egress_rate: f64,
    /// Early (AQM) drops and mark indications reaching the source, packets per second.
    pub losses: f64,
    pub marks: f64,
    /// Drops of the source's packets by a full tail-drop buffer reaching it, packets per
    /// second (discrete loss events, [`LossEvents`]).
    pub overflows: f64,
    /// End-to-end mark probability 1 − Π(1 − m_l) (002 eq. (32)).
    pub mark_probability: f64,
}

impl Seen {
    /// The RTT of a packet that waits in every queue both ways.
    pub fn rtt(&self) -> f64 {
        self.prop_delay + self.forward_queueing + self.reverse_queueing
    }

    /// Halvings per second of a source with `window` packets in flight that halves once per
    /// window with a loss indication (NewReno, and Monaco's decrease-due-to-loss, react once per
    /// window of losses): with p = λ/x the share of its packets that bring one, a window holds
    /// one with probability 1 − (1 − p)^w, once per round trip. For sparse losses this is λ,
    /// Misra–Gong–Towsley's rate x·p; for a burst (p → 1) it is one halving per round trip.
    pub fn halvings(&self, rtt: f64, window: f64, with_marks: bool) -> f64 {
        let l = self.losses + if with_marks { self.marks } else { 0.0 };
        if l <= 0.0 {
            return 0.0;
        }
        let x = window / rtt;
        let p = (l / x).min(1.0);
        (1.0 - (1.0 - p).powf(window.max(1.0))) / rtt
    }
}

/// The expected overflow losses at which a source cuts: ln 2, where the chance that at least one
/// of its packets has been dropped passes one half (drops a Poisson process of that mean). The
/// choice matters little (tests/dynamics.rs `reno_over_tail_drop_saw_tooths_as_the_packets`:
/// thresholds of 1, ln 2, 0.5 and 0.25 packets put the mean queue of 30 Reno flows over a
/// 100-packet buffer 12%, 3%, −4% and −14% from the packet run's, of 10 flows over 1000
/// packets −0.5%, −0.8%, −1.1%, −0.5%).
pub const FIRST_LOSS: f64 = std::f64::consts::LN_2;

/// A window source's response to loss (Reno, Vegas, ACC): the window cuts it makes in a step.
///
/// Early drops and marks (RED, REM, AVQ) fall at random on a flow's packets, so their cuts come
/// as a rate, [`Seen::halvings`] (Misra, Gong, Towsley). A full tail-drop buffer is different:
/// it drops from every flow whose packets arrive while it is full, and each such flow halves
/// once, all at about the same time — the synchronised cuts that make a tail-drop queue
/// saw-tooth in the packet runs. Smoothed into a rate they hold the fluid queue at the full
/// buffer instead (the parking-lot example: 57–60 packets against the packets' 20–60). So,
/// as in Hespanha et al.'s hybrid model of TCP, overflow losses are discrete events here: a
/// source counts the packets it is expected to have lost to overflow, and when they come to
/// [`FIRST_LOSS`] it cuts its window once; losses in the round trip after a cut are of the
/// window already cut (one reduction per window of losses, RFC 6582 §3.2) and are not counted.
/// A flow whose count has not reached the threshold when the overflow ends (no overflow losses
/// seen) starts from zero at the next one: its packets escaped this time. Carried over, such
/// remainders lock flows into groups that cut in turn (4 Reno flows over 34 packets: two pairs
/// alternating, the queue never emptying, 23.1 packets against the packet run's 16.2), where the
/// packet runs' flows all cut at each overflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossEvents {
    /// Overflow losses since the last cut, packets.
    lost: f64,
    /// Seconds left of the round trip after the last cut.
    hold: f64,
}

impl LossEvents {
    /// The window cuts over the next `h` seconds: early losses' halvings at their rate, plus
    /// one if the overflow losses come to [`FIRST_LOSS`] now.
    pub fn cuts(&mut self, seen: &Seen, rtt: f64, window: f64, with_marks: bool, h: f64) -> f64 {
        let mut cuts = h * seen.halvings(rtt, window, with_marks);
        if self.hold > 0.0 {
            self.hold -= h;
        } else if seen.overflows == 0.0 {
            self.lost = 0.0;
        } else {
            self.lost += seen.overflows * h;
            if self.lost >= FIRST_LOSS {
                self.lost = 0.0;
                self.hold = rtt;
                cuts += 1.0;
            }
        }
        cuts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overflowing(rate: f64) -> Seen {
        Seen {
            prop_delay: 0.1,
            overflows: rate,
            ..Seen::default()
        }
    }

    #[test]
    fn one_cut_per_overflow_window_and_no_carry_over() {
        let (h, rtt) = (0.01, 0.1);
        let mut e = LossEvents::default();
        // 10 packets/s of overflow losses: ln 2 packets after 7 steps.
        let cuts: Vec<f64> = (0..8)
            .map(|_| e.cuts(&overflowing(10.0), rtt, 20.0, false, h))
            .collect();
        assert_eq!(cuts, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        // Losses in the round trip after the cut are of the window already cut.
        for _ in 0..9 {
            assert_eq!(e.cuts(&overflowing(1e6), rtt, 20.0, false, h), 0.0);
        }
        // Half a threshold, then the overflow ends: the remainder is not carried to the next.
        for _ in 0..3 {
            assert_eq!(e.cuts(&overflowing(10.0), rtt, 20.0, false, h), 0.0);
        }
        assert_eq!(e.cuts(&overflowing(0.0), rtt, 20.0, false, h), 0.0);
        for _ in 0..6 {
            assert_eq!(e.cuts(&overflowing(10.0), rtt, 20.0, false, h), 0.0);
        }
        assert_eq!(e.cuts(&overflowing(10.0), rtt, 20.0, false, h), 1.0);
        // Early (AQM) losses still cut at their rate, Seen::halvings: p = 0.5 / 200 of the
        // packets, a window of 20 holds one with probability 1 − (1 − p)^20, once per RTT.
        let mut early = overflowing(0.0);
        early.losses = 0.5;
        let c = LossEvents::default().cuts(&early, rtt, 20.0, false, h);
        let expected = (1.0 - (1.0f64 - 0.5 / 200.0).powi(20)) / rtt * h;
        assert!((c - expected).abs() < 1e-12, "{c} vs {expected}");
    }
}
