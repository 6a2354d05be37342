//! A scenario as written, before it is resolved: names instead of ids, every group expanded, every
//! optional key still optional. Both front ends make one — the TOML file ([`crate::file`]) and the
//! typed builder ([`crate::builder`]) — and [`ScenarioSpec::resolve`] is the one place that checks
//! it and turns it into the [`Scenario`] the tiers run. Patches by key path
//! ([`ScenarioSpec::set`]) edit a `ScenarioSpec`; [`ScenarioSpec::to_toml`] writes it back as a
//! scenario file that loads into the same model.

use std::collections::{BTreeMap, BTreeSet};

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::params::MAX_RATE;
use acclab_core::{Bytes, Duration, Limit, Rate, Time};
use serde::Serialize;

use crate::routing::{self, Ecmp};
use crate::scenario::{
    EventAction, EventDef, FlowDef, LinkDef, LinkId, NodeId, OutputDef, Scenario, TraceDef,
    TraceFormat,
};
use crate::workload::WorkloadSpec;

/// The finest `output.sample_interval`: 100 µs.
pub const MIN_SAMPLE_INTERVAL: Duration = Duration(100_000);

/// Default data packet size, headers included (SPEC §9 `[defaults]`).
pub const DEFAULT_PACKET_SIZE: u64 = 1000;
/// Default ACK and control packet size.
pub const DEFAULT_ACK_SIZE: u64 = 40;
/// Default seed.
pub const DEFAULT_SEED: u64 = 1;
/// The largest seed, 2^63 − 1: seeds are TOML integers (signed 64-bit), so that every run's
/// scenario can be written back as a file.
pub const MAX_SEED: u64 = i64::MAX as u64;
/// Default sampling interval of the time series.
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// A scenario as written: see the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioSpec {
    pub name: String,
    pub duration: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(skip_serializing_if = "DefaultsSpec::is_empty")]
    pub defaults: DefaultsSpec,
    #[serde(skip_serializing_if = "RoutingSpec::is_default")]
    pub routing: RoutingSpec,
    #[serde(rename = "link", skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSpec>,
    #[serde(rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// Flows generated from size distributions and a load, drawn when the scenario resolves.
    #[serde(rename = "workload", skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSpec>,
    #[serde(rename = "event", skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    #[serde(skip_serializing_if = "OutputSpec::is_empty")]
    pub output: OutputSpec,
}

/// `[defaults]`: packet sizes, and the queue of links that do not set their own.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DefaultsSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_size: Option<Bytes>,
    /// Every [`LinkSpec`] holds its own queue: a file's links without one get a copy of this
    /// when read, and so do links a [`crate::ScenarioBuilder`] adds later. `None`: DropTail,
    /// 1000 packets ([`QueueConfig::default_queue`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueConfig>,
}

impl DefaultsSpec {
    /// The queue of a link that does not set its own.
    pub fn link_queue(&self) -> QueueConfig {
        self.queue
            .clone()
            .unwrap_or_else(QueueConfig::default_queue)
    }
}

impl DefaultsSpec {
    fn is_empty(&self) -> bool {
        *self == DefaultsSpec::default()
    }
}

/// `[routing]`: how flows without an explicit `path` find theirs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RoutingSpec {
    #[serde(skip_serializing_if = "Ecmp::is_none")]
    pub ecmp: Ecmp,
}

impl RoutingSpec {
    fn is_default(&self) -> bool {
        *self == RoutingSpec::default()
    }
}

/// One unidirectional link `from -> to`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub rate: Rate,
    pub delay: Duration,
    pub queue: QueueConfig,
    /// Random loss probability in [0, 1).
    #[serde(skip_serializing_if = "is_zero")]
    pub loss: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl LinkSpec {
    /// The link's name, `"from->to"`, as events, patches and outputs call it.
    pub fn name(&self) -> String {
        format!("{}->{}", self.from, self.to)
    }
}

/// One flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSpec {
    pub id: String,
    #[serde(flatten)]
    pub scheme: SchemeConfig,
    pub from: String,
    pub to: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Traffic class for class-based AQMs; `None`: the scheme's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// An explicit route, node by node from `from` to `to`; `None`: shortest path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
}

