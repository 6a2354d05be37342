//! Web traffic in the style of SURGE (Barford & Crovella 1998) and ns-2's web traffic model:
//! many users multiplexed on one flow, each alternating sessions of pages and silences.
//!
//! A user's session has a geometric number of pages (mean `pages_per_session`); between pages
//! the user thinks for a Pareto time (`think_shape`, mean `think_time`); a page has a Pareto
//! number of objects (`objects_shape`, mean `objects_per_page`, rounded at random so the mean
//! holds, at least one); each
//! object has a Pareto size (`object_shape` ≈ 1.2, mean `object_size`) and is fetched as a short
//! TCP Reno transfer with fresh congestion state, the objects of a page one after another.
//! Between sessions the user is idle for an exponential time (mean `session_gap`). Data flow
//! from the flow's source (the servers) to its destination (the users); each user is one
//! connection, numbered in the packets' `conn` field. Users start with a think time, so that
//! many users started together desynchronise. Object sizes are rounded up to whole packets.

use std::collections::BTreeSet;

use rand::RngExt;
use rand_distr::{Distribution, Exp, Pareto};

use crate::cc::reno::Reno;
use crate::packet::{FlowId, Packet};
use crate::rng::Rng;
use crate::transport::monaco::{Estimator, MonacoReceiver, MonacoSender, MonacoSettings};
use crate::transport::tcp::{TcpReceiver, TcpSender, TcpSettings, MAX_INITIAL_WINDOW};
use crate::transport::{Endpoint, EndpointStats, Outbox};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

use crate::params::{count_in, FlowContext, ParamError, SchemeParams};
use crate::transport::monaco::MonacoParams;
use crate::units::Bytes;

/// The web model's parameters (means are of the distributions, not of their scales).
#[derive(Clone, Debug, PartialEq)]
pub struct WebModel {
    pub users: u32,
    pub pages_per_session: f64,
    pub session_gap: Duration,
    pub think_time: Duration,
    pub think_shape: f64,
    pub objects_per_page: f64,
    pub objects_shape: f64,
    pub object_size: f64,
    pub object_shape: f64,
}

impl Default for WebModel {
    /// SURGE-like defaults: objects Pareto(1.2) with mean 12 KB, 1.7 objects per page
    /// (Pareto 2.43, scale 1), think times Pareto(1.5) with mean 3 s, 10 pages per session,
    /// 30 s between sessions.
    fn default() -> Self {
        WebModel {
            users: 1,
            pages_per_session: 10.0,
            session_gap: Duration::from_secs(30),
            think_time: Duration::from_secs(3),
            think_shape: 1.5,
            objects_per_page: 2.43 / 1.43,
            objects_shape: 2.43,
            object_size: 12_000.0,
            object_shape: 1.2,
        }
    }
}

impl WebModel {
    /// The long-run offered load of all users, bytes per second, when transfers take no time:
    /// each session offers pages × objects × size bytes over pages × think time + session gap.
    /// Object sizes are rounded up to whole packets, which adds up to one packet per object.
    pub fn offered_load(&self) -> f64 {
        let session_bytes = self.pages_per_session * self.objects_per_page * self.object_size;
        let cycle =
            self.pages_per_session * self.think_time.as_secs_f64() + self.session_gap.as_secs_f64();
        self.users as f64 * session_bytes / cycle
    }
}

/// A Pareto distribution given by its mean and shape (shape > 1).
pub fn pareto_with_mean(mean: f64, shape: f64) -> Option<Pareto<f64>> {
    let scale = mean * (shape - 1.0) / shape;
    Pareto::new(scale, shape).ok()
}

/// The model's distributions.
struct Draws {
    think: Pareto<f64>,
    objects: Pareto<f64>,
    size: Pareto<f64>,
    gap: Exp<f64>,
    /// Probability that a session ends after a page (geometric number of pages).
    end: f64,
}

impl Draws {
    fn new(m: &WebModel) -> Option<Draws> {
        Some(Draws {
            think: pareto_with_mean(m.think_time.as_secs_f64(), m.think_shape)?,
            objects: pareto_with_mean(m.objects_per_page, m.objects_shape)?,
            size: pareto_with_mean(m.object_size, m.object_shape)?,
            gap: Exp::new(1.0 / m.session_gap.as_secs_f64().max(1e-9)).ok()?,
            end: 1.0 / m.pages_per_session.max(1.0),
        })
    }

