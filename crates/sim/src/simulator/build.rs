//! Building a simulator: its links, routes, flows' books and fixed events from a scenario.

use acclab_core::config::{QueueConfig, QueueContext};
use acclab_core::queue::droptail::TailDropLedger;
use acclab_core::queue::shared_buffer::{SharedBuffer, SharedPort};
use acclab_core::transport::{Endpoint, EndpointSlot};
use acclab_core::{FlowId, Limit, Reciprocal, Time};

use super::books::{FlowTimes, Ledger};
use super::endpoints::Endpoints;
use super::link::{Discipline, Extra, Held, Link};
use super::observers::{Observers, View};
use super::Simulator;
use crate::events::{Entities, Entity, Event, EventQueue};
use crate::monitor::Monitor;
use crate::pipes::{Pipe, Slab};
use crate::routes::Routes;
use crate::telemetry::IntStore;
use acclab_scenario::Scenario;
use std::sync::Arc;

impl Simulator {
    /// Like [`Simulator::new`], with the endpoints given, each at its [`EndpointSlot`] (flow
    /// f's sender, then its receiver). Live mode's router passes stand-ins here for endpoints
    /// that run elsewhere, behind sockets.
    pub fn with_endpoints(
        scenario: impl Into<Arc<Scenario>>,
        endpoints: Vec<Box<dyn Endpoint>>,
    ) -> Simulator {
        let scenario = scenario.into();
        assert_eq!(
            endpoints.len(),
            EndpointSlot::count(scenario.flows.len()),
            "two endpoints per flow"
        );
        Simulator::build(scenario, Endpoints::given(endpoints))
    }

    pub(super) fn build(scenario: Arc<Scenario>, endpoints: Endpoints) -> Simulator {
        let seed = scenario.seed;
        let classes_read = scenario
            .links
            .iter()
            .any(|l| l.queue.params().needs_flow_classes());
        let flow_classes: std::sync::Arc<[String]> = match classes_read {
            true => scenario.flows.iter().map(|f| f.class.to_string()).collect(),
            false => std::sync::Arc::new([]),
        };
        let pool_of = scenario.shared_buffer_of_node();
        let links: Vec<Link> = scenario
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let pool = pool_of[l.from.0 as usize];
                let eager = Link::departs_at_enqueue(l, i, &scenario, pool.is_some());
                let ctx = || QueueContext {
                    rate: l.rate,
                    seed,
                    name: format!("link:{}", l.name),
                    flow_classes: flow_classes.clone(),
                    packet_size: scenario.packet_size,
                };
                let held = match (&l.queue, pool) {
                    (_, Some(pool)) => Some(Discipline::Shared(
                        SharedPort::new(l.queue.build(&ctx())),
                        pool,
                    )),
                    (QueueConfig::Droptail(_) | QueueConfig::StepEcn(_), None) if eager => None,
                    (QueueConfig::Droptail(p), None) => Some(Discipline::TailDrop(p.queue())),
                    (q, None) => Some(Discipline::Other(q.build(&ctx()))),
                };
                let ledger = match &l.queue {
                    QueueConfig::Droptail(p) => TailDropLedger::new(p.limit),
                    QueueConfig::StepEcn(p) => TailDropLedger::marking(p.limit, p.threshold),
                    _ => TailDropLedger::new(Limit::Unlimited), // not used
                };
                Link {
                    rate: Reciprocal::new(l.rate),
                    delay: l.delay,
                    tail_done: Time::ZERO,
                    queued_for: 0,
                    extra: Extra::of(l, seed),
                    held: held.map(|queue| {
                        Box::new(Held {
                            pushes_out: queue.pushes_out(),
                            queue,
                            transmitting: None,
                        })
                    }),
                    ledger,
                    pipe: Pipe::default(),
                }
            })
            .collect();
        let flows = FlowTimes::of(&scenario);
        let mut route_starts = Vec::with_capacity(scenario.flows.len());
        // A sprayed flow's routes take no entries.
        let mut routes = Routes::with_capacity(
            (0..scenario.flows.len())
                .filter(|&i| !scenario.flows.sprayed(i))
                .map(|i| {
                    let (forward, reverse) = scenario.flows.routes(i);
                    forward.len() + reverse.len() + 2
                })
                .sum(),
        );
        let entities = Entities::new(
            scenario.links.len(),
            EndpointSlot::count(scenario.flows.len()),
        );
        let mut events = EventQueue::new(&entities);
        // Each flow read part by part: a workload's are not made whole (`Flows`).
        for i in 0..scenario.flows.len() {
            let (start, stop) = flows.get(i);
            let (forward, reverse) = scenario.flows.routes(i);
            let (src, dst) = scenario.flows.ends(i);
            // A flow's start and stop are its sender's (the tie rule: `events.rs`).
            let sender = EndpointSlot::sender(FlowId(i as u32)).index();
            events.by(entities.endpoint(sender), Time::ZERO);
            events.schedule(start, Event::FlowStart(i as u32));
            if let Some(stop) = stop {
                events.schedule(stop.max(start), Event::FlowStop(i as u32));
            }
            route_starts.push(match scenario.flows.sprayed(i) {
                false => [
                    routes.push(forward, EndpointSlot::receiver(FlowId(i as u32))),
                    routes.push(reverse, EndpointSlot::sender(FlowId(i as u32))),
                ],
                true => [
                    routes.push_sprayed(
                        &scenario,
                        src,
                        dst,
                        EndpointSlot::receiver(FlowId(i as u32)),
                        2 * i as u64,
                    ),
                    routes.push_sprayed(
                        &scenario,
                        dst,
                        src,
                        EndpointSlot::sender(FlowId(i as u32)),
                        2 * i as u64 + 1,
                    ),
                ],
            });
        }
        let mut ledger = Ledger::new(route_starts);
        for i in 0..scenario.flows.len() {
            if endpoints.lives_throughout(FlowId(i as u32)) {
                ledger.open(i);
            }
        }
        events.by(Entity::RUN, Time::ZERO);
        for (i, e) in scenario.events.iter().enumerate() {
            events.schedule(e.at, Event::Scheduled(i as u32));
        }
        let (from, to) = scenario.output.window;
        events.schedule(from, Event::WindowStart);
        events.schedule(to, Event::WindowEnd);
        events.schedule(Time::ZERO + scenario.output.sample_interval, Event::Sample);
        let view = View {
            links: &links,
            flows: &flows,
            endpoints: &endpoints,
        };
        let monitor = Monitor::new(&scenario, &view);
        let telemetry = IntStore::new(
            (0..scenario.flows.len())
                .map(|i| scenario.flows.scheme_but_size(i).telemetry())
                .collect(),
            scenario.links.len(),
        );
        let pools = scenario
            .shared_buffers
            .iter()
            .map(|b| SharedBuffer::new(&b.params))
            .collect();
        Simulator {
            end: Time(scenario.duration.0),
            scenario,
            now: Time::ZERO,
            events,
            entities,
            links,
            pools,
            slab: Slab::new(),
            flows,
            ledger,
            routes,
            endpoints,
            observers: Observers {
                monitor,
                extra: Vec::new(),
            },
            event_count: 0,
            packet_hops: 0,
            time_went_backwards: false,
            head_drops: Vec::new(),
            telemetry,
            probe: None,
            part: None,
        }
    }
}
