//! End-to-end live runs on loopback and across network namespaces: real sockets, real clocks,
//! the router emulator.
//!
//! Scenario time runs at half the wall clock's pace ([`SCALE`]), so 24 s of scenario take 48 s.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use acclab_core::{FlowId, Packet, PacketKind};
use acclab_live::auth::{Key, Opener, Rejection, Sealer};
use acclab_live::{wire, LiveOptions, Network};
use acclab_scenario as scenario;
use common::{may_create_namespaces, one_at_a_time, runs_here};

mod common;

/// Two Monaco loops with weights 1 and 2 and different RTTs over one 10 Mb/s bottleneck with a
/// two-priority buffer: weighted PF gives them 1/3 and 2/3 of it.
const DUMBBELL: &str = include_str!("../../../scenarios/examples/live-dumbbell.toml");

/// Scenario seconds per wall second: 0.5, half real time. This project's 2-core VMs lose their
/// virtual CPUs to the hypervisor for 2–20 ms at a time (vmstat's `st` 1–14% during a run, with
/// the machine otherwise idle): the router, real-time priority or not, then wakes that late and
/// its sends stall as long; and a Monaco sender whose control reply is late idles at the end of
/// its period (the per-period window cap), the 24 ms loop proportionally more than the 52 ms
/// one. At 2.5 a loop lost 16–25% of its share in 5 of 6 runs (and one CI run); at 1 the
/// shares came within 1–5% in 5 runs but one netns run lost 16% (w1 2.79 of 3.33 Mb/s); at 0.5
/// a stall is at most ~10 ms of scenario time and the shares came within 0–2.2% in 4 of 4 runs
/// (2026-11-23). The claims are unchanged.
const SCALE: f64 = 0.5;

fn options(network: Network) -> LiveOptions {
    LiveOptions {
        time_scale: SCALE,
        network,
        ..LiveOptions::default()
    }
}

fn run_dumbbell(network: Network) -> acclab_results::Summary {
    let sc = scenario::parse(DUMBBELL, "live-dumbbell").expect("scenario");
    let (_, summary) = acclab_live::run(sc, &options(network), &mut |_| {}).expect("live run");
    summary
}

fn check_weighted_pf(s: &acclab_results::Summary) {
    let sc = scenario::parse(DUMBBELL, "live-dumbbell").unwrap();
    let eq = acclab_theory::predict(&sc).expect("theory");
    for (f, p) in s.flows.iter().zip(&eq.flows) {
        let predicted = p
            .as_ref()
            .expect("monaco flows are in the theory's domain")
            .throughput_bps;
        let err = (f.throughput_bps - predicted).abs() / predicted;
        eprintln!(
            "{}: live {:.3} Mb/s, weighted PF {:.3} Mb/s",
            f.id,
            f.throughput_bps / 1e6,
            predicted / 1e6
        );
        assert!(
            err < 0.15,
            "{}: live {:.3} Mb/s vs weighted PF {:.3} Mb/s ({:.1}% off)",
            f.id,
            f.throughput_bps / 1e6,
            predicted / 1e6,
            100.0 * err
        );
    }
    let bottleneck = &s.links[0];
    assert!(bottleneck.utilization > 0.9, "{bottleneck:?}");
    // Σ a* is 3 + 6 KB, 9 packets: the queue must hover near it, far below the buffer.
    assert!(
        bottleneck.mean_queue_pkts < 30.0 && bottleneck.max_queue_pkts < 100,
        "{bottleneck:?}"
    );
    assert_eq!(bottleneck.drops, 0);
}

