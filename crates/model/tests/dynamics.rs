//! The model's dynamics: the integrator's accuracy, and the papers' claims about trajectories.

use std::path::PathBuf;

use acclab_model::{Memory, Settings};
use acclab_scenario::Scenario;

fn load(rel: &str) -> Scenario {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    acclab_scenario::load(&root.join(rel)).unwrap()
}

fn trajectory(sc: &Scenario, step_ns: Option<u64>) -> (acclab_results::Summary, Memory) {
    acclab_model::run_in_memory(
        sc,
        Settings {
            step_ns,
            ..Settings::default()
        },
    )
    .unwrap()
}

/// Halving the step changes the trajectory little: on the parking lot of 000 Fig. 2 (ACC-P)
/// and on the live dumbbell (Monaco, weights 1 and 2), every sampled throughput after the first second moves by less
/// than 0.2% of the bottleneck's capacity, and the window means by less than 0.2%. (Measured:
/// 0.09% and 0.12% at the default step, the shortest propagation RTT / 16.)
#[test]
fn halving_the_step_changes_little() {
    for (file, capacity) in [
        ("scenarios/repro/acc-fig2.quick.toml", 9e6),
        ("scenarios/examples/live-dumbbell.toml", 10e6),
    ] {
        let sc = load(file);
        let h = acclab_model::Model::new(&sc, Settings::default())
            .unwrap()
            .h_ns;
        let (s1, m1) = trajectory(&sc, Some(h));
        let (s2, m2) = trajectory(&sc, Some(h / 2));
        assert_eq!(m1.flows.len(), m2.flows.len());
        let mut worst: f64 = 0.0;
        for (a, b) in m1.flows.iter().zip(&m2.flows) {
            assert_eq!((a.t_s, a.flow), (b.t_s, b.flow));
            if a.t_s > 1.0 {
                worst = worst.max((a.throughput_bps - b.throughput_bps).abs() / capacity);
            }
        }
        eprintln!(
            "{file}: step {h} ns vs {} ns: largest sample difference {:.3}% of capacity",
            h / 2,
            worst * 100.0
        );
        assert!(worst < 0.002, "{file}: {worst}");
        for (a, b) in s1.flows.iter().zip(&s2.flows) {
            let rel = (a.throughput_bps - b.throughput_bps).abs() / a.throughput_bps;
            assert!(rel < 0.002, "{file}: flow {}: {rel}", a.id);
        }
    }
}

