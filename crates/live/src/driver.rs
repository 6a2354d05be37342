//! The endpoint driver: one core [`Endpoint`] (a sender or a receiver) on one UDP socket.
//!
//! It is the simulator's endpoint loop with the wall clock in place of the event queue:
//! receive → `handle_packet(now)`; sleep until `poll_timeout()` → `handle_timeout`; drain
//! `poll_transmit` onto the socket. It holds no protocol logic.
//!
//! Timers on a real machine fire late (tokio's timer has millisecond granularity, the scheduler
//! adds its own delay). The driver therefore hands the endpoint every deadline that has passed
//! *at the deadline's own time*, in order, before anything that happens at `now` — so a pacer
//! that is woken 1 ms late still sends at its configured rate, in a small burst, rather than
//! silently slowing down. Times given to the endpoint never go backwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acclab_core::transport::{Endpoint, EndpointStats};
use acclab_core::{FlowId, Packet, Time};
use tokio::net::UdpSocket;

use crate::auth::{Key, Opener, Rejection, Sealer};
use crate::clock::LiveClock;
use crate::liveness::{Limits, Liveness, Silent};
use crate::wire::{self, Datagram};

/// Counters one run's endpoints share with its summary.
#[derive(Debug, Default)]
pub struct EndpointCounters {
    /// Datagrams endpoints dropped: malformed, or not a packet of their flow and direction.
    pub rejected: AtomicU64,
    /// Datagrams endpoints accepted.
    pub received: AtomicU64,
    /// Datagrams that were forged or replayed ([`crate::auth`]); also counted in `rejected`.
    pub unauthentic: AtomicU64,
    /// Datagrams the kernel dropped at the endpoints' sockets (receive buffers full).
    pub socket_drops: AtomicU64,
}

/// What one endpoint driver needs.
pub struct EndpointTask {
    pub endpoint: Box<dyn Endpoint>,
    pub flow: FlowId,
    /// Senders take forward packets' replies (ACKs, reverse control); receivers forward packets.
    pub is_sender: bool,
    /// Sender only: when the application starts and stops.
    pub start: Option<Time>,
    pub stop: Option<Time>,
    /// When the run ends.
    pub end: Time,
    /// The latest `stats()`, published after every step for the router's monitor.
    pub stats: Arc<Mutex<EndpointStats>>,
    pub counters: Arc<EndpointCounters>,
    /// The run's key.
    pub key: Key,
    /// This endpoint's slot (2f sender, 2f + 1 receiver of flow f): it names the heartbeats.
    pub slot: u32,
    /// For endpoints in a process of their own (`acclab live endpoints`), whose router may be
    /// gone: send it heartbeats, and give up when it falls silent ([`crate::liveness`]).
    pub watch_router: Option<Limits>,
}

/// What is due next for an endpoint.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Start,
    Stop,
    Timeout,
}

/// A safety valve: deadlines handled in one catch-up before the driver yields to the socket.
const MAX_CATCH_UP: usize = 100_000;

/// How long (wall time) an endpoint waits for a router that was never heard from when the
/// socket reports that nothing listens at the router's address (ICMP port unreachable): it has
/// not started, or it has gone. (A silent router is otherwise found by its heartbeats.)
pub const SILENCE_REFUSED: std::time::Duration = std::time::Duration::from_secs(2);

/// The router fell silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouterSilent {
    pub flow: FlowId,
    /// Datagrams the socket refused to send or receive because nothing listened at the router's
    /// address (ICMP port unreachable), since the router was last heard.
    pub refused: u64,
    /// How long it was silent, and whether it had been heard at all.
    pub silent_for: std::time::Duration,
    pub was_heard: bool,
}

