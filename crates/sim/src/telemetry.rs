//! The in-band telemetry the queues write into data packets, for the flows whose scheme asks
//! for it (HPCC; [`acclab_core::telemetry`] says what a record holds and why it travels beside
//! the packet). A data packet of such a flow gets a slot here when it is sent
//! ([`Payload::Telemetry`]); every link it leaves adds its record at the transmission's start;
//! at the receiver its records wait, by the packet's send time, for the ACK that echoes it, and
//! are handed to the sender with that ACK. A packet dropped frees its slot. Nothing here exists
//! in a run without such flows, and its hooks are out of line (cold): a run without telemetry
//! pays one test of an empty option where a packet is sent, transmitted, dropped or delivered.

use std::collections::VecDeque;

use acclab_core::packet::Payload;
use acclab_core::telemetry::{IntHop, Telemetry};
use acclab_core::{FlowId, Packet, PacketKind, Rate, Time};

/// Records in flight and awaiting their ACKs.
pub struct IntStore {
    /// Which flows' data packets collect records.
    wants: Vec<bool>,
    /// Bytes each link has transmitted (every packet, data and ACKs).
    tx_bytes: Vec<u64>,
    /// The records of packets in flight, by slot; `free` lists the slots not in use.
    stacks: Vec<Telemetry>,
    free: Vec<u32>,
    /// Per flow: records of data packets that reached the receiver, by their send time, in
    /// arrival order, until an ACK echoes them (or a later one).
    awaiting: Vec<VecDeque<(Time, Telemetry)>>,
}

impl IntStore {
    /// A store for `links` links and the flows `wants` marks; `None` if no flow wants records.
    pub fn new(wants: Vec<bool>, links: usize) -> Option<Box<IntStore>> {
        wants.iter().any(|&w| w).then(|| {
            Box::new(IntStore {
                tx_bytes: vec![0; links],
                stacks: Vec::new(),
                free: Vec::new(),
                awaiting: vec![VecDeque::new(); wants.len()],
                wants,
            })
        })
    }

    /// A packet of `flow` and `kind` leaves its endpoint: a data packet of a flow that wants
    /// records gets a slot (put it in the packet as [`Payload::Telemetry`]).
    #[cold]
    #[inline(never)]
    pub fn on_send(&mut self, flow: FlowId, kind: PacketKind) -> Option<u32> {
        if kind != PacketKind::Data || !self.wants[flow.0 as usize] {
            return None;
        }
        Some(match self.free.pop() {
            Some(s) => {
                self.stacks[s as usize] = Telemetry::default();
                s
            }
            None => {
                self.stacks.push(Telemetry::default());
                (self.stacks.len() - 1) as u32
            }
        })
    }

    /// `pkt` starts its transmission on link `l` (of rate `rate`) at `at`, leaving `qlen`
    /// bytes queued behind it: the link counts its bytes and writes its record (HPCC Figure 4).
    #[cold]
    #[inline(never)]
    pub fn on_transmit(&mut self, l: usize, rate: Rate, at: Time, pkt: &Packet, qlen: u64) {
        self.tx_bytes[l] += u64::from(pkt.size);
        if let Payload::Telemetry(s) = pkt.payload {
            self.stacks[s as usize].push(IntHop {
                link: l as u32,
                rate,
                ts: at,
                tx_bytes: self.tx_bytes[l],
                qlen,
            });
        }
    }

    /// Slots held by data packets in the network (each such packet holds one).
    pub fn in_use(&self) -> usize {
        self.stacks.len() - self.free.len()
    }

    /// `pkt` was dropped: its records go with it.
    #[cold]
    #[inline(never)]
    pub fn on_drop(&mut self, pkt: &Packet) {
        if let Payload::Telemetry(s) = pkt.payload {
            self.free.push(s);
        }
    }

