//! The closed-loop QoS services end to end (003): expected minimum rates with accumulation
//! limits and weighted loops, simulated, against the theory's allocation.

use acclab_results::Summary;
use acclab_scenario::parse;

/// Monaco loops over one 100 Mb/s, 4 ms bottleneck with room for every accumulation; loop i has
/// parameters `params[i]` and joins over a 1 Gb/s link of one-way delay `delay_ms[i]`.
fn bottleneck(params: &[&str], delay_ms: &[u32], seconds: u32) -> String {
    let mut s = format!(
        r#"name = "qos"
duration = "{seconds}s"
[defaults]
queue = {{ kind = "priority", limit = "100000pkt" }}
[output]
window = ["{}s", "{seconds}s"]
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "4ms"
queue = {{ kind = "droptail", limit = "100000pkt", priority = true }}
"#,
        seconds / 2
    );
    for (i, (p, d)) in params.iter().zip(delay_ms).enumerate() {
        s.push_str(&format!(
            r#"
[[link]]
between = ["s{i}", "r1"]
rate = "1Gbps"
delay = "{d}ms"
[[link]]
between = ["r2", "d{i}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
id = "f{i}"
kind = "monaco"
from = "s{i}"
to = "d{i}"
params = {{ {p} }}
"#
        ));
    }
    s
}

fn run(src: &str) -> Summary {
    let sc = parse(src, "test").unwrap();
    let eq = acclab_theory::predict(&sc).unwrap();
    let (sim, mut s) = acclab_sim::run(sc, &mut |_| {});
    acclab_repro::common::attach_theory(sim.scenario(), Some(eq), &mut s);
    s
}

/// Measured and predicted throughput of flow `i`, Mb/s.
fn thr(s: &Summary, i: usize) -> (f64, f64) {
    let f = &s.flows[i];
    (
        f.throughput_bps / 1e6,
        f.theory.as_ref().unwrap().throughput_bps / 1e6,
    )
}

fn assert_close(what: &str, measured: f64, expected: f64, rel: f64) {
    assert!(
        (measured - expected).abs() <= rel * expected,
        "{what}: measured {measured:.4}, expected {expected:.4} (±{}%)",
        rel * 100.0
    );
}

/// 003 §IV-B's single bottleneck: loop 0 with `loop0` params, nine loops of a* = 3 KB.
fn fig4(loop0: &str) -> Summary {
    let mut params = vec![loop0];
    params.extend([""; 9]);
    let delays: Vec<u32> = (0..10).map(|i| 1 + 10 * i).collect();
    run(&bottleneck(&params, &delays, 60))
}

#[test]
fn an_expected_rate_below_the_limit_gets_r_plus_its_share() {
    // r = 50 Mb/s, A = 3000 KB: x0 = 50 + 50/10 = 55 Mb/s.
    let s = fig4(r#"expected_rate = "50Mbps", limit = "3000KB""#);
    let (x0, t0) = thr(&s, 0);
    assert_close("theory", t0, 55.0, 1e-6);
    assert_close("loop 0", x0, t0, 0.03);
    assert!(!s.flows.iter().any(|f| f.lost_packets > 0));
}

#[test]
fn an_expected_rate_beyond_the_limit_degrades_to_weight_a_over_a_star() {
    // r = 50 Mb/s but A = 15 KB: the limit binds and loop 0 is a weight-5 loop against nine of
    // weight 1: 100·15/(15 + 27) = 35.7 Mb/s, whatever r asks.
    let s = fig4(r#"expected_rate = "50Mbps", limit = "15KB""#);
    let (x0, t0) = thr(&s, 0);
    assert_close("theory", t0, 100.0 * 15.0 / 42.0, 1e-6);
    assert_close("loop 0", x0, t0, 0.03);
    // Its accumulation sits at the limit (within a packet).
    let a = s.flows[0].mean_accumulation_bytes.unwrap();
    assert!((a - 15_000.0).abs() <= 1000.0, "accumulation {a}");
}

#[test]
fn weighted_loops_share_in_proportion_to_their_weights() {
    // Two loops on the same path, weights w and 1: ratio w within 3%.
    for w in [1, 10, 100, 1000] {
        let p0 = format!("weight = {w}");
        let s = run(&bottleneck(&[&p0, ""], &[5, 5], 60));
        let ratio = s.flows[0].throughput_bps / s.flows[1].throughput_bps;
        assert_close(&format!("w = {w}: ratio"), ratio, w as f64, 0.03);
    }
}

#[test]
fn oversubscription_starves_no_loop_and_matches_the_theory() {
    // Expected 60 + 50 Mb/s on a 100 Mb/s link, limits 30 KB and 60 KB, plus two plain loops of
    // a* = 3 KB. Loop 0 hits its limit (weight 30 KB, r = 0); with it degraded loop 1's 50 Mb/s
    // fits: price q with 30/q + 50 + 3/q + 2·3/q = 100 (KB and Mb/s), q = 0.78 ms, and loop 1's
    // accumulation 50·0.78 + 3 = 42 KB stays under its 60 KB.
    let s = run(&bottleneck(
        &[
            r#"expected_rate = "60Mbps", limit = "30KB""#,
            r#"expected_rate = "50Mbps", limit = "60KB""#,
            "",
            "",
        ],
        &[5, 20, 10, 40],
        60,
    ));
    for i in 0..4 {
        let (x, t) = thr(&s, i);
        assert!(x > 1.0, "loop {i} starves: {x} Mb/s");
        assert_close(&format!("loop {i}"), x, t, 0.05);
    }
    let (t0, t1) = (thr(&s, 0).1, thr(&s, 1).1);
    assert_close("theory, loop 0", t0, 30.0 / 0.78, 1e-6);
    assert_close("theory, loop 1", t1, 50.0 + 3.0 / 0.78, 1e-6);
}
