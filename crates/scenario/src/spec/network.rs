//! The nodes and links of a scenario being resolved: names to ids, each link checked.

use std::collections::BTreeMap;
use std::sync::Arc;

use acclab_core::link::{CapacityTrace, DelayTrace};
use acclab_core::params::MAX_RATE;
use acclab_core::{Duration, Limit, Rate, Time};

use super::{fault, Fault, Item, LinkDelay, LinkRate, LinkSpec};
use crate::scenario::{CapacityTraceDef, EventAction, EventDef, LinkDef, LinkId, NodeId};

#[derive(Default)]
pub(super) struct Topology {
    pub(super) nodes: Vec<String>,
    pub(super) node_ids: BTreeMap<String, NodeId>,
    pub(super) links: Vec<LinkDef>,
    pub(super) link_ids: BTreeMap<String, LinkId>,
    /// The capacity traces read so far, by file: links that name one file share it.
    traces: BTreeMap<String, Arc<CapacityTrace>>,
    /// The delay changes of links whose delay follows a trace, as `set_delay` events.
    pub(super) delay_events: Vec<EventDef>,
}

impl Topology {
    pub(super) fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.node_ids.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(name.to_string());
        self.node_ids.insert(name.to_string(), id);
        id
    }

    /// Adds link `l` (the `i`th) of a run of `duration`.
    pub(super) fn add_link(
        &mut self,
        i: usize,
        l: &LinkSpec,
        packet_size: u32,
        duration: Duration,
    ) -> Result<(), Fault> {
        let item = Item::Link(i);
        for (end, key) in [(&l.from, "from"), (&l.to, "to")] {
            if end.is_empty() || end.contains("->") {
                return Err(fault(
                    item,
                    key,
                    format!("bad node name {end:?} (non-empty, without \"->\")"),
                ));
            }
        }
        if l.from == l.to {
            return Err(fault(
                item,
                "to",
                format!("link from {:?} to itself", l.from),
            ));
        }
        l.loss.validate().map_err(|e| {
            let e = e.within("loss");
            fault(item, &e.key, e.message)
        })?;
        if let Some(j) = &l.jitter {
            j.validate().map_err(|e| {
                let e = e.within("jitter");
                fault(item, &e.key, e.message)
            })?;
        }
        let (rate, capacity) = match &l.rate {
            LinkRate::Fixed(r) => (*r, None),
            LinkRate::Trace { trace } => {
                let t = self.trace(item, trace)?;
                (
                    t.mean_rate(),
                    Some(CapacityTraceDef {
                        file: trace.clone(),
                        trace: t,
                    }),
                )
            }
        };
        check_link_rate(item, "rate", rate)?;
        let id = LinkId(self.links.len() as u32);
        let (delay, delay_trace) = match &l.delay {
            LinkDelay::Fixed(d) => (*d, None),
            LinkDelay::Trace { trace } => {
                let t = read_trace(item, "delay.trace", "delay", trace, DelayTrace::parse)?;
                // The run follows the trace's changes; what the theory and the model see is its
                // mean over the run.
                for &(at, d) in t.points() {
                    if at.0 <= duration.0 {
                        self.delay_events.push(EventDef {
                            at,
                            action: EventAction::SetDelay { link: id, delay: d },
                        });
                    }
                }
                (t.mean_until(Time(duration.0)), Some(trace.clone()))
            }
        };
        l.queue
            .validate()
            .and_then(|()| l.queue.validate_on_link(rate, packet_size))
            .map_err(|e| {
                let e = e.within("queue");
                fault(item, &e.key, e.message)
            })?;
        // A byte limit below one packet would drop every data packet: the link would carry
        // nothing, silently.
        for limit in l.queue.limits() {
            if let Limit::Bytes(b) = limit {
                if b < packet_size as u64 {
                    return Err(fault(
                        item,
                        "queue.limit",
                        format!(
                            "a buffer of {b} B cannot hold one {packet_size}-byte packet (defaults.packet_size)"
                        ),
                    ));
                }
            }
        }
        let name = l.name();
        if self.link_ids.contains_key(&name) {
            return Err(fault(item, "to", format!("link {name} is declared twice")));
        }
        let (from, to) = (self.node(&l.from), self.node(&l.to));
        self.link_ids
            .insert(name.clone(), LinkId(self.links.len() as u32));
        self.links.push(LinkDef {
            name,
            from,
            to,
            rate,
            capacity,
            delay,
            delay_trace,
            queue: l.queue.clone(),
            loss: l.loss,
            jitter: l.jitter,
        });
        Ok(())
    }

    /// The capacity trace in `file`, read once per scenario.
    fn trace(&mut self, item: Item, file: &str) -> Result<Arc<CapacityTrace>, Fault> {
        if let Some(t) = self.traces.get(file) {
            return Ok(t.clone());
        }
        let t = Arc::new(read_trace(
            item,
            "rate.trace",
            "capacity",
            file,
            CapacityTrace::parse,
        )?);
        self.traces.insert(file.to_string(), t.clone());
        Ok(t)
    }
}

/// The `what` trace in `file`, parsed by `parse`; an error names `key` of link `item`.
fn read_trace<T>(
    item: Item,
    key: &str,
    what: &str,
    file: &str,
    parse: fn(&str) -> Result<T, acclab_core::link::TraceError>,
) -> Result<T, Fault> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        fault(
            item,
            key,
            format!("cannot read the {what} trace {file:?}: {e}"),
        )
    })?;
    parse(&text).map_err(|e| fault(item, key, format!("{what} trace {file:?}, {e}")))
}

/// A link's rate, as written or as an event sets it: in [1 bps, [`MAX_RATE`]]. The top is
/// accepted on purpose, beside slower links: what it costs, `acclab check` says.
pub(super) fn check_link_rate(item: Item, key: &str, rate: Rate) -> Result<(), Fault> {
    if (1..=MAX_RATE.bps()).contains(&rate.bps()) {
        return Ok(());
    }
    Err(fault(
        item,
        key,
        format!("link rate {rate} is not in [1 bps, {MAX_RATE}]"),
    ))
}