impl EndpointTask {
    /// Drives the endpoint on `socket` (connected to the router) until the run's end, or, when
    /// it watches the router, until the router has fallen silent.
    pub async fn run(
        mut self,
        socket: UdpSocket,
        clock: LiveClock,
    ) -> Result<Box<dyn Endpoint>, RouterSilent> {
        let mut rx = vec![0u8; wire::MAX_DATAGRAM + 1];
        let mut tx = Vec::with_capacity(2048);
        let mut out = Vec::new();
        let mut sealer = Sealer::new(self.key.clone());
        let mut opener = Opener::new(self.key.clone());
        // The socket is connected to the router: every datagram comes from there.
        let router = socket
            .peer_addr()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
        let mut last = Time::ZERO;
        let started = std::time::Instant::now();
        let mut liveness = self
            .watch_router
            .map(|limits| Liveness::new(limits, 1, started));
        let mut refused = 0u64;
        loop {
            let now = clock.now();
            if now >= self.end {
                break;
            }
            if let Some(l) = &mut liveness {
                let wall = std::time::Instant::now();
                let refusing = refused > 0 && !l.heard_from(0);
                let never = (refusing && wall - started > SILENCE_REFUSED).then_some(Silent {
                    peer: 0,
                    was_heard: false,
                    for_: wall - started,
                });
                if let Some(s) = l.silent(wall).or(never) {
                    self.publish();
                    return Err(RouterSilent {
                        flow: self.flow,
                        refused,
                        silent_for: s.for_,
                        was_heard: s.was_heard,
                    });
                }
                if l.beat_due(wall) {
                    refused += beat(&socket, &mut sealer, &mut tx, self.slot, false).await;
                }
            }
            self.catch_up(now, &mut last, &mut out);
            send_all(&socket, &mut sealer, &mut out, &mut tx).await;
            self.publish();
            let next = self.next_due().map_or(self.end, |(t, _)| t).min(self.end);
            let mut wake = clock.instant_of(next);
            if let Some(l) = &liveness {
                wake = wake.min(l.next_beat());
            }
            tokio::select! {
                r = socket.recv(&mut rx) => {
                    let n = match r {
                        Ok(n) => n,
                        Err(e) => {
                            if e.kind() == std::io::ErrorKind::ConnectionRefused {
                                refused += 1;
                            }
                            continue;
                        }
                    };
                    let now = clock.now().max(last);
                    self.catch_up(now, &mut last, &mut out);
                    let (flow, is_sender) = (self.flow, self.is_sender);
                    let opened = opener.open_datagram(router, &rx[..n], |g| match g {
                        Datagram::Packet(p) => p.flow == flow && p.kind.is_forward() != is_sender,
                        Datagram::Heartbeat(h) => h.from == wire::ROUTER,
                    });
                    if let (Ok(g), Some(l)) = (&opened, &mut liveness) {
                        l.heard(0, std::time::Instant::now());
                        // Refusals count since the router was last heard.
                        refused = 0;
                        if matches!(g, Datagram::Heartbeat(h) if h.finished) {
                            l.finished(0);
                        }
                    }
                    let packet = match opened {
                        Ok(Datagram::Heartbeat(_)) => continue,
                        Ok(Datagram::Packet(p)) => Ok(p),
                        Err(e) => Err(e),
                    };
                    self.receive(now, packet, &mut out);
                    last = now;
                }
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
            send_all(&socket, &mut sealer, &mut out, &mut tx).await;
        }
        if liveness.is_some() {
            beat(&socket, &mut sealer, &mut tx, self.slot, true).await;
        }
        self.publish();
        {
            use std::os::fd::AsRawFd;
            let d = crate::drops::dropped(socket.as_raw_fd()).unwrap_or(0);
            self.counters.socket_drops.fetch_add(d, Ordering::Relaxed);
        }
        Ok(self.endpoint)
    }

    /// The earliest pending start, stop or timeout.
    fn next_due(&self) -> Option<(Time, Due)> {
        [
            self.start.map(|t| (t, Due::Start)),
            self.stop
                .filter(|_| self.start.is_none())
                .map(|t| (t, Due::Stop)),
            self.endpoint.poll_timeout().map(|t| (t, Due::Timeout)),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Hands the endpoint every start, stop and timeout due by `now`, each at its own time.
    fn catch_up(&mut self, now: Time, last: &mut Time, out: &mut Vec<Packet>) {
        for _ in 0..MAX_CATCH_UP {
            let Some((t, due)) = self.next_due().filter(|&(t, _)| t <= now) else {
                return;
            };
            let t = t.max(*last);
            *last = t;
            match due {
                Due::Start => {
                    self.start = None;
                    self.endpoint.handle_start(t);
                }
                Due::Stop => {
                    self.stop = None;
                    self.endpoint.handle_stop(t);
                }
                Due::Timeout => self.endpoint.handle_timeout(t),
            }
            self.drain(t, out);
        }
    }

    fn receive(&mut self, now: Time, packet: Result<Packet, Rejection>, out: &mut Vec<Packet>) {
        if matches!(packet, Err(Rejection::Forged | Rejection::Replayed)) {
            self.counters.unauthentic.fetch_add(1, Ordering::Relaxed);
        }
        match packet {
            // The opener took only this endpoint's flow and direction.
            Ok(p) => {
                self.counters.received.fetch_add(1, Ordering::Relaxed);
                self.endpoint.handle_packet(now, &p);
                self.drain(now, out);
            }
            _ => {
                self.counters.rejected.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn drain(&mut self, now: Time, out: &mut Vec<Packet>) {
        while let Some(p) = self.endpoint.poll_transmit(now) {
            out.push(p);
        }
    }

    fn publish(&self) {
        if let Ok(mut s) = self.stats.lock() {
            *s = self.endpoint.stats();
        }
    }
}

/// Sends the router a heartbeat from endpoint slot `slot` (`finished`: the last, as the run
/// ends here); 1 if the socket said that nothing listens at the router's address, else 0. A
/// heartbeat lost otherwise (a full buffer) is made up by the next.
async fn beat(
    socket: &UdpSocket,
    sealer: &mut Sealer,
    buf: &mut Vec<u8>,
    slot: u32,
    finished: bool,
) -> u64 {
    sealer.seal_heartbeat(
        wire::Heartbeat {
            from: slot,
            finished,
        },
        buf,
    );
    match socket.send(buf).await {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => 1,
        _ => 0,
    }
}

/// Sends the packets in `out` to the router, in order. A send that fails (the router is gone,
/// or the kernel refused) loses that packet, as a network would.
async fn send_all(
    socket: &UdpSocket,
    sealer: &mut Sealer,
    out: &mut Vec<Packet>,
    buf: &mut Vec<u8>,
) {
    for p in out.drain(..) {
        sealer.seal(&p, buf);
        let _ = socket.send(buf).await;
    }
}
