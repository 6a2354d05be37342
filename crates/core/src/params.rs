//! What every algorithm's parameters share: the two traits a scheme's or a queue discipline's
//! parameter struct implements ([`SchemeParams`], [`QueueParams`]), the context they build in,
//! and the validation error with its key path. The algorithms import this module; the tagged
//! enums that name them all are in [`crate::config`], so neither imports the other.

use std::fmt;

use crate::packet::FlowId;
use crate::queue::QueueDiscipline;
use crate::transport::Endpoint;
use crate::units::{Limit, Rate};

/// A parameter that failed validation: its key path inside the `params` (or `queue`) table —
/// e.g. `kappa`, `classes[1].f_max`; empty when the table as a whole is wrong — and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl ParamError {
    /// An error of the parameter at `key`.
    pub fn at(key: impl Into<String>, message: impl Into<String>) -> ParamError {
        ParamError {
            key: key.into(),
            message: message.into(),
        }
    }

    /// The same error, seen from the table that holds `prefix` (`kappa` → `monaco.kappa`).
    pub fn within(self, prefix: &str) -> ParamError {
        let key = match self.key.as_str() {
            "" => prefix.to_string(),
            k if k.starts_with('[') => format!("{prefix}{k}"),
            k => format!("{prefix}.{k}"),
        };
        ParamError { key, ..self }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key.as_str() {
            "" => f.write_str(&self.message),
            k => write!(f, "`{k}`: {}", self.message),
        }
    }
}

/// Requires `x` to be finite and positive.
pub fn positive(key: &str, x: f64) -> Result<(), ParamError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(ParamError::at(key, format!("must be positive, not {x}")))
    }
}

/// `true`, for `#[serde(default = "crate::params::yes")]` on switches that are on by default.
pub(crate) fn yes() -> bool {
    true
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

/// A flow's scheme: its parameters, how they are checked, and the endpoints they build.
pub trait SchemeParams {
    /// Checks what serde cannot: ranges and combinations of parameters.
    fn validate(&self) -> Result<(), ParamError>;
    /// Builds the sender and the receiver of one flow (of validated parameters: cannot fail).
    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>);
    /// The traffic class a flow of this scheme belongs to unless the scenario says otherwise.
    fn default_class(&self) -> &'static str {
        "tcp"
    }
    /// Whether the receiver sends packets back (ACKs, reverse control), so the flow needs a
    /// route from its destination to its source.
    fn sends_feedback(&self) -> bool {
        true
    }
}

/// What a queue discipline needs from the scenario.
#[derive(Clone, Debug)]
pub struct QueueContext {
    pub rate: Rate,
    pub seed: u64,
    /// The link's name, which names its random stream.
    pub name: String,
    /// The traffic class of each flow (by flow id), for class-based AQMs; shared by every link
    /// of a scenario (a clone is a reference count, not a copy of every flow's class).
    pub flow_classes: std::sync::Arc<[String]>,
    /// The scenario's data packet size (for AQMs that count in packets).
    pub packet_size: u32,
}

/// A link's queue discipline: its parameters, how they are checked, and the queue they build.
pub trait QueueParams {
    /// Checks what serde cannot.
    fn validate(&self) -> Result<(), ParamError>;
    /// Builds the discipline (of validated parameters: cannot fail).
    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline>;
    /// Every buffer limit this discipline enforces (for invariant checks).
    fn limits(&self) -> Vec<Limit>;
}
