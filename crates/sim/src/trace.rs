//! Packet traces (`[output] trace = { links = [...], flows = [...], format = "pcap" | "csv" }`):
//! every enqueue, transmission, drop and mark at the chosen links, and of the chosen flows'
//! packets on every link. An [`Observer`] like the monitor, added only when a scenario asks for
//! a trace, so that a run without one pays nothing for it.
//!
//! `pcap/` (pcapng, read by Wireshark, tshark and tcpdump): one file per link and capture point,
//! as ns-3 writes one per device, so that each file holds a packet once, as one tcpdump would
//! see it — Wireshark's TCP analysis reads a second record of the same segment in a file as a
//! retransmission, and it does not tell a file's interfaces apart. `capture = "wire"` (the
//! default): `pcap/<link>.pcapng`, every packet as it leaves onto the link; `"queue"`:
//! `pcap/<link>.queue.pcapng`, every packet as it arrives at the link's queue, those dropped on
//! arrival included; `"both"`: the two files. `<link>` is the link's name with `->` written
//! `-to-` and anything but letters, digits, `-`, `_` and `.` as `_` (`r1->r2` →
//! `r1-to-r2.pcapng`); a file is opened at its first packet. Each file has one interface, named
//! after the link, timestamps in ns. Each record is one packet with synthesised headers and no
//! payload (the captured length is the headers; the original length is the packet's size on
//! the wire):
//! - IPv4: node i of the scenario is 10.(i/65536).(i/256 mod 256).(i mod 256); forward packets
//!   go from the flow's source to its destination, ACKs and reverse control packets back. ECN
//!   bits: ECT(0) for ECN-capable packets, CE once marked. DSCP: CS6 for Monaco's out-of-band
//!   and reverse control packets (the high band), CS5 for its in-band ones, 0 otherwise.
//! - TCP for data and ACKs of every window-based scheme; UDP for CBR data and for Monaco's
//!   control packets. Ports: 10000 + flow index (mod 50000) at the flow's source, 5001 + the
//!   connection number at its destination (web users' transfers are separate connections).
//!   Sequence numbers count payload bytes: segment n starts at n·MSS, with MSS the scenario's
//!   packet size less 40 bytes of headers; an ACK of segment n acknowledges n·MSS; ACKs carry
//!   ECE when they echo a mark.
//! - The record's comment says what happened — at the wire `dequeue sojourn_ns=…` (and `mark`
//!   when the queue marked it as it left), at the queue `enqueue` (`enqueue mark` when marked on
//!   arrival) or `drop overflow|aqm|link-loss` — and its flags the direction (outbound at the
//!   wire, inbound at the queue). A packet an AQM drops after it waited (`head-drop`: CoDel,
//!   PIE) was recorded at the queue when it arrived and never reaches the wire: the CSV trace
//!   lists its drop.
//!
//! `trace.csv`: one row per event: `time_s, event, link, flow, kind, conn, seq, ack, size, ecn,
//! sojourn_s, queue_pkts, reason` (`ack`: the next segment an ACK expects, empty otherwise).
//!
//! Every file is written as `….part` and renamed when the run finishes.
//!
//! Packets that are real (live mode's IP packets of real stacks) carry bytes of their own: a
//! [`PacketBytes`] source hands the tracer their headers, which the pcap records instead of
//! synthesised ones (CE set where the queue marked, as the packet will leave the link).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use acclab_core::queue::{Backlog, DropReason};
use acclab_core::{Packet, PacketKind, Time};
use acclab_results::csv_row::{open_csv, Row};
use acclab_scenario::{Capture, LinkId, Scenario, TraceDef, TraceFormat};
use etherparse::{IpDscp, IpEcn, IpNumber, Ipv4Header, TcpHeader, UdpHeader};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

use crate::observe::{Observer, Transmit};

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    /// Whether the queue marked it on arrival.
    Enqueue(bool),
    Dequeue(Transmit),
    Drop(DropReason),
    Mark,
}

