//! Just enough of IPv4 for the router emulator to carry real packets (RFC 791): read the header
//! a packet arrives with, and set Congestion Experienced in it where a queue marks (RFC 3168),
//! with the header checksum updated.
//!
//! Nothing else of a packet is changed: no TTL decrement (the emulated network is the path
//! between two hosts, not a hop the kernel's traceroute should see), no fragmentation (the TUN
//! devices' MTU is the scenario's packet size).

use std::net::Ipv4Addr;

use acclab_core::packet::Ecn;

/// IP protocol numbers the router reads ports of.
pub const TCP: u8 = 6;
pub const UDP: u8 = 17;

/// RFC 3168 §5: the ECN field, the two low bits of the old TOS octet.
const ECN_MASK: u8 = 0b11;
const NOT_ECT: u8 = 0b00;
const CE: u8 = 0b11;
/// ECT(1), the L4S identifier (RFC 9331).
const ECT1: u8 = 0b01;

/// The fields of an IPv4 packet the router acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    /// Total length, header included (RFC 791 "Total Length").
    pub len: u16,
    /// The header's length in bytes (IHL × 4).
    pub header_len: u8,
    /// RFC 3168 ECN field: 00 Not-ECT, 01 ECT(1), 10 ECT(0), 11 CE.
    pub ecn: u8,
    /// TCP's or UDP's ports, when the packet is the first fragment of one.
    pub ports: Option<(u16, u16)>,
    /// Bytes after the transport header (TCP's data offset read; UDP's 8 bytes), when known.
    pub payload_len: Option<u16>,
}

/// Why a packet is not one the router carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotIpv4 {
    /// Not IP version 4 (IPv6 neighbour discovery, for one).
    Version(u8),
    /// Shorter than its header says, or than the header's minimum.
    Truncated,
}

impl Header {
    /// Reads the header of `p`, which must be exactly one packet (a TUN read).
    pub fn parse(p: &[u8]) -> Result<Header, NotIpv4> {
        let first = *p.first().ok_or(NotIpv4::Truncated)?;
        if first >> 4 != 4 {
            return Err(NotIpv4::Version(first >> 4));
        }
        let header_len = (first & 0x0f) * 4;
        if header_len < 20 || p.len() < header_len as usize {
            return Err(NotIpv4::Truncated);
        }
        let len = u16::from_be_bytes([p[2], p[3]]);
        if (len as usize) < header_len as usize || p.len() < len as usize {
            return Err(NotIpv4::Truncated);
        }
        let protocol = p[9];
        // RFC 791: a fragment other than the first carries no transport header.
        let first_fragment = u16::from_be_bytes([p[6], p[7]]) & 0x1fff == 0;
        let l4 = &p[header_len as usize..len as usize];
        let (ports, payload_len) = match protocol {
            TCP | UDP if first_fragment && l4.len() >= 8 => {
                let ports = (
                    u16::from_be_bytes([l4[0], l4[1]]),
                    u16::from_be_bytes([l4[2], l4[3]]),
                );
                let l4_header = match protocol {
                    // RFC 9293 §3.1: Data Offset, in 32-bit words.
                    TCP if l4.len() >= 20 => Some((l4[12] >> 4) as usize * 4),
                    TCP => None,
                    _ => Some(8),
                };
                let payload = l4_header
                    .filter(|&h| h <= l4.len())
                    .map(|h| (l4.len() - h) as u16);
                (Some(ports), payload)
            }
            _ => (None, None),
        };
        Ok(Header {
            src: Ipv4Addr::new(p[12], p[13], p[14], p[15]),
            dst: Ipv4Addr::new(p[16], p[17], p[18], p[19]),
            protocol,
            len,
            header_len,
            ecn: p[1] & ECN_MASK,
            ports,
            payload_len,
        })
    }

    /// The codepoint the simulator's queues see: ECN-capable for ECT(0), ECT(1) and CE;
    /// ECT(1), the L4S identifier, as such (RFC 9331).
    pub fn core_ecn(&self) -> Ecn {
        let mut e = match self.ecn {
            NOT_ECT => Ecn::NOT_ECT,
            ECT1 => Ecn::ECT1,
            _ => Ecn::ECT,
        };
        if self.ecn == CE {
            e.mark();
        }
        e
    }
}

/// RFC 3168 §5: sets CE in an ECN-capable packet's header and updates its checksum (RFC 1624
/// eqn. 3, HC' = ~(~HC + ~m + m'), over the 16-bit word that holds the TOS octet). Returns false,
/// changing nothing, for a Not-ECT packet (a queue never marks one; RFC 3168 §5 forbids setting
/// CE on it) or one already marked.
pub fn mark_ce(p: &mut [u8]) -> bool {
    if p.len() < 20 || p[1] & ECN_MASK == NOT_ECT || p[1] & ECN_MASK == CE {
        return false;
    }
    let old = u16::from_be_bytes([p[0], p[1]]);
    p[1] |= CE;
    let new = u16::from_be_bytes([p[0], p[1]]);
    let hc = u16::from_be_bytes([p[10], p[11]]);
    let sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    let folded = (sum & 0xffff) + (sum >> 16);
    let folded = (folded & 0xffff) + (folded >> 16);
    p[10..12].copy_from_slice(&(!(folded as u16)).to_be_bytes());
    true
}

