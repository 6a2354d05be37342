//! Links as measured, end to end (issue 53 §1): capacity that follows a trace in Mahimahi's
//! format, Gilbert–Elliott loss, jitter with and without reordering.

use std::path::Path;
use std::sync::{Arc, Mutex};

use acclab_core::link::CapacityTrace;
use acclab_core::{Packet, PacketKind, Time};
use acclab_scenario::parse;
use acclab_sim::observe::Observer;
use acclab_sim::Simulator;

/// A file `name` with `text` in `dir`, its path as a TOML string.
fn file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A random trace of `n` opportunities per period over `period_ms`, some instants repeated.
fn random_trace(n: usize, period_ms: u64, seed: u64) -> String {
    let mut x = seed;
    let mut t: Vec<u64> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % period_ms + 1
        })
        .collect();
    t.push(period_ms);
    t.sort_unstable();
    t.iter().map(|v| format!("{v}\n")).collect()
}

/// One CBR flow a -> b at `cbr`, over a 10 Gb/s access link then the link `r -> b` of rate
/// `rate` (a TOML value), delay `delay` and the keys `extra`, for `secs` seconds; the window is
/// the whole run.
fn one_link(rate: &str, delay: &str, extra: &str, cbr: &str, packet: u32, secs: u64) -> String {
    format!(
        r#"name = "links"
duration = "{secs}s"
[defaults]
packet_size = "{packet}B"
[[link]]
from = "a"
to = "r"
rate = "10Gbps"
delay = "0ms"
[[link]]
from = "r"
to = "a"
rate = "10Gbps"
delay = "0ms"
[[link]]
from = "r"
to = "b"
rate = {rate}
delay = "{delay}"
queue = {{ kind = "droptail", limit = "100000pkt" }}
{extra}
[[link]]
from = "b"
to = "r"
rate = "10Gbps"
delay = "0ms"
[[flow]]
id = "f"
kind = "cbr"
from = "a"
to = "b"
params = {{ rate = "{cbr}" }}
[output]
window = ["0s", "{secs}s"]
"#
    )
}

#[test]
fn a_constant_trace_of_one_opportunity_per_millisecond_carries_12_mbps() {
    let dir = tempfile::tempdir().unwrap();
    let trace = file(dir.path(), "one.ms", "1\n");
    let sc = one_link(
        &format!("{{ trace = {trace:?} }}"),
        "0ms",
        "",
        "20Mbps",
        1500,
        10,
    );
    let (_, s) = acclab_sim::run(parse(&sc, "t.toml").unwrap(), &mut |_| {});
    let link = s.links.iter().find(|l| l.id == "r->b").unwrap();
    assert_eq!(link.rate_bps, 12_000_000, "the trace's mean capacity");
    // 10 s of one 1500-byte packet per millisecond: 10,000 packets, less the one whose
    // opportunity is at the very end.
    let got = s.flows[0].delivered_bytes;
    assert!(
        (9_999 * 1500..=10_000 * 1500).contains(&got),
        "delivered {got} B"
    );
    assert!(
        (link.utilization - 1.0).abs() < 1e-3,
        "{}",
        link.utilization
    );
}

/// The bytes a saturating CBR flow gets through a trace link by the end of the run: every
/// opportunity after its first packet reached the link, × 1500 B, within one packet — for
/// packets of a full opportunity, of less (several per opportunity) and of more (spanning two).
#[test]
fn a_saturating_flow_gets_every_opportunity_and_the_trace_wraps() {
    let dir = tempfile::tempdir().unwrap();
    // A period of 250 ms, run for 3 s: the trace repeats twelve times.
    let text = random_trace(400, 250, 7);
    let trace = CapacityTrace::parse(&text).unwrap();
    let path = file(dir.path(), "random.down", &text);
    for packet in [1500u32, 1000, 600, 3000] {
        let sc = one_link(
            &format!("{{ trace = {path:?} }}"),
            "0ms",
            "",
            "100Mbps",
            packet,
            3,
        );
        let (_, s) = acclab_sim::run(parse(&sc, "t.toml").unwrap(), &mut |_| {});
        // The first packet reaches the trace link after its 10 Gb/s hop.
        let first = Time(u64::from(packet) * 8 / 10);
        let end = Time::from_secs_f64(3.0);
        let offered = trace.bytes_by(end) - trace.bytes_by(first);
        let got = s.flows[0].delivered_bytes;
        assert!(
            got <= offered && offered - got < u64::from(packet),
            "{packet} B packets: delivered {got} B of {offered} B offered"
        );
    }
}

#[test]
fn up_and_down_follow_their_own_traces() {
    let dir = tempfile::tempdir().unwrap();
    let down = file(dir.path(), "x.down", "1\n"); // 12 Mb/s
    let up = file(dir.path(), "x.up", "0\n3\n"); // 2 opportunities per 3 ms: 8 Mb/s
    let sc = format!(
        r#"name = "duplex"
duration = "5s"
[defaults]
packet_size = "1500B"
[[link]]
from = "bs"
to = "ue"
rate = {{ trace = {down:?} }}
delay = "10ms"
[[link]]
from = "ue"
to = "bs"
rate = {{ trace = {up:?} }}
delay = "10ms"
[[flow]]
id = "down"
kind = "cbr"
from = "bs"
to = "ue"
params = {{ rate = "30Mbps" }}
[[flow]]
id = "up"
kind = "cbr"
from = "ue"
to = "bs"
params = {{ rate = "30Mbps" }}
[output]
window = ["1s", "5s"]
"#
    );
    let (_, s) = acclab_sim::run(parse(&sc, "duplex.toml").unwrap(), &mut |_| {});
    let rate = |id: &str| s.flows.iter().find(|f| f.id == id).unwrap().received_bps;
    assert!(
        (rate("down") - 12e6).abs() < 0.01e6,
        "down {}",
        rate("down")
    );
    assert!((rate("up") - 8e6).abs() < 0.01e6, "up {}", rate("up"));
}

