//! `kernel-tcp` flows: one connection of the kernel's own TCP between a flow's two host
//! namespaces, opened and fed by acclab, measured with `TCP_INFO`.
//!
//! Before the clock starts, the destination gets a listening socket on its [`Host::ip_addr`] at
//! the flow's port ([`crate::ipflows::flow_port`]) and the source a socket bound to the same port
//! with the flow's congestion control set (`TCP_CONGESTION`). At the flow's start a thread
//! connects and writes bulk data (or `size` bytes) until the flow stops or the run ends, then
//! closes its side; another accepts and reads, counting the bytes the application received —
//! the flow's goodput. Both threads wake at least every [`TICK`] to see the clock.
//!
//! The sender's statistics are read from the socket when the router's monitor asks for them (at
//! every sample): `tcpi_snd_cwnd × tcpi_snd_mss` is the window, `tcpi_rtt` the smoothed RTT,
//! `tcpi_min_rtt` the base RTT, `tcpi_bytes_sent` and `tcpi_data_segs_out` what was sent,
//! `tcpi_total_retrans` the retransmissions (also counted as detected losses), `tcpi_total_rto`
//! the retransmission timeouts (Linux 6.7 and later; an older kernel reports none). The kernel
//! keeps no sum of RTT samples, so the mean RTT over the window is the mean of the smoothed RTT
//! at the samples. Every reading is also kept whole enough for `tcp_info.csv` ([`InfoRow`]:
//! delivery and pacing rates, ssthresh, the congestion-avoidance state, CE deliveries, …).
//!
//! [`Host::ip_addr`]: crate::netns::Host::ip_addr

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration as StdDuration;

use acclab_core::transport::EndpointStats;
use acclab_core::{Duration, Time};
use socket2::{Domain, Protocol, Socket, Type};

use crate::clock::LiveClock;

/// Header bytes of a full-sized kernel TCP segment: IPv4 (20) + TCP (20) + the timestamp option
/// Linux sets by default (12). A 1500-byte packet carries 1448 bytes of goodput.
pub const HEADERS: u32 = 52;

/// Goodput (application bytes) of a kernel TCP flow as wire bytes, with `packet`-byte packets:
/// how it compares with acclab's throughput, which counts whole packets (SPEC §2).
pub fn wire_bytes(goodput: f64, packet: u32) -> f64 {
    goodput * f64::from(packet) / f64::from(packet.saturating_sub(HEADERS).max(1))
}

/// How often the flow's threads look at the clock while they wait on their socket.
pub const TICK: StdDuration = StdDuration::from_millis(20);

/// Bytes per write.
const CHUNK: usize = 64 * 1024;

/// Where the kernel lists the congestion controls it has loaded.
const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// The congestion controls the kernel has loaded (more may load on demand).
pub fn available() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE)
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Sets the congestion control of `s` (the kernel loads its module if it can). The error says
/// what the kernel offers.
pub fn set_cc(s: &Socket, cc: &str) -> Result<(), String> {
    s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
        format!(
            "the kernel refuses congestion control {cc:?} ({e}); it offers: {}",
            available().join(", ")
        )
    })
}

/// One reading of the sender's `TCP_INFO`, as `tcp_info.csv` keeps it (every sample): what
/// flows.csv has no column for. Rates in bit/s; `None` where the kernel reports none yet.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct InfoRow {
    pub time_s: f64,
    pub flow: String,
    /// `tcpi_delivery_rate` (the kernel's latest delivery-rate sample).
    pub delivery_rate_bps: u64,
    /// `tcpi_pacing_rate`; `None` when unpaced (the kernel's "unlimited").
    pub pacing_rate_bps: Option<u64>,
    pub cwnd_segments: u32,
    /// `tcpi_snd_ssthresh`; `None` while it is infinite (before the first reduction).
    pub ssthresh_segments: Option<u32>,
    pub srtt_s: f64,
    pub rttvar_s: f64,
    pub min_rtt_s: Option<f64>,
    /// `tcpi_ca_state`: open, disorder, cwr, recovery, loss.
    pub ca_state: &'static str,
    pub total_retrans: u32,
    pub total_rto: u16,
    /// Segments the kernel counts lost now, and delivered (CE-marked) so far.
    pub lost: u32,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_acked: u64,
    /// Time the sender had data in flight (`tcpi_busy_time`), and of it the time it was held
    /// back by the receiver's window (`tcpi_rwnd_limited`) or its own send buffer
    /// (`tcpi_sndbuf_limited`), all since the connection opened, s (Linux 4.10 and later;
    /// zero on older kernels).
    pub busy_s: f64,
    pub rwnd_limited_s: f64,
    pub sndbuf_limited_s: f64,
}

