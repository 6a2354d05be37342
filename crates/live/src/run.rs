//! `acclab live run`: a scenario over real sockets in one process — the router emulator and one
//! task per sender and receiver, each on its own UDP socket on loopback (or another local
//! address, or across network namespaces), for the scenario's duration divided by the time
//! scale.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};

use acclab_core::transport::{Endpoint, EndpointSlot, EndpointStats, Side};
use acclab_core::Time;
use acclab_results::summary::LiveSummary;
use acclab_results::Summary;
use acclab_scenario::Scenario;
use acclab_sim::Simulator;
use tokio::net::UdpSocket;

use crate::auth::Key;
use crate::clock::LiveClock;
use crate::driver::{EndpointCounters, EndpointTask};
use crate::liveness::Limits;
use crate::netns::{NetnsError, Testbed};
use crate::router::{Remote, Router, RouterCounters, RouterError};

/// How to run live.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Scenario seconds per wall-clock second (1 = real time).
    pub time_scale: f64,
    /// Where the sockets live.
    pub network: Network,
    /// Tokio worker threads (0: one per core).
    pub threads: usize,
    /// The key every datagram is authenticated under ([`crate::auth`]); None: a fresh one.
    pub key: Option<Key>,
    /// The run's directory, where `command` flows' programs write their output
    /// (`programs/…log`); None: their output is discarded.
    pub files: Option<std::path::PathBuf>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            time_scale: 1.0,
            network: Network::loopback(),
            threads: 0,
            key: None,
            files: None,
        }
    }
}

/// Where a live run's router and endpoints have their sockets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    /// This machine's own addresses: the router at `router` (port 0: any free port), every
    /// endpoint on `endpoint_ip` at a free port.
    Local {
        router: SocketAddr,
        endpoint_ip: IpAddr,
    },
    /// A testbed of network namespaces ([`crate::netns`]): the router in one, each node that
    /// holds endpoints in one of its own, joined by veth pairs. Linux, as root.
    Namespaces,
}

impl Network {
    /// Everything on 127.0.0.1.
    pub fn loopback() -> Network {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        Network::Local {
            router: SocketAddr::new(lo, 0),
            endpoint_ip: lo,
        }
    }

    /// The name `summary.json` gives it.
    pub fn label(&self) -> &'static str {
        match self {
            Network::Local { .. } => "local",
            Network::Namespaces => "netns",
        }
    }
}

/// Why a live run could not run.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("time scale {0} is not in [{MIN_TIME_SCALE}, {MAX_TIME_SCALE}] scenario seconds per wall second")]
    BadTimeScale(f64),
    #[error("endpoints from {0} need {1} consecutive ports, past the last port")]
    PortRange(SocketAddr, usize),
    #[error("cannot set up sockets: {0}")]
    Io(std::io::Error),
    #[error(transparent)]
    Netns(#[from] NetnsError),
    #[error(
        "the router at {router} sent nothing to flow {flow:?}'s endpoints for {:.1} s (wall), heartbeats included{}: {}; the run is given up, no results written",
        *ms as f64 / 1e3,
        if *refused > 0 { format!(" ({refused} datagrams refused: nothing listens there)") } else { String::new() },
        if *was_heard { "it has stopped or gone" } else { "is it running, with the same scenario and key file?" }
    )]
    RouterSilent {
        router: SocketAddr,
        flow: String,
        ms: u64,
        refused: u64,
        was_heard: bool,
    },
    #[error(transparent)]
    Router(#[from] RouterError),
    #[error(
        "{what} is {size} bytes: a live packet travels in one UDP datagram with its {}-byte authenticator, so at most {} bytes",
        crate::auth::TRAILER_LEN,
        crate::wire::MAX_DATAGRAM - crate::auth::TRAILER_LEN
    )]
    PacketTooLarge { what: String, size: u64 },
    #[error("flow {0:?} is run by a real stack (kind kernel-tcp or command), whose IP packets need the network namespaces of `acclab live run --netns` (as root)")]
    NeedsNetns(String),
    #[error("flow {0:?} has a controller written in Python (kind python), which live mode does not run: run it in the simulator from Python (`acclab.run`)")]
    PythonController(String),
    #[error("flow {0:?} reads in-band telemetry (kind hpcc), which live mode's router does not carry to endpoints behind sockets: run it in the simulator (`acclab run`)")]
    NeedsTelemetry(String),
    #[error("kernel TCP and programs run in real time: --time-scale must be 1, not {0}")]
    RealTimeOnly(f64),
    #[error(transparent)]
    RealStacks(#[from] crate::stacks::StacksError),
    #[error("the scenario asks for a packet trace ([output] trace) but the run has no directory to write it into")]
    TraceNowhere,
    #[error("cannot write the run's files (trace, tcp_info.csv): {0}")]
    RunFiles(std::io::Error),
}

