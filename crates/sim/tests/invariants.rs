//! Property tests over random small topologies and seeds: packets are conserved, queues never
//! exceed their limits, time never runs backwards.

use acclab_core::Limit;
use acclab_scenario::parse;
use acclab_sim::Simulator;
use proptest::prelude::*;

/// The TCP schemes random flows draw from, with parameters beyond the defaults.
const TCP_KINDS: &[(&str, &str)] = &[
    ("reno", "sack = false"),
    ("reno", "sack = true"),
    ("cubic", "hystart = true"),
    ("dctcp", "sack = false"),
    ("bbr", "sack = true"),
    ("swift", "sack = true"),
    ("swift", "sack = false, base_target = \"2ms\""),
    ("hpcc", "sack = true"),
    ("hpcc", "sack = false, eta = 0.9, max_stage = 0"),
    ("bbr", "sack = false"),
    ("vegas", "sack = false"),
    ("reno", "sack = true, receive_window = \"4KB\""),
    ("bbr", "receive_window = \"8KB\""),
    ("reno", "byte_counting = true, delayed_ack = \"40ms\""),
    ("cubic", "send_overhead = \"300us\", sack = true"),
    ("bbr", "send_overhead = \"50us\""),
    ("cubic", "linux = true, delayed_ack = \"40ms\""),
];

#[derive(Debug, Clone)]
struct FlowSpec {
    cbr: bool,
    /// The TCP scheme, an index into `TCP_KINDS`.
    scheme: usize,
    src: usize,
    dst: usize,
    start_ms: u64,
    stop_ms: Option<u64>,
    cbr_mbps: u64,
    size_kb: Option<u64>,
}

#[derive(Debug, Clone)]
struct Net {
    routers: usize,
    rates_mbps: Vec<u64>,
    delays_us: Vec<u64>,
    limits: Vec<String>,
    flows: Vec<FlowSpec>,
    /// Every router's output queues share a pool: (size in KB, α).
    pool: Option<(u64, f64)>,
    seed: u64,
}

fn limit() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u64..60).prop_map(|n| format!("{n}pkt")),
        // At least one 1000-byte packet: a smaller byte buffer is refused (it could carry nothing).
        (2u64..60).prop_map(|n| format!("{}B", n * 700)),
        Just("inf".to_string()),
    ]
}

fn net() -> impl Strategy<Value = Net> {
    (2usize..5).prop_flat_map(|routers| {
        let hosts = routers; // one host hanging off each router
        let flow = (
            any::<bool>(),
            0..hosts,
            0..hosts,
            0u64..1500,
            proptest::option::of(500u64..3000),
            1u64..40,
            proptest::option::of(1u64..400),
            0..TCP_KINDS.len(),
        )
            .prop_map(
                |(cbr, src, dst, start_ms, stop, cbr_mbps, size_kb, scheme)| FlowSpec {
                    cbr,
                    scheme,
                    src,
                    dst,
                    start_ms,
                    stop_ms: stop.map(|s| start_ms + s),
                    cbr_mbps,
                    size_kb,
                },
            );
        (
            Just(routers),
            proptest::collection::vec(1u64..50, routers - 1),
            proptest::collection::vec(0u64..20_000, routers - 1),
            proptest::collection::vec(limit(), routers - 1),
            proptest::collection::vec(flow, 1..6),
            proptest::option::of((10u64..200, prop_oneof![Just(0.25), Just(1.0), Just(4.0)])),
            any::<u64>(),
        )
            .prop_map(
                |(routers, rates_mbps, delays_us, limits, flows, pool, seed)| Net {
                    routers,
                    rates_mbps,
                    delays_us,
                    limits,
                    flows,
                    pool,
                    seed,
                },
            )
    })
}

