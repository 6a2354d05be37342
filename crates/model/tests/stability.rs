//! The stability boundary of ACC-P's delayed loop (stability.rs): the κ_max the linearised model
//! gives, against the closed form, the model's own trajectories and the packet simulation.

use std::path::PathBuf;

use acclab_core::config::SchemeConfig;
use acclab_model::stability::{self, Linearised};
use acclab_model::Settings;
use acclab_scenario::Scenario;

fn load(rel: &str) -> Scenario {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    acclab_scenario::load(&root.join(rel)).unwrap()
}

/// Two ACC-P loops of weight 5 (a* = 15 packets each) sharing a 20 Mb/s bottleneck, 38 ms of
/// propagation RTT: the standing queue is a quarter of the RTT.
fn dumbbell() -> Scenario {
    let text = r#"
name = "stability-dumbbell"
duration = "40s"
[defaults]
queue = { kind = "priority", limit = "1000pkt" }
[output]
window = ["20s", "40s"]
sample_interval = "10ms"
[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "15ms"
[[link]]
between = ["a", "r1"]
rate = "1Gbps"
delay = "2ms"
[[link]]
between = ["r2", "c"]
rate = "1Gbps"
delay = "2ms"
[[flow]]
count = 2
id = "f{i}"
kind = "monaco"
from = "a"
to = "c"
params = { weight = 5 }
"#;
    acclab_scenario::parse(text, "stability-dumbbell.toml").unwrap()
}

/// `sc` with every Monaco flow's κ set to `kappa`, a 40 s run measured over its second half and
/// samples every 10 ms.
fn with_kappa(sc: &Scenario, kappa: f64) -> Scenario {
    let mut sc = sc.clone();
    for f in sc.flows.written_mut() {
        if let SchemeConfig::Monaco(p) = &mut f.scheme {
            p.kappa = Some(kappa);
        }
    }
    sc
}

/// The largest coefficient of variation over `links` of their queue samples after `from` s.
fn queue_cv(samples: &[(usize, f64, f64)], links: &[usize], from: f64) -> f64 {
    links
        .iter()
        .map(|&l| {
            let q: Vec<f64> = samples
                .iter()
                .filter(|s| s.0 == l && s.1 > from)
                .map(|s| s.2)
                .collect();
            let mean = q.iter().sum::<f64>() / q.len() as f64;
            let var = q.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / q.len() as f64;
            var.sqrt() / mean.max(1e-9)
        })
        .fold(0.0, f64::max)
}

fn model_cv(sc: &Scenario, links: &[usize]) -> f64 {
    let (_, mem) = acclab_model::run_in_memory(sc, Settings::default()).unwrap();
    let rows: Vec<_> = mem
        .links
        .iter()
        .map(|r| (r.link as usize, r.t_s, r.queue_pkts))
        .collect();
    queue_cv(&rows, links, 0.75 * sc.duration.as_secs_f64())
}

fn packet_cv(sc: &Scenario, links: &[usize]) -> f64 {
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    sim.run(&mut |_| {});
    let rows: Vec<_> = sim
        .monitor()
        .link_samples
        .iter()
        .map(|r| (r.link as usize, r.t_s, r.queue_pkts as f64))
        .collect();
    queue_cv(&rows, links, 0.5 * sc.duration.as_secs_f64())
}

/// One bottleneck, one propagation RTT: the numerical κ_max equals the closed form
/// ω·sin(rω) = 1, κ = ω²·cos(rω) (r = d/τ at the fixed point) within 1%, at both resolutions;
/// and with the measured delays, every feedback path the whole RTT, the closed form at r = 1.
#[test]
fn closed_form_matches_the_spectrum() {
    let sc = dumbbell();
    let s = stability::analyse(&sc).unwrap();
    let lin = Linearised::of(&sc, stability::Delays::Propagation).unwrap();
    let fp = acclab_model::fixed_point(&sc).unwrap();
    let net = acclab_model::network::Network::of(&sc).unwrap();
    let f = &net.flows[0];
    let tau = f.prop_delay
        + f.hops
            .iter()
            .map(|&l| fp.queue_pkts[l] / net.links[l].capacity)
            .sum::<f64>();
    let closed = stability::kappa_max_one_bottleneck(f.prop_delay / tau);
    let k = s.kappa_max.unwrap();
    eprintln!(
        "dumbbell: r = d/τ = {:.3}, closed form κ_max {closed:.4}, spectrum {k:.4} (N = 24: {:.4}), {} states; boundary oscillation {:.2} Hz",
        f.prop_delay / tau,
        s.scale_max_coarse * 0.5,
        lin.states,
        s.boundary_frequency_hz
    );
    assert!((k - closed).abs() < 0.01 * closed, "{k} vs {closed}");
    // With the packets' measured delays every feedback path takes the whole RTT: the closed
    // form at r = 1, whatever the standing queue.
    let closed_measured = stability::kappa_max_one_bottleneck(1.0);
    let km = s.kappa_max_measured.unwrap();
    eprintln!("  measured delays: closed form κ_max {closed_measured:.4}, spectrum {km:.4}");
    assert!(
        (km - closed_measured).abs() < 0.01 * closed_measured,
        "{km} vs {closed_measured}"
    );
    assert!((s.scale_max_coarse - s.scale_max).abs() < 0.01 * s.scale_max);
    assert_eq!(s.bottlenecks, ["r1->r2"]);
    // The default κ = 0.5 is stable here, and its rightmost root is real (no oscillation).
    assert!(s.stable() && s.frequency_hz == 0.0, "{s:?}");
}

/// The model's own trajectories: converging at 0.85 κ_max, oscillating at 1.2 κ_max (the
/// bottleneck queue's coefficient of variation over the last quarter of the run below 2%,
/// above 20%), on one bottleneck, on one bottleneck with two RTTs (live-dumbbell) and on the
/// two-bottleneck parking lot (acc-fig2).
///
/// And the packet runs change within a factor of 2 of the boundary with the feedback delays a
/// packet sender measures with (`Delays::Measured`: the queueing the reporting packet waited
/// out too) — steady at half of it (queue cv < 0.3 over the second half), oscillating at twice
/// it (cv > 0.3) — on the two single bottlenecks and on acc-fig2 with weight 5, where standing
/// queues are most of the RTT. Measured where the packets change (grid 0.3, 0.4, …): the
/// dumbbell between 0.5 and 0.7 (κ_max 0.90 with the model's delays, 0.55 measured),
/// live-dumbbell between 0.5 and 0.6 (0.80, 0.55), acc-fig2 with weight 5 below 0.5 (1.99,
/// 0.43: with the model's delays this case was a factor of 4 off). acc-fig2 itself (a* = 3
/// packets; 0.65, 0.39) is printed, not asserted: its packet queues of 4–5 packets have a cv of
/// 0.3 from packet noise alone.
#[test]
fn the_model_changes_at_kappa_max_and_the_packets_within_a_factor_of_two() {
    let cases = [
        ("dumbbell", dumbbell(), true),
        (
            "live-dumbbell",
            {
                let mut sc = load("scenarios/examples/live-dumbbell.toml");
                sc.duration = acclab_core::Duration::from_secs_f64(40.0);
                sc.output.window = (
                    acclab_core::Time::from_secs_f64(20.0),
                    acclab_core::Time::from_secs_f64(40.0),
                );
                sc.output.sample_interval = acclab_core::Duration::from_millis(10);
                sc
            },
            true,
        ),
        (
            "acc-fig2.quick",
            {
                let mut sc = load("scenarios/repro/acc-fig2.quick.toml");
                sc.output.sample_interval = acclab_core::Duration::from_millis(10);
                sc
            },
            false,
        ),
        (
            "acc-fig2.quick, weight 5",
            {
                let mut sc = load("scenarios/repro/acc-fig2.quick.toml");
                sc.output.sample_interval = acclab_core::Duration::from_millis(10);
                for f in sc.flows.written_mut() {
                    if let SchemeConfig::Monaco(p) = &mut f.scheme {
                        p.weight = 5.0;
                    }
                }
                sc
            },
            true,
        ),
    ];
    for (name, sc, packets) in cases {
        let s = stability::analyse(&sc).unwrap();
        let k = s.kappa_max.unwrap();
        let km = s.kappa_max_measured.unwrap();
        let links = Linearised::of(&sc, stability::Delays::Propagation)
            .unwrap()
            .bottlenecks;
        let below = model_cv(&with_kappa(&sc, 0.85 * k), &links);
        let above = model_cv(&with_kappa(&sc, 1.2 * k), &links);
        let half = packet_cv(&with_kappa(&sc, 0.5 * km), &links);
        let double = packet_cv(&with_kappa(&sc, 2.0 * km), &links);
        eprintln!(
            "{name}: κ_max {k:.3} ({:.2} Hz), measured delays {km:.3}; model queue cv at 0.85/1.2 κ_max {below:.3}/{above:.3}; packet cv at half/twice the measured {half:.2}/{double:.2}",
            s.boundary_frequency_hz
        );
        assert!(
            below < 0.02,
            "{name}: the model should converge at 0.85 κ_max: {below}"
        );
        assert!(
            above > 0.2,
            "{name}: the model should oscillate at 1.2 κ_max: {above}"
        );
        if packets {
            assert!(
                half < 0.3,
                "{name}: packets at half the measured κ_max should be steady: {half}"
            );
            assert!(
                double > 0.3,
                "{name}: packets at twice the measured κ_max should oscillate: {double}"
            );
        }
    }
}