// By hand rather than `#[from]`: the message already holds the cause, and a source as well would
// print it twice in an error chain.
impl From<std::io::Error> for LiveError {
    fn from(e: std::io::Error) -> Self {
        LiveError::Io(e)
    }
}

/// The sockets of a live run — the router's, and one per endpoint (`[sender 0, receiver 0, …]`)
/// connected to it, all non-blocking — and the testbed they live in, if any.
struct Sockets {
    router: std::net::UdpSocket,
    /// None for the endpoints of real stacks' flows, which have no socket of acclab's.
    endpoints: Vec<Option<std::net::UdpSocket>>,
    testbed: Option<Testbed>,
}

fn sockets(scenario: &Scenario, network: &Network) -> Result<Sockets, LiveError> {
    let n = EndpointSlot::count(scenario.flows.len());
    match network {
        Network::Local {
            router,
            endpoint_ip,
        } => local_sockets(scenario, bind_nonblocking(*router)?, *endpoint_ip),
        Network::Namespaces => {
            let testbed = Testbed::create(scenario)?;
            let router = testbed.router_socket()?;
            let port = router.local_addr()?.port();
            let mut endpoints = Vec::with_capacity(n);
            for i in 0..n {
                let slot = EndpointSlot::at(i);
                let flow = &scenario.flows.get(slot.flow().0 as usize);
                if flow.scheme.external().is_some() {
                    endpoints.push(None);
                    continue;
                }
                let host = testbed.host(match slot.side() {
                    Side::Sender => flow.src,
                    Side::Receiver => flow.dst,
                });
                let s = testbed.host_socket(host)?;
                s.connect(SocketAddr::new(IpAddr::V4(host.gateway), port))?;
                endpoints.push(Some(s));
            }
            Ok(Sockets {
                router,
                endpoints,
                testbed: Some(testbed),
            })
        }
    }
}

/// The router's socket as given, and one endpoint socket per endpoint on `endpoint_ip`,
/// connected to it.
fn local_sockets(
    scenario: &Scenario,
    router: std::net::UdpSocket,
    endpoint_ip: IpAddr,
) -> Result<Sockets, LiveError> {
    router.set_nonblocking(true)?;
    let router_addr = router.local_addr()?;
    let endpoints = (0..EndpointSlot::count(scenario.flows.len()))
        .map(|_| {
            let s = bind_nonblocking(SocketAddr::new(endpoint_ip, 0))?;
            s.connect(router_addr)?;
            Ok(Some(s))
        })
        .collect::<std::io::Result<_>>()?;
    Ok(Sockets {
        router,
        endpoints,
        testbed: None,
    })
}

fn bind_nonblocking(addr: SocketAddr) -> std::io::Result<std::net::UdpSocket> {
    let s = std::net::UdpSocket::bind(addr)?;
    s.set_nonblocking(true)?;
    Ok(s)
}

/// Runs `scenario` live and returns the router's network (for `links.csv`, plots) and the
/// summary, marked `"mode": "live"`. `progress` is told the scenario time now and then.
pub fn run(
    scenario: Scenario,
    opts: &LiveOptions,
    progress: &mut dyn FnMut(Time),
) -> Result<(Simulator, Summary), LiveError> {
    check_scale(opts.time_scale)?;
    check_live_scenario(&scenario)?;
    check_real_flows(&scenario, opts)?;
    let sockets = sockets(&scenario, &opts.network)?;
    run_with(scenario, sockets, opts, progress)
}

