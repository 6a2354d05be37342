//! Authenticated datagrams: a live run trusts only datagrams of its own run (issue 21 §3).
//!
//! Every datagram carries a trailer after the packet's bytes ([`crate::wire`]):
//!
//! | size | field |
//! |---:|---|
//! | 8 | the sending socket's datagram counter, big-endian, from 1 |
//! | 16 | tag: the first 16 bytes of BLAKE3's keyed hash, under the run's 32-byte key, of everything before the tag |
//!
//! The key is drawn from the operating system's random source for each run (`acclab live run`),
//! or shared by the two processes of a split run through a key file (`--key-file`: created,
//! mode 0600, by whichever process starts first; read by the other). A datagram whose tag does
//! not verify is *forged* (made without the key: spoofed, corrupted, or from another run); one
//! whose counter its receiver has already seen from that sender, or which is older than the last
//! 64 it has seen, is *replayed* (the sliding window of RFC 4303 §3.4.3). Both are dropped and
//! counted, never decoded further. A receiver keeps one window per sending address, created only
//! for datagrams that verified, so their number is bounded by the run's own sockets.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

use acclab_core::Packet;

use crate::wire::{self, Datagram, WireError};

/// Bytes of the counter and the tag after the packet.
pub const COUNTER_LEN: usize = 8;
pub const TAG_LEN: usize = 16;
pub const TRAILER_LEN: usize = COUNTER_LEN + TAG_LEN;

/// A run's secret key.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

impl Key {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> std::io::Result<Key> {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k).map_err(std::io::Error::other)?;
        Ok(Key(k))
    }

    /// The key as 64 hexadecimal digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A key written as 64 hexadecimal digits.
    pub fn from_hex(s: &str) -> Result<Key, String> {
        let s = s.trim();
        if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("a key is 64 hexadecimal digits".into());
        }
        let mut k = [0u8; 32];
        for (i, b) in k.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
        }
        Ok(Key(k))
    }

    /// The key in `path`, or a fresh one written there (created exclusively, readable by its
    /// owner only) if there is no such file yet — so two processes given the same path share
    /// one key whichever starts first.
    pub fn load_or_create(path: &Path) -> std::io::Result<Key> {
        use std::io::Write;
        let mut open = std::fs::OpenOptions::new();
        open.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
        match open.open(path) {
            Ok(mut f) => {
                let key = Key::generate()?;
                f.write_all(format!("{}\n", key.to_hex()).as_bytes())?;
                f.sync_all()?;
                Ok(key)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // The creator may still be writing it: wait briefly for a whole key.
                for _ in 0..100 {
                    let text = std::fs::read_to_string(path)?;
                    if text.ends_with('\n') {
                        return Key::from_hex(&text).map_err(|m| {
                            std::io::Error::new(
                                std::io::ErrorKind::InvalidData,
                                format!("{}: {m}", path.display()),
                            )
                        });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: not a key file (no complete key line)", path.display()),
                ))
            }
            Err(e) => Err(e),
        }
    }

    fn tag(&self, d: &[u8]) -> [u8; TAG_LEN] {
        let h = blake3::keyed_hash(&self.0, d);
        let mut t = [0u8; TAG_LEN];
        t.copy_from_slice(&h.as_bytes()[..TAG_LEN]);
        t
    }
}

/// Writes the datagrams of one socket.
pub struct Sealer {
    key: Key,
    counter: u64,
}

impl Sealer {
    pub fn new(key: Key) -> Sealer {
        Sealer { key, counter: 0 }
    }

    /// Writes `pkt` into `buf` (cleared first) as one authenticated datagram.
    pub fn seal(&mut self, pkt: &Packet, buf: &mut Vec<u8>) {
        wire::encode(pkt, buf);
        self.sign(buf);
    }

    /// Writes heartbeat `h` ([`wire::encode_heartbeat`]) into `buf` (cleared first),
    /// authenticated as any datagram.
    pub fn seal_heartbeat(&mut self, h: wire::Heartbeat, buf: &mut Vec<u8>) {
        wire::encode_heartbeat(h, buf);
        self.sign(buf);
    }

