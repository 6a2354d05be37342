//! The integrator: the delayed fluid network of a scenario, stepped at a fixed step h.
//!
//! State: each source's window (or rate), each flow's queued packets at each of its forward
//! links (q_ik), each queue's law state (RED's average, REM's price, AVQ's virtual queue and
//! capacity). Per step, in this order:
//! 1. scheduled changes due by t are applied;
//! 2. a row of the history is recorded: q_ik, what each hop served, dropped and marked of each
//!    flow over the last step, each link's queueing delay, mark probability and AVD stamp;
//! 3. each source reads what it sees (`feedback::Seen`) from the history at the delays of its
//!    path and sets its rate x = w/RTT;
//! 4. each link takes its arrivals — a flow's rate at its first hop, and what the previous hop
//!    served `hop_delay` earlier at the others — drops or marks the share its law says
//!    (early), serves min(c·h, backlog + arrivals), drops what overflows the buffer (from the
//!    arrivals), and splits what it serves among flows in proportion to their share of backlog
//!    plus arrivals (a fluid FIFO: at equilibrium q_ik = b_l·λ_ik/y_l);
//! 5. each source's law advances its window by one Euler step.
//!
//! A link that cannot queue (`Network::cannot_queue`: its arrivals can never exceed its
//! capacity) holds no hops: it is the pure delay between the hops around it, what it carries
//! is read once from the hop before it at the summed delay, and its totals (service,
//! utilisation) are counted from that read. In exact arithmetic the queued integration of such
//! a link gives the same trajectory; in floating point the fold saves its rounding residue
//! (queues of 1e-16 packets) and the second interpolation of what passes it.
//!
//! Method: explicit (forward) Euler with delays read from the state history by linear
//! interpolation (history.rs). The laws of 002 (eqs. (16)–(19)) are themselves Euler steps of
//! this system with a step of one time unit; ACC's (000 eqs. (3), (5), (6)) are ODEs. The queue
//! is advanced exactly over a step (projection at 0 and at the buffer). The step h: by default
//! the shortest round-trip propagation delay / 16, between 10 µs and 2 ms, shortened so that it
//! divides the sample interval; `--step` sets it. The test `halving_the_step_changes_little`
//! bounds the effect of halving it.
//!
//! Time is kept as a step count (t = n·h, h in integer nanoseconds), so samples and the window
//! fall on exact steps and runs are deterministic.
//!
//! Where each part is: this file holds the model's state, its construction, `run` and
//! `settle`; `layout.rs` where each series sits in a history row and how far back each flow
//! reads it; `step.rs` one step (steps 1–5 above); `output.rs` the samples and names written.

use acclab_results::samples::{FlowSample, LinkSample, SampleSink};
use acclab_scenario::Scenario;

use crate::feedback::Seen;
use crate::history::{History, Lag};
use crate::network::{LinkLaw, Network, Outside, Source};

/// History series of a flow at one hop (up to 4 per hop) and of a link (up to 3 per link). A
/// row holds them series by series (every hop's DEP, then every hop's QUEUED, ...; then every
/// live link's QDELAY, ...), so that recording a row copies whole arrays; a series no link has
/// (drops, marks, virtual delays) is not kept (`Layout`).
const DEP: usize = 0;
const QUEUED: usize = 1;
const DROPPED: usize = 2;
const MARKED: usize = 3;
const QDELAY: usize = 0;
const MARK_PROB: usize = 1;
const STAMP: usize = 2;
const ABSENT: usize = usize::MAX;

mod layout;
mod output;
mod step;

/// Where each series starts in a history row (`ABSENT` where no link has it).
#[derive(Clone, Copy, Debug)]
struct Layout {
    hop: [usize; 4],
    link: [usize; 3],
}

/// Per flow: what it reads of the history, where (series) and how far back (lag). Empty for a
/// flow its class's representative stands for.
#[derive(Clone, Debug, Default)]
struct Lags {
    /// What the source reads of each forward link, from there back to the source.
    back: Vec<HopRead>,
    /// The last link's service, read back at the source (the egress rate).
    egress: Option<(usize, Lag)>,
    /// What arrives at each forward link after the first (`input[k - 1]` for the k-th): the
    /// service of the hop before it, at the service lag (see `compute_lags`).
    input: Vec<(usize, Lag)>,
    /// The last link's service at the receiver.
    receiver: Option<(usize, Lag)>,
    /// Reverse links' queueing delays.
    reverse: Vec<(usize, Lag)>,
    /// What the flow puts through each link that cannot queue (a pure delay, see
    /// `Network::cannot_queue`): the service of the hop before it, at its lag; the link, and the
    /// flow's multiplicity there.
    through: Vec<(usize, usize, Lag, f64)>,
}

