//! Samples streamed to a sink as the run goes: the sink sees every sample the in-memory run
//! keeps, in the same order, and a run that keeps none holds no samples.

use std::sync::{Arc, Mutex};

use acclab_results::samples::{FlowSample, LinkSample, SampleSink};
use acclab_scenario::{parse, templates::reno_dumbbell};
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