impl FlowSpec {
    /// A flow of `scheme` from `from` to `to`, starting at 0, with every other key at its default.
    pub fn new(id: &str, scheme: SchemeConfig, from: &str, to: &str) -> FlowSpec {
        FlowSpec {
            id: id.to_string(),
            scheme,
            from: from.to_string(),
            to: to.to_string(),
            start: None,
            start_jitter: None,
            stop: None,
            class: None,
            path: None,
        }
    }
}

/// A scheduled change of a link, named `"a->b"`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventSpec {
    pub at: Duration,
    #[serde(flatten)]
    pub action: EventSpecAction,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventSpecAction {
    SetDelay { link: String, delay: Duration },
    SetRate { link: String, rate: Rate },
}

/// `[output]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OutputSpec {
    /// The measurement window `[from, to]`; `None`: the second half of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<[Duration; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// `[output] plot_links = ["r1->r2"]`: the links the run plots show (by default the
    /// bottlenecks, found from the run's queues).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plot_links: Vec<String>,
    /// `[output] fct_buckets = ["10KB", "100KB", "1MB"]`: the upper edges of the flow-size
    /// buckets the completion-time percentiles are given for; `None`: those three.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_buckets: Option<Vec<Bytes>>,
}

/// The default flow-size buckets' upper edges, bytes: < 10 KB, 10–100 KB, 100 KB–1 MB, ≥ 1 MB.
pub const DEFAULT_FCT_BUCKETS: [u64; 3] = [10_000, 100_000, 1_000_000];
/// The most size buckets `[output] fct_buckets` may define.
pub const MAX_FCT_BUCKETS: usize = 32;

/// `[output] trace = { links = ["r1->r2"], flows = ["f0"], format = "pcap" }`: trace the named
/// links, and the named flows' packets on every link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<String>,
    #[serde(default)]
    pub format: TraceFormat,
}

impl OutputSpec {
    fn is_empty(&self) -> bool {
        *self == OutputSpec::default()
    }
}

/// What a finding of [`ScenarioSpec::resolve`] is about: the front end turns it into a key path
/// (and, for a file, a line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A top-level key (`duration`, `defaults.packet_size`, `output.window`).
    Top,
    Link(usize),
    Flow(usize),
    Event(usize),
}

/// Why a [`ScenarioSpec`] does not resolve: the item, the key inside it, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub item: Item,
    pub key: String,
    pub message: String,
}

fn fault(item: Item, key: &str, message: impl Into<String>) -> Fault {
    Fault {
        item,
        key: key.to_string(),
        message: message.into(),
    }
}

impl ScenarioSpec {
    /// An empty scenario: no links, no flows, every optional key at its default.
    pub fn new(name: &str, duration: Duration) -> ScenarioSpec {
        ScenarioSpec {
            name: name.to_string(),
            duration,
            seed: None,
            defaults: DefaultsSpec::default(),
            routing: RoutingSpec::default(),
            links: Vec::new(),
            flows: Vec::new(),
            workloads: Vec::new(),
            events: Vec::new(),
            output: OutputSpec::default(),
        }
    }

    /// The key path of `key` inside `item`, as patches write it: `flow.f0.params.weight`,
    /// `link."r1->r2".rate`, `event[2].at`.
    pub fn key_of(&self, item: Item, key: &str) -> String {
        let head = match item {
            Item::Top => return key.to_string(),
            Item::Link(i) => format!("link.{}", quote_key(&self.links[i].name())),
            Item::Flow(i) => format!("flow.{}", quote_key(&self.flows[i].id)),
            Item::Event(i) => format!("event[{i}]"),
        };
        join_key(&head, key)
    }