/// The series a source reads of one forward hop (its link's and its own), at one lag.
#[derive(Clone, Copy, Debug)]
struct HopRead {
    lag: Lag,
    qdelay: usize,
    queued: usize,
    /// AVD's virtual delay, where the link stamps one.
    stamp: Option<usize>,
    /// The hop's drops, where the link drops, and whether they are a full FIFO's overflows
    /// (discrete loss events, feedback::LossEvents) rather than early drops (a rate).
    dropped: Option<(usize, bool)>,
    /// The hop's marks and the link's mark probability, where the link marks.
    marks: Option<(usize, usize)>,
}

/// One row of flows.csv, in the fluid's fractions of packets and bytes.
pub type FlowRow = FlowSample<f64>;
/// One row of links.csv.
pub type LinkRow = LinkSample<f64>;

/// Where the samples go: `acclab_results`' files, [`Memory`], or nowhere (`()`).
pub type Sink = dyn SampleSink<f64>;

/// Samples kept in memory.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub flows: Vec<FlowRow>,
    pub links: Vec<LinkRow>,
}

impl SampleSink<f64> for Memory {
    fn flow(&mut self, row: &FlowRow) {
        self.flows.push(row.clone());
    }
    fn link(&mut self, row: &LinkRow) {
        self.links.push(row.clone());
    }
}

/// Settings of a model run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Settings {
    /// The integration step, ns (`None`: the default, see the module header).
    pub step_ns: Option<u64>,
    /// Feedback without delay: every source sees the network as it is now and every hop the
    /// previous hop's output at once (002's network model (16)–(19) is written so). The
    /// equilibrium is the same; the dynamics are not. [`Model::settle`] uses it to find the
    /// model's fixed point.
    pub instantaneous: bool,
    /// Which flows are stepped as one (classes.rs): by default those whose trajectories are
    /// the same.
    pub grouping: crate::classes::Grouping,
    /// ACC sources apply their policy once per control period (000 eq. (10), as Monaco's
    /// sender does) rather than as a rate (eqs. (3), (5), (6)).
    pub acc_per_period: bool,
}

/// Integrals over the measurement window and whole-run counters.
#[derive(Clone, Debug, Default)]
pub struct FlowTotals {
    pub sent: f64,
    pub delivered: f64,
    pub lost: f64,
    pub delivered_in_window: f64,
    pub active_in_window: f64,
    pub rtt_area: f64,
    pub cwnd_area: f64,
    pub accumulation_area: f64,
}

#[derive(Clone, Debug, Default)]
pub struct LinkTotals {
    pub served: f64,
    pub dropped: f64,
    pub marked: f64,
    pub busy_in_window: f64,
    pub queue_area_in_window: f64,
    pub dropped_in_window: f64,
    pub marked_in_window: f64,
    pub max_queue_in_window: f64,
}

