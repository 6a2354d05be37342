//! Scenario files (SPEC §9): TOML in, a validated [`Scenario`] out.
//!
//! The key names are a contract shared with tools outside the project. Parsing happens in two
//! steps: serde reads the file into `Raw*` structs (unknown keys, bad units and wrong types fail
//! here, with the line from toml's spans and the key path from `serde_path_to_error`), then
//! `resolve` expands flow and link groups, checks names, routes and times, and builds the
//! scenario the simulator runs. Every error names the file, the line and the key; nothing is
//! guessed and the run does not start.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::{Bytes, Duration, Rate, Time};
use serde::Deserialize;
use toml::Spanned;

use crate::error::ScenarioError;
use crate::model::{EventAction, EventDef, FlowDef, LinkDef, LinkId, NodeId, OutputDef, Scenario};
use crate::routing;

// ---------------------------------------------------------------------------------------------
// The file as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    duration: Spanned<Duration>,
    seed: Option<u64>,
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    flow: Vec<Spanned<RawFlow>>,
    #[serde(default)]
    event: Vec<Spanned<RawEvent>>,
    #[serde(default)]
    output: RawOutput,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    packet_size: Option<Bytes>,
    ack_size: Option<Bytes>,
    queue: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawLink {
    between: Option<Spanned<[String; 2]>>,
    from: Option<Spanned<String>>,
    to: Option<Spanned<String>>,
    rate: Rate,
    delay: Duration,
    queue: Option<Spanned<toml::Table>>,
    loss: Option<Spanned<f64>>,
    count: Option<Spanned<u32>>,
    first: Option<u32>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    id: Spanned<String>,
    kind: Spanned<String>,
    from: Spanned<String>,
    to: Spanned<String>,
    start: Option<Duration>,
    start_jitter: Option<Duration>,
    stop: Option<Spanned<Duration>>,
    params: Option<Spanned<toml::Table>>,
    class: Option<String>,
    path: Option<Spanned<Vec<String>>>,
    count: Option<Spanned<u32>>,
    first: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at: Spanned<Duration>,
    set_delay: Option<RawSetDelay>,
    set_rate: Option<RawSetRate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetDelay {
    link: Spanned<String>,
    delay: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetRate {
    link: Spanned<String>,
    rate: Rate,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    window: Option<Spanned<[Duration; 2]>>,
    sample_interval: Option<Spanned<Duration>>,
}

// ---------------------------------------------------------------------------------------------

/// Reads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        key: "-".into(),
        message: format!("cannot read the file: {e}"),
    })?;
    parse(&src, &file)
}

/// Parses scenario text; `file` names it in errors.
pub fn parse(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { src, file };
    let de = toml::Deserializer::parse(src).map_err(|e| ctx.toml_error(&e, ""))?;
    let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| {
        // Spanned<T> shows up in serde paths under a private name; readers need the plain key.
        let key = e
            .path()
            .to_string()
            .replace("$__serde_spanned_private_value.", "");
        ctx.toml_error(e.inner(), &key)
    })?;
    resolve(&ctx, raw)
}

struct Ctx<'a> {
    src: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.src.len());
        self.src.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn err(&self, span: Option<std::ops::Range<usize>>, key: &str, msg: String) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: span.map(|s| self.line(s.start)),
            key: key.to_string(),
            message: msg,
        }
    }

    fn at<T>(&self, s: &Spanned<T>, key: &str, msg: String) -> ScenarioError {
        self.err(Some(s.span()), key, msg)
    }

    /// A TOML error at `key`; a syntax error has no key path, so the text of the offending line
    /// (e.g. `[output]` for a duplicate table) names it instead.
    fn toml_error(&self, e: &toml::de::Error, key: &str) -> ScenarioError {
        let line_text = || {
            let at = e.span()?.start.min(self.src.len());
            let start = self.src[..at].rfind('\n').map_or(0, |i| i + 1);
            let text = self.src[start..].lines().next().unwrap_or("").trim();
            (!text.is_empty()).then(|| text.to_string())
        };
        let key = if key.is_empty() || key == "." {
            line_text().unwrap_or_else(|| "-".into())
        } else {
            key.to_string()
        };
        self.err(e.span(), &key, e.message().trim().to_string())
    }
}

