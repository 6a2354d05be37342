//! The wire format: one acclab [`Packet`] per UDP datagram.
//!
//! Version 1, all integers big-endian (network order):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 2 | magic `"AL"` (0x41 0x4C) |
//! | 2 | 1 | version, 1 |
//! | 3 | 1 | kind: 0 data, 1 ACK, 2 control OB, 3 control IB, 4 control reverse |
//! | 4 | 1 | ECN bits: 1 ECN-capable, 2 congestion experienced, 4 ECN-echo |
//! | 5 | 1 | reserved, must be 0 |
//! | 6 | 4 | flow index in the scenario |
//! | 10 | 4 | connection within the flow (web users) |
//! | 14 | 4 | packet size in bytes as the scenario counts it |
//! | 18 | 8 | seq: data segment number, or control sequence number |
//! | 26 | 8 | ack: next segment expected, or (IB) bytes sent since the previous IB |
//! | 34 | 8 | sent_at, ns of scenario time |
//! | 42 | 8 | echo, ns (ACK: the `sent_at` of the data it acknowledges) |
//! | 50 | 8 | virtual delay added by AVD routers, ns |
//! | 58 | 8 | value: IEEE 754 binary64 (Monaco reverse control: accumulation estimate, bytes) |
//! | 66 | … | zero padding up to the packet size |
//!
//! A datagram is `max(size, 66)` bytes long, so a 1000-byte data packet is a 1000-byte UDP
//! payload and the router's emulated links and the real sockets carry the same bytes; ACKs and
//! control packets smaller than the header are sent as 66 bytes, but links still count their
//! declared size. The router keeps the hop index itself; it is not on the wire.
//!
//! [`decode`] checks every field that can be wrong and returns a [`WireError`] naming what was;
//! it never panics, whatever the bytes (a proptest in this file and `tests/wire_fuzz.rs` feed it
//! random, truncated and mutated datagrams).

use acclab_core::{Duration, Ecn, FlowId, Packet, PacketKind, Time};

/// The first two bytes of every acclab datagram.
pub const MAGIC: [u8; 2] = *b"AL";
/// The version this code writes and reads.
pub const VERSION: u8 = 1;
/// Header length: the smallest datagram.
pub const HEADER_LEN: usize = 66;
/// The largest UDP payload over IPv4; no packet may declare more.
pub const MAX_DATAGRAM: usize = 65_507;

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
    #[error("reserved byte is {0}, must be 0")]
    Reserved(u8),
    #[error("declared packet size {0} is zero or larger than a UDP datagram")]
    BadSize(u32),
    #[error("datagram is {actual} bytes, its declared size {declared} needs {expected}")]
    LengthMismatch {
        declared: u32,
        expected: usize,
        actual: usize,
    },
    #[error("value field is not a finite number")]
    NonFiniteValue,
}

/// Datagram length for a packet of `size` bytes.
pub fn datagram_len(size: u32) -> usize {
    (size as usize).max(HEADER_LEN)
}

/// Writes `pkt` into `buf` (cleared first) as one datagram.
pub fn encode(pkt: &Packet, buf: &mut Vec<u8>) {
    buf.clear();
    buf.extend_from_slice(&MAGIC);
    buf.push(VERSION);
    buf.push(pkt.kind as u8);
    buf.push(pkt.ecn.bits());
    buf.push(0);
    buf.extend_from_slice(&pkt.flow.0.to_be_bytes());
    buf.extend_from_slice(&pkt.conn.to_be_bytes());
    buf.extend_from_slice(&pkt.size.to_be_bytes());
    for x in [
        pkt.seq,
        pkt.ack,
        pkt.sent_at.0,
        pkt.echo.0,
        pkt.virtual_delay.0,
        pkt.value.to_bits(),
    ] {
        buf.extend_from_slice(&x.to_be_bytes());
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
    if header[5] != 0 {
        return Err(WireError::Reserved(header[5]));
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
    let value = f64::from_bits(u64_at(58));
    if !value.is_finite() {
        return Err(WireError::NonFiniteValue);
    }
    let mut pkt = Packet::new(FlowId(u32_at(6)), kind, size);
    pkt.ecn = ecn;
    pkt.conn = u32_at(10);
    pkt.seq = u64_at(18);
    pkt.ack = u64_at(26);
    pkt.sent_at = Time(u64_at(34));
    pkt.echo = Time(u64_at(42));
    pkt.virtual_delay = Duration(u64_at(50));
    pkt.value = value;
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
            (any::<u64>(), -1e12f64..1e12),
        )
            .prop_map(
                |((flow, kind, ecn, conn, size), (seq, ack, sent, echo), (vd, value))| {
                    let mut p = Packet::new(FlowId(flow), PacketKind::ALL[kind], size);
                    p.ecn = Ecn::from_bits(ecn).unwrap();
                    p.conn = conn;
                    p.seq = seq;
                    p.ack = ack;
                    p.sent_at = Time(sent);
                    p.echo = Time(echo);
                    p.virtual_delay = Duration(vd);
                    p.value = value;
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
        assert_eq!(with(4, 0x10), Err(WireError::BadEcn(0x10)));
        assert_eq!(with(5, 1), Err(WireError::Reserved(1)));
        assert!(matches!(
            decode(&buf[..999]),
            Err(WireError::LengthMismatch {
                declared: 1000,
                expected: 1000,
                actual: 999
            })
        ));
        let mut nan = buf.clone();
        nan[58..66].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        assert_eq!(decode(&nan), Err(WireError::NonFiniteValue));
        let mut zero = buf.clone();
        zero[14..18].copy_from_slice(&0u32.to_be_bytes());
        assert_eq!(decode(&zero), Err(WireError::BadSize(0)));
    }

    #[test]
    fn small_packets_travel_as_a_header() {
        let mut buf = Vec::new();
        encode(&Packet::new(FlowId(0), PacketKind::Ack, 40), &mut buf);
        assert_eq!(buf.len(), HEADER_LEN);
        assert_eq!(decode(&buf).unwrap().size, 40);
    }
}
