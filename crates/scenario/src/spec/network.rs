//! The nodes and links of a scenario being resolved: names to ids, each link checked.

use std::collections::BTreeMap;
use std::sync::Arc;

use acclab_core::link::CapacityTrace;
use acclab_core::params::MAX_RATE;
use acclab_core::{Limit, Rate};

use super::{fault, Fault, Item, LinkRate, LinkSpec};
use crate::scenario::{CapacityTraceDef, LinkDef, LinkId, NodeId};

#[derive(Default)]
pub(super) struct Topology {
    pub(super) nodes: Vec<String>,
    pub(super) node_ids: BTreeMap<String, NodeId>,
    pub(super) links: Vec<LinkDef>,
    pub(super) link_ids: BTreeMap<String, LinkId>,
    /// The capacity traces read so far, by file: links that name one file share it.
    traces: BTreeMap<String, Arc<CapacityTrace>>,
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

    pub(super) fn add_link(
        &mut self,
        i: usize,
        l: &LinkSpec,
        packet_size: u32,
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
            delay: l.delay,
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
        let text = std::fs::read_to_string(file).map_err(|e| {
            fault(
                item,
                "rate.trace",
                format!("cannot read the capacity trace {file:?}: {e}"),
            )
        })?;
        let t = Arc::new(
            CapacityTrace::parse(&text)
                .map_err(|e| fault(item, "rate.trace", format!("capacity trace {file:?}, {e}")))?,
        );
        self.traces.insert(file.to_string(), t.clone());
        Ok(t)
    }
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
