//! Measurement: periodic samples for `flows.csv` / `links.csv`, and the snapshots at the edges
//! of the measurement window from which `summary.json` is computed (SPEC §7).
//!
//! The monitor is an [`Observer`]: it learns of the run only from what the simulator reports —
//! queue events as they happen (from which it integrates each link's busy time and queue
//! length, and counts losses per flow and per cause) and, at samples and window edges, what
//! endpoints and queues report through their `stats()`, `backlog()` and `aqm_state()` methods.
//! It never reaches into protocol or simulator state. Counters are cumulative, so every rate or
//! mean over an interval is a difference of two snapshots. The summary is built from its records
//! of the window ([`Monitor::flow_window`], [`Monitor::link_window`]).
//!
//! Samples are kept in memory (for plots and the reproductions' charts) unless the run streams
//! them to a [`SampleSink`] as they are taken and keeps none: then the monitor's memory depends
//! on the number of flows and links only, not on the duration or the sampling rate.

use acclab_core::queue::{Backlog, DropReason};
use acclab_core::transport::EndpointStats;
use acclab_core::{Packet, PacketKind, Rate, Time};

use crate::observe::{NetworkView, Observer, Transmit};
use acclab_results::delay::{DelayRecorder, DelayStats, QueueingStats, SojournRecorder};
use acclab_results::samples::{FlowSample, LinkSample, SampleSink};
use acclab_scenario::{LinkId, Scenario};

#[derive(Clone, Copy, Debug, Default)]
struct FlowSnap {
    pub delivered: u64,
    /// Data bytes the network handed to the receiver, duplicates and out-of-order ones included.
    pub received: u64,
    pub sent: u64,
    pub rtt_sum_ns: u64,
    pub rtt_samples: u64,
    pub retransmits: u64,
}

/// What a flow did between two snapshots.
impl std::ops::Sub for FlowSnap {
    type Output = FlowSnap;
    fn sub(self, earlier: FlowSnap) -> FlowSnap {
        FlowSnap {
            delivered: self.delivered - earlier.delivered,
            received: self.received - earlier.received,
            sent: self.sent - earlier.sent,
            rtt_sum_ns: self.rtt_sum_ns - earlier.rtt_sum_ns,
            rtt_samples: self.rtt_samples - earlier.rtt_samples,
            retransmits: self.retransmits - earlier.retransmits,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct LinkSnap {
    pub busy_ns: u64,
    /// Bytes the link's queue has let go to the transmitter, and packets.
    pub bytes: u64,
    pub packets: u64,
    pub queue_area: u128,
    pub drops: u64,
    pub marks: u64,
}

/// What the monitor integrates of one link from the queue events it is told of: one cache
/// line (64 bytes), touched at each enqueue and transmission of the link.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct LinkTrack {
    /// ∫ queue length (packets) dt in packet·ns up to `area_at`, and the length since then.
    area: u128,
    area_at: Time,
    /// Transmission time of the packets sent before the current one, ns.
    busy_done: u64,
    /// The current (or last) transmission: when it started and when it ends (both zero
    /// before the first).
    tx_start: Time,
    tx_end: Time,
    backlog: u32,
    /// Largest backlog in packets since the measurement window opened.
    window_max: u32,
    /// Largest backlog over the whole run, packets and bytes (bytes saturate at 4 GiB).
    peak_pkts: u32,
    peak_bytes: u32,
}

impl LinkTrack {
    /// Time spent transmitting up to `now`, ns.
    fn busy_ns(&self, now: Time) -> u64 {
        self.busy_done + (now.min(self.tx_end) - self.tx_start).0
    }

    /// ∫ queue length dt up to `now`, packet·ns.
    fn area(&self, now: Time) -> u128 {
        self.area + self.backlog as u128 * (now - self.area_at).0 as u128
    }

    /// The backlog is `b` from `now` on.
    fn backlog_is(&mut self, now: Time, b: Backlog) {
        self.area = self.area(now);
        self.area_at = now;
        self.backlog = b.packets as u32;
    }
}

/// What the monitor measured of a flow over the measurement window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowWindow {
    /// Bytes its receiver delivered in order.
    pub delivered_bytes: u64,
    /// Data bytes that reached its receiver (out of order and duplicates included): what the
    /// path carried, which its capacity bounds.
    pub received_bytes: u64,
    /// Sum and number of the RTT samples its sender took.
    pub rtt_sum_ns: u64,
    pub rtt_samples: u64,
    pub retransmits: u64,
    /// Means of the samples taken while the flow was active (for schemes that have them).
    pub mean_cwnd_bytes: Option<f64>,
    pub mean_accumulation_bytes: Option<f64>,
}

/// What the monitor measured of a link over the measurement window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkWindow {
    /// Time spent transmitting, ns.
    pub busy_ns: u64,
    /// Bytes that began their transmission, and packets.
    pub transmitted_bytes: u64,
    pub transmitted_packets: u64,
    /// ∫ queue length dt, packet·ns.
    pub queue_area: u128,
    pub drops: u64,
    pub marks: u64,
    /// Largest backlog in the window, packets.
    pub max_queue_pkts: u64,
}

