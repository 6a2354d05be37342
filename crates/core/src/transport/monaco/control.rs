//! Monaco's control messages (000 §IV-B), as typed values a [`Packet`](crate::Packet) carries in
//! its [`Payload`](crate::packet::Payload).
//!
//! Each control period the sender sends a back-to-back pair with one control sequence number:
//! the out-of-band (OB) packet, which says nothing more, and the in-band (IB) one, which says
//! how many data bytes were sent since the previous IB (and collects the AVD routers' virtual
//! delays in its `virtual_delay`). The receiver answers the IB with a reverse packet:
//! its accumulation estimate, the forward queueing delay it measured, and a signal. This file
//! holds only the types, so that the packet can carry them without importing Monaco.

use crate::units::Duration;

/// The receiver's verdict on a control period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// â ≤ the target: the window may grow.
    Increase,
    /// â > the target: the window should shrink.
    Decrease,
    /// Data of the period were lost (fewer bytes arrived than the IB says were sent): the
    /// sender halves its window ("decrease-due-to-loss").
    Loss,
}

impl Signal {
    /// Every signal, in wire order.
    pub const ALL: [Signal; 3] = [Signal::Increase, Signal::Decrease, Signal::Loss];
}

/// What an in-band control packet says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InBand {
    /// Data bytes sent since the previous IB.
    pub sent_bytes: u64,
    /// Σ t_AVD: the virtual queueing delays AVD routers on the path added (000 §IV-D).
    pub virtual_delay: Duration,
}

/// What a reverse control packet says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reverse {
    pub signal: Signal,
    /// The accumulation estimate â, bytes.
    pub accumulation: f64,
    /// The forward queueing delay ftt_q = t_IB − t_OB the receiver measured.
    pub ftt_q: Duration,
    /// The IB's Σ t_AVD, echoed (the sender's `virtual_rtt` uses it).
    pub virtual_delay: Duration,
}