    /// Appends the counter and the tag.
    fn sign(&mut self, buf: &mut Vec<u8>) {
        self.counter += 1;
        buf.extend_from_slice(&self.counter.to_be_bytes());
        let tag = self.key.tag(buf);
        buf.extend_from_slice(&tag);
    }
}

/// Why a datagram was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("malformed: {0}")]
    Malformed(WireError),
    #[error("forged: its tag does not verify under this run's key")]
    Forged,
    #[error("replayed: its counter was seen already, or is older than the window")]
    Replayed,
    /// Authentic, but not a packet the receiver takes from that sender (another flow's, or the
    /// other direction's): dropped before the sender's window moves.
    #[error("foreign: authentic, but not from the endpoint this packet's flow and direction name")]
    Foreign,
}

/// The last 64 counters seen from one sender (RFC 4303 §3.4.3).
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    top: u64,
    /// Bit i: counter `top − i` has been seen.
    seen: u64,
}

impl Window {
    /// Whether counter `c` is new, marking it seen if it is.
    fn accept(&mut self, c: u64) -> bool {
        if c == 0 {
            return false;
        }
        if c > self.top {
            let shift = c - self.top;
            self.seen = if shift >= 64 { 0 } else { self.seen << shift };
            self.seen |= 1;
            self.top = c;
            return true;
        }
        let age = self.top - c;
        if age >= 64 || self.seen & (1 << age) != 0 {
            return false;
        }
        self.seen |= 1 << age;
        true
    }
}

/// Reads the datagrams of one socket.
pub struct Opener {
    key: Key,
    windows: HashMap<SocketAddr, Window>,
}

impl Opener {
    pub fn new(key: Key) -> Opener {
        Opener {
            key,
            windows: HashMap::new(),
        }
    }

    /// Verifies a datagram from `from`, decodes its packet, checks with `bound` that the packet
    /// may come from `from` (its flow and direction are that address's), and only then marks
    /// its counter seen in `from`'s window. The order matters (issue 55 §4): were the window
    /// moved first, an authentic datagram replayed with the spoofed source of another flow's
    /// socket would be refused as foreign and yet push that flow's window ahead, so that its
    /// real datagrams were then dropped as replays.
    pub fn open(
        &mut self,
        from: SocketAddr,
        d: &[u8],
        bound: impl FnOnce(&Packet) -> bool,
    ) -> Result<Packet, Rejection> {
        match self.open_datagram(from, d, |g| match g {
            Datagram::Packet(p) => bound(p),
            Datagram::Heartbeat(_) => false,
        })? {
            Datagram::Packet(p) => Ok(p),
            Datagram::Heartbeat(_) => Err(Rejection::Foreign),
        }
    }

