//! What observers see of the simulator ([`View`]) and whom it reports to ([`Observers`]).

use acclab_core::queue::{Backlog, DropReason, QueueState};
use acclab_core::transport::EndpointStats;
use acclab_core::{FlowId, Packet, Time};

use super::books::FlowTimes;
use super::endpoints::Endpoints;
use super::link::Link;
use crate::monitor::Monitor;
use crate::observe::{NetworkView, Observer, Transmit};
use acclab_scenario::LinkId;

/// What an observer reads of the simulator: borrowed parts of its state.
pub(super) struct View<'a> {
    pub(super) links: &'a [Link],
    pub(super) flows: &'a FlowTimes,
    pub(super) endpoints: &'a Endpoints,
}

impl NetworkView for View<'_> {
    fn link_count(&self) -> usize {
        self.links.len()
    }
    fn queue(&self, l: LinkId) -> &dyn QueueState {
        self.links[l.0 as usize].queue()
    }
    fn flow_count(&self) -> usize {
        self.flows.len()
    }
    fn flow_times(&self, f: usize) -> (Time, Option<Time>) {
        self.flows.get(f)
    }
    fn endpoint_stats(&self, f: usize) -> (EndpointStats, EndpointStats) {
        self.endpoints.stats(FlowId(f as u32))
    }
    fn cc_state(&self, f: usize) -> acclab_core::transport::CcState {
        self.endpoints.cc_state(FlowId(f as u32))
    }
}

/// Whom the simulator reports to: the monitor, then every observer added, in order.
pub(super) struct Observers {
    pub(super) monitor: Monitor,
    pub(super) extra: Vec<Box<dyn Observer>>,
}

impl Observers {
    /// The observers added, for the per-packet hooks: out of line, so that a run with the
    /// monitor alone keeps its hot path as tight as if there were no others (an inline loop
    /// over an empty list cost 8% on the 10-flow bench: its arguments had to be kept in
    /// memory for the calls in it).
    #[cold]
    #[inline(never)]
    fn extra(&mut self) -> &mut [Box<dyn Observer>] {
        &mut self.extra
    }
}

impl Observers {
    /// Whether observers were added beside the monitor.
    #[inline]
    pub(super) fn has_extra(&self) -> bool {
        !self.extra.is_empty()
    }
}

impl Observer for Observers {
    #[inline]
    fn on_enqueue(&mut self, now: Time, l: LinkId, p: &Packet, marked: bool, b: Backlog) {
        self.monitor.on_enqueue(now, l, p, marked, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_enqueue(now, l, p, marked, b);
            }
        }
    }
    #[inline]
    fn on_transmit(&mut self, now: Time, l: LinkId, p: &Packet, tx: Transmit, b: Backlog) {
        self.monitor.on_transmit(now, l, p, tx, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_transmit(now, l, p, tx, b);
            }
        }
    }
    #[inline]
    fn on_drop(&mut self, now: Time, l: LinkId, p: &Packet, why: DropReason, b: Backlog) {
        self.monitor.on_drop(now, l, p, why, b);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_drop(now, l, p, why, b);
            }
        }
    }
    // Always: left to itself the compiler called it out of line, and saving and restoring
    // the caller's registers took half of its instructions (cachegrind, 1,000 flows).
    #[inline(always)]
    fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.monitor.on_deliver(now, p);
        if !self.extra.is_empty() {
            for o in self.extra() {
                o.on_deliver(now, p);
            }
        }
    }
    fn on_flow_done(&mut self, now: Time, flow: u32) {
        self.monitor.on_flow_done(now, flow);
        for o in &mut self.extra {
            o.on_flow_done(now, flow);
        }
    }
    fn on_sample(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_sample(now, net);
        for o in &mut self.extra {
            o.on_sample(now, net);
        }
    }
    fn on_window_start(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_window_start(now, net);
        for o in &mut self.extra {
            o.on_window_start(now, net);
        }
    }
    fn on_window_end(&mut self, now: Time, net: &dyn NetworkView) {
        self.monitor.on_window_end(now, net);
        for o in &mut self.extra {
            o.on_window_end(now, net);
        }
    }
    fn finish(&mut self) -> std::io::Result<()> {
        let mut first = self.monitor.finish();
        for o in &mut self.extra {
            let r = o.finish();
            first = first.and(r);
        }
        first
    }
}