#[test]
fn gilbert_elliott_loses_its_stationary_fraction_end_to_end() {
    let ge = r#"loss = { model = "gilbert-elliott", p = 0.02, r = 0.25, loss_bad = 0.8, loss_good = 0.001 }"#;
    let sc = one_link("\"100Mbps\"", "0ms", ge, "50Mbps", 1000, 20);
    let (_, s) = acclab_sim::run(parse(&sc, "ge.toml").unwrap(), &mut |_| {});
    let link = s.links.iter().find(|l| l.id == "r->b").unwrap();
    let offered = link.random_losses + link.transmitted_packets;
    let rate = link.random_losses as f64 / offered as f64;
    let stationary = (0.25 * 0.001 + 0.02 * 0.8) / 0.27;
    // 125,000 packets: a bursty chain's mean is within a few percent.
    assert!(
        (rate - stationary).abs() < 0.05 * stationary,
        "loss {rate} vs stationary {stationary}"
    );
}

/// Records the order each flow's data packets arrive in.
#[derive(Clone, Default)]
struct Order(Arc<Mutex<(u64, u64, u64)>>); // (last seq, arrivals, arrivals out of order)

impl Observer for Order {
    fn on_deliver(&mut self, _: Time, p: &Packet) {
        if p.kind == PacketKind::Data {
            let mut o = self.0.lock().unwrap();
            o.1 += 1;
            if o.1 > 1 && p.seq < o.0 {
                o.2 += 1;
            }
            o.0 = p.seq;
        }
    }
}

fn jittered(reorder: bool) -> (u64, u64, f64) {
    let jitter =
        format!(r#"jitter = {{ amount = "5ms", distribution = "normal", reorder = {reorder} }}"#);
    let sc = one_link("\"100Mbps\"", "20ms", &jitter, "10Mbps", 1000, 5);
    let order = Order::default();
    let mut sim = Simulator::new(parse(&sc, "j.toml").unwrap());
    sim.observe(Box::new(order.clone()));
    sim.run(&mut |_| {});
    sim.finish_samples().unwrap();
    let s = acclab_sim::output::summary(&sim, 0.0);
    let o = *order.0.lock().unwrap();
    let delay = s.flows[0].one_way_delay.as_ref().unwrap().mean_s;
    (o.1, o.2, delay)
}

#[test]
fn jitter_without_reordering_never_reorders_and_with_it_does() {
    let (n, out_of_order, mean) = jittered(false);
    assert!(n > 6000, "{n} packets");
    assert_eq!(out_of_order, 0);
    // Held behind the packet ahead, packets wait a little longer than the mean draw.
    assert!(mean > 0.0195, "mean one-way delay {mean}");
    let (n, out_of_order, mean) = jittered(true);
    // 1250 packets a second 5 ms apart in σ: most overtake or are overtaken.
    assert!(out_of_order > n / 10, "{out_of_order} of {n} out of order");
    // The mean of the draws (zero-mean) plus the 0.8 µs of serialisation per hop.
    assert!((mean - 0.020).abs() < 0.0005, "mean one-way delay {mean}");
}

/// A delay trace: the link's delay is 10 ms, then 50 ms from 1 s, then 5 ms from 2 s; a CBR
/// flow's one-way delay follows it (its other hop adds 1.2 µs of serialisation), and the
/// scenario's `delay` for the theory is the trace's mean over the run.
#[test]
fn a_delay_trace_sets_the_links_delay_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let trace = file(dir.path(), "d.txt", "0 10\n1000 50\n2000 5\n");
    let owd = |window: &str| {
        let sc = one_link("\"100Mbps\"", "0ms", "", "1Mbps", 1500, 3)
            .replacen(
                "delay = \"0ms\"\nqueue",
                &format!("delay = {{ trace = {trace:?} }}\nqueue"),
                1,
            )
            .replace("window = [\"0s\", \"3s\"]", &format!("window = {window}"));
        let sc = parse(&sc, "d.toml").unwrap();
        // (10 + 50 + 5) ms / 3, rounded down to the nanosecond.
        assert_eq!(sc.links[2].delay, acclab_core::Duration(21_666_666));
        let (_, s) = acclab_sim::run(sc, &mut |_| {});
        s.flows[0].one_way_delay.unwrap().mean_s
    };
    for (window, want) in [
        (r#"["0.1s", "0.9s"]"#, 0.010),
        (r#"["1.2s", "1.9s"]"#, 0.050),
        (r#"["2.2s", "2.9s"]"#, 0.005),
    ] {
        let got = owd(window);
        assert!(
            (got - want).abs() < 0.0002,
            "{window}: {got} s, want {want}"
        );
    }
}
