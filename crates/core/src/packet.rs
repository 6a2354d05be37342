//! The packet every tier moves around.
//!
//! A packet is a small `Copy` value (64 bytes). Drivers keep packets inline in ring buffers and
//! queues, so moving one never allocates. The fields are the ones SPEC §3 lists; which sequence
//! fields mean what depends on the packet kind and is documented on each field.

use crate::transport::monaco::control::{InBand, Reverse};
use crate::units::{Duration, Time};

/// Index of a flow in its scenario (dense, 0-based; the scenario keeps the names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// What a packet is. Data and the in-band control packet travel the forward path in the normal
/// band; acknowledgements and reverse control packets travel back. Out-of-band and reverse control
/// packets belong to the high-priority band of a two-priority FIFO (SPEC §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PacketKind {
    Data,
    Ack,
    /// Monaco out-of-band control packet (forward, high priority).
    ControlOb,
    /// Monaco in-band control packet (forward, in line with data).
    ControlIb,
    /// Monaco reverse control packet (backward, high priority).
    ControlReverse,
}

impl PacketKind {
    /// True for packets that travel from the flow's source to its destination.
    pub fn is_forward(self) -> bool {
        matches!(
            self,
            PacketKind::Data | PacketKind::ControlOb | PacketKind::ControlIb
        )
    }
    /// Every kind, in discriminant order (the wire format's kind byte indexes this).
    pub const ALL: [PacketKind; 5] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::ControlOb,
        PacketKind::ControlIb,
        PacketKind::ControlReverse,
    ];

    /// The kind with discriminant `b`, if there is one.
    pub fn from_u8(b: u8) -> Option<PacketKind> {
        Self::ALL.get(b as usize).copied()
    }

    /// True for packets a two-priority FIFO puts in its high band.
    pub fn is_high_priority(self) -> bool {
        matches!(self, PacketKind::ControlOb | PacketKind::ControlReverse)
    }
}

/// ECN codepoint and echo bits carried by a packet (RFC 3168, simplified), with the L4S
/// identifier ECT(1) (RFC 9331) and, on an Accurate ECN acknowledgement, its ACE counter
/// (RFC 9768 §3.2.2).
///
/// Bits: 1 ECN-capable, 2 CE, 4 ECE (classic echo), 8 ECT(1) rather than ECT(0), 16–64 ACE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ecn(u8);

impl Ecn {
    const CAPABLE: u8 = 1;
    const CE: u8 = 2;
    const ECHO: u8 = 4;
    const ONE: u8 = 8;
    const ACE_SHIFT: u8 = 4;
    const ACE: u8 = 7 << Self::ACE_SHIFT;

    pub const NOT_ECT: Ecn = Ecn(0);
    /// ECT(0): the classic ECN-capable codepoint (RFC 3168).
    pub const ECT: Ecn = Ecn(Self::CAPABLE);
    /// ECT(1): ECN-capable, and the L4S identifier (RFC 9331 §4.1).
    pub const ECT1: Ecn = Ecn(Self::CAPABLE | Self::ONE);
    const ALL_BITS: u8 = Self::CAPABLE | Self::CE | Self::ECHO | Self::ONE | Self::ACE;

    /// The raw bits, for wire formats.
    pub fn bits(self) -> u8 {
        self.0
    }
    /// The codepoint with raw bits `b`; `None` if `b` has bits that mean nothing.
    pub fn from_bits(b: u8) -> Option<Ecn> {
        (b & !Self::ALL_BITS == 0).then_some(Ecn(b))
    }

