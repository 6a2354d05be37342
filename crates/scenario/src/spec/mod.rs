//! A scenario as written, before it is resolved: names instead of ids, every group expanded, every
//! optional key still optional. Both front ends make one — the TOML file ([`crate::file`]) and the
//! typed builder ([`crate::builder`]) — and [`ScenarioSpec::resolve`] is the one place that checks
//! it and turns it into the [`Scenario`] the tiers run. Patches by key path
//! ([`ScenarioSpec::set`]) edit a `ScenarioSpec`; [`ScenarioSpec::to_toml`] writes it back as a
//! scenario file that loads into the same model.

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::link::{Jitter, LossModel};
use acclab_core::queue::shared_buffer::SharedBufferParams;
use acclab_core::{Bytes, Duration, Rate};
use serde::Serialize;

use crate::routing::Ecmp;
use crate::scenario::{Capture, TraceFormat};
use crate::workload::WorkloadSpec;

mod flows;
mod keys;
mod network;
mod resolve;
mod write;

pub use keys::{join_key, key_segments, quote_key};

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
    /// Switches whose output queues share one pool of memory.
    #[serde(rename = "shared_buffer", skip_serializing_if = "Vec::is_empty")]
    pub shared_buffers: Vec<SharedBufferSpec>,
    #[serde(rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// Flows generated from size distributions and a load, drawn when the scenario resolves.
    #[serde(rename = "workload", skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSpec>,
    #[serde(rename = "event", skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    #[serde(skip_serializing_if = "OutputSpec::is_empty")]
    pub output: OutputSpec,
    /// The `[topology]` the first links were generated from, when read from a file: what a
    /// patch of `topology.*` edits, and what [`to_toml`](Self::to_toml) writes in place of
    /// those links.
    #[serde(skip)]
    pub(crate) fabric: FabricSource,
}

/// Where the generated links came from: a file's `[topology]`, or nothing (no fabric, or one
/// the builder made, whose tiers are a function).
#[derive(Clone, Debug, Default)]
pub(crate) struct FabricSource(pub(crate) Option<Generated>);

/// How a file's `[topology]` was written, so that a patch of one of its keys (`topology.k`,
/// `topology.link_rate`) generates the fabric again ([`ScenarioSpec::set_all`]).
#[derive(Clone, Debug)]
pub(crate) struct Generated {
    /// The `[topology]` table, as written and patched.
    pub(crate) table: toml::Table,
    /// How many links it made: the spec's first.
    pub(crate) links: usize,
    /// Which of the spec's shared buffers is its `shared_buffer`, if it has one.
    pub(crate) pool: Option<usize>,
}

/// How the links were made is not part of what they are: a scenario read from a file with a
/// `[topology]` and the same fabric made by the builder (which lists its links) are equal.
impl PartialEq for FabricSource {
    fn eq(&self, _: &FabricSource) -> bool {
        true
    }
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
    pub rate: LinkRate,
    pub delay: LinkDelay,
    pub queue: QueueConfig,
    /// Random loss before the queue: a probability in [0, 1), or a Gilbert–Elliott channel.
    #[serde(skip_serializing_if = "LossModel::is_none")]
    pub loss: LossModel,
    /// Delay variation: each packet's propagation delay drawn around `delay`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Jitter>,
}

/// A link's `rate`: fixed (`"10Mbps"`), or following a capacity trace in Mahimahi's format
/// (`{ trace = "file" }`, [`acclab_core::link::capacity`]).
pub type LinkRate = OrTrace<Rate>;

/// A link's `delay`: fixed (`"10ms"`), or following a delay trace (`{ trace = "file" }`,
/// [`acclab_core::link::delay_trace`]).
pub type LinkDelay = OrTrace<Duration>;

/// A value written as itself, or `{ trace = "file" }`: a file of its values over time (a
/// relative path is relative to the scenario file).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OrTrace<T> {
    Fixed(T),
    Trace { trace: String },
}

