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
    /// Loss and mark indications reaching the source, packets per second.
    pub losses: f64,
    pub marks: f64,
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
