//! The wire format: one acclab [`Packet`] per UDP datagram.
//!
//! Version 3, all integers big-endian (network order):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 2 | magic `"AL"` (0x41 0x4C) |
//! | 2 | 1 | version, 3 |
//! | 3 | 1 | kind: 0 data, 1 ACK, 2 control OB, 3 control IB, 4 control reverse; 255 heartbeat (below) |
//! | 4 | 1 | ECN bits: 1 ECN-capable, 2 congestion experienced, 4 ECN-echo |
//! | 5 | 1 | payload: 0 none (data, OB), 1 ACK, 2 in-band control, 3 reverse control — it must be the kind's |
//! | 6 | 4 | flow index in the scenario |
//! | 10 | 4 | connection within the flow (web users) |
//! | 14 | 4 | packet size in bytes as the scenario counts it |
//! | 18 | 8 | seq: data segment number, or control sequence number |
//! | 26 | 8 | sent_at, ns of scenario time |
//! | 34 | 8 | virtual delay added by AVD routers: an IB's, or its reverse packet's echo; zero on every other packet, ns |
//! | 42 | 24 | the payload, zero-filled after its fields: |
//! | | | ACK: next segment expected (8), the echoed `sent_at`, ns (8), SACK block offset above the next segment expected (4) and length (4), in segments, length 0 for none |
//! | | | in-band control: data bytes sent since the previous IB (8) |
//! | | | reverse control: signal (1: 0 increase, 1 decrease, 2 loss; then 7 zero bytes), accumulation estimate â in bytes as IEEE 754 binary64 (8), ftt_q, ns (8) |
//! | 66 | … | zero padding up to the packet size |
//!
//! The packet's bytes are `max(size, 66)` long, so the router's emulated links and the real
//! sockets carry the same bytes but for the 24-byte authenticator that [`crate::auth`] appends
//! to every datagram (counter and tag; a 1000-byte data packet is a 1024-byte UDP payload); ACKs and
//! control packets smaller than the header are sent as 66 bytes, but links still count their
//! declared size. The router keeps the hop index itself; it is not on the wire. Versions 1
//! (untyped `ack`, `echo` and `value` fields, control flags in `ack`) and 2 (no SACK block)
//! are no longer read.
//!
//! A **heartbeat** is not a packet of the scenario: the two processes of a split run (`acclab live
//! router` and `acclab live endpoints`) send one another one at a fixed interval, so that each
//! finds out within a few round trips when the other has gone silent ([`crate::liveness`]). It
//! is a bare 66-byte header, kind 255, whose flow field names the sender (an endpoint's slot, or
//! [`ROUTER`]), whose byte 4 is 1 in the last one a process sends as its run ends (0 before:
//! the peer stops waiting for it then), and whose every other byte after the kind is zero.
//!
//! [`decode`] checks every field that can be wrong and returns a [`WireError`] naming what was;
//! it never panics, whatever the bytes (a proptest in this file and `tests/wire_fuzz.rs` feed it
//! random, truncated and mutated datagrams).

use acclab_core::packet::{Payload, Sack};
use acclab_core::transport::monaco::control::{InBand, Reverse, Signal};
use acclab_core::{Duration, Ecn, FlowId, Packet, PacketKind, Time};

/// The first two bytes of every acclab datagram.
pub const MAGIC: [u8; 2] = *b"AL";
/// The version this code writes and reads.
pub const VERSION: u8 = 3;
/// Header length: the smallest datagram.
pub const HEADER_LEN: usize = 66;
/// Where the payload starts, and its length.
const PAYLOAD_AT: usize = 42;
const PAYLOAD_LEN: usize = 24;
/// The largest UDP payload over IPv4; no packet may declare more.
pub const MAX_DATAGRAM: usize = 65_507;

/// The kind byte of a heartbeat.
pub const HEARTBEAT: u8 = 255;
/// The sender field of the router's heartbeats (endpoints send their slot's index).
pub const ROUTER: u32 = u32::MAX;

/// What one datagram carries: a packet of the scenario, or a heartbeat.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Datagram {
    Packet(Packet),
    Heartbeat(Heartbeat),
}

/// A heartbeat from `from` (an endpoint slot's index, or [`ROUTER`]); `finished`: its sender's
/// run is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    pub from: u32,
    pub finished: bool,
}

/// Writes heartbeat `h` into `buf` (cleared first).
pub fn encode_heartbeat(h: Heartbeat, buf: &mut Vec<u8>) {
    buf.clear();
    buf.resize(HEADER_LEN, 0);
    buf[..2].copy_from_slice(&MAGIC);
    buf[2] = VERSION;
    buf[3] = HEARTBEAT;
    buf[4] = u8::from(h.finished);
    buf[6..10].copy_from_slice(&h.from.to_be_bytes());
}

