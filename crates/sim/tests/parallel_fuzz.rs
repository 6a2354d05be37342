//! Random scenarios run serially and on 2, 3 and 4 threads (fabrics also on 8) give the same results, byte for byte
//! (issue 56 §2): every file the run writes — summary.json, flows.csv, links.csv, delays.csv,
//! fct.csv and packet traces (CSV and pcap). The scenarios are drawn from the format's own
//! keys — chains and diamonds of routers with every queue discipline, random loss, jitter (with
//! and without reordering), shared buffers, rate and delay events, zero-delay links, ECMP per
//! flow and per packet, every scheme with a transport; fat-trees and leaf-spines under workloads
//! (Poisson, incast rounds, traffic files with flows starting together) — so that what
//! the goldens do not exercise is compared too. A scenario the parallel engine declines (it says
//! why, and the run is then serial) is compared on the threads it takes; the test fails if too
//! few are parallel at all.
//!
//! `ACCLAB_PARALLEL_FUZZ_CASES` sets the number of scenarios (default 24; the run before this
//! test was committed took 2,000).

mod common;
use common::first_difference;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(options)
}

/// A queue discipline with valid parameters (a limit of `limit` packets).
fn queue() -> impl Strategy<Value = String> {
    (0..12usize, 8u64..80).prop_map(|(k, limit)| {
        let half = limit / 2;
        match k {
            0 | 1 => format!("{{ kind = \"droptail\", limit = \"{limit}pkt\" }}"),
            2 => format!("{{ kind = \"red\", limit = \"{limit}pkt\", min_th = \"{}pkt\", max_th = \"{half}pkt\", ecn = true }}", half / 3),
            3 => format!("{{ kind = \"rem\", limit = \"{limit}pkt\" }}"),
            4 => format!("{{ kind = \"avq\", limit = \"{limit}pkt\" }}"),
            5 => format!("{{ kind = \"codel\", limit = \"{limit}pkt\" }}"),
            6 => format!("{{ kind = \"pie\", limit = \"{limit}pkt\", ecn = true }}"),
            7 => format!("{{ kind = \"fq-codel\", limit = \"{limit}pkt\" }}"),
            8 => format!("{{ kind = \"step-ecn\", limit = \"{limit}pkt\", threshold = \"{half}pkt\" }}"),
            9 => format!("{{ kind = \"priority\", limit = \"{limit}pkt\" }}"),
            10 => format!("{{ kind = \"dualpi2\", limit = \"{limit}pkt\" }}"),
            _ => format!("{{ kind = \"bat\", limit = \"{limit}pkt\", priority = true, classes = [{{ name = \"tcp\" }}, {{ name = \"udp\", f_min = \"100kbps\" }}, {{ name = \"acc\" }}] }}"),
        }
    })
}

/// A flow's `kind` and `params` (finite with `size_kb`).
fn scheme() -> impl Strategy<Value = (usize, Option<u64>)> {
    (0..KINDS.len(), proptest::option::of(2u64..300))
}

const KINDS: &[(&str, &str)] = &[
    ("reno", ""),
    ("reno", "sack = true, ecn = true"),
    ("cubic", "hystart = true"),
    ("dctcp", ""),
    ("prague", ""),
    ("ledbat", ""),
    ("copa", ""),
    ("vivace", ""),
    ("bbr", ""),
    ("bbr3", ""),
    ("swift", ""),
    ("hpcc", ""),
    ("vegas", ""),
    ("vegas-rem", ""),
    ("monaco", ""),
    ("cbr", "rate = \"3Mbps\""),
    ("onoff", "mean_size = \"20KB\", mean_off = \"50ms\""),
    ("web", "users = 2"),
    ("reno", "send_overhead = \"200us\", delayed_ack = \"40ms\""),
];

/// A router-to-router hop: one link, or two parallel paths (a diamond) through middle routers.
#[derive(Debug, Clone)]
struct Hop {
    diamond: bool,
    /// Its capacity follows the shipped LTE trace rather than a fixed rate.
    trace: bool,
    rate_mbps: u64,
    delay: &'static str,
    queue: String,
    loss: &'static str,
    jitter: &'static str,
}

