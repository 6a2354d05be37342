//! What an observer of a run may read of the simulator's links and flows, as two small traits.
//!
//! The simulator implements them for its own link and flow state and hands slices of that state
//! to the [`crate::monitor::Monitor`]; the monitor depends on these traits only, not on the
//! simulator's types, so neither module imports the other. (A full observer interface — the
//! simulator reporting drops, marks and deliveries as they happen — is issue 20's.)

use acclab_core::queue::QueueDiscipline;
use acclab_core::Time;

/// One link, seen by an observer.
pub trait LinkProbe {
    /// Time spent transmitting (ns) up to `now`, including the packet on the wire.
    fn busy_ns(&self, now: Time) -> u64;
    /// ∫ queue length (packets) dt up to `now`, in packet·ns.
    fn queue_area(&self, now: Time) -> u128;
    /// The link's queue discipline (backlog, counters, AQM state).
    fn queue(&self) -> &dyn QueueDiscipline;
    /// The largest backlog, in packets, since the measurement window opened.
    fn window_max_pkts(&self) -> u64;
}

/// One flow, seen by an observer.
pub trait FlowProbe {
    /// When the flow starts (start jitter included).
    fn start(&self) -> Time;
    fn stop(&self) -> Option<Time>;
    /// Data packets of the flow dropped so far (at queues or by random loss).
    fn dropped_data(&self) -> u64;
}