    /// Checks the scenario and builds the model: names become ids, routes are computed, defaults
    /// are filled in, every parameter is validated.
    pub fn resolve(&self) -> Result<Scenario, Fault> {
        let duration = self.duration;
        if duration == Duration::ZERO {
            return Err(fault(Item::Top, "duration", "must be greater than zero"));
        }
        if let Some(seed) = self.seed.filter(|&s| s > MAX_SEED) {
            return Err(fault(
                Item::Top,
                "seed",
                format!("must be in [0, {MAX_SEED}] (2^63 - 1), not {seed}"),
            ));
        }
        let size = |b: Option<Bytes>, default: u64, key: &str| {
            let b = b.map_or(default, |b| b.0);
            if b > u32::MAX as u64 / 2 {
                return Err(fault(Item::Top, key, "packet sizes must be below 2 GB"));
            }
            Ok(b as u32)
        };
        let packet_size = size(
            self.defaults.packet_size,
            DEFAULT_PACKET_SIZE,
            "defaults.packet_size",
        )?;
        let ack_size = size(
            self.defaults.ack_size,
            DEFAULT_ACK_SIZE,
            "defaults.ack_size",
        )?;
        if let Some(q) = &self.defaults.queue {
            q.validate().map_err(|e| {
                let e = e.within("defaults.queue");
                fault(Item::Top, &e.key, e.message)
            })?;
        }

        let mut topo = Topology::default();
        for (i, l) in self.links.iter().enumerate() {
            topo.add_link(i, l, packet_size)?;
        }
        let mut router = routing::Router::new(topo.nodes.len(), &topo.links);
        let mut ids = BTreeSet::new();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            if !ids.insert(f.id.as_str()) {
                return Err(fault(
                    Item::Flow(i),
                    "id",
                    format!(
                        "flow id {:?} is used twice (add {{i}} to ids of a group)",
                        f.id
                    ),
                ));
            }
            let route = Route {
                ecmp: self.routing.ecmp,
                seed: self.seed.unwrap_or(DEFAULT_SEED),
                flow: i as u64,
            };
            flows.push(resolve_flow(&topo, &mut router, route, i, f, duration)?);
        }
        let seed = self.seed.unwrap_or(DEFAULT_SEED);
        for (n, w) in self.workloads.iter().enumerate() {
            let key = |k: &str| format!("workload[{n}].{k}");
            let hosts = workload_hosts(&topo, w).map_err(|(k, m)| fault(Item::Top, &key(k), m))?;
            let arrivals = w
                .generate(seed, &hosts, duration)
                .map_err(|(k, m)| fault(Item::Top, &key(k), m))?;
            for a in arrivals {
                if ids.contains(a.id.as_str()) {
                    return Err(fault(
                        Item::Top,
                        &key("id"),
                        format!("its flow id {:?} is also a [[flow]]'s", a.id),
                    ));
                }
                let f = FlowSpec {
                    start: Some(a.start),
                    ..FlowSpec::new(&a.id, a.scheme, &a.from, &a.to)
                };
                let route = Route {
                    ecmp: self.routing.ecmp,
                    seed,
                    flow: flows.len() as u64,
                };
                let i = flows.len();
                let flow = resolve_flow(&topo, &mut router, route, i, &f, duration)
                    .map_err(|e| fault(Item::Top, &key(&e.key), e.message))?;
                flows.push(flow);
            }
        }
        let events = self
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| resolve_event(&topo, i, e, duration))
            .collect::<Result<Vec<_>, _>>()?;
        let mut output = resolve_output(&self.output, duration)?;
        if let Some(t) = &self.output.trace {
            output.trace = Some(resolve_trace(&topo, &self.flows, t)?);
        }
        output.plot_links = resolve_links(&topo, "output.plot_links", &self.output.plot_links)?;
        Ok(Scenario {
            name: self.name.clone(),
            duration,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            packet_size,
            ack_size,
            nodes: topo.nodes,
            links: topo.links,
            flows,
            events,
            output,
        })
    }

    /// The scenario as a TOML file: every group expanded, one `[[link]]` per direction, and
    /// only the keys that differ from their defaults. Loading it gives this `ScenarioSpec` again.
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.to_table()).expect("a TOML table always serialises")
    }

    /// The scenario as the TOML table [`to_toml`](Self::to_toml) writes. A scheme's `params` and
    /// a queue's table hold only the parameters that differ from the kind's defaults, so that
    /// a patch of `kind` carries over what was chosen, not what was defaulted.
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::try_from(self)
            .expect("a scenario always serialises: string keys, finite values");
        let mut memo = Memo::default();
        for flow in tables_in(&mut t, "flow") {
            let kind = flow
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or("")
                .to_string();
            if let Some(toml::Value::Table(p)) = flow.get_mut("params") {
                memo.strip(p, &kind, |k, v| SchemeConfig::from_kind(k, v).ok());
                if p.is_empty() {
                    flow.remove("params");
                }
            }
        }
        for link in tables_in(&mut t, "link") {
            if let Some(toml::Value::Table(q)) = link.get_mut("queue") {
                memo.strip_queue(q);
            }
        }
        if let Some(toml::Value::Table(d)) = t.get_mut("defaults") {
            if let Some(toml::Value::Table(q)) = d.get_mut("queue") {
                memo.strip_queue(q);
            }
        }
        t
    }
}

