//! The router emulator: a scenario's links, queues and routes, forwarding real datagrams.
//!
//! The emulated network *is* the simulator's: the router owns an [`acclab_sim::Simulator`] whose
//! endpoints are [`Remote`] stand-ins. A datagram from an endpoint is decoded, checked and
//! injected into its flow's route at the wall clock's scenario time; the simulator's links then
//! serialise it at their configured rate (a token bucket one packet deep), hold it for their
//! propagation delay, and queue it in the core queue discipline the scenario names (DropTail,
//! two-priority FIFO, RED, REM, AVQ/AVD, …). When it reaches the end of its route, the stand-in
//! hands it back here and it leaves as a datagram to the real endpoint. Events are processed at
//! their own scenario times even when the router wakes late, so the emulated rates do not drift
//! with timer granularity; lateness only delays the datagrams it concerns (measured as lag).
//!
//! Link statistics, samples and `links.csv` therefore come from the very code that produces them
//! in simulation. Flow statistics come from the real endpoints, which publish their `stats()`
//! into the stand-ins.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use acclab_core::transport::{Endpoint, EndpointSlot, EndpointStats};
use acclab_core::{Packet, Time};
use acclab_sim::Simulator;
use std::net::UdpSocket;

use crate::auth::{Key, Opener, Rejection, Sealer};
use crate::clock::LiveClock;
use crate::liveness::{Limits, Liveness};
use crate::wire::{self, Datagram};

/// The longest the router waits without looking at the clock (for progress reports).
const MAX_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// A packet handed out this much after the network delivered it counts as late.
pub const LATE: acclab_core::Duration = acclab_core::Duration::from_millis(1);

/// Why the router stopped before the scenario's end.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(
        "{endpoint} at {addr} sent nothing for {:.1} s (wall), heartbeats included: {}; the run is given up, no results written",
        *ms as f64 / 1e3,
        if *was_heard { "the endpoints have stopped or gone" } else { "were `acclab live endpoints` started with the same scenario, key file and --base?" }
    )]
    EndpointSilent {
        endpoint: String,
        addr: SocketAddr,
        ms: u64,
        was_heard: bool,
    },
}

/// A packet the network delivered to endpoint slot `.0` at scenario time `.2`.
pub type Delivery = (u32, Packet, Time);

/// Where a stand-in's statistics come from.
pub type StatsSource = Box<dyn Fn() -> EndpointStats + Send>;

/// The router's side of an endpoint that runs elsewhere: packets the network delivers to it go
/// out to a channel the router drains onto the socket (or a TUN device); its statistics are
/// whatever the real endpoint last published, or what a probe of a real stack reads.
pub struct Remote {
    index: u32,
    deliveries: mpsc::Sender<Delivery>,
    stats: StatsSource,
}

impl Remote {
    /// Endpoint `index` (2f sender, 2f + 1 receiver of flow f), whose statistics are the last
    /// that its driver published into `published`.
    pub fn new(
        index: u32,
        deliveries: mpsc::Sender<Delivery>,
        published: Arc<Mutex<EndpointStats>>,
    ) -> Remote {
        Remote::measured(
            index,
            deliveries,
            Box::new(move || published.lock().map(|s| *s).unwrap_or_default()),
        )
    }

    /// Endpoint `index`, whose statistics `stats` reads when asked.
    pub fn measured(index: u32, deliveries: mpsc::Sender<Delivery>, stats: StatsSource) -> Remote {
        Remote {
            index,
            deliveries,
            stats,
        }
    }
}

impl Endpoint for Remote {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let _ = self.deliveries.send((self.index, *pkt, now));
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn stats(&self) -> EndpointStats {
        (self.stats)()
    }
}

