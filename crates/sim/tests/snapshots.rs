//! Behaviour snapshots: the per-round window traces of Reno, Vegas and Monaco (ACC-P), and the
//! queue trace of a RED bottleneck, as text under `tests/snapshots/`. Any change to the dynamics
//! shows up as a diff to review (`cargo insta review`, or compare the `.snap.new` file by hand);
//! a change that is meant is accepted by replacing the snapshot.
//!
//! The scenario: 10 Mb/s, 10 ms bottleneck, 100 Mb/s 1 ms access links (round trip 24 ms plus
//! queueing), 1000-byte packets, sampled every 25 ms, about one round.

use acclab_core::config::{
    AccPolicyName, DroptailParams, MonacoParams, QueueConfig, RedParams, RenoParams, SchemeConfig,
};
use acclab_core::{Duration, Limit, Rate};
use acclab_scenario::Scenario;
use acclab_sim::Simulator;

const ROUND: Duration = Duration::from_millis(25);

/// `flows` flows of `scheme`, flow i starting at i × 500 ms, over a bottleneck with `queue`.
fn dumbbell(scheme: SchemeConfig, queue: QueueConfig, flows: usize, seconds: u64) -> Scenario {
    let ms = Duration::from_millis;
    let mut b = Scenario::builder("snapshot", Duration::from_secs(seconds))
        .duplex("r1", "r2", Rate::from_mbps(10), ms(10))
        .queue(queue)
        .sample_interval(ROUND);
    for i in 0..flows {
        let (s, d) = (format!("s{i}"), format!("d{i}"));
        b = b
            .duplex(&s, "r1", Rate::from_mbps(100), ms(1))
            .duplex("r2", &d, Rate::from_mbps(100), ms(1))
            .flow(&format!("f{i}"), scheme.clone())
            .from(&s)
            .to(&d)
            .start(ms(500 * i as u64));
    }
    b.build().expect("a valid scenario")
}

fn droptail(packets: u64) -> QueueConfig {
    QueueConfig::Droptail(DroptailParams {
        limit: Limit::Packets(packets),
        priority: false,
    })
}

fn run(sc: Scenario) -> Simulator {
    let mut sim = Simulator::new(sc);
    sim.run(&mut |_| {});
    sim
}

/// Flow 0's window (packets) and smoothed RTT (ms), one line per round.
fn window_trace(sim: &Simulator) -> String {
    let mut out = String::from("    t_s  cwnd_pkts  srtt_ms\n");
    for s in sim.monitor().flow_samples.iter().filter(|s| s.flow == 0) {
        let cwnd = s.cwnd_bytes.map_or(f64::NAN, |c| c as f64 / 1000.0);
        let srtt = s.srtt_s.map_or(f64::NAN, |r| r * 1e3);
        out += &format!("{:7.3} {:10.2} {:8.2}\n", s.t_s, cwnd, srtt);
    }
    out
}

#[test]
fn reno_window_per_round() {
    let sim = run(dumbbell(
        SchemeConfig::Reno(RenoParams::default()),
        droptail(30),
        1,
        4,
    ));
    insta::assert_snapshot!(window_trace(&sim));
}

#[test]
fn vegas_window_per_round() {
    let sim = run(dumbbell(
        SchemeConfig::Vegas(Box::default()),
        droptail(100),
        1,
        4,
    ));
    insta::assert_snapshot!(window_trace(&sim));
}

#[test]
fn monaco_acc_p_window_per_round() {
    let monaco = MonacoParams {
        policy: AccPolicyName::AccP,
        ..MonacoParams::default()
    };
    let queue = QueueConfig::Droptail(DroptailParams {
        limit: Limit::Packets(100),
        priority: true,
    });
    let sim = run(dumbbell(
        SchemeConfig::Monaco(Box::new(monaco)),
        queue,
        1,
        4,
    ));
    insta::assert_snapshot!(window_trace(&sim));
}

#[test]
fn red_queue_per_round_under_two_reno_flows() {
    let red: RedParams = toml::from_str(
        r#"limit = "60pkt"
min_th = "5pkt"
max_th = "15pkt""#,
    )
    .expect("RED parameters");
    let sim = run(dumbbell(
        SchemeConfig::Reno(RenoParams::default()),
        QueueConfig::Red(red),
        2,
        4,
    ));
    let m = sim.monitor();
    let mut out = format!("    t_s  queue_pkts  drops  {}\n", m.aqm_columns.join("  "));
    for s in m.link_samples.iter().filter(|s| s.link == 0) {
        out += &format!("{:7.3} {:11} {:6}", s.t_s, s.queue_pkts, s.drops);
        for v in &s.aqm {
            out += &format!("  {:8.3}", v.unwrap_or(f64::NAN));
        }
        out += "\n";
    }
    insta::assert_snapshot!(out);
}