/// A model run of one scenario.
pub struct Model<'a> {
    pub sc: &'a Scenario,
    pub net: Network,
    /// The step, ns and s.
    pub h_ns: u64,
    h: f64,
    hist: History,
    layout: Layout,
    /// Each flow's hops in path order: `route_hop[first[i] + k]` is the k-th. Links that cannot
    /// queue hold no hops: they are pure delay between the hops around them.
    first: Vec<usize>,
    route_hop: Vec<usize>,
    /// Per hop, numbered link by link (a link's hops contiguous, in flow order, so that its
    /// service runs over slices): flow, whether its flow's packets are ECN-capable, queued
    /// packets, and last step's served, dropped, marked rates (packets per second); arrivals
    /// this step (scratch).
    hop_flow: Vec<usize>,
    hop_ecn: Vec<bool>,
    queued: Vec<f64>,
    served: Vec<f64>,
    dropped: Vec<f64>,
    marked: Vec<f64>,
    arrivals: Vec<f64>,
    /// The hops at each link.
    link_hops: Vec<std::ops::Range<usize>>,
    /// Each hop's multiplicity: its class's size at a shared link, 1 at a private one.
    hop_mult: Vec<f64>,
    /// Flow classes (classes.rs): the flows stepped (representatives) and the links that hold
    /// a state of their own (served and recorded: some hop or a law of their own).
    classes: crate::classes::Classes,
    reps: Vec<usize>,
    live_links: Vec<usize>,
    /// The links that cannot queue (`Network::cannot_queue`), and those of them with totals of
    /// their own (class representatives).
    pure_delay: Vec<bool>,
    pure_links: Vec<usize>,
    /// What passed each of them this step, packets (scratch).
    through: Vec<f64>,
    /// Each live link's place among the history's link series (`usize::MAX` for the others).
    slot: Vec<usize>,
    backlog: Vec<f64>,
    capacity: Vec<f64>,
    /// Each link's propagation delay now, s (scheduled changes move it).
    link_delay: Vec<f64>,
    mark_prob: Vec<f64>,
    stamp: Vec<f64>,
    /// What each link can do besides queueing: drop, mark, stamp a virtual delay (the series a
    /// source need not read where a link never does it).
    can_drop: Vec<bool>,
    /// Links that drop only when their buffer is full (tail drop).
    tail_drop: Vec<bool>,
    can_mark: Vec<bool>,
    can_stamp: Vec<bool>,
    lags: Vec<Lags>,
    pub seen: Vec<Seen>,
    pub rate: Vec<f64>,
    pub flow_totals: Vec<FlowTotals>,
    pub link_totals: Vec<LinkTotals>,
    /// Steps taken.
    pub steps: u64,
    /// The AQM columns of links.csv.
    columns: Vec<String>,
    /// The next scheduled change.
    next_event: usize,
    instantaneous: bool,
    /// Which flows are active, fixed by [`Model::settle`] (otherwise from their start and stop).
    frozen: Option<Vec<bool>>,
    /// Flow and link snapshots at the last sample (sent, delivered; served).
    last_sample: (Vec<(f64, f64)>, Vec<f64>),
    /// Per link whose rate changed since the last sample: the capacity it offered (packets)
    /// before its current rate, and when that rate began. A sample's utilisation divides what
    /// the link served by what it could serve at each of its rates, not at the last alone.
    rate_changed: Vec<Option<(f64, f64)>>,
    /// The time of the last sample, s.
    last_sample_s: f64,
}

/// The default step for `net` (module header), in ns, dividing `sample_ns`.
pub fn default_step_ns(net: &Network, sample_ns: u64) -> u64 {
    let shortest = net
        .flows
        .iter()
        .map(|f| f.prop_delay)
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let target = if shortest.is_finite() {
        (shortest / 16.0).clamp(10e-6, 2e-3)
    } else {
        1e-3
    };
    fit_step((target * 1e9) as u64, sample_ns)
}

/// A step given as text (`acclab model --step`, Python's `step=`), ns: above 0 and at most
/// the sample interval of `sc`.
pub fn parse_step(sc: &Scenario, text: &str) -> Result<u64, String> {
    let d = acclab_core::Duration::parse(text).map_err(|e| format!("{text:?}: {e}"))?;
    if d.0 == 0 || d > sc.output.sample_interval {
        return Err(format!(
            "{text:?}: must be above 0 and at most the sample interval ({})",
            sc.output.sample_interval
        ));
    }
    Ok(d.0)
}

/// The largest step not above `target_ns` that divides `sample_ns` (so samples fall on steps),
/// looked for among the next few hundred candidates; failing that, about `target_ns` (samples
/// are then taken at the first step past each sample time).
fn fit_step(target_ns: u64, sample_ns: u64) -> u64 {
    let sample = sample_ns.max(1);
    let target = target_ns.clamp(1, sample);
    let k0 = sample.div_ceil(target);
    (k0..k0 + 512)
        .find(|k| sample.is_multiple_of(*k))
        .map_or(sample / k0, |k| sample / k)
        .max(1)
}

