//! A seeded, structure-aware scenario fuzz test (issue 21 §4): thousands of scenario files built
//! from the format's own keys with ordinary and hostile values (zero, negative, NaN, infinity,
//! u32::MAX, 1 ns, 9e18 bps, unknown kinds). Every one is parsed and validated without a panic;
//! every accepted one has a cost estimate, and those the CLI would run without asking
//! (crates/sim/src/cost.rs) are run to the end, each within a time limit and in at most ten times
//! its estimated events — no panic, no hang, bounded work, an estimate that sees the cost.

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const CASES: u32 = 10_000;

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(options)
}

fn queue() -> impl Strategy<Value = String> {
    let limit = pick(&[
        "\"20pkt\"",
        "\"20pkt\"",
        "\"50pkt\"",
        "\"30KB\"",
        "\"30KB\"",
        "\"inf\"",
        "\"0pkt\"",
        "\"100B\"",
        "7",
    ]);
    const NUMS: &[&str] = &[
        "0.1",
        "0.5",
        "0.5",
        "1",
        "1.5",
        "0",
        "-1",
        "1e308",
        "nan",
        "inf",
        "4294967295",
    ];
    let dur = pick(&[
        "\"1ms\"", "\"15ms\"", "\"15ms\"", "\"1ns\"", "\"0s\"", "\"-5ms\"",
    ]);
    (0..11usize, limit, pick(NUMS), pick(NUMS), dur).prop_map(|(k, limit, a, b, d)| match k {
        0 => format!("{{ kind = \"droptail\", limit = {limit} }}"),
        1 => format!("{{ kind = \"red\", limit = {limit}, min_th = \"5pkt\", max_th = \"15pkt\", max_p = {a}, wq = {b} }}"),
        2 => format!("{{ kind = \"rem\", limit = {limit}, phi = {a}, mu = {b}, interval = {d} }}"),
        3 => format!("{{ kind = \"avq\", limit = {limit}, target_utilization = {a}, alpha = {b} }}"),
        4 => format!("{{ kind = \"codel\", limit = {limit}, target = {d} }}"),
        5 => format!("{{ kind = \"pie\", limit = {limit}, alpha = {a}, beta = {b}, t_update = {d} }}"),
        6 => format!("{{ kind = \"fq-codel\", limit = {limit}, interval = {d} }}"),
        7 => format!("{{ kind = \"step-ecn\", limit = {limit}, threshold = \"5pkt\" }}"),
        8 => format!("{{ kind = \"bat\", limit = {limit}, interval = {d}, classes = [{{ name = \"tcp\", c = {a}, d = {b} }}] }}"),
        9 => format!("{{ kind = \"priority\", limit = {limit} }}"),
        _ => "{ kind = \"nonsense\" }".to_string(),
    })
}

fn flow() -> impl Strategy<Value = String> {
    const NUMS: &[&str] = &[
        "1",
        "2",
        "3",
        "3",
        "0.5",
        "0",
        "-1",
        "1e308",
        "nan",
        "inf",
        "4294967295",
    ];
    let size = pick(&["\"2000B\"", "\"3000B\"", "\"3000B\"", "\"0B\"", "\"1e18B\""]);
    let rate = pick(&[
        "\"1Mbps\"",
        "\"50Mbps\"",
        "\"5Mbps\"",
        "\"0bps\"",
        "\"9e18bps\"",
    ]);
    let dur = pick(&["\"1ms\"", "\"200ms\"", "\"200ms\"", "\"1ns\"", "\"0s\""]);
    (0..11usize, pick(NUMS), pick(NUMS), size, rate, dur).prop_map(|(k, a, b, s, r, d)| {
        let (kind, params) = match k {
            0 => ("reno", format!("initial_window = {a}")),
            1 => ("cubic", format!("c = {a}, beta = {b}")),
            2 => ("dctcp", format!("g = {a}, initial_alpha = {b}")),
            3 => ("bbr", format!("high_gain = {a}, cwnd_gain = {b}")),
            4 => ("vegas", format!("alpha = {a}, beta = {b}")),
            5 => ("vegas-rem", format!("alpha = {a}, beta = {b}, phi = {a}")),
            6 => ("cbr", format!("rate = {r}, repeat = {d}")),
            7 => ("onoff", format!("mean_size = {s}, mean_off = {d}")),
            8 => (
                "monaco",
                format!("weight = {a}, target = {s}, initial_window = {s}"),
            ),
            9 => ("web", format!("users = {a}, think_time = {d}")),
            _ => ("warp-drive", String::new()),
        };
        format!("kind = \"{kind}\"\nparams = {{ {params} }}\n")
    })
}

