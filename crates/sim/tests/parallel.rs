//! A parallel run gives the serial run's results (issue 56 §2): the summary, every sample, and
//! the flows' completion times, byte for byte, on 2 and 3 threads; a streamed run's
//! delays.csv rows in the serial order.

mod common;
use common::first_difference;

use std::sync::{Arc, Mutex};

use acclab_core::queue::{Backlog, DropReason};
use acclab_core::{Packet, Time};
use acclab_results::delay::HistogramBin;
use acclab_results::samples::{FlowSample, LinkSample, SampleSink};
use acclab_scenario::templates;
use acclab_scenario::LinkId;
use acclab_sim::observe::{NetworkView, Observer, Transmit};
use acclab_sim::Simulator;

/// The run of scenario `text` on `threads` threads (1: the serial engine), set up by `setup`.
fn simulated(text: &str, threads: usize, setup: impl FnOnce(&mut Simulator)) -> Simulator {
    let sc = acclab_scenario::parse(text, "parallel.toml").unwrap();
    let mut sim = Simulator::new(sc);
    setup(&mut sim);
    if threads > 1 {
        sim.run_parallel(threads, &mut |_| {}).unwrap();
    } else {
        sim.run(&mut |_| {});
    }
    sim
}

/// The run's summary (wall time left out) as JSON, and its samples as text.
fn outcome(text: &str, threads: usize) -> (String, String) {
    let sim = simulated(text, threads, |_| {});
    let summary = acclab_sim::output::summary(&sim, 0.0);
    let json = serde_json::to_string_pretty(&summary).unwrap();
    let m = sim.monitor();
    let samples = format!("{:?}\n{:?}", m.flow_samples, m.link_samples);
    (json, samples)
}

fn same_on_threads(text: &str) {
    let serial = outcome(text, 1);
    for threads in [2, 3] {
        let parallel = outcome(text, threads);
        assert!(
            serial.0 == parallel.0,
            "summary differs on {threads} threads:\n{}",
            first_difference(&serial.0, &parallel.0)
        );
        assert!(
            serial.1 == parallel.1,
            "samples differ on {threads} threads:\n{}",
            first_difference(&serial.1, &parallel.1)
        );
    }
}

#[test]
fn a_fat_tree_of_long_flows() {
    same_on_threads(&templates::fat_tree_permutation(4, 20));
}

#[test]
fn a_fat_tree_under_web_search() {
    same_on_threads(&templates::fat_tree_websearch(4, 0.5, 20));
}

/// `[output] queueing_percentiles = false` keeps the links' queueing delays as their mean
/// alone: the summary is the default run's without the percentiles (the run is the same; only
/// what the monitor keeps of it differs), on one thread and on two.
#[test]
fn a_run_without_queueing_percentiles_is_the_same_run_without_them() {
    let text = templates::fat_tree_websearch(4, 0.5, 20);
    let without = format!("{text}[output]\nqueueing_percentiles = false\n");
    let whole = outcome(&text, 1).0;
    let mut expected: serde_json::Value = serde_json::from_str(&whole).unwrap();
    let mut percentiles = 0;
    for l in expected["links"].as_array_mut().unwrap() {
        if let Some(q) = l.get_mut("queueing_delay").and_then(|q| q.as_object_mut()) {
            for p in ["p50_s", "p95_s", "p99_s"] {
                percentiles += usize::from(q.remove(p).is_some());
            }
        }
    }
    assert!(percentiles > 30, "{percentiles}: the links queued");
    for threads in [1, 2] {
        let got: serde_json::Value = serde_json::from_str(&outcome(&without, threads).0).unwrap();
        assert!(got == expected, "on {threads} threads");
    }
}

/// The delays.csv rows a streamed run writes, in order: each flow's, as the flow is retired
/// (its histogram then final and freed), the rest at the end.
#[derive(Clone, Default)]
struct DelayRows(Arc<Mutex<Vec<String>>>);

impl SampleSink for DelayRows {
    fn flow(&mut self, _: &FlowSample) {}
    fn link(&mut self, _: &LinkSample) {}
    fn delays(&mut self, flow: u32, bins: &mut dyn Iterator<Item = HistogramBin>) {
        let bins: Vec<_> = bins.collect();
        self.0.lock().unwrap().push(format!("{flow}: {bins:?}"));
    }
}

