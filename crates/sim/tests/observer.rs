//! The observer interface end to end: an observer added to a run is told of every queue event,
//! and what it counts agrees with the queues' own counters, the monitor's summary and the
//! simulator's conservation bookkeeping.

use std::sync::{Arc, Mutex};

use acclab_core::queue::{Backlog, DropReason};
use acclab_core::{Packet, Time};
use acclab_scenario::{parse, LinkId};
use acclab_sim::observe::{NetworkView, Observer, Transmit};
use acclab_sim::Simulator;

#[derive(Default)]
struct Counts {
    enqueued: Vec<u64>,
    transmitted: Vec<u64>,
    marked: Vec<u64>,
    dropped: Vec<[u64; 4]>,
    delivered: u64,
    samples: u64,
    windows: (u64, u64),
    finished: bool,
    last: Time,
    went_back: bool,
}

struct Counter(Arc<Mutex<Counts>>);

impl Counter {
    fn at(&self, now: Time) -> std::sync::MutexGuard<'_, Counts> {
        let mut c = self.0.lock().unwrap();
        c.went_back |= now < c.last;
        c.last = now;
        c
    }
}

fn grow(v: &mut Vec<u64>, l: LinkId) -> &mut u64 {
    let i = l.0 as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

impl Observer for Counter {
    fn on_enqueue(&mut self, now: Time, l: LinkId, _: &Packet, marked: bool, _: Backlog) {
        let mut c = self.at(now);
        *grow(&mut c.enqueued, l) += 1;
        *grow(&mut c.marked, l) += u64::from(marked);
    }
    fn on_transmit(&mut self, now: Time, l: LinkId, _: &Packet, tx: Transmit, _: Backlog) {
        assert!(tx.done > now);
        let mut c = self.at(now);
        *grow(&mut c.transmitted, l) += 1;
        *grow(&mut c.marked, l) += u64::from(tx.marked);
    }
    fn on_drop(&mut self, now: Time, l: LinkId, _: &Packet, why: DropReason, _: Backlog) {
        let mut c = self.at(now);
        let i = l.0 as usize;
        if c.dropped.len() <= i {
            c.dropped.resize(i + 1, [0; 4]);
        }
        let k = match why {
            DropReason::Overflow => 0,
            DropReason::Aqm => 1,
            DropReason::HeadDrop => 2,
            DropReason::LinkLoss => 3,
        };
        c.dropped[i][k] += 1;
    }
    fn on_deliver(&mut self, now: Time, _: &Packet) {
        self.at(now).delivered += 1;
    }
    fn on_sample(&mut self, now: Time, net: &dyn NetworkView) {
        assert_eq!(net.flow_count(), 3);
        self.at(now).samples += 1;
    }
    fn on_window_start(&mut self, now: Time, _: &dyn NetworkView) {
        self.at(now).windows.0 += 1;
    }
    fn on_window_end(&mut self, now: Time, _: &dyn NetworkView) {
        self.at(now).windows.1 += 1;
    }
    fn finish(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().finished = true;
        Ok(())
    }
}

const SCENARIO: &str = r#"name = "observed"
duration = "8s"
[[link]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
queue = { kind = "red", limit = "40pkt", min_th = "5pkt", max_th = "15pkt" }
loss = 0.002
[[link]]
count = 3
between = ["s{i}", "r1"]
rate = "100Mbps"
delay = "1ms"
[[link]]
count = 3
between = ["r2", "d{i}"]
rate = "100Mbps"
delay = "1ms"
[[flow]]
count = 3
id = "f{i}"
kind = "reno"
from = "s{i}"
to = "d{i}"
[output]
window = ["2s", "8s"]
sample_interval = "100ms"
"#;

#[test]
fn an_added_observer_sees_what_the_queues_and_the_summary_count() {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let mut sim = Simulator::new(parse(SCENARIO, "observed.toml").unwrap());
    sim.observe(Box::new(Counter(counts.clone())));
    sim.run(&mut |_| {});
    sim.finish_samples().unwrap();
    let summary = acclab_sim::output::summary(&sim, 0.0);
    let c = counts.lock().unwrap();
    assert!(c.finished && !c.went_back);
    assert_eq!(c.samples, 80);
    assert_eq!(c.windows, (1, 1));
    let net = sim.network();
    let mut aqm_drops = 0;
    for (i, l) in summary.links.iter().enumerate() {
        let st = net.queue(LinkId(i as u32)).stats();
        let d = c.dropped.get(i).copied().unwrap_or_default();
        assert_eq!(c.enqueued.get(i).copied().unwrap_or(0), st.enqueued_packets);
        assert_eq!(
            c.transmitted.get(i).copied().unwrap_or(0),
            st.dequeued_packets
        );
        assert_eq!(
            c.transmitted.get(i).copied().unwrap_or(0),
            l.transmitted_packets
        );
        assert_eq!(c.marked.get(i).copied().unwrap_or(0), st.marked_packets);
        assert_eq!(d[0] + d[1] + d[2], st.dropped_packets, "{}", l.id);
        assert_eq!(d[3], l.random_losses, "{}", l.id);
        aqm_drops += d[1];
    }
    assert!(
        aqm_drops > 0,
        "RED dropped nothing: the scenario tests too little"
    );
    assert!(summary.links.iter().any(|l| l.random_losses > 0));
    let arrived: u64 = (0..3)
        .flat_map(|f| sim.packet_counts(f))
        .map(|c| c.arrived)
        .sum();
    assert_eq!(c.delivered, arrived);
    let dropped: u64 = (0..3)
        .flat_map(|f| sim.packet_counts(f))
        .map(|c| c.dropped)
        .sum();
    let observed: u64 = c.dropped.iter().flatten().sum();
    assert_eq!(observed, dropped);
}

/// Adding an observer changes nothing in the run: on links that compute a packet's departure
/// when it is enqueued, an added observer is told of each transmission by an event of its own
/// at the transmission's start, which must neither move another event nor change a queue.
#[test]
fn an_added_observer_changes_nothing_in_the_run() {
    let run = |observe: bool| {
        let mut sim = Simulator::new(parse(SCENARIO, "observed.toml").unwrap());
        if observe {
            sim.observe(Box::new(Counter(Arc::default())));
        }
        sim.run(&mut |_| {});
        sim.finish_samples().unwrap();
        let mut summary = acclab_sim::output::summary(&sim, 0.0);
        let events = std::mem::take(&mut summary.events);
        let m = sim.monitor();
        let samples = format!("{:?}{:?}", m.flow_samples, m.link_samples);
        (summary, samples, events)
    };
    let (plain, plain_samples, plain_events) = run(false);
    let (observed, observed_samples, observed_events) = run(true);
    assert!(observed_events > plain_events, "the notices ran");
    assert!(plain_samples.len() > 1000, "samples were kept");
    assert_eq!(plain, observed);
    assert_eq!(plain_samples, observed_samples);
}
