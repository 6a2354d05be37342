//! The observer interface: what the simulator reports as it runs, and what an observer may read
//! of the network when it is asked to look.
//!
//! The simulator's state is private. It tells its observers of every queue event as it happens
//! — a packet queued, sent on, dropped (with the cause), delivered — and asks them to take a
//! sample, or to mark an edge of the measurement window, handing them a read-only
//! [`NetworkView`] (queues, endpoint statistics, flow times). The [`crate::monitor::Monitor`]
//! is one observer: it builds flows.csv, links.csv and the summary from these reports alone.
//! Packet traces are another; more can be added with [`crate::Simulator::observe`]. Neither this
//! module nor the monitor imports the simulator (after htsim: loggers are injected, not fields
//! read).

use acclab_core::queue::{Backlog, DropReason, QueueState};
use acclab_core::transport::EndpointStats;
use acclab_core::{Duration, Packet, Time};
use acclab_scenario::LinkId;

/// What an observer may read of the network when it samples.
pub trait NetworkView {
    /// Number of links (indexed as the scenario's links).
    fn link_count(&self) -> usize;
    /// Link `l`'s queue discipline: its backlog, counters and AQM state.
    fn queue(&self, l: LinkId) -> &dyn QueueState;
    /// Number of flows (indexed as the scenario's flows).
    fn flow_count(&self) -> usize;
    /// When flow `f` starts (start jitter included) and stops.
    fn flow_times(&self, f: usize) -> (Time, Option<Time>);
    /// The statistics of flow `f`'s sender and receiver.
    fn endpoint_stats(&self, f: usize) -> (EndpointStats, EndpointStats);
    /// Flow `f`'s sender's congestion-control state. (Default: none.)
    fn cc_state(&self, _f: usize) -> acclab_core::transport::CcState {
        acclab_core::transport::CcState::default()
    }
}

/// A packet leaving a queue for the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// How long it waited in the queue.
    pub sojourn: Duration,
    /// The queue marked it on the way out.
    pub marked: bool,
    /// When its last bit leaves the transmitter.
    pub done: Time,
}

/// Receives what the simulator reports. Every method has an empty default: an observer
/// implements what it needs. `backlog` is the queue's backlog after the event. A parallel run
/// (`Simulator::run_parallel`) tells it what the serial run would, in the same order: the
/// partitions' reports merged after the fact, the run's hooks with the whole network joined.
pub trait Observer: Send {
    /// `pkt` joined link `link`'s queue; `marked` if the queue marked it (ECN CE or an AVD
    /// stamp; `pkt` is the packet as it arrived).
    fn on_enqueue(
        &mut self,
        _now: Time,
        _link: LinkId,
        _pkt: &Packet,
        _marked: bool,
        _backlog: Backlog,
    ) {
    }
    /// `pkt` left link `link`'s queue and starts its transmission.
    fn on_transmit(
        &mut self,
        _now: Time,
        _link: LinkId,
        _pkt: &Packet,
        _tx: Transmit,
        _backlog: Backlog,
    ) {
    }
    /// `pkt` was lost at link `link`: refused by its queue, dropped at the queue's head, or
    /// lost at random on the link.
    fn on_drop(
        &mut self,
        _now: Time,
        _link: LinkId,
        _pkt: &Packet,
        _reason: DropReason,
        _backlog: Backlog,
    ) {
    }
    /// `pkt` reached the endpoint it was for.
    fn on_deliver(&mut self, _now: Time, _pkt: &Packet) {}
    /// Flow `flow` is done: its finite transfer is complete and nothing of it is left in the
    /// network, so no packet of it will be reported again (a workload's flows, one by one).
    fn on_flow_done(&mut self, _now: Time, _flow: u32) {}
    /// A sample is due (every `output.sample_interval`).
    fn on_sample(&mut self, _now: Time, _net: &dyn NetworkView) {}
    /// The measurement window opens.
    fn on_window_start(&mut self, _now: Time, _net: &dyn NetworkView) {}
    /// The measurement window closes.
    fn on_window_end(&mut self, _now: Time, _net: &dyn NetworkView) {}
    /// The run is over: write out what is buffered; the first error of the run, if any.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