fn streamed_delays(text: &str, threads: usize) -> Vec<String> {
    let rows = DelayRows::default();
    let mut sim = simulated(text, threads, |sim| {
        sim.stream_samples(Box::new(rows.clone()), false)
    });
    sim.finish_samples().unwrap();
    let rows = rows.0.lock().unwrap().clone();
    rows
}

/// A streamed run writes each finite flow's delay histogram when the flow is retired: a
/// parallel run retires flows at the serial run's instants (the coordinator works out when the
/// serial run's check would have found nothing of the flow left), so delays.csv's rows come in
/// the serial order too.
#[test]
fn streamed_delay_histograms_come_in_the_serial_order() {
    // Packet spraying reorders, so senders retransmit spuriously: copies still in flight
    // when a transfer completes, so that flows are retired not at their last ACK but at a
    // check a round trip or more later (27 flows when this was written, some after
    // several checks; none with flow ECMP).
    let text = templates::fat_tree_websearch(4, 0.6, 20)
        .replace(r#"ecmp = "flow""#, r#"ecmp = "packet""#)
        + "[output]\ndelay_histograms = true\n";
    let serial = streamed_delays(&text, 1);
    let flows = acclab_scenario::parse(&text, "parallel.toml")
        .unwrap()
        .flows
        .len();
    assert_eq!(serial.len(), flows, "a row per flow");
    same_lines("delays.csv's rows", &serial, |threads| {
        streamed_delays(&text, threads)
    });
}

/// `what` of runs on 2 and 3 threads (`run`) are the serial run's lines, `serial`.
fn same_lines(what: &str, serial: &[String], run: impl Fn(usize) -> Vec<String>) {
    for threads in [2, 3] {
        let parallel = run(threads);
        assert!(
            serial == parallel,
            "{what} differ on {threads} threads:\n{}",
            first_difference(&serial.join("\n"), &parallel.join("\n"))
        );
    }
}

/// Jitter: drawn where a packet leaves, from its link's own stream, so a parallel run draws what
/// the serial run draws. On the links between pods (between partitions) it bounds the
/// lookahead (uniform and Pareto draws have a shortest delay); on the hosts' links (within a
/// partition) it may reorder.
#[test]
fn a_fat_tree_with_jitter() {
    let mut text = templates::fat_tree_permutation(4, 10);
    for pod in 0..4 {
        for a in 0..2 {
            for c in [2 * a, 2 * a + 1] {
                let dist = if c % 2 == 0 { "uniform" } else { "pareto" };
                for link in [
                    format!("agg{pod}_{a}->core{c}"),
                    format!("core{c}->agg{pod}_{a}"),
                ] {
                    text += &format!(
                        "[topology.links.\"{link}\"]\njitter = {{ amount = \"300ns\", distribution = \"{dist}\" }}\n"
                    );
                }
            }
        }
    }
    for h in 0..4 {
        text += &format!(
            "[topology.links.\"h{h}->edge0_{}\"]\njitter = {{ amount = \"500ns\", distribution = \"normal\", reorder = true }}\n",
            h / 2
        );
    }
    same_on_threads(&text);
}

/// `text` with HPCC flows in place of DCTCP's (which start at line rate: no initial window).
fn hpcc(text: &str) -> String {
    text.replace(r#"kind = "dctcp""#, r#"kind = "hpcc""#)
        .replace("initial_window = 10, ", "")
}

/// An observer that writes down everything it hears, and at the run's hooks what it reads of
/// the network: every queue's backlog and counters, every flow's times, endpoint statistics
/// and congestion-control state.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn line(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
    fn network(&self, hook: &str, now: Time, net: &dyn NetworkView) {
        let mut s = format!("{hook} {now:?}");
        for l in 0..net.link_count() {
            let q = net.queue(LinkId(l as u32));
            s += &format!(" {:?} {:?}", q.backlog(), q.stats());
        }
        for f in 0..net.flow_count() {
            s += &format!(
                " {:?} {:?} {:?}",
                net.flow_times(f),
                net.endpoint_stats(f),
                net.cc_state(f)
            );
        }
        self.line(s);
    }
}

impl Observer for Log {
    fn on_enqueue(&mut self, now: Time, l: LinkId, p: &Packet, marked: bool, b: Backlog) {
        self.line(format!("enqueue {now:?} {l:?} {p:?} {marked} {b:?}"));
    }
    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, b: Backlog) {
        self.line(format!("transmit {now:?} {l:?} {p:?} {tx:?} {b:?}"));
    }
    fn on_drop(&mut self, now: Time, l: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        self.line(format!("drop {now:?} {l:?} {p:?} {why:?} {b:?}"));
    }
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.line(format!("deliver {now:?} {p:?}"));
    }
    fn on_flow_done(&mut self, now: Time, flow: u32) {
        self.line(format!("done {now:?} {flow}"));
    }
    fn on_sample(&mut self, now: Time, net: &dyn NetworkView) {
        self.network("sample", now, net);
    }
    fn on_window_start(&mut self, now: Time, net: &dyn NetworkView) {
        self.network("window start", now, net);
    }
    fn on_window_end(&mut self, now: Time, net: &dyn NetworkView) {
        self.network("window end", now, net);
    }
}