/// What the router did with the datagrams it saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RouterCounters {
    pub accepted: u64,
    pub delivered: u64,
    pub rejected_malformed: u64,
    pub rejected_foreign: u64,
    /// Datagrams whose tag did not verify under the run's key ([`crate::auth`]).
    pub rejected_forged: u64,
    /// Authentic datagrams seen before (or too old for the replay window).
    pub rejected_replayed: u64,
    /// Timer wake-ups, and the sum and maximum of how late they were (scenario ns).
    pub wakeups: u64,
    pub lag_sum_ns: u64,
    pub lag_max_ns: u64,
    /// How late the router handed packets out of the emulated network at most (the wall clock
    /// against the scenario time the network delivered them, ns), and how many it handed out
    /// over [`LATE`] late. Unlike the wake-ups' lag, this sees every stall, also those that
    /// hit the router while it read packets in.
    pub delivery_lag_max_ns: u64,
    pub deliveries_late: u64,
    /// The router's thread had real-time priority.
    pub realtime: bool,
    /// Datagrams the kernel dropped at the router's socket (its receive buffer full).
    pub socket_drops: u64,
}

/// A router for one scenario: its network and the address of every endpoint.
pub struct Router {
    sim: Simulator,
    /// `addrs[2f]` is flow f's sender, `addrs[2f + 1]` its receiver.
    addrs: Vec<SocketAddr>,
    by_addr: HashMap<SocketAddr, usize>,
    deliveries: mpsc::Receiver<Delivery>,
    sealer: Sealer,
    opener: Opener,
    /// Real stacks' packets, when the scenario has `kernel-tcp` or `command` flows.
    ip: Option<crate::ipflows::IpFlows>,
    /// For endpoints in another process: what the router has heard from each, and its
    /// heartbeats to them ([`crate::liveness`]).
    liveness: Option<Liveness>,
    pub counters: RouterCounters,
}

impl Router {
    /// `sim` must have been built with [`Remote`] endpoints that send into `deliveries`.
    /// Datagrams are sealed and opened under `key`.
    pub fn new(
        sim: Simulator,
        addrs: Vec<SocketAddr>,
        deliveries: mpsc::Receiver<Delivery>,
        key: Key,
    ) -> Router {
        let by_addr = addrs.iter().enumerate().map(|(i, a)| (*a, i)).collect();
        Router {
            sim,
            addrs,
            by_addr,
            deliveries,
            sealer: Sealer::new(key.clone()),
            opener: Opener::new(key),
            ip: None,
            liveness: None,
            counters: RouterCounters::default(),
        }
    }

    /// Sends the endpoints heartbeats and ends the run with [`RouterError::EndpointSilent`] when
    /// one falls silent (`acclab live router`, whose endpoints run in another process).
    pub fn watch_endpoints(&mut self, limits: Limits) {
        self.liveness = Some(Liveness::new(
            limits,
            self.addrs.len(),
            std::time::Instant::now(),
        ));
    }