/// The tables of the array `key` of `t`.
fn tables_in<'t>(t: &'t mut toml::Table, key: &str) -> Vec<&'t mut toml::Table> {
    match t.get_mut(key) {
        Some(toml::Value::Array(a)) => a.iter_mut().filter_map(|v| v.as_table_mut()).collect(),
        _ => Vec::new(),
    }
}

/// Parameter tables already stripped of their defaults, by kind and text (the flows of a group
/// share theirs).
#[derive(Default)]
struct Memo(BTreeMap<(String, String), toml::Table>);

impl Memo {
    /// A queue table (`kind` and its parameters) without the parameters at their defaults.
    fn strip_queue(&mut self, q: &mut toml::Table) {
        let Some(toml::Value::String(kind)) = q.remove("kind") else {
            return;
        };
        self.strip(q, &kind, |k, v| QueueConfig::from_kind(k, v).ok());
        q.insert("kind".into(), toml::Value::String(kind));
    }

    /// Removes from `t` every key whose removal reads back, with `read`, as the same parameters:
    /// the ones at their default.
    fn strip<T: PartialEq>(
        &mut self,
        t: &mut toml::Table,
        kind: &str,
        read: impl Fn(&str, toml::Value) -> Option<T>,
    ) {
        let key = (
            format!("{}:{kind}", std::any::type_name::<T>()),
            t.to_string(),
        );
        if let Some(done) = self.0.get(&key) {
            *t = done.clone();
            return;
        }
        let Some(full) = read(kind, toml::Value::Table(t.clone())) else {
            return;
        };
        let keys: Vec<String> = t.keys().cloned().collect();
        for k in keys {
            let mut without = t.clone();
            without.remove(&k);
            if read(kind, toml::Value::Table(without.clone())).as_ref() == Some(&full) {
                *t = without;
            }
        }
        self.0.insert(key, t.clone());
    }
}

/// `k` as a TOML key: bare when it can be, quoted otherwise (`"r1->r2"`).
pub fn quote_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// `head.key`, or `head` alone, or `head[1]` when `key` is an index.
pub fn join_key(head: &str, key: &str) -> String {
    match key {
        "" => head.to_string(),
        k if head.is_empty() => k.to_string(),
        k if k.starts_with('[') => format!("{head}{k}"),
        k => format!("{head}.{k}"),
    }
}

/// `a.b[2]."c->d"` → `["a", "b", "2", "c->d"]`.
pub fn key_segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '.' | '[' | ']' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[derive(Default)]
struct Topology {
    nodes: Vec<String>,
    node_ids: BTreeMap<String, NodeId>,
    links: Vec<LinkDef>,
    link_ids: BTreeMap<String, LinkId>,
}

impl Topology {
    fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.node_ids.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(name.to_string());
        self.node_ids.insert(name.to_string(), id);
        id
    }

    fn add_link(&mut self, i: usize, l: &LinkSpec, packet_size: u32) -> Result<(), Fault> {
        let item = Item::Link(i);
        for (end, key) in [(&l.from, "from"), (&l.to, "to")] {
            if end.is_empty() || end.contains("->") {
                return Err(fault(
                    item,
                    key,
                    format!("bad node name {end:?} (non-empty, without \"->\")"),
                ));
            }
        }
        if l.from == l.to {
            return Err(fault(
                item,
                "to",
                format!("link from {:?} to itself", l.from),
            ));
        }
        if !(0.0..1.0).contains(&l.loss) {
            return Err(fault(
                item,
                "loss",
                format!("loss probability {} is not in [0, 1)", l.loss),
            ));
        }
        check_link_rate(item, "rate", l.rate)?;
        l.queue
            .validate()
            .and_then(|()| l.queue.validate_on_link(l.rate, packet_size))
            .map_err(|e| {
                let e = e.within("queue");
                fault(item, &e.key, e.message)
            })?;
        // A byte limit below one packet would drop every data packet: the link would carry
        // nothing, silently.
        for limit in l.queue.limits() {
            if let Limit::Bytes(b) = limit {
                if b < packet_size as u64 {
                    return Err(fault(
                        item,
                        "queue.limit",
                        format!(
                            "a buffer of {b} B cannot hold one {packet_size}-byte packet (defaults.packet_size)"
                        ),
                    ));
                }
            }
        }
        let name = l.name();
        if self.link_ids.contains_key(&name) {
            return Err(fault(item, "to", format!("link {name} is declared twice")));
        }
        let (from, to) = (self.node(&l.from), self.node(&l.to));
        self.link_ids
            .insert(name.clone(), LinkId(self.links.len() as u32));
        self.links.push(LinkDef {
            name,
            from,
            to,
            rate: l.rate,
            delay: l.delay,
            queue: l.queue.clone(),
            loss: l.loss,
        });
        Ok(())
    }
}