/// Time-average accumulators for sampled quantities inside the window.
#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    sum: f64,
    n: u64,
}

impl Mean {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }
    fn get(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
}

/// Collects samples and window snapshots during a run.
pub struct Monitor {
    pub flow_samples: Vec<FlowSample>,
    pub link_samples: Vec<LinkSample>,
    /// Names of the AQM state columns, in order of first appearance over the links.
    pub aqm_columns: Vec<String>,
    /// The congestion-control state columns of `flows.csv`, in order ([`cc_columns`]).
    pub cc_columns: Vec<String>,
    window: (Time, Time),
    last_sample: Time,
    /// Per link at the last sample: its busy time, or on a link whose capacity follows a
    /// trace, the bytes it had sent.
    prev_busy: Vec<u64>,
    /// The capacity traces of the links that follow one: their utilisation is the bytes sent
    /// over the bytes the trace offered (busy time says only that the queue held packets).
    traces: Vec<Option<std::sync::Arc<acclab_core::link::CapacityTrace>>>,
    /// Each flow's counts when the window opened; once it closed, what it did over the window
    /// (one snapshot a flow, not one at each edge): of the flows summary.json lists (the
    /// first), which alone read them.
    win_flows: Vec<FlowSnap>,
    /// Likewise the bytes delivered of each flow it does not list (a workload's), which
    /// Jain's index alone reads (8 bytes a flow, not 48).
    win_delivered: Vec<u64>,
    win_links: [Vec<LinkSnap>; 2],
    win_times: [Option<Time>; 2],
    /// The means of the samples of each flow summary.json lists (`[output] flow_summaries`:
    /// the first flows), which alone read them.
    mean_cwnd: Vec<Mean>,
    mean_accumulation: Vec<Mean>,
    window_max_queue: Vec<u64>,
    tracks: Vec<LinkTrack>,
    /// Packets each link lost at random.
    random_losses: Vec<u64>,
    /// The time each link's packets transmitted in the window waited in its queue.
    queueing: Vec<SojournRecorder>,
    /// Data packets of each flow lost so far (at queues or on lossy links).
    lost_data: Vec<u64>,
    /// Data bytes of each flow that reached its receiver so far.
    received: Vec<u64>,
    /// The one-way delays of each flow's data packets delivered in the window: of the flows
    /// summary.json lists (the first), or of every flow when delays.csv has their histograms.
    /// A workload's flows, unlisted and without histograms, record none: nothing would read
    /// them (96 bytes a flow, a histogram of each flow open, and a record at every delivery).
    delays: Vec<Delays>,
    /// The flows that carry a finite transfer: their flows.csv rows span their lives.
    finite: Vec<bool>,
    /// The flows a sample looks at, by index: every flow without a finite transfer, and the
    /// finite ones from their start to the first sample after they complete (a sample's work
    /// follows the flows open, not all a workload has: a million short flows would otherwise
    /// be read at every sample) — each with its counts at the last sample (held while it is
    /// sampled, not for every flow a workload has: 48 bytes a flow).
    sampled: Vec<(u32, FlowSnap)>,
    /// The finite flows not yet started, the one that starts first last.
    waiting: Vec<u32>,
    scratch: Vec<(String, f64)>,
    /// The controller columns of the last sender's variables, in its order ([`Self::cc_values`]).
    cc_last: [Option<(&'static str, usize)>; acclab_core::transport::CcState::MAX],
    /// A flows.csv row's controller values, to be used again when rows are not kept.
    spare_row: Vec<Option<f64>>,
    /// Whether delays.csv gets every flow's delay histogram (`[output] delay_histograms`).
    histograms: bool,
    /// Where samples stream to, if anywhere.
    sink: Option<Box<dyn SampleSink>>,
    /// Whether samples are also kept in `flow_samples` / `link_samples`.
    keep: bool,
    /// A partition's monitor ([`Monitor::counts_only`]).
    counts_only: bool,
}

/// A flow's one-way delays: recorded as its packets arrive; once it is done, their statistics
/// alone when its histogram went to the stream's delays.csv (a million finished flows keep no
/// histograms), or the finished recorder when there is no stream (the run's files are written
/// from memory at the end).
#[derive(Clone, Debug)]
enum Delays {
    Recording(DelayRecorder),
    Finished(DelayRecorder),
    Done(Option<DelayStats>),
}

fn merged(tx: &EndpointStats, rx: &EndpointStats, received: u64) -> FlowSnap {
    FlowSnap {
        delivered: rx.delivered_bytes,
        received,
        sent: tx.sent_bytes,
        rtt_sum_ns: tx.rtt_sum.0,
        rtt_samples: tx.rtt_samples,
        retransmits: tx.retransmits,
    }
}

impl Monitor {
    /// A sender's state as flows.csv's columns: none when there are no columns, else one value
    /// (or none) per column.
    ///
    /// Each variable's column is found by name once: the usual sender lists the same variables
    /// as the last one, by the same `&'static str`, found by its address (a search by name and
    /// a row allocated for every flow at every sample were ~1% of a 1,000-flow run).
    fn cc_values(&mut self, s: acclab_core::transport::CcState) -> Vec<Option<f64>> {
        if self.cc_columns.is_empty() {
            return Vec::new();
        }
        let mut row = std::mem::take(&mut self.spare_row);
        row.clear();
        row.resize(self.cc_columns.len(), None);
        for ((name, v), last) in s.iter().zip(&mut self.cc_last) {
            let k = match *last {
                Some((seen, k)) if std::ptr::eq(seen, name) => k,
                _ => match self.cc_columns.iter().position(|c| c == name) {
                    Some(k) => last.insert((name, k)).1,
                    None => continue,
                },
            };
            row[k] = v;
        }
        row
    }

    /// Fetches link `l`'s track into cache, ahead of a packet's arrival there.
    #[inline(always)]
    pub fn prefetch_link(&self, l: usize) {
        if let Some(t) = self.tracks.get(l) {
            crate::pipes::prefetch(t);
        }
    }

    pub(crate) fn new(scenario: &Scenario, net: &dyn NetworkView) -> Monitor {
        let mut aqm_columns: Vec<String> = Vec::new();
        let mut scratch = Vec::new();
        for l in 0..net.link_count() {
            scratch.clear();
            net.queue(LinkId(l as u32)).aqm_state(&mut scratch);
            for (name, _) in &scratch {
                if !aqm_columns.contains(name) {
                    aqm_columns.push(name.clone());
                }
            }
        }
        let cc_columns = scenario.cc_columns();
        let nf = scenario.flows.len();
        let nl = net.link_count();
        let listed = scenario.listed_flows();
        let delays = match scenario.output.delay_histograms {
            true => nf,
            false => listed,
        };
        let finite: Vec<bool> = scenario
            .flows
            .iter()
            .map(|f| f.scheme.size().is_some())
            .collect();
        let (mut waiting, sampled): (Vec<u32>, Vec<u32>) =
            (0..nf as u32).partition(|&f| finite[f as usize]);
        let sampled = sampled
            .into_iter()
            .map(|f| (f, FlowSnap::default()))
            .collect();
        waiting.sort_unstable_by_key(|&f| std::cmp::Reverse((net.flow_times(f as usize).0, f)));
        Monitor {
            flow_samples: Vec::new(),
            link_samples: Vec::new(),
            aqm_columns,
            cc_columns,
            window: scenario.output.window,
            last_sample: Time::ZERO,
            prev_busy: vec![0; nl],
            traces: scenario
                .links
                .iter()
                .map(|l| l.capacity.as_ref().map(|c| c.trace.clone()))
                .collect(),
            win_flows: vec![FlowSnap::default(); listed],
            win_delivered: vec![0; nf - listed],
            win_links: [vec![LinkSnap::default(); nl], vec![LinkSnap::default(); nl]],
            win_times: [None, None],
            mean_cwnd: vec![Mean::default(); listed],
            mean_accumulation: vec![Mean::default(); listed],
            window_max_queue: vec![0; nl],
            tracks: vec![LinkTrack::default(); nl],
            random_losses: vec![0; nl],
            queueing: vec![
                match scenario.output.queueing_percentiles {
                    true => SojournRecorder::default(),
                    false => SojournRecorder::mean_only(),
                };
                nl
            ],
            lost_data: vec![0; nf],
            received: vec![0; nf],
            delays: vec![Delays::Recording(DelayRecorder::default()); delays],
            histograms: scenario.output.delay_histograms,
            finite,
            sampled,
            waiting,
            scratch,
            cc_last: [None; acclab_core::transport::CcState::MAX],
            spare_row: Vec::new(),
            sink: None,
            keep: true,
            counts_only: false,
        }
    }

    /// From now on, every sample goes to `sink`; it is also kept in memory only if `keep`.
    pub(crate) fn stream_to(&mut self, sink: Box<dyn SampleSink>, keep: bool) {
        self.sink = Some(sink);
        self.keep = keep;
    }

    /// Whether samples stream to a sink (whose files then hold them).
    pub fn streams(&self) -> bool {
        self.sink.is_some()
    }

    /// Ends the stream: the delays of the flows still going go to delays.csv, then the sink
    /// writes out what it buffered.
    pub(crate) fn finish_stream(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Some(s) => {
                for (f, d) in self.delays.iter().enumerate() {
                    match d {
                        Delays::Recording(r) if self.histograms => {
                            s.delays(f as u32, &mut r.histogram())
                        }
                        _ => {}
                    }
                }
                s.finish()
            }
            None => Ok(()),
        }
    }

    /// Flow `f`'s one-way delay histogram over the window, when the run keeps it in memory
    /// (no stream: [`crate::output::write_files`] writes delays.csv from it); empty otherwise.
    pub fn delay_histogram(&self, f: usize) -> Vec<acclab_results::delay::HistogramBin> {
        match self.delays.get(f) {
            Some(Delays::Recording(r) | Delays::Finished(r)) if self.histograms => {
                r.histogram().collect()
            }
            _ => Vec::new(),
        }
    }

    /// A partition's monitor in a parallel run: it counts what its partition sees, and keeps
    /// and streams no sample (the run's own monitor takes its counts: [`pull`](Self::pull)).
    /// Nor does it take samples or the window's snapshots (the run's monitor does, reading the
    /// partitions joined), so it lets go of what they need of every flow (~190 bytes each).
    pub(crate) fn counts_only(&mut self) {
        self.sink = None;
        self.keep = false;
        self.counts_only = true;
        self.win_flows = Vec::new();
        self.win_delivered = Vec::new();
        self.mean_cwnd = Vec::new();
        self.mean_accumulation = Vec::new();
        self.samples_over();
    }

    /// No sample comes again (the run is at its end, or this is a partition's monitor): what
    /// only samples read of every flow goes (which flows are sampled with their counts at the
    /// last sample, waiting or finite), before the summary is built beside the rest.
    pub(crate) fn samples_over(&mut self) {
        self.finite = Vec::new();
        self.sampled = Vec::new();
        self.waiting = Vec::new();
    }

    /// Takes what the partitions' monitors `parts` counted (parallel runs): each link's
    /// integrals and losses from `sender[l]`'s (the partition of its sending side, which saw
    /// its queue), each flow's bytes received from `receiver[f]`'s (its receiver's), its lost
    /// packets summed over all (a packet is lost where it is dropped). With `last`, the
    /// queueing-delay recorders and the one-way delays of the flows not yet done too.
    pub(crate) fn pull(
        &mut self,
        parts: &mut [&mut Monitor],
        sender: &[u32],
        receiver: &[u32],
        last: bool,
    ) {
        for (l, &p) in sender.iter().enumerate() {
            let from = &mut *parts[p as usize];
            self.tracks[l] = from.tracks[l];
            self.random_losses[l] = from.random_losses[l];
            if last {
                self.queueing[l] = std::mem::take(&mut from.queueing[l]);
            }
        }
        for (f, &p) in receiver.iter().enumerate() {
            self.received[f] = parts[p as usize].received[f];
            self.lost_data[f] = parts.iter().map(|m| m.lost_data[f]).sum();
            if last {
                self.take_delays(parts, receiver, f);
            }
        }
    }

    /// Flow `f`'s one-way delays, recorded by its receiver's partition's monitor, become this
    /// one's (before it is done, in a parallel run), unless it has them already.
    pub(crate) fn take_delays(&mut self, parts: &mut [&mut Monitor], receiver: &[u32], f: usize) {
        if let Some(Delays::Recording(_)) = self.delays.get(f) {
            let from = &mut parts[receiver[f] as usize].delays[f];
            self.delays[f] = std::mem::replace(from, Delays::Done(None));
        }
    }

    fn record_flow(&mut self, s: FlowSample) {
        if let Some(sink) = &mut self.sink {
            sink.flow(&s);
        }
        if self.keep {
            self.flow_samples.push(s);
        } else {
            self.spare_row = s.cc; // the next row's
        }
    }

    fn record_link(&mut self, s: LinkSample) {
        if let Some(sink) = &mut self.sink {
            sink.link(&s);
        }
        if self.keep {
            self.link_samples.push(s);
        }
    }

    /// When the measurement window opened and closed, if it did: `None` for an edge the run
    /// did not reach.
    pub fn window_edges(&self) -> [Option<Time>; 2] {
        self.win_times
    }

    /// What flow `f` did over the measurement window (zero before it closed), if it is one
    /// of the flows summary.json lists; `None` for a workload's flow it does not list, of
    /// which only the bytes delivered are kept ([`window_delivered`](Self::window_delivered)).
    pub fn flow_window(&self, f: usize) -> Option<FlowWindow> {
        let kept = self.win_flows.get(f)?;
        let w = match self.win_times[1] {
            Some(_) => *kept,
            None => FlowSnap::default(),
        };
        Some(FlowWindow {
            delivered_bytes: w.delivered,
            received_bytes: w.received,
            rtt_sum_ns: w.rtt_sum_ns,
            rtt_samples: w.rtt_samples,
            retransmits: w.retransmits,
            mean_cwnd_bytes: self.mean_cwnd.get(f).and_then(Mean::get),
            mean_accumulation_bytes: self.mean_accumulation.get(f).and_then(Mean::get),
        })
    }

    /// Bytes flow `f`'s receiver delivered in order over the measurement window (zero before
    /// it closed): of every flow, listed or not.
    pub fn window_delivered(&self, f: usize) -> u64 {
        match (self.win_times[1], self.win_flows.get(f)) {
            (None, _) => 0,
            (Some(_), Some(w)) => w.delivered,
            (Some(_), None) => self.win_delivered[f - self.win_flows.len()],
        }
    }

    /// What link `l` did over the measurement window (zero before it closed).
    pub fn link_window(&self, l: usize) -> LinkWindow {
        let (a, b) = (self.win_links[0][l], self.win_links[1][l]);
        LinkWindow {
            busy_ns: b.busy_ns - a.busy_ns,
            transmitted_bytes: b.bytes - a.bytes,
            transmitted_packets: b.packets - a.packets,
            queue_area: b.queue_area - a.queue_area,
            drops: b.drops - a.drops,
            marks: b.marks - a.marks,
            max_queue_pkts: self.window_max_queue[l],
        }
    }

    /// Data packets of flow `f` lost so far.
    pub fn lost_data(&self, f: usize) -> u64 {
        self.lost_data[f]
    }

    /// Flow `f`'s one-way delay statistics over the window (its data packets' or datagrams'
    /// send times to their arrivals); `None` if none arrived in it, or if the flow is one of
    /// a workload's that summary.json does not list (whose delays are not recorded).
    pub fn one_way_delay(&self, f: usize) -> Option<DelayStats> {
        match self.delays.get(f)? {
            Delays::Recording(r) | Delays::Finished(r) => r.stats(),
            Delays::Done(s) => *s,
        }
    }

    /// The queueing delays (sojourn times) at link `l` of the packets it transmitted in the
    /// window; `None` if it transmitted none there.
    pub fn queueing_delay(&self, l: usize) -> Option<QueueingStats> {
        self.queueing[l].stats(self.link_window(l).transmitted_packets)
    }

    /// A packet that waited `ns` (> 0) left link `l` at `now`: recorded in the window. Out of
    /// line: only packets that queued come here, and inlined it made every transmission dearer.
    #[inline(never)]
    fn waited(&mut self, now: Time, l: usize, ns: u64) {
        if now >= self.window.0 && now <= self.window.1 {
            self.queueing[l].record(ns);
        }
    }

    /// Packets link `l` lost at random so far.
    pub fn random_losses(&self, l: usize) -> u64 {
        self.random_losses[l]
    }

    /// Largest backlog each link's queue ever held, (packets, bytes).
    pub fn peak_backlogs(&self) -> Vec<(u64, u64)> {
        self.tracks
            .iter()
            .map(|t| (u64::from(t.peak_pkts), u64::from(t.peak_bytes)))
            .collect()
    }

    /// Flow `i`'s sample at `now`, `dt` after the last (when its counts were `prev`, which it
    /// updates): its flows.csv row, if it has one now; whether it is to be sampled again.
    fn sample_flow(
        &mut self,
        i: usize,
        prev: &mut FlowSnap,
        now: Time,
        dt: acclab_core::Duration,
        in_window: bool,
        net: &dyn NetworkView,
    ) -> bool {
        let (tx, rx) = net.endpoint_stats(i);
        let snap = merged(&tx, &rx, self.received[i]);
        let prev = std::mem::replace(prev, snap);
        let (start, stop) = net.flow_times(i);
        let active = now > start && stop.is_none_or(|s| now <= s);
        // A finite transfer has rows from the first sample after it starts to the first
        // after it completes, none before or after: a workload of a million short flows
        // would otherwise write a row for each of them at every sample (2 GB at k = 16).
        if self.finite[i] {
            if tx.completed_at.is_some_and(|c| c <= self.last_sample) {
                return false;
            }
            if now <= start {
                return true;
            }
        }
        if in_window && active && i < self.win_flows.len() {
            if let Some(c) = tx.cwnd_bytes {
                self.mean_cwnd[i].add(c as f64);
            }
            if let Some(a) = tx.accumulation_bytes {
                self.mean_accumulation[i].add(a);
            }
        }
        // A completed transfer's sender reports no state: it may be retired already.
        let cc = match tx.completed_at {
            Some(_) => self.cc_values(Default::default()),
            None => self.cc_values(net.cc_state(i)),
        };
        self.record_flow(FlowSample {
            t_s: now.as_secs_f64(),
            flow: i as u32,
            throughput_bps: Rate::of(snap.delivered - prev.delivered, dt),
            received_bps: Rate::of(snap.received - prev.received, dt),
            send_rate_bps: Rate::of(snap.sent - prev.sent, dt),
            cwnd_bytes: tx.cwnd_bytes,
            srtt_s: tx.srtt.map(|d| d.as_secs_f64()),
            accumulation_bytes: tx.accumulation_bytes,
            lost_packets: self.lost_data[i],
            cc,
        });
        true
    }

    fn sample(&mut self, now: Time, net: &dyn NetworkView) {
        if self.counts_only {
            return;
        }
        let dt = now - self.last_sample;
        let t_s = now.as_secs_f64();
        let in_window = now > self.window.0 && now <= self.window.1;
        // The finite flows started by now join the sampled ones.
        let before = self.sampled.len();
        while let Some(&f) = self.waiting.last() {
            if net.flow_times(f as usize).0 > now {
                break;
            }
            self.waiting.pop();
            self.sampled.push((f, FlowSnap::default()));
        }
        if self.sampled.len() > before {
            self.sampled.sort_unstable_by_key(|&(f, _)| f);
        }
        let mut sampled = std::mem::take(&mut self.sampled);
        sampled
            .retain_mut(|(f, prev)| self.sample_flow(*f as usize, prev, now, dt, in_window, net));
        self.sampled = sampled;
        for i in 0..net.link_count() {
            let q = net.queue(LinkId(i as u32));
            let b = q.backlog();
            let st = q.stats();
            let utilization = if let Some(trace) = &self.traces[i] {
                let prev = std::mem::replace(&mut self.prev_busy[i], st.dequeued_bytes);
                let offered = trace.bytes_by(now) - trace.bytes_by(self.last_sample);
                if offered == 0 {
                    0.0
                } else {
                    (st.dequeued_bytes - prev) as f64 / offered as f64
                }
            } else {
                let busy = self.tracks[i].busy_ns(now);
                let prev = std::mem::replace(&mut self.prev_busy[i], busy);
                if dt.0 == 0 {
                    0.0
                } else {
                    (busy - prev) as f64 / dt.0 as f64
                }
            };
            self.scratch.clear();
            q.aqm_state(&mut self.scratch);
            let aqm = self
                .aqm_columns
                .iter()
                .map(|c| self.scratch.iter().find(|(n, _)| n == c).map(|(_, v)| *v))
                .collect();
            self.record_link(LinkSample {
                t_s,
                link: i as u32,
                queue_pkts: b.packets,
                queue_bytes: b.bytes,
                utilization,
                drops: st.dropped_packets,
                marks: st.marked_packets,
                aqm,
            });
        }
        self.last_sample = now;
    }

    fn snapshot(&mut self, k: usize, now: Time, net: &dyn NetworkView) {
        if self.counts_only {
            return;
        }
        let listed = self.win_flows.len();
        for i in 0..net.flow_count() {
            let (tx, rx) = net.endpoint_stats(i);
            if i >= listed {
                let at = &mut self.win_delivered[i - listed];
                *at = rx.delivered_bytes - if k == 0 { 0 } else { *at };
                continue;
            }
            let now = merged(&tx, &rx, self.received[i]);
            let at = &mut self.win_flows[i];
            *at = match k {
                0 => now,
                _ => now - *at,
            };
        }
        for i in 0..net.link_count() {
            let st = net.queue(LinkId(i as u32)).stats();
            let t = &self.tracks[i];
            self.win_links[k][i] = LinkSnap {
                busy_ns: t.busy_ns(now),
                bytes: st.dequeued_bytes,
                packets: st.dequeued_packets,
                queue_area: t.area(now),
                drops: st.dropped_packets,
                marks: st.marked_packets,
            };
        }
        self.win_times[k] = Some(now);
    }
}

impl Observer for Monitor {
    fn on_enqueue(&mut self, now: Time, link: LinkId, _: &Packet, _: bool, b: Backlog) {
        let t = &mut self.tracks[link.0 as usize];
        t.backlog_is(now, b);
        t.peak_pkts = t.peak_pkts.max(t.backlog);
        t.peak_bytes = t.peak_bytes.max(b.bytes.min(u64::from(u32::MAX)) as u32);
        t.window_max = t.window_max.max(t.backlog);
    }