/// Replaces the `{i}` placeholder of a group member.
fn subst(s: &str, i: u32) -> String {
    s.replace("{i}", &i.to_string())
}

/// Indices of a group: `count` members numbered from `first` (default 0); one member otherwise.
fn group(count: &Option<Spanned<u32>>, first: Option<u32>) -> std::ops::Range<u32> {
    let first = first.unwrap_or(0);
    match count {
        Some(c) => first..first + *c.get_ref(),
        None => first..first + 1,
    }
}

fn resolve(ctx: &Ctx, raw: RawScenario) -> Result<Scenario, ScenarioError> {
    let duration = *raw.duration.get_ref();
    if duration == Duration::ZERO {
        return Err(ctx.at(
            &raw.duration,
            "duration",
            "must be greater than zero".into(),
        ));
    }
    let packet_size = raw.defaults.packet_size.map_or(1000, |b| b.0);
    let ack_size = raw.defaults.ack_size.map_or(40, |b| b.0);
    if packet_size > u32::MAX as u64 / 2 || ack_size > u32::MAX as u64 / 2 {
        return Err(ctx.err(None, "defaults", "packet sizes must be below 2 GB".into()));
    }
    let default_queue = match &raw.defaults.queue {
        Some(t) => queue_config(ctx, t, "defaults.queue")?,
        None => QueueConfig::default_queue(),
    };

    let mut topo = Topology::default();
    for (n, l) in raw.link.iter().enumerate() {
        resolve_link(ctx, &mut topo, n, l, &default_queue)?;
    }
    let mut flows: Vec<FlowDef> = Vec::new();
    let mut ids = BTreeSet::new();
    let mut router = routing::Router::new(topo.nodes.len(), &topo.links);
    for (n, f) in raw.flow.iter().enumerate() {
        for i in group(&f.get_ref().count, f.get_ref().first) {
            let def = resolve_flow(ctx, &topo, &mut router, n, f, i, duration)?;
            if !ids.insert(def.id.clone()) {
                let key = format!("flow[{n}].id");
                return Err(ctx.at(
                    &f.get_ref().id,
                    &key,
                    format!(
                        "flow id {:?} is used twice (add {{i}} to ids of a group)",
                        def.id
                    ),
                ));
            }
            flows.push(def);
        }
    }
    let events = raw
        .event
        .iter()
        .enumerate()
        .map(|(n, e)| resolve_event(ctx, &topo, n, e, duration))
        .collect::<Result<Vec<_>, _>>()?;
    let output = resolve_output(ctx, &raw.output, duration)?;
    Ok(Scenario {
        name: raw.name,
        duration,
        seed: raw.seed.unwrap_or(1),
        packet_size: packet_size as u32,
        ack_size: ack_size as u32,
        nodes: topo.nodes,
        links: topo.links,
        flows,
        events,
        output,
    })
}

#[derive(Default)]
struct Topology {
    nodes: Vec<String>,
    node_ids: BTreeMap<String, NodeId>,
    links: Vec<LinkDef>,
    link_ids: BTreeMap<String, LinkId>,
}

impl Topology {
    fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.node_ids.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(name.to_string());
        self.node_ids.insert(name.to_string(), id);
        id
    }
}