fn scenario() -> impl Strategy<Value = String> {
    let duration = pick(&[
        "\"0.2s\"", "\"0.5s\"", "\"0.5s\"", "\"1s\"", "\"0.3s\"", "\"0.1s\"", "\"1ns\"", "\"0s\"",
        "\"-1s\"", "\"abc\"",
    ]);
    let rate = pick(&[
        "\"10Mbps\"",
        "\"10Mbps\"",
        "\"100Mbps\"",
        "\"1bps\"",
        "\"0bps\"",
        "\"9e18bps\"",
    ]);
    let delay = pick(&["\"1ms\"", "\"20ms\"", "\"5ms\"", "\"0s\"", "\"-1ms\""]);
    let count = pick(&["1", "2", "3", "0", "4294967295"]);
    let sample = pick(&["\"100ms\"", "\"10ms\"", "\"100us\"", "\"1ns\""]);
    (duration, rate, delay, queue(), count, flow(), sample).prop_map(
        |(duration, rate, delay, queue, count, flow, sample)| {
            format!(
                "name = \"fuzz\"\nduration = {duration}\n\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = {rate}\ndelay = {delay}\nqueue = {queue}\n\n[[flow]]\ncount = {count}\nid = \"f{{i}}\"\nfrom = \"a\"\nto = \"b\"\n{flow}\n[output]\nsample_interval = {sample}\n"
            )
        },
    )
}

#[test]
fn hostile_scenarios_are_refused_or_run_to_the_end() {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let accepted = std::sync::atomic::AtomicU32::new(0);
    let ran = std::sync::atomic::AtomicU32::new(0);
    runner
        .run(&scenario(), |text| {
            // Parsing and validation never panic (a panic fails the case).
            let Ok(sc) = acclab_scenario::parse(&text, "fuzz.toml") else {
                return Ok(());
            };
            accepted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let cost = acclab_sim::cost::estimate(&sc);
            prop_assert!(
                cost.events.is_finite() && cost.memory_bytes.is_finite(),
                "{cost:?}\n{text}"
            );
            if cost.events > 3e6 || cost.memory_bytes > 2e8 || cost.output_rows > 1e6 {
                return Ok(()); // `acclab run` would say so (and refuse above the machine)
            }
            // Runs to the end within a minute, with work bounded by its estimate.
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut sim = acclab_sim::Simulator::new(sc);
                sim.run(&mut |_| {});
                let _ = tx.send(sim.events_processed());
            });
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(events) => {
                    // The estimate sees what will cost (issue 55 §2): at least a tenth of the
                    // events the run took.
                    prop_assert!(
                        cost.events >= events as f64 / 10.0,
                        "{events} events, estimated {}:\n{text}",
                        cost.events
                    );
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    prop_assert!(false, "still running after 60 s:\n{text}")
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    prop_assert!(false, "the run panicked:\n{text}")
                }
            }
            ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    // The generator reaches both sides: many refused, enough accepted and run.
    let (accepted, ran) = (accepted.into_inner(), ran.into_inner());
    assert!(
        accepted >= CASES / 50,
        "only {accepted} of {CASES} accepted"
    );
    assert!(ran >= CASES / 100, "only {ran} of {CASES} run");
    eprintln!("{accepted} of {CASES} scenarios accepted, {ran} run");
}
