//! The router's side of real stacks (`kernel-tcp` and `command` flows): IP packets read from the
//! hosts' TUN devices ([`crate::tun`]), carried over their flow's route in the emulated network,
//! and written to the destination host's device.
//!
//! A packet is told to be a flow's by its addresses — the flow's two hosts — and, for a
//! `kernel-tcp` flow, whose connection acclab opens itself, by its port (flow f's connection runs
//! between port [`flow_port`]`(f)` on both hosts). From the flow's source host it takes the
//! flow's forward route, from its destination host the reverse route, whatever it carries (a
//! `command` flow's programs may send data either way). A packet between two hosts that no flow
//! joins, or not IPv4, is dropped and counted.
//!
//! In the emulated network the packet is a core [`Packet`] of the same size (IP header
//! included, link-layer framing not) and ECN codepoint, whose `seq` names its bytes in the
//! router's store. A queue that marks it sets CE in the real header on the way out
//! ([`crate::ip::mark_ce`]); a packet the network drops is removed from the store (a drop
//! observer tells the router). Nothing else of the bytes is touched.
//!
//! A packet trace of the run (`[output] trace`, pcap) records these packets' own headers — IP
//! and TCP/UDP as the hosts' kernels wrote them, CE where a queue marked — rather than
//! synthesised ones ([`IpFlows::capture`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acclab_core::packet::PacketKind;
use acclab_core::queue::{Backlog, DropReason};
use acclab_core::transport::{EndpointSlot, EndpointStats, Side};
use acclab_core::{FlowId, Packet, Time};
use acclab_scenario::LinkId;
use acclab_sim::observe::Observer;
use acclab_sim::trace::PacketBytes;
use acclab_sim::Simulator;

use crate::clock::LiveClock;
use crate::ip::{self, Header};

/// The first port of the per-flow ports (flow f: `FIRST_PORT + f`).
pub const FIRST_PORT: u16 = 20_000;

/// The TCP (or UDP) port of flow `f`'s own connection on both of its hosts; `None` past the
/// last port.
pub fn flow_port(f: usize) -> Option<u16> {
    u16::try_from(FIRST_PORT as usize + f).ok()
}

/// What the router counted of one real flow's packets (shared with its stand-ins' statistics).
#[derive(Debug, Default)]
pub struct FlowMeter {
    /// Forward packets (from the source host) and their IP bytes, taken into the network.
    pub forward_packets: AtomicU64,
    pub forward_bytes: AtomicU64,
    /// Transport payload bytes of forward packets delivered to the destination host
    /// (retransmissions included: the router cannot tell them apart).
    pub forward_payload_delivered: AtomicU64,
    /// Reverse packets (from the destination host) taken in.
    pub reverse_packets: AtomicU64,
}

/// One real flow: its hosts' devices, its port if acclab opened its connection, its meter.
struct IpFlow {
    src: usize,
    dst: usize,
    port: Option<u16>,
    meter: Arc<FlowMeter>,
}

/// What the router did with real stacks' packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct IpCounters {
    /// Packets taken into the emulated network, and delivered out of it.
    pub accepted: u64,
    pub delivered: u64,
    /// Not IPv4, or truncated.
    pub rejected_malformed: u64,
    /// IPv4 between hosts that no flow of the scenario joins.
    pub rejected_foreign: u64,
    /// Packets the destination's device would not take (its kernel's backlog full).
    pub write_failures: u64,
}

/// The bytes of every real packet in the emulated network, by its `seq` (shared with a trace).
type Store = Arc<Mutex<slab::Slab<Vec<u8>>>>;

/// Locks the store (a panic elsewhere leaves its bytes usable).
fn lock(store: &Store) -> std::sync::MutexGuard<'_, slab::Slab<Vec<u8>>> {
    store.lock().unwrap_or_else(|e| e.into_inner())
}

/// The router's real-stack side: the devices, the flows, the packets in flight.
pub struct IpFlows {
    tuns: Vec<File>,
    host_of: HashMap<Ipv4Addr, usize>,
    /// By flow index; `None` for flows of acclab's own endpoints.
    flows: Vec<Option<IpFlow>>,
    /// The flows between two hosts (the lower device index first).
    by_pair: HashMap<(usize, usize), Vec<usize>>,
    store: Store,
    dropped: Arc<Mutex<Vec<u64>>>,
    buf: Vec<u8>,
    pub counters: IpCounters,
}

/// One real flow as [`IpFlows::new`] takes it.
pub struct IpFlowSpec {
    pub flow: usize,
    /// Device indexes (into the `tuns` given) of the source and destination hosts.
    pub src: usize,
    pub dst: usize,
    pub port: Option<u16>,
    pub meter: Arc<FlowMeter>,
}