/// A link's rate, as written or as an event sets it: in [1 bps, [`MAX_RATE`]]. The top is
/// accepted on purpose, beside slower links: what it costs, `acclab check` says.
fn check_link_rate(item: Item, key: &str, rate: Rate) -> Result<(), Fault> {
    if (1..=MAX_RATE.bps()).contains(&rate.bps()) {
        return Ok(());
    }
    Err(fault(
        item,
        key,
        format!("link rate {rate} is not in [1 bps, {MAX_RATE}]"),
    ))
}

/// A workload's hosts with the rate of each one's outgoing link (its first, if several): the
/// ones it names, or every node named `h<number>`, in number order.
fn workload_hosts(
    topo: &Topology,
    w: &WorkloadSpec,
) -> Result<Vec<(String, u64)>, (&'static str, String)> {
    let names: Vec<String> = match w.hosts.is_empty() {
        false => w.hosts.clone(),
        true => {
            let mut h: Vec<(u64, &String)> = topo
                .nodes
                .iter()
                .filter_map(|n| Some((n.strip_prefix('h')?.parse::<u64>().ok()?, n)))
                .collect();
            h.sort();
            h.into_iter().map(|(_, n)| n.clone()).collect()
        }
    };
    let mut rate = vec![None; topo.nodes.len()];
    for l in &topo.links {
        rate[l.from.0 as usize].get_or_insert(l.rate.bps());
    }
    names
        .into_iter()
        .map(|n| {
            let id = topo
                .node_ids
                .get(&n)
                .ok_or_else(|| ("hosts", format!("unknown node {n:?} (no link touches it)")))?;
            let r = rate[id.0 as usize]
                .ok_or_else(|| ("hosts", format!("host {n:?} has no outgoing link")))?;
            Ok((n, r))
        })
        .collect()
}

/// How a flow without an explicit path is routed.
struct Route {
    ecmp: Ecmp,
    seed: u64,
    /// The flow's index: its source port in the 5-tuple (as the packet traces write it).
    flow: u64,
}

impl Route {
    /// The links from `a` to `b`: the shortest path, or ECMP's pick by the flow's 5-tuple
    /// (source and destination node, ports as the packet traces synthesise them, protocol).
    fn path(
        &self,
        router: &mut routing::Router,
        a: NodeId,
        b: NodeId,
        tcp: bool,
        forward: bool,
    ) -> Option<Vec<LinkId>> {
        match self.ecmp {
            Ecmp::None => router.path(a, b),
            Ecmp::Flow => {
                let flow_port = 10_000 + self.flow % 50_000;
                let (sport, dport) = match forward {
                    true => (flow_port, 5001),
                    false => (5001, flow_port),
                };
                let proto = if tcp { 6 } else { 17 };
                let tuple = [u64::from(a.0), u64::from(b.0), sport, dport, proto];
                router.ecmp_path(a, b, |node, count| {
                    let mut words = tuple.to_vec();
                    words.push(u64::from(node.0));
                    (acclab_core::rng::hash(self.seed, &words) % count as u64) as usize
                })
            }
        }
    }
}