fn resolve_link(
    ctx: &Ctx,
    topo: &mut Topology,
    n: usize,
    spanned: &Spanned<RawLink>,
    default_queue: &QueueConfig,
) -> Result<(), ScenarioError> {
    let l = spanned.get_ref();
    let key = |k: &str| format!("link[{n}].{k}");
    let ends: Vec<(String, String)> = match (&l.between, &l.from, &l.to) {
        (Some(b), None, None) => {
            let [a, z] = b.get_ref();
            vec![(a.clone(), z.clone()), (z.clone(), a.clone())]
        }
        (None, Some(a), Some(z)) => vec![(a.get_ref().clone(), z.get_ref().clone())],
        _ => {
            return Err(ctx.at(
                spanned,
                &format!("link[{n}]"),
                "give either `between = [a, b]` (both directions) or both `from` and `to`".into(),
            ))
        }
    };
    let loss = match &l.loss {
        Some(p) if !(0.0..1.0).contains(p.get_ref()) => {
            return Err(ctx.at(
                p,
                &key("loss"),
                format!("loss probability {} is not in [0, 1)", p.get_ref()),
            ))
        }
        Some(p) => *p.get_ref(),
        None => 0.0,
    };
    let queue = match &l.queue {
        Some(t) => queue_config(ctx, t, &key("queue"))?,
        None => default_queue.clone(),
    };
    for i in group(&l.count, l.first) {
        for (a, z) in &ends {
            let (a, z) = (subst(a, i), subst(z, i));
            if a.is_empty() || z.is_empty() || a.contains("->") || z.contains("->") {
                return Err(ctx.at(
                    spanned,
                    &key("between"),
                    format!("bad node names {a:?}, {z:?} (non-empty, without \"->\")"),
                ));
            }
            if a == z {
                return Err(ctx.at(spanned, &key("to"), format!("link from {a:?} to itself")));
            }
            let name = format!("{a}->{z}");
            if topo.link_ids.contains_key(&name) {
                return Err(ctx.at(
                    spanned,
                    &key("between"),
                    format!("link {name} is declared twice"),
                ));
            }
            let (from, to) = (topo.node(&a), topo.node(&z));
            topo.link_ids
                .insert(name.clone(), LinkId(topo.links.len() as u32));
            topo.links.push(LinkDef {
                name,
                from,
                to,
                rate: l.rate,
                delay: l.delay,
                queue: queue.clone(),
                loss,
            });
        }
    }
    Ok(())
}

fn resolve_flow(
    ctx: &Ctx,
    topo: &Topology,
    router: &mut routing::Router,
    n: usize,
    spanned: &Spanned<RawFlow>,
    i: u32,
    duration: Duration,
) -> Result<FlowDef, ScenarioError> {
    let f = spanned.get_ref();
    let key = |k: &str| format!("flow[{n}].{k}");
    let id = subst(f.id.get_ref(), i);
    let node = |s: &Spanned<String>, k: &str| -> Result<NodeId, ScenarioError> {
        let name = subst(s.get_ref(), i);
        topo.node_ids.get(&name).copied().ok_or_else(|| {
            ctx.at(
                s,
                &key(k),
                format!("flow {id:?}: unknown node {name:?} (no link touches it)"),
            )
        })
    };
    let src = node(&f.from, "from")?;
    let dst = node(&f.to, "to")?;
    if src == dst {
        return Err(ctx.at(
            &f.to,
            &key("to"),
            format!("flow {id:?} goes from a node to itself"),
        ));
    }
    let scheme = scheme(ctx, f, &key("params"), &id)?;
    let start = Time(f.start.unwrap_or(Duration::ZERO).0);
    if start >= Time(duration.0) {
        return Err(ctx.at(
            spanned,
            &key("start"),
            format!(
                "flow {id:?} starts at {}, at or after the end of the run ({duration})",
                Duration(start.0)
            ),
        ));
    }
    let stop = match &f.stop {
        Some(s) if Time(s.get_ref().0) <= start => {
            return Err(ctx.at(
                s,
                &key("stop"),
                format!(
                    "flow {id:?} stops at {} but starts at {}",
                    s.get_ref(),
                    Duration(start.0)
                ),
            ))
        }
        Some(s) => Some(Time(s.get_ref().0)),
        None => None,
    };
    let (forward, reverse) = match &f.path {
        Some(p) => {
            let names: Vec<String> = p.get_ref().iter().map(|s| subst(s, i)).collect();
            let (src_name, dst_name) = (&topo.nodes[src.0 as usize], &topo.nodes[dst.0 as usize]);
            if names.len() < 2 || (names.first(), names.last()) != (Some(src_name), Some(dst_name))
            {
                return Err(ctx.at(
                    p,
                    &key("path"),
                    format!(
                        "flow {id:?}: the path must start at {src_name:?} and end at {dst_name:?}"
                    ),
                ));
            }
            let mut hops: Vec<&String> = names.iter().collect();
            let fwd = path_links(ctx, topo, &key("path"), p, &hops, &id, "data")?;
            hops.reverse();
            let rev = if scheme.sends_feedback() {
                path_links(
                    ctx,
                    topo,
                    &key("path"),
                    p,
                    &hops,
                    &id,
                    "acknowledgements (reverse path)",
                )?
            } else {
                Vec::new()
            };
            (fwd, rev)
        }
        None => {
            let fwd = router
                .path(src, dst)
                .ok_or_else(|| unroutable(ctx, spanned, &key("to"), &id, topo, src, dst))?;
            let rev = if scheme.sends_feedback() {
                router
                    .path(dst, src)
                    .ok_or_else(|| unroutable(ctx, spanned, &key("from"), &id, topo, dst, src))?
            } else {
                Vec::new()
            };
            (fwd, rev)
        }
    };
    let class = f
        .class
        .as_ref()
        .map_or_else(|| scheme.default_class().to_string(), |c| subst(c, i));
    Ok(FlowDef {
        id,
        class,
        scheme,
        src,
        dst,
        start,
        start_jitter: f.start_jitter.unwrap_or(Duration::ZERO),
        stop,
        forward,
        reverse,
    })
}

