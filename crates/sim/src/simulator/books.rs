//! What the simulator keeps of each flow: its [`Books`] (one cache line, touched by every
//! packet) and the rest of its state.

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

/// The rest of a flow's state, read at samples and drops.
pub(super) struct FlowState {
    pub(super) start: Time,
    pub(super) stop: Option<Time>,
    /// Packets dropped and their bytes, forward and backward (as in [`Books`]).
    pub(super) dropped: [(u64, u64); 2],
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
