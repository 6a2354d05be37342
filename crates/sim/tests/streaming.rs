//! Samples streamed to a sink as the run goes: the sink sees every sample the in-memory run
//! keeps, in the same order, and a run that keeps none holds no samples. Which samples a flow
//! has: a finite transfer's span its life.

use std::sync::{Arc, Mutex};

use acclab_results::samples::{FlowSample, LinkSample, SampleSink};
use acclab_scenario::{parse, templates::reno_dumbbell};
use acclab_sim::observe::NetworkView;
use acclab_sim::Simulator;

/// Flow samples, link samples, and whether the stream was finished.
type Collected = (Vec<FlowSample>, Vec<LinkSample>, bool);

#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Collected>>);

impl SampleSink for Collect {
    fn flow(&mut self, s: &FlowSample) {
        self.0.lock().unwrap().0.push(s.clone());
    }
    fn link(&mut self, s: &LinkSample) {
        self.0.lock().unwrap().1.push(s.clone());
    }
    fn finish(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().2 = true;
        Ok(())
    }
}

#[test]
fn a_streamed_run_holds_no_samples_and_streams_exactly_what_a_kept_run_holds() {
    let sc = parse(&reno_dumbbell(3, 100, 5), "s").unwrap();
    let mut kept = Simulator::new(sc.clone());
    kept.run(&mut |_| {});

    let sink = Collect::default();
    let mut streamed = Simulator::new(sc);
    streamed.stream_samples(Box::new(sink.clone()), false);
    streamed.run(&mut |_| {});
    streamed.finish_samples().unwrap();

    let m = streamed.monitor();
    assert!(m.flow_samples.is_empty() && m.link_samples.is_empty());
    let got = sink.0.lock().unwrap();
    assert!(got.2, "finish was called");
    assert_eq!(got.0, kept.monitor().flow_samples);
    assert_eq!(got.1, kept.monitor().link_samples);
    assert_eq!(got.0.len(), 3 * 50);
}

/// flows.csv rows of a finite transfer span its life (from the first sample after its start to
/// the first after its completion); a long-lived flow keeps a row at every sample, from the
/// first, as before.
#[test]
fn a_finite_flows_samples_span_its_life_and_a_long_flows_every_sample() {
    let src = r#"name = "rows"
duration = "2s"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "5ms"
[[link]]
count = 2
between = ["s{i}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = 2
between = ["r2", "d{i}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
id = "long"
kind = "reno"
from = "s0"
to = "d0"
start = "0.55s"
[[flow]]
id = "short"
kind = "reno"
from = "s1"
to = "d1"
start = "0.55s"
params = { size = "200KB" }
[output]
window = ["0.5s", "2s"]
sample_interval = "100ms"
"#;
    let (sim, _) = acclab_sim::run(parse(src, "rows").unwrap(), &mut |_| {});
    let rows = |f: u32| -> Vec<f64> {
        sim.monitor()
            .flow_samples
            .iter()
            .filter(|s| s.flow == f)
            .map(|s| s.t_s)
            .collect()
    };
    assert_eq!(rows(0).len(), 20, "the long flow: a row at every sample");
    let (tx, _) = sim.network().endpoint_stats(1);
    let done = tx
        .completed_at
        .expect("the transfer completes")
        .as_secs_f64();
    assert!(done < 1.5, "completed at {done} s");
    let short = rows(1);
    let first_after = |t: f64| (t * 10.0).floor() / 10.0 + 0.1;
    assert_eq!(short.first().copied(), Some(0.6), "{short:?}");
    let last = *short.last().unwrap();
    assert!(
        (last - first_after(done)).abs() < 1e-9,
        "{short:?}, done at {done}"
    );
    assert_eq!(short.len(), ((last - 0.6) * 10.0).round() as usize + 1);
}
