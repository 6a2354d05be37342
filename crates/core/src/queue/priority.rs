//! `kind = "priority"`: a tail-drop queue with the high-priority band (aqm.rs) and a limit of
//! its own for that band. The same band is `priority = true` on any other discipline, with both
//! limits equal.

use super::{DropTail, QueueDiscipline};
use crate::units::Limit;
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, QueueContext, QueueParams};

/// `queue = { kind = "priority", limit = "90pkt", high_limit = "20pkt" }` (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriorityParams {
    /// Limit of the low (data) band.
    pub limit: Limit,
    /// Limit of the high (control) band; default `limit`.
    pub high_limit: Option<Limit>,
}

impl QueueParams for PriorityParams {
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(&self, _ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        Box::new(
            DropTail::droptail(self.limit).with_high_band(self.high_limit.unwrap_or(self.limit)),
        )
    }

    fn limits(&self) -> Vec<Limit> {
        vec![self.limit, self.high_limit.unwrap_or(self.limit)]
    }
}