#[derive(Debug, Clone)]
struct Flow {
    src: usize,
    dst: usize,
    kind: usize,
    size_kb: Option<u64>,
    start_ms: u64,
    stop_ms: Option<u64>,
}

#[derive(Debug, Clone)]
struct Chain {
    hops: Vec<Hop>,
    hosts_per_router: usize,
    host_queue: String,
    /// The hosts' links' delay (none: a delivery at once, as the packet leaves).
    host_delay: &'static str,
    flows: Vec<Flow>,
    ecmp: &'static str,
    pool: Option<(u64, f64)>,
    events: Vec<(u64, usize, bool, u64)>,
    sample_ms: u64,
    /// A packet trace: none, CSV or pcap, of the first link and the first flow.
    trace: &'static str,
    duration_ms: u64,
    seed: u64,
}

fn hop() -> impl Strategy<Value = Hop> {
    (
        any::<bool>(),
        proptest::bool::weighted(0.15),
        2u64..60,
        pick(&["0s", "10us", "300us", "2ms", "2ms", "10ms"]),
        queue(),
        pick(&[
            "",
            "",
            "",
            "loss = 0.01",
            "loss = { model = \"gilbert-elliott\", p = 0.01, r = 0.3 }",
        ]),
        pick(&[
            "",
            "",
            "",
            "jitter = { amount = \"500us\" }",
            "jitter = { amount = \"300us\", distribution = \"pareto\" }",
            "jitter = { amount = \"1ms\", distribution = \"normal\", reorder = true }",
        ]),
    )
        .prop_map(
            |(diamond, trace, rate_mbps, delay, queue, loss, jitter)| Hop {
                diamond,
                trace,
                rate_mbps,
                delay,
                queue,
                loss,
                jitter,
            },
        )
}

fn chain() -> impl Strategy<Value = Chain> {
    (2usize..6, 1usize..3).prop_flat_map(|(routers, per)| {
        let hosts = routers * per;
        let flow = (
            0..hosts,
            0..hosts,
            scheme(),
            0u64..300,
            proptest::option::of(50u64..400),
        )
            .prop_map(|(src, dst, (kind, size_kb), start_ms, stop)| Flow {
                src,
                dst,
                kind,
                size_kb,
                start_ms,
                stop_ms: stop.map(|s| start_ms + s),
            });
        (
            proptest::collection::vec(hop(), routers - 1),
            Just(per),
            (queue(), pick(&["1ms", "1ms", "0s", "20us"])),
            proptest::collection::vec(flow, 1..9),
            pick(&["none", "flow", "packet"]),
            proptest::option::of((30u64..300, prop_oneof![Just(0.5), Just(1.0), Just(4.0)])),
            proptest::collection::vec((1u64..300, 0..routers - 1, any::<bool>(), 1u64..40), 0..3),
            prop_oneof![Just(10u64), Just(30), Just(100)],
            pick(&["", "", "csv", "pcap"]),
            300u64..700,
            any::<u64>(),
        )
            .prop_map(
                |(
                    hops,
                    per,
                    (host_queue, host_delay),
                    flows,
                    ecmp,
                    pool,
                    events,
                    sample_ms,
                    trace,
                    duration_ms,
                    seed,
                )| Chain {
                    hops,
                    hosts_per_router: per,
                    host_queue,
                    host_delay,
                    flows,
                    ecmp,
                    pool,
                    events,
                    sample_ms,
                    trace,
                    duration_ms,
                    seed,
                },
            )
    })
}