#[test]
fn two_monaco_loops_reach_weighted_pf_live() {
    let _turn = one_at_a_time();
    let s = run_dumbbell(Network::loopback());
    assert_eq!(s.mode, "live");
    let live = s.live.as_ref().unwrap();
    assert_eq!(
        live.router_rejected_malformed
            + live.router_rejected_forged
            + live.router_rejected_replayed
            + live.router_rejected_foreign
            + live.endpoint_rejected,
        0,
        "{live:?}"
    );
    assert!(live.router_accepted > 10_000, "{live:?}");
    eprintln!("router real-time priority: {}", live.router_realtime);
    // Nothing from outside the run and no socket drops: those say what the code did. A lag
    // reason says the machine once held the router up; it is reported, not a failure here —
    // the shares below are what this test claims.
    eprintln!("degraded: {:?}", live.degraded);
    assert!(
        live.degraded.iter().all(|w| w.contains("late")),
        "{:?}",
        live.degraded
    );
    assert_eq!(live.socket_drops_router + live.socket_drops_endpoints, 0);
    check_weighted_pf(&s);
}

/// What the attacker sent, by the class the router should put it in.
#[derive(Default, Debug)]
struct Sent {
    malformed: u64,
    forged: u64,
    replayed: u64,
    foreign: u64,
}