/// A scenario with real stacks' flows runs only in namespaces, and in real time.
pub fn check_real_flows(scenario: &Scenario, opts: &LiveOptions) -> Result<(), LiveError> {
    let Some(f) = scenario.first_external_flow() else {
        return Ok(());
    };
    if opts.network != Network::Namespaces {
        return Err(LiveError::NeedsNetns(f.id.clone()));
    }
    if opts.time_scale != 1.0 {
        return Err(LiveError::RealTimeOnly(opts.time_scale));
    }
    Ok(())
}

/// [`run`] on this machine's addresses with a router socket the caller has bound (and whose
/// address it may already have told others): endpoints get free ports on `endpoint_ip`.
/// `opts.network` is not used.
pub fn run_with_router(
    scenario: Scenario,
    router: std::net::UdpSocket,
    endpoint_ip: IpAddr,
    opts: &LiveOptions,
    progress: &mut dyn FnMut(Time),
) -> Result<(Simulator, Summary), LiveError> {
    check_scale(opts.time_scale)?;
    check_live_scenario(&scenario)?;
    if let Some(f) = scenario.first_external_flow() {
        return Err(LiveError::NeedsNetns(f.id.clone()));
    }
    let sockets = local_sockets(&scenario, router, endpoint_ip)?;
    run_with(scenario, sockets, opts, progress)
}

fn run_with(
    scenario: Scenario,
    sockets: Sockets,
    opts: &LiveOptions,
    progress: &mut dyn FnMut(Time),
) -> Result<(Simulator, Summary), LiveError> {
    if trace_nowhere(&scenario, opts) {
        return Err(LiveError::TraceNowhere);
    }
    let Sockets {
        router,
        endpoints,
        testbed,
    } = sockets;
    let stacks = match &testbed {
        Some(t) if scenario.first_external_flow().is_some() => Some(
            crate::stacks::RealStacks::set_up(&scenario, t, opts.files.as_deref())?,
        ),
        _ => None,
    };
    let result = run_sockets(scenario, router, endpoints, stacks, opts, progress);
    // The namespaces go only once every socket and device in them has closed.
    drop(testbed);
    result
}

/// A trace asked for where the run writes no files.
fn trace_nowhere(scenario: &Scenario, opts: &LiveOptions) -> bool {
    scenario.output.trace.is_some() && opts.files.is_none()
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if threads > 0 {
        rt.worker_threads(threads);
    }
    // The endpoints' worker threads run with real-time priority where the system allows it.
    rt.on_thread_start(|| {
        crate::priority::raise(crate::priority::ENDPOINTS);
    });
    rt.enable_io().enable_time().build()
}

/// The statistics cell an endpoint driver publishes into and its router stand-in reads.
type SharedStats = Arc<Mutex<EndpointStats>>;

/// The router's stand-ins for every endpoint of a scenario, the statistics cells the real
/// endpoints publish into, and the channel the stand-ins' deliveries come out of.
struct Remotes {
    endpoints: Vec<Box<dyn Endpoint>>,
    stats: Vec<SharedStats>,
    deliveries: mpsc::Receiver<crate::router::Delivery>,
}

/// Stand-ins for every endpoint; those of real stacks' flows read `stacks`' measurements.
fn remotes(scenario: &Scenario, stacks: Option<&crate::stacks::RealStacks>) -> Remotes {
    let (tx, deliveries) = mpsc::channel();
    let n = EndpointSlot::count(scenario.flows.len());
    let stats: Vec<SharedStats> = (0..n).map(|_| SharedStats::default()).collect();
    let endpoints = stats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let real = stacks.and_then(|r| r.stats_source(EndpointSlot::at(i)));
            let remote = match real {
                Some(source) => Remote::measured(i as u32, tx.clone(), source),
                None => Remote::new(i as u32, tx.clone(), s.clone()),
            };
            Box::new(remote) as Box<dyn Endpoint>
        })
        .collect();
    Remotes {
        endpoints,
        stats,
        deliveries,
    }
}