fn to_toml(n: &Net) -> String {
    let mut s = format!(
        "name = \"random\"\nduration = \"3s\"\nseed = {}\n",
        n.seed % (1 << 40)
    );
    for i in 0..n.routers - 1 {
        s += &format!(
            "[[link]]\nbetween = [\"r{i}\", \"r{}\"]\nrate = \"{}Mbps\"\ndelay = \"{}us\"\nqueue = {{ kind = \"droptail\", limit = \"{}\" }}\n",
            i + 1,
            n.rates_mbps[i],
            n.delays_us[i],
            n.limits[i]
        );
    }
    for i in 0..n.routers {
        s += &format!(
            "[[link]]\nbetween = [\"h{i}\", \"r{i}\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\nqueue = {{ kind = \"droptail\", limit = \"20pkt\" }}\n"
        );
    }
    if let Some((kb, alpha)) = n.pool {
        let routers: Vec<String> = (0..n.routers).map(|i| format!("\"r{i}\"")).collect();
        s += &format!(
            "[[shared_buffer]]\nnodes = [{}]\nsize = \"{kb}KB\"\nalpha = {alpha}\n",
            routers.join(", ")
        );
    }
    for (k, f) in n.flows.iter().enumerate() {
        let dst = if f.dst == f.src {
            (f.src + 1) % n.routers
        } else {
            f.dst
        };
        s += &format!(
            "[[flow]]\nid = \"f{k}\"\nfrom = \"h{}\"\nto = \"h{dst}\"\nstart = \"{}ms\"\nstart_jitter = \"5ms\"\n",
            f.src, f.start_ms
        );
        if let Some(stop) = f.stop_ms {
            s += &format!("stop = \"{stop}ms\"\n");
        }
        if f.cbr {
            s += &format!(
                "kind = \"cbr\"\nparams = {{ rate = \"{}Mbps\" }}\n",
                f.cbr_mbps
            );
        } else {
            let (kind, params) = TCP_KINDS[f.scheme];
            let size = f
                .size_kb
                .map_or(String::new(), |kb| format!("size = \"{kb}KB\", "));
            s += &format!("kind = \"{kind}\"\nparams = {{ {size}{params} }}\n");
        }
    }
    s
}

fn run(n: &Net) -> Simulator {
    let sc = parse(&to_toml(n), "random").expect("generated scenario is valid");
    let mut sim = Simulator::new(sc);
    sim.run(&mut |_| {});
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn packets_are_conserved(n in net()) {
        let sim = run(&n);
        let inside = sim.packets_in_network();
        for (f, inside) in inside.iter().enumerate() {
            let counts = sim.packet_counts(f);
            for dir in 0..2 {
                let c = counts[dir];
                prop_assert_eq!(c.injected, c.arrived + c.dropped + inside[dir],
                    "flow {} direction {}: {:?}, {} inside", f, dir, c, inside[dir]);
            }
            let (tx, rx) = sim.endpoint_stats(f);
            prop_assert_eq!(tx.sent_packets, counts[0].injected);
            prop_assert_eq!(rx.sent_packets, counts[1].injected);
            prop_assert!(rx.delivered_bytes <= tx.sent_bytes);
        }
        // Every data packet of a telemetry flow (HPCC) in the network holds one record slot,
        // and no other packet does: slots are freed on delivery and on drop.
        let telemetry_data: u64 = inside
            .iter()
            .zip(&sim.scenario().flows)
            .filter(|(_, f)| f.scheme.telemetry())
            .map(|(inside, _)| inside[0])
            .sum();
        prop_assert_eq!(sim.telemetry_in_use() as u64, telemetry_data);
    }

    #[test]
    fn queues_stay_within_limits_and_time_moves_forward(n in net()) {
        let sim = run(&n);
        prop_assert!(!sim.time_went_backwards());
        let sc = sim.scenario();
        for (b, pool) in sc.shared_buffers.iter().zip(sim.shared_buffers()) {
            prop_assert!(pool.peak() <= b.params.size.0, "pool {} B > {}", pool.peak(), b.params.size.0);
        }
        for (l, (pkts, bytes)) in sc.links.iter().zip(sim.peak_backlogs()) {
            // A queue of a shared buffer holds at most α·(B + s)/(1 + α), s the largest packet:
            // it admits a packet of s bytes when q + s ≤ α(B − Q) ≤ α(B − q), Q its pool's
            // occupancy before the arrival.
            if let Some(b) = sc.shared_buffers.iter().find(|b| b.node == l.from) {
                let (size, alpha) = (b.params.size.0 as f64, b.params.alpha);
                let s = f64::from(sc.packet_size.max(sc.ack_size));
                prop_assert!(bytes as f64 <= alpha * (size + s) / (1.0 + alpha) + 1e-6,
                    "{}: {} B in a pool of {} B, alpha {}", l.name, bytes, size, alpha);
            }
            for lim in l.queue.limits() {
                match lim {
                    Limit::Packets(max) => prop_assert!(pkts <= max, "{}: {} > {}", l.name, pkts, max),
                    Limit::Bytes(max) => prop_assert!(bytes <= max, "{}: {} B > {}", l.name, bytes, max),
                    Limit::Unlimited => {}
                }
            }
        }
    }

    #[test]
    fn finished_transfers_deliver_exactly_their_size(n in net()) {
        let sim = run(&n);
        for (f, spec) in n.flows.iter().enumerate() {
            let (tx, rx) = sim.endpoint_stats(f);
            if let (false, Some(kb), Some(_)) = (spec.cbr, spec.size_kb, tx.completed_at) {
                prop_assert_eq!(rx.delivered_bytes, kb * 1000);
            }
        }
    }
}