    /// A page's number of objects: the Pareto draw x rounded at random to ⌊x + U⌋, U uniform on
    /// [0, 1), so the count's mean is the configured mean (rounding up would add ~0.5 object, a
    /// third more load at SURGE's 1.7). At least one, since the Pareto scale is ≥ 1 by default.
    fn page_objects(&self, rng: &mut Rng) -> u64 {
        let x = self.objects.sample(rng) + rng.random::<f64>();
        (x.floor() as u64).max(1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Waiting (thinking or between sessions) until the time given.
    Waiting(Time),
    /// Fetching the objects of a page; this many remain after the current one.
    Fetching(u64),
    Stopped,
}

/// What carries each object.
pub enum ObjectTransport {
    /// A TCP Reno transfer with fresh congestion state (SPEC §6, 000 Fig. 10).
    Reno(TcpSettings),
    /// A Monaco loop with fresh state, its settings built by the closure for each object (003
    /// Table I: the web users are loops of weight 1).
    Monaco(Box<dyn FnMut() -> MonacoSettings + Send>),
}

/// One user's connection: the transfer of its current object.
enum Connection {
    Tcp(TcpSender),
    /// `None` between objects.
    Monaco(Option<MonacoSender>),
}

impl Connection {
    fn endpoint(&mut self) -> Option<&mut dyn Endpoint> {
        match self {
            Connection::Tcp(t) => Some(t),
            Connection::Monaco(m) => m.as_mut().map(|m| m as &mut dyn Endpoint),
        }
    }

    fn endpoint_ref(&self) -> Option<&dyn Endpoint> {
        match self {
            Connection::Tcp(t) => Some(t),
            Connection::Monaco(m) => m.as_ref().map(|m| m as &dyn Endpoint),
        }
    }

    fn is_idle(&self) -> bool {
        match self {
            Connection::Tcp(t) => t.is_idle(),
            Connection::Monaco(m) => m.as_ref().is_none_or(MonacoSender::is_finished),
        }
    }
}

struct User {
    conn: Connection,
    state: State,
    /// What the user's finished Monaco objects sent (their senders are dropped).
    done: EndpointStats,
}

/// The server side: every user's transfers.
pub struct WebSender {
    flow: FlowId,
    transport: ObjectTransport,
    users: Vec<User>,
    draws: Draws,
    rng: Rng,
    /// Round-robin start for `poll_transmit`.
    next_user: usize,
    pages: u64,
    objects: u64,
    /// Each user's next due time (its transfer's timer or the end of its wait; `Time::MAX` for
    /// none), and the same as an ordered set, so that an event touches only the users it
    /// concerns: at 10,000 users a scan of all of them per event cost 28 ns a user.
    due: Vec<Time>,
    timers: BTreeSet<(Time, usize)>,
    /// The users that may have a packet to send: every user touched since it last had none.
    /// A user outside it has nothing to send (its state changes only by its packets and
    /// timers), unless its due time has come: `poll_transmit` asks those too.
    ready: BTreeSet<usize>,
}

impl WebSender {
    /// `None` when a shape is not above 1 or a mean is not positive.
    pub fn new(
        flow: FlowId,
        model: &WebModel,
        transport: ObjectTransport,
        rng: Rng,
    ) -> Option<WebSender> {
        let draws = Draws::new(model)?;
        let users: Vec<User> = (0..model.users)
            .map(|u| User {
                conn: match &transport {
                    ObjectTransport::Reno(tcp) => Connection::Tcp(TcpSender::new(
                        flow,
                        TcpSettings {
                            conn: u,
                            ..tcp.clone()
                        },
                        reno(tcp),
                    )),
                    ObjectTransport::Monaco(_) => Connection::Monaco(None),
                },
                state: State::Stopped,
                done: EndpointStats::default(),
            })
            .collect();
        let n = users.len();
        Some(WebSender {
            flow,
            transport,
            users,
            draws,
            rng,
            next_user: 0,
            pages: 0,
            objects: 0,
            due: vec![Time::MAX; n],
            timers: BTreeSet::new(),
            ready: BTreeSet::new(),
        })
    }

    /// Files user `u`'s next due time again after anything touched it, and marks it as one
    /// that may have a packet to send.
    fn touched(&mut self, u: usize) {
        let user = &self.users[u];
        let wake = match user.state {
            State::Waiting(t) => Some(t),
            _ => None,
        };
        let due = [
            user.conn.endpoint_ref().and_then(|e| e.poll_timeout()),
            wake,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(Time::MAX);
        if due != self.due[u] {
            self.timers.remove(&(self.due[u], u));
            self.due[u] = due;
            if due != Time::MAX {
                self.timers.insert((due, u));
            }
        }
        self.ready.insert(u);
    }

    /// Pages and objects started so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.pages, self.objects)
    }

    fn think(&mut self, now: Time) -> State {
        State::Waiting(now + Duration::from_secs_f64(self.draws.think.sample(&mut self.rng)))
    }

    fn start_object(&mut self, now: Time, u: usize) {
        let bytes = self.draws.size.sample(&mut self.rng).ceil() as u64;
        self.objects += 1;
        let user = &mut self.users[u];
        match (&mut user.conn, &mut self.transport) {
            (Connection::Tcp(tcp), ObjectTransport::Reno(cfg)) => {
                tcp.start_transfer(bytes, reno(cfg))
            }
            (Connection::Monaco(m), ObjectTransport::Monaco(config)) => {
                if let Some(old) = m.take() {
                    add_sent(&mut user.done, &old.stats());
                }
                let cfg = config();
                // Whole packets, as TCP sends them.
                let mss = cfg.packet_size as u64;
                let mut loop_ = MonacoSender::transfer(self.flow, cfg, bytes.div_ceil(mss) * mss);
                loop_.handle_start(now);
                *m = Some(loop_);
            }
            _ => unreachable!("connections are built from the transport"),
        }
    }

    fn start_page(&mut self, now: Time, u: usize) {
        let objects = self.draws.page_objects(&mut self.rng);
        self.pages += 1;
        self.users[u].state = State::Fetching(objects - 1);
        self.start_object(now, u);
    }

    /// After an object completes: the next object, or thinking, or the end of the session.
    fn object_done(&mut self, now: Time, u: usize) {
        let State::Fetching(left) = self.users[u].state else {
            return;
        };
        if left > 0 {
            self.users[u].state = State::Fetching(left - 1);
            self.start_object(now, u);
        } else if self.rng.random::<f64>() < self.draws.end {
            let gap = Duration::from_secs_f64(self.draws.gap.sample(&mut self.rng));
            self.users[u].state = State::Waiting(now + gap);
        } else {
            self.users[u].state = self.think(now);
        }
    }
}

impl Endpoint for WebSender {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let u = pkt.conn as usize;
        let Some(user) = self.users.get_mut(u) else {
            return;
        };
        if let Some(e) = user.conn.endpoint() {
            e.handle_packet(now, pkt);
        }
        if matches!(user.state, State::Fetching(_)) && user.conn.is_idle() {
            self.object_done(now, u);
        }
        self.touched(u);
    }

    fn handle_timeout(&mut self, now: Time) {
        // The users whose time has come, in the order of their index (the order in which they
        // draw from the source's random stream): a user whose time has not come would do
        // nothing here.
        let mut due: Vec<usize> = self
            .timers
            .range(..=(now, usize::MAX))
            .map(|&(_, u)| u)
            .collect();
        due.sort_unstable();
        for u in due {
            if let Some(e) = self.users[u].conn.endpoint() {
                e.handle_timeout(now);
            }
            if matches!(self.users[u].state, State::Waiting(t) if t <= now) {
                self.start_page(now, u);
            }
            self.touched(u);
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let n = self.users.len();
        // Round robin from `next_user` over the users that may send: those touched, and those
        // whose time has come (a paced transfer lets a packet go at its time).
        let due: Vec<usize> = self
            .timers
            .range(..=(now, usize::MAX))
            .map(|&(_, u)| u)
            .collect();
        self.ready.extend(due);
        let order: Vec<usize> = self
            .ready
            .range(self.next_user..)
            .chain(self.ready.range(..self.next_user))
            .copied()
            .collect();
        for u in order {
            let sent = self.users[u]
                .conn
                .endpoint()
                .and_then(|e| e.poll_transmit(now));
            match sent {
                Some(mut p) => {
                    p.conn = u as u32;
                    self.next_user = (u + 1) % n;
                    // Sending arms the transfer's timer.
                    self.touched(u);
                    return Some(p);
                }
                None => {
                    self.ready.remove(&u);
                }
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.first().map(|&(t, _)| t)
    }

    fn handle_start(&mut self, now: Time) {
        for u in 0..self.users.len() {
            self.users[u].state = self.think(now);
            self.touched(u);
        }
    }

    fn handle_stop(&mut self, now: Time) {
        for u in 0..self.users.len() {
            let user = &mut self.users[u];
            user.state = State::Stopped;
            if let Some(e) = user.conn.endpoint() {
                e.handle_stop(now);
            }
            self.touched(u);
        }
    }

    fn stats(&self) -> EndpointStats {
        self.users
            .iter()
            .fold(EndpointStats::default(), |mut acc, u| {
                add_sent(&mut acc, &u.done);
                if let Some(e) = u.conn.endpoint_ref() {
                    add_sent(&mut acc, &e.stats());
                }
                acc
            })
    }
}

/// A fresh Reno controller for one object.
fn reno(tcp: &TcpSettings) -> Box<Reno> {
    Box::new(Reno::new(tcp.packet_size as u64, tcp.initial_window))
}

/// Adds a connection's sending counters to a running total.
fn add_sent(acc: &mut EndpointStats, s: &EndpointStats) {
    acc.sent_bytes += s.sent_bytes;
    acc.sent_packets += s.sent_packets;
    acc.retransmits += s.retransmits;
    acc.retransmits_in_avoidance += s.retransmits_in_avoidance;
    acc.timeouts += s.timeouts;
    acc.detected_losses += s.detected_losses;
    acc.rtt_sum += s.rtt_sum;
    acc.rtt_samples += s.rtt_samples;
}

/// The users' side: one receiver per user (TCP, or Monaco's egress).
pub struct WebReceiver {
    receivers: Vec<Box<dyn Endpoint>>,
    outbox: Outbox,
    stats: EndpointStats,
}

impl WebReceiver {
    /// For objects carried by TCP.
    pub fn new(flow: FlowId, users: u32, ack_size: u32) -> WebReceiver {
        WebReceiver::with(users, || Box::new(TcpReceiver::new(flow, ack_size)))
    }

    /// For objects carried by Monaco loops of target accumulation `target` bytes.
    pub fn monaco(
        flow: FlowId,
        users: u32,
        control_size: u32,
        target: f64,
        estimator: Estimator,
    ) -> WebReceiver {
        WebReceiver::with(users, || {
            Box::new(MonacoReceiver::new(flow, control_size, target, estimator))
        })
    }

    fn with(users: u32, receiver: impl Fn() -> Box<dyn Endpoint>) -> WebReceiver {
        WebReceiver {
            receivers: (0..users).map(|_| receiver()).collect(),
            outbox: Outbox::default(),
            stats: EndpointStats::default(),
        }
    }
}

impl Endpoint for WebReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let Some(r) = self.receivers.get_mut(pkt.conn as usize) else {
            return;
        };
        let before = r.stats().delivered_bytes;
        r.handle_packet(now, pkt);
        self.stats.delivered_bytes += r.stats().delivered_bytes - before;
        while let Some(mut ack) = r.poll_transmit(now) {
            ack.conn = pkt.conn;
            self.outbox.push(ack);
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.outbox.pop(now)
    }

    fn stats(&self) -> EndpointStats {
        self.outbox.sent_in(self.stats)
    }
}

/// `web` parameters; defaults in transport/web.rs (`WebModel::default`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebParams {
    /// Users multiplexed on this flow.
    pub users: u32,
    /// Mean pages per session (geometric; default 10).
    pub pages_per_session: Option<f64>,
    /// Mean gap between a user's sessions (exponential; default 30 s).
    pub session_gap: Option<Duration>,
    /// Mean think time between pages (Pareto; default 3 s).
    pub think_time: Option<Duration>,
    /// Shape of the think-time Pareto distribution (default 1.5).
    pub think_shape: Option<f64>,
    /// Mean objects per page (Pareto, as SURGE; default 1.7).
    pub objects_per_page: Option<f64>,
    /// Shape of the objects-per-page Pareto distribution (default 2.43).
    pub objects_shape: Option<f64>,
    /// Mean object size (Pareto; default 12 KB).
    pub object_size: Option<Bytes>,
    /// Shape of the object-size Pareto distribution (default 1.2).
    pub object_shape: Option<f64>,
    /// Lower bound of each transfer's retransmission timeout (default as `reno`'s).
    pub min_rto: Option<Duration>,
    /// Each transfer's initial window in segments (default as `reno`'s).
    pub initial_window: Option<u64>,
    /// Carry each object on a fresh Monaco loop with these settings instead of TCP Reno (003
    /// Table I: its web users are loops of weight 1). `min_rto` and `initial_window` are then
    /// the loop's own, given here.
    pub monaco: Option<MonacoParams>,
}

impl WebParams {
    /// The model these parameters describe.
    pub fn model(&self) -> WebModel {
        let d = WebModel::default();
        WebModel {
            users: self.users,
            pages_per_session: self.pages_per_session.unwrap_or(d.pages_per_session),
            session_gap: self.session_gap.unwrap_or(d.session_gap),
            think_time: self.think_time.unwrap_or(d.think_time),
            think_shape: self.think_shape.unwrap_or(d.think_shape),
            objects_per_page: self.objects_per_page.unwrap_or(d.objects_per_page),
            objects_shape: self.objects_shape.unwrap_or(d.objects_shape),
            object_size: self.object_size.map_or(d.object_size, |b| b.0 as f64),
            object_shape: self.object_shape.unwrap_or(d.object_shape),
        }
    }
}

/// The most users one `web` flow may multiplex (each holds a few hundred bytes of state).
pub const MAX_USERS: u64 = 1_000_000;

impl SchemeParams for WebParams {
    fn validate(&self) -> Result<(), ParamError> {
        let m = self.model();
        count_in("users", m.users as u64, 1, MAX_USERS)?;
        for (name, shape) in [
            ("think_shape", m.think_shape),
            ("objects_shape", m.objects_shape),
            ("object_shape", m.object_shape),
        ] {
            if !(shape > 1.0 && shape.is_finite()) {
                return Err(ParamError::at(
                    name,
                    format!("web `{name}` must exceed 1 (a finite mean), not {shape}"),
                ));
            }
        }
        if !(m.objects_per_page >= 1.0 && m.pages_per_session >= 1.0) {
            let key = if m.objects_per_page >= 1.0 {
                "pages_per_session"
            } else {
                "objects_per_page"
            };
            return Err(ParamError::at(
                key,
                "web `objects_per_page` and `pages_per_session` must be at least 1",
            ));
        }
        if m.think_time.0 == 0 || m.session_gap.0 == 0 {
            let key = if m.think_time.0 == 0 {
                "think_time"
            } else {
                "session_gap"
            };
            return Err(ParamError::at(
                key,
                "web `think_time` and `session_gap` must be positive",
            ));
        }
        if let Some(iw) = self.initial_window {
            // The same range as every TCP scheme's (`TcpOptions::validate`).
            count_in("initial_window", iw, 1, MAX_INITIAL_WINDOW)?;
        }
        match &self.monaco {
            Some(_) if self.min_rto.is_some() || self.initial_window.is_some() => {
                let key = if self.min_rto.is_some() {
                    "min_rto"
                } else {
                    "initial_window"
                };
                Err(ParamError::at(
                    key,
                    "web `min_rto` and `initial_window` are TCP's; with `monaco` give them inside it",
                ))
            }
            Some(monaco) => monaco.validate().map_err(|e| e.within("monaco")),
            None => Ok(()),
        }
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let p = self;
        let model = p.model();
        let (transport, rx) = match &p.monaco {
            None => {
                let d = TcpSettings::default();
                let cfg = TcpSettings {
                    packet_size: ctx.packet_size,
                    min_rto: p.min_rto.unwrap_or(d.min_rto),
                    initial_window: p.initial_window.unwrap_or(d.initial_window),
                    ..d
                };
                let rx = WebReceiver::new(ctx.flow, model.users, ctx.ack_size);
                (ObjectTransport::Reno(cfg), rx)
            }
            Some(m) => {
                let rx = WebReceiver::monaco(
                    ctx.flow,
                    model.users,
                    ctx.ack_size,
                    m.target_bytes(),
                    m.estimator,
                );
                let (m, ctx) = (m.clone(), ctx.clone());
                let mut objects = 0u64;
                let next_loop = move || {
                    objects += 1;
                    let name = format!("flow:{}:web-object:{objects}", ctx.name);
                    m.sender_config(&ctx, crate::rng::stream(ctx.seed, &name))
                };
                (ObjectTransport::Monaco(Box::new(next_loop)), rx)
            }
        };
        let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:web", ctx.name));
        let tx = WebSender::new(ctx.flow, &model, transport, rng)
            .expect("web parameters are checked by WebParams::validate");
        (Box::new(tx), Box::new(rx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_distributions_match_the_configuration() {
        let m = WebModel::default();
        let d = Draws::new(&m).unwrap();
        let mut rng = crate::rng::stream(3, "web-test");
        let n = 200_000;
        // Objects per page (finite variance at shape 2.43): the mean of the whole counts.
        let mean_objects = (0..n).map(|_| d.page_objects(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!(
            (mean_objects - m.objects_per_page).abs() / m.objects_per_page < 0.03,
            "{mean_objects}"
        );
        // Object sizes (shape 1.2, infinite variance): check the median, scale·2^(1/shape).
        let mut sizes: Vec<f64> = (0..n).map(|_| d.size.sample(&mut rng)).collect();
        sizes.sort_by(f64::total_cmp);
        let median = sizes[n / 2];
        let expected = 12_000.0 * 0.2 / 1.2 * 2f64.powf(1.0 / 1.2);
        assert!(
            (median - expected).abs() / expected < 0.02,
            "median {median} vs {expected}"
        );
        // Think times: the median of Pareto(1.5) with mean 3 s.
        let mut think: Vec<f64> = (0..n).map(|_| d.think.sample(&mut rng)).collect();
        think.sort_by(f64::total_cmp);
        let expected = 3.0 / 3.0 * 2f64.powf(1.0 / 1.5);
        assert!((think[n / 2] - expected).abs() / expected < 0.02);
    }

    /// The due-time index stands for a scan of every user: at every step of a run (the
    /// receiver answering every packet at once, timers fired when due) `poll_timeout` is the
    /// earliest of the users' own times, and no user outside the ready set has a packet.
    #[test]
    fn the_due_index_and_ready_set_agree_with_every_user() {
        let m = WebModel {
            users: 40,
            think_time: Duration::from_millis(50),
            ..WebModel::default()
        };
        let tcp = TcpSettings {
            packet_size: 1000,
            ..TcpSettings::default()
        };
        let mut tx = WebSender::new(
            FlowId(0),
            &m,
            ObjectTransport::Reno(tcp),
            crate::rng::stream(5, "w"),
        )
        .unwrap();
        let mut rx = WebReceiver::new(FlowId(0), m.users, 40);
        let scan = |tx: &WebSender| {
            tx.users
                .iter()
                .flat_map(|u| {
                    let wake = match u.state {
                        State::Waiting(t) => Some(t),
                        _ => None,
                    };
                    [u.conn.endpoint_ref().and_then(|e| e.poll_timeout()), wake]
                })
                .flatten()
                .min()
        };
        let mut now = Time::ZERO;
        tx.handle_start(now);
        let mut sent = 0;
        for _ in 0..20_000 {
            assert_eq!(tx.poll_timeout(), scan(&tx));
            // Every packet there is goes out and is answered at once, 1 ms later.
            now += Duration::from_millis(1);
            while let Some(p) = tx.poll_transmit(now) {
                sent += 1;
                rx.handle_packet(now, &p);
                while let Some(ack) = rx.poll_transmit(now) {
                    tx.handle_packet(now, &ack);
                }
            }
            for u in 0..tx.users.len() {
                if !tx.ready.contains(&u) && tx.due[u] > now {
                    let e = tx.users[u].conn.endpoint().unwrap();
                    assert!(e.poll_transmit(now).is_none(), "user {u} had a packet");
                }
            }
            if tx.poll_timeout().is_some_and(|t| t <= now) {
                tx.handle_timeout(now);
            }
        }
        assert!(
            sent > 1000 && tx.counts().1 > 100,
            "{sent} packets, {:?}",
            tx.counts()
        );
    }

    #[test]
    fn bad_shapes_are_refused() {
        let m = WebModel {
            object_shape: 1.0,
            ..WebModel::default()
        };
        assert!(WebSender::new(
            FlowId(0),
            &m,
            ObjectTransport::Reno(TcpSettings::default()),
            crate::rng::stream(1, "w")
        )
        .is_none());
    }
}
