//! acclab-scenario: the model of a scenario and its front ends.
//!
//! - [`model`]: what a validated scenario holds — nodes, links, flows with their routes, events,
//!   output settings — with typed ids. The simulator, the theory, live mode and later tiers read
//!   it; none of them parses text.
//! - [`file`]: the TOML front end (SPEC §9): text in, a validated [`Scenario`] out, every error
//!   naming the file, the line and the key.
//! - [`routing`]: shortest paths by hop count with a deterministic tie-break.
//! - [`templates`]: scenario text for standard topologies (benchmarks, tests).

pub mod error;
pub mod file;
pub mod model;
pub mod routing;
pub mod templates;

pub use error::ScenarioError;
pub use file::{load, parse};
pub use model::{EventAction, EventDef, FlowDef, LinkDef, LinkId, NodeId, OutputDef, Scenario};