    /// [`open`](Self::open) for a receiver that also takes heartbeats: `bound` sees the packet
    /// or the heartbeat (whose sender must be `from`'s) before the window moves.
    pub fn open_datagram(
        &mut self,
        from: SocketAddr,
        d: &[u8],
        bound: impl FnOnce(&Datagram) -> bool,
    ) -> Result<Datagram, Rejection> {
        if d.len() < wire::HEADER_LEN + TRAILER_LEN {
            return Err(Rejection::Malformed(WireError::TooShort(
                d.len().saturating_sub(TRAILER_LEN),
            )));
        }
        let (signed, tag) = d.split_at(d.len() - TAG_LEN);
        let expected = self.key.tag(signed);
        // Compared in constant time: every byte, whatever the first difference.
        if expected
            .iter()
            .zip(tag)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            != 0
        {
            return Err(Rejection::Forged);
        }
        let (body, counter) = signed.split_at(signed.len() - COUNTER_LEN);
        let counter = u64::from_be_bytes(counter.try_into().expect("8 bytes"));
        let packet = wire::decode_datagram(body).map_err(Rejection::Malformed)?;
        if !bound(&packet) {
            return Err(Rejection::Foreign);
        }
        if !self.windows.entry(from).or_default().accept(counter) {
            return Err(Rejection::Replayed);
        }
        Ok(packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::{FlowId, PacketKind};

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// A binding that takes any packet from any address.
    fn any(_: &Packet) -> bool {
        true
    }

    /// Issue 55 §4: an authentic datagram replayed with another socket's address is refused as
    /// foreign and leaves that socket's window as it was, so its own datagrams still pass.
    #[test]
    fn a_replay_from_a_spoofed_address_does_not_move_its_window() {
        let key = Key::generate().unwrap();
        let (mut a, mut b) = (Sealer::new(key.clone()), Sealer::new(key.clone()));
        let mut o = Opener::new(key);
        // Flow 1 is bound to address 1, flow 2 to address 2.
        let bound = |from: SocketAddr| move |p: &Packet| p.flow.0 as u16 == from.port();
        let seal = |s: &mut Sealer, flow: u32| {
            let mut d = Vec::new();
            s.seal(&Packet::new(FlowId(flow), PacketKind::Data, 100), &mut d);
            d
        };
        // Flow 1's socket has sent 1000 datagrams; one with a high counter is captured.
        let mut high = Vec::new();
        for _ in 0..1000 {
            high = seal(&mut a, 1);
        }
        assert!(o.open(addr(1), &high, bound(addr(1))).is_ok());
        // Replayed 34 times with flow 2's address: foreign each time.
        for _ in 0..34 {
            assert_eq!(
                o.open(addr(2), &high, bound(addr(2))),
                Err(Rejection::Foreign)
            );
        }
        // Flow 2's real datagrams (counters from 1) still open.
        for _ in 0..100 {
            let d = seal(&mut b, 2);
            assert!(o.open(addr(2), &d, bound(addr(2))).is_ok());
        }
    }

    #[test]
    fn sealed_datagrams_open_once_and_forgeries_never() {
        let key = Key::generate().unwrap();
        let mut s = Sealer::new(key.clone());
        let mut o = Opener::new(key);
        let mut p = Packet::new(FlowId(3), PacketKind::Data, 1000);
        p.seq = 42;
        let mut d = Vec::new();
        s.seal(&p, &mut d);
        assert_eq!(d.len(), 1000 + TRAILER_LEN);
        assert_eq!(o.open(addr(1), &d, any).unwrap().seq, 42);
        // The same datagram again: a replay.
        assert_eq!(o.open(addr(1), &d, any), Err(Rejection::Replayed));
        // From another address it is the first from there (the router also checks who sent it).
        assert!(o.open(addr(2), &d, any).is_ok());
        // Any changed byte, the counter included, breaks the tag.
        for at in [0, 20, 999, 1000 + 3, d.len() - 1] {
            let mut f = d.clone();
            f[at] ^= 1;
            assert_eq!(
                o.open(addr(1), &f, any),
                Err(Rejection::Forged),
                "byte {at}"
            );
        }
        // A datagram made with another key, or with none, is forged.
        let mut other = Sealer::new(Key::generate().unwrap());
        let mut f = Vec::new();
        other.seal(&p, &mut f);
        assert_eq!(o.open(addr(1), &f, any), Err(Rejection::Forged));
        wire::encode(&p, &mut f);
        f.extend_from_slice(&[0; TRAILER_LEN]);
        assert_eq!(o.open(addr(1), &f, any), Err(Rejection::Forged));
        assert!(matches!(
            o.open(addr(1), &d[..40], any),
            Err(Rejection::Malformed(_))
        ));
    }

    #[test]
    fn the_window_takes_late_datagrams_once_and_refuses_old_ones() {
        let mut w = Window::default();
        assert!(!w.accept(0));
        assert!(w.accept(1) && w.accept(3) && w.accept(2));
        assert!(!w.accept(2) && !w.accept(3));
        assert!(w.accept(100));
        assert!(w.accept(37), "63 behind the newest: inside the window");
        assert!(!w.accept(36), "64 behind: outside");
        assert!(!w.accept(37));
        assert!(w.accept(1000) && !w.accept(100));
    }

    #[test]
    fn key_files_are_shared_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let a = Key::load_or_create(&path).unwrap();
        let b = Key::load_or_create(&path).unwrap();
        assert_eq!(a, b);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(Key::from_hex(&a.to_hex()).unwrap(), a);
        std::fs::write(dir.path().join("bad"), "xyz\n").unwrap();
        assert!(Key::load_or_create(&dir.path().join("bad")).is_err());
        assert_eq!(format!("{a:?}"), "Key(…)");
    }
}