fn resolve_flow(
    topo: &Topology,
    router: &mut routing::Router,
    route: Route,
    i: usize,
    f: &FlowSpec,
    duration: Duration,
) -> Result<FlowDef, Fault> {
    let item = Item::Flow(i);
    let id = &f.id;
    let node = |name: &str, key: &str| {
        topo.node_ids.get(name).copied().ok_or_else(|| {
            fault(
                item,
                key,
                format!("flow {id:?}: unknown node {name:?} (no link touches it)"),
            )
        })
    };
    let src = node(&f.from, "from")?;
    let dst = node(&f.to, "to")?;
    if src == dst {
        return Err(fault(
            item,
            "to",
            format!("flow {id:?} goes from a node to itself"),
        ));
    }
    let scheme = &f.scheme;
    scheme.validate().map_err(|e| {
        let e = e.within("params");
        fault(item, &e.key, format!("flow {id:?}: {}", e.message))
    })?;
    let start = Time(f.start.unwrap_or(Duration::ZERO).0);
    if start >= Time(duration.0) {
        return Err(fault(
            item,
            "start",
            format!(
                "flow {id:?} starts at {}, at or after the end of the run ({duration})",
                Duration(start.0)
            ),
        ));
    }
    let stop = match f.stop {
        Some(s) if Time(s.0) <= start => {
            return Err(fault(
                item,
                "stop",
                format!(
                    "flow {id:?} stops at {s} but starts at {}",
                    Duration(start.0)
                ),
            ))
        }
        Some(s) => Some(Time(s.0)),
        None => None,
    };
    let feedback = scheme.sends_feedback();
    let (forward, reverse) = match &f.path {
        Some(names) => {
            if names.len() < 2 || (names.first(), names.last()) != (Some(&f.from), Some(&f.to)) {
                return Err(fault(
                    item,
                    "path",
                    format!(
                        "flow {id:?}: the path must start at {:?} and end at {:?}",
                        f.from, f.to
                    ),
                ));
            }
            // A route is a path: a node visited twice would put a loop in it, and its packets
            // would cross the links of the loop twice.
            let mut seen = BTreeSet::new();
            if let Some(again) = names.iter().find(|n| !seen.insert(n.as_str())) {
                return Err(fault(
                    item,
                    "path",
                    format!("flow {id:?}: the path visits {again:?} twice"),
                ));
            }
            let mut hops: Vec<&String> = names.iter().collect();
            let fwd = path_links(topo, item, &hops, id, "data")?;
            hops.reverse();
            let rev = match feedback {
                true => path_links(topo, item, &hops, id, "acknowledgements (reverse path)")?,
                false => Vec::new(),
            };
            (fwd, rev)
        }
        None => {
            let unroutable = |key: &str, a: &str, b: &str| {
                fault(
                    item,
                    key,
                    format!("flow {id:?}: no route from {a:?} to {b:?}"),
                )
            };
            let fwd = route
                .path(router, src, dst, feedback, true)
                .ok_or_else(|| unroutable("to", &f.from, &f.to))?;
            let rev = match feedback {
                true => route
                    .path(router, dst, src, feedback, false)
                    .ok_or_else(|| unroutable("from", &f.to, &f.from))?,
                false => Vec::new(),
            };
            (fwd, rev)
        }
    };
    Ok(FlowDef {
        id: id.clone(),
        class: f
            .class
            .clone()
            .unwrap_or_else(|| scheme.default_class().to_string()),
        scheme: scheme.clone(),
        src,
        dst,
        start,
        start_jitter: f.start_jitter.unwrap_or(Duration::ZERO),
        stop,
        forward,
        reverse,
    })
}

/// The links along an explicit path, in the order given.
fn path_links(
    topo: &Topology,
    item: Item,
    names: &[&String],
    id: &str,
    what: &str,
) -> Result<Vec<LinkId>, Fault> {
    names
        .windows(2)
        .map(|w| {
            let name = format!("{}->{}", w[0], w[1]);
            topo.link_ids.get(&name).copied().ok_or_else(|| {
                fault(
                    item,
                    "path",
                    format!("flow {id:?}: no link {name} for its {what}"),
                )
            })
        })
        .collect()
}

fn resolve_event(
    topo: &Topology,
    i: usize,
    e: &EventSpec,
    duration: Duration,
) -> Result<EventDef, Fault> {
    let item = Item::Event(i);
    if e.at > duration {
        return Err(fault(
            item,
            "at",
            format!("{} is after the end of the run ({duration})", e.at),
        ));
    }
    let link = |name: &str, key: &str| {
        topo.link_ids.get(name).copied().ok_or_else(|| {
            fault(
                item,
                key,
                format!("unknown link {name:?} (links are named \"a->b\")"),
            )
        })
    };
    let action = match &e.action {
        EventSpecAction::SetDelay { link: l, delay } => EventAction::SetDelay {
            link: link(l, "set_delay.link")?,
            delay: *delay,
        },
        EventSpecAction::SetRate { link: l, rate } => {
            check_link_rate(item, "set_rate.rate", *rate)?;
            EventAction::SetRate {
                link: link(l, "set_rate.link")?,
                rate: *rate,
            }
        }
    };
    Ok(EventDef {
        at: Time(e.at.0),
        action,
    })
}