/// RFC 791's header checksum of `header` (its checksum field included: 0 when it is right).
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An IPv4 packet with a correct header checksum: `protocol`, ECN field `ecn`, and for TCP a
    /// 20-byte header with ports, then `payload` bytes.
    pub(crate) fn packet(protocol: u8, ecn: u8, ports: (u16, u16), payload: usize) -> Vec<u8> {
        let l4 = match protocol {
            TCP => 20,
            UDP => 8,
            _ => 0,
        };
        let len = 20 + l4 + payload;
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[1] = 0x08 << 2 | ecn;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[6] = 0x40; // don't fragment
        p[8] = 64;
        p[9] = protocol;
        p[12..16].copy_from_slice(&[10, 201, 0, 1]);
        p[16..20].copy_from_slice(&[10, 201, 0, 2]);
        if l4 > 0 {
            p[20..22].copy_from_slice(&ports.0.to_be_bytes());
            p[22..24].copy_from_slice(&ports.1.to_be_bytes());
        }
        if protocol == TCP {
            p[32] = 5 << 4;
        }
        let c = header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn a_tcp_packet_is_read() {
        let p = packet(TCP, 0b10, (40000, 5001), 1448);
        let h = Header::parse(&p).unwrap();
        assert_eq!(h.src, Ipv4Addr::new(10, 201, 0, 1));
        assert_eq!(h.dst, Ipv4Addr::new(10, 201, 0, 2));
        assert_eq!((h.protocol, h.len, h.header_len), (TCP, 1488, 20));
        assert_eq!(h.ports, Some((40000, 5001)));
        assert_eq!(h.payload_len, Some(1448));
        assert!(h.core_ecn().is_capable() && !h.core_ecn().is_marked());
        let u = Header::parse(&packet(UDP, 0, (1, 2), 100)).unwrap();
        assert_eq!((u.ports, u.payload_len), (Some((1, 2)), Some(100)));
        assert!(!u.core_ecn().is_capable());
        let icmp = Header::parse(&packet(1, 0, (0, 0), 56)).unwrap();
        assert_eq!((icmp.ports, icmp.payload_len), (None, None));
    }

    #[test]
    fn what_is_not_a_whole_ipv4_packet_is_refused() {
        let p = packet(TCP, 0, (1, 2), 10);
        assert_eq!(Header::parse(&[]), Err(NotIpv4::Truncated));
        assert_eq!(Header::parse(&[0x60; 40]), Err(NotIpv4::Version(6)));
        assert_eq!(Header::parse(&p[..19]), Err(NotIpv4::Truncated));
        assert_eq!(Header::parse(&p[..p.len() - 1]), Err(NotIpv4::Truncated));
        let mut short_ihl = p.clone();
        short_ihl[0] = 0x44;
        assert_eq!(Header::parse(&short_ihl), Err(NotIpv4::Truncated));
        let mut short_len = p;
        short_len[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert_eq!(Header::parse(&short_len), Err(NotIpv4::Truncated));
    }

    #[test]
    fn marking_sets_ce_only_on_ect_packets_and_keeps_the_checksum_right() {
        for ecn in [0b01, 0b10] {
            let mut p = packet(TCP, ecn, (1, 2), 100);
            assert_eq!(header_checksum(&p[..20]), 0);
            assert!(mark_ce(&mut p));
            assert_eq!(p[1] & 0b11, CE);
            assert_eq!(p[1] >> 2, 0x08, "DSCP kept");
            assert_eq!(header_checksum(&p[..20]), 0, "checksum updated");
            assert!(Header::parse(&p).unwrap().core_ecn().is_marked());
            assert!(!mark_ce(&mut p), "already CE");
        }
        let mut not_ect = packet(TCP, 0, (1, 2), 100);
        let before = not_ect.clone();
        assert!(!mark_ce(&mut not_ect));
        assert_eq!(not_ect, before);
    }

    proptest::proptest! {
        /// The incremental update equals a full recomputation for every header.
        #[test]
        fn the_incremental_checksum_matches_a_full_one(
            tos in 0u8..=255, id in 0u16..=65535, ttl in 1u8..=255,
            src in proptest::array::uniform4(0u8..=255), dst in proptest::array::uniform4(0u8..=255),
        ) {
            let mut p = packet(UDP, 0, (1, 2), 0);
            p[1] = tos;
            p[4..6].copy_from_slice(&id.to_be_bytes());
            p[8] = ttl;
            p[12..16].copy_from_slice(&src);
            p[16..20].copy_from_slice(&dst);
            p[10..12].copy_from_slice(&[0, 0]);
            let c = header_checksum(&p[..20]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
            if mark_ce(&mut p) {
                proptest::prop_assert_eq!(header_checksum(&p[..20]), 0);
            }
        }
    }
}