/// One driver task per endpoint of `scenario`.
fn endpoint_tasks(
    scenario: &Scenario,
    stats: Vec<SharedStats>,
    counters: &Arc<EndpointCounters>,
    key: &Key,
    watch_router: Option<Limits>,
) -> Vec<EndpointTask> {
    let end = Time(scenario.duration.0);
    scenario
        .build_endpoints()
        .into_iter()
        .zip(stats)
        .enumerate()
        .map(|(i, (endpoint, stats))| {
            let slot = EndpointSlot::at(i);
            let is_sender = slot.side() == Side::Sender;
            let (start, stop) = scenario.flow_times(slot.flow().0 as usize);
            EndpointTask {
                endpoint,
                flow: slot.flow(),
                is_sender,
                start: is_sender.then_some(start),
                stop: stop.filter(|_| is_sender),
                end,
                stats,
                counters: counters.clone(),
                key: key.clone(),
                slot: i as u32,
                watch_router,
            }
        })
        .collect()
}

/// The addresses `acclab live router` expects endpoints at: `base` port + i for endpoint i.
fn planned_addrs(scenario: &Scenario, base: SocketAddr) -> Result<Vec<SocketAddr>, LiveError> {
    let n = EndpointSlot::count(scenario.flows.len());
    (0..n)
        .map(|i| {
            u16::try_from(base.port() as usize + i)
                .map(|p| SocketAddr::new(base.ip(), p))
                .map_err(|_| LiveError::PortRange(base, n))
        })
        .collect()
}

/// A live run is marked degraded when the router's mean lag exceeds this share of the shortest
/// base RTT among the scenario's flows…
pub const MAX_MEAN_LAG_SHARE: f64 = 0.05;
/// … or its largest lag this share.
pub const MAX_LAG_SHARE: f64 = 0.5;

/// Why a live run's numbers may not be those of the emulated network: datagrams the kernel
/// dropped at a socket (the machine could not keep up), datagrams from outside the run that
/// reached it, a router that ran late relative to the flows' round-trip times
/// ([`MAX_MEAN_LAG_SHARE`], [`MAX_LAG_SHARE`]). Empty when none of these happened.
pub fn degradation(scenario: &Scenario, l: &LiveSummary) -> Vec<String> {
    let mut why = Vec::new();
    if l.socket_drops_router + l.socket_drops_endpoints > 0 {
        why.push(format!(
            "the kernel dropped {} datagrams at the router's socket and {} at the endpoints' (receive buffers full: the machine did not keep up; lower --time-scale)",
            l.socket_drops_router, l.socket_drops_endpoints
        ));
    }
    let strangers = l.router_rejected_malformed
        + l.router_rejected_forged
        + l.router_rejected_replayed
        + l.router_rejected_foreign
        + l.endpoint_rejected;
    if strangers > 0 {
        why.push(format!(
            "{strangers} datagrams from outside the run reached it (dropped: {} malformed, {} forged, {} replayed, {} foreign at the router; {} at the endpoints), taking the router's time",
            l.router_rejected_malformed,
            l.router_rejected_forged,
            l.router_rejected_replayed,
            l.router_rejected_foreign,
            l.endpoint_rejected
        ));
    }
    let base_rtt = scenario
        .flows
        .iter()
        .map(|f| {
            f.forward
                .iter()
                .chain(&f.reverse)
                .map(|l| scenario.links[l.0 as usize].delay.as_secs_f64())
                .sum::<f64>()
        })
        .filter(|&r| r > 0.0)
        .fold(f64::INFINITY, f64::min);
    if base_rtt.is_finite() {
        if l.router_mean_lag_s > MAX_MEAN_LAG_SHARE * base_rtt {
            why.push(format!(
                "the router ran {:.3} ms late on average, over {:.0}% of the shortest base RTT ({:.1} ms)",
                l.router_mean_lag_s * 1e3,
                MAX_MEAN_LAG_SHARE * 100.0,
                base_rtt * 1e3
            ));
        }
        if l.router_max_lag_s > MAX_LAG_SHARE * base_rtt {
            why.push(format!(
                "the router once ran {:.3} ms late, over {:.0}% of the shortest base RTT ({:.1} ms)",
                l.router_max_lag_s * 1e3,
                MAX_LAG_SHARE * 100.0,
                base_rtt * 1e3
            ));
        }
    }
    why
}

