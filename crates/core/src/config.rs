//! The scenario vocabulary: serde-tagged configuration enums that also build the state machines.
//!
//! A flow's `kind` and `params` (SPEC §9) deserialise into [`SchemeConfig`]; a link's `queue`
//! table into [`QueueConfig`]. Adding an algorithm is one new file, one variant here and one arm
//! in the matching `build`. Unknown keys are errors (`deny_unknown_fields`), never ignored.

use serde::{Deserialize, Serialize};

use crate::cc::reno::Reno;
use crate::packet::FlowId;
use crate::queue::{DropTail, PriorityFifo, QueueDiscipline};
use crate::transport::cbr::{CbrSink, CbrSource, CbrStep};
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::Endpoint;
use crate::units::{Bytes, Duration, Limit, Rate};

/// A flow's scheme and its parameters: `kind = "reno"`, `params = { … }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", content = "params", rename_all = "kebab-case")]
pub enum SchemeConfig {
    /// TCP Reno with NewReno loss recovery.
    Reno(RenoParams),
    /// Constant bit rate, not responsive.
    Cbr(CbrParams),
}

/// `reno` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// React to ECN echoes (halve once per RTT) and send ECN-capable packets.
    pub ecn: bool,
    /// Bytes to transfer; absent = bulk (infinite backlog).
    pub size: Option<Bytes>,
    /// Lower bound of the retransmission timeout.
    pub min_rto: Duration,
    /// Initial window in segments.
    pub initial_window: u64,
}

impl Default for RenoParams {
    fn default() -> Self {
        let d = TcpConfig::default();
        RenoParams {
            ecn: false,
            size: None,
            min_rto: d.min_rto,
            initial_window: d.initial_window,
        }
    }
}

/// `cbr` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrParams {
    pub rate: Rate,
    /// Packet size; absent = the scenario's default packet size.
    pub packet_size: Option<Bytes>,
    /// Rate changes relative to the flow's start: `{ at = "5s", rate = "120Mbps" }`; an entry
    /// without `rate` pauses the source.
    #[serde(default)]
    pub schedule: Vec<CbrStepConfig>,
    /// Repeat the schedule with this period (square waves).
    pub repeat: Option<Duration>,
}

/// One step of a CBR schedule.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrStepConfig {
    pub at: Duration,
    pub rate: Option<Rate>,
}

/// What a scheme needs from the scenario to build its endpoints.
#[derive(Clone, Debug)]
pub struct FlowContext {
    pub flow: FlowId,
    /// Default data packet size in bytes (headers included).
    pub packet_size: u32,
    /// ACK and control packet size in bytes.
    pub ack_size: u32,
    /// The run seed, for schemes that draw random numbers (with [`crate::rng::stream`]).
    pub seed: u64,
    /// The flow's name in the scenario, which names its random stream.
    pub name: String,
}

impl SchemeConfig {
    /// The scheme's name as written in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            SchemeConfig::Reno(_) => "reno",
            SchemeConfig::Cbr(_) => "cbr",
        }
    }

    /// Builds the sender and the receiver of one flow.
    pub fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        match self {
            SchemeConfig::Reno(p) => {
                let cfg = TcpConfig {
                    packet_size: ctx.packet_size,
                    transfer_bytes: p.size.map(|b| b.0),
                    initial_window: p.initial_window,
                    min_rto: p.min_rto,
                    ecn: p.ecn,
                    ..TcpConfig::default()
                };
                let cc = Box::new(Reno::new(ctx.packet_size as u64, cfg.initial_window));
                (
                    Box::new(TcpSender::new(ctx.flow, cfg, cc)),
                    Box::new(TcpReceiver::new(ctx.flow, ctx.ack_size)),
                )
            }
            SchemeConfig::Cbr(p) => {
                let size = p.packet_size.map_or(ctx.packet_size, |b| b.0 as u32);
                let schedule = p
                    .schedule
                    .iter()
                    .map(|s| CbrStep {
                        at: s.at,
                        rate: s.rate,
                    })
                    .collect();
                (
                    Box::new(CbrSource::new(ctx.flow, p.rate, size, schedule, p.repeat)),
                    Box::new(CbrSink::new()),
                )
            }
        }
    }

    /// Whether the receiver sends packets back (ACKs, reverse control), so the flow needs a
    /// route from its destination to its source.
    pub fn sends_feedback(&self) -> bool {
        !matches!(self, SchemeConfig::Cbr(_))
    }
}

/// A link's queue discipline: `queue = { kind = "droptail", limit = "90pkt" }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum QueueConfig {
    /// Tail-drop FIFO.
    Droptail { limit: Limit },
    /// Two-priority strict FIFO; `high_limit` defaults to `limit`.
    Priority {
        limit: Limit,
        high_limit: Option<Limit>,
    },
}

/// What a queue discipline needs from the scenario.
#[derive(Clone, Debug)]
pub struct QueueContext {
    pub rate: Rate,
    pub seed: u64,
    /// The link's name, which names its random stream.
    pub name: String,
}

impl QueueConfig {
    /// The built-in default when neither the link nor `[defaults]` gives a queue.
    pub fn default_queue() -> QueueConfig {
        QueueConfig::Droptail {
            limit: Limit::Packets(1000),
        }
    }

    pub fn build(&self, _ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        match *self {
            QueueConfig::Droptail { limit } => Box::new(DropTail::new(limit)),
            QueueConfig::Priority { limit, high_limit } => {
                Box::new(PriorityFifo::new(limit, high_limit.unwrap_or(limit)))
            }
        }
    }

    /// Every buffer limit this discipline enforces (for invariant checks).
    pub fn limits(&self) -> Vec<Limit> {
        match *self {
            QueueConfig::Droptail { limit } => vec![limit],
            QueueConfig::Priority { limit, high_limit } => vec![limit, high_limit.unwrap_or(limit)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_tables_parse_and_reject_unknown_keys() {
        let q: QueueConfig = toml::from_str("kind = \"droptail\"\nlimit = \"90pkt\"").unwrap();
        assert_eq!(
            q,
            QueueConfig::Droptail {
                limit: Limit::Packets(90)
            }
        );
        let e = toml::from_str::<QueueConfig>("kind = \"droptail\"\nlimit = \"9pkt\"\nlimt = 1")
            .unwrap_err();
        assert!(e.to_string().contains("limt"), "{e}");
        let e = toml::from_str::<QueueConfig>("kind = \"bogus\"\nlimit = \"9pkt\"").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }

    #[test]
    fn schemes_parse_with_defaults() {
        let s: SchemeConfig = toml::from_str("kind = \"reno\"\nparams = {}").unwrap();
        assert_eq!(s, SchemeConfig::Reno(RenoParams::default()));
        let s: SchemeConfig =
            toml::from_str("kind = \"cbr\"\nparams = { rate = \"10Mbps\" }").unwrap();
        assert_eq!(s.kind(), "cbr");
        let e =
            toml::from_str::<SchemeConfig>("kind = \"reno\"\nparams = { ecm = true }").unwrap_err();
        assert!(e.to_string().contains("ecm"), "{e}");
    }
}
