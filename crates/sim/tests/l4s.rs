//! L4S end to end (issue 53 §2): TCP Prague with Accurate ECN over the DualPI2 queue
//! (RFC 9332) beside a classic CUBIC flow, and Prague alone over a shallow step.

use std::sync::{Arc, Mutex};

use acclab_core::queue::Backlog;
use acclab_core::{Packet, Time};
use acclab_scenario::{parse, LinkId};
use acclab_sim::observe::{Observer, Transmit};
use acclab_sim::Simulator;

mod common;

/// Two senders over a 40 Mb/s, 10 ms bottleneck with `queue`; flows `a` and `b` (their kind
/// and params lines), `secs` long, measured over the last two thirds.
fn dumbbell(queue: &str, a: &str, b: &str, secs: u64) -> String {
    let flows = format!(
        "[[flow]]\nid = \"a\"\nfrom = \"s0\"\nto = \"d0\"\n{a}\n[[flow]]\nid = \"b\"\nfrom = \"s1\"\nto = \"d1\"\n{b}"
    );
    let bottleneck = format!("rate = \"40Mbps\"\ndelay = \"10ms\"\nqueue = {queue}");
    let (from, to) = (format!("{}s", secs / 3), format!("{secs}s"));
    common::dumbbell(&bottleneck, 2, &flows, &to, (&from, &to), 1)
}

/// The sojourn times at the bottleneck (link 0) in the window, of L4S and of classic packets.
#[derive(Clone, Default)]
struct Sojourns(Arc<Mutex<[(f64, u64); 2]>>);

impl Observer for Sojourns {
    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, _: Backlog) {
        if l.0 == 0 && now.as_secs_f64() > 40.0 {
            let mut s = self.0.lock().unwrap();
            let q = &mut s[usize::from(!p.ecn.is_l4s())];
            q.0 += tx.sojourn.as_secs_f64();
            q.1 += 1;
        }
    }
}

/// RFC 9332 §2.4 and §4: with k = 2 a scalable (Prague) and a classic (CUBIC) flow get about
/// equal rates, the L queue's delay stays under its 1 ms step, the classic queue's near its
/// 15 ms target, and the link stays full.
#[test]
fn dualpi2_shares_between_prague_and_cubic_with_low_l4s_delay() {
    let sc = dumbbell(
        r#"{ kind = "dualpi2" }"#,
        "kind = \"prague\"",
        "kind = \"cubic\"\nparams = { hystart = true }",
        120,
    );
    let soj = Sojourns::default();
    let mut sim = Simulator::new(parse(&sc, "l4s.toml").unwrap());
    sim.observe(Box::new(soj.clone()));
    sim.run(&mut |_| {});
    sim.finish_samples().unwrap();
    let s = acclab_sim::output::summary(&sim, 0.0);
    let (prague, cubic) = (s.flows[0].throughput_bps, s.flows[1].throughput_bps);
    let ratio = prague / cubic;
    // "Roughly equal": within 1.5× either way.
    assert!(
        (1.0 / 1.5..=1.5).contains(&ratio),
        "prague {prague}, cubic {cubic}"
    );
    assert!(s.links[0].utilization > 0.95, "{}", s.links[0].utilization);
    let q = *soj.0.lock().unwrap();
    let (l, c) = (q[0].0 / q[0].1 as f64, q[1].0 / q[1].1 as f64);
    assert!(l < 0.001, "L queue mean sojourn {l} s");
    assert!((c - 0.015).abs() < 0.004, "C queue mean sojourn {c} s");
    // Prague's packets were marked, never dropped; CUBIC's (not ECN-capable) dropped.
    assert_eq!(s.flows[0].lost_packets, 0);
    assert!(s.flows[1].lost_packets > 0);
}

/// Two flows below Prague's 25 ms reference RTT (base RTTs 4 and 20 ms) share a shallow
/// step-marked queue (5 packets, 1.5 ms): Prague, whose additive increase shrinks with RTT²
/// there, splits the link far more evenly than DCTCP, whose shares follow the RTTs
/// (draft-briscoe-iccrg-prague-congestion-control §2.3.5).
#[test]
fn prague_depends_less_on_the_rtt_than_dctcp() {
    let ratio = |kind: &str| {
        let sc = format!(
            r#"name = "rtt"
duration = "60s"
[defaults]
packet_size = "1500B"
[[link]]
between = ["r1", "r2"]
rate = "40Mbps"
delay = "1ms"
queue = {{ kind = "step-ecn", limit = "500pkt", threshold = "5pkt" }}
[[link]]
between = ["s0", "r1"]
rate = "1Gbps"
delay = "0ms"
[[link]]
between = ["s1", "r1"]
rate = "1Gbps"
delay = "8ms"
[[link]]
count = 2
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
count = 2
id = "f{{i}}"
kind = "{kind}"
from = "s{{i}}"
to = "d{{i}}"
[output]
window = ["20s", "60s"]
"#
        );
        let (_, s) = acclab_sim::run(parse(&sc, "rtt.toml").unwrap(), &mut |_| {});
        s.flows[0].throughput_bps / s.flows[1].throughput_bps
    };
    let (prague, dctcp) = (ratio("prague"), ratio("dctcp"));
    assert!(dctcp > 2.0, "dctcp short/long {dctcp}");
    assert!(prague < 1.5, "prague short/long {prague} (dctcp {dctcp})");
}
