//! [`ScenarioSpec::resolve`]: the one place a scenario is checked and turned into the
//! [`Scenario`] the tiers run.

use std::collections::BTreeSet;

use acclab_core::{Bytes, Duration, Time};

use crate::routing;
use crate::scenario::{
    Capture, EventAction, EventDef, LinkId, OutputDef, Scenario, SharedBufferDef, TraceDef,
    TraceFormat,
};

use super::flows::{resolve_flow, workload_hosts, Route};
use super::network::{check_link_rate, Topology};
use super::{
    fault, EventSpec, EventSpecAction, Fault, FlowSpec, Item, OutputSpec, ScenarioSpec, TraceSpec,
};
use super::{
    DEFAULT_ACK_SIZE, DEFAULT_FCT_BUCKETS, DEFAULT_PACKET_SIZE, DEFAULT_SAMPLE_INTERVAL,
    DEFAULT_SEED, MAX_FCT_BUCKETS, MAX_SEED, MIN_SAMPLE_INTERVAL,
};

impl ScenarioSpec {
    /// Checks the scenario and builds the model: names become ids, routes are computed, defaults
    /// are filled in, every parameter is validated.
    pub fn resolve(&self) -> Result<Scenario, Fault> {
        let duration = self.duration;
        if duration == Duration::ZERO {
            return Err(fault(Item::Top, "duration", "must be greater than zero"));
        }
        if let Some(seed) = self.seed.filter(|&s| s > MAX_SEED) {
            return Err(fault(
                Item::Top,
                "seed",
                format!("must be in [0, {MAX_SEED}] (2^63 - 1), not {seed}"),
            ));
        }
        let size = |b: Option<Bytes>, default: u64, key: &str| {
            let b = b.map_or(default, |b| b.0);
            if b > u32::MAX as u64 / 2 {
                return Err(fault(Item::Top, key, "packet sizes must be below 2 GB"));
            }
            Ok(b as u32)
        };
        let packet_size = size(
            self.defaults.packet_size,
            DEFAULT_PACKET_SIZE,
            "defaults.packet_size",
        )?;
        let ack_size = size(
            self.defaults.ack_size,
            DEFAULT_ACK_SIZE,
            "defaults.ack_size",
        )?;
        if let Some(q) = &self.defaults.queue {
            q.validate().map_err(|e| {
                let e = e.within("defaults.queue");
                fault(Item::Top, &e.key, e.message)
            })?;
        }

        let mut topo = Topology::default();
        for (i, l) in self.links.iter().enumerate() {
            topo.add_link(i, l, packet_size, duration)?;
        }
        let shared_buffers = self.resolve_shared_buffers(&topo, packet_size)?;
        let mut router = routing::Router::new(topo.nodes.len(), &topo.links);
        let mut ids = BTreeSet::new();
        let mut written = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            if !ids.insert(f.id.as_str()) {
                return Err(fault(
                    Item::Flow(i),
                    "id",
                    format!(
                        "flow id {:?} is used twice (add {{i}} to ids of a group)",
                        f.id
                    ),
                ));
            }
            let route = Route {
                ecmp: self.routing.ecmp,
                seed: self.seed.unwrap_or(DEFAULT_SEED),
                flow: i as u64,
            };
            written.push(resolve_flow(&topo, &mut router, route, i, f, duration)?);
        }
        let mut flows = crate::Flows::from(written);
        let seed = self.seed.unwrap_or(DEFAULT_SEED);
        for (n, w) in self.workloads.iter().enumerate() {
            let key = |k: &str| format!("workload[{n}].{k}");
            let hosts = workload_hosts(&topo, w).map_err(|(k, m)| fault(Item::Top, &key(k), m))?;
            let arrivals = w
                .generate(seed, &hosts, duration)
                .map_err(|(k, m)| fault(Item::Top, &key(k), m))?;
            let of = arrivals.len();
            for a in arrivals {
                if ids.contains(a.id.as_str()) {
                    return Err(fault(
                        Item::Top,
                        &key("id"),
                        format!("its flow id {:?} is also a [[flow]]'s", a.id),
                    ));
                }
                let f = FlowSpec {
                    start: Some(a.start),
                    ..FlowSpec::new(&a.id, a.scheme, &a.from, &a.to)
                };
                let route = Route {
                    ecmp: self.routing.ecmp,
                    seed,
                    flow: flows.len() as u64,
                };
                let i = flows.len();
                let flow = resolve_flow(&topo, &mut router, route, i, &f, duration)
                    .map_err(|e| fault(Item::Top, &key(&e.key), e.message))?;
                flows
                    .draw(n, &w.id, of, flow)
                    .map_err(|m| fault(Item::Top, &format!("workload[{n}]"), m))?;
            }
        }
        flows.shrink_to_fit();
        let mut events = self
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| resolve_event(&topo, i, e, duration))
            .collect::<Result<Vec<_>, _>>()?;
        // The delay traces' changes follow the events written (whose indices errors name).
        events.append(&mut topo.delay_events);
        let mut output = resolve_output(&self.output, duration, !self.workloads.is_empty())?;
        if !self.workloads.is_empty() && self.output.flow_summaries != Some(true) {
            // A workload's flows come after those written.
            output.summary_flows = Some(self.flows.len());
        }
        if let Some(t) = &self.output.trace {
            output.trace = Some(resolve_trace(&topo, &self.flows, t)?);
        }
        output.plot_links = resolve_links(&topo, "output.plot_links", &self.output.plot_links)?;
        Ok(Scenario {
            name: self.name.clone(),
            duration,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            packet_size,
            ack_size,
            nodes: topo.nodes,
            links: topo.links,
            shared_buffers,
            flows,
            events,
            output,
            controllers: Default::default(),
        })
    }
}