    /// The emulated network, to set up real stacks' flows on ([`crate::ipflows::IpFlows::new`]).
    pub fn sim_mut(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    /// Carries real stacks' packets too, read from and written to TUN devices.
    pub fn carry_ip(&mut self, ip: crate::ipflows::IpFlows) {
        self.ip = Some(ip);
    }

    /// Forwards datagrams until the scenario's end; `progress` is told the scenario time about
    /// ten times a second of wall time. Returns the emulated network for the run's results.
    ///
    /// Runs on the calling thread, which it gives real-time priority where allowed
    /// ([`crate::priority`]). It never spins: between events it waits in `ppoll(2)`, whose
    /// high-resolution timeout wakes it within microseconds of the next event's wall-clock time
    /// (tokio's timers have a granularity of a millisecond, which is why the router used to poll
    /// busily near its events — a core it then had to fight for on a loaded machine).
    pub fn run(
        mut self,
        socket: UdpSocket,
        clock: LiveClock,
        progress: &mut dyn FnMut(Time),
    ) -> Result<
        (
            Simulator,
            RouterCounters,
            Option<crate::ipflows::IpCounters>,
        ),
        RouterError,
    > {
        socket.set_nonblocking(true)?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            crate::drops::enlarge_receive_buffer(
                socket.as_raw_fd(),
                crate::drops::ROUTER_RECEIVE_BUFFER,
            );
        }
        let priority = crate::priority::raise_for_now(crate::priority::ROUTER);
        self.counters.realtime = priority.raised();
        let _idle = crate::priority::shallow_idle();
        let mut rx = vec![0u8; wire::MAX_DATAGRAM + 1];
        // What the router waits on: its socket, and the hosts' TUN devices if it carries IP.
        let fds: Vec<std::os::fd::RawFd> = {
            use std::os::fd::AsRawFd;
            std::iter::once(socket.as_raw_fd())
                .chain(self.ip.iter().flat_map(|ip| ip.fds()))
                .collect()
        };
        let mut tx = Vec::with_capacity(2048);
        let end = self.sim.end();
        let mut next_progress = std::time::Instant::now();
        while self.sim.now() < end {
            // Everything that has arrived, at the time it is read.
            loop {
                match socket.recv_from(&mut rx) {
                    Ok((n, from)) => {
                        self.sim.advance(clock.now());
                        self.accept(from, &rx[..n]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // An ICMP error from an endpoint that has gone (connection refused) says
                    // nothing about this datagram stream; read on.
                    Err(_) => {}
                }
            }
            if let Some(ip) = &mut self.ip {
                ip.read_all(&mut self.sim, &clock);
            }
            self.keep_alive(&socket, &mut tx)?;
            let next = self.sim.next_event_time().unwrap_or(end).min(end);
            let mut deadline = clock.instant_of(next);
            if let Some(l) = &self.liveness {
                deadline = deadline.min(l.next_beat());
            }
            let now = std::time::Instant::now();
            if now >= clock.instant_of(next) {
                let t = clock.now();
                let lag = t.0.saturating_sub(next.0);
                self.counters.wakeups += 1;
                self.counters.lag_sum_ns += lag;
                self.counters.lag_max_ns = self.counters.lag_max_ns.max(lag);
                self.sim.advance(t);
            } else {
                wait(&fds, POLL_IN, (deadline - now).min(MAX_WAIT))?;
            }
            self.send_deliveries(&socket, &mut tx, &clock)?;
            if std::time::Instant::now() >= next_progress {
                progress(self.sim.now());
                next_progress += std::time::Duration::from_millis(100);
            }
        }
        self.sim.advance(end);
        self.send_deliveries(&socket, &mut tx, &clock)?;
        if self.liveness.is_some() {
            self.beat(&socket, &mut tx, true);
        }
        {
            use std::os::fd::AsRawFd;
            self.counters.socket_drops = crate::drops::dropped(socket.as_raw_fd()).unwrap_or(0);
        }
        Ok((self.sim, self.counters, self.ip.map(|ip| ip.counters)))
    }

    /// With endpoints elsewhere: sends them a heartbeat when one is due, and ends the run when
    /// one has fallen silent.
    fn keep_alive(&mut self, socket: &UdpSocket, buf: &mut Vec<u8>) -> Result<(), RouterError> {
        let Some(l) = &mut self.liveness else {
            return Ok(());
        };
        let now = std::time::Instant::now();
        // Looked at once a heartbeat interval, with the heartbeat: a scan of every endpoint at
        // each of the router's wakeups would cost O(endpoints) per event.
        if !l.beat_due(now) {
            return Ok(());
        }
        if let Some(s) = l.silent(now) {
            let slot = EndpointSlot::at(s.peer);
            let flow = &self.sim.scenario().flows.get(slot.flow().0 as usize).id;
            let side = match slot.side() {
                acclab_core::transport::Side::Sender => "sender",
                acclab_core::transport::Side::Receiver => "receiver",
            };
            return Err(RouterError::EndpointSilent {
                endpoint: format!("flow {flow:?}'s {side}"),
                addr: self.addrs[s.peer],
                ms: s.for_.as_millis() as u64,
                was_heard: s.was_heard,
            });
        }
        self.beat(socket, buf, false);
        Ok(())
    }

    /// Sends every endpoint a heartbeat (`finished`: the last, as the run ends here).
    fn beat(&mut self, socket: &UdpSocket, buf: &mut Vec<u8>, finished: bool) {
        let h = wire::Heartbeat {
            from: wire::ROUTER,
            finished,
        };
        self.sealer.seal_heartbeat(h, buf);
        for to in &self.addrs {
            // A heartbeat lost to a full buffer is made up by the next.
            let _ = socket.send_to(buf, to);
        }
    }

    /// Checks one datagram and, if it is an authentic packet of a flow of this scenario sent by
    /// that flow's endpoint for its direction, puts it on the flow's route; an authentic
    /// heartbeat from an endpoint's own address says that the endpoint is there.
    fn accept(&mut self, from: SocketAddr, d: &[u8]) {
        let slot = self.by_addr.get(&from).copied();
        let bound = |g: &Datagram| match g {
            Datagram::Packet(p) => slot == Some(EndpointSlot::source(p).index()),
            Datagram::Heartbeat(h) => slot == Some(h.from as usize),
        };
        let pkt = match self.opener.open_datagram(from, d, bound) {
            Ok(g) => {
                if let (Some(l), Some(slot)) = (&mut self.liveness, slot) {
                    l.heard(slot, std::time::Instant::now());
                }
                match g {
                    Datagram::Packet(p) => p,
                    Datagram::Heartbeat(h) => {
                        if let (true, Some(l), Some(slot)) = (h.finished, &mut self.liveness, slot)
                        {
                            l.finished(slot);
                        }
                        return;
                    }
                }
            }
            Err(Rejection::Foreign) => {
                self.counters.rejected_foreign += 1;
                return;
            }
            Err(Rejection::Malformed(_)) => {
                self.counters.rejected_malformed += 1;
                return;
            }
            Err(Rejection::Forged) => {
                self.counters.rejected_forged += 1;
                return;
            }
            Err(Rejection::Replayed) => {
                self.counters.rejected_replayed += 1;
                return;
            }
        };
        self.counters.accepted += 1;
        self.sim.inject_external(pkt);
    }

    fn send_deliveries(
        &mut self,
        socket: &UdpSocket,
        buf: &mut Vec<u8>,
        clock: &LiveClock,
    ) -> std::io::Result<()> {
        while let Ok((e, pkt, at)) = self.deliveries.try_recv() {
            let late = clock.now().0.saturating_sub(at.0);
            self.counters.delivery_lag_max_ns = self.counters.delivery_lag_max_ns.max(late);
            self.counters.deliveries_late += u64::from(late > LATE.0);
            if let Some(ip) = self.ip.as_mut().filter(|ip| ip.carries(pkt.flow)) {
                ip.deliver(e, &pkt);
                continue;
            }
            self.sealer.seal(&pkt, buf);
            let to = self.addrs[e as usize];
            loop {
                match socket.send_to(buf, to) {
                    Ok(_) => {
                        self.counters.delivered += 1;
                        break;
                    }
                    // The socket's send buffer is full: wait until it drains.
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        use std::os::fd::AsRawFd;
                        wait(
                            &[socket.as_raw_fd()],
                            POLL_OUT,
                            std::time::Duration::from_millis(10),
                        )?;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // The endpoint is not (or no longer) there: the datagram is lost, as on a
                    // real network.
                    Err(_) => break,
                }
            }
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
const POLL_IN: i16 = libc::POLLIN;
#[cfg(target_os = "linux")]
const POLL_OUT: i16 = libc::POLLOUT;
#[cfg(not(target_os = "linux"))]
const POLL_IN: i16 = 1;
#[cfg(not(target_os = "linux"))]
const POLL_OUT: i16 = 4;

/// Waits until one of `fds` has one of `events` or `timeout` has passed, with a nanosecond
/// timeout (`ppoll(2)`; the kernel's high-resolution timers).
#[cfg(target_os = "linux")]
fn wait(
    fds: &[std::os::fd::RawFd],
    events: i16,
    timeout: std::time::Duration,
) -> std::io::Result<()> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `polled.len()` valid pollfds and a valid timespec, both living across the call; no
    // signal mask.
    let r = unsafe {
        libc::ppoll(
            polled.as_mut_ptr(),
            polled.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Elsewhere: a short sleep (coarser, as the platform's timers are).
#[cfg(not(target_os = "linux"))]
fn wait(_fds: &[i32], _events: i16, timeout: std::time::Duration) -> std::io::Result<()> {
    std::thread::sleep(timeout.min(std::time::Duration::from_micros(200)));
    Ok(())
}
