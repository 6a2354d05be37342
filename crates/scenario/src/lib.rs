//! acclab-scenario: the model of a scenario and its front ends.
//!
//! - [`model`]: what a validated scenario holds — nodes, links, flows with their routes, events,
//!   output settings — with typed ids. The simulator, the theory, live mode and later tiers read
//!   it; none of them parses text.
//! - [`def`]: a scenario as written ([`ScenarioDef`]: names, groups expanded, optional keys
//!   optional) and [`ScenarioDef::resolve`], the one place that checks a scenario and builds the
//!   model. Two front ends make a `ScenarioDef`:
//!   - [`file`]: the TOML front end (SPEC §9), every error naming the file, the line and the key;
//!   - [`builder`]: the typed builder, `Scenario::builder(name, duration).link(…).flow(…).build()`.
//! - [`patch`]: set a value by key path (`flow.f0.params.weight`), checked as the file would be.
//! - [`sweep`]: keys varied over lists of values and seeds (`acclab sweep`, `[sweep]`).
//! - [`routing`]: shortest paths by hop count with a deterministic tie-break.
//! - [`templates`]: scenario text for standard topologies (benchmarks, tests).

pub mod builder;
pub mod def;
pub mod error;
pub mod file;
pub mod model;
pub mod patch;
pub mod routing;
pub mod sweep;
pub mod templates;

pub use builder::ScenarioBuilder;
pub use def::{EventSpec, EventSpecAction, FlowSpec, LinkSpec, OutputSpec, ScenarioDef, TraceSpec};
pub use error::ScenarioError;
pub use file::{load, load_def, parse, parse_def};
pub use model::{
    EventAction, EventDef, FlowDef, LinkDef, LinkId, NodeId, OutputDef, Scenario, TraceDef,
    TraceFormat,
};
pub use patch::value_of;