impl ScenarioSpec {
    /// The `[[shared_buffer]]`s: one pool per node named, each node a known one with links
    /// leaving it, named once.
    fn resolve_shared_buffers(
        &self,
        topo: &Topology,
        packet_size: u32,
    ) -> Result<Vec<SharedBufferDef>, Fault> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut has_links = vec![false; topo.nodes.len()];
        for l in &topo.links {
            has_links[l.from.0 as usize] = true;
        }
        for (i, b) in self.shared_buffers.iter().enumerate() {
            let item = Item::SharedBuffer(i);
            b.params
                .validate(u64::from(packet_size))
                .map_err(|e| fault(item, &e.key, e.message))?;
            if b.nodes.is_empty() {
                return Err(fault(item, "nodes", "name the switches that have the pool"));
            }
            for (n, name) in b.nodes.iter().enumerate() {
                let key = format!("nodes[{n}]");
                let Some(&node) = topo.node_ids.get(name) else {
                    return Err(fault(item, &key, format!("unknown node {name:?}")));
                };
                if !has_links[node.0 as usize] {
                    return Err(fault(
                        item,
                        &key,
                        format!(
                            "node {name:?} has no links leaving it, so no queues to share a buffer"
                        ),
                    ));
                }
                if !seen.insert(node) {
                    return Err(fault(
                        item,
                        &key,
                        format!("node {name:?} already has a shared buffer"),
                    ));
                }
                out.push(SharedBufferDef {
                    node,
                    params: b.params.clone(),
                });
            }
        }
        Ok(out)
    }
}

fn resolve_event(
    topo: &Topology,
    i: usize,
    e: &EventSpec,
    duration: Duration,
) -> Result<EventDef, Fault> {
    let item = Item::Event(i);
    if e.at > duration {
        return Err(fault(
            item,
            "at",
            format!("{} is after the end of the run ({duration})", e.at),
        ));
    }
    let link = |name: &str, key: &str| {
        topo.link_ids.get(name).copied().ok_or_else(|| {
            fault(
                item,
                key,
                format!("unknown link {name:?} (links are named \"a->b\")"),
            )
        })
    };
    let action = match &e.action {
        EventSpecAction::SetDelay { link: l, delay } => {
            let id = link(l, "set_delay.link")?;
            if let Some(file) = &topo.links[id.0 as usize].delay_trace {
                return Err(fault(
                    item,
                    "set_delay.link",
                    format!(
                        "link {l} follows the delay trace {file:?}: an event cannot set its delay"
                    ),
                ));
            }
            EventAction::SetDelay {
                link: id,
                delay: *delay,
            }
        }
        EventSpecAction::SetRate { link: l, rate } => {
            check_link_rate(item, "set_rate.rate", *rate)?;
            let id = link(l, "set_rate.link")?;
            if let Some(c) = &topo.links[id.0 as usize].capacity {
                return Err(fault(
                    item,
                    "set_rate.link",
                    format!(
                        "link {l} follows the capacity trace {:?}: an event cannot set its rate",
                        c.file
                    ),
                ));
            }
            EventAction::SetRate {
                link: id,
                rate: *rate,
            }
        }
    };
    Ok(EventDef {
        at: Time(e.at.0),
        action,
    })
}

