//! PCC Vivace end to end ([Dong18], issue 53 §2): flows that start apart converge to fair
//! shares of the link, and random loss barely moves the rate (the loss
//! term's c = 11.35 tolerates a few percent), where CUBIC collapses.

use acclab_scenario::parse;

mod common;

/// `flows` over a 20 Mb/s, 10 ms bottleneck (500-packet buffer, `loss` random loss), hosts
/// s{i} → d{i} at 1 Gb/s, measured over 60–90 s.
fn dumbbell(flows: &str, loss: f64, seed: u64) -> Vec<f64> {
    let bottleneck = format!(
        "rate = \"20Mbps\"\ndelay = \"10ms\"\nloss = {loss}\nqueue = {{ kind = \"droptail\", limit = \"500pkt\" }}"
    );
    let sc = common::dumbbell(&bottleneck, 4, flows, "90s", ("60s", "90s"), seed);
    let (_, s) = acclab_sim::run(parse(&sc, "vivace.toml").unwrap(), &mut |_| {});
    s.flows.iter().map(|f| f.throughput_bps / 1e6).collect()
}

/// [Dong18] §4 (Theorem 1: the utility's game has a unique, fair equilibrium that gradient
/// ascent reaches): four flows started at random times within 10 s share 20 Mb/s with a Jain
/// index of at least 0.95 (measured 0.964–0.984: the probes keep the shares moving) and fill
/// at least 97% of it, on each of three seeds.
#[test]
fn four_vivace_flows_converge_to_fair_shares() {
    for seed in 1..=3 {
        let x = dumbbell(
            "[[flow]]\ncount = 4\nid = \"v{i}\"\nkind = \"vivace\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nstart_jitter = \"10s\"",
            0.0,
            seed,
        );
        let sum: f64 = x.iter().sum();
        let jain = acclab_results::summary::jain(&x).unwrap();
        assert!(jain >= 0.95, "seed {seed}: Jain {jain:.3} over {x:?}");
        assert!(
            sum >= 0.97 * 20.0,
            "seed {seed}: {sum:.2} Mb/s of 20 ({x:?})"
        );
    }
}

/// [Dong18] §5 (random loss): at 1% random loss one Vivace flow keeps more than 85% of the
/// link; CUBIC, halving at every loss, keeps less than half.
#[test]
fn vivace_keeps_the_link_under_random_loss_where_cubic_does_not() {
    let one = |kind: &str| {
        dumbbell(
            &format!("[[flow]]\nid = \"f\"\nkind = \"{kind}\"\nfrom = \"s0\"\nto = \"d0\""),
            0.01,
            1,
        )[0]
    };
    let (vivace, cubic) = (one("vivace"), one("cubic"));
    assert!(vivace > 0.85 * 20.0, "vivace {vivace:.2} Mb/s at 1% loss");
    assert!(cubic < 0.5 * 20.0, "cubic {cubic:.2} Mb/s at 1% loss");
}