    /// The sender understands marks, so an AQM may mark instead of dropping.
    pub fn is_capable(self) -> bool {
        self.0 & Self::CAPABLE != 0
    }
    /// Congestion Experienced: a router marked this packet.
    pub fn is_marked(self) -> bool {
        self.0 & Self::CE != 0
    }
    pub fn mark(&mut self) {
        self.0 |= Self::CE;
    }
    /// Whether a dual-queue AQM puts the packet in its L4S queue: the IP-ECN field's low bit
    /// is set — ECT(1) or CE (RFC 9331 §5.1, RFC 9332 §2.5.1.1).
    pub fn is_l4s(self) -> bool {
        self.0 & (Self::ONE | Self::CE) != 0
    }
    /// ECN-Echo on an acknowledgement: the data it acknowledges was marked.
    pub fn is_echo(self) -> bool {
        self.0 & Self::ECHO != 0
    }
    pub fn set_echo(&mut self) {
        self.0 |= Self::ECHO;
    }
    /// The ACE field of an Accurate ECN acknowledgement: the receiver's count of CE-marked
    /// packets, modulo 8 (RFC 9768 §3.2.2.1).
    pub fn ace(self) -> u8 {
        (self.0 & Self::ACE) >> Self::ACE_SHIFT
    }
    pub fn set_ace(&mut self, count: u64) {
        self.0 = (self.0 & !Self::ACE) | (((count & 7) as u8) << Self::ACE_SHIFT);
    }
}

/// One packet.
///
/// In this order, in its first 8 bytes, what a queue and a forwarding hop read of it (its size,
/// the hop, its ECN field and kind), so that the simulator can keep them in the cache line of
/// its own per-hop fields (`acclab_sim`'s packet slots); the rest after.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Packet {
    /// Size on the wire in bytes, headers included (SPEC §2).
    pub size: u32,
    /// Index of the next link on this packet's route, kept by the driver that forwards it.
    pub hop: u16,
    pub ecn: Ecn,
    pub kind: PacketKind,
    pub flow: FlowId,
    /// Connection within the flow, for sources that multiplex several transfers (web users).
    pub conn: u32,
    /// Data: segment number. Control packets: control sequence number.
    pub seq: u64,
    /// When the sender created this packet (or this retransmission of it).
    pub sent_at: Time,
    /// What the packet says beyond its kind and sequence number.
    pub payload: Payload,
}

/// What a packet says beyond its kind and sequence number, typed by what it is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Payload {
    /// Data and Monaco's out-of-band control packets.
    #[default]
    None,
    /// An acknowledgement: the next segment expected (cumulative), the `sent_at` of the
    /// data packet that caused it (timestamp echo, RFC 7323 style) and a SACK block.
    Ack { next: u64, echo: Time, sack: Sack },
    /// A Monaco in-band control packet.
    InBand(InBand),
    /// A Monaco reverse control packet.
    Reverse(Reverse),
    /// A data packet whose queues write in-band telemetry ([`crate::telemetry`]): where the
    /// driver keeps its records. Set and taken off by the driver; an endpoint never sees it.
    Telemetry(u32),
}

impl Packet {
    /// A packet of `kind` and `size` for `flow`, every other field zero.
    pub fn new(flow: FlowId, kind: PacketKind, size: u32) -> Packet {
        Packet {
            flow,
            kind,
            ecn: Ecn::NOT_ECT,
            hop: 0,
            conn: 0,
            size,
            seq: 0,
            sent_at: Time::ZERO,
            payload: Payload::None,
        }
    }

    /// An acknowledgement of `flow` expecting segment `next` next, echoing `echo`.
    pub fn ack(flow: FlowId, size: u32, next: u64, echo: Time) -> Packet {
        Packet {
            payload: Payload::Ack {
                next,
                echo,
                sack: Sack::NONE,
            },
            ..Packet::new(flow, PacketKind::Ack, size)
        }
    }

    /// The cumulative ACK and timestamp echo, if this is an acknowledgement.
    pub fn ack_info(&self) -> Option<(u64, Time)> {
        match self.payload {
            Payload::Ack { next, echo, .. } => Some((next, echo)),
            _ => None,
        }
    }

    /// The SACK block of an acknowledgement, as absolute segment numbers `[start, end)`.
    pub fn sack_block(&self) -> Option<(u64, u64)> {
        match self.payload {
            Payload::Ack { next, sack, .. } => sack.block(next),
            _ => None,
        }
    }

    /// The sum of AVD routers' virtual delays a Monaco control packet carries (000 §IV-D):
    /// an IB's, or the one its reverse packet echoes; zero for any other packet.
    pub fn virtual_delay(&self) -> Duration {
        match self.payload {
            Payload::InBand(ib) => ib.virtual_delay,
            Payload::Reverse(r) => r.virtual_delay,
            _ => Duration::ZERO,
        }
    }
}

