//! acclab-scenario: the model of a scenario and its front ends.
//!
//! - [`scenario`]: what a validated scenario holds — nodes, links, flows with their routes, events,
//!   output settings — with typed ids. The simulator, the theory, live mode and later tiers read
//!   it; none of them parses text.
//! - [`flows`]: a scenario's flows — those written whole, a workload's held compactly and made
//!   whole when read ([`Flows`]); [`ids`]: the node and link ids.
//! - [`spec`]: a scenario as written ([`ScenarioSpec`]: names, groups expanded, optional keys
//!   optional) and [`ScenarioSpec::resolve`], the one place that checks a scenario and builds the
//!   model. Two front ends make a `ScenarioSpec`:
//!   - [`file`]: the TOML front end (SPEC §9), every error naming the file, the line and the key;
//!   - [`builder`]: the typed builder, `Scenario::builder(name, duration).link(…).flow(…).build()`.
//! - [`patch`]: set a value by key path (`flow.f0.params.weight`), checked as the file would be.
//! - [`sweep_spec`]: keys varied over lists of values and seeds (`acclab sweep`, `[sweep]`).
//! - [`routing`]: shortest paths by hop count with a deterministic tie-break.
//! - [`templates`]: scenario text for standard topologies (benchmarks, tests).
//! - [`topology`]: generated fabrics (fat-tree, leaf-spine) expanded into links.
//! - [`workload`]: flows from measured size distributions at a target load.

pub mod builder;
pub mod error;
pub mod file;
pub mod flows;
pub mod ids;
pub mod patch;
pub mod routing;
pub mod scenario;
pub mod spec;
pub mod sweep_spec;
pub mod templates;
pub mod topology;
pub mod workload;

pub use builder::ScenarioBuilder;
pub use error::ScenarioError;
pub use file::{load, load_spec, parse, parse_spec};
pub use flows::{FlowView, Flows};
pub use patch::value_of;
pub use routing::Ecmp;
pub use scenario::{
    CapacityTraceDef, Capture, EventAction, EventDef, FlowDef, LinkDef, LinkId, NodeId, OutputDef,
    Scenario, SharedBufferDef, TraceDef, TraceFormat,
};
pub use spec::{
    EventSpec, EventSpecAction, FlowSpec, LinkDelay, LinkRate, LinkSpec, OrTrace, OutputSpec,
    RoutingSpec, ScenarioSpec, SharedBufferSpec, TraceSpec,
};
pub use topology::{node_role, Shape, Tier, TierLinks};
pub use workload::{Pattern, SizeCdf, WorkloadSpec};