/// Sends junk at the router for as long as `running` holds: random bytes, truncated datagrams,
/// well-formed packets without a valid authenticator or with a corrupted one (forged), authentic
/// datagrams — sealed with the run's own key, as if it had leaked — from an address the scenario
/// does not name (foreign), and those same datagrams again (foreign too: a stranger's datagram
/// is refused before any window moves, so it is never counted a replay). Each is classified as
/// the router should, by an `Opener` of its own that sees the same datagrams in the same order.
fn junk(s: UdpSocket, router: SocketAddr, key: Key, running: Arc<AtomicBool>) -> Sent {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let me = s.local_addr().unwrap();
    let mut sealer = Sealer::new(key.clone());
    let mut mirror = Opener::new(key);
    let mut sent = Sent::default();
    let mut buf = Vec::new();
    let mut last_authentic: Option<Vec<u8>> = None;
    while running.load(Ordering::Relaxed) {
        let mut p = Packet::new(FlowId((next() % 2) as u32), PacketKind::Data, 1000);
        p.seq = next() % 1_000_000;
        let d: Vec<u8> = match next() % 6 {
            0 => (0..next() % 1500).map(|_| next() as u8).collect(),
            1 => {
                sealer.seal(&p, &mut buf);
                buf[..(next() % 1000) as usize].to_vec()
            }
            2 => {
                sealer.seal(&p, &mut buf);
                let at = (next() as usize) % buf.len();
                buf[at] ^= 0x10;
                buf.clone()
            }
            3 => {
                wire::encode(&p, &mut buf);
                buf.extend_from_slice(&[0u8; acclab_live::auth::TRAILER_LEN]);
                buf.clone()
            }
            4 => {
                sealer.seal(&p, &mut buf);
                last_authentic = Some(buf.clone());
                buf.clone()
            }
            _ => match &last_authentic {
                Some(d) => d.clone(),
                None => continue,
            },
        };
        // The attacker's address is no endpoint's: an authentic datagram from it is foreign,
        // and (checked before the window moves) never counted a replay.
        let class = mirror.open(me, &d, |_| false);
        if s.send_to(&d, router).is_ok() {
            match class {
                Err(Rejection::Malformed(_)) => sent.malformed += 1,
                Err(Rejection::Forged) => sent.forged += 1,
                Err(Rejection::Replayed) => sent.replayed += 1,
                Err(Rejection::Foreign) | Ok(_) => sent.foreign += 1,
            }
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    sent
}

#[test]
fn router_shrugs_off_junk_and_strangers() {
    let _turn = one_at_a_time();
    // The router's socket is bound here and handed to the run, so its address is known to the
    // attacker before the run starts, with no moment in which another socket could take the
    // port (choosing a free port and binding it later failed in CI with "address in use").
    let router_socket = UdpSocket::bind("127.0.0.1:0").expect("loopback");
    let router = router_socket.local_addr().unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").expect("loopback");
    let running = Arc::new(AtomicBool::new(true));
    let r = running.clone();
    let key = Key::generate().unwrap();
    let k = key.clone();
    let attacker = std::thread::spawn(move || junk(socket, router, k, r));
    let sc = scenario::parse(DUMBBELL, "live-dumbbell").expect("scenario");
    let opts = LiveOptions {
        key: Some(key),
        ..options(Network::loopback())
    };
    let (_, s) = acclab_live::run_with_router(sc, router_socket, router.ip(), &opts, &mut |_| {})
        .expect("live run");
    running.store(false, Ordering::Relaxed);
    let sent = attacker.join().unwrap();
    let live = s.live.as_ref().unwrap();
    eprintln!("sent {sent:?}; router counted {live:?}");
    // Junk sent in the moments before the router's socket exists or after the run ends is not
    // seen; loopback loses nothing else at this rate.
    for (what, sent, counted) in [
        ("malformed", sent.malformed, live.router_rejected_malformed),
        ("forged", sent.forged, live.router_rejected_forged),
        ("foreign", sent.foreign, live.router_rejected_foreign),
    ] {
        assert!(sent > 100, "{what}: only {sent} sent");
        assert!(
            counted <= sent && counted as f64 >= 0.9 * sent as f64,
            "{what}: sent {sent}, router counted {counted}"
        );
    }
    // Replays can come only from an endpoint's own address; the attacker has none.
    assert_eq!((sent.replayed, live.router_rejected_replayed), (0, 0));
    assert!(
        live.degraded
            .iter()
            .any(|w| w.contains("from outside the run")),
        "{:?}",
        live.degraded
    );
    check_weighted_pf(&s);
}

/// Namespaces named after this process (a testbed's are `acclab-<pid>-…`).
fn own_namespaces() -> Vec<String> {
    let prefix = format!("acclab-{}-", std::process::id());
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// The same dumbbell with every node that holds an endpoint in a namespace of its own: the
/// datagrams now cross veth pairs and the kernel's routing, and the shares must not change.
/// Skipped, saying why, where namespaces cannot be made (not root, no `ip`) unless
/// `ACCLAB_REQUIRE_NETNS` is set; everywhere else a failure to set them up fails the test.
#[test]
fn two_monaco_loops_reach_weighted_pf_across_namespaces() {
    if !runs_here(may_create_namespaces()) {
        return;
    }
    let _turn = one_at_a_time();
    let s = run_dumbbell(Network::Namespaces);
    let live = s.live.as_ref().unwrap();
    assert_eq!(live.network, "netns");
    assert!(live.router_accepted > 10_000, "{live:?}");
    eprintln!("router real-time priority: {}", live.router_realtime);
    check_weighted_pf(&s);
    assert!(
        own_namespaces().is_empty(),
        "namespaces left behind: {:?}",
        own_namespaces()
    );
}

/// A testbed holds one namespace per endpoint node plus the router's, each host reachable at
/// its own /30; it sweeps away namespaces of runs whose process is gone, and removes its own
/// when dropped.
#[test]
fn testbeds_clean_up_after_themselves_and_after_dead_runs() {
    if !runs_here(may_create_namespaces()) {
        return;
    }
    let _turn = one_at_a_time();
    // pid_max is at most 2^22: no process has this id.
    let stale = "acclab-4194304-0-r";
    let made = std::process::Command::new("ip")
        .args(["netns", "add", stale])
        .status()
        .unwrap();
    assert!(made.success());
    let sc = scenario::parse(DUMBBELL, "live-dumbbell").unwrap();
    let testbed = acclab_live::netns::Testbed::create(&sc).expect("testbed");
    assert!(
        !std::path::Path::new("/run/netns").join(stale).exists(),
        "the dead run's namespace is still there"
    );
    // Nodes a, b (senders) and c (receivers).
    assert_eq!(testbed.hosts().len(), 3);
    assert_eq!(own_namespaces().len(), 4, "{:?}", own_namespaces());
    drop(testbed);
    assert!(own_namespaces().is_empty(), "{:?}", own_namespaces());
}
