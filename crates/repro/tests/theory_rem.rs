//! REM end to end (002 §5): Vegas+REM sources drive the REM link price to the price of the
//! network utility maximisation problem, while the queue stays near empty.

use acclab_scenario::parse;

/// `n` Vegas+REM flows (α = β = 2 packets per ms) over one 48 Mb/s REM link with the setting of
/// 002 §6.3 (φ 1.1, μ 0.5, γ 0.005, 1 ms period).
fn rem_bottleneck(n: usize) -> String {
    format!(
        r#"name = "rem"
duration = "60s"
[[link]]
between = ["r1", "r2"]
rate = "48Mbps"
delay = "4ms"
queue = {{ kind = "rem", limit = "inf", phi = 1.1, mu = 0.5, gamma = 0.005, interval = "1ms" }}
[[link]]
count = {n}
between = ["s{{i}}", "r1"]
rate = "1600Mbps"
delay = "1ms"
[[link]]
count = {n}
between = ["r2", "d{{i}}"]
rate = "1600Mbps"
delay = "0.5ms"
[[flow]]
count = {n}
id = "v{{i}}"
kind = "vegas-rem"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "1s"
params = {{ alpha = 2, beta = 2, per = "1ms", phi = 1.1 }}
[output]
window = ["30s", "60s"]
"#
    )
}

#[test]
fn rem_price_converges_to_the_num_price() {
    let sc = parse(&rem_bottleneck(4), "rem").unwrap();
    let eq = acclab_theory::predict(&sc).unwrap();
    let (sim, s) = acclab_sim::run(sc, &mut |_| {});
    let m = sim.monitor();
    let k = m.aqm_columns.iter().position(|c| c == "rem_price").unwrap();
    let prices: Vec<f64> = m
        .link_samples
        .iter()
        .filter(|x| x.link == 0 && x.t_s > 30.0)
        .filter_map(|x| x.aqm[k])
        .collect();
    let measured = prices.iter().sum::<f64>() / prices.len() as f64;
    // The theory's price is in seconds (x·p = α·d with x in packets/s); REM counts rates per
    // 1 ms period (002 eq. 30), so its price is the NUM price × 1000.
    let predicted = eq.links[0].price_s * 1e3;
    let link = &s.links[0];
    // The sources' own equilibrium x_s·p = α_s·d_s at the rates they achieved (packets per ms,
    // 1000-byte packets): REM's price is the one they respond to.
    let implied: Vec<f64> = eq
        .flows
        .iter()
        .zip(&s.flows)
        .map(|(p, f)| p.as_ref().unwrap().weight_pkts / (f.throughput_bps / 8e3 / 1e3))
        .collect();
    eprintln!("REM price {measured:.3}, sources {implied:.3?}, NUM {predicted:.3}, utilisation {:.3}, queue {:.2}", link.utilization, link.mean_queue_pkts);
    for p in &implied {
        assert!(
            (measured - p).abs() / p < 0.03,
            "REM price {measured} vs the sources' {p}"
        );
    }
    // Against the NUM optimum the price is high by about the utilisation shortfall (p ∝ 1/x).
    assert!(
        (measured - predicted).abs() / predicted < 0.10,
        "REM price {measured} vs NUM price {predicted}"
    );
    assert!(link.utilization >= 0.90, "utilisation {}", link.utilization);
    assert!(
        link.mean_queue_pkts < 5.0,
        "mean queue {}",
        link.mean_queue_pkts
    );
}