/// Reads one datagram: a heartbeat, or a packet as [`decode`] reads it.
pub fn decode_datagram(d: &[u8]) -> Result<Datagram, WireError> {
    if d.len() == HEADER_LEN && d[..2] == MAGIC && d[2] == VERSION && d[3] == HEARTBEAT {
        if d[4] > 1 {
            return Err(WireError::NonZeroPadding(4));
        }
        if let Some(i) = (5..HEADER_LEN).find(|&i| !(6..10).contains(&i) && d[i] != 0) {
            return Err(WireError::NonZeroPadding(i));
        }
        return Ok(Datagram::Heartbeat(Heartbeat {
            from: u32::from_be_bytes([d[6], d[7], d[8], d[9]]),
            finished: d[4] == 1,
        }));
    }
    decode(d).map(Datagram::Packet)
}

/// Why a datagram is not an acclab packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("datagram of {0} bytes is shorter than the {HEADER_LEN}-byte header")]
    TooShort(usize),
    #[error("bad magic {0:02x?} (expected \"AL\")")]
    BadMagic([u8; 2]),
    #[error("unsupported wire version {0} (this build reads version {VERSION})")]
    UnsupportedVersion(u8),
    #[error("unknown packet kind {0}")]
    UnknownKind(u8),
    #[error("undefined ECN bits {0:#04x}")]
    BadEcn(u8),
    #[error("payload type {payload} does not belong to packet kind {kind}")]
    PayloadMismatch { kind: u8, payload: u8 },
    #[error("unknown control signal {0}")]
    BadSignal(u8),
    #[error("payload byte {0} past its fields is not zero")]
    NonZeroPadding(usize),
    #[error("declared packet size {0} is zero or larger than a UDP datagram")]
    BadSize(u32),
    #[error("datagram is {actual} bytes, its declared size {declared} needs {expected}")]
    LengthMismatch {
        declared: u32,
        expected: usize,
        actual: usize,
    },
    #[error("accumulation estimate is not a finite number")]
    NonFiniteValue,
    #[error("a virtual delay on a packet that is neither an in-band nor a reverse control packet")]
    StrayVirtualDelay,
}

/// Datagram length for a packet of `size` bytes.
pub fn datagram_len(size: u32) -> usize {
    (size as usize).max(HEADER_LEN)
}

/// The payload type byte a packet of `kind` carries.
fn payload_type(kind: PacketKind) -> u8 {
    match kind {
        PacketKind::Data | PacketKind::ControlOb => 0,
        PacketKind::Ack => 1,
        PacketKind::ControlIb => 2,
        PacketKind::ControlReverse => 3,
    }
}

/// Writes `pkt` into `buf` (cleared first) as one datagram. A payload that does not belong to
/// the packet's kind is written as the kind's empty one (nothing sends such a packet).
pub fn encode(pkt: &Packet, buf: &mut Vec<u8>) {
    buf.clear();
    buf.extend_from_slice(&MAGIC);
    buf.push(VERSION);
    buf.push(pkt.kind as u8);
    buf.push(pkt.ecn.bits());
    buf.push(payload_type(pkt.kind));
    buf.extend_from_slice(&pkt.flow.0.to_be_bytes());
    buf.extend_from_slice(&pkt.conn.to_be_bytes());
    buf.extend_from_slice(&pkt.size.to_be_bytes());
    for x in [pkt.seq, pkt.sent_at.0, pkt.virtual_delay().0] {
        buf.extend_from_slice(&x.to_be_bytes());
    }
    let words: [u64; 3] = match (pkt.kind, pkt.payload) {
        (PacketKind::Ack, Payload::Ack { next, echo, sack }) => {
            [next, echo.0, (sack.offset as u64) << 32 | sack.len as u64]
        }
        (PacketKind::ControlIb, Payload::InBand(m)) => [m.sent_bytes, 0, 0],
        (PacketKind::ControlReverse, Payload::Reverse(r)) => {
            let signal = Signal::ALL.iter().position(|s| *s == r.signal).unwrap_or(0) as u64;
            [signal << 56, r.accumulation.to_bits(), r.ftt_q.0]
        }
        _ => [0, 0, 0],
    };
    for w in words {
        buf.extend_from_slice(&w.to_be_bytes());
    }
    debug_assert_eq!(buf.len(), HEADER_LEN);
    buf.resize(datagram_len(pkt.size), 0);
}

