//! What a link does to the packets it carries besides queueing them: a capacity that follows a
//! measured trace ([`capacity`]), a delay that follows one ([`delay_trace`]), random loss, independent or in bursts ([`loss`]), and delay
//! variation ([`jitter`]). Pure state: the simulator (and live mode through it) keeps one per
//! link and asks it per packet.

pub mod capacity;
pub mod delay_trace;
pub mod jitter;
pub mod loss;

pub use capacity::{CapacityTrace, MarkovState, TraceError, TraceTransmitter};
pub use delay_trace::DelayTrace;
pub use jitter::{Jitter, JitterDistribution};
pub use loss::{GilbertElliott, LossModel, LossProcess};