fn chain_toml(c: &Chain) -> String {
    let routers = c.hops.len() + 1;
    let mut s = format!(
        "name = \"pfuzz\"\nduration = \"{}ms\"\nseed = {}\n[routing]\necmp = \"{}\"\n[output]\nsample_interval = \"{}ms\"\n",
        c.duration_ms,
        c.seed % (1 << 40),
        c.ecmp,
        c.sample_ms
    );
    if !c.trace.is_empty() {
        s += &format!(
            "trace = {{ links = [\"r0->{}\"], flows = [\"f0\"], format = \"{}\" }}\n",
            if c.hops[0].diamond { "m0a" } else { "r1" },
            c.trace
        );
    }
    let link = |a: &str, b: &str, h: &Hop| {
        let rate = match h.trace {
            true => format!(
                "{{ trace = \"{}/../../scenarios/traces/markov-lte.down\" }}",
                env!("CARGO_MANIFEST_DIR")
            ),
            false => format!("\"{}Mbps\"", h.rate_mbps),
        };
        format!(
            "[[link]]\nbetween = [\"{a}\", \"{b}\"]\nrate = {rate}\ndelay = \"{}\"\nqueue = {}\n{}\n{}\n",
            h.delay, h.queue, h.loss, h.jitter
        )
    };
    for (i, h) in c.hops.iter().enumerate() {
        let (a, b) = (format!("r{i}"), format!("r{}", i + 1));
        if h.diamond {
            for m in ["a", "b"] {
                let mid = format!("m{i}{m}");
                s += &link(&a, &mid, h);
                s += &link(&mid, &b, h);
            }
        } else {
            s += &link(&a, &b, h);
        }
    }
    for r in 0..routers {
        for j in 0..c.hosts_per_router {
            s += &format!(
                "[[link]]\nbetween = [\"h{}\", \"r{r}\"]\nrate = \"100Mbps\"\ndelay = \"{}\"\nqueue = {}\n",
                r * c.hosts_per_router + j,
                c.host_delay,
                c.host_queue
            );
        }
    }
    if let Some((kb, alpha)) = c.pool {
        let names: Vec<String> = (0..routers).map(|i| format!("\"r{i}\"")).collect();
        s += &format!(
            "[[shared_buffer]]\nnodes = [{}]\nsize = \"{kb}KB\"\nalpha = {alpha}\n",
            names.join(", ")
        );
    }
    let hosts = routers * c.hosts_per_router;
    for (k, f) in c.flows.iter().enumerate() {
        let dst = if f.dst == f.src {
            (f.src + 1) % hosts
        } else {
            f.dst
        };
        let (kind, params) = KINDS[f.kind];
        let size = match f.size_kb {
            Some(kb) if !matches!(kind, "cbr" | "onoff" | "web") => format!("size = \"{kb}KB\""),
            _ => String::new(),
        };
        let sep = if size.is_empty() || params.is_empty() {
            ""
        } else {
            ", "
        };
        s += &format!(
            "[[flow]]\nid = \"f{k}\"\nkind = \"{kind}\"\nfrom = \"h{}\"\nto = \"h{dst}\"\nstart = \"{}ms\"\nstart_jitter = \"5ms\"\nparams = {{ {size}{sep}{params} }}\n",
            f.src, f.start_ms
        );
        if let Some(stop) = f.stop_ms {
            s += &format!("stop = \"{stop}ms\"\n");
        }
    }
    for &(at, hop, rate, value) in &c.events {
        let h = &c.hops[hop];
        let link = if h.diamond {
            format!("r{hop}->m{hop}a")
        } else {
            format!("r{hop}->r{}", hop + 1)
        };
        s += &if rate {
            format!("[[event]]\nat = \"{at}ms\"\nset_rate = {{ link = \"{link}\", rate = \"{value}Mbps\" }}\n")
        } else {
            format!("[[event]]\nat = \"{at}ms\"\nset_delay = {{ link = \"{link}\", delay = \"{value}ms\" }}\n")
        };
    }
    s
}

