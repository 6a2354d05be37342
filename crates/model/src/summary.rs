//! A model run's summary, in the shape every tier's is (`acclab_results::summary`):
//! `mode = "model"`; `events` counts integration steps; counters of packets are the fluid's
//! volumes, rounded. Its `flows.csv` and `links.csv` have the simulator's columns (windows in
//! bytes, queues in packets — here fractional, the fluid's): see `Model::names`.

use acclab_results::summary::{jain, Fairness, FlowSummary, LinkSummary, Summary, WindowSummary};

use crate::integrator::{window_of, Model};

/// The summary of a finished model run (`wall_time_s` of the integration).
pub fn summary(m: &Model, wall_time_s: f64) -> Summary {
    let sc = m.sc;
    let packet = m.net.packet_size;
    let bits = 8.0 * packet;
    let (from, to) = (
        sc.output.window.0.as_secs_f64(),
        sc.output.window.1.as_secs_f64(),
    );
    let mut active = Vec::new();
    // Every flow and link from the state that stands for it (classes.rs).
    let flows = m
        .net
        .flows
        .iter()
        .enumerate()
        .zip(&sc.flows)
        .map(|((i, member), def)| {
            let f = &m.net.flows[m.rep(i)];
            let t = &m.flow_totals[m.rep(i)];
            let mean = |area: f64| (t.active_in_window > 0.0).then(|| area / t.active_in_window);
            let throughput = mean(t.delivered_in_window * bits).unwrap_or(0.0);
            if t.active_in_window > 0.0 {
                active.push(throughput);
            }
            let windowed = window_of(&f.source).is_some();
            FlowSummary {
                id: member.id.clone(),
                kind: member.kind.into(),
                src: sc.nodes[def.src.0 as usize].as_str().into(),
                dst: sc.nodes[def.dst.0 as usize].as_str().into(),
                throughput_bps: throughput,
                // A fluid is delivered as it arrives: no holes, no duplicates.
                received_bps: throughput,
                sent_bytes: (t.sent * packet).round() as u64,
                delivered_bytes: (t.delivered * packet).round() as u64,
                lost_packets: t.lost.round() as u64,
                mean_rtt_s: if windowed { mean(t.rtt_area) } else { None },
                mean_cwnd_bytes: if windowed {
                    mean(t.cwnd_area * packet)
                } else {
                    None
                },
                mean_accumulation_bytes: crate::integrator::accumulation_of(&f.source)
                    .and(mean(t.accumulation_area * packet)),
                base_rtt_s: match &f.source {
                    crate::network::Source::Vegas(v) => Some(v.base_rtt),
                    _ => None,
                },
                retransmits: 0,
                retransmits_in_window: 0,
                retransmits_in_avoidance: 0,
                timeouts: 0,
                active_in_window_s: t.active_in_window,
                completed_s: None,
                one_way_delay: None,
                theory: None,
                model: None,
            }
        })
        .collect();
    let span = (to - from).max(f64::MIN_POSITIVE);
    let links = sc
        .links
        .iter()
        .enumerate()
        .map(|(l, def)| (&m.link_totals[m.link_rep(l)], def))
        .map(|(t, def)| LinkSummary {
            id: def.name.clone(),
            rate_bps: def.rate.bps(),
            utilization: t.busy_in_window / span,
            mean_queue_pkts: t.queue_area_in_window / span,
            max_queue_pkts: t.max_queue_in_window.ceil() as u64,
            drops: t.dropped.round() as u64,
            marks: t.marked.round() as u64,
            drops_in_window: t.dropped_in_window.round() as u64,
            marks_in_window: t.marked_in_window.round() as u64,
            random_losses: 0,
            queueing_delay: None,
            transmitted_packets: t.served.round() as u64,
            theory: None,
            model: None,
        })
        .collect();
    Summary {
        scenario: sc.name.clone(),
        mode: "model".into(),
        seed: sc.seed,
        sim_time_s: m.now(),
        wall_time_s,
        events: m.steps,
        packet_hops: 0,
        window: WindowSummary {
            from_s: from,
            to_s: to,
        },
        flows,
        unlisted_flows: 0,
        links,
        shared_buffers: Vec::new(),
        fairness: Fairness {
            jain: jain(&active),
            weighted_max_min: None,
        },
        theory: None,
        live: None,
        fct: None,
        provenance: None,
    }
}
