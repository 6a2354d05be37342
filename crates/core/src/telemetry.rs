//! In-band network telemetry (INT) as HPCC uses it (Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019 — short key `hpcc` in docs/references.md — §3.1 and Figure 4):
//! every queue a data packet leaves writes a record of itself into the packet — its link's rate
//! B, the time ts, the bytes txBytes it has transmitted so far and its queue length qLen — and
//! the receiver copies the records of the data packet into its ACK, so that the sender sees
//! every link of its path as that packet found it.
//!
//! acclab carries the records beside the packet rather than in it, so that a packet stays 64
//! bytes (the simulator's hot path is laid out for that): the driver keeps each data packet's
//! [`Telemetry`] while it travels and hands the sender the records of the data packet an ACK
//! echoes (by its `sent_at`, the timestamp echo) just before the ACK itself
//! ([`Endpoint::handle_telemetry`](crate::transport::Endpoint::handle_telemetry)). That is
//! the information HPCC's receiver returns when it copies the INT header into its ACK.

use crate::units::{Rate, Time};

/// The most records one packet carries: a k-ary fat-tree path is 6 links, host links included.
/// A longer path's packets keep their first `MAX_HOPS` records and are marked
/// [`Telemetry::truncated`].
pub const MAX_HOPS: usize = 8;

/// What one queue writes into a data packet as the packet leaves it (HPCC Figure 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The link (the scenario's index), so that a sender sees when its path changes.
    pub link: u32,
    /// B: the link's rate.
    pub rate: Rate,
    /// ts: when the packet's transmission started (it left the queue).
    pub ts: Time,
    /// txBytes: bytes the link has transmitted so far, this packet included.
    pub tx_bytes: u64,
    /// qLen: bytes queued behind the packet when it left.
    pub qlen: u64,
}

/// The records a data packet collected on its path, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Telemetry {
    hops: [IntHop; MAX_HOPS],
    len: u8,
    truncated: bool,
}

impl Telemetry {
    /// A queue's record is added (beyond [`MAX_HOPS`] records it is not, and the stack is
    /// marked truncated).
    pub fn push(&mut self, hop: IntHop) {
        match self.hops.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = hop;
                self.len += 1;
            }
            None => self.truncated = true,
        }
    }

    /// The records, first link first.
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..usize::from(self.len)]
    }

    /// Whether the path had more than [`MAX_HOPS`] queues.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_kept_in_path_order_up_to_max_hops() {
        let mut t = Telemetry::default();
        assert!(t.hops().is_empty());
        for l in 0..MAX_HOPS as u32 + 2 {
            t.push(IntHop {
                link: l,
                ..IntHop::default()
            });
        }
        assert_eq!(t.hops().len(), MAX_HOPS);
        assert_eq!(t.hops()[3].link, 3);
        assert!(t.truncated());
    }
}
