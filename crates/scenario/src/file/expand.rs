//! Expansion: the file as written into a [`ScenarioSpec`] — groups and placeholders expanded,
//! `[topology]` generated, tagged tables read (validation is [`ScenarioSpec::resolve`]'s).

use acclab_core::config::QueueConfig;

use super::fabric::fabric;
use super::origins::{LinkOrigin, Origins};
use super::raw::{RawScenario, RawWorkload};
use super::tables::{group, queue_config, scheme, subst, Finding, MAX_MEMBERS};
use crate::spec::{
    DefaultsSpec, EventSpec, EventSpecAction, FlowSpec, LinkSpec, OutputSpec, RoutingSpec,
    ScenarioSpec, SharedBufferSpec,
};
use crate::spec::{FabricSource, Generated};
use crate::workload::WorkloadSpec;
use acclab_core::queue::shared_buffer::SharedBufferParams;

pub(super) fn expand(raw: RawScenario) -> Result<(ScenarioSpec, Origins), Finding> {
    let default_queue = raw
        .defaults
        .queue
        .map(|t| queue_config(t, "defaults.queue"))
        .transpose()?;
    let mut origins = Origins {
        links: Vec::new(),
        flows: Vec::new(),
        fabric_buffer: false,
        buffers: 0,
    };
    // Bound what the groups expand to before expanding them (`count = 4294967295` would
    // otherwise fill memory while reading the file).
    for (key, count) in raw
        .link
        .iter()
        .enumerate()
        .map(|(n, l)| (format!("link[{n}].count"), l.count))
        .chain(
            raw.flow
                .iter()
                .enumerate()
                .map(|(n, f)| (format!("flow[{n}].count"), f.count)),
        )
    {
        group(count, None, &key)?;
    }
    let mut shared_buffers: Vec<SharedBufferSpec> = raw
        .shared_buffer
        .into_iter()
        .map(|b| SharedBufferSpec {
            nodes: b.nodes,
            params: SharedBufferParams {
                size: b.size,
                alpha: b.alpha.unwrap_or(SharedBufferParams::DEFAULT_ALPHA),
            },
        })
        .collect();
    let (fabric, source) = match raw.topology {
        Some(t) => {
            let table = toml::Table::try_from(&t).expect("a [topology] read from TOML writes back");
            let fabric = fabric(t, &default_queue)?;
            let pool = fabric.pool.map(|p| {
                shared_buffers.push(p);
                origins.fabric_buffer = true;
                shared_buffers.len() - 1
            });
            let source = Generated {
                table,
                links: fabric.links.len(),
                pool,
            };
            (fabric.links, FabricSource(Some(source)))
        }
        None => (Vec::new(), FabricSource::default()),
    };
    origins.buffers = shared_buffers.len();
    // The group at which the members pass the bound is the one named (`flow[3].count`).
    let mut members = fabric.len() as u64;
    let groups = raw
        .link
        .iter()
        .enumerate()
        .map(|(n, l)| {
            let per = if l.between.is_some() { 2 } else { 1 };
            (format!("link[{n}]"), u64::from(l.count.unwrap_or(1)) * per)
        })
        .chain(
            raw.flow
                .iter()
                .enumerate()
                .map(|(n, f)| (format!("flow[{n}]"), u64::from(f.count.unwrap_or(1)))),
        );
    for (table, size) in groups {
        members += size;
        if members > MAX_MEMBERS {
            return Err((
                format!("{table}.count"),
                format!(
                    "with this group the groups expand to {members} links and flows; a scenario may have at most {MAX_MEMBERS}"
                ),
            ));
        }
    }
    let mut links = Vec::with_capacity(fabric.len());
    for (origin, l) in fabric {
        links.push(l);
        origins.links.push(origin);
    }
    for (n, l) in raw.link.into_iter().enumerate() {
        let key = |k: &str| format!("link[{n}].{k}");
        let ends: Vec<(String, String, &str, &str)> = match (l.between, l.from, l.to) {
            (Some(b), None, None) if b.len() != 2 => {
                return Err((
                    key("between"),
                    format!("give exactly two nodes, [a, b], not {}", b.len()),
                ))
            }
            (Some(b), None, None) => {
                let [a, z]: [String; 2] = b.try_into().expect("two nodes, checked above");
                vec![
                    (a.clone(), z.clone(), "between", "between"),
                    (z, a, "between", "between"),
                ]
            }
            (None, Some(a), Some(z)) => vec![(a, z, "from", "to")],
            _ => {
                return Err((
                    format!("link[{n}]"),
                    "give either `between = [a, b]` (both directions) or both `from` and `to`"
                        .into(),
                ))
            }
        };
        let queue = match l.queue {
            Some(t) => queue_config(t, &key("queue"))?,
            None => default_queue
                .clone()
                .unwrap_or_else(QueueConfig::default_queue),
        };
        let between = ends.len() == 2;
        for i in group(l.count, l.first, &key("count"))? {
            for (a, z, ka, kz) in &ends {
                links.push(LinkSpec {
                    from: subst(a, i, &key(ka))?,
                    to: subst(z, i, &key(kz))?,
                    rate: l.rate.clone(),
                    delay: l.delay.clone(),
                    queue: queue.clone(),
                    loss: l.loss.unwrap_or_default(),
                    jitter: l.jitter,
                });
                origins.links.push(LinkOrigin::Table(n, between));
            }
        }
    }
    let mut flows = Vec::new();
    for (n, f) in raw.flow.into_iter().enumerate() {
        let key = |k: &str| format!("flow[{n}].{k}");
        let members = group(f.count, f.first, &key("count"))?;
        let first_id = subst(&f.id, members.start, &key("id"))?;
        let scheme = scheme(
            &f.kind,
            f.params.unwrap_or_default(),
            &key("params"),
            &first_id,
        )?;
        for i in members {
            let path = match &f.path {
                Some(p) => Some(
                    p.iter()
                        .map(|s| subst(s, i, &key("path")))
                        .collect::<Result<_, _>>()?,
                ),
                None => None,
            };
            flows.push(FlowSpec {
                id: subst(&f.id, i, &key("id"))?,
                scheme: scheme.clone(),
                from: subst(&f.from, i, &key("from"))?,
                to: subst(&f.to, i, &key("to"))?,
                start: f.start,
                start_jitter: f.start_jitter,
                stop: f.stop,
                class: match &f.class {
                    Some(c) => Some(subst(c, i, &key("class"))?),
                    None => None,
                },
                path,
            });
            origins.flows.push(n);
        }
    }
    let workloads = raw
        .workload
        .into_iter()
        .enumerate()
        .map(|(n, w)| workload(w, &format!("workload[{n}]")))
        .collect::<Result<_, Finding>>()?;
    let events = raw
        .event
        .into_iter()
        .enumerate()
        .map(|(n, e)| {
            let action = match (e.set_delay, e.set_rate) {
                (Some(d), None) => EventSpecAction::SetDelay {
                    link: d.link,
                    delay: d.delay,
                },
                (None, Some(r)) => EventSpecAction::SetRate {
                    link: r.link,
                    rate: r.rate,
                },
                _ => {
                    return Err((
                        format!("event[{n}]"),
                        "give exactly one of `set_delay` or `set_rate`".into(),
                    ))
                }
            };
            Ok(EventSpec { at: e.at, action })
        })
        .collect::<Result<_, Finding>>()?;
    let window = match raw.output.window {
        None => None,
        Some(w) => match w[..] {
            [a, b] => Some([a, b]),
            _ => {
                return Err((
                    "output.window".into(),
                    format!("give two times, [from, to], not {}", w.len()),
                ))
            }
        },
    };
    let def = ScenarioSpec {
        name: raw.name,
        duration: raw.duration,
        seed: raw.seed,
        defaults: DefaultsSpec {
            packet_size: raw.defaults.packet_size,
            ack_size: raw.defaults.ack_size,
            queue: default_queue,
        },
        routing: RoutingSpec {
            ecmp: raw.routing.ecmp,
        },
        links,
        shared_buffers,
        flows,
        workloads,
        events,
        fabric: source,
        output: OutputSpec {
            window,
            sample_interval: raw.output.sample_interval,
            trace: raw.output.trace,
            plot_links: raw.output.plot_links,
            fct_buckets: raw.output.fct_buckets,
            delay_histograms: raw.output.delay_histograms,
            queueing_percentiles: raw.output.queueing_percentiles,
            flow_summaries: raw.output.flow_summaries,
        },
    };
    Ok((def, origins))
}

/// A `[[workload]]` table (at `key`) as written.
pub(super) fn workload(w: RawWorkload, key: &str) -> Result<WorkloadSpec, Finding> {
    Ok(WorkloadSpec {
        scheme: scheme(
            &w.kind,
            w.params.unwrap_or_default(),
            &format!("{key}.params"),
            &w.id,
        )?,
        id: w.id,
        sizes: w.sizes,
        load: w.load,
        pattern: w.pattern,
        senders: w.senders,
        receiver: w.receiver,
        size: w.size,
        period: w.period,
        file: w.file,
        hosts: w.hosts,
        start: w.start,
        stop: w.stop,
    })
}