    /// A transmission: the link's busy time, and the packet's sojourn when it waited (one
    /// branch for the packets that did not: the window's count of transmissions gives them).
    fn on_transmit(&mut self, now: Time, link: LinkId, _: &Packet, tx: Transmit, b: Backlog) {
        let l = link.0 as usize;
        let t = &mut self.tracks[l];
        t.backlog_is(now, b);
        t.busy_done += (t.tx_end - t.tx_start).0;
        (t.tx_start, t.tx_end) = (now, tx.done);
        if tx.sojourn.0 != 0 {
            self.waited(now, l, tx.sojourn.0);
        }
    }

    /// A data packet (a datagram for CBR) delivered: its bytes, and in the window its one-way
    /// delay.
    #[inline]
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        if p.kind == PacketKind::Data {
            let f = p.flow.0 as usize;
            self.received[f] += u64::from(p.size);
            if now >= self.window.0 && now <= self.window.1 {
                if let Some(Delays::Recording(r)) = self.delays.get_mut(f) {
                    r.record(now.0.saturating_sub(p.sent_at.0));
                }
            }
        }
    }

    fn on_drop(&mut self, now: Time, link: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        let l = link.0 as usize;
        match why {
            DropReason::LinkLoss => self.random_losses[l] += 1,
            DropReason::HeadDrop => self.tracks[l].backlog_is(now, b),
            DropReason::Overflow | DropReason::Aqm => {}
        }
        self.lost_data[p.flow.0 as usize] += u64::from(p.kind == PacketKind::Data);
    }