/// A workload's pattern: Poisson arrivals (`all-to-all`, `permutation`), synchronised rounds
/// (`incast`: every sender of a round starts at one instant), or a traffic file whose starts fall
/// on a 100 µs grid, so that flows of different partitions start together (the tie rule across
/// partitions) and one host may start several at once. The file is the strategy's second value
/// (host indices below 12, the smaller fabric's hosts).
fn pattern() -> impl Strategy<Value = (String, Option<String>)> {
    let poisson = (
        pick(&["all-to-all", "permutation"]),
        pick(&["websearch", "datamining", "rpc"]),
        2u64..9,
    )
        .prop_map(|(pattern, sizes, load)| {
            (
                format!("pattern = \"{pattern}\"\nsizes = \"{sizes}\"\nload = 0.{load}\n"),
                None,
            )
        });
    let incast = (2u32..9, pick(&["h0", "h5", "h11"]), 1u64..60, 3u64..20).prop_map(
        |(senders, receiver, kb, period)| {
            (
                format!(
                    "pattern = \"incast\"\nsenders = {senders}\nreceiver = \"{receiver}\"\nsize = \"{kb}KB\"\nperiod = \"{}us\"\n",
                    period * 100
                ),
                None,
            )
        },
    );
    let file = proptest::collection::vec((0usize..12, 1usize..12, 1u64..200, 0u64..25), 1..40)
        .prop_map(|flows| {
            let flows: Vec<acclab_scenario::workload::FileFlow> = flows
                .into_iter()
                .map(|(src, hop, kb, slot)| acclab_scenario::workload::FileFlow {
                    src,
                    dst: (src + hop) % 12,
                    size: kb * 1000,
                    start: acclab_core::Duration(slot * 100_000),
                })
                .collect();
            let mut text = Vec::new();
            acclab_scenario::workload::write_flow_file(&mut text, &flows).unwrap();
            (
                "pattern = \"file\"\nfile = \"{TRAFFIC}\"\n".to_string(),
                Some(String::from_utf8(text).unwrap()),
            )
        });
    prop_oneof![2 => poisson, 1 => incast, 1 => file]
}

/// A k = 4 fat-tree (or a leaf-spine) under a workload, with a few long flows beside it. Its
/// summary.json lists the workload's flows (`flow_summaries = true`), so that every flow's
/// measurements are compared, not only their completion times.
fn fabric() -> impl Strategy<Value = (String, Option<String>)> {
    (
        any::<bool>(),
        pick(&["dctcp", "reno", "cubic", "swift", "hpcc", "bbr", "vegas", "monaco"]),
        pattern(),
        pick(&["flow", "packet"]),
        pick(&[
            "{ kind = \"step-ecn\", limit = \"100pkt\", threshold = \"20pkt\" }",
            "{ kind = \"droptail\", limit = \"60pkt\" }",
            "{ kind = \"red\", limit = \"100pkt\", min_th = \"10pkt\", max_th = \"40pkt\", ecn = true }",
        ]),
        pick(&["", "shared_buffer = { size = \"300KB\", alpha = 1 }"]),
        (any::<u64>(), 0usize..4),
    )
        .prop_map(|(fat, kind, (pattern, traffic), ecmp, queue, pool, (seed, long))| {
            let topology = if fat {
                "kind = \"fat-tree\"\nk = 4"
            } else {
                "kind = \"leaf-spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 4"
            };
            let params = match kind {
                "dctcp" | "reno" | "cubic" => "initial_window = 10, min_rto = \"1ms\"",
                _ => "min_rto = \"1ms\"",
            };
            let mut s = format!(
                "name = \"pfuzz-fabric\"\nduration = \"3ms\"\nseed = {}\n[defaults]\npacket_size = \"1500B\"\n[routing]\necmp = \"{ecmp}\"\n[output]\nsample_interval = \"500us\"\nflow_summaries = true\n[topology]\n{topology}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nqueue = {queue}\n{pool}\n[[workload]]\nid = \"w\"\nkind = \"{kind}\"\nparams = {{ {params} }}\n{pattern}",
                seed % (1 << 40)
            );
            for i in 0..long {
                s += &format!(
                    "[[flow]]\nid = \"long{i}\"\nkind = \"{kind}\"\nfrom = \"h{i}\"\nto = \"h{}\"\nparams = {{ {params} }}\n",
                    11 - i
                );
            }
            (s, traffic)
        })
}