/// What [`Log`] heard of a run on `threads` threads.
fn logged(text: &str, threads: usize) -> Vec<String> {
    let log = Log::default();
    simulated(text, threads, |sim| sim.observe(Box::new(log.clone())));
    let lines = std::mem::take(&mut *log.0.lock().unwrap());
    lines
}

/// An observer of the library's user beside the monitor hears in a parallel run what it
/// hears in the serial run, in the same order: every packet report, every flow's end, and at
/// every sample and the measurement window's edges the whole network as it is then. A
/// web-search fabric with packet spraying (flows retire at later checks too), its window
/// opening at 2 ms, sampled every 500 µs.
#[test]
fn an_observer_hears_the_serial_run() {
    let text = templates::fat_tree_websearch(4, 0.5, 8)
        .replace(r#"ecmp = "flow""#, r#"ecmp = "packet""#)
        + "[output]\nwindow = [\"2ms\", \"7ms\"]\nsample_interval = \"500us\"\n";
    let serial = logged(&text, 1);
    let done = serial.iter().filter(|l| l.starts_with("done")).count();
    let samples = serial.iter().filter(|l| l.starts_with("sample")).count();
    assert!(
        done > 20 && samples >= 16,
        "{done} flows done, {samples} samples"
    );
    same_lines("what the observer heard", &serial, |threads| {
        logged(&text, threads)
    });
}

/// In-band telemetry (HPCC): a data packet's records go with it into other partitions (after
/// the link between them has written its own), and wait for the ACK that echoes them in its
/// sender's partition. Long flows, and web search (flows opening and closing); with step-ECN
/// queues (links that depart at enqueue, whose records are written lazily) and with RED
/// (links that serialise on their own).
#[test]
fn a_fat_tree_of_hpcc_flows() {
    same_on_threads(&hpcc(&templates::fat_tree_permutation(4, 5)));
    let web = hpcc(&templates::fat_tree_websearch(4, 0.5, 10));
    same_on_threads(&web);
    let red = r#"queue = { kind = "red", limit = "200pkt", min_th = "20pkt", max_th = "100pkt", max_p = 0.1 }"#;
    let web_red = web.replace(
        r#"queue = { kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }"#,
        red,
    );
    assert!(web_red.contains("red"));
    same_on_threads(&web_red);
}

/// In-band telemetry with packets that may be reordered stays serial, and says why. (HPCC
/// with packet spraying is refused by the scenario.)
#[test]
fn in_band_telemetry_with_reordering_keeps_a_run_serial() {
    let text = hpcc(&templates::fat_tree_permutation(4, 1))
        + "[topology.links.\"h0->edge0_0\"]\njitter = { amount = \"500ns\", distribution = \"normal\", reorder = true }\n";
    let sc = acclab_scenario::parse(&text, "parallel.toml").unwrap();
    let e = Simulator::new(sc).run_parallel(2, &mut |_| {}).unwrap_err();
    assert!(
        e.contains("in-band telemetry (HPCC) with packets that may arrive out of order (reordering jitter, dualpi2)"),
        "{e}"
    );
}

/// Jitter a parallel run cannot bound, or that reorders between partitions: the run is serial,
/// and says which link.
#[test]
fn jitter_without_a_least_delay_between_partitions_keeps_a_run_serial() {
    for (jitter, why) in [
        (
            r#"{ amount = "300ns", distribution = "normal" }"#,
            "link agg3_0->core0 between partitions can have no propagation delay (no lookahead: its jitter reaches zero)",
        ),
        (
            r#"{ amount = "300ns", reorder = true }"#,
            "link agg3_0->core0 between partitions has jitter that reorders",
        ),
    ] {
        let text = templates::fat_tree_permutation(4, 1)
            + &format!("[topology.links.\"agg3_0->core0\"]\njitter = {jitter}\n");
        let sc = acclab_scenario::parse(&text, "parallel.toml").unwrap();
        let e = Simulator::new(sc).run_parallel(2, &mut |_| {}).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
}

/// The packet trace of a run on `threads` threads, its outputs streamed into `dir`: the trace
/// file's bytes (a pcap trace's files', with their names).
fn traced(text: &str, threads: usize, dir: &std::path::Path, file: &str) -> Vec<u8> {
    std::fs::create_dir_all(dir).unwrap();
    let mut sim = simulated(text, threads, |sim| {
        acclab_sim::output::stream_outputs(dir, sim, false).unwrap()
    });
    sim.finish_samples().unwrap();
    let path = dir.join(file);
    if !path.is_dir() {
        return std::fs::read(path).unwrap();
    }
    // A pcap trace: a file per capture point and link.
    let mut files: Vec<_> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut bytes = Vec::new();
    for f in files {
        bytes.extend(f.file_name().unwrap().as_encoded_bytes());
        bytes.extend(std::fs::read(f).unwrap());
    }
    bytes
}

/// A packet trace of a parallel run is the serial run's, byte for byte: each partition records
/// what it reports with its events' keys and the coordinator replays the records merged. Two
/// fabrics: step-ECN queues (which serialise) traced as CSV, over links within and between
/// partitions and a long flow over every link; drop-tail queues (links that depart at enqueue,
/// brought up to date link by link at samples and at the end) traced as pcap.
#[test]
fn a_packet_trace_is_the_serial_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let links = r#"["h0->edge0_0", "edge0_0->agg0_1", "agg0_1->core2", "core2->agg3_1", "agg3_1->edge3_0", "edge3_0->h12"]"#;
    let long = "[[flow]]\nid = \"long\"\nkind = \"dctcp\"\nfrom = \"h1\"\nto = \"h14\"\n";
    let ecn = templates::fat_tree_websearch(4, 0.6, 5) + long;
    let droptail = ecn.replace(
        r#"queue = { kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }"#,
        r#"queue = { kind = "droptail", limit = "30pkt" }"#,
    );
    assert!(droptail.contains("droptail"));
    // Samples every 100 µs: links that depart at enqueue are brought up to date at each, every
    // partition its own, so the records of one sample come from several partitions.
    let csv = format!(
        "[output]\nsample_interval = \"100us\"\n\
         trace = {{ links = {links}, flows = [\"long\"], format = \"csv\" }}\n"
    );
    let pcap =
        format!("[output]\ntrace = {{ links = {links}, format = \"pcap\", capture = \"both\" }}\n");
    let cases = [
        ("ecn-csv", ecn.clone() + &csv, "trace.csv"),
        ("droptail-csv", droptail.clone() + &csv, "trace.csv"),
        ("droptail-pcap", droptail + &pcap, "pcap"),
    ];
    for (name, text, file) in &cases {
        let serial = traced(text, 1, &tmp.path().join(format!("{name}1")), file);
        assert!(
            serial.len() > 10_000,
            "{name}: a trace of {} bytes",
            serial.len()
        );
        for threads in [2, 3] {
            let dir = tmp.path().join(format!("{name}{threads}"));
            let parallel = traced(text, threads, &dir, file);
            assert!(
                serial == parallel,
                "{name} trace differs on {threads} threads ({} and {} bytes)",
                serial.len(),
                parallel.len()
            );
        }
    }
}
