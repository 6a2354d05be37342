//! The model tier on a datacenter fabric (issue 51 §6): a k = 4 fat-tree whose flows are spread
//! by per-flow ECMP, the model integrating along the routes ECMP chose — the packet run's —
//! against the packet run and the theory.
//!
//! Twelve long flows, h0 … h11 to h12 … h15 (three into each host of the last pod), at 100 Mb/s
//! with 500 µs links (base RTT ≈ 6.5 ms). Each seed hashes the flows onto other paths, so the
//! bottlenecks differ: host downlinks, aggregation→edge and core→aggregation links, several in
//! tandem on one path. Five seeds each.

use acclab_results::summary::LinkSummary;
use acclab_results::Summary;
use acclab_scenario::Scenario;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

/// The fabric with `scheme`'s flows starting within `jitter`, over `queue`.
fn fabric(seed: u64, queue: &str, scheme: &str, jitter: &str, duration: &str) -> Scenario {
    let mut text = format!(
        r#"
name = "ft-model"
seed = {seed}
duration = "{duration}"
[output]
window = ["10s", "{duration}"]
[routing]
ecmp = "flow"
[topology]
kind = "fat-tree"
k = 4
link_rate = "100Mbps"
link_delay = "500us"
queue = {queue}
"#
    );
    for i in 0..12 {
        text += &format!(
            "[[flow]]\nid = \"f{i}\"\n{scheme}\nfrom = \"h{i}\"\nto = \"h{}\"\nstart_jitter = \"{jitter}\"\n",
            12 + i % 4
        );
    }
    acclab_scenario::parse(&text, "ft-model.toml").unwrap()
}

/// The model's and the packet run's summaries of `sc`.
fn both(sc: &Scenario) -> (Summary, Summary) {
    let (model, _) = acclab_model::run_in_memory(sc, acclab_model::Settings::default()).unwrap();
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    sim.run(&mut |_| {});
    (model, acclab_sim::output::summary(&sim, 0.0))
}

/// Each flow's relative throughput difference between `a` and `b` (rates in b/s), sorted.
fn differences(a: impl Iterator<Item = f64>, b: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut d: Vec<f64> = a.zip(b).map(|(a, b)| (a - b).abs() / b).collect();
    d.sort_by(f64::total_cmp);
    d
}

/// The largest and the median of sorted differences `d`.
fn largest_and_median(d: &[f64]) -> (f64, f64) {
    (d[d.len() - 1], d[d.len() / 2])
}

/// The packet run's links busier than 90%, each with the model's.
fn busy<'a>(model: &'a Summary, packet: &'a Summary) -> Vec<(&'a LinkSummary, &'a LinkSummary)> {
    let pairs: Vec<_> = model
        .links
        .iter()
        .zip(&packet.links)
        .filter(|(_, p)| p.utilization > 0.9)
        .collect();
    for (m, p) in &pairs {
        assert_eq!(m.id, p.id);
        eprintln!(
            "  {}: utilisation model {:.3} packet {:.3}; mean queue model {:.1} packet {:.1}",
            p.id, m.utilization, p.utilization, m.mean_queue_pkts, p.mean_queue_pkts
        );
    }
    pairs
}