impl IpFlows {
    /// `tuns[i]` is the device of the host with address `addrs[i]`; `flow_count` the
    /// scenario's number of flows. Registers the drop observer on `sim`.
    pub fn new(
        sim: &mut Simulator,
        tuns: Vec<File>,
        addrs: &[Ipv4Addr],
        flow_count: usize,
        specs: Vec<IpFlowSpec>,
    ) -> IpFlows {
        let mut flows: Vec<Option<IpFlow>> = (0..flow_count).map(|_| None).collect();
        let mut by_pair: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for s in specs {
            by_pair
                .entry((s.src.min(s.dst), s.src.max(s.dst)))
                .or_default()
                .push(s.flow);
            flows[s.flow] = Some(IpFlow {
                src: s.src,
                dst: s.dst,
                port: s.port,
                meter: s.meter,
            });
        }
        let dropped = Arc::new(Mutex::new(Vec::new()));
        sim.observe(Box::new(DropWatch {
            real: flows.iter().map(Option::is_some).collect(),
            dropped: dropped.clone(),
        }));
        IpFlows {
            tuns,
            host_of: addrs.iter().enumerate().map(|(i, a)| (*a, i)).collect(),
            flows,
            by_pair,
            store: Store::default(),
            dropped,
            buf: vec![0; 65_536],
            counters: IpCounters::default(),
        }
    }