/// N Reno flows over a RED bottleneck (the setting of Misra–Gong–Towsley and Hollot et al.).
fn reno_red(n: usize) -> Scenario {
    let text = format!(
        r#"
name = "reno-red"
duration = "100s"
[output]
window = ["40s", "100s"]
[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "10ms"
queue = {{ kind = "red", limit = "400pkt", min_th = "50pkt", max_th = "150pkt", max_p = 0.1, wq = 0.002 }}
[[link]]
count = {n}
between = ["s{{i}}", "r1"]
rate = "1Gbps"
delay = "2ms"
[[link]]
count = {n}
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "5ms"
[[flow]]
count = {n}
id = "reno{{i}}"
kind = "reno"
from = "s{{i}}"
to = "d{{i}}"
start = "0s"
start_jitter = "1s"
"#
    );
    acclab_scenario::parse(&text, "reno-red.toml").unwrap()
}

/// N Reno flows over RED: the model's mean queue, and the queue at its fixed point (the TCP/RED
/// equilibrium that `acclab theory` prints where NUM has none), within 15% of the packet run's.
#[test]
fn reno_over_red_queue_matches_the_packet_run() {
    for n in [10, 30] {
        let sc = reno_red(n);
        let (model, _) = trajectory(&sc, None);
        let mut sim = acclab_sim::Simulator::new(sc.clone());
        sim.run(&mut |_| {});
        let packet = acclab_sim::output::summary(&sim, 0.0);
        let (qm, qp) = (
            model.links[0].mean_queue_pkts,
            packet.links[0].mean_queue_pkts,
        );
        eprintln!(
            "{n} Reno flows over RED: mean queue model {qm:.1}, packet {qp:.1} packets; utilisation {:.3} / {:.3}",
            model.links[0].utilization, packet.links[0].utilization
        );
        eprintln!(
            "  drops in window model {} packet {}; packet-run timeouts {}; mean cwnd model {:.0} packet {:.0} B",
            model.links[0].drops_in_window,
            packet.links[0].drops_in_window,
            packet.flows.iter().map(|f| f.timeouts).sum::<u64>(),
            model.flows.iter().filter_map(|f| f.mean_cwnd_bytes).sum::<f64>() / n as f64,
            packet.flows.iter().filter_map(|f| f.mean_cwnd_bytes).sum::<f64>() / n as f64,
        );
        assert!(
            (qm - qp).abs() < 0.15 * qp,
            "{n} flows: model {qm}, packet {qp}"
        );
        // The equilibrium the NUM theory does not give: the model's fixed point.
        let fp = acclab_model::fixed_point(&sc).unwrap();
        let qf = fp.queue_pkts[0];
        eprintln!(
            "  fixed point: queue {qf:.1} packets (settled: {})",
            fp.settled
        );
        assert!(
            fp.settled && (qf - qp).abs() < 0.15 * qp,
            "{n} flows: fixed point {qf}, packet {qp}"
        );
    }
}

/// N Reno flows over tail drop: the model's overflow losses come as discrete, synchronised cuts
/// (feedback.rs `LossEvents`), so its queue saw-tooths as the packet run's does instead of
/// sitting at the full buffer. On the benchmark dumbbell (10 ms bottleneck, access links ten
/// times faster, 100 ms start jitter), three flow counts and buffers: the mean queue within 15%
/// of the packet run's, utilisation within 0.03, and the queue's saw-tooth period (samples
/// crossing the mean downwards) within 40%. Measured: 4 flows / 20 Mb/s / 34 packets queue
/// 16.6 vs 16.2, period 0.43 vs 0.44 s; 30 / 100 Mb/s / 100 40.9 vs 39.5, 0.24 vs 0.27 s;
/// 10 / 100 Mb/s / 1000 718 vs 724, 5.0 vs 6.0 s. Before, with the overflow losses as a rate,
/// the model's queue sat at the buffer (the parking-lot example 57–60 against 20–60 packets;
/// 100 flows on the 1 Gb/s dumbbell 644 against 339, now 348).
#[test]
fn reno_over_tail_drop_saw_tooths_as_the_packets() {
    for (n, mbps, buffer, duration) in [(4, 20, 34, 40), (30, 100, 100, 30), (10, 100, 1000, 60)] {
        let text = acclab_scenario::templates::reno_dumbbell_at(n, mbps, buffer, duration);
        let sc = acclab_scenario::parse(&text, "dumbbell.toml").unwrap();
        let (model, samples) = trajectory(&sc, None);
        let mut sim = acclab_sim::Simulator::new(sc.clone());
        sim.run(&mut |_| {});
        let packet = acclab_sim::output::summary(&sim, 0.0);
        let packet_queue: Vec<(f64, f64)> = sim
            .monitor()
            .link_samples
            .iter()
            .filter(|l| l.link == 0)
            .map(|l| (l.t_s, l.queue_pkts as f64))
            .collect();
        let model_queue: Vec<(f64, f64)> = samples
            .links
            .iter()
            .filter(|l| l.link == 0)
            .map(|l| (l.t_s, l.queue_pkts))
            .collect();
        let (w0, w1) = (
            sc.output.window.0.as_secs_f64(),
            sc.output.window.1.as_secs_f64(),
        );
        let period = |q: &[(f64, f64)]| {
            let v: Vec<f64> = q
                .iter()
                .filter(|(t, _)| *t > w0 && *t <= w1)
                .map(|s| s.1)
                .collect();
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let down = v.windows(2).filter(|p| p[0] >= mean && p[1] < mean).count();
            (w1 - w0) / down.max(1) as f64
        };
        let (qm, qp) = (
            model.links[0].mean_queue_pkts,
            packet.links[0].mean_queue_pkts,
        );
        let (um, up) = (model.links[0].utilization, packet.links[0].utilization);
        let (pm, pp) = (period(&model_queue), period(&packet_queue));
        eprintln!(
            "{n} Reno flows, {mbps} Mb/s, {buffer}-packet tail drop: mean queue model {qm:.1}, packet {qp:.1}; \
             utilisation {um:.3} / {up:.3}; saw-tooth period {pm:.2} / {pp:.2} s"
        );
        assert!(
            (qm - qp).abs() < 0.15 * qp,
            "{n} flows: queue model {qm}, packet {qp}"
        );
        assert!(
            (um - up).abs() < 0.03,
            "{n} flows: utilisation model {um}, packet {up}"
        );
        assert!(
            (pm - pp).abs() < 0.4 * pp,
            "{n} flows: period model {pm}, packet {pp}"
        );
    }
}

/// vegas-table5 (002 Table V (b), persistent congestion): five Vegas sources start 20 s apart,
/// each taking the queue the others built for propagation delay. The model — whose sources
/// take baseRTT as the minimum RTT seen, as the packet-level ones do — gives each period's
/// queue within 5% of the packet run's, and within 5% of 002's recursion (eqs. (27)–(29)).
#[test]
fn vegas_persistent_congestion_queue_per_period() {
    let sc = load("scenarios/repro/vegas-table5.toml");
    let (_, model) = trajectory(&sc, None);
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    sim.run(&mut |_| {});
    let bottleneck = 0;
    // Mean queue over the last 5 s of period t (t = 1..5), packets.
    let period_mean = |samples: &mut dyn Iterator<Item = (f64, f64)>, t: usize| {
        let (from, to) = (20.0 * t as f64 - 5.0, 20.0 * t as f64);
        let v: Vec<f64> = samples
            .filter(|(ts, _)| *ts > from + 1e-9 && *ts <= to + 1e-9)
            .map(|(_, q)| q)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let l0 = &sc.links[bottleneck];
    let c = l0.rate.as_f64() / 8.0 / sc.packet_size as f64;
    let d = acclab_theory::equilibrium::propagation_delay(&sc, &sc.flows.get(0));
    let acclab_core::config::SchemeConfig::Vegas(p) = &sc.flows.get(0).scheme else {
        panic!("vegas-table5 has Vegas flows")
    };
    let acclab_core::config::PerUnit::Time(unit) = p.per else {
        panic!("vegas-table5 is WPF")
    };
    let (recursion, _) =
        acclab_theory::vegas_error::serial_arrivals(c, p.alpha / unit.as_secs_f64(), d, 5);
    for t in 1..=5 {
        let qm = period_mean(
            &mut model
                .links
                .iter()
                .filter(|r| r.link as usize == bottleneck)
                .map(|r| (r.t_s, r.queue_pkts)),
            t,
        );
        let qp = period_mean(
            &mut sim
                .monitor()
                .link_samples
                .iter()
                .filter(|r| r.link as usize == bottleneck)
                .map(|r| (r.t_s, r.queue_pkts as f64)),
            t,
        );
        let qr = recursion[t - 1].queue_pkts;
        eprintln!("period {t}: queue model {qm:.1}, packet {qp:.1}, 002 recursion {qr:.1} packets");
        assert!(
            (qm - qp).abs() < 0.05 * qp,
            "period {t}: model {qm}, packet {qp}"
        );
        assert!(
            (qm - qr).abs() < 0.05 * qr,
            "period {t}: model {qm}, recursion {qr}"
        );
    }
}

/// A random multi-bottleneck line: `links` links of random rate and delay, a long flow across
/// all, a short flow over each, and two flows over random stretches, with weights 1 to 3.
fn random_line(rng: &mut impl rand::Rng) -> Scenario {
    use rand::RngExt;
    let links = rng.random_range(2..=4usize);
    let mut text = String::from(
        "name = \"line\"\nduration = \"60s\"\n[output]\nwindow = [\"55s\", \"60s\"]\n[defaults]\nqueue = { kind = \"priority\", limit = \"inf\" }\n",
    );
    for l in 0..links {
        text += &format!(
            "[[link]]\nbetween = [\"r{l}\", \"r{}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ms\"\n",
            l + 1,
            rng.random_range(5..=50u32),
            rng.random_range(1..=10u32)
        );
    }
    let mut spans = vec![(0, links)];
    spans.extend((0..links).map(|l| (l, l + 1)));
    for _ in 0..2 {
        let a = rng.random_range(0..links);
        spans.push((a, rng.random_range(a + 1..=links)));
    }
    for (i, (a, b)) in spans.iter().enumerate() {
        text += &format!(
            "[[link]]\nbetween = [\"s{i}\", \"r{a}\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n[[link]]\nbetween = [\"r{b}\", \"d{i}\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n[[flow]]\nid = \"f{i}\"\nkind = \"monaco\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nparams = {{ weight = {}, kappa = 0.2 }}\n",
            rng.random_range(1..=3u32)
        );
    }
    acclab_scenario::parse(&text, "line.toml").unwrap()
}

/// 001's global stability of ACC-P, on the delayed model: from 100 random initial windows
/// (1 to 300 packets each) on each of 10 random multi-bottleneck networks, every flow ends
/// within 1% of its weighted-proportionally-fair rate (the theory's NUM solution).
///
/// With κ = 0.2. At the default κ = 0.5 the delayed loop is past its stability boundary on some
/// of these networks (e.g. a weight-3 loop at 47 ms RTT crossing two 40–45 Mb/s links): it
/// settles into an oscillation of the queue (10–37 packets, independent of the step) about the
/// right mean, with rates up to 3% off — 001's proof is of the model without feedback delay.
#[test]
fn acc_p_reaches_weighted_pf_from_anywhere() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(23);
    let mut worst: f64 = 0.0;
    for net in 0..10 {
        let sc = random_line(&mut rng);
        let eq = acclab_theory::predict(&sc).unwrap();
        for _ in 0..100 {
            let mut m = acclab_model::Model::new(
                &sc,
                Settings {
                    step_ns: Some(2_000_000),
                    // Windows set one flow at a time: no flow stands for another.
                    grouping: acclab_model::Grouping::Each,
                    ..Settings::default()
                },
            )
            .unwrap();
            for i in 0..sc.flows.len() {
                m.set_window(i, rng.random_range(1.0..300.0));
            }
            m.run(&mut ());
            let s = acclab_model::summary::summary(&m, 0.0);
            for (f, p) in s.flows.iter().zip(&eq.flows) {
                let p = p.as_ref().unwrap().throughput_bps;
                let err = (f.throughput_bps - p).abs() / p;
                worst = worst.max(err);
                assert!(
                    err < 0.01,
                    "network {net}: flow {}: {} vs {p}",
                    f.id,
                    f.throughput_bps
                );
            }
        }
    }
    eprintln!(
        "1000 runs: largest distance from weighted PF {:.3}%",
        worst * 100.0
    );
}

/// When a run settles: the last sample time at which some flow's throughput (averaged over
/// `smooth` samples) is further than `band` (relative) from its mean over the window's second
/// half. Series: per flow, (t, throughput).
fn settling_time(series: &[Vec<(f64, f64)>], smooth: usize, band: f64, end: f64) -> f64 {
    let mut last = 0.0f64;
    for s in series {
        let tail: Vec<f64> = s.iter().filter(|p| p.0 > end / 2.0).map(|p| p.1).collect();
        let fin = tail.iter().sum::<f64>() / tail.len() as f64;
        for w in s.windows(smooth) {
            let mean = w.iter().map(|p| p.1).sum::<f64>() / smooth as f64;
            if (mean - fin).abs() > band * fin {
                last = last.max(w[smooth - 1].0);
            }
        }
    }
    last
}

/// 000 Fig. 2: ACC-AIAD, ACC-MW and ACC-P reach the same allocation on the parking lot with
/// different transients. Each policy's model fixed point is within 0.5% of the NUM point; their
/// settling times differ; and the packet runs order the three policies' settling times the same
/// way as the model with the policies applied once per control period (000 eq. (10), as the
/// sender does) — with the rate laws (eqs. (3), (5), (6)) only ACC-P and ACC-MW's (see below).
#[test]
fn acc_policies_share_the_equilibrium_not_the_transient() {
    use acclab_core::config::{AccPolicyName, MonacoParams, SchemeConfig};
    let base = load("scenarios/repro/acc-fig2.quick.toml");
    let eq = acclab_theory::predict(&base).unwrap();
    let end = base.duration.as_secs_f64();
    let mut model_times = Vec::new();
    let mut period_times = Vec::new();
    let mut packet_times = Vec::new();
    for policy in [
        AccPolicyName::AccAiad,
        AccPolicyName::AccMw,
        AccPolicyName::AccP,
    ] {
        let mut sc = base.clone();
        for f in sc.flows.written_mut() {
            f.scheme = SchemeConfig::Monaco(Box::new(MonacoParams {
                policy,
                ..MonacoParams::default()
            }));
        }
        // The equilibrium: the model's fixed point.
        let fp = acclab_model::fixed_point(&sc).unwrap();
        for (x, p) in fp.throughput_bps.iter().zip(&eq.flows) {
            let p = p.as_ref().unwrap();
            let err = (x - p.throughput_bps).abs() / p.throughput_bps;
            assert!(
                err < 0.005,
                "{policy:?}: flow {}: {x} vs {}",
                p.id,
                p.throughput_bps
            );
        }
        // With delays, the window means (AIAD's sign law chatters about the point: 000's
        // footnote 4 on Fig. 2 sees the same in packets).
        let (summary, mem) = trajectory(&sc, None);
        let (_, per_period) = acclab_model::run_in_memory(
            &sc,
            Settings {
                acc_per_period: true,
                ..Settings::default()
            },
        )
        .unwrap();
        eprintln!(
            "{policy:?}: delayed model's window means {:?} Mb/s",
            summary
                .flows
                .iter()
                .map(|f| (f.throughput_bps / 1e4).round() / 100.0)
                .collect::<Vec<_>>()
        );
        let per_flow = |rows: Vec<(usize, f64, f64)>| -> Vec<Vec<(f64, f64)>> {
            (0..sc.flows.len())
                .map(|i| {
                    rows.iter()
                        .filter(|r| r.0 == i)
                        .map(|r| (r.1, r.2))
                        .collect()
                })
                .collect()
        };
        let model = per_flow(
            mem.flows
                .iter()
                .map(|r| (r.flow as usize, r.t_s, r.throughput_bps))
                .collect(),
        );
        let period = per_flow(
            per_period
                .flows
                .iter()
                .map(|r| (r.flow as usize, r.t_s, r.throughput_bps))
                .collect(),
        );
        let mut sim = acclab_sim::Simulator::new(sc.clone());
        sim.run(&mut |_| {});
        let packet = per_flow(
            sim.monitor()
                .flow_samples
                .iter()
                .map(|r| (r.flow as usize, r.t_s, r.throughput_bps))
                .collect(),
        );
        model_times.push(settling_time(&model, 1, 0.05, end));
        period_times.push(settling_time(&period, 1, 0.05, end));
        packet_times.push(settling_time(&packet, 10, 0.10, end));
    }
    eprintln!(
        "settling times (AIAD, MW, P): model {model_times:?} s, per period {period_times:?} s, packet runs {packet_times:?} s"
    );
    // ACC-P settles before ACC-MW in every tier (MW's step shrinks as 1/w). ACC-AIAD with the
    // rate law settles in under a second into a ±0.3% chatter, while the packet runs' one-packet
    // steps keep the shares swinging by more than 10% for most of the run: applied once per
    // period, as the sender does, the model's one-packet steps swing them by ±5% to the end too
    // (measured: rate law 0.5/3.9/0.5 s, per period 30.0/3.8/0.4 s, packets 25.6/1.9/1.0 s).
    let (aiad, mw, p) = (0, 1, 2);
    assert!(model_times[p] < model_times[mw], "model: {model_times:?}");
    for times in [&period_times, &packet_times] {
        assert!(
            times[p] < times[mw] && times[mw] < times[aiad],
            "per period {period_times:?}, packet runs {packet_times:?}"
        );
    }
    let (lo, hi) = (
        model_times.iter().cloned().fold(f64::MAX, f64::min),
        model_times.iter().cloned().fold(0.0, f64::max),
    );
    assert!(
        hi > 1.5 * lo,
        "the transients should differ: {model_times:?}"
    );
}

/// Flow classes (classes.rs): stepping identical flows as one changes nothing but the order of
/// floating-point sums, and stepping jittered homogeneous flows as one moves the window means
/// little. On 20 Reno flows over the benchmark dumbbell (each with private access links; start
/// jitter 100 ms), once without jitter and once with.
#[test]
fn flow_classes_change_nothing_or_little() {
    let text = acclab_scenario::templates::reno_dumbbell(20, 200, 30);
    let jittered = acclab_scenario::parse(&text, "dumbbell.toml").unwrap();
    let mut together = jittered.clone();
    for f in together.flows.written_mut() {
        f.start_jitter = acclab_core::Duration::ZERO;
    }
    let with = |sc: &Scenario, grouping| {
        let m = acclab_model::Model::new(
            sc,
            Settings {
                grouping,
                ..Settings::default()
            },
        )
        .unwrap();
        let classes = m.classes();
        let (s, _) = acclab_model::run_in_memory(
            sc,
            Settings {
                grouping,
                ..Settings::default()
            },
        )
        .unwrap();
        (classes, s)
    };
    let largest_difference = |a: &acclab_results::Summary, b: &acclab_results::Summary| {
        let flows =
            a.flows.iter().zip(&b.flows).map(|(x, y)| {
                (x.throughput_bps - y.throughput_bps).abs() / x.throughput_bps.max(1.0)
            });
        let links = a.links.iter().zip(&b.links).map(|(x, y)| {
            (x.mean_queue_pkts - y.mean_queue_pkts).abs() / x.mean_queue_pkts.max(1.0)
        });
        flows.chain(links).fold(0.0, f64::max)
    };
    use acclab_model::Grouping::{Each, Homogeneous, Identical};
    let (n_each, each) = with(&together, Each);
    let (n_same, same) = with(&together, Identical);
    assert_eq!((n_each, n_same), (20, 1));
    let d = largest_difference(&each, &same);
    eprintln!("20 identical flows as one class: largest relative difference {d:e}");
    assert!(d < 1e-9, "{d}");
    let (n_jit, each) = with(&jittered, Identical);
    let (n_hom, hom) = with(&jittered, Homogeneous);
    assert_eq!((n_jit, n_hom), (20, 1));
    let d = largest_difference(&each, &hom);
    eprintln!("20 jittered flows as one homogeneous class: largest relative difference {d:.4}");
    assert!(d < 0.02, "{d}");
}

/// 000 eq. (10), the policy applied once per control period as Monaco's sender does, beside
/// the rate laws (eqs. (3), (5), (6)): the same allocation, and for ACC-AIAD the larger chatter
/// of one-packet steps. On acc-fig2 (measured: ACC-P window means within 0.1% of NUM with either
/// law; ACC-AIAD's 1-s throughput means over the second half swing 2.82–3.13 Mb/s for the long
/// flow per period against 2.95–2.97 as a rate; the packet runs swing more than 10%).
#[test]
fn acc_policies_applied_per_period() {
    use acclab_core::config::{AccPolicyName, MonacoParams, SchemeConfig};
    let base = load("scenarios/repro/acc-fig2.quick.toml");
    let eq = acclab_theory::predict(&base).unwrap();
    let with = |policy, per_period| {
        let mut sc = base.clone();
        for f in sc.flows.written_mut() {
            f.scheme = SchemeConfig::Monaco(Box::new(MonacoParams {
                policy,
                ..MonacoParams::default()
            }));
        }
        acclab_model::run_in_memory(
            &sc,
            Settings {
                acc_per_period: per_period,
                ..Settings::default()
            },
        )
        .unwrap()
    };
    let (p, _) = with(AccPolicyName::AccP, true);
    for (f, e) in p.flows.iter().zip(&eq.flows) {
        let e = e.as_ref().unwrap().throughput_bps;
        assert!(
            (f.throughput_bps - e).abs() < 0.01 * e,
            "{}: {} vs {e}",
            f.id,
            f.throughput_bps
        );
    }
    // The long flow's 1-s throughput means over the run's second half: their spread.
    let swing = |mem: &acclab_model::Memory| {
        let mut secs = std::collections::BTreeMap::<i64, (f64, f64)>::new();
        for r in mem.flows.iter().filter(|r| r.flow == 0 && r.t_s > 15.0) {
            let e = secs.entry((r.t_s - 1e-9).floor() as i64).or_default();
            e.0 += r.throughput_bps;
            e.1 += 1.0;
        }
        let means: Vec<f64> = secs.values().map(|(s, n)| s / n).collect();
        let (lo, hi) = (
            means.iter().cloned().fold(f64::MAX, f64::min),
            means.iter().cloned().fold(0.0, f64::max),
        );
        (hi - lo) / (0.5 * (hi + lo))
    };
    let (_, rate) = with(AccPolicyName::AccAiad, false);
    let (_, period) = with(AccPolicyName::AccAiad, true);
    let (a, b) = (swing(&rate), swing(&period));
    eprintln!("ACC-AIAD long flow's 1-s means spread: as a rate {a:.3}, per period {b:.3}");
    assert!(b > 3.0 * a, "per period {b} against rate {a}");
}

/// A link that cannot queue (an egress access link behind a slower bottleneck,
/// `Network::cannot_queue`) is integrated as pure delay. The same link made a queue again — a
/// scheduled change of its rate to the rate it has keeps it out of the fold — gives the same
/// trajectory: windows within 1e-9, and goodputs (read through one interpolation instead of
/// two) within 1e-4 over the run. (Measured: windows identical; goodputs within 5e-7.)
#[test]
fn links_that_cannot_queue_are_pure_delay() {
    for kind in ["reno", "monaco", "vegas"] {
        let text = acclab_scenario::templates::dumbbell(kind, 4, 100, 50, 20);
        let folded = acclab_scenario::parse(&text, "dumbbell.toml").unwrap();
        let events: String = (0..4)
            .map(|i| {
                format!(
                    "[[event]]\nat = \"1s\"\nset_rate = {{ link = \"r2->d{i}\", rate = \"1000Mbps\" }}\n"
                )
            })
            .collect();
        let queued = acclab_scenario::parse(&format!("{text}{events}"), "dumbbell.toml").unwrap();
        let settings = Settings {
            grouping: acclab_model::Grouping::Each,
            ..Settings::default()
        };
        let pure = |sc: &Scenario| {
            let m = acclab_model::Model::new(sc, settings).unwrap();
            (0..sc.links.len())
                .filter(|&l| m.is_pure_delay(l))
                .map(|l| sc.links[l].name.clone())
                .collect::<Vec<_>>()
        };
        let egress: Vec<String> = (0..4).map(|i| format!("r2->d{i}")).collect();
        assert_eq!(pure(&folded), egress, "{kind}: the links folded");
        assert!(
            pure(&queued).is_empty(),
            "{kind}: a rate change keeps a link a queue"
        );
        let (sa, ma) = acclab_model::run_in_memory(&folded, settings).unwrap();
        let (sb, mb) = acclab_model::run_in_memory(&queued, settings).unwrap();
        let rel = |a: f64, b: f64| (a - b).abs() / a.abs().max(b.abs()).max(1e-12);
        let windows = ma
            .flows
            .iter()
            .zip(&mb.flows)
            .map(|(a, b)| rel(a.cwnd_bytes.unwrap(), b.cwnd_bytes.unwrap()))
            .fold(0.0, f64::max);
        let goodputs = sa
            .flows
            .iter()
            .zip(&sb.flows)
            .map(|(a, b)| rel(a.throughput_bps, b.throughput_bps))
            .fold(0.0, f64::max);
        let egress = |s: &acclab_results::Summary| {
            s.links
                .iter()
                .filter(|l| l.id.starts_with("r2->d"))
                .map(|l| (l.utilization, l.max_queue_pkts))
                .collect::<Vec<_>>()
        };
        eprintln!("{kind}: windows {windows:e}, goodputs {goodputs:e}");
        assert!(windows < 1e-9, "{kind}: windows moved by {windows:e}");
        assert!(goodputs < 1e-4, "{kind}: goodputs moved by {goodputs:e}");
        for ((ua, qa), (ub, _)) in egress(&sa).into_iter().zip(egress(&sb)) {
            assert!(
                rel(ua, ub) < 1e-4,
                "{kind}: egress utilisation {ua} vs {ub}"
            );
            assert_eq!(qa, 0, "{kind}: a link that cannot queue reports a queue");
        }
    }
}

/// `run_to` integrates in stretches to report its progress: the files are those of one run to
/// the end (the samples kept in memory by `run`), and the progress reaches the end in order.
#[test]
fn a_run_in_stretches_writes_what_one_run_writes() {
    let sc = load("scenarios/examples/parking-lot.toml");
    let dir = tempfile::tempdir().unwrap();
    let mut reported = Vec::new();
    acclab_model::run_to(&sc, Settings::default(), dir.path(), &mut |t| {
        reported.push(t.0)
    })
    .unwrap();
    assert_eq!(reported.len(), 200);
    assert!(reported.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(reported.last(), Some(&sc.duration.0));
    let (_, whole) = trajectory(&sc, None);
    let flows = std::fs::read_to_string(dir.path().join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), whole.flows.len() + 1);
    let last = whole.flows.last().unwrap();
    let written = flows.lines().last().unwrap();
    assert!(
        written.contains(&format!("{}", last.cwnd_bytes.unwrap())),
        "{written} against {last:?}"
    );
}

/// Issue 55 §3: a link whose rate changes inside a sample (10 → 5 Mb/s at 1.5 s, 1 s samples,
/// a saturating CBR source) read 1.5 utilisation in the model (the bytes carried at both rates
/// over the new rate alone); the packet simulator reads 1.0. Every tier: at most 1 in every
/// sample, and the sample across the change full.
#[test]
fn utilisation_stays_at_most_one_when_a_rate_changes_inside_a_sample() {
    let sc = acclab_scenario::parse(
        r#"
name = "u"
duration = "4s"
[[link]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "droptail", limit = "50pkt" }
[[flow]]
id = "c"
kind = "cbr"
from = "a"
to = "b"
params = { rate = "20Mbps" }
[[event]]
at = "1.5s"
set_rate = { link = "a->b", rate = "5Mbps" }
[output]
sample_interval = "1s"
window = ["2s", "4s"]
"#,
        "u.toml",
    )
    .unwrap();
    let (_, memory) = trajectory(&sc, None);
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    sim.run(&mut |_| {});
    let packets: Vec<f64> = sim
        .monitor()
        .link_samples
        .iter()
        .map(|s| s.utilization)
        .collect();
    let model: Vec<f64> = memory.links.iter().map(|r| r.utilization).collect();
    for (tier, u) in [("model", &model), ("packets", &packets)] {
        assert!(!u.is_empty());
        for &x in u.iter() {
            assert!(x <= 1.0 + 1e-9, "{tier}: utilisation {x} in {u:?}");
        }
        // The sample from 1 s to 2 s spans the change and the link is busy throughout.
        assert!(u[1] > 0.95, "{tier}: {u:?}");
    }
}

/// Issue 55 §7: the model's Vegas follows the packet run's **transient**, not only its
/// equilibrium. A two-bottleneck line (r1 → r2 → r3, 100 Mb/s and 20 ms each, 1 Gb/s access
/// links, every buffer unbounded), one Vegas flow over both links and one over the second: in
/// the packet run each leaves slow start near 80 KB, long before its BDP (~550 KB), by the queue
/// its own slow-start bursts build; the fluid model, which has no bursts, went on to ~790 KB and
/// took over 10 s to come down (mean gap 72% and 197% over the first 20 s). With the burst's
/// queue in the slow-starting source's RTT (model/src/vegas.rs), the mean gap of each flow's
/// window over the first 20 s is within 25% (measured 8% and 9%).
#[test]
fn vegas_follows_the_packet_runs_transient_on_two_bottlenecks() {
    let gaps = window_gaps(&two_bottlenecks(
        r#"{ kind = "droptail", limit = "inf" }"#,
        "vegas",
    ));
    for (f, g) in gaps.iter().enumerate() {
        eprintln!("flow {f}: mean window gap {g:.3}");
        assert!(*g <= 0.25, "flow {f}: mean window gap {g}");
    }
}

/// Each flow's mean |model − packet| / packet window over the run's samples (samples where the
/// packet window is zero left out).
fn window_gaps(text: &str) -> Vec<f64> {
    let sc = acclab_scenario::parse(text, "transient.toml").unwrap();
    let (_, model) = trajectory(&sc, None);
    let mut sim = acclab_sim::Simulator::new(sc.clone());
    sim.run(&mut |_| {});
    (0..sc.flows.len() as u32)
        .map(|f| {
            let packet = sim
                .monitor()
                .flow_samples
                .iter()
                .filter(|s| s.flow == f)
                .map(|s| s.cwnd_bytes.unwrap_or(0) as f64);
            let fluid = model
                .flows
                .iter()
                .filter(|s| s.flow == f)
                .map(|s| s.cwnd_bytes.unwrap_or(0.0));
            let gaps: Vec<f64> = packet
                .zip(fluid)
                .filter(|(p, _)| *p > 0.0)
                .map(|(p, m)| (m - p).abs() / p)
                .collect();
            assert!(gaps.len() > 100, "{} samples", gaps.len());
            gaps.iter().sum::<f64>() / gaps.len() as f64
        })
        .collect()
}

/// The two-bottleneck line of the transient checks (r1 → r2 → r3, 100 Mb/s and 20 ms each, 1 Gb/s
/// access links), every link's queue `queue`, one `kind` flow over both links and one over the
/// second, 20 s from a cold start.
fn two_bottlenecks(queue: &str, kind: &str) -> String {
    format!(
        r#"name = "transient"
duration = "20s"
[defaults]
queue = {queue}
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "20ms"
[[link]]
between = ["r2", "r3"]
rate = "100Mbps"
delay = "20ms"
[[link]]
between = ["s", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["r3", "d"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["x", "r2"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
id = "long"
kind = "{kind}"
from = "s"
to = "d"
[[flow]]
id = "short"
kind = "{kind}"
from = "x"
to = "d"
"#
    )
}

/// Issue 55 §7, the other laws: Vegas+REM over REM queues follows the packet run's transient on
/// the two-bottleneck line as Vegas does (mean window gap within 25%; measured 8.8% and 11.9%).
/// Reno's law does not (see docs/reference.md's model-tier section: over 400-packet tail drop, 246% and
/// 816%; over RED 74% and 157%; over AVQ 462% and 421%) — not held here to a bound it misses.
#[test]
fn vegas_rem_follows_the_packet_runs_transient_on_two_bottlenecks() {
    let gaps = window_gaps(&two_bottlenecks(
        r#"{ kind = "rem", limit = "inf" }"#,
        "vegas-rem",
    ));
    for (f, g) in gaps.iter().enumerate() {
        assert!(*g <= 0.25, "flow {f}: mean window gap {g}");
    }
}