/// The scenario's id of flow `f`.
fn scenario_flow_id(ids: &[String], f: acclab_core::FlowId) -> String {
    ids.get(f.0 as usize).cloned().unwrap_or_default()
}

/// `acclab live router`: only the router, for endpoints at [`planned_addrs`] in another process.
/// Flow statistics stay empty here; links are measured as in any run.
pub fn router_only(
    scenario: Scenario,
    listen: SocketAddr,
    endpoints_base: SocketAddr,
    time_scale: f64,
    key: Key,
) -> Result<(Simulator, RouterCounters), LiveError> {
    check_scale(time_scale)?;
    check_live_scenario(&scenario)?;
    let addrs = planned_addrs(&scenario, endpoints_base)?;
    let r = remotes(&scenario, None);
    let limits = Limits::of(&scenario, time_scale);
    let mut router = Router::new(
        Simulator::with_endpoints(scenario, r.endpoints),
        addrs,
        r.deliveries,
        key,
    );
    router.watch_endpoints(limits);
    let socket = std::net::UdpSocket::bind(listen)?;
    let _priority = crate::priority::raise_for_now(crate::priority::ROUTER);
    let clock = LiveClock::start(time_scale);
    let (sim, counters, _) = router.run(socket, clock, &mut |_| {})?;
    Ok((sim, counters))
}

/// `acclab live endpoints`: every sender and receiver of `scenario` at [`planned_addrs`],
/// talking to the router at `router`. Returns their final statistics, `[sender 0, receiver 0, …]`.
pub fn endpoints_only(
    scenario: Scenario,
    router: SocketAddr,
    base: SocketAddr,
    time_scale: f64,
    key: Key,
) -> Result<Vec<EndpointStats>, LiveError> {
    check_scale(time_scale)?;
    check_live_scenario(&scenario)?;
    let addrs = planned_addrs(&scenario, base)?;
    let stats: Vec<SharedStats> = (0..addrs.len()).map(|_| SharedStats::default()).collect();
    let counters = Arc::new(EndpointCounters::default());
    let limits = Limits::of(&scenario, time_scale);
    let tasks = endpoint_tasks(&scenario, stats.clone(), &counters, &key, Some(limits));
    let flow_ids: Vec<String> = scenario.flows.iter().map(|f| f.id.clone()).collect();
    runtime(0)?.block_on(async {
        let mut sockets = Vec::with_capacity(addrs.len());
        for a in &addrs {
            let s = UdpSocket::bind(a).await?;
            s.connect(router).await?;
            sockets.push(s);
        }
        let clock = LiveClock::start(time_scale);
        let mut running = tokio::task::JoinSet::new();
        for (t, s) in tasks.into_iter().zip(sockets) {
            running.spawn(t.run(s, clock));
        }
        // The first endpoint to find the router silent ends the run.
        let mut silent = None;
        while let Some(done) = running.join_next().await {
            if let Ok(Err(e)) = done {
                silent = Some(e);
                running.abort_all();
                break;
            }
        }
        match silent {
            Some(e) => Err(LiveError::RouterSilent {
                router,
                flow: scenario_flow_id(&flow_ids, e.flow),
                ms: e.silent_for.as_millis() as u64,
                refused: e.refused,
                was_heard: e.was_heard,
            }),
            None => Ok::<_, LiveError>(()),
        }
    })?;
    Ok(stats
        .iter()
        .map(|s| s.lock().map(|s| *s).unwrap_or_default())
        .collect())
}

/// `router.json` of `acclab live router`: the router's counters and the links' summaries.
#[derive(Debug, serde::Serialize)]
pub struct RouterReport {
    pub mode: &'static str,
    pub scenario: String,
    pub counters: RouterCounters,
    pub links: Vec<acclab_results::summary::LinkSummary>,
}

pub fn router_report(sim: &Simulator, counters: &RouterCounters) -> RouterReport {
    RouterReport {
        mode: "live-router",
        scenario: sim.scenario().name.clone(),
        counters: *counters,
        links: acclab_sim::output::summary(sim, 0.0).links,
    }
}

