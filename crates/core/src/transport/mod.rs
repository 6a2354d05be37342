//! The endpoint API and the transports built on it.
//!
//! An endpoint is one end of a flow (a sender or a receiver) written in the quinn-proto style: the
//! driver feeds it inputs with `handle_*(now, …)` and drains outputs with `poll_transmit(now)` and
//! `poll_timeout()`. The driver owns the clock and the network; the endpoint owns the protocol.
//!
//! A driver's loop for one endpoint is always:
//! 1. on a packet for it: `handle_packet(now, &pkt)`; when `now` reaches `poll_timeout()`:
//!    `handle_timeout(now)`; at the flow's start/stop times: `handle_start` / `handle_stop`;
//! 2. then `while let Some(p) = poll_transmit(now) { send p }`;
//! 3. then re-arm its timer at `poll_timeout()`.

pub mod cbr;
pub mod external;
pub mod monaco;
pub mod onoff;
pub mod pacer;
pub mod rate_sample;
pub mod sack;
pub mod tcp;
pub mod web;

use crate::packet::{FlowId, Packet};
use crate::units::{Duration, Time};

/// One end of a flow. See the module documentation for the calling protocol.
pub trait Endpoint: Send {
    /// A packet of this flow arrived at this endpoint.
    fn handle_packet(&mut self, now: Time, pkt: &Packet);
    /// `now` has reached the time `poll_timeout` returned. Calling it early is harmless.
    /// (Default: nothing, for endpoints without timers — receivers that only answer packets.)
    fn handle_timeout(&mut self, _now: Time) {}
    /// The next packet to send at `now`, if any. Called until it returns `None`.
    fn poll_transmit(&mut self, now: Time) -> Option<Packet>;
    /// When `handle_timeout` should next be called; `None` when nothing is pending. (Default:
    /// never, for endpoints without timers; a sender with an RTO or pacing must override it.)
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// The application starts (the flow's `start` time). Receivers ignore it.
    fn handle_start(&mut self, _now: Time) {}
    /// The application stops sending new data (the flow's `stop` time). In-flight data may still
    /// be acknowledged; retransmissions of it are still sent.
    fn handle_stop(&mut self, _now: Time) {}
    /// Counters and state for monitors. Cheap; called at every sample.
    fn stats(&self) -> EndpointStats;
    /// The congestion controller's state variables, for senders that have a controller
    /// (flows.csv's columns after the common ones). Called at every sample. (Default: none.)
    fn cc_state(&self) -> CcState {
        CcState::default()
    }
    /// The in-band telemetry of the data packet the ACK about to be handled echoes (its
    /// queues' records, [`crate::telemetry`]), for a flow whose scheme asks for it
    /// ([`SchemeParams::telemetry`](crate::params::SchemeParams::telemetry)). Called just
    /// before `handle_packet` with that ACK. (Default: ignored.)
    fn handle_telemetry(&mut self, _now: Time, _int: &crate::telemetry::Telemetry) {}
}

/// Which end of its flow an endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Sends data (and forward control packets); takes ACKs and reverse control packets.
    Sender,
    /// Takes data; sends ACKs and reverse control packets.
    Receiver,
}

/// An endpoint's place among the endpoints of a scenario. Flow f's sender is slot 2f and its
/// receiver slot 2f + 1: this type is the one place that layout is written down; everything else
/// names the flow and the side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointSlot(u64);

impl EndpointSlot {
    pub fn of(flow: FlowId, side: Side) -> EndpointSlot {
        // u64: any flow id of a packet (even a forged one) has a slot, without overflow.
        EndpointSlot(2 * u64::from(flow.0) + u64::from(side == Side::Receiver))
    }

    pub fn sender(flow: FlowId) -> EndpointSlot {
        Self::of(flow, Side::Sender)
    }

    pub fn receiver(flow: FlowId) -> EndpointSlot {
        Self::of(flow, Side::Receiver)
    }

    /// The endpoint a packet is for: forward packets go to the receiver, backward ones (ACKs,
    /// reverse control) to the sender.
    pub fn destination(pkt: &Packet) -> EndpointSlot {
        let side = match pkt.kind.is_forward() {
            true => Side::Receiver,
            false => Side::Sender,
        };
        Self::of(pkt.flow, side)
    }

    /// The endpoint that sends a packet of this kind of this flow.
    pub fn source(pkt: &Packet) -> EndpointSlot {
        let side = match pkt.kind.is_forward() {
            true => Side::Sender,
            false => Side::Receiver,
        };
        Self::of(pkt.flow, side)
    }

    /// The slot of the endpoint at `index` in a scenario's list of endpoints.
    pub fn at(index: usize) -> EndpointSlot {
        EndpointSlot(index as u64)
    }

    pub fn flow(self) -> FlowId {
        FlowId((self.0 / 2) as u32)
    }

    pub fn side(self) -> Side {
        match self.0 % 2 {
            0 => Side::Sender,
            _ => Side::Receiver,
        }
    }

    /// Its index in a scenario's list of endpoints.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// How many endpoints `flows` flows have.
    pub fn count(flows: usize) -> usize {
        2 * flows
    }
}

/// Packets an endpoint has decided to send and hands out on `poll_transmit`: a receiver's
/// ACKs or reverse control packets. Stamps each with the send time and counts it.
///
/// Nearly always one packet at a time (an ACK made on a segment's arrival is taken at once),
/// so the oldest is kept inline, in the endpoint, and only the ones behind it in a queue: with
/// thousands of flows the queue's own buffer was a cache line of its own per ACK, missed on the
/// write and waited for on the read.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    /// The oldest packet, if any; `rest` is empty when it is `None`.
    first: Option<Packet>,
    rest: std::collections::VecDeque<Packet>,
    /// Packets and bytes sent, for the owner's [`EndpointStats`].
    sent_packets: u64,
    sent_bytes: u64,
}