/// Reads one datagram. The hop index of the result is 0.
pub fn decode(d: &[u8]) -> Result<Packet, WireError> {
    let header: &[u8; HEADER_LEN] = d
        .get(..HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or(WireError::TooShort(d.len()))?;
    let u32_at =
        |o: usize| u32::from_be_bytes([header[o], header[o + 1], header[o + 2], header[o + 3]]);
    let u64_at = |o: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&header[o..o + 8]);
        u64::from_be_bytes(b)
    };
    if header[..2] != MAGIC {
        return Err(WireError::BadMagic([header[0], header[1]]));
    }
    if header[2] != VERSION {
        return Err(WireError::UnsupportedVersion(header[2]));
    }
    let kind = PacketKind::from_u8(header[3]).ok_or(WireError::UnknownKind(header[3]))?;
    let ecn = Ecn::from_bits(header[4]).ok_or(WireError::BadEcn(header[4]))?;
    if header[5] != payload_type(kind) {
        return Err(WireError::PayloadMismatch {
            kind: header[3],
            payload: header[5],
        });
    }
    let size = u32_at(14);
    if size == 0 || size as usize > MAX_DATAGRAM {
        return Err(WireError::BadSize(size));
    }
    if d.len() != datagram_len(size) {
        return Err(WireError::LengthMismatch {
            declared: size,
            expected: datagram_len(size),
            actual: d.len(),
        });
    }
    let virtual_delay = Duration(u64_at(34));
    if virtual_delay.0 != 0 && !matches!(kind, PacketKind::ControlIb | PacketKind::ControlReverse) {
        return Err(WireError::StrayVirtualDelay);
    }
    // The bytes of the payload area its type uses; the rest must be zero.
    let (payload, used) = match kind {
        PacketKind::Data | PacketKind::ControlOb => (Payload::None, 0),
        PacketKind::Ack => {
            let sack = u64_at(PAYLOAD_AT + 16);
            let ack = Payload::Ack {
                next: u64_at(PAYLOAD_AT),
                echo: Time(u64_at(PAYLOAD_AT + 8)),
                sack: Sack {
                    offset: (sack >> 32) as u32,
                    len: sack as u32,
                },
            };
            (ack, PAYLOAD_LEN)
        }
        PacketKind::ControlIb => (
            Payload::InBand(InBand {
                sent_bytes: u64_at(PAYLOAD_AT),
                virtual_delay,
            }),
            8,
        ),
        PacketKind::ControlReverse => {
            let b = header[PAYLOAD_AT];
            let signal = *Signal::ALL.get(b as usize).ok_or(WireError::BadSignal(b))?;
            if let Some(i) = (1..8).find(|&i| header[PAYLOAD_AT + i] != 0) {
                return Err(WireError::NonZeroPadding(PAYLOAD_AT + i));
            }
            let accumulation = f64::from_bits(u64_at(PAYLOAD_AT + 8));
            if !accumulation.is_finite() {
                return Err(WireError::NonFiniteValue);
            }
            let r = Reverse {
                signal,
                accumulation,
                ftt_q: Duration(u64_at(PAYLOAD_AT + 16)),
                virtual_delay,
            };
            (Payload::Reverse(r), PAYLOAD_LEN)
        }
    };
    if let Some(i) = (PAYLOAD_AT + used..HEADER_LEN).find(|&i| header[i] != 0) {
        return Err(WireError::NonZeroPadding(i));
    }
    let mut pkt = Packet::new(FlowId(u32_at(6)), kind, size);
    pkt.ecn = ecn;
    pkt.conn = u32_at(10);
    pkt.seq = u64_at(18);
    pkt.sent_at = Time(u64_at(26));
    pkt.payload = payload;
    Ok(pkt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_packet() -> impl Strategy<Value = Packet> {
        (
            (0u32..1000, 0usize..5, 0u8..8, any::<u32>(), 1u32..9000),
            (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
            (any::<u64>(), -1e12f64..1e12, 0usize..3),
        )
            .prop_map(
                |((flow, kind, ecn, conn, size), (seq, a, sent, b), (vd, value, signal))| {
                    let kind = PacketKind::ALL[kind];
                    let mut p = Packet::new(FlowId(flow), kind, size);
                    p.ecn = Ecn::from_bits(ecn).unwrap();
                    p.conn = conn;
                    p.seq = seq;
                    p.sent_at = Time(sent);
                    p.payload = match kind {
                        PacketKind::Ack => Payload::Ack {
                            next: a,
                            echo: Time(b),
                            sack: Sack {
                                offset: vd as u32,
                                len: (vd >> 32) as u32,
                            },
                        },
                        PacketKind::ControlIb => Payload::InBand(InBand {
                            sent_bytes: a,
                            virtual_delay: Duration(vd),
                        }),
                        PacketKind::ControlReverse => Payload::Reverse(Reverse {
                            signal: Signal::ALL[signal],
                            accumulation: value,
                            ftt_q: Duration(b),
                            virtual_delay: Duration(vd),
                        }),
                        _ => Payload::None,
                    };
                    p
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(p in arb_packet()) {
            let mut buf = Vec::new();
            encode(&p, &mut buf);
            prop_assert_eq!(buf.len(), datagram_len(p.size));
            prop_assert_eq!(decode(&buf), Ok(p));
        }

        #[test]
        fn random_bytes_never_panic(d in proptest::collection::vec(any::<u8>(), 0..1200)) {
            let _ = decode(&d);
            let _ = decode_datagram(&d);
        }

        /// A heartbeat reads back as itself; one changed in any byte but its sender's is
        /// refused or read as something else, never as a heartbeat that says another thing.
        #[test]
        fn heartbeats_round_trip_and_mutations_do_not_pass_for_them(
            from in any::<u32>(), finished in any::<bool>(), at in 0usize..66, byte in any::<u8>()
        ) {
            let h = Heartbeat { from, finished };
            let mut buf = Vec::new();
            encode_heartbeat(h, &mut buf);
            prop_assert_eq!(buf.len(), HEADER_LEN);
            prop_assert_eq!(decode_datagram(&buf), Ok(Datagram::Heartbeat(h)));
            let was = buf[at];
            buf[at] = byte;
            match decode_datagram(&buf) {
                Ok(Datagram::Heartbeat(g)) => prop_assert!(
                    was == byte || (6..10).contains(&at) || (at == 4 && g.finished != finished),
                    "byte {} changed to {}: {:?}", at, byte, g
                ),
                Ok(Datagram::Packet(p)) => prop_assert!(at == 3, "{:?}", p),
                Err(_) => {}
            }
        }

        #[test]
        fn mutated_packets_never_panic(p in arb_packet(), at in 0usize..66, byte in any::<u8>(), cut in 0usize..2000) {
            let mut buf = Vec::new();
            encode(&p, &mut buf);
            buf[at] = byte;
            buf.truncate(cut);
            let _ = decode(&buf);
        }
    }

    #[test]
    fn each_error_is_named() {
        let mut buf = Vec::new();
        encode(&Packet::new(FlowId(3), PacketKind::Data, 1000), &mut buf);
        let with = |i: usize, b: u8| {
            let mut d = buf.clone();
            d[i] = b;
            decode(&d)
        };
        assert_eq!(decode(&buf[..10]), Err(WireError::TooShort(10)));
        assert_eq!(with(0, b'X'), Err(WireError::BadMagic([b'X', b'L'])));
        assert_eq!(with(2, 9), Err(WireError::UnsupportedVersion(9)));
        assert_eq!(with(3, 7), Err(WireError::UnknownKind(7)));
        assert_eq!(with(4, 0x80), Err(WireError::BadEcn(0x80)));
        assert_eq!(
            with(5, 1),
            Err(WireError::PayloadMismatch {
                kind: 0,
                payload: 1
            })
        );
        assert_eq!(with(50, 1), Err(WireError::NonZeroPadding(50)));
        assert!(matches!(
            decode(&buf[..999]),
            Err(WireError::LengthMismatch {
                declared: 1000,
                expected: 1000,
                actual: 999
            })
        ));
        let mut rev = Packet::new(FlowId(3), PacketKind::ControlReverse, 40);
        rev.payload = Payload::Reverse(Reverse {
            signal: Signal::Loss,
            accumulation: f64::NAN,
            ftt_q: Duration::ZERO,
            virtual_delay: Duration::ZERO,
        });
        let mut nan = Vec::new();
        encode(&rev, &mut nan);
        assert_eq!(decode(&nan), Err(WireError::NonFiniteValue));
        nan[PAYLOAD_AT] = 3;
        assert_eq!(decode(&nan), Err(WireError::BadSignal(3)));
        let mut zero = buf.clone();
        zero[14..18].copy_from_slice(&0u32.to_be_bytes());
        assert_eq!(decode(&zero), Err(WireError::BadSize(0)));
    }

    #[test]
    fn small_packets_travel_as_a_header() {
        let mut buf = Vec::new();
        encode(&Packet::ack(FlowId(0), 40, 7, Time(5)), &mut buf);
        assert_eq!(buf.len(), HEADER_LEN);
        assert_eq!(decode(&buf).unwrap().size, 40);
    }
}
