//! Simulated Vegas against the NUM prediction: PF and WPF, single link and parking lot, with
//! baseRTT fixed at each flow's true propagation delay (so the model's d is exact).

use acclab_core::config::{BaseRttParam, SchemeConfig};
use acclab_core::Duration;
use acclab_scenario::parse;
use acclab_theory::equilibrium::propagation_delay;

/// Four Vegas flows with different RTTs on a 100 Mb/s link; `per` is "rtt" (PF) or a duration
/// (WPF). Rates large enough that one-packet window steps are small against the windows.
fn single_link(per: &str) -> String {
    let mut s = String::from(
        "name = \"single\"\nduration = \"24s\"\n[[link]]\nbetween = [\"r1\", \"r2\"]\nrate = \"100Mbps\"\ndelay = \"4ms\"\nqueue = { kind = \"droptail\", limit = \"inf\" }\n[[link]]\nbetween = [\"r2\", \"d\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n",
    );
    for (i, ms) in [1, 3, 8, 15].iter().enumerate() {
        s += &format!(
            "[[link]]\nbetween = [\"s{i}\", \"r1\"]\nrate = \"1Gbps\"\ndelay = \"{ms}ms\"\n[[flow]]\nid = \"v{i}\"\nkind = \"vegas\"\nfrom = \"s{i}\"\nto = \"d\"\nparams = {{ alpha = 3, beta = 3, per = \"{per}\" }}\n"
        );
    }
    s + "[output]\nwindow = [\"12s\", \"24s\"]\n"
}

/// Two 50 Mb/s links in a row; a long flow over both and one short flow per link.
fn parking_lot(per: &str) -> String {
    let mut s = String::from("name = \"parking\"\nduration = \"24s\"\n");
    for (a, b) in [("r1", "r2"), ("r2", "r3")] {
        s += &format!("[[link]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"50Mbps\"\ndelay = \"3ms\"\nqueue = {{ kind = \"droptail\", limit = \"inf\" }}\n");
    }
    for (h, r, ms) in [
        ("l", "r1", 2),
        ("ld", "r3", 2),
        ("a", "r1", 1),
        ("ad", "r2", 1),
        ("b", "r2", 6),
        ("bd", "r3", 1),
    ] {
        s += &format!(
            "[[link]]\nbetween = [\"{h}\", \"{r}\"]\nrate = \"1Gbps\"\ndelay = \"{ms}ms\"\n"
        );
    }
    for (id, from, to) in [
        ("long", "l", "ld"),
        ("short1", "a", "ad"),
        ("short2", "b", "bd"),
    ] {
        s += &format!("[[flow]]\nid = \"{id}\"\nkind = \"vegas\"\nfrom = \"{from}\"\nto = \"{to}\"\nparams = {{ alpha = 2, beta = 2, per = \"{per}\" }}\n");
    }
    s + "[output]\nwindow = [\"12s\", \"24s\"]\n"
}

/// Runs `src` with every Vegas flow's baseRTT fixed at its true propagation delay and checks
/// each flow's throughput against the prediction within `tol`.
fn check(src: &str, tol: f64) {
    let mut sc = parse(src, "test").unwrap();
    let delays: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| propagation_delay(&sc, &f))
        .collect();
    for (f, &d) in sc.flows.written_mut().iter_mut().zip(&delays) {
        if let SchemeConfig::Vegas(p) = &mut f.scheme {
            p.base_rtt = BaseRttParam::Fixed(Duration::from_secs_f64(d));
        }
    }
    let eq = acclab_theory::predict(&sc).unwrap();
    let packet_bits = f64::from(sc.packet_size) * 8.0;
    let (_, summary) = acclab_sim::run(sc, &mut |_| {});
    for ((f, p), base_rtt) in summary.flows.iter().zip(&eq.flows).zip(&delays) {
        let p = p.as_ref().expect("every flow is in the domain");
        let err = (f.throughput_bps - p.throughput_bps).abs() / p.throughput_bps;
        // A Vegas window moves a packet at a time, and with α = β it dithers by one, spending
        // its time on either side as the order of equal-time events has it: a flow is within
        // `tol` or 1.5 window steps (a step: a packet per base round trip over its predicted
        // rate, 2.7% for the 12 ms flow of the single link), whichever is larger. Measured:
        // that flow 3.64% (1.36 steps) above since arrivals have keys of their own
        // (2026-11-28), within 3% before; every other flow within 3%.
        let tol = tol.max(1.5 * packet_bits / (p.throughput_bps * base_rtt));
        assert!(
            err <= tol,
            "{}: measured {:.4} Mb/s, predicted {:.4} Mb/s ({:.2}% off)",
            f.id,
            f.throughput_bps / 1e6,
            p.throughput_bps / 1e6,
            100.0 * err
        );
        assert_eq!(f.lost_packets, 0, "unlimited buffers: no loss");
    }
    for (l, p) in summary.links.iter().zip(&eq.links) {
        if p.queue_pkts > 1.0 {
            let err = (l.mean_queue_pkts - p.queue_pkts).abs() / p.queue_pkts;
            assert!(
                err <= 0.15,
                "{}: mean queue {:.2} vs predicted {:.2}",
                l.id,
                l.mean_queue_pkts,
                p.queue_pkts
            );
        }
    }
}

#[test]
fn pf_single_link() {
    check(&single_link("rtt"), 0.03);
}

#[test]
fn wpf_single_link() {
    check(&single_link("10ms"), 0.03);
}

/// (The long flow's mean rate is where its window, dithering by a packet around α = β, spends
/// its time, which the order of equal-time events moves: within 3% of the prediction under
/// insertion order, 3.8% below under the first partition-independent tie rule, within 3% again
/// since arrivals have keys of their own — docs/performance.md, "The tie rule".)
#[test]
fn pf_parking_lot() {
    check(&parking_lot("rtt"), 0.03);
}

#[test]
fn wpf_parking_lot() {
    check(&parking_lot("10ms"), 0.03);
}