/// Reads a tagged parameter table into `T` with `from_kind`, and reports any error at the full
/// key path of the offending parameter (`prefix.key`), on the line of `at`.
fn tagged<T>(
    ctx: &Ctx,
    at: std::ops::Range<usize>,
    prefix: &str,
    kind: &str,
    params: toml::Table,
    from_kind: impl FnOnce(
        &str,
        serde_path_to_error::Deserializer<'_, '_, toml::Value>,
    ) -> Result<T, toml::de::Error>,
) -> Result<T, ScenarioError> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(params), &mut track);
    from_kind(kind, de).map_err(|e| {
        let path = track.path().to_string();
        let key = match path.as_str() {
            "." | "" => prefix.to_string(),
            p => format!("{prefix}.{p}"),
        };
        ctx.err(Some(at), &key, e.message().trim().to_string())
    })
}

/// A `queue = { kind = …, … }` table at `key`, read and validated.
fn queue_config(
    ctx: &Ctx,
    t: &Spanned<toml::Table>,
    key: &str,
) -> Result<QueueConfig, ScenarioError> {
    let mut params = t.get_ref().clone();
    let kind = match params.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(_) => return Err(ctx.at(t, &format!("{key}.kind"), "must be a string".into())),
        None => {
            return Err(ctx.at(
                t,
                &format!("{key}.kind"),
                format!("missing; one of {}", QueueConfig::KINDS.join(", ")),
            ))
        }
    };
    let queue = tagged(ctx, t.span(), key, &kind, params, |k, d| {
        QueueConfig::from_kind(k, d)
    })
    .map_err(|e| match e.message.starts_with("unknown variant") {
        true => ScenarioError {
            key: format!("{key}.kind"),
            ..e
        },
        false => e,
    })?;
    queue.validate().map_err(|e| {
        let e = e.within(key);
        ctx.at(t, &e.key, e.message)
    })?;
    Ok(queue)
}

/// Deserialises `kind` + `params` into the scheme enum, with the key path of any error.
fn scheme(ctx: &Ctx, f: &RawFlow, key: &str, id: &str) -> Result<SchemeConfig, ScenarioError> {
    let params = f
        .params
        .as_ref()
        .map(|p| p.get_ref().clone())
        .unwrap_or_default();
    let at = f.params.as_ref().map_or(f.kind.span(), |p| p.span());
    let kind = f.kind.get_ref();
    if !SchemeConfig::KINDS.contains(&kind.as_str()) {
        return Err(ctx.at(
            &f.kind,
            &key.replace("params", "kind"),
            format!(
                "flow {id:?}: unknown kind {kind:?}, expected one of {}",
                SchemeConfig::KINDS.join(", ")
            ),
        ));
    }
    let scheme = tagged(ctx, at.clone(), key, kind, params, |k, d| {
        SchemeConfig::from_kind(k, d)
    })
    .map_err(|e| ScenarioError {
        message: format!("flow {id:?}: {}", e.message),
        ..e
    })?;
    scheme.validate().map_err(|e| {
        let e = e.within(key);
        ctx.err(Some(at), &e.key, format!("flow {id:?}: {}", e.message))
    })?;
    Ok(scheme)
}

