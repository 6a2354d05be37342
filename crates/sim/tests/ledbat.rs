//! LEDBAT end to end (RFC 6817, issue 53 §2): alone it fills the link with a standing queue of
//! about TARGET (100 ms); beside Reno it yields (less than best effort).

use acclab_scenario::parse;

mod common;

/// LEDBAT from s0 over a 10 Mb/s, 20 ms bottleneck with a 500-packet buffer (600 ms); a Reno
/// flow from s1 starting at `reno_start`; measured over `window`.
fn scenario(reno_start: &str, window: (&str, &str)) -> String {
    let flows = format!(
        "[[flow]]\nid = \"ledbat\"\nkind = \"ledbat\"\nfrom = \"s0\"\nto = \"d0\"\n\
         [[flow]]\nid = \"reno\"\nkind = \"reno\"\nfrom = \"s1\"\nto = \"d1\"\nstart = \"{reno_start}\""
    );
    let bottleneck =
        "rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = { kind = \"droptail\", limit = \"500pkt\" }";
    common::dumbbell(bottleneck, 2, &flows, "120s", window, 1)
}

#[test]
fn ledbat_alone_holds_its_target_delay_and_yields_to_reno() {
    // Alone (Reno starts after the window): the standing queue is TARGET, within 15%.
    let (_, s) = acclab_sim::run(
        parse(&scenario("100s", ("30s", "90s")), "l.toml").unwrap(),
        &mut |_| {},
    );
    let link = &s.links[0];
    let queueing = link.mean_queue_pkts * 1500.0 * 8.0 / 10e6;
    assert!(
        (queueing - 0.100).abs() < 0.015,
        "queueing delay {queueing} s"
    );
    assert!(link.utilization > 0.95, "{}", link.utilization);
    // Beside Reno (from 30 s): LEDBAT backs off to under 5% of the link.
    let (_, s) = acclab_sim::run(
        parse(&scenario("30s", ("60s", "120s")), "l.toml").unwrap(),
        &mut |_| {},
    );
    let (ledbat, reno) = (s.flows[0].throughput_bps, s.flows[1].throughput_bps);
    assert!(ledbat < 0.05 * 10e6, "ledbat {ledbat} beside reno {reno}");
    assert!(reno > 0.9 * 10e6, "reno {reno}");
}