enum Sink {
    Pcap(Box<Captures>),
    /// trace.csv, and the row being written (its buffer reused).
    Csv(Box<(BufWriter<File>, Row)>),
}

/// A link's capture points in a pcap trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    Wire = 0,
    Queue = 1,
}

/// A pcap trace's files: one per link and capture point, each opened at its first packet.
struct Captures {
    dir: PathBuf,
    capture: Capture,
    /// Per link and point (`link · 2 + point`).
    files: Vec<Option<PcapNgWriter<BufWriter<File>>>>,
    /// Per link: its file name's stem and its rate (bit/s).
    stems: Vec<String>,
    rates: Vec<u64>,
    link_names: Vec<String>,
}

impl Captures {
    fn new(dir: PathBuf, sc: &Scenario, capture: Capture) -> Captures {
        let mut stems: Vec<String> = Vec::with_capacity(sc.links.len());
        for (i, l) in sc.links.iter().enumerate() {
            let stem = file_stem(&l.name);
            // Two names that read the same as files keep apart by the link's index.
            let stem = if stems.contains(&stem) {
                format!("{stem}-{i}")
            } else {
                stem
            };
            stems.push(stem);
        }
        Captures {
            dir,
            capture,
            files: (0..2 * sc.links.len()).map(|_| None).collect(),
            stems,
            rates: sc.links.iter().map(|l| l.rate.bps()).collect(),
            link_names: sc.links.iter().map(|l| l.name.clone()).collect(),
        }
    }

    /// Whether packets are recorded at `point`.
    fn records(&self, point: Point) -> bool {
        matches!(
            (self.capture, point),
            (Capture::Both, _) | (Capture::Wire, Point::Wire) | (Capture::Queue, Point::Queue)
        )
    }

    fn path(&self, link: LinkId, point: Point) -> PathBuf {
        let stem = &self.stems[link.0 as usize];
        self.dir.join(match point {
            Point::Wire => format!("{stem}.pcapng"),
            Point::Queue => format!("{stem}.queue.pcapng"),
        })
    }

    /// The file of `link`'s `point`, opened (with its one interface) at the first packet.
    fn file(
        &mut self,
        link: LinkId,
        point: Point,
    ) -> std::io::Result<&mut PcapNgWriter<BufWriter<File>>> {
        let i = 2 * link.0 as usize + point as usize;
        if self.files[i].is_none() {
            std::fs::create_dir_all(&self.dir)?;
            let file = BufWriter::new(File::create(part(&self.path(link, point)))?);
            let mut w = PcapNgWriter::new(file).map_err(std::io::Error::other)?;
            let l = link.0 as usize;
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::IPV4,
                snaplen: 0,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(self.link_names[l].clone())),
                    InterfaceDescriptionOption::IfSpeed(self.rates[l]),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            w.write_pcapng_block(idb).map_err(std::io::Error::other)?;
            self.files[i] = Some(w);
        }
        Ok(self.files[i].as_mut().expect("opened"))
    }

    /// Flushes every file opened and moves it into place.
    fn finish(&mut self) -> std::io::Result<()> {
        for i in 0..self.files.len() {
            if let Some(w) = &mut self.files[i] {
                w.get_mut().flush()?;
                let point = if i % 2 == 0 {
                    Point::Wire
                } else {
                    Point::Queue
                };
                let path = self.path(LinkId((i / 2) as u32), point);
                std::fs::rename(part(&path), &path)?;
            }
        }
        Ok(())
    }
}

/// A link's name as a file name: `->` as `-to-`, and anything but letters, digits, `-`, `_`
/// and `.` as `_`.
fn file_stem(name: &str) -> String {
    let s = name.replace("->", "-to-");
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_start_matches('.').to_string()
}

/// Where a tracer finds the bytes of packets that have some (live mode's real IP packets).
pub trait PacketBytes: Send {
    /// Writes the packet's captured bytes (its headers at least) into `buf` and returns its
    /// length on the wire; `None` if it has no bytes of its own (its headers are synthesised).
    fn capture(&mut self, p: &Packet, buf: &mut Vec<u8>) -> Option<u32>;
}