impl InfoRow {
    fn of(time_s: f64, flow: &str, i: &libc::tcp_info) -> InfoRow {
        let us = |x: u32| f64::from(x) / 1e6;
        InfoRow {
            time_s,
            flow: flow.to_string(),
            delivery_rate_bps: i.tcpi_delivery_rate.saturating_mul(8),
            pacing_rate_bps: (i.tcpi_pacing_rate != u64::MAX)
                .then(|| i.tcpi_pacing_rate.saturating_mul(8)),
            cwnd_segments: i.tcpi_snd_cwnd,
            // Linux's TCP_INFINITE_SSTHRESH.
            ssthresh_segments: (i.tcpi_snd_ssthresh < 0x7fff_ffff).then_some(i.tcpi_snd_ssthresh),
            srtt_s: us(i.tcpi_rtt),
            rttvar_s: us(i.tcpi_rttvar),
            min_rtt_s: (i.tcpi_min_rtt != u32::MAX && i.tcpi_min_rtt > 0)
                .then(|| us(i.tcpi_min_rtt)),
            ca_state: match i.tcpi_ca_state {
                0 => "open",
                1 => "disorder",
                2 => "cwr",
                3 => "recovery",
                4 => "loss",
                _ => "unknown",
            },
            total_retrans: i.tcpi_total_retrans,
            total_rto: i.tcpi_total_rto,
            lost: i.tcpi_lost,
            delivered: i.tcpi_delivered,
            delivered_ce: i.tcpi_delivered_ce,
            bytes_acked: i.tcpi_bytes_acked,
            busy_s: i.tcpi_busy_time as f64 / 1e6,
            rwnd_limited_s: i.tcpi_rwnd_limited as f64 / 1e6,
            sndbuf_limited_s: i.tcpi_sndbuf_limited as f64 / 1e6,
        }
    }
}

/// The two ends' measurements, read by the flow's stand-ins in the router.
#[derive(Debug, Default)]
pub struct Probe {
    /// The flow's id, for `tcp_info.csv`.
    flow: String,
    /// The run's clock, once the flow's threads start (for the readings' times).
    clock: OnceLock<LiveClock>,
    /// Every reading of `TCP_INFO` so far, one per sample time.
    readings: Mutex<Vec<InfoRow>>,
    /// The sender's socket, once connected (a duplicate descriptor, for `TCP_INFO`).
    sender: OnceLock<Socket>,
    /// Sum and count of the smoothed RTTs read so far.
    rtt: Mutex<(Duration, u64)>,
    /// Bytes the receiving application read.
    pub received: AtomicU64,
    /// When it had read them all (a finite flow), scenario ns + 1 (0: not yet).
    completed: AtomicU64,
}

impl Probe {
    /// The probe of flow `flow`.
    pub fn new(flow: &str) -> Probe {
        Probe {
            flow: flow.to_string(),
            ..Probe::default()
        }
    }

    /// The sender's statistics, from `TCP_INFO` now.
    pub fn sender_stats(&self) -> EndpointStats {
        let Some(info) = self.sender.get().and_then(|s| tcp_info(s).ok()) else {
            return EndpointStats::default();
        };
        let srtt = Duration(u64::from(info.tcpi_rtt) * 1_000);
        let (sum, n) = {
            let mut r = self.rtt.lock().unwrap_or_else(|e| e.into_inner());
            if info.tcpi_rtt > 0 {
                r.0 += srtt;
                r.1 += 1;
            }
            *r
        };
        if let Some(clock) = self.clock.get() {
            let t = clock.now().as_secs_f64();
            let mut r = self.readings.lock().unwrap_or_else(|e| e.into_inner());
            // The monitor asks more than once at some instants (a sample and a window's edge).
            if r.last().is_none_or(|last| last.time_s < t) {
                r.push(InfoRow::of(t, &self.flow, &info));
            }
        }
        let retrans = u64::from(info.tcpi_total_retrans);
        EndpointStats {
            sent_bytes: info.tcpi_bytes_sent,
            sent_packets: u64::from(info.tcpi_data_segs_out),
            retransmits: retrans,
            detected_losses: retrans,
            // Linux 6.7+; zero from an older kernel, which does not count them.
            timeouts: u64::from(info.tcpi_total_rto),
            cwnd_bytes: Some(u64::from(info.tcpi_snd_cwnd) * u64::from(info.tcpi_snd_mss)),
            srtt: (info.tcpi_rtt > 0).then_some(srtt),
            rtt_sum: sum,
            rtt_samples: n,
            base_rtt: (info.tcpi_min_rtt > 0 && info.tcpi_min_rtt != u32::MAX)
                .then(|| Duration(u64::from(info.tcpi_min_rtt) * 1_000)),
            completed_at: self.completed_at(),
            ..Default::default()
        }
    }