/// The one check of a time scale, for every entry point (the CLI calls it before it creates
/// any output directory).
/// What live mode cannot run: a packet larger than one UDP datagram (it would be sent by nobody
/// and the run would deliver nothing), and a flow whose scheme reads in-band telemetry (HPCC):
/// its endpoints run behind sockets, where the router's records of its data packets do not
/// reach them.
pub fn check_live_scenario(scenario: &Scenario) -> Result<(), LiveError> {
    if let Some(f) = scenario
        .flows
        .iter()
        .find(|f| matches!(f.scheme, acclab_core::config::SchemeConfig::Python(_)))
    {
        return Err(LiveError::PythonController(f.id.clone()));
    }
    if let Some(f) = scenario.flows.iter().find(|f| f.scheme.telemetry()) {
        return Err(LiveError::NeedsTelemetry(f.id.clone()));
    }
    let max = (crate::wire::MAX_DATAGRAM - crate::auth::TRAILER_LEN) as u64;
    let mut sizes = vec![
        (
            "defaults.packet_size".to_string(),
            u64::from(scenario.packet_size),
        ),
        (
            "defaults.ack_size".to_string(),
            u64::from(scenario.ack_size),
        ),
    ];
    for f in &scenario.flows {
        if let acclab_core::config::SchemeConfig::Cbr(p) = &f.scheme {
            if let Some(b) = p.packet_size {
                sizes.push((format!("flow {:?}: params.packet_size", f.id), b.0));
            }
        }
    }
    match sizes.into_iter().find(|(_, size)| *size > max) {
        Some((what, size)) => Err(LiveError::PacketTooLarge { what, size }),
        None => Ok(()),
    }
}

/// The range of `--time-scale`: at 1000 scenario seconds per wall second a 1 Gb/s scenario
/// link is 1 Tb/s of datagrams, far past what the router emulator keeps up with (`acclab live
/// bench`); below 1/1000 a one-minute scenario takes 17 hours. Outside it a run would exit at
/// once with nothing sent (1e308), or never.
pub const MIN_TIME_SCALE: f64 = 1e-3;
pub const MAX_TIME_SCALE: f64 = 1e3;

pub fn check_scale(s: f64) -> Result<(), LiveError> {
    if (MIN_TIME_SCALE..=MAX_TIME_SCALE).contains(&s) {
        Ok(())
    } else {
        Err(LiveError::BadTimeScale(s))
    }
}