    /// The devices' descriptors, to wait on.
    pub fn fds(&self) -> impl Iterator<Item = std::os::fd::RawFd> + '_ {
        use std::os::fd::AsRawFd;
        self.tuns.iter().map(|t| t.as_raw_fd())
    }

    /// Whether flow `f` is a real stack's.
    pub fn carries(&self, f: FlowId) -> bool {
        self.flows.get(f.0 as usize).is_some_and(Option::is_some)
    }

    /// Reads every packet waiting on every device into the network, each at the time it is read.
    pub fn read_all(&mut self, sim: &mut Simulator, clock: &LiveClock) {
        for d in 0..self.tuns.len() {
            loop {
                let n = match self.tuns[d].read(&mut self.buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                sim.advance(clock.now());
                self.accept(sim, d, n);
            }
        }
        self.forget_dropped();
    }

    /// One packet of `n` bytes in `self.buf`, read from device `from`.
    fn accept(&mut self, sim: &mut Simulator, from: usize, n: usize) {
        let Ok(h) = Header::parse(&self.buf[..n]) else {
            self.counters.rejected_malformed += 1;
            return;
        };
        let Some((flow, forward)) = self.classify(from, &h) else {
            self.counters.rejected_foreign += 1;
            return;
        };
        let f = self.flows[flow]
            .as_ref()
            .expect("classified flows are real");
        if forward {
            f.meter.forward_packets.fetch_add(1, Ordering::Relaxed);
            f.meter
                .forward_bytes
                .fetch_add(u64::from(h.len), Ordering::Relaxed);
        } else {
            f.meter.reverse_packets.fetch_add(1, Ordering::Relaxed);
        }
        let kind = if forward {
            PacketKind::Data
        } else {
            PacketKind::Ack
        };
        let mut pkt = Packet::new(FlowId(flow as u32), kind, u32::from(h.len));
        pkt.ecn = h.core_ecn();
        pkt.seq = lock(&self.store).insert(self.buf[..h.len as usize].to_vec()) as u64;
        pkt.sent_at = sim.now();
        self.counters.accepted += 1;
        sim.inject_external(pkt);
    }

    /// The flow a packet read from device `from` belongs to, and whether it travels forward.
    fn classify(&self, from: usize, h: &Header) -> Option<(usize, bool)> {
        if self.host_of.get(&h.src) != Some(&from) {
            return None;
        }
        let to = *self.host_of.get(&h.dst)?;
        let flows = self.by_pair.get(&(from.min(to), from.max(to)))?;
        let port_match = |f: &IpFlow| {
            f.port
                .is_some_and(|p| h.ports.is_some_and(|(s, d)| s == p || d == p))
        };
        // A flow whose own port the packet carries; else the pair's flow without a port (a
        // command flow); else the pair's first flow (ICMP of a kernel connection, say).
        let flow = flows
            .iter()
            .copied()
            .find(|&f| self.flows[f].as_ref().is_some_and(port_match))
            .or_else(|| {
                flows
                    .iter()
                    .copied()
                    .find(|&f| self.flows[f].as_ref().is_some_and(|f| f.port.is_none()))
            })
            .unwrap_or(flows[0]);
        let forward = self.flows[flow].as_ref()?.src == from;
        Some((flow, forward))
    }

    /// Writes a packet the network delivered to endpoint slot `endpoint` (2f: flow f's source
    /// host, 2f + 1: its destination) to that host's device, with CE set if a queue marked it.
    pub fn deliver(&mut self, endpoint: u32, pkt: &Packet) {
        self.forget_dropped();
        let Some(mut bytes) = lock(&self.store).try_remove(pkt.seq as usize) else {
            return;
        };
        let Some(f) = self.flows[pkt.flow.0 as usize].as_ref() else {
            return;
        };
        let to_source = EndpointSlot::at(endpoint as usize).side() == Side::Sender;
        let device = if to_source { f.src } else { f.dst };
        if pkt.ecn.is_marked() {
            ip::mark_ce(&mut bytes);
        }
        if !to_source {
            if let Ok(h) = Header::parse(&bytes) {
                f.meter
                    .forward_payload_delivered
                    .fetch_add(u64::from(h.payload_len.unwrap_or(0)), Ordering::Relaxed);
            }
        }
        loop {
            match self.tuns[device].write(&bytes) {
                Ok(_) => {
                    self.counters.delivered += 1;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The receiving kernel's backlog is full: lost outside the emulated network,
                // and counted.
                Err(_) => {
                    self.counters.write_failures += 1;
                    break;
                }
            }
        }
    }

    /// Frees the bytes of packets the network dropped.
    fn forget_dropped(&mut self) {
        let dropped = std::mem::take(&mut *self.dropped.lock().unwrap_or_else(|e| e.into_inner()));
        if dropped.is_empty() {
            return;
        }
        let mut store = lock(&self.store);
        for seq in dropped {
            store.try_remove(seq as usize);
        }
    }

    /// Packets whose bytes the router holds (in the network's queues and pipes).
    pub fn in_flight(&self) -> usize {
        lock(&self.store).len()
    }

    /// The real packets' headers, for a packet trace of the run.
    pub fn capture(&self) -> Box<dyn PacketBytes> {
        Box::new(Capture {
            real: self.flows.iter().map(Option::is_some).collect(),
            store: self.store.clone(),
        })
    }
}

/// How many bytes of a real packet a trace keeps at most: its IP and transport headers (60 +
/// 60 at their longest) and no payload; ICMP and other protocols up to this length.
const SNAP_LEN: usize = 128;

/// A trace's view of the real packets' bytes.
struct Capture {
    real: Vec<bool>,
    store: Store,
}

impl PacketBytes for Capture {
    fn capture(&mut self, p: &Packet, buf: &mut Vec<u8>) -> Option<u32> {
        if self.real.get(p.flow.0 as usize) != Some(&true) {
            return None;
        }
        let store = lock(&self.store);
        let bytes = store.get(p.seq as usize)?;
        let headers = Header::parse(bytes)
            .ok()
            .and_then(|h| h.payload_len.map(|n| usize::from(h.len - n)));
        let keep = headers
            .unwrap_or(bytes.len())
            .min(SNAP_LEN)
            .min(bytes.len());
        buf.clear();
        buf.extend_from_slice(&bytes[..keep]);
        // As the packet leaves a queue that marked it (the store's copy is marked on delivery).
        if p.ecn.is_marked() {
            ip::mark_ce(buf);
        }
        Some(bytes.len() as u32)
    }
}

/// Tells the router which real packets the network dropped.
struct DropWatch {
    real: Vec<bool>,
    dropped: Arc<Mutex<Vec<u64>>>,
}

impl Observer for DropWatch {
    fn on_drop(&mut self, _: Time, _: LinkId, p: &Packet, _: DropReason, _: Backlog) {
        if self.real.get(p.flow.0 as usize) == Some(&true) {
            if let Ok(mut d) = self.dropped.lock() {
                d.push(p.seq);
            }
        }
    }
}

/// A `command` flow's statistics, from the router's counts: the source's are the forward
/// packets and bytes it sent into the network, the destination's the payload bytes delivered.
pub fn metered_stats(meter: &FlowMeter, sender: bool) -> EndpointStats {
    if sender {
        EndpointStats {
            sent_packets: meter.forward_packets.load(Ordering::Relaxed),
            sent_bytes: meter.forward_bytes.load(Ordering::Relaxed),
            ..Default::default()
        }
    } else {
        EndpointStats {
            delivered_bytes: meter.forward_payload_delivered.load(Ordering::Relaxed),
            ..Default::default()
        }
    }
}