/// One SACK block (RFC 2018) relative to the ACK's cumulative point, in segments: `offset`
/// segments above it, `len` long; `len` 0 for none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sack {
    pub offset: u32,
    pub len: u32,
}

impl Sack {
    pub const NONE: Sack = Sack { offset: 0, len: 0 };

    /// The block `[start, end)` of an ACK whose cumulative point is `next`; blocks out of the
    /// representable range (more than 2³² segments away or long) are clipped to their top or
    /// dropped.
    pub fn new(next: u64, start: u64, end: u64) -> Sack {
        let (Some(off_end), true) = (end.checked_sub(next), start < end) else {
            return Sack::NONE;
        };
        let Ok(off_end) = u32::try_from(off_end) else {
            return Sack::NONE;
        };
        let offset = start.saturating_sub(next).min(off_end as u64) as u32;
        Sack {
            offset,
            len: off_end - offset,
        }
    }

    /// The block as absolute segment numbers.
    pub fn block(self, next: u64) -> Option<(u64, u64)> {
        (self.len > 0).then(|| {
            let start = next + self.offset as u64;
            (start, start + self.len as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        // The ACK's SACK block and the control packets' virtual delay live in the payload;
        // the packet stays one cache line.
        assert_eq!(std::mem::size_of::<Payload>(), 32);
        assert!(std::mem::size_of::<Packet>() <= 64);
        // Its per-hop fields in its first 8 bytes (the struct's header).
        assert!(std::mem::offset_of!(Packet, kind) < 8 && std::mem::offset_of!(Packet, size) < 8);
    }

    #[test]
    fn sack_blocks_are_relative_to_the_cumulative_ack() {
        let s = Sack::new(100, 105, 110);
        assert_eq!((s.offset, s.len), (5, 5));
        assert_eq!(s.block(100), Some((105, 110)));
        assert_eq!(
            Sack::new(100, 90, 110).block(100),
            Some((100, 110)),
            "clipped below"
        );
        assert_eq!(
            Sack::new(100, 50, 90),
            Sack::NONE,
            "below the cumulative ACK"
        );
        assert_eq!(Sack::new(0, 1, 1 << 33), Sack::NONE, "beyond 2³² segments");
        assert_eq!(Sack::NONE.block(7), None);
        let mut a = Packet::ack(FlowId(0), 40, 100, Time::ZERO);
        assert_eq!(a.sack_block(), None);
        if let Payload::Ack { sack, .. } = &mut a.payload {
            *sack = Sack::new(100, 103, 104);
        }
        assert_eq!(a.sack_block(), Some((103, 104)));
    }

    #[test]
    fn ecn_bits_are_independent() {
        let mut e = Ecn::ECT;
        assert!(e.is_capable() && !e.is_marked() && !e.is_echo());
        e.mark();
        assert!(e.is_marked() && !e.is_echo());
        e.set_echo();
        assert!(e.is_echo() && e.is_capable());
        assert_eq!(Ecn::from_bits(e.bits()), Some(e));
        assert_eq!(Ecn::from_bits(128), None);
        // ECT(1) is capable and goes to an L4S queue; so does any CE packet (RFC 9331 §5.1).
        let l = Ecn::ECT1;
        assert!(l.is_capable() && l.is_l4s() && !Ecn::ECT.is_l4s());
        assert!(e.is_l4s(), "CE");
        // The ACE field holds a count modulo 8 and leaves the other bits alone.
        let mut a = Ecn::NOT_ECT;
        a.set_ace(13);
        assert_eq!((a.ace(), a.is_echo(), a.is_capable()), (5, false, false));
        a.set_ace(8);
        assert_eq!(a.ace(), 0);
        assert_eq!(Ecn::from_bits(a.bits()), Some(a));
    }

    #[test]
    fn kinds_round_trip_through_their_discriminant() {
        for k in PacketKind::ALL {
            assert_eq!(PacketKind::from_u8(k as u8), Some(k));
        }
        assert_eq!(PacketKind::from_u8(5), None);
    }
}