/// Every file the run writes (its samples and trace streamed as `acclab run` streams them,
/// then summary.json with the wall time left out, fct.csv), by name, or why the run is not
/// parallel on `threads` threads.
fn outcome(
    sc: &acclab_scenario::Scenario,
    threads: usize,
) -> Result<Vec<(String, String)>, String> {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    acclab_sim::output::stream_outputs(dir.path(), &mut sim, false).unwrap();
    if threads > 1 {
        sim.run_parallel(threads, &mut |_| {})?;
    } else {
        sim.run(&mut |_| {});
    }
    let summary = acclab_sim::output::summary(&sim, 0.0);
    sim.finish_samples().unwrap();
    acclab_sim::output::write_files(dir.path(), &sim, &summary).unwrap();
    let mut files = Vec::new();
    let mut dirs = vec![dir.path().to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let name = path.strip_prefix(dir.path()).unwrap().display().to_string();
                // pcapng is binary: compared as its bytes' text.
                files.push((
                    name,
                    String::from_utf8(bytes.clone()).unwrap_or_else(|_| format!("{bytes:?}")),
                ));
            }
        }
    }
    files.sort();
    Ok(files)
}

#[test]
fn random_scenarios_give_the_serial_results_on_any_thread_count() {
    let cases = std::env::var("ACCLAB_PARALLEL_FUZZ_CASES")
        .ok()
        .map_or(24, |v| {
            v.parse().expect("ACCLAB_PARALLEL_FUZZ_CASES: a count")
        });
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        match std::env::var("ACCLAB_PARALLEL_FUZZ_SEED") {
            Ok(seed) => {
                let seed: u8 = seed.parse().expect("ACCLAB_PARALLEL_FUZZ_SEED: 0-255");
                TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32])
            }
            Err(_) => TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        },
    );
    let counts = std::sync::Mutex::new([0u32; 3]); // [accepted, compared in parallel, refused]
    let strategy = prop_oneof![3 => chain().prop_map(|c| (chain_toml(&c), None)), 1 => fabric()];
    let dir = tempfile::tempdir().unwrap();
    runner
        .run(&strategy, |(text, traffic)| {
            let text = match traffic {
                Some(traffic) => {
                    let path = dir.path().join("traffic.txt");
                    std::fs::write(&path, &traffic).unwrap();
                    text.replace("{TRAFFIC}", &path.display().to_string())
                        + "\n# traffic.txt:\n# "
                        + &traffic.trim_end().replace('\n', "\n# ")
                }
                None => text,
            };
            // Fabrics have partitions to spare: 8 threads too.
            let threads: &[usize] = if text.contains("[[workload]]") {
                &[2, 3, 4, 8]
            } else {
                &[2, 3, 4]
            };
            let sc = match acclab_scenario::parse(&text, "pfuzz.toml") {
                Ok(sc) => sc,
                Err(e) => {
                    counts.lock().unwrap()[2] += 1;
                    if std::env::var_os("ACCLAB_PARALLEL_FUZZ_VERBOSE").is_some() {
                        eprintln!("refused: {e}");
                    }
                    return Ok(());
                }
            };
            counts.lock().unwrap()[0] += 1;
            let serial = outcome(&sc, 1).unwrap();
            for &threads in threads {
                let parallel = match outcome(&sc, threads) {
                    Ok(p) => p,
                    Err(why) => {
                        if std::env::var_os("ACCLAB_PARALLEL_FUZZ_VERBOSE").is_some() {
                            eprintln!("serial on {threads} threads: {why}");
                        }
                        continue;
                    }
                };
                counts.lock().unwrap()[1] += 1;
                let names =
                    |f: &[(String, String)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
                prop_assert_eq!(
                    names(&serial),
                    names(&parallel),
                    "files on {} threads\n{}",
                    threads,
                    text
                );
                for ((name, a), (_, b)) in serial.iter().zip(&parallel) {
                    prop_assert!(
                        a == b,
                        "{name} differs on {threads} threads: {}\n{text}",
                        first_difference(a, b)
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    let [accepted, parallel, refused] = *counts.lock().unwrap();
    eprintln!("{accepted} of {cases} scenarios accepted ({refused} refused), {parallel} parallel runs compared");
    assert!(accepted * 2 >= cases, "only {accepted} of {cases} accepted");
    assert!(
        parallel >= accepted,
        "only {parallel} parallel runs of {accepted} scenarios"
    );
}