    /// Every reading of `TCP_INFO` taken so far.
    pub fn readings(&self) -> Vec<InfoRow> {
        self.readings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The receiver's statistics: the bytes its application read.
    pub fn receiver_stats(&self) -> EndpointStats {
        EndpointStats {
            delivered_bytes: self.received.load(Ordering::Relaxed),
            completed_at: self.completed_at(),
            ..Default::default()
        }
    }

    fn completed_at(&self) -> Option<Time> {
        match self.completed.load(Ordering::Relaxed) {
            0 => None,
            t => Some(Time(t - 1)),
        }
    }
}

/// `getsockopt(TCP_INFO)`.
fn tcp_info(s: &Socket) -> std::io::Result<libc::tcp_info> {
    use std::os::fd::AsRawFd;
    // SAFETY: tcp_info is plain old data; all zeroes is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a valid descriptor, and a buffer of `len` bytes that outlives the call; the
    // kernel writes at most `len` bytes and says how many in `len`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(info)
}

/// One kernel-tcp flow, set up and not yet started.
pub struct KernelFlow {
    pub listener: std::net::TcpListener,
    pub sender: Socket,
    pub dst: SocketAddrV4,
    pub start: Time,
    pub stop: Option<Time>,
    pub end: Time,
    pub size: Option<u64>,
    pub probe: Arc<Probe>,
}

/// The sockets of a kernel-tcp flow: call [`listen`] in the destination's namespace and
/// [`sender_socket`] in the source's.
pub fn listen(addr: Ipv4Addr, port: u16) -> std::io::Result<std::net::TcpListener> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(addr, port)).into())?;
    s.listen(1)?;
    s.set_nonblocking(true)?;
    Ok(s.into())
}

/// See [`listen`]; `cc`'s refusal is an `InvalidInput` error with the kernel's offer.
pub fn sender_socket(addr: Ipv4Addr, port: u16, cc: &str) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    set_cc(&s, cc).map_err(|m| std::io::Error::new(std::io::ErrorKind::InvalidInput, m))?;
    s.set_reuse_address(true)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(addr, port)).into())?;
    Ok(s)
}

impl KernelFlow {
    /// Starts the flow's two threads on `clock`; join them after the run.
    pub fn spawn(self, clock: LiveClock) -> Vec<std::thread::JoinHandle<()>> {
        let _ = self.probe.clock.set(clock);
        let KernelFlow {
            listener,
            sender,
            dst,
            start,
            stop,
            end,
            size,
            probe,
        } = self;
        let rx_probe = probe.clone();
        let receiver = std::thread::spawn(move || {
            crate::priority::raise(crate::priority::ENDPOINTS);
            receive(listener, end, size, &rx_probe, clock)
        });
        let sender = std::thread::spawn(move || {
            crate::priority::raise(crate::priority::ENDPOINTS);
            let until = stop.unwrap_or(end).min(end);
            send(sender, dst, start, until, size, &probe, clock)
        });
        vec![receiver, sender]
    }
}

/// Accepts the flow's connection and reads until the sender closes or the run ends.
fn receive(
    listener: std::net::TcpListener,
    end: Time,
    size: Option<u64>,
    probe: &Probe,
    clock: LiveClock,
) {
    let mut stream = loop {
        if clock.now() >= end {
            return;
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(_) => std::thread::sleep(TICK.min(StdDuration::from_millis(2))),
        }
    };
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(TICK));
    let mut buf = vec![0u8; CHUNK];
    use std::io::Read;
    while clock.now() < end {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let total = probe.received.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                if size.is_some_and(|s| total >= s) {
                    probe.completed.store(clock.now().0 + 1, Ordering::Relaxed);
                }
            }
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
    }
}

/// Connects at `start` and writes until `until` (or `size` bytes), then closes its side.
fn send(
    s: Socket,
    dst: SocketAddrV4,
    start: Time,
    until: Time,
    size: Option<u64>,
    probe: &Probe,
    clock: LiveClock,
) {
    std::thread::sleep(
        clock
            .instant_of(start)
            .saturating_duration_since(std::time::Instant::now()),
    );
    if clock.now() >= until {
        return;
    }
    // A SYN lost in the emulated network is retried by the kernel (1 s, 3 s, …): wait as long
    // as the flow lasts.
    let wait = clock
        .instant_of(until)
        .saturating_duration_since(std::time::Instant::now());
    if s.connect_timeout(&SocketAddr::V4(dst).into(), wait.max(TICK))
        .is_err()
    {
        return;
    }
    if let Ok(dup) = s.try_clone() {
        let _ = probe.sender.set(dup);
    }
    let _ = s.set_write_timeout(Some(TICK));
    let chunk = vec![0x5a_u8; CHUNK];
    let mut sent = 0u64;
    use std::io::Write;
    let mut w = &s;
    while clock.now() < until {
        let n = match size {
            Some(total) if sent >= total => break,
            Some(total) => CHUNK.min((total - sent) as usize),
            None => CHUNK,
        };
        match w.write(&chunk[..n]) {
            Ok(k) => sent += k as u64,
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}