impl Outbox {
    pub fn push(&mut self, p: Packet) {
        if self.first.is_none() {
            self.first = Some(p);
        } else {
            self.rest.push_back(p);
        }
    }

    pub fn pop(&mut self, now: Time) -> Option<Packet> {
        let mut p = self.first?;
        // (Not `take` and `pop_front` into `first`: each copied the packet twice.)
        if self.rest.is_empty() {
            self.first = None;
        } else {
            self.first = self.rest.pop_front();
        }
        p.sent_at = now;
        self.sent_packets += 1;
        self.sent_bytes += p.size as u64;
        Some(p)
    }

    /// `stats` with what this outbox sent.
    pub fn sent_in(&self, stats: EndpointStats) -> EndpointStats {
        EndpointStats {
            sent_packets: self.sent_packets,
            sent_bytes: self.sent_bytes,
            ..stats
        }
    }
}

/// A sender's congestion-control state for flows.csv: up to [`CcState::MAX`] named variables
/// (`ssthresh_bytes`, `pacing_rate_bps`, CUBIC's `w_max_bytes`, DCTCP's `alpha`, BBR's state),
/// each with its value now, or none (an empty cell: no slow-start threshold yet, unpaced).
/// Fixed-size, so that a sample allocates nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcState {
    vars: [(&'static str, Option<f64>); CcState::MAX],
    len: usize,
}

impl CcState {
    pub const MAX: usize = 6;

    /// Adds variable `name` (beyond [`MAX`](Self::MAX), nothing: a controller lists fewer).
    pub fn push(&mut self, name: &'static str, value: Option<f64>) {
        if self.len < Self::MAX {
            self.vars[self.len] = (name, value);
            self.len += 1;
        }
    }

    /// The variables, in the order pushed.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Option<f64>)> + '_ {
        self.vars[..self.len].iter().copied()
    }
}

/// What an endpoint reports about itself. Counters are cumulative since the start of the run, so
/// a monitor gets the value over any interval as a difference. Fields a scheme does not have stay
/// at their defaults (zero / `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndpointStats {
    /// Bytes put on the wire, retransmissions included (sender).
    pub sent_bytes: u64,
    /// Packets put on the wire, retransmissions included (sender).
    pub sent_packets: u64,
    /// Retransmitted packets (sender).
    pub retransmits: u64,
    /// Retransmissions repairing losses detected in congestion avoidance, not slow start.
    pub retransmits_in_avoidance: u64,
    /// Timeouts that fired (sender).
    pub timeouts: u64,
    /// Losses the endpoint itself detected (fast retransmits, timeouts, Monaco loss flags).
    pub detected_losses: u64,
    /// Bytes delivered to the application in order, each byte once (receiver goodput).
    pub delivered_bytes: u64,
    /// Congestion window in bytes (senders that have one).
    pub cwnd_bytes: Option<u64>,
    /// Smoothed RTT (sender), if measured.
    pub srtt: Option<Duration>,
    /// Sum and count of RTT samples, for means over a window.
    pub rtt_sum: Duration,
    pub rtt_samples: u64,
    /// Accumulation estimate in bytes, for schemes that estimate it (Vegas, Monaco).
    pub accumulation_bytes: Option<f64>,
    /// Estimated round-trip propagation delay, for schemes that keep one (Vegas).
    pub base_rtt: Option<Duration>,
    /// When a finite transfer completed (sender: last byte acknowledged).
    pub completed_at: Option<Time>,
}

#[cfg(test)]
mod slot_tests {
    use super::*;
    use crate::packet::PacketKind;

    #[test]
    fn slots_name_flow_and_side() {
        for f in [0, 1, 7, 1000] {
            for side in [Side::Sender, Side::Receiver] {
                let s = EndpointSlot::of(FlowId(f), side);
                assert_eq!((s.flow(), s.side()), (FlowId(f), side));
                assert_eq!(EndpointSlot::at(s.index()), s);
            }
        }
        let data = Packet::new(FlowId(3), PacketKind::Data, 1000);
        let ack = Packet::new(FlowId(3), PacketKind::Ack, 40);
        assert_eq!(
            EndpointSlot::destination(&data),
            EndpointSlot::receiver(FlowId(3))
        );
        assert_eq!(EndpointSlot::source(&data), EndpointSlot::sender(FlowId(3)));
        assert_eq!(
            EndpointSlot::destination(&ack),
            EndpointSlot::sender(FlowId(3))
        );
        assert_eq!(EndpointSlot::count(4), 8);
    }
}

#[cfg(test)]
mod outbox_tests {
    use super::*;
    use crate::packet::PacketKind;

    /// Packets come out in the order they went in, stamped and counted, however pushes and
    /// pops interleave (against a `VecDeque`).
    #[test]
    fn the_outbox_is_fifo() {
        let mut outbox = Outbox::default();
        let mut model = std::collections::VecDeque::new();
        let (mut x, mut seq, mut popped) = (11u64, 0u64, 0u64);
        for step in 0..5_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            if (x >> 33) % 5 < 2 {
                let mut p = Packet::new(FlowId(0), PacketKind::Ack, 40);
                p.seq = seq;
                outbox.push(p);
                model.push_back(seq);
                seq += 1;
            } else {
                let got = outbox.pop(Time(step));
                assert_eq!(got.map(|p| p.seq), model.pop_front());
                if let Some(p) = got {
                    assert_eq!(p.sent_at, Time(step));
                    popped += 1;
                }
            }
        }
        let stats = outbox.sent_in(EndpointStats::default());
        assert_eq!(stats.sent_packets, popped);
        assert_eq!(stats.sent_bytes, 40 * popped);
    }
}