fn resolve_output(o: &OutputSpec, duration: Duration) -> Result<OutputDef, Fault> {
    let window = match o.window {
        None => (Time(duration.0 / 2), Time(duration.0)),
        Some([a, b]) if a >= b || b > duration => {
            return Err(fault(
                Item::Top,
                "output.window",
                format!("window [{a}, {b}] must satisfy from < to <= duration ({duration})"),
            ))
        }
        Some([a, b]) => (Time(a.0), Time(b.0)),
    };
    let sample_interval = match o.sample_interval {
        None => DEFAULT_SAMPLE_INTERVAL,
        Some(s) if s < MIN_SAMPLE_INTERVAL => {
            return Err(fault(
                Item::Top,
                "output.sample_interval",
                format!(
                    "must be at least {MIN_SAMPLE_INTERVAL} (10,000 rows per flow and link per simulated second), not {s}; for finer detail use [output.trace]"
                ),
            ))
        }
        Some(s) => s,
    };
    let fct_buckets = match &o.fct_buckets {
        None => DEFAULT_FCT_BUCKETS.to_vec(),
        Some(edges) => {
            let key = "output.fct_buckets";
            if edges.len() > MAX_FCT_BUCKETS {
                return Err(fault(
                    Item::Top,
                    key,
                    format!("at most {MAX_FCT_BUCKETS} edges, not {}", edges.len()),
                ));
            }
            if let Some(w) = edges.windows(2).find(|w| w[0] >= w[1]) {
                return Err(fault(
                    Item::Top,
                    key,
                    format!("edges must increase: {} B then {} B", w[0].0, w[1].0),
                ));
            }
            if edges.first().is_some_and(|b| b.0 == 0) {
                return Err(fault(
                    Item::Top,
                    key,
                    "an edge of 0 B leaves an empty bucket",
                ));
            }
            edges.iter().map(|b| b.0).collect()
        }
    };
    Ok(OutputDef {
        window,
        sample_interval,
        trace: None,
        plot_links: vec![],
        fct_buckets,
    })
}

/// Link names at `key` (a list) as link ids, naming the entry that is not a link.
fn resolve_links(topo: &Topology, key: &str, names: &[String]) -> Result<Vec<LinkId>, Fault> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            topo.link_ids.get(name).copied().ok_or_else(|| {
                fault(
                    Item::Top,
                    &format!("{key}[{i}]"),
                    format!("unknown link {name:?} (links are named \"a->b\")"),
                )
            })
        })
        .collect()
}

fn resolve_trace(topo: &Topology, flows: &[FlowSpec], t: &TraceSpec) -> Result<TraceDef, Fault> {
    if t.links.is_empty() && t.flows.is_empty() {
        return Err(fault(
            Item::Top,
            "output.trace",
            "name the links (links = [\"r1->r2\"]) or the flows (flows = [\"f0\"]) to trace",
        ));
    }
    let links = resolve_links(topo, "output.trace.links", &t.links)?;
    let flows = t
        .flows
        .iter()
        .enumerate()
        .map(|(i, id)| {
            flows
                .iter()
                .position(|f| &f.id == id)
                .map(|f| f as u32)
                .ok_or_else(|| {
                    fault(
                        Item::Top,
                        &format!("output.trace.flows[{i}]"),
                        format!("unknown flow {id:?}"),
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(TraceDef {
        links,
        flows,
        format: t.format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths_split_into_segments() {
        assert_eq!(
            key_segments(r#"link[0].queue.classes[1].f_max"#),
            ["link", "0", "queue", "classes", "1", "f_max"]
        );
        assert_eq!(
            key_segments(r#"link."r1->r2".rate"#),
            ["link", "r1->r2", "rate"]
        );
        assert_eq!(quote_key("r1->r2"), "\"r1->r2\"");
        assert_eq!(quote_key("f_0-a"), "f_0-a");
    }
}