fn unroutable(
    ctx: &Ctx,
    spanned: &Spanned<RawFlow>,
    key: &str,
    id: &str,
    topo: &Topology,
    a: NodeId,
    b: NodeId,
) -> ScenarioError {
    let (a, b) = (&topo.nodes[a.0 as usize], &topo.nodes[b.0 as usize]);
    ctx.at(
        spanned,
        key,
        format!("flow {id:?}: no route from {a:?} to {b:?}"),
    )
}

/// The links along an explicit `path` (already expanded), in the order given.
fn path_links(
    ctx: &Ctx,
    topo: &Topology,
    key: &str,
    p: &Spanned<Vec<String>>,
    names: &[&String],
    id: &str,
    what: &str,
) -> Result<Vec<LinkId>, ScenarioError> {
    names
        .windows(2)
        .map(|w| {
            let name = format!("{}->{}", w[0], w[1]);
            topo.link_ids.get(&name).copied().ok_or_else(|| {
                ctx.at(
                    p,
                    key,
                    format!("flow {id:?}: no link {name} for its {what}"),
                )
            })
        })
        .collect()
}

fn resolve_event(
    ctx: &Ctx,
    topo: &Topology,
    n: usize,
    spanned: &Spanned<RawEvent>,
    duration: Duration,
) -> Result<EventDef, ScenarioError> {
    let e = spanned.get_ref();
    let key = |k: &str| format!("event[{n}].{k}");
    let at = *e.at.get_ref();
    if at > duration {
        return Err(ctx.at(
            &e.at,
            &key("at"),
            format!("{at} is after the end of the run ({duration})"),
        ));
    }
    let link = |s: &Spanned<String>, k: &str| {
        topo.link_ids.get(s.get_ref()).copied().ok_or_else(|| {
            ctx.at(
                s,
                &key(k),
                format!("unknown link {:?} (links are named \"a->b\")", s.get_ref()),
            )
        })
    };
    let action = match (&e.set_delay, &e.set_rate) {
        (Some(d), None) => EventAction::SetDelay {
            link: link(&d.link, "set_delay.link")?,
            delay: d.delay,
        },
        (None, Some(r)) => EventAction::SetRate {
            link: link(&r.link, "set_rate.link")?,
            rate: r.rate,
        },
        _ => {
            return Err(ctx.at(
                spanned,
                &format!("event[{n}]"),
                "give exactly one of `set_delay` or `set_rate`".into(),
            ))
        }
    };
    Ok(EventDef {
        at: Time(at.0),
        action,
    })
}

fn resolve_output(
    ctx: &Ctx,
    o: &RawOutput,
    duration: Duration,
) -> Result<OutputDef, ScenarioError> {
    let window = match &o.window {
        None => (Time(duration.0 / 2), Time(duration.0)),
        Some(w) => {
            let [a, b] = *w.get_ref();
            if a >= b || b > duration {
                return Err(ctx.at(
                    w,
                    "output.window",
                    format!("window [{a}, {b}] must satisfy from < to <= duration ({duration})"),
                ));
            }
            (Time(a.0), Time(b.0))
        }
    };
    let sample_interval = match &o.sample_interval {
        None => Duration::from_millis(100),
        Some(s) if s.get_ref().0 == 0 => {
            return Err(ctx.at(
                s,
                "output.sample_interval",
                "must be greater than zero".into(),
            ))
        }
        Some(s) => *s.get_ref(),
    };
    Ok(OutputDef {
        window,
        sample_interval,
    })
}