/// Writes the trace a scenario asks for.
pub struct Tracer {
    links: Vec<bool>,
    flows: Vec<bool>,
    sink: Sink,
    path: PathBuf,
    /// Per flow: source and destination addresses, and whether it speaks UDP.
    ends: Vec<([u8; 4], [u8; 4], bool)>,
    link_names: Vec<String>,
    flow_ids: Vec<String>,
    mss: u64,
    buf: Vec<u8>,
    /// The bytes of real packets, where there are any.
    bytes: Option<Box<dyn PacketBytes>>,
    error: Option<std::io::Error>,
}

/// Zero bytes standing for payloads in checksums (the capture holds headers only).
static ZEROS: [u8; 65_535] = [0; 65_535];

fn address(node: u32) -> [u8; 4] {
    [10, (node >> 16) as u8, (node >> 8) as u8, node as u8]
}

impl Tracer {
    /// The tracer for `scenario`'s `[output] trace`, writing into `dir`; `None` if it asks for
    /// none.
    pub fn create(dir: &Path, scenario: &Scenario) -> std::io::Result<Option<Tracer>> {
        Tracer::create_with_bytes(dir, scenario, None)
    }

    /// [`Tracer::create`], with the real packets' bytes taken from `bytes` in a pcap trace.
    pub fn create_with_bytes(
        dir: &Path,
        scenario: &Scenario,
        bytes: Option<Box<dyn PacketBytes>>,
    ) -> std::io::Result<Option<Tracer>> {
        let Some(def) = &scenario.output.trace else {
            return Ok(None);
        };
        Tracer::new(dir, scenario, def, bytes).map(Some)
    }

    fn new(
        dir: &Path,
        sc: &Scenario,
        def: &TraceDef,
        bytes: Option<Box<dyn PacketBytes>>,
    ) -> std::io::Result<Tracer> {
        let path = dir.join(match def.format {
            TraceFormat::Pcap => "pcap",
            TraceFormat::Csv => "trace.csv",
        });
        let sink = match def.format {
            TraceFormat::Pcap => Sink::Pcap(Box::new(Captures::new(path.clone(), sc, def.capture))),
            TraceFormat::Csv => {
                let file = open_csv(
                    &part(&path),
                    &[
                        "time_s",
                        "event",
                        "link",
                        "flow",
                        "kind",
                        "conn",
                        "seq",
                        "ack",
                        "size",
                        "ecn",
                        "sojourn_s",
                        "queue_pkts",
                        "reason",
                    ],
                )?;
                let row = Row::default();
                Sink::Csv(Box::new((file, row)))
            }
        };
        let mut links = vec![false; sc.links.len()];
        def.links.iter().for_each(|l| links[l.0 as usize] = true);
        let mut flows = vec![false; sc.flows.len()];
        def.flows.iter().for_each(|&f| flows[f as usize] = true);
        Ok(Tracer {
            links,
            flows,
            sink,
            path,
            ends: sc
                .flows
                .iter()
                .map(|f| (address(f.src.0), address(f.dst.0), f.scheme.kind() == "cbr"))
                .collect(),
            link_names: sc.links.iter().map(|l| l.name.clone()).collect(),
            flow_ids: sc.flows.iter().map(|f| f.id.clone()).collect(),
            mss: u64::from(sc.packet_size.saturating_sub(40).max(1)),
            buf: Vec::with_capacity(64),
            bytes,
            error: None,
        })
    }

    fn wanted(&self, link: LinkId, p: &Packet) -> bool {
        self.links[link.0 as usize] || self.flows[p.flow.0 as usize]
    }

    fn record(&mut self, now: Time, link: LinkId, p: &Packet, what: What, backlog: Backlog) {
        if self.error.is_some() || !self.wanted(link, p) {
            return;
        }
        if let Err(e) = self.write(now, link, p, what, backlog) {
            self.error = Some(e);
        }
    }