fn resolve_output(o: &OutputSpec, duration: Duration, workloads: bool) -> Result<OutputDef, Fault> {
    let window = match o.window {
        None => (Time(duration.0 / 2), Time(duration.0)),
        Some([a, b]) if a >= b || b > duration => {
            return Err(fault(
                Item::Top,
                "output.window",
                format!("window [{a}, {b}] must satisfy from < to <= duration ({duration})"),
            ))
        }
        Some([a, b]) => (Time(a.0), Time(b.0)),
    };
    let sample_interval = match o.sample_interval {
        None => DEFAULT_SAMPLE_INTERVAL,
        Some(s) if s < MIN_SAMPLE_INTERVAL => {
            return Err(fault(
                Item::Top,
                "output.sample_interval",
                format!(
                    "must be at least {MIN_SAMPLE_INTERVAL} (10,000 rows per flow and link per simulated second), not {s}; for finer detail use [output.trace]"
                ),
            ))
        }
        Some(s) => s,
    };
    let fct_buckets = match &o.fct_buckets {
        None => DEFAULT_FCT_BUCKETS.to_vec(),
        Some(edges) => {
            let key = "output.fct_buckets";
            if edges.len() > MAX_FCT_BUCKETS {
                return Err(fault(
                    Item::Top,
                    key,
                    format!("at most {MAX_FCT_BUCKETS} edges, not {}", edges.len()),
                ));
            }
            if let Some(w) = edges.windows(2).find(|w| w[0] >= w[1]) {
                return Err(fault(
                    Item::Top,
                    key,
                    format!("edges must increase: {} B then {} B", w[0].0, w[1].0),
                ));
            }
            if edges.first().is_some_and(|b| b.0 == 0) {
                return Err(fault(
                    Item::Top,
                    key,
                    "an edge of 0 B leaves an empty bucket",
                ));
            }
            edges.iter().map(|b| b.0).collect()
        }
    };
    Ok(OutputDef {
        window,
        sample_interval,
        trace: None,
        plot_links: vec![],
        fct_buckets,
        delay_histograms: o.delay_histograms.unwrap_or(!workloads),
        queueing_percentiles: o.queueing_percentiles.unwrap_or(true),
        summary_flows: None,
    })
}

/// Link names at `key` (a list) as link ids, naming the entry that is not a link.
fn resolve_links(topo: &Topology, key: &str, names: &[String]) -> Result<Vec<LinkId>, Fault> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            topo.link_ids.get(name).copied().ok_or_else(|| {
                fault(
                    Item::Top,
                    &format!("{key}[{i}]"),
                    format!("unknown link {name:?} (links are named \"a->b\")"),
                )
            })
        })
        .collect()
}

fn resolve_trace(topo: &Topology, flows: &[FlowSpec], t: &TraceSpec) -> Result<TraceDef, Fault> {
    if t.links.is_empty() && t.flows.is_empty() {
        return Err(fault(
            Item::Top,
            "output.trace",
            "name the links (links = [\"r1->r2\"]) or the flows (flows = [\"f0\"]) to trace",
        ));
    }
    let links = resolve_links(topo, "output.trace.links", &t.links)?;
    let flows = t
        .flows
        .iter()
        .enumerate()
        .map(|(i, id)| {
            flows
                .iter()
                .position(|f| &f.id == id)
                .map(|f| f as u32)
                .ok_or_else(|| {
                    fault(
                        Item::Top,
                        &format!("output.trace.flows[{i}]"),
                        format!("unknown flow {id:?}"),
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    if t.format == TraceFormat::Csv && t.capture != Capture::Wire {
        return Err(fault(
            Item::Top,
            "output.trace.capture",
            "capture points are a pcap trace's: a CSV trace lists every event (enqueue, dequeue, drop, mark) by name",
        ));
    }
    Ok(TraceDef {
        links,
        flows,
        format: t.format,
        capture: t.capture,
    })
}
