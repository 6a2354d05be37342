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

use acclab_core::config::AvqMode;
use acclab_results::samples::{FlowSample, LinkSample, Names, SampleSink};
use acclab_scenario::Scenario;

use crate::feedback::Seen;
use crate::history::{History, Lag};
use crate::network::{Change, LinkLaw, Network, Outside, Source};

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

/// Where each series starts in a history row (`ABSENT` where no link has it).
#[derive(Clone, Copy, Debug)]
struct Layout {
    hop: [usize; 4],
    link: [usize; 3],
}

impl Layout {
    /// The series of `hops` hops and `links` live links; `keep_hop[s]` and `keep_link[s]` say
    /// which are kept. Returns the layout and the row's width.
    fn of(hops: usize, links: usize, keep_hop: [bool; 4], keep_link: [bool; 3]) -> (Layout, usize) {
        let mut width = 0;
        let mut place = |keep: bool, n: usize| {
            if keep {
                width += n;
                width - n
            } else {
                ABSENT
            }
        };
        let hop = keep_hop.map(|k| place(k, hops));
        let link = keep_link.map(|k| place(k, links));
        (Layout { hop, link }, width)
    }
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

    fn compute_lags(&mut self) {
        let h = self.h;
        // Without delays every read is of the newest row.
        let scale = if self.instantaneous { 0.0 } else { 1.0 };
        let lag = |tau: f64| Lag::of(tau * scale, h);
        // A hop's service is recorded as a rate over the step before its row ([t − h, t] in the
        // row of t); what is read as the arrivals over [t, t + h] a delay τ downstream is the
        // service over [t − τ, t − τ + h]: the row τ − h back (else every hop adds a step of
        // delay to the loop — at the default step an eighth of an RTT over two hops, enough
        // to move the stability boundary, stability.rs).
        let served = |tau: f64| Lag::of((tau * scale - h).max(0.0), h);
        let instantaneous = self.instantaneous;
        let lags: Vec<Lags> = self
            .net
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if self.classes.rep[i] != i {
                    return Lags::default();
                }
                // The hops that can queue (the j-th is `hop(j)`, at path position `kept[j]`);
                // each one's output reaches the next (or the receiver) through the pure delays
                // between them, `onward(j)` later.
                let kept: Vec<usize> = (0..f.hops.len())
                    .filter(|&k| !self.pure_delay[f.hops[k]])
                    .collect();
                let hop = |j: usize| self.route_hop[self.first[i] + j];
                let until = |j: usize| kept.get(j + 1).copied().unwrap_or(f.hops.len());
                let onward = |j: usize| f.hop_delay[kept[j]..until(j)].iter().sum::<f64>();
                let last = kept.len().checked_sub(1);
                Lags {
                    back: kept
                        .iter()
                        .enumerate()
                        .map(|(j, &k)| {
                            let l = f.hops[k];
                            HopRead {
                                lag: lag(f.back[k]),
                                qdelay: self.link_series(l, QDELAY),
                                queued: self.hop_series(hop(j), QUEUED),
                                stamp: self.can_stamp[l].then(|| self.link_series(l, STAMP)),
                                // A FIFO drops only when full: discrete loss events — but as a
                                // rate where the fixed point is sought (no delay, no saw-tooth).
                                dropped: self.can_drop[l].then(|| {
                                    (
                                        self.hop_series(hop(j), DROPPED),
                                        self.tail_drop[l] && !instantaneous,
                                    )
                                }),
                                marks: self.can_mark[l].then(|| {
                                    (
                                        self.hop_series(hop(j), MARKED),
                                        self.link_series(l, MARK_PROB),
                                    )
                                }),
                            }
                        })
                        .collect(),
                    // What the last queueing hop serves reaches the source after its `back`
                    // (the pure delays after it included).
                    egress: last.map(|j| (self.hop_series(hop(j), DEP), served(f.back[kept[j]]))),
                    input: (1..kept.len())
                        .map(|j| (self.hop_series(hop(j - 1), DEP), served(onward(j - 1))))
                        .collect(),
                    receiver: last.map(|j| (self.hop_series(hop(j), DEP), served(onward(j)))),
                    through: (0..kept.len())
                        .flat_map(|j| (kept[j] + 1..until(j)).map(move |k| (j, k)))
                        .filter(|&(_, k)| self.classes.link_rep[f.hops[k]] == f.hops[k])
                        .map(|(j, k)| {
                            let l = f.hops[k];
                            let d = f.hop_delay[kept[j]..k].iter().sum::<f64>();
                            (
                                l,
                                self.hop_series(hop(j), DEP),
                                served(d),
                                self.classes.multiplicity(i, l),
                            )
                        })
                        .collect(),
                    // Only links with a state of their own: the others' queues are always empty
                    // (their series stay zero), so reading them adds nothing.
                    reverse: f
                        .reverse
                        .iter()
                        .filter(|(l, _)| self.live_links.binary_search(l).is_ok())
                        .map(|&(l, b)| (self.link_series(l, QDELAY), lag(b)))
                        .collect(),
                }
            })
            .collect();
        self.lags = lags;
    }

    /// Series `s` of hop `hop` in a history row.
    fn hop_series(&self, hop: usize, s: usize) -> usize {
        debug_assert!(self.layout.hop[s] != ABSENT, "series {s} is not kept");
        self.layout.hop[s] + hop
    }

    /// Series `s` of live link `l` in a history row.
    fn link_series(&self, l: usize, s: usize) -> usize {
        debug_assert!(self.slot[l] != usize::MAX, "link {l} has no series");
        debug_assert!(self.layout.link[s] != ABSENT, "link series {s} is not kept");
        self.layout.link[s] + self.slot[l]
    }

    fn apply_events(&mut self, t: f64) {
        while let Some(&(at, change)) = self.net.events.get(self.next_event) {
            if at > t + 1e-12 {
                break;
            }
            match change {
                Change::Rate { link, capacity } => {
                    let since = self.last_sample_s;
                    let (offered, from) = self.rate_changed[link].unwrap_or((0.0, since));
                    self.rate_changed[link] = Some((offered + self.capacity[link] * (t - from), t));
                    self.capacity[link] = capacity;
                    self.net.links[link].capacity = capacity;
                }
                Change::Delay { link, delay } => {
                    // The network's delays hold the current value: shift by the difference.
                    self.net.shift_delay(link, delay - self.link_delay[link]);
                    self.link_delay[link] = delay;
                    self.compute_lags();
                }
            }
            self.next_event += 1;
        }
    }

    fn record(&mut self) {
        let hops = self.hop_flow.len();
        let Layout { hop, link } = self.layout;
        let row = self.hist.next_row();
        for (s, v) in [
            (DEP, &self.served),
            (QUEUED, &self.queued),
            (DROPPED, &self.dropped),
            (MARKED, &self.marked),
        ] {
            if hop[s] != ABSENT {
                row[hop[s]..hop[s] + hops].copy_from_slice(v);
            }
        }
        for (j, &l) in self.live_links.iter().enumerate() {
            row[link[QDELAY] + j] = self.backlog[l] / self.capacity[l].max(f64::MIN_POSITIVE);
        }
        for (s, v) in [(MARK_PROB, &self.mark_prob), (STAMP, &self.stamp)] {
            if link[s] != ABSENT {
                for (j, &l) in self.live_links.iter().enumerate() {
                    row[link[s] + j] = v[l];
                }
            }
        }
        self.hist.commit();
    }

    /// What flow `i` sees now.
    fn look(&self, i: usize) -> Seen {
        let f = &self.net.flows[i];
        let lags = &self.lags[i];
        let mut s = Seen {
            prop_delay: f.prop_delay,
            ..Seen::default()
        };
        let mut unmarked = 1.0;
        for r in &lags.back {
            let rows = self.hist.rows(r.lag);
            s.forward_queueing += rows.at(r.qdelay);
            s.accumulation += rows.at(r.queued);
            if let Some(stamp) = r.stamp {
                s.virtual_delay += rows.at(stamp);
            }
            if let Some((dropped, overflows)) = r.dropped {
                let dropped = rows.at(dropped);
                if overflows {
                    s.overflows += dropped;
                } else {
                    s.losses += dropped;
                }
            }
            if let Some((marks, prob)) = r.marks {
                s.marks += rows.at(marks);
                unmarked *= 1.0 - rows.at(prob);
            }
        }
        s.mark_probability = 1.0 - unmarked;
        for &(series, lag) in &lags.reverse {
            s.reverse_queueing += self.hist.at(series, lag);
        }
        if let Some((series, lag)) = lags.egress {
            s.egress_rate = self.hist.at(series, lag);
        }
        s
    }

    /// Whether flow `i` sends at time `t`.
    fn active(&self, i: usize, t: f64) -> bool {
        match &self.frozen {
            Some(a) => a[i],
            None => t >= self.net.flows[i].start && t < self.net.flows[i].stop,
        }
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

    /// One step of h.
    fn step(&mut self, in_window: bool) {
        let t = self.now();
        let h = self.h;
        self.apply_events(t);
        self.record();
        // Sources: what they see, and their rates.
        for r in 0..self.reps.len() {
            let i = self.reps[r];
            let active = self.active(i, t);
            let f = &self.net.flows[i];
            let seen = self.look(i);
            self.rate[i] = if !active {
                0.0
            } else {
                match &f.source {
                    Source::Acc(a) => a.rate(&seen),
                    Source::Vegas(v) => v.rate(&seen),
                    Source::Reno(r) => r.rate(&seen),
                    Source::Cbr(c) => c.rate(t - f.start),
                }
            };
            self.seen[i] = seen;
        }
        // Arrivals at every hop: the source's rate at the first, what the hop before served
        // at the others; and what passes the links that cannot queue.
        for &i in &self.reps {
            let route = &self.route_hop[self.first[i]..];
            let lags = &self.lags[i];
            if lags.egress.is_some() {
                self.arrivals[route[0]] = self.rate[i];
            }
            for (&hop, &(series, lag)) in route.iter().skip(1).zip(&lags.input) {
                self.arrivals[hop] = self.hist.at(series, lag);
            }
            for &(l, series, lag, mult) in &lags.through {
                self.through[l] += mult * self.hist.at(series, lag) * h;
            }
        }
        // Links.
        for j in 0..self.live_links.len() {
            self.serve(self.live_links[j], h, in_window);
        }
        for &l in &self.pure_links {
            let out = std::mem::take(&mut self.through[l]);
            let tot = &mut self.link_totals[l];
            tot.served += out;
            if in_window {
                tot.busy_in_window += out / self.capacity[l].max(f64::MIN_POSITIVE);
            }
        }
        // Source laws, and the totals (of each flow's own state after its step).
        for r in 0..self.reps.len() {
            let i = self.reps[r];
            let active = self.active(i, t);
            let f = &mut self.net.flows[i];
            let seen = &self.seen[i];
            if active {
                match &mut f.source {
                    Source::Acc(a) => a.step(seen, h),
                    Source::Vegas(v) => v.step(seen, h),
                    Source::Reno(r) => r.step(seen, h),
                    Source::Cbr(_) => {}
                }
            }
            let tot = &mut self.flow_totals[i];
            let x = self.rate[i];
            tot.sent += x * h;
            let received = match self.lags[i].receiver {
                Some((series, lag)) => self.hist.at(series, lag),
                None => x,
            };
            tot.delivered += received * h;
            if in_window {
                tot.delivered_in_window += received * h;
                if active {
                    tot.active_in_window += h;
                    tot.rtt_area += seen.rtt() * h;
                    tot.cwnd_area += window_of(&f.source).unwrap_or(0.0) * h;
                    tot.accumulation_area += accumulation_of(&f.source).unwrap_or(0.0) * h;
                }
            }
        }
        self.steps += 1;
    }

    /// Link `l` over one step: early drops or marks, service, overflow.
    fn serve(&mut self, l: usize, h: f64, in_window: bool) {
        let c = self.capacity[l];
        let b = self.backlog[l];
        let hops = self.link_hops[l].clone();
        // A class's hop counts once per member at a shared link (classes.rs); all shares are
        // per member.
        let mult = &self.hop_mult[hops.clone()];
        let arrivals = &mut self.arrivals[hops.clone()];
        let dropped_rate = &mut self.dropped[hops.clone()];
        let marked_rate = &mut self.marked[hops.clone()];
        let link = &mut self.net.links[l];
        let buffer = link.buffer;
        let fifo = matches!(link.law, LinkLaw::Fifo);
        // The arrival rate (REM's and AVQ's input) and the admitted volume.
        let (mut y, mut accepted) = (0.0, 0.0);
        if fifo {
            // A FIFO drops nothing early and marks nothing: every arrival is admitted (the
            // loop below with p = 0 gives the same bits).
            for (a, m) in arrivals.iter_mut().zip(mult) {
                *a *= h; // now the admitted volume
                accepted += m * *a;
            }
            dropped_rate.fill(0.0);
        } else {
            y = mult.iter().zip(&*arrivals).map(|(m, a)| m * a).sum();
            // The law's probability for arrivals now, and whether it marks ECN-capable packets.
            let (p, marks_ecn) = match &mut link.law {
                LinkLaw::Fifo => (0.0, false),
                LinkLaw::Red(r) => (r.probability(), r.ecn),
                LinkLaw::Rem(r) => (r.probability(), true),
                LinkLaw::Avq(a) => {
                    let over = a.step(y, c, h);
                    (over, a.mode == AvqMode::Mark)
                }
            };
            self.mark_prob[l] = if marks_ecn { p } else { 0.0 };
            for k in 0..arrivals.len() {
                let marking = marks_ecn && self.hop_ecn[hops.start + k];
                let a = arrivals[k] * h;
                let (take, mark) = if marking {
                    (a, a * p)
                } else {
                    (a * (1.0 - p), 0.0)
                };
                dropped_rate[k] = (a - take) / h;
                marked_rate[k] = mark / h;
                arrivals[k] = take; // now the admitted volume
                accepted += mult[k] * take;
            }
        }
        let out = (c * h).min(b + accepted);
        let excess = (b + accepted - out - buffer).max(0.0);
        let stock = b + accepted - excess;
        let queued = &mut self.queued[hops.clone()];
        let served = &mut self.served[hops.clone()];
        let flows = &self.hop_flow[hops.clone()];
        let (mut total, mut dropped, mut marked) = (0.0, 0.0, 0.0);
        if fifo && excess == 0.0 {
            // Nothing dropped or marked: the loop below with keep = 1 (its drop and mark sums
            // add zeros).
            for k in 0..arrivals.len() {
                let share = if stock > 0.0 {
                    out * (queued[k] + arrivals[k]) / stock
                } else {
                    0.0
                };
                served[k] = share / h;
                queued[k] = (queued[k] + arrivals[k] - share).max(0.0);
                total += mult[k] * queued[k];
            }
        } else {
            let keep = if accepted > 0.0 {
                1.0 - excess / accepted
            } else {
                1.0
            };
            for k in 0..arrivals.len() {
                let admitted = arrivals[k] * keep;
                dropped_rate[k] += (arrivals[k] - admitted) / h;
                let share = if stock > 0.0 {
                    out * (queued[k] + admitted) / stock
                } else {
                    0.0
                };
                served[k] = share / h;
                queued[k] = (queued[k] + admitted - share).max(0.0);
                total += mult[k] * queued[k];
                dropped += mult[k] * dropped_rate[k] * h;
                marked += mult[k] * marked_rate[k] * h;
                self.flow_totals[flows[k]].lost += dropped_rate[k] * h;
            }
        }
        self.backlog[l] = total;
        // The law's state after the step.
        let link = &mut self.net.links[l];
        match &mut link.law {
            LinkLaw::Fifo | LinkLaw::Avq(_) => {}
            LinkLaw::Red(r) => r.step(total, c, h),
            LinkLaw::Rem(r) => r.step(b, y, c, h),
        }
        self.stamp[l] = match &link.law {
            LinkLaw::Avq(a) => a.stamp(total / c.max(f64::MIN_POSITIVE)),
            _ => 0.0,
        };
        let tot = &mut self.link_totals[l];
        tot.served += out;
        tot.dropped += dropped;
        tot.marked += marked;
        if in_window {
            tot.busy_in_window += out / c.max(f64::MIN_POSITIVE);
            tot.queue_area_in_window += total * h;
            tot.dropped_in_window += dropped;
            tot.marked_in_window += marked;
            tot.max_queue_in_window = tot.max_queue_in_window.max(total);
        }
    }

    /// What its files call its flows, links and AQM columns (the simulator's names).
    pub fn names(&self) -> Names {
        Names {
            flows: self.net.flows.iter().map(|f| f.id.clone()).collect(),
            links: self.net.links.iter().map(|l| l.name.clone()).collect(),
            aqm_columns: self.columns.clone(),
        }
    }

    /// The AQM columns of links.csv, as the packet queues name them.
    pub fn aqm_columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = Vec::new();
        for l in &self.net.links {
            for (name, _) in aqm_state(l, 0.0) {
                if !cols.iter().any(|c| c == name) {
                    cols.push(name.to_string());
                }
            }
        }
        cols
    }

    fn sample(&mut self, t_s: f64, interval: f64, sink: &mut Sink) {
        let bits = 8.0 * self.net.packet_size;
        // Every flow and link, from the state that stands for it (classes.rs).
        for i in 0..self.net.flows.len() {
            let r = self.classes.rep[i];
            let f = &self.net.flows[r];
            let tot = &self.flow_totals[r];
            let (sent0, del0) = self.last_sample.0[i];
            let window = window_of(&f.source);
            let active = t_s > f.start && t_s - interval < f.stop;
            sink.flow(&FlowRow {
                t_s,
                flow: i as u32,
                throughput_bps: (tot.delivered - del0) * bits / interval,
                send_rate_bps: (tot.sent - sent0) * bits / interval,
                cwnd_bytes: window.map(|w| w * self.net.packet_size),
                srtt_s: (active && window.is_some()).then(|| self.seen[r].rtt()),
                accumulation_bytes: accumulation_of(&f.source).map(|a| a * self.net.packet_size),
                lost_packets: tot.lost,
            });
            self.last_sample.0[i] = (tot.sent, tot.delivered);
        }
        let columns = &self.columns;
        for l in 0..self.net.links.len() {
            let lr = self.classes.link_rep[l];
            let tot = &self.link_totals[lr];
            let served = tot.served - self.last_sample.1[l];
            let state = aqm_state(&self.net.links[lr], self.net.packet_size);
            sink.link(&LinkRow {
                t_s,
                link: l as u32,
                queue_pkts: self.backlog[lr],
                queue_bytes: self.backlog[lr] * self.net.packet_size,
                utilization: served / self.offered(lr, t_s, interval).max(f64::MIN_POSITIVE),
                drops: tot.dropped,
                marks: tot.marked,
                aqm: columns
                    .iter()
                    .map(|c| state.iter().find(|(n, _)| n == c).map(|(_, v)| *v))
                    .collect(),
            });
            self.last_sample.1[l] = tot.served;
        }
        self.rate_changed.iter_mut().for_each(|c| *c = None);
        self.last_sample_s = t_s;
    }

    /// What link `l` could serve (packets) over the sample ending at `t_s`: its capacity over
    /// the interval, or, if its rate changed inside it, over each rate's part.
    fn offered(&self, l: usize, t_s: f64, interval: f64) -> f64 {
        match self.rate_changed[l] {
            None => self.capacity[l] * interval,
            Some((before, from)) => before + self.capacity[l] * (t_s - from),
        }
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

/// A queue law's state with the packet queue's column names, in bytes and bit/s where those
/// are (`packet` bytes per packet). A priority-capable queue's high band holds Monaco's
/// control packets, which the model has none of: 0.
fn aqm_state(link: &crate::network::Link, packet: f64) -> Vec<(&'static str, f64)> {
    let mut v = match &link.law {
        LinkLaw::Fifo => vec![],
        LinkLaw::Red(r) => vec![("red_avg", r.avg), ("red_prob", r.base_probability())],
        LinkLaw::Rem(r) => vec![("rem_price", r.price), ("rem_mark_prob", r.probability())],
        LinkLaw::Avq(a) => {
            let mut v = vec![
                (
                    "avq_virtual_capacity_bps",
                    a.virtual_capacity * 8.0 * packet,
                ),
                ("avq_virtual_queue_bytes", a.virtual_queue * packet),
            ];
            if a.mode == AvqMode::Delay {
                v.push(("avd_virtual_delay_s", a.virtual_delay()));
            }
            v
        }
    };
    if link.priority {
        v.push(("high_queue_pkts", 0.0));
    }
    v
}