impl<'a> Model<'a> {
    /// Sets up the model of `sc`, or says what of it is outside the domain.
    pub fn new(sc: &'a Scenario, settings: Settings) -> Result<Model<'a>, Outside> {
        let mut net = Network::of(sc)?;
        let classes = crate::classes::Classes::of(&net, sc, settings.grouping);
        let reps: Vec<usize> = (0..net.flows.len())
            .filter(|&i| classes.rep[i] == i)
            .collect();
        for &r in &reps {
            net.flows[r].start = classes.start[r];
        }
        for f in &mut net.flows {
            if let Source::Acc(a) = &mut f.source {
                a.per_period = settings.acc_per_period;
            }
        }
        let sample_ns = sc.output.sample_interval.0;
        let h_ns = match settings.step_ns {
            Some(s) => fit_step(s, sample_ns),
            None => default_step_ns(&net, sample_ns),
        };
        let h = h_ns as f64 * 1e-9;
        let pure_delay = net.cannot_queue();
        // Each representative's hops in path order, then numbered link by link.
        let mut first = vec![0; net.flows.len()];
        let mut route = Vec::new();
        let mut at_link = vec![Vec::new(); net.links.len()];
        for &i in &reps {
            first[i] = route.len();
            for &l in net.flows[i].hops.iter().filter(|&&l| !pure_delay[l]) {
                at_link[l].push(route.len());
                route.push((i, l));
            }
        }
        for i in 0..net.flows.len() {
            first[i] = first[classes.rep[i]];
        }
        let mut route_hop = vec![0; route.len()];
        let mut link_hops = Vec::with_capacity(net.links.len());
        let (mut hop_flow, mut hop_ecn, mut hop_mult) = (Vec::new(), Vec::new(), Vec::new());
        for (l, on) in at_link.iter().enumerate() {
            let start = hop_flow.len();
            for &r in on {
                let (i, _) = route[r];
                route_hop[r] = hop_flow.len();
                hop_flow.push(i);
                hop_ecn.push(net.flows[i].ecn);
                hop_mult.push(classes.multiplicity(i, l));
            }
            link_hops.push(start..hop_flow.len());
        }
        let live_links: Vec<usize> = (0..net.links.len())
            .filter(|&l| {
                classes.link_rep[l] == l
                    && (!link_hops[l].is_empty() || !matches!(net.links[l].law, LinkLaw::Fifo))
            })
            .collect();
        let hops = hop_flow.len();
        // Link series only for the links with a state of their own, so that a row holds what is
        // read and the ring stays small (others' queues are always empty; nothing reads them).
        let mut slot = vec![usize::MAX; net.links.len()];
        for (j, &l) in live_links.iter().enumerate() {
            slot[l] = j;
        }
        // What each link can do besides queueing; a series is kept where some live link can.
        let can = |what: fn(&crate::network::Link) -> bool| -> Vec<bool> {
            net.links.iter().map(what).collect()
        };
        let can_drop = can(|l| l.buffer.is_finite() || !matches!(l.law, LinkLaw::Fifo));
        let can_mark =
            can(|l| matches!(l.law, LinkLaw::Red(_) | LinkLaw::Rem(_) | LinkLaw::Avq(_)));
        let can_stamp = can(|l| crate::network::is_avd(&l.law));
        let live = |can: &[bool]| live_links.iter().any(|&l| can[l]);
        let (drops, marks, stamps) = (live(&can_drop), live(&can_mark), live(&can_stamp));
        let (layout, width) = Layout::of(
            hops,
            live_links.len(),
            [true, true, drops, marks],
            [true, marks, stamps],
        );
        crate::cost::check_cost(sc, reps.len(), width, net.longest_delay(sc), h)?;
        let hist = History::new(width, net.longest_delay(sc), h);
        let n_links = net.links.len();
        let n_flows = net.flows.len();
        let mut m = Model {
            sc,
            h_ns,
            h,
            hist,
            layout,
            first,
            route_hop,
            hop_flow,
            hop_ecn,
            queued: vec![0.0; hops],
            served: vec![0.0; hops],
            dropped: vec![0.0; hops],
            marked: vec![0.0; hops],
            arrivals: vec![0.0; hops],
            link_hops,
            hop_mult,
            pure_links: (0..n_links)
                .filter(|&l| pure_delay[l] && classes.link_rep[l] == l)
                .collect(),
            pure_delay,
            through: vec![0.0; n_links],
            classes,
            reps,
            live_links,
            slot,
            backlog: vec![0.0; n_links],
            capacity: net.links.iter().map(|l| l.capacity).collect(),
            link_delay: sc.links.iter().map(|l| l.delay.as_secs_f64()).collect(),
            mark_prob: vec![0.0; n_links],
            stamp: vec![0.0; n_links],
            can_drop,
            tail_drop: net
                .links
                .iter()
                .map(|l| matches!(l.law, LinkLaw::Fifo))
                .collect(),
            can_mark,
            can_stamp,
            lags: Vec::new(),
            seen: vec![Seen::default(); n_flows],
            rate: vec![0.0; n_flows],
            flow_totals: vec![FlowTotals::default(); n_flows],
            link_totals: vec![LinkTotals::default(); n_links],
            steps: 0,
            columns: Vec::new(),
            next_event: 0,
            instantaneous: settings.instantaneous,
            frozen: None,
            last_sample: (vec![(0.0, 0.0); n_flows], vec![0.0; n_links]),
            rate_changed: vec![None; n_links],
            last_sample_s: 0.0,
            net,
        };
        m.compute_lags();
        m.columns = m.aqm_columns();
        Ok(m)
    }

    /// Sets flow `i`'s window, packets (an initial state; at least one packet). A source without
    /// a window (CBR) is left as it is.
    ///
    /// Panics if flow `i` is stepped with others as one class (use `Grouping::Each`).
    pub fn set_window(&mut self, i: usize, packets: f64) {
        assert!(
            self.classes.mult[i] == 1,
            "flow {i} is stepped as one class with {} others: set windows one by one with Grouping::Each",
            self.classes.mult[i] - 1
        );
        let w = packets.max(1.0);
        match &mut self.net.flows[i].source {
            Source::Acc(a) => a.window = w,
            Source::Vegas(v) => v.window = w,
            Source::Reno(r) => r.window = w,
            Source::Cbr(_) => {}
        }
    }

    /// Each link's queue now, packets.
    pub fn backlog(&self) -> Vec<f64> {
        self.classes
            .link_rep
            .iter()
            .map(|&l| self.backlog[l])
            .collect()
    }

    /// The flow whose state stands for flow `i` (itself, or its class's representative).
    pub fn rep(&self, i: usize) -> usize {
        self.classes.rep[i]
    }

    /// The link whose state stands for link `l`.
    pub fn link_rep(&self, l: usize) -> usize {
        self.classes.link_rep[l]
    }

    /// The number of flows the integrator steps (one per class).
    pub fn classes(&self) -> usize {
        self.reps.len()
    }

    /// Whether link `l` is integrated as pure delay (`Network::cannot_queue`).
    pub fn is_pure_delay(&self, l: usize) -> bool {
        self.pure_delay[l]
    }

    /// The step, s.
    pub fn step_s(&self) -> f64 {
        self.h
    }

    /// The model time, s.
    pub fn now(&self) -> f64 {
        (self.steps * self.h_ns) as f64 * 1e-9
    }

    /// Runs to the scenario's end, sending samples to `sink`.
    pub fn run(&mut self, sink: &mut Sink) {
        self.run_until(self.sc.duration.0, sink);
    }

    /// Runs until `end` ns of model time, sending samples to `sink`.
    pub fn run_until(&mut self, end: u64, sink: &mut Sink) {
        let sample = self.sc.output.sample_interval.0;
        let (w0, w1) = (self.sc.output.window.0 .0, self.sc.output.window.1 .0);
        let mut next_sample = (self.steps * self.h_ns / sample + 1) * sample;
        while self.steps * self.h_ns < end {
            let t_ns = self.steps * self.h_ns;
            let in_window = t_ns >= w0 && t_ns < w1;
            self.step(in_window);
            if t_ns + self.h_ns >= next_sample {
                if sink.wants_rows() {
                    self.sample(next_sample as f64 / 1e9, sample as f64 / 1e9, sink);
                }
                next_sample += sample;
            }
        }
    }

    /// Goes on past the scenario's end (flows as they are then) until every flow's rate, averaged
    /// over successive `span`-second stretches, moves by less than `tol` (relative) from one
    /// stretch to the next, or `max_s` more seconds have passed. Returns each flow's mean rate
    /// over the last stretch, packets per second, and whether it settled.
    pub fn settle(&mut self, span: f64, tol: f64, max_s: f64) -> (Vec<f64>, bool) {
        let t = self.now() - self.h;
        self.frozen = Some((0..self.rate.len()).map(|i| self.active(i, t)).collect());
        let n = self.rate.len();
        let per = ((span / self.h).ceil() as u64).max(1);
        let stretches = (max_s / span).ceil().max(1.0) as u64;
        let mut last: Option<Vec<f64>> = None;
        for _ in 0..stretches {
            let mut sum = vec![0.0; n];
            for _ in 0..per {
                self.step(false);
                for (i, s) in sum.iter_mut().enumerate() {
                    *s += self.rate[self.classes.rep[i]];
                }
            }
            let mean: Vec<f64> = sum.iter().map(|s| s / per as f64).collect();
            if let Some(prev) = &last {
                let moved = mean
                    .iter()
                    .zip(prev)
                    .map(|(a, b)| (a - b).abs() / a.abs().max(b.abs()).max(1e-9))
                    .fold(0.0, f64::max);
                if moved < tol {
                    return (mean, true);
                }
            }
            last = Some(mean);
        }
        (last.unwrap_or_default(), false)
    }
}

/// The window of a window-based source, packets.
pub fn window_of(s: &Source) -> Option<f64> {
    match s {
        Source::Acc(a) => Some(a.window),
        Source::Vegas(v) => Some(v.window),
        Source::Reno(r) => Some(r.window),
        Source::Cbr(_) => None,
    }
}

/// The source's accumulation estimate, packets: Monaco's â, Vegas' diff.
pub fn accumulation_of(s: &Source) -> Option<f64> {
    match s {
        Source::Acc(a) => Some(a.accumulation),
        Source::Vegas(v) => Some(v.diff),
        _ => None,
    }
}