    /// A packet the queue marked on arrival: the mark, then its enqueue.
    fn marked(&mut self, now: Time, link: LinkId, p: &Packet, backlog: Backlog) {
        let mut m = *p;
        if m.ecn.is_capable() {
            m.ecn.mark(); // an AVD stamp marks no ECN bit; an AQM marks only ECN-capable packets
        }
        self.record(now, link, &m, What::Mark, backlog);
        self.record(now, link, &m, What::Enqueue(true), backlog);
    }

    fn write(
        &mut self,
        now: Time,
        link: LinkId,
        p: &Packet,
        what: What,
        backlog: Backlog,
    ) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Csv(csv) => {
                let (w, row) = &mut **csv;
                let (event, sojourn, reason) = match what {
                    What::Enqueue(_) => ("enqueue", None, ""),
                    What::Dequeue(tx) => ("dequeue", Some(tx.sojourn.as_secs_f64()), ""),
                    What::Drop(r) => ("drop", None, r.name()),
                    What::Mark => ("mark", None, ""),
                };
                let ecn = if p.ecn.is_marked() {
                    "ce"
                } else if p.ecn.is_l4s() {
                    "ect1"
                } else if p.ecn.is_capable() {
                    "ect"
                } else {
                    ""
                };
                row.cell(&now.as_secs_f64())
                    .cell(event)
                    .cell(&self.link_names[link.0 as usize])
                    .cell(&self.flow_ids[p.flow.0 as usize])
                    .cell(kind_name(p.kind))
                    .cell(&p.conn)
                    .cell(&p.seq)
                    .cell(&p.ack_info().map(|(next, _)| next))
                    .cell(&p.size)
                    .cell(ecn)
                    .cell(&sojourn)
                    .cell(&backlog.packets)
                    .cell(reason)
                    .end(w)
            }
            Sink::Pcap(c) => {
                // Each packet once per capture point: marks are seen on the packet (CE) and
                // said in its record's comment; a head drop was recorded when it arrived.
                let point = match what {
                    What::Dequeue(_) => Point::Wire,
                    What::Enqueue(_) => Point::Queue,
                    What::Drop(DropReason::HeadDrop) | What::Mark => return Ok(()),
                    What::Drop(_) => Point::Queue,
                };
                if !c.records(point) {
                    return Ok(());
                }
                let real = match &mut self.bytes {
                    Some(b) => b.capture(p, &mut self.buf),
                    None => None,
                };
                let orig = match real {
                    Some(len) => len,
                    None => self.headers(p)?,
                };
                let (comment, flags) = match what {
                    What::Enqueue(false) => (Cow::Borrowed("enqueue"), 0b01),
                    What::Enqueue(true) => (Cow::Borrowed("enqueue mark"), 0b01),
                    What::Dequeue(tx) => (
                        Cow::Owned(format!(
                            "dequeue sojourn_ns={}{}",
                            tx.sojourn.0,
                            if tx.marked { " mark" } else { "" }
                        )),
                        0b10,
                    ),
                    What::Drop(r) => (Cow::Owned(format!("drop {}", r.name())), 0b01),
                    What::Mark => unreachable!("marks are not records of their own in a pcap"),
                };
                let epb = EnhancedPacketBlock {
                    interface_id: 0,
                    timestamp: std::time::Duration::from_nanos(now.0),
                    original_len: orig,
                    data: Cow::Borrowed(&self.buf),
                    options: vec![
                        EnhancedPacketOption::Comment(comment),
                        EnhancedPacketOption::Flags(flags),
                    ],
                };
                let Sink::Pcap(c) = &mut self.sink else {
                    unreachable!()
                };
                c.file(link, point)?
                    .write_pcapng_block(epb)
                    .map_err(std::io::Error::other)?;
                Ok(())
            }
        }
    }

    /// Writes `p`'s synthesised IPv4 and TCP/UDP headers into `buf`; returns its length on the
    /// wire.
    fn headers(&mut self, p: &Packet) -> std::io::Result<u32> {
        let (src, dst, udp_flow) = self.ends[p.flow.0 as usize];
        let (from, to) = if p.kind.is_forward() {
            (src, dst)
        } else {
            (dst, src)
        };
        let control = matches!(
            p.kind,
            PacketKind::ControlOb | PacketKind::ControlIb | PacketKind::ControlReverse
        );
        let udp = udp_flow || control;
        let l4 = if udp {
            UdpHeader::LEN
        } else {
            TcpHeader::MIN_LEN
        };
        let headers = Ipv4Header::MIN_LEN + l4;
        let total = (p.size as usize).clamp(headers, usize::from(u16::MAX));
        let payload = &ZEROS[..total - headers];
        let mut ip = Ipv4Header::new(
            (total - Ipv4Header::MIN_LEN) as u16,
            64,
            if udp { IpNumber::UDP } else { IpNumber::TCP },
            from,
            to,
        )
        .map_err(std::io::Error::other)?;
        ip.ecn = if p.ecn.is_marked() {
            IpEcn::CongestionExperienced
        } else if p.ecn.is_l4s() {
            IpEcn::Ect1
        } else if p.ecn.is_capable() {
            IpEcn::Ect0
        } else {
            IpEcn::NotEct
        };
        ip.dscp = match p.kind {
            PacketKind::ControlOb | PacketKind::ControlReverse => IpDscp::CS6,
            PacketKind::ControlIb => IpDscp::CS5,
            _ => IpDscp::ZERO,
        };
        ip.header_checksum = ip.calc_header_checksum();
        let flow_port = 10_000 + (p.flow.0 % 50_000) as u16;
        let conn_port = 5001u16.wrapping_add(p.conn as u16);
        let (sport, dport) = if p.kind.is_forward() {
            (flow_port, conn_port)
        } else {
            (conn_port, flow_port)
        };
        self.buf.clear();
        ip.write(&mut self.buf)?;
        if udp {
            UdpHeader::with_ipv4_checksum(sport, dport, &ip, payload)
                .map_err(std::io::Error::other)?
                .write(&mut self.buf)?;
        } else {
            let bytes = |n: u64| (n.wrapping_mul(self.mss)) as u32; // TCP sequence space wraps
            let mut tcp = TcpHeader::new(sport, dport, 0, u16::MAX);
            if let Some((next, _)) = p.ack_info() {
                tcp.ack = true;
                tcp.acknowledgment_number = bytes(next);
                tcp.ece = p.ecn.is_echo();
            } else {
                tcp.sequence_number = bytes(p.seq);
                tcp.psh = true;
            }
            tcp.checksum = tcp
                .calc_checksum_ipv4(&ip, payload)
                .map_err(std::io::Error::other)?;
            tcp.write(&mut self.buf)?;
        }
        Ok(total as u32)
    }
}