    /// A packet of `flow` with `payload`, sent at `sent_at`, reaches its endpoint. A data
    /// packet's records are set aside for the ACK that will echo it (and the packet is handed
    /// on without its slot: [`Delivered::Data`]); an ACK of a flow that wants records takes
    /// those of the data packet it echoes, if they were kept: what the sender is given with it.
    #[cold]
    #[inline(never)]
    pub fn on_deliver(&mut self, flow: FlowId, payload: Payload, sent_at: Time) -> Delivered {
        let waiting = &mut self.awaiting[flow.0 as usize];
        match payload {
            Payload::Telemetry(s) => {
                waiting.push_back((sent_at, self.stacks[s as usize]));
                self.free.push(s);
                Delivered::Data
            }
            Payload::Ack { echo, .. } if self.wants[flow.0 as usize] => {
                // Records older than the echo will not be asked for: an ACK covers them.
                while waiting.front().is_some_and(|(t, _)| *t < echo) {
                    waiting.pop_front();
                }
                match waiting.front() {
                    Some((t, _)) if *t == echo => waiting
                        .pop_front()
                        .map_or(Delivered::Other, |(_, int)| Delivered::Ack(Box::new(int))),
                    _ => Delivered::Other,
                }
            }
            _ => Delivered::Other,
        }
    }
}

/// What [`IntStore::on_deliver`] made of a delivered packet.
pub enum Delivered {
    /// A data packet whose records were set aside: take its slot off it.
    Data,
    /// An ACK, with the records of the data packet it echoes.
    Ack(Box<Telemetry>),
    /// Anything else.
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_follow_a_data_packet_to_the_ack_that_echoes_it() {
        let mut s = IntStore::new(vec![false, true], 3).unwrap();
        let other = Packet::new(FlowId(0), PacketKind::Data, 1000);
        assert_eq!(s.on_send(other.flow, other.kind), None, "flow 0 wants none");
        assert_eq!(
            s.on_send(FlowId(1), PacketKind::Ack),
            None,
            "ACKs carry none"
        );
        let mut d = Packet::new(FlowId(1), PacketKind::Data, 1000);
        d.sent_at = Time(5);
        d.payload = Payload::Telemetry(s.on_send(d.flow, d.kind).unwrap());
        assert_eq!(d.payload, Payload::Telemetry(0));
        s.on_transmit(0, Rate(10), Time(7), &other, 0);
        s.on_transmit(0, Rate(10), Time(8), &d, 500);
        s.on_transmit(2, Rate(20), Time(9), &d, 0);
        assert!(matches!(
            s.on_deliver(d.flow, d.payload, d.sent_at),
            Delivered::Data
        ));
        let ack = Packet::ack(FlowId(1), 40, 1, Time(5));
        let Delivered::Ack(int) = s.on_deliver(ack.flow, ack.payload, ack.sent_at) else {
            panic!("the echoed packet's records");
        };
        let hops = int.hops();
        assert_eq!(hops.len(), 2);
        assert_eq!(
            (hops[0].link, hops[0].tx_bytes, hops[0].qlen),
            (0, 2000, 500)
        );
        assert_eq!(
            (hops[1].link, hops[1].ts, hops[1].rate),
            (2, Time(9), Rate(20))
        );
        // Asked once: a second ACK echoing it gets nothing; the slot is reused.
        assert!(matches!(
            s.on_deliver(ack.flow, ack.payload, ack.sent_at),
            Delivered::Other
        ));
        assert_eq!(s.on_send(FlowId(1), PacketKind::Data), Some(0));
        assert!(s.stacks[0].hops().is_empty());
    }

    #[test]
    fn an_ack_passes_over_the_records_it_covers() {
        let mut s = IntStore::new(vec![true], 1).unwrap();
        for t in [1, 2, 3] {
            let slot = s.on_send(FlowId(0), PacketKind::Data).unwrap();
            s.on_deliver(FlowId(0), Payload::Telemetry(slot), Time(t));
        }
        // A delayed ACK echoing the third: the first two are dropped, the third given.
        let ack = Packet::ack(FlowId(0), 40, 3, Time(3));
        assert!(matches!(
            s.on_deliver(ack.flow, ack.payload, ack.sent_at),
            Delivered::Ack(_)
        ));
        assert!(s.awaiting[0].is_empty());
        assert!(IntStore::new(vec![false], 1).is_none());
    }
}