/// Runs the endpoints on a tokio runtime, real stacks' flows on threads of their own, and the
/// router on this thread.
fn run_sockets(
    scenario: Scenario,
    router_socket: std::net::UdpSocket,
    endpoint_sockets: Vec<Option<std::net::UdpSocket>>,
    mut stacks: Option<crate::stacks::RealStacks>,
    opts: &LiveOptions,
    progress: &mut dyn FnMut(Time),
) -> Result<(Simulator, Summary), LiveError> {
    let rt = runtime(opts.threads)?;
    let r = remotes(&scenario, stacks.as_ref());
    let counters = Arc::new(EndpointCounters::default());
    // A key of the run's own, unless the caller gave one.
    let key = match &opts.key {
        Some(k) => k.clone(),
        None => Key::generate()?,
    };
    let tasks = endpoint_tasks(&scenario, r.stats, &counters, &key, None);
    let mut addrs = Vec::with_capacity(endpoint_sockets.len());
    let mut sockets = Vec::with_capacity(endpoint_sockets.len());
    {
        let _in_runtime = rt.enter();
        for s in endpoint_sockets {
            match s {
                Some(s) => {
                    addrs.push(s.local_addr()?);
                    sockets.push(Some(UdpSocket::from_std(s)?));
                }
                // A real stack's endpoint: no datagram ever comes from (or goes to) it.
                None => {
                    addrs.push(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0));
                    sockets.push(None);
                }
            }
        }
    }
    let flow_count = scenario.flows.len();
    let mut router = Router::new(
        Simulator::with_endpoints(scenario, r.endpoints),
        addrs,
        r.deliveries,
        key,
    );
    let mut real_bytes = None;
    if let Some(st) = stacks.as_mut() {
        let (tuns, hosts, specs) = st.take_network();
        let ip = crate::ipflows::IpFlows::new(router.sim_mut(), tuns, &hosts, flow_count, specs);
        real_bytes = Some(ip.capture());
        router.carry_ip(ip);
    }
    // The trace of `[output] trace`: real packets with their own headers.
    if let Some(dir) = &opts.files {
        let sim = router.sim_mut();
        let tracer = acclab_sim::trace::Tracer::create_with_bytes(dir, sim.scenario(), real_bytes)
            .map_err(LiveError::RunFiles)?;
        if let Some(t) = tracer {
            sim.observe(Box::new(t));
        }
    }

    // Real-time priority before the clock starts: the router's first events are due at once,
    // and a thread at ordinary priority can wait milliseconds for a core on a loaded machine.
    let _priority = crate::priority::raise_for_now(crate::priority::ROUTER);
    let clock = LiveClock::start(opts.time_scale);
    let handles: Vec<_> = tasks
        .into_iter()
        .zip(sockets)
        .filter_map(|(t, s)| Some(rt.spawn(t.run(s?, clock))))
        .collect();
    let real = stacks.map(|s| s.start(clock)).transpose()?;
    let outcome = router.run(router_socket, clock, progress);
    if let Some(real) = real {
        real.finish().map_err(LiveError::RunFiles)?;
    }
    let (mut sim, rc, ip) = outcome?;
    let wall = clock.wall_elapsed_s();
    sim.finish_samples().map_err(LiveError::RunFiles)?;
    let mut sent_by_endpoints = 0;
    rt.block_on(async {
        for h in handles {
            if let Ok(Ok(e)) = h.await {
                sent_by_endpoints += e.stats().sent_packets;
            }
        }
    });
    let mut summary = acclab_sim::output::summary(&sim, wall);
    summary.mode = "live".into();
    summary.live = Some(LiveSummary {
        time_scale: opts.time_scale,
        network: opts.network.label().into(),
        wall_duration_s: wall,
        router_accepted: rc.accepted,
        router_delivered: rc.delivered,
        router_rejected_malformed: rc.rejected_malformed,
        router_rejected_foreign: rc.rejected_foreign,
        router_rejected_forged: rc.rejected_forged,
        router_rejected_replayed: rc.rejected_replayed,
        endpoint_sent: sent_by_endpoints,
        endpoint_received: counters.received.load(Ordering::Relaxed),
        endpoint_rejected: counters.rejected.load(Ordering::Relaxed),
        endpoint_rejected_unauthentic: counters.unauthentic.load(Ordering::Relaxed),
        router_mean_lag_s: rc.lag_sum_ns as f64 / rc.wakeups.max(1) as f64 / 1e9,
        router_max_lag_s: rc.lag_max_ns.max(rc.delivery_lag_max_ns) as f64 / 1e9,
        router_late_deliveries: rc.deliveries_late,
        router_realtime: rc.realtime,
        socket_drops_router: rc.socket_drops,
        socket_drops_endpoints: counters.socket_drops.load(Ordering::Relaxed),
        ip: ip.map(|c| acclab_results::summary::LiveIpSummary {
            accepted: c.accepted,
            delivered: c.delivered,
            rejected_malformed: c.rejected_malformed,
            rejected_foreign: c.rejected_foreign,
            write_failures: c.write_failures,
        }),
        degraded: Vec::new(),
    });
    if let Some(l) = summary.live.as_mut() {
        l.degraded = degradation(sim.scenario(), l);
    }
    Ok((sim, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 55 §4: `--time-scale 1e308` ran nothing and exited 0.
    #[test]
    fn time_scales_outside_the_range_are_refused() {
        for ok in [MIN_TIME_SCALE, 1.0, 10.0, MAX_TIME_SCALE] {
            assert!(check_scale(ok).is_ok(), "{ok}");
        }
        for bad in [0.0, -1.0, 1e-4, 1001.0, 1e308, f64::INFINITY, f64::NAN] {
            let e = check_scale(bad).unwrap_err().to_string();
            assert!(e.contains("[0.001, 1000]"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_run_is_degraded_by_socket_drops_strangers_and_lag() {
        let sc = acclab_scenario::parse(
            "name = \"d\"\nduration = \"1s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[flow]]\nid = \"f\"\nkind = \"reno\"\nfrom = \"a\"\nto = \"b\"\n",
            "d.toml",
        )
        .unwrap();
        let clean = LiveSummary {
            time_scale: 1.0,
            network: "local".into(),
            wall_duration_s: 1.0,
            router_accepted: 100,
            router_delivered: 100,
            router_rejected_malformed: 0,
            router_rejected_foreign: 0,
            router_rejected_forged: 0,
            router_rejected_replayed: 0,
            endpoint_sent: 100,
            endpoint_received: 100,
            endpoint_rejected: 0,
            endpoint_rejected_unauthentic: 0,
            router_mean_lag_s: 0.0001,
            router_max_lag_s: 0.002,
            router_late_deliveries: 3,
            router_realtime: true,
            socket_drops_router: 0,
            socket_drops_endpoints: 0,
            ip: None,
            degraded: vec![],
        };
        assert!(degradation(&sc, &clean).is_empty());
        // Base RTT 20 ms: a mean lag of 1.5 ms is over 5% of it, a largest of 12 ms over half.
        for (l, says) in [
            (
                LiveSummary {
                    socket_drops_endpoints: 3,
                    ..clean.clone()
                },
                "dropped 0 datagrams at the router's socket and 3",
            ),
            (
                LiveSummary {
                    router_rejected_forged: 7,
                    ..clean.clone()
                },
                "7 datagrams from outside",
            ),
            (
                LiveSummary {
                    router_mean_lag_s: 0.0015,
                    ..clean.clone()
                },
                "late on average",
            ),
            (
                LiveSummary {
                    router_max_lag_s: 0.012,
                    ..clean.clone()
                },
                "once ran 12.000 ms late",
            ),
        ] {
            let why = degradation(&sc, &l);
            assert!(why.len() == 1 && why[0].contains(says), "{why:?}");
        }
    }

    /// Issue 21 §1: `packet_size` above the UDP limit delivered nothing and exited 0.
    #[test]
    fn packets_larger_than_a_datagram_are_refused_before_the_run() {
        let text = |size: &str| {
            format!(
                "name = \"big\"\nduration = \"1s\"\n[defaults]\npacket_size = \"{size}\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\nqueue = {{ kind = \"droptail\", limit = \"100KB\" }}\n[[flow]]\nid = \"f\"\nkind = \"reno\"\nfrom = \"a\"\nto = \"b\"\n"
            )
        };
        // 65,507 bytes of UDP payload, 24 of them the authenticator: 65,483 for the packet.
        let sc = acclab_scenario::parse(&text("65484B"), "big.toml").unwrap();
        let e = check_live_scenario(&sc).unwrap_err();
        assert!(
            e.to_string()
                .contains("defaults.packet_size is 65484 bytes")
                && e.to_string().contains("at most 65483"),
            "{e}"
        );
        let sc = acclab_scenario::parse(&text("65483B"), "ok.toml").unwrap();
        assert!(check_live_scenario(&sc).is_ok());
        // HPCC's telemetry stays in the router: refused, naming the flow.
        let hpcc = text("1000B").replace("kind = \"reno\"", "kind = \"hpcc\"");
        let sc = acclab_scenario::parse(&hpcc, "hpcc.toml").unwrap();
        let e = check_live_scenario(&sc).unwrap_err().to_string();
        assert!(e.contains("flow \"f\" reads in-band telemetry"), "{e}");
        // Python controllers run from the Python package only.
        let python = text("1000B").replace(
            "kind = \"reno\"",
            "kind = \"python\"\nparams = { controller = \"x:Y\" }",
        );
        let sc = acclab_scenario::parse(&python, "py.toml").unwrap();
        let e = check_live_scenario(&sc).unwrap_err().to_string();
        assert!(
            e.contains("flow \"f\" has a controller written in Python"),
            "{e}"
        );
    }
}
