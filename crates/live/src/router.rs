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
use tokio::net::UdpSocket;

use crate::clock::LiveClock;
use crate::wire;

/// How long before an event the router stops sleeping and starts polling: more than the timer
/// granularity (tokio's is 1 ms), so events are handled within microseconds of their time rather
/// than up to a millisecond late. The cost is a busy core while traffic flows.
const SPIN: std::time::Duration = std::time::Duration::from_micros(1500);

/// The router's side of an endpoint that runs elsewhere: packets the network delivers to it go
/// out to a channel the router drains onto the socket; its statistics are whatever the real
/// endpoint last published.
pub struct Remote {
    index: u32,
    deliveries: mpsc::Sender<(u32, Packet)>,
    stats: Arc<Mutex<EndpointStats>>,
}

impl Remote {
    /// Endpoint `index` (2f sender, 2f + 1 receiver of flow f).
    pub fn new(
        index: u32,
        deliveries: mpsc::Sender<(u32, Packet)>,
        stats: Arc<Mutex<EndpointStats>>,
    ) -> Remote {
        Remote {
            index,
            deliveries,
            stats,
        }
    }
}

impl Endpoint for Remote {
    fn handle_packet(&mut self, _now: Time, pkt: &Packet) {
        let _ = self.deliveries.send((self.index, *pkt));
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn stats(&self) -> EndpointStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }
}

/// What the router did with the datagrams it saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RouterCounters {
    pub accepted: u64,
    pub delivered: u64,
    pub rejected_malformed: u64,
    pub rejected_foreign: u64,
    /// Timer wake-ups, and the sum and maximum of how late they were (scenario ns).
    pub wakeups: u64,
    pub lag_sum_ns: u64,
    pub lag_max_ns: u64,
}

/// A router for one scenario: its network and the address of every endpoint.
pub struct Router {
    sim: Simulator,
    /// `addrs[2f]` is flow f's sender, `addrs[2f + 1]` its receiver.
    addrs: Vec<SocketAddr>,
    by_addr: HashMap<SocketAddr, usize>,
    deliveries: mpsc::Receiver<(u32, Packet)>,
    pub counters: RouterCounters,
}

impl Router {
    /// `sim` must have been built with [`Remote`] endpoints that send into `deliveries`.
    pub fn new(
        sim: Simulator,
        addrs: Vec<SocketAddr>,
        deliveries: mpsc::Receiver<(u32, Packet)>,
    ) -> Router {
        let by_addr = addrs.iter().enumerate().map(|(i, a)| (*a, i)).collect();
        Router {
            sim,
            addrs,
            by_addr,
            deliveries,
            counters: RouterCounters::default(),
        }
    }

    /// Forwards datagrams until the scenario's end; `progress` is told the scenario time about
    /// ten times a second of wall time. Returns the emulated network for the run's results.
    pub async fn run(
        mut self,
        socket: UdpSocket,
        clock: LiveClock,
        progress: &mut dyn FnMut(Time),
    ) -> (Simulator, RouterCounters) {
        let mut rx = vec![0u8; wire::MAX_DATAGRAM + 1];
        let mut tx = Vec::with_capacity(2048);
        let end = self.sim.end();
        let mut next_progress = std::time::Instant::now();
        while self.sim.now() < end {
            let next = self.sim.next_event_time().unwrap_or(end).min(end);
            let deadline = clock.instant_of(next);
            if deadline.saturating_duration_since(std::time::Instant::now()) > SPIN {
                // Far from the next event: sleep (coarsely) until just before it, or a datagram.
                tokio::select! {
                    biased;
                    r = socket.recv_from(&mut rx) => {
                        if let Ok((n, from)) = r {
                            self.sim.advance(clock.now());
                            self.accept(from, &rx[..n]);
                        }
                    }
                    _ = tokio::time::sleep_until((deadline - SPIN).into()) => {}
                }
            } else if let Ok((n, from)) = socket.try_recv_from(&mut rx) {
                self.sim.advance(clock.now());
                self.accept(from, &rx[..n]);
            } else if std::time::Instant::now() >= deadline {
                let now = clock.now();
                let lag = now.0.saturating_sub(next.0);
                self.counters.wakeups += 1;
                self.counters.lag_sum_ns += lag;
                self.counters.lag_max_ns = self.counters.lag_max_ns.max(lag);
                self.sim.advance(now);
            } else {
                // Close to it: poll, letting the endpoints' tasks run in between.
                tokio::task::yield_now().await;
            }
            self.send_deliveries(&socket, &mut tx).await;
            if std::time::Instant::now() >= next_progress {
                progress(self.sim.now());
                next_progress += std::time::Duration::from_millis(100);
            }
        }
        self.sim.advance(end);
        (self.sim, self.counters)
    }

    /// Checks one datagram and, if it is a packet of a flow of this scenario sent by that flow's
    /// endpoint for its direction, puts it on the flow's route.
    fn accept(&mut self, from: SocketAddr, d: &[u8]) {
        let Ok(pkt) = wire::decode(d) else {
            self.counters.rejected_malformed += 1;
            return;
        };
        let expected = EndpointSlot::source(&pkt).index();
        if self.by_addr.get(&from) != Some(&expected) {
            self.counters.rejected_foreign += 1;
            return;
        }
        self.counters.accepted += 1;
        self.sim.inject_external(pkt);
    }

    async fn send_deliveries(&mut self, socket: &UdpSocket, buf: &mut Vec<u8>) {
        while let Ok((e, pkt)) = self.deliveries.try_recv() {
            wire::encode(&pkt, buf);
            if socket.send_to(buf, self.addrs[e as usize]).await.is_ok() {
                self.counters.delivered += 1;
            }
        }
    }
}
