//! CBR over a slower link loses exactly what queueing arithmetic says, and its one-way delays
//! are what the path and the queue make them.

use acclab_scenario::parse;

#[test]
fn cbr_losses_match_the_arithmetic() {
    // A 10 Mb/s CBR source (1000 B every 0.8 ms) feeds a 3 Mb/s link (one packet every
    // ⌈8000/3e6 s⌉ = 2 666 667 ns) with a 20-packet DropTail buffer, for 10 s. Arrival and
    // departure times never coincide (gcd(800 000, 2 666 667) = 1), so there are no ties.
    let buffer: u64 = 20;
    let src = format!(
        r#"name = "cbr-loss"
duration = "12s"
[[link]]
from = "a"
to = "b"
rate = "3Mbps"
delay = "1ms"
queue = {{ kind = "droptail", limit = "{buffer}pkt" }}
[[flow]]
id = "udp"
kind = "cbr"
from = "a"
to = "b"
stop = "10s"
params = {{ rate = "10Mbps" }}
"#
    );
    let (_, s) = acclab_sim::run(parse(&src, "cbr").unwrap(), &mut |_| {});
    let arrival_gap: u64 = 800_000;
    let service: u64 = (8000u64 * 1_000_000_000).div_ceil(3_000_000);
    let sent = (10_000_000_000u64).div_ceil(arrival_gap); // arrivals at k·gap < 10 s
    let last_arrival = (sent - 1) * arrival_gap;
    // Once the buffer is full it stays full: each departure before the last arrival frees one
    // place that the next arrival takes. Accepted = one in service + a full buffer + those.
    let departures_before_last = (last_arrival - 1) / service;
    let accepted = 1 + buffer + departures_before_last;
    let f = &s.flows[0];
    assert_eq!(f.sent_bytes, sent * 1000);
    assert_eq!(f.lost_packets, sent - accepted);
    assert_eq!(
        f.delivered_bytes,
        accepted * 1000,
        "everything accepted drains by 12 s"
    );
    assert_eq!(s.links[0].drops, sent - accepted);
    // With the buffer full, a packet accepted waits for the one in service and the 20 ahead,
    // then its own transmission: 1 ms + 21 services at the median and the 99th percentile
    // (the histogram's 0.8%), however the in-service one's remainder falls.
    let d = f.one_way_delay.expect("delays measured");
    let full = (1_000_000 + (buffer + 1) * service) as f64 * 1e-9;
    assert!((d.p99_s / full - 1.0).abs() < 0.01, "{} vs {full}", d.p99_s);
    assert!((d.p50_s / full - 1.0).abs() < 0.02, "{} vs {full}", d.p50_s);
    // The link's own view (issue 54 §5): each packet it sent waited for the 20 ahead of it,
    // less what the one in service had left, so its sojourn is 20 services at most and above 19.
    let q = s.links[0].queueing_delay.expect("sojourns measured");
    let (most, least) = (20 * service, 19 * service);
    // Busy from the first arrival, the link starts its k-th transmission at k services: the
    // window (6–12 s) holds those from ⌈6 s / service⌉ to the last accepted.
    assert_eq!(q.packets, accepted - 6_000_000_000u64.div_ceil(service));
    assert_eq!(q.unqueued, 0);
    for p in [q.p50_s, q.p95_s, q.p99_s, Some(q.mean_s)].map(Option::unwrap) {
        assert!(
            p <= most as f64 * 1e-9 * 1.008 && p > least as f64 * 1e-9,
            "{p}"
        );
    }
}

/// Alone on an idle path, every datagram takes the same time: the links' delays plus its
/// transmission on each (store and forward), 1 ms + 0.8 ms + 2 ms + 1.6 ms = 5.4 ms, with no
/// jitter (RFC 3550's J stays 0), mean exact and percentiles within the histogram's 0.8%.
#[test]
fn an_idle_paths_one_way_delay_is_propagation_plus_serialisation() {
    let src = r#"name = "owd"
duration = "2s"
[[link]]
between = ["a", "r"]
rate = "10Mbps"
delay = "1ms"
[[link]]
between = ["r", "b"]
rate = "5Mbps"
delay = "2ms"
[[flow]]
id = "udp"
kind = "cbr"
from = "a"
to = "b"
params = { rate = "2Mbps" }
"#;
    let (sim, s) = acclab_sim::run(parse(src, "owd").unwrap(), &mut |_| {});
    let d = s.flows[0].one_way_delay.expect("delays measured");
    assert!(d.packets > 100);
    // The histogram (delays.csv's rows): every packet in the one bucket that holds 5.4 ms.
    let bins = sim.monitor().delay_histogram(0);
    assert_eq!(bins.len(), 1, "{bins:?}");
    assert!(bins[0].from_ns <= 5_400_000 && 5_400_000 < bins[0].to_ns);
    assert_eq!(u64::from(bins[0].packets), d.packets);
    assert!((d.mean_s - 5.4e-3).abs() < 1e-12, "{}", d.mean_s);
    for p in [d.p50_s, d.p99_s] {
        assert!((p / 5.4e-3 - 1.0).abs() < 0.008, "{p}");
    }
    assert_eq!(d.jitter_s, 0.0);
    // Nothing queues on an idle path: every packet sent in the window left at once.
    for l in &s.links {
        if let Some(q) = l.queueing_delay {
            assert_eq!(
                (q.unqueued, q.p99_s, q.mean_s),
                (q.packets, Some(0.0), 0.0),
                "{}",
                l.id
            );
        }
    }
    assert!(s.links[0].queueing_delay.is_some_and(|q| q.packets > 100));
}
