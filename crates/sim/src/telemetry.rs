//! The in-band telemetry the queues write into data packets, for the flows whose scheme asks
//! for it (HPCC; [`acclab_core::telemetry`] says what a record holds and why it travels beside
//! the packet). A data packet of such a flow gets a slot here when it is sent
//! ([`Payload::Telemetry`]); every link it leaves adds its record at the transmission's start;
//! at the receiver its records wait, by the packet's send time, for the ACK that echoes it, and
//! are handed to the sender with that ACK. A packet dropped frees its slot. Nothing here exists
//! in a run without such flows, and its hooks are out of line (cold): a run without telemetry
//! pays one test of an empty option where a packet is sent, transmitted, dropped or delivered.
//!
//! In a partition of a parallel run (`simulator/parallel.rs`) the store keeps the records of the
//! packets it holds, and an [`Exchange`] with the other partitions: a packet that leaves on a
//! link into another partition goes there without its records (its slot is this store's), and
//! its records follow once the link has written its own, at the transmission's start; records
//! delivered to a receiver whose flow's sender is elsewhere go to the sender's partition, where
//! the ACK that echoes them will arrive.

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
    /// In a partition of a parallel run: what goes to and comes from the others.
    exchange: Option<Box<Exchange>>,
}

/// A partition's exchange of records with the others (see the module header).
pub struct Exchange {
    /// Per link: whether its far end is in another partition.
    posting: Vec<bool>,
    /// Per flow: whether its sender is in another partition.
    sender_elsewhere: Vec<bool>,
    /// The records of the packets that left on links into other partitions, each once the
    /// link has written its own: (link, records), in the order the links transmitted them.
    pub posted: Vec<(u32, Telemetry)>,
    /// Records delivered here for a sender elsewhere, in the order they were delivered:
    /// (flow, the data packet's send time, records).
    pub delivered: Vec<(FlowId, Time, Telemetry)>,
    /// Per link into this partition: the packets that came without their records yet, or the
    /// records that came ahead of their packets (each in the slot here that the two share, and
    /// whether it is the records that wait). A
    /// link's packets and its records come in the same order (its sending side transmits them
    /// in order), so the first of one pairs with the first of the other, whichever comes
    /// first.
    unpaired: Vec<VecDeque<(u32, bool)>>,
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
                exchange: None,
            })
        })
    }

    /// This store is a partition's: `posting` marks the links into other partitions,
    /// `sender_elsewhere` the flows whose sender is in another partition.
    pub fn partition(&mut self, posting: Vec<bool>, sender_elsewhere: Vec<bool>) {
        self.exchange = Some(Box::new(Exchange {
            unpaired: posting.iter().map(|_| VecDeque::new()).collect(),
            posting,
            sender_elsewhere,
            posted: Vec::new(),
            delivered: Vec::new(),
        }));
    }

    /// What this partition's store sends to the others (`None` outside a parallel run).
    pub fn exchange(&mut self) -> Option<&mut Exchange> {
        self.exchange.as_deref_mut()
    }

    /// A free slot, holding no records.
    fn slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.stacks[s as usize] = Telemetry::default();
                s
            }
            None => {
                self.stacks.push(Telemetry::default());
                (self.stacks.len() - 1) as u32
            }
        }
    }

    /// A packet of `flow` and `kind` leaves its endpoint: a data packet of a flow that wants
    /// records gets a slot (put it in the packet as [`Payload::Telemetry`]).
    #[cold]
    #[inline(never)]
    pub fn on_send(&mut self, flow: FlowId, kind: PacketKind) -> Option<u32> {
        if kind != PacketKind::Data || !self.wants[flow.0 as usize] {
            return None;
        }
        Some(self.slot())
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
            if let Some(x) = self.exchange.as_mut().filter(|x| x.posting[l]) {
                // Its records follow it into the partition it goes to; nothing here reads
                // them again (it is neither dropped nor delivered here).
                x.posted.push((l as u32, self.stacks[s as usize]));
                self.free.push(s);
            }
        }
    }

    /// A packet from another partition comes over link `l`: a data packet with records gets a
    /// slot here, holding its records if they came ahead of it (else they come with the link's
    /// others, [`IntStore::records_from`]).
    pub fn packet_from(&mut self, l: u32, pkt: &mut Packet) {
        if let Payload::Telemetry(_) = pkt.payload {
            pkt.payload = Payload::Telemetry(self.half(l, false));
        }
    }

    /// The records of a packet that came, or will come, from another partition over link `l`.
    pub fn records_from(&mut self, l: u32, int: Telemetry) {
        let s = self.half(l, true);
        self.stacks[s as usize] = int;
    }

    /// The slot of one half (`records`, or the packet) of the next packet from another
    /// partition over link `l`: the one its other half waits in, if that came first, else a
    /// new one, where it waits for the other.
    fn half(&mut self, l: u32, records: bool) -> u32 {
        let x = self.exchange.as_mut().expect("a partition's store");
        let unpaired = &mut x.unpaired[l as usize];
        if let Some(&(s, _)) = unpaired.front().filter(|(_, r)| *r != records) {
            unpaired.pop_front();
            return s;
        }
        let s = self.slot();
        let x = self.exchange.as_mut().expect("a partition's store");
        x.unpaired[l as usize].push_back((s, records));
        s
    }

    /// Records delivered in another partition to the receiver of `flow`, whose sender is here:
    /// they wait here for the ACK that echoes them (in the order they were delivered).
    pub fn delivered_elsewhere(&mut self, flow: FlowId, sent_at: Time, int: Telemetry) {
        self.awaiting[flow.0 as usize].push_back((sent_at, int));
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
                let int = self.stacks[s as usize];
                self.free.push(s);
                match self.exchange.as_mut() {
                    // Its sender's partition keeps it for the ACK.
                    Some(x) if x.sender_elsewhere[flow.0 as usize] => {
                        x.delivered.push((flow, sent_at, int))
                    }
                    _ => waiting.push_back((sent_at, int)),
                }
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

    /// In a partition: records of a packet leaving on a link into another partition go with
    /// the exchange (and its slot is free); a packet that came from one pairs with its records
    /// whichever comes first; records delivered for a sender elsewhere go to it.
    #[test]
    fn records_cross_partitions_beside_their_packets() {
        let mut s = IntStore::new(vec![true, true], 2).unwrap();
        // Link 1 goes to another partition; flow 1's sender is elsewhere.
        s.partition(vec![false, true], vec![false, true]);
        let mut d = Packet::new(FlowId(0), PacketKind::Data, 1000);
        d.payload = Payload::Telemetry(s.on_send(d.flow, d.kind).unwrap());
        s.on_transmit(0, Rate(10), Time(1), &d, 0);
        assert!(s.exchange().unwrap().posted.is_empty(), "link 0 stays here");
        s.on_transmit(1, Rate(10), Time(2), &d, 0);
        let posted = std::mem::take(&mut s.exchange().unwrap().posted);
        assert_eq!(posted.len(), 1);
        assert_eq!((posted[0].0, posted[0].1.hops().len()), (1, 2));
        assert_eq!(s.in_use(), 0, "its slot is free once its records left");
        // Coming in over link 0: two packets, the first's records before it, the second's
        // after it.
        let int = |ts| {
            let mut t = Telemetry::default();
            t.push(IntHop {
                link: 9,
                rate: Rate(1),
                ts: Time(ts),
                tx_bytes: 0,
                qlen: 0,
            });
            t
        };
        s.records_from(0, int(10));
        let (mut a, mut b) = (d, d);
        s.packet_from(0, &mut a);
        s.packet_from(0, &mut b);
        s.records_from(0, int(20));
        let ts = |p: &Packet| match p.payload {
            Payload::Telemetry(x) => s.stacks[x as usize].hops()[0].ts,
            _ => panic!("a slot"),
        };
        assert_eq!((ts(&a), ts(&b)), (Time(10), Time(20)));
        // Delivered: flow 0's records wait here, flow 1's go to its sender's partition.
        a.sent_at = Time(3);
        assert!(matches!(
            s.on_deliver(FlowId(0), a.payload, a.sent_at),
            Delivered::Data
        ));
        assert_eq!(s.awaiting[0].len(), 1);
        assert!(matches!(
            s.on_deliver(FlowId(1), b.payload, Time(4)),
            Delivered::Data
        ));
        assert!(s.awaiting[1].is_empty());
        let (f, at, got) = s.exchange().unwrap().delivered.pop().unwrap();
        assert_eq!((f, at, got.hops()[0].ts), (FlowId(1), Time(4), Time(20)));
        // There, they wait for the ACK.
        let mut there = IntStore::new(vec![true, true], 2).unwrap();
        there.delivered_elsewhere(f, at, got);
        let ack = Packet::ack(FlowId(1), 40, 1, Time(4));
        assert!(matches!(
            there.on_deliver(ack.flow, ack.payload, ack.sent_at),
            Delivered::Ack(_)
        ));
    }
}
