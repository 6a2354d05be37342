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
    let delays: Vec<f64> = sc.flows.iter().map(|f| propagation_delay(&sc, f)).collect();
    for (f, d) in sc.flows.iter_mut().zip(delays) {
        if let SchemeConfig::Vegas(p) = &mut f.scheme {
            p.base_rtt = BaseRttParam::Fixed(Duration::from_secs_f64(d));
        }
    }
    let eq = acclab_theory::predict(&sc).unwrap();
    let (_, summary) = acclab_sim::run(sc, &mut |_| {});
    for (f, p) in summary.flows.iter().zip(&eq.flows) {
        let p = p.as_ref().expect("every flow is in the domain");
        let err = (f.throughput_bps - p.throughput_bps).abs() / p.throughput_bps;
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

/// Within 5%, not the 3% of the others: the long flow's mean rate is where its window, dithering
/// by a packet around α = β, spends its time, which exact ties move — within 3% of the
/// prediction when equal-time events ran in insertion order, 3.8% below under today's tie rule
/// (docs/performance.md, "The tie rule"); at 100 Mb/s, twice the window, still 3.6%, so it is
/// not the window's granularity alone. Not explained further yet.
#[test]
fn pf_parking_lot() {
    check(&parking_lot("rtt"), 0.05);
}

#[test]
fn wpf_parking_lot() {
    check(&parking_lot("10ms"), 0.03);
}
