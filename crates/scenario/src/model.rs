//! The scenario model: what a validated scenario holds, whatever front end (TOML file or the
//! builder) made it. Ids are indices into the scenario's own vectors.

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::{Duration, Rate, Time};

/// Index of a node in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Index of a unidirectional link in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A scenario ready to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub duration: Duration,
    pub seed: u64,
    pub packet_size: u32,
    pub ack_size: u32,
    pub nodes: Vec<String>,
    pub links: Vec<LinkDef>,
    pub flows: Vec<FlowDef>,
    pub events: Vec<EventDef>,
    pub output: OutputDef,
}

/// One unidirectional link, named `"from->to"`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDef {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: Duration,
    pub queue: QueueConfig,
    /// Probability that the link loses a packet at random (transmission errors), before it
    /// reaches the queue.
    pub loss: f64,
}

/// One flow with its routes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowDef {
    pub id: String,
    pub scheme: SchemeConfig,
    /// Traffic class for class-based AQMs (BAT): the `class` key, or the scheme's default.
    pub class: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: Time,
    /// Random extra start delay, uniform in [0, start_jitter), drawn from the flow's stream.
    pub start_jitter: Duration,
    pub stop: Option<Time>,
    /// Links from source to destination, and back (ACKs, reverse control packets).
    pub forward: Vec<LinkId>,
    pub reverse: Vec<LinkId>,
}

/// A scheduled change.
#[derive(Clone, Debug, PartialEq)]
pub struct EventDef {
    pub at: Time,
    pub action: EventAction,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventAction {
    SetDelay { link: LinkId, delay: Duration },
    SetRate { link: LinkId, rate: Rate },
}

/// What to measure and when.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputDef {
    pub window: (Time, Time),
    pub sample_interval: Duration,
    /// Per-packet traces, off unless asked for.
    pub trace: Option<TraceDef>,
}

/// A packet trace's file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// pcapng with synthesised IPv4/TCP/UDP headers (`trace.pcapng`): Wireshark, tshark and
    /// tcpdump read it.
    #[default]
    Pcap,
    /// One row per event (`trace.csv`).
    Csv,
}

/// What to trace: every enqueue, transmission, drop and mark at the chosen links, and of the
/// chosen flows' packets wherever they are.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDef {
    pub links: Vec<LinkId>,
    /// Flows by index.
    pub flows: Vec<u32>,
    pub format: TraceFormat,
}