impl<T> From<T> for OrTrace<T> {
    fn from(x: T) -> OrTrace<T> {
        OrTrace::Fixed(x)
    }
}

impl<T> OrTrace<T> {
    /// The trace file, if the value follows one.
    pub fn trace_mut(&mut self) -> Option<&mut String> {
        match self {
            OrTrace::Trace { trace } => Some(trace),
            OrTrace::Fixed(_) => None,
        }
    }
}

/// What a value that may follow a trace is, for messages.
pub trait Traceable: serde::de::DeserializeOwned {
    const WHAT: &'static str;
}

impl Traceable for Rate {
    const WHAT: &'static str =
        "a rate (e.g. \"10Mbps\") or { trace = \"file\" } (Mahimahi's format)";
}

impl Traceable for Duration {
    const WHAT: &'static str =
        "a delay (e.g. \"10ms\") or { trace = \"file\" } (lines of TIME DELAY, in ms)";
}

impl<'de, T: Traceable> serde::Deserialize<'de> for OrTrace<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<OrTrace<T>, D::Error> {
        use serde::de::{self, Visitor};
        use serde::Deserialize;
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Traceable> Visitor<'de> for V<T> {
            type Value = OrTrace<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(T::WHAT)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<OrTrace<T>, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(s)).map(OrTrace::Fixed)
            }
            fn visit_i64<E: de::Error>(self, x: i64) -> Result<OrTrace<T>, E> {
                T::deserialize(de::value::I64Deserializer::<E>::new(x)).map(OrTrace::Fixed)
            }
            fn visit_u64<E: de::Error>(self, x: u64) -> Result<OrTrace<T>, E> {
                T::deserialize(de::value::U64Deserializer::<E>::new(x)).map(OrTrace::Fixed)
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<OrTrace<T>, E> {
                T::deserialize(de::value::F64Deserializer::<E>::new(x)).map(OrTrace::Fixed)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<OrTrace<T>, A::Error> {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Table {
                    trace: String,
                }
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(OrTrace::Trace { trace: t.trace })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `[[shared_buffer]]`: each node named has a pool of `size` bytes that the output queues of
/// its links share, each queue within the pool's dynamic threshold
/// ([`acclab_core::queue::shared_buffer`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SharedBufferSpec {
    pub nodes: Vec<String>,
    #[serde(flatten)]
    pub params: SharedBufferParams,
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
    /// `[output] delay_histograms = true`: every flow's one-way delay histogram in delays.csv;
    /// `None`: on, but for scenarios with `[[workload]]` tables (thousands of generated flows,
    /// about 2 KB of histogram each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_histograms: Option<bool>,
    /// `[output] queueing_percentiles = false`: the links' queueing delays in summary.json as
    /// their mean alone, without the percentiles (whose histograms, 1–6 KB a link bumped at
    /// every packet that waited, are a sixth of a k = 16 fabric's run); `None`: on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queueing_percentiles: Option<bool>,
    /// `[output] flow_summaries = true`: summary.json lists a workload's flows too, each with
    /// its throughput, losses, RTT and delays (~0.9 KB of JSON a flow); `None`: on, but for the
    /// flows of `[[workload]]` tables (fct.csv lists each of those, with its completion time
    /// and slowdown; the flows of `[[flow]]` tables are listed either way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_summaries: Option<bool>,
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
    #[serde(default, skip_serializing_if = "Capture::is_wire")]
    pub capture: Capture,
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
    /// A `[[shared_buffer]]`.
    SharedBuffer(usize),
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
            shared_buffers: Vec::new(),
            flows: Vec::new(),
            workloads: Vec::new(),
            events: Vec::new(),
            output: OutputSpec::default(),
            fabric: FabricSource::default(),
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
            Item::SharedBuffer(i) => format!("shared_buffer[{i}]"),
        };
        join_key(&head, key)
    }
}
