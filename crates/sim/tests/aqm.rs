//! AQMs end to end: RED with Reno, REM with Vegas+REM.

use acclab_scenario::parse;

fn dumbbell(rate: &str, queue: &str, kind: &str, params: &str, n: usize) -> String {
    format!(
        r#"name = "aqm"
duration = "60s"
[[link]]
between = ["r1", "r2"]
rate = "{rate}"
delay = "10ms"
queue = {queue}
[[link]]
count = {n}
between = ["s{{i}}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = {n}
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
count = {n}
id = "f{{i}}"
kind = "{kind}"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "1s"
params = {{ {params} }}
[output]
window = ["20s", "60s"]
"#
    )
}

#[test]
fn reno_over_red_keeps_the_average_queue_between_the_thresholds() {
    let src = dumbbell(
        "20Mbps",
        r#"{ kind = "red", limit = "200pkt", min_th = "10pkt", max_th = "40pkt", gentle = true }"#,
        "reno",
        "",
        8,
    );
    let (sim, s) = acclab_sim::run(parse(&src, "red").unwrap(), &mut |_| {});
    let m = sim.monitor();
    let k = m.aqm_columns.iter().position(|c| c == "red_avg").unwrap();
    let avg: Vec<f64> = m
        .link_samples
        .iter()
        .filter(|x| x.link == 0 && x.t_s > 20.0)
        .filter_map(|x| x.aqm[k])
        .collect();
    let mean = avg.iter().sum::<f64>() / avg.len() as f64;
    assert!((10.0..40.0).contains(&mean), "RED average queue {mean}");
    assert!(
        s.links[0].utilization > 0.9,
        "utilisation {}",
        s.links[0].utilization
    );
    assert!(s.links[0].drops > 0, "RED must drop to control Reno");
}

#[test]
fn reno_with_ecn_over_red_is_marked_not_dropped() {
    let src = dumbbell(
        "20Mbps",
        r#"{ kind = "red", limit = "200pkt", min_th = "10pkt", max_th = "40pkt", ecn = true }"#,
        "reno",
        "ecn = true",
        8,
    );
    let (_, s) = acclab_sim::run(parse(&src, "red-ecn").unwrap(), &mut |_| {});
    let link = &s.links[0];
    assert!(link.marks > 100, "marks {}", link.marks);
    assert!(
        link.drops < link.marks / 10,
        "drops {} vs marks {}",
        link.drops,
        link.marks
    );
    assert!(link.utilization > 0.9);
}

#[test]
fn vegas_over_rem_keeps_the_queue_near_zero_and_the_link_busy() {
    // The REM setting of vegas-rem-fig7 (002 Fig. 7). Equal PF weights: equal shares; REM drives the backlog to ~0 while marking conveys price.
    let src = dumbbell(
        "48Mbps",
        r#"{ kind = "rem", limit = "inf", phi = 1.1, mu = 0.5, gamma = 0.005, interval = "1ms" }"#,
        "vegas-rem",
        "alpha = 2, beta = 2, per = \"1ms\", phi = 1.1",
        4,
    );
    let (sim, s) = acclab_sim::run(parse(&src, "rem").unwrap(), &mut |_| {});
    let link = &s.links[0];
    assert!(
        link.mean_queue_pkts < 5.0,
        "mean queue {}",
        link.mean_queue_pkts
    );
    assert!(link.utilization > 0.85, "utilisation {}", link.utilization);
    assert!(s.fairness.jain.unwrap() > 0.98);
    // The price settles: its mean over the last 20 s is within 25% of that over 20–40 s.
    let m = sim.monitor();
    let k = m.aqm_columns.iter().position(|c| c == "rem_price").unwrap();
    let mean = |a: f64, b: f64| {
        let v: Vec<f64> = m
            .link_samples
            .iter()
            .filter(|x| x.link == 0 && x.t_s > a && x.t_s <= b)
            .filter_map(|x| x.aqm[k])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (early, late) = (mean(20.0, 40.0), mean(40.0, 60.0));
    assert!(
        late > 0.0 && (late - early).abs() / late < 0.25,
        "price {early} then {late}"
    );
}

#[test]
fn avq_holds_the_link_at_its_target_utilisation_with_responsive_sources() {
    // Kunniyur–Srikant: with sources that back off on marks, C̃ settles where the arrival rate is
    // γ·C, so the measured utilisation tracks γ; the physical queue stays well below its limit.
    for gamma in [0.8, 0.95] {
        let queue =
            format!(r#"{{ kind = "avq", limit = "100pkt", target_utilization = {gamma} }}"#);
        let src = dumbbell("20Mbps", &queue, "reno", "ecn = true", 8);
        let (_, s) = acclab_sim::run(parse(&src, "avq").unwrap(), &mut |_| {});
        let link = &s.links[0];
        assert!(
            (link.utilization - gamma).abs() < 0.015,
            "γ {gamma}: utilisation {}",
            link.utilization
        );
        assert!(link.marks > 100, "γ {gamma}: marks {}", link.marks);
        assert!(
            link.mean_queue_pkts < 20.0,
            "γ {gamma}: queue {}",
            link.mean_queue_pkts
        );
    }
}

#[test]
fn reno_over_codel_keeps_the_standing_queue_near_its_target() {
    // 8 Reno flows on 20 Mb/s (a 1000 B packet every 0.4 ms), RTT ≈ 24 ms, a 400-packet
    // buffer: tail drop would fill it (160 ms of queue); CoDel holds the sojourn time near its
    // 5 ms target — a mean queue of about 12 packets, bounded here at 50 (20 ms) — while the
    // link stays busy, dropping at the head.
    let codel = dumbbell(
        "20Mbps",
        r#"{ kind = "codel", limit = "400pkt" }"#,
        "reno",
        "",
        8,
    );
    let (_, s) = acclab_sim::run(parse(&codel, "codel").unwrap(), &mut |_| {});
    let link = &s.links[0];
    assert!(
        link.mean_queue_pkts < 50.0,
        "CoDel mean queue {}",
        link.mean_queue_pkts
    );
    assert!(link.utilization > 0.9, "utilisation {}", link.utilization);
    assert!(link.drops > 0);
    let tail = dumbbell(
        "20Mbps",
        r#"{ kind = "droptail", limit = "400pkt" }"#,
        "reno",
        "",
        8,
    );
    let (_, t) = acclab_sim::run(parse(&tail, "droptail").unwrap(), &mut |_| {});
    assert!(
        t.links[0].mean_queue_pkts > 4.0 * link.mean_queue_pkts,
        "droptail {} vs codel {}",
        t.links[0].mean_queue_pkts,
        link.mean_queue_pkts
    );
}

#[test]
fn reno_over_pie_holds_the_queueing_delay_near_its_target() {
    // The CoDel dumbbell above with PIE: its PI law settles the queueing delay near the
    // 15 ms target (37 packets at 20 Mb/s); bounded here at 60 packets (24 ms), and above
    // CoDel's 5 ms. Tail drop fills the 400-packet buffer.
    let pie = dumbbell(
        "20Mbps",
        r#"{ kind = "pie", limit = "400pkt" }"#,
        "reno",
        "",
        8,
    );
    let (_, s) = acclab_sim::run(parse(&pie, "pie").unwrap(), &mut |_| {});
    let link = &s.links[0];
    let delay_ms = link.mean_queue_pkts * 0.4;
    assert!(
        (7.0..24.0).contains(&delay_ms),
        "PIE mean queueing delay {delay_ms} ms ({} packets)",
        link.mean_queue_pkts
    );
    assert!(link.utilization > 0.9, "utilisation {}", link.utilization);
    assert!(link.drops > 0);
}

#[test]
fn reno_with_ecn_over_step_marking_holds_the_queue_near_k() {
    // 8 ECN-capable Reno flows, K = 60 packets (one bandwidth-delay product: 20 Mb/s × 24 ms;
    // Reno halves on a mark, so a smaller K idles the link — K = 20 gave 0.85): marks, not
    // drops, control them, the queue stays about K and the link busy.
    let src = dumbbell(
        "20Mbps",
        r#"{ kind = "step-ecn", limit = "200pkt", threshold = "60pkt" }"#,
        "reno",
        "ecn = true",
        8,
    );
    let (_, s) = acclab_sim::run(parse(&src, "step").unwrap(), &mut |_| {});
    let link = &s.links[0];
    assert!(link.marks > 100, "marks {}", link.marks);
    assert!(
        link.drops < link.marks / 10,
        "drops {} marks {}",
        link.drops,
        link.marks
    );
    assert!(
        link.mean_queue_pkts < 80.0,
        "mean queue {}",
        link.mean_queue_pkts
    );
    assert!(link.utilization > 0.9, "utilisation {}", link.utilization);
}

#[test]
fn fq_codel_isolates_a_cbr_flow_from_bulk_ones() {
    // Four Reno flows and a 4 Mb/s CBR flow (under its 4 Mb/s fair share of 20 Mb/s) share
    // the bottleneck. Behind tail drop the CBR flow loses packets to the Reno flows' overflows
    // and its packets wait behind their standing queue; FQ-CoDel gives it its own queue, served
    // in turn: it loses nothing and gets its whole rate, while CoDel keeps the Reno queues short.
    let run = |queue: &str| {
        let src = dumbbell("20Mbps", queue, "reno", "", 4)
            + r#"[[link]]
between = ["c", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["r2", "e"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
id = "cbr"
kind = "cbr"
from = "c"
to = "e"
params = { rate = "4Mbps" }
"#;
        let src = src.replacen("[output]\nwindow = [\"20s\", \"60s\"]\n", "", 1)
            + "[output]\nwindow = [\"20s\", \"60s\"]\n";
        let (_, s) = acclab_sim::run(parse(&src, "fq").unwrap(), &mut |_| {});
        let cbr = s.flows.iter().find(|f| f.id == "cbr").unwrap().clone();
        let reno_rtt = s
            .flows
            .iter()
            .filter(|f| f.id != "cbr")
            .map(|f| f.mean_rtt_s.unwrap())
            .sum::<f64>()
            / 4.0;
        (cbr, reno_rtt, s.links[0].utilization)
    };
    let (cbr, rtt, util) = run(r#"{ kind = "fq-codel" }"#);
    assert_eq!(cbr.lost_packets, 0, "FQ-CoDel: the CBR flow lost packets");
    assert!(
        (cbr.throughput_bps - 4e6).abs() < 0.02 * 4e6,
        "CBR goodput {}",
        cbr.throughput_bps
    );
    assert!(util > 0.95, "utilisation {util}");
    assert!(rtt < 0.040, "Reno mean RTT {rtt} s behind FQ-CoDel");
    let (cbr, rtt_tail, _) = run(r#"{ kind = "droptail", limit = "400pkt" }"#);
    assert!(cbr.lost_packets > 0, "tail drop spared the CBR flow");
    assert!(rtt_tail > 3.0 * rtt, "tail drop RTT {rtt_tail} vs {rtt}");
}

/// A `step-ecn` link departs at enqueue (one event per hop: its marks are decided on arrival,
/// from the queue the packet finds). The same link made to serialise with two events (a rate
/// event, even to its own rate, takes that path away) must mark, drop and deliver exactly
/// alike. Delays and rates are chosen so that no two events fall on the same nanosecond: at a
/// tie the two paths order a transmission's start and an arrival differently (the engine's
/// stated tie rule), which is the only difference allowed.
#[test]
fn step_ecn_departing_at_enqueue_marks_as_the_two_event_link_does() {
    let mut src = String::from(
        r#"name = "step"
duration = "3s"
seed = 3
[defaults]
packet_size = "1500B"
[[link]]
between = ["r1", "r2"]
rate = "997Mbps"
delay = "101us"
queue = { kind = "step-ecn", limit = "100pkt", threshold = "20pkt" }
"#,
    );
    for (i, (up, down)) in [(13, 7), (29, 17), (47, 37)].iter().enumerate() {
        src += &format!(
            "[[link]]\nbetween = [\"s{i}\", \"r1\"]\nrate = \"10Gbps\"\ndelay = \"{up}us\"\n\
             [[link]]\nbetween = [\"r2\", \"d{i}\"]\nrate = \"10Gbps\"\ndelay = \"{down}us\"\n"
        );
    }
    src += r#"[[flow]]
count = 3
id = "dctcp{i}"
kind = "dctcp"
from = "s{i}"
to = "d{i}"
start_jitter = "10ms"
[output]
window = ["1s", "3s"]
sample_interval = "10ms"
"#;
    let held = format!(
        "{src}[[event]]\nat = \"0s\"\nset_rate = {{ link = \"r1->r2\", rate = \"997Mbps\" }}\n"
    );
    let run = |text: &str| {
        let (sim, mut s) = acclab_sim::run(parse(text, "step").unwrap(), &mut |_| {});
        let events = s.events;
        (s.events, s.wall_time_s) = (0, 0.0);
        let samples = format!("{:?}", sim.monitor().link_samples);
        (serde_json::to_string(&s).unwrap(), samples, events)
    };
    let (eager, eager_samples, eager_events) = run(&src);
    let (two_event, two_event_samples, two_event_events) = run(&held);
    assert!(eager.contains("\"marks\":"), "{eager}");
    let marks: u64 = serde_json::from_str::<serde_json::Value>(&eager).unwrap()["links"][0]
        ["marks"]
        .as_u64()
        .unwrap();
    assert!(marks > 10_000, "the threshold is crossed: {marks} marks");
    assert_eq!(eager, two_event);
    assert_eq!(eager_samples, two_event_samples);
    assert!(
        eager_events < two_event_events,
        "{eager_events} vs {two_event_events} events"
    );
}