fn kind_name(k: PacketKind) -> &'static str {
    match k {
        PacketKind::Data => "data",
        PacketKind::Ack => "ack",
        PacketKind::ControlOb => "control-ob",
        PacketKind::ControlIb => "control-ib",
        PacketKind::ControlReverse => "control-reverse",
    }
}

/// Where `path` is written until it is complete.
fn part(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".part");
    PathBuf::from(p)
}

impl Observer for Tracer {
    fn on_enqueue(&mut self, now: Time, l: LinkId, p: &Packet, marked: bool, b: Backlog) {
        if marked {
            self.marked(now, l, p, b);
        } else {
            self.record(now, l, p, What::Enqueue(false), b);
        }
    }

    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, b: Backlog) {
        // The packet handed out is the one the queue marked: no copy to mark here.
        if tx.marked {
            self.record(now, l, p, What::Mark, b);
        }
        self.record(now, l, p, What::Dequeue(tx), b);
    }

    fn on_drop(&mut self, now: Time, l: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        self.record(now, l, p, What::Drop(why), b);
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match &mut self.sink {
            Sink::Pcap(c) => c.finish(),
            Sink::Csv(csv) => {
                csv.0.flush()?;
                std::fs::rename(part(&self.path), &self.path)
            }
        }
    }
}
