//! CBR over a slower link loses exactly what queueing arithmetic says.

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
}
