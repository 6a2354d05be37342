//! The scenario file as written: serde reads it into these structs, refusing unknown keys, bad
//! units and wrong types (the key path from `serde_path_to_error`).

use acclab_core::link::{Jitter, LossModel};
use acclab_core::queue::shared_buffer::SharedBufferParams;
use acclab_core::{Bytes, Duration, Rate};
use serde::{Deserialize, Serialize};

use crate::routing::Ecmp;
use crate::spec::{LinkDelay, LinkRate, TraceSpec};
use crate::workload::Pattern;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: String,
    pub(super) duration: Duration,
    pub(super) seed: Option<u64>,
    #[serde(default)]
    pub(super) defaults: RawDefaults,
    #[serde(default)]
    pub(super) routing: RawRouting,
    /// A generated fabric (see [`crate::topology`]), expanded into links before `[[link]]`'s.
    pub(super) topology: Option<RawTopology>,
    #[serde(default)]
    pub(super) link: Vec<RawLink>,
    #[serde(default)]
    pub(super) shared_buffer: Vec<RawSharedBuffer>,
    #[serde(default)]
    pub(super) flow: Vec<RawFlow>,
    #[serde(default)]
    pub(super) workload: Vec<RawWorkload>,
    #[serde(default)]
    pub(super) event: Vec<RawEvent>,
    #[serde(default)]
    pub(super) output: RawOutput,
    /// A sweep over this scenario (`acclab sweep`; see [`crate::sweep_spec`]); a run ignores it.
    #[allow(dead_code)]
    pub(super) sweep: Option<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDefaults {
    pub(super) packet_size: Option<Bytes>,
    pub(super) ack_size: Option<Bytes>,
    pub(super) queue: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    // A list rather than `[String; 2]`, so that a third node is an error, not dropped.
    pub(super) between: Option<Vec<String>>,
    pub(super) from: Option<String>,
    pub(super) to: Option<String>,
    pub(super) rate: LinkRate,
    pub(super) delay: LinkDelay,
    pub(super) queue: Option<toml::Table>,
    pub(super) loss: Option<LossModel>,
    pub(super) jitter: Option<Jitter>,
    pub(super) count: Option<u32>,
    pub(super) first: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRouting {
    #[serde(default)]
    pub(super) ecmp: Ecmp,
}

/// `[topology]`: a fabric's shape (the keys of its kind), its links' rate, delay and queue, and
/// per-tier overrides (`host = { rate = "25Gbps" }`).
///
/// Written back (`Serialize`) as the spec's [`crate::spec::FabricSource`], the table its keys'
/// patches edit.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTopology {
    pub(super) kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) oversubscription: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) leaves: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) spines: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) hosts_per_leaf: Option<u32>,
    pub(super) link_rate: Rate,
    pub(super) link_delay: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) queue: Option<toml::Table>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) host: Option<RawTier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) aggregation: Option<RawTier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) core: Option<RawTier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) spine: Option<RawTier>,
    /// Every switch of the fabric has a pool of this size shared by its output queues.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) shared_buffer: Option<SharedBufferParams>,
    /// `[topology.links."a->b"]`: generated links' own values, in place of their tier's.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(super) links: std::collections::BTreeMap<String, RawLinkValues>,
}

/// A generated link's own values (`[topology.links."agg0_1->core2"]`): what a patch of the
/// link (`link."agg0_1->core2".rate`) writes back, and what a file may set by hand.
#[derive(Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinkValues {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) rate: Option<LinkRate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) delay: Option<LinkDelay>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) queue: Option<toml::Table>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) loss: Option<LossModel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) jitter: Option<Jitter>,
}

/// `[[shared_buffer]]`: see [`crate::spec::SharedBufferSpec`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSharedBuffer {
    pub(super) nodes: Vec<String>,
    pub(super) size: Bytes,
    pub(super) alpha: Option<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTier {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) rate: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) delay: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) queue: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlow {
    pub(super) id: String,
    pub(super) kind: String,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) start: Option<Duration>,
    pub(super) start_jitter: Option<Duration>,
    pub(super) stop: Option<Duration>,
    pub(super) params: Option<toml::Table>,
    pub(super) class: Option<String>,
    pub(super) path: Option<Vec<String>>,
    pub(super) count: Option<u32>,
    pub(super) first: Option<u32>,
}

/// `[[workload]]`: see [`crate::workload`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub(super) id: String,
    pub(super) kind: String,
    pub(super) params: Option<toml::Table>,
    pub(super) sizes: Option<String>,
    pub(super) load: Option<f64>,
    #[serde(default)]
    pub(super) pattern: Pattern,
    pub(super) senders: Option<u32>,
    pub(super) receiver: Option<String>,
    pub(super) size: Option<Bytes>,
    pub(super) period: Option<Duration>,
    pub(super) file: Option<String>,
    #[serde(default)]
    pub(super) hosts: Vec<String>,
    pub(super) start: Option<Duration>,
    pub(super) stop: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    pub(super) at: Duration,
    pub(super) set_delay: Option<RawSetDelay>,
    pub(super) set_rate: Option<RawSetRate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSetDelay {
    pub(super) link: String,
    pub(super) delay: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSetRate {
    pub(super) link: String,
    pub(super) rate: Rate,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutput {
    // A list rather than `[Duration; 2]`, so that a third value is an error, not dropped.
    pub(super) window: Option<Vec<Duration>>,
    pub(super) sample_interval: Option<Duration>,
    pub(super) trace: Option<TraceSpec>,
    #[serde(default)]
    pub(super) plot_links: Vec<String>,
    pub(super) fct_buckets: Option<Vec<Bytes>>,
    pub(super) delay_histograms: Option<bool>,
    pub(super) queueing_percentiles: Option<bool>,
    pub(super) flow_summaries: Option<bool>,
}