/// Vegas (α = β = 3) over tail drop, the flows starting within a millisecond, so that each
/// measures its base RTT over empty queues and the equilibrium is the NUM one (proportionally
/// fair over the paths ECMP chose): on every seed each flow's throughput in the model within
/// 12% of the packet run's and the median flow within 1.5 window steps of it (a step is a
/// packet per round trip: 4–6% of these flows' rates; the fluid model has no steps, the packet
/// run's windows move by whole packets around α = β). Measured: at most 11.3%, medians 0.24–1.20
/// steps (0.9–5.5%); seed 4's median moved from 4.8% to 5.5% when arrivals got keys of their
/// own (2026-11-28) — its packet run is one of the equilibria whole-packet windows allow, and
/// the order of equal-time events picks among them —,
/// the packet run within 15% of the theory's allocation for each flow (measured: at most
/// 5.0–10.6% per seed; a Vegas window moves a packet at a time around α = β, as on the
/// dumbbells), and every link the theory saturates (its price positive) busy in both, at least
/// 98% (measured: 98.6% and more; a link both runs keep at 98.8–99.0%, with queues of 4–5
/// packets, is why not 99%). (With starts spread over 500 ms, later flows take
/// standing queues for their base RTT — Vegas's persistent congestion — and model and packet
/// run land apart by up to 40% per flow, the model's fluid queues having built up differently:
/// the allocation is then a matter of start order, not of the law.)
#[test]
fn vegas_on_a_fat_tree_with_ecmp_follows_the_packet_run_and_the_theory() {
    for seed in SEEDS {
        let sc = fabric(
            seed,
            r#"{ kind = "droptail", limit = "500pkt" }"#,
            "kind = \"vegas\"\nparams = { alpha = 3, beta = 3 }",
            "1ms",
            "20s",
        );
        let (model, packet) = both(&sc);
        let eq = acclab_theory::predict(&sc).unwrap();
        let theory = eq.flows.iter().map(|f| f.as_ref().unwrap().throughput_bps);
        let rate = |s: &Summary| s.flows.iter().map(|f| f.throughput_bps).collect::<Vec<_>>();
        let (mp, tp) = (
            differences(rate(&model).into_iter(), rate(&packet).into_iter()),
            differences(rate(&packet).into_iter(), theory),
        );
        let ((worst, _), (theory_worst, _)) = (largest_and_median(&mp), largest_and_median(&tp));
        // Each flow's difference in window steps: a packet per round trip, over its rate.
        let mut steps: Vec<f64> = model
            .flows
            .iter()
            .zip(&packet.flows)
            .map(|(m, p)| {
                let step = f64::from(sc.packet_size) * 8.0
                    / (p.throughput_bps * p.mean_rtt_s.expect("a long flow has RTT samples"));
                (m.throughput_bps - p.throughput_bps).abs() / p.throughput_bps / step
            })
            .collect();
        steps.sort_by(f64::total_cmp);
        let median = steps[steps.len() / 2];
        eprintln!(
            "seed {seed}: model vs packet run: largest {worst:.3}, median {:.3} ({median:.2} window steps); packet run vs theory: largest {theory_worst:.3}",
            mp[mp.len() / 2]
        );
        assert!(
            worst < 0.12 && median < 1.5,
            "seed {seed}: {mp:?}, in window steps {steps:?}"
        );
        assert!(theory_worst < 0.15, "seed {seed}: {tp:?}");
        busy(&model, &packet);
        for (l, t) in eq.links.iter().enumerate().filter(|(_, t)| t.price_s > 0.0) {
            let (m, p) = (&model.links[l], &packet.links[l]);
            assert_eq!((&m.id, &p.id), (&t.id, &t.id));
            eprintln!(
                "  theory saturates {}: utilisation model {:.4} packet {:.4}",
                t.id, m.utilization, p.utilization
            );
            assert!(
                m.utilization > 0.98 && p.utilization > 0.98,
                "seed {seed}: {}: model {} packet {}",
                t.id,
                m.utilization,
                p.utilization
            );
        }
    }
}

/// Reno over RED (min_th 50, max_th 150 packets, as the dumbbell test's), starts spread over
/// 500 ms: on every seed each flow's throughput within 25% of the packet run's and the median
/// within 8% (measured: at most 16%, medians 2.6–6.6%), and every busy link's utilisation within
/// 0.08 (measured, before the tie rule of 2026-11-28: at most 0.065; the packet run loses some to timeouts, which the model has
/// none of). Queues are not held: on the dumbbell the model's mean queue is within 15% of the
/// packet run's, on the fabric it is 1.1–1.9 times it on links in tandem behind another
/// saturated link — a packet leaves the first at most at the rate of the next, so the later
/// ones queue only where paths merge, while the fluid model feeds each link its flows' sending
/// rates unshaped — and on two seeds the model has no queue on a link where the packet run's
/// bursts keep 7–10 packets.
#[test]
fn reno_over_red_on_a_fat_tree_with_ecmp_follows_the_packet_run() {
    for seed in SEEDS {
        let sc = fabric(
            seed,
            r#"{ kind = "red", limit = "400pkt", min_th = "50pkt", max_th = "150pkt", max_p = 0.1, wq = 0.002 }"#,
            "kind = \"reno\"",
            "500ms",
            "40s",
        );
        let (model, packet) = both(&sc);
        let rate = |s: &Summary| s.flows.iter().map(|f| f.throughput_bps).collect::<Vec<_>>();
        let d = differences(rate(&model).into_iter(), rate(&packet).into_iter());
        let (worst, median) = largest_and_median(&d);
        eprintln!("seed {seed}: model vs packet run: largest {worst:.3}, median {median:.3}");
        assert!(worst < 0.25 && median < 0.08, "seed {seed}: {d:?}");
        let pairs = busy(&model, &packet);
        assert!(pairs.len() >= 4, "seed {seed}: {} busy links", pairs.len());
        for (m, p) in pairs {
            assert!(
                (m.utilization - p.utilization).abs() < 0.08,
                "seed {seed}: {}: {} vs {}",
                p.id,
                m.utilization,
                p.utilization
            );
        }
    }
}