    fn on_flow_done(&mut self, _now: Time, flow: u32) {
        // Its delays are final: streamed, the histogram goes to delays.csv and is freed, the
        // statistics kept; otherwise the recorder stays for the files written at the end.
        let Some(d) = self.delays.get_mut(flow as usize) else {
            return; // a workload's flow, unlisted: none recorded
        };
        if let Delays::Recording(r) = d {
            *d = match &mut self.sink {
                Some(sink) => {
                    if self.histograms {
                        sink.delays(flow, &mut r.histogram());
                    }
                    Delays::Done(r.stats())
                }
                None if self.histograms => Delays::Finished(std::mem::take(r)),
                None => Delays::Done(r.stats()),
            };
        }
    }

    fn on_sample(&mut self, now: Time, net: &dyn NetworkView) {
        self.sample(now, net);
    }

    fn on_window_start(&mut self, now: Time, net: &dyn NetworkView) {
        for (i, t) in self.tracks.iter_mut().enumerate() {
            t.window_max = net.queue(LinkId(i as u32)).backlog().packets as u32;
        }
        self.snapshot(0, now, net);
    }

    fn on_window_end(&mut self, now: Time, net: &dyn NetworkView) {
        self.snapshot(1, now, net);
        for (i, t) in self.tracks.iter().enumerate() {
            self.window_max_queue[i] = u64::from(t.window_max);
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.finish_stream()
    }
}
