//! BBRv3 end to end (draft-ietf-ccwg-bbr, issue 53 §2), against BBR v1 on the same dumbbell:
//! v3's loss-learned bounds keep a shallow buffer's loss rate low where v1 ignores loss, and
//! in a deep buffer a single flow fills the link with a small queue, as v1 does.

use acclab_scenario::parse;

mod common;

/// What a run measured: per-flow throughput (Mb/s), the bottleneck's utilisation and mean
/// queue (packets), and the loss rate (lost packets over packets sent).
struct Run {
    rates: Vec<f64>,
    utilization: f64,
    queue: f64,
    loss: f64,
}

/// `n` flows of `kind` over a 20 Mb/s, 10 ms bottleneck with a `limit`-packet tail-drop
/// buffer (BDP ≈ 41 packets), measured over 20–60 s.
fn dumbbell(kind: &str, n: usize, limit: usize) -> Run {
    let bottleneck = format!(
        "rate = \"20Mbps\"\ndelay = \"10ms\"\nqueue = {{ kind = \"droptail\", limit = \"{limit}pkt\" }}"
    );
    let flows = format!(
        "[[flow]]\ncount = {n}\nid = \"f{{i}}\"\nkind = \"{kind}\"\nfrom = \"s{{i}}\"\nto = \"d{{i}}\"\nstart_jitter = \"1s\""
    );
    let sc = common::dumbbell(&bottleneck, 4, &flows, "60s", ("20s", "60s"), 1);
    let (_, s) = acclab_sim::run(parse(&sc, "bbr3.toml").unwrap(), &mut |_| {});
    let lost: u64 = s.flows.iter().map(|f| f.lost_packets).sum();
    let sent: u64 = s.flows.iter().map(|f| f.sent_bytes).sum();
    Run {
        rates: s.flows.iter().map(|f| f.throughput_bps / 1e6).collect(),
        utilization: s.links[0].utilization,
        queue: s.links[0].mean_queue_pkts,
        loss: lost as f64 * 1500.0 / sent as f64,
    }
}

/// draft-ietf-ccwg-bbr §1 (v3 "reduces loss in shallow buffers"; §4.5.10: inflight_hi and
/// the short-term bounds): four flows through a 10-packet buffer (a quarter BDP) lose less
/// than half as much as v1's (measured 3.3% against 9.3%) and still fill 95% of the link.
#[test]
fn in_a_shallow_buffer_bbr3_loses_far_less_than_v1() {
    let (v1, v3) = (dumbbell("bbr", 4, 10), dumbbell("bbr3", 4, 10));
    assert!(
        v3.loss < 0.5 * v1.loss,
        "loss v3 {:.4} v1 {:.4}",
        v3.loss,
        v1.loss
    );
    assert!(v3.utilization > 0.95, "utilisation {}", v3.utilization);
}

/// One flow in a deep (500-packet) buffer: the link full and the queue a few packets — the
/// model, not the buffer, sets the rate (measured 97.2%, 4 packets).
#[test]
fn one_bbr3_flow_fills_the_link_with_a_small_queue() {
    let r = dumbbell("bbr3", 1, 500);
    assert!(r.utilization > 0.95, "utilisation {}", r.utilization);
    assert!(r.queue < 15.0, "mean queue {} packets", r.queue);
    assert!(r.rates[0] > 19.0, "{:?}", r.rates);
}
