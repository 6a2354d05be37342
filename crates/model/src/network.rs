//! A scenario as the model sees it: links with capacities (packets per second), buffers and a
//! fluid law each; flows with their hops and the delays between every hop and the source.
//!
//! Units: the model counts data in packets of the scenario's `packet_size` (a CBR flow's own
//! packet size is converted), time in seconds.
//!
//! Delays (all propagation plus the transmission time of one packet, as
//! `acclab_theory::equilibrium::propagation_delay` counts them, so that d here is the theory's):
//! - a flow's fluid leaves the source straight into its first hop's queue;
//! - what hop k serves reaches hop k+1 `hop_delay[k]` later, the receiver after the last one;
//! - what happened at hop k's queue at time s reaches the source at s + `back[k]`: the rest of
//!   the forward path, then the reverse path (000 eq. (1)'s time shifts, plus the way back).
//!
//! A flow starts when the packet run's does for the same seed (its `start_jitter` drawn from
//! the same stream), so the two trajectories can be set side by side.
//!
//! The domain: every flow's scheme and every queue its traffic meets must have a law here;
//! anything else is listed with the reason (`Outside`).

use acclab_core::config::{AvqMode, BaseRttParam, PerUnit, QueueConfig, SchemeConfig};
use acclab_core::Limit;
use acclab_scenario::{EventAction, FlowDef, LinkDef, Scenario};

/// What a queue does in the model (its state lives in the integrator).
#[derive(Clone, Debug, PartialEq)]
pub enum LinkLaw {
    /// A FIFO with a buffer: drops only when full (droptail, priority).
    Fifo,
    /// RED's averaged queue and early drop or mark probability (red.rs).
    Red(crate::red::Red),
    /// REM's price and exponential marking (rem.rs).
    Rem(crate::rem::Rem),
    /// AVQ's virtual queue and capacity; AVD's virtual delay (avq.rs).
    Avq(crate::avq::Avq),
}

/// One unidirectional link.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub name: String,
    /// Capacity, packets per second.
    pub capacity: f64,
    /// Data buffer, packets (infinite for `inf`).
    pub buffer: f64,
    /// Whether Monaco's out-of-band and reverse packets skip the data queue here.
    pub priority: bool,
    pub law: LinkLaw,
}

/// What drives a flow's sending rate.
#[derive(Debug)]
pub enum Source {
    /// Monaco / ACC (acc.rs).
    Acc(crate::acc::AccSource),
    /// Vegas or Vegas+REM (vegas.rs).
    Vegas(crate::vegas::VegasSource),
    /// Reno over any queue (reno.rs).
    Reno(crate::reno::RenoSource),
    /// A constant bit rate with its schedule (cbr.rs).
    Cbr(crate::cbr::CbrSource),
}

/// One flow.
#[derive(Debug)]
pub struct Flow {
    pub id: String,
    pub kind: &'static str,
    pub source: Source,
    /// Whether its packets are ECN-capable (a marking queue marks rather than drops them).
    pub ecn: bool,
    pub start: f64,
    pub stop: f64,
    /// Forward links (indices into `Network::links`).
    pub hops: Vec<usize>,
    /// Propagation + transmission delay of each forward link, s.
    pub hop_delay: Vec<f64>,
    /// From each forward link's queue back to the source, s.
    pub back: Vec<f64>,
    /// Reverse links and, for each, the delay from its queue back to the source.
    pub reverse: Vec<(usize, f64)>,
    /// Round-trip propagation delay d, s.
    pub prop_delay: f64,
    /// The flow's packet size in model packets (a CBR flow's own size / the data packet size).
    pub packet_scale: f64,
}

/// A scenario in the model's terms.
#[derive(Debug)]
pub struct Network {
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    /// The data packet size, bytes.
    pub packet_size: f64,
    /// Scheduled changes, in time order: (time s, change).
    pub events: Vec<(f64, Change)>,
}

/// A scheduled change the model follows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change {
    /// A link's capacity, packets per second.
    Rate { link: usize, capacity: f64 },
    /// A link's propagation delay, s.
    Delay { link: usize, delay: f64 },
}

/// Parts of a scenario outside the model's domain: (flow or link, why).
#[derive(Clone, Debug, PartialEq)]
pub struct Outside(pub Vec<(String, String)>);

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the scenario is outside the model tier's domain:")?;
        for (what, why) in &self.0 {
            write!(f, "\n  {what}: {why}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Outside {}

/// A buffer limit in packets of `packet` bytes.
pub fn packets(limit: Limit, packet: f64) -> f64 {
    match limit {
        Limit::Packets(n) => n as f64,
        Limit::Bytes(b) => b as f64 / packet,
        Limit::Unlimited => f64::INFINITY,
    }
}

fn link_law(def: &LinkDef, packet: f64) -> Result<LinkLaw, String> {
    Ok(match &def.queue {
        QueueConfig::Droptail(_) | QueueConfig::Priority(_) => LinkLaw::Fifo,
        QueueConfig::Red(p) => LinkLaw::Red(crate::red::Red::new(
            p,
            packets(p.min_th, packet),
            packets(p.max_th, packet),
        )),
        QueueConfig::Rem(p) => LinkLaw::Rem(crate::rem::Rem::new(p)),
        QueueConfig::Avq(p) => LinkLaw::Avq(crate::avq::Avq::new(
            p,
            packets(p.limit, packet),
            def.rate.as_f64() / 8.0 / packet,
        )),
        other => {
            return Err(format!(
                "queue {} has no fluid law in the model tier (it has droptail, priority, red, rem and avq)",
                other.kind()
            ))
        }
    })
}

/// The law of flow `f`'s source; `bottleneck`: its path's slowest capacity, packets per second.
fn source(f: &FlowDef, packet: f64, bottleneck: f64) -> Result<(Source, bool), String> {
    if f.spray {
        return Err("its packets are sprayed over many paths (ecmp = \"packet\"); the model tier routes each flow over one".into());
    }
    Ok(match (&f.scheme, f.scheme.vegas()) {
        (SchemeConfig::Monaco(p), _) => (Source::Acc(crate::acc::AccSource::new(p, packet)), false),
        (_, Some(p)) => {
            let rem = matches!(f.scheme, SchemeConfig::VegasRem(_));
            if p.size.is_some() {
                return Err("a finite transfer has no fluid law in the model tier".into());
            }
            let base = match p.base_rtt {
                BaseRttParam::Fixed(d) => Some(d.as_secs_f64()),
                BaseRttParam::Min => None,
            };
            let per = match p.per {
                PerUnit::Rtt => None,
                PerUnit::Time(u) => Some(u.as_secs_f64()),
            };
            // The packet-level source's φ (its default included).
            let phi = p.controller(packet as u64, rem).marks;
            (
                Source::Vegas(
                    crate::vegas::VegasSource::new(
                        p.alpha,
                        p.beta,
                        p.gamma,
                        per,
                        base,
                        phi,
                        p.initial_window as f64,
                    )
                    .on_path_of(bottleneck),
                ),
                rem,
            )
        }
        (SchemeConfig::Reno(p), _) => {
            if p.size.is_some() {
                return Err("a finite transfer has no fluid law in the model tier".into());
            }
            (
                Source::Reno(crate::reno::RenoSource::new(p.initial_window as f64)),
                p.ecn,
            )
        }
        (SchemeConfig::Cbr(p), _) => (Source::Cbr(crate::cbr::CbrSource::new(p, packet)), false),
        (other, _) => {
            return Err(format!(
            "{} has no fluid law in the model tier (it has monaco, vegas, vegas-rem, reno and cbr)",
            other.kind()
        ))
        }
    })
}

/// Propagation plus transmission time of a `size`-byte packet on `l`, s.
fn hop_time(l: &LinkDef, size: u32) -> f64 {
    (l.delay + l.rate.tx_time(size as u64)).as_secs_f64()
}

impl Network {
    /// The model of `sc`, or every part of it outside the domain.
    pub fn of(sc: &Scenario) -> Result<Network, Outside> {
        let packet = sc.packet_size as f64;
        let mut outside = Vec::new();
        for b in &sc.shared_buffers {
            outside.push((
                format!("node {}", sc.nodes[b.node.0 as usize]),
                "a shared buffer's dynamic threshold has no fluid law in the model tier".into(),
            ));
        }
        let mut links = Vec::with_capacity(sc.links.len());
        for def in &sc.links {
            let law = link_law(def, packet);
            if let Err(why) = &law {
                // Only a link some flow's data cross matters.
                if sc.flows.iter().any(|f| {
                    f.forward
                        .iter()
                        .any(|l| sc.links[l.0 as usize].name == def.name)
                }) {
                    outside.push((format!("link {}", def.name), why.clone()));
                }
            }
            if !def.loss.is_none() {
                outside.push((
                    format!("link {}", def.name),
                    "random loss (`loss`) has no fluid law in the model tier".into(),
                ));
            }
            if let Some(c) = &def.capacity {
                outside.push((
                    format!("link {}", def.name),
                    format!(
                        "a capacity that follows a trace ({:?}) has no fluid law in the model tier (its mean is {})",
                        c.file, def.rate
                    ),
                ));
            }
            if def.delay_trace.is_some() {
                outside.push((
                    format!("link {}", def.name),
                    "a delay that follows a trace has no fluid law in the model tier".into(),
                ));
            }
            if def.jitter.is_some() {
                outside.push((
                    format!("link {}", def.name),
                    "delay variation (`jitter`) has no fluid law in the model tier".into(),
                ));
            }
            let limits = def.queue.limits();
            links.push(Link {
                name: def.name.clone(),
                capacity: def.rate.as_f64() / 8.0 / packet,
                buffer: limits
                    .first()
                    .map_or(f64::INFINITY, |&l| packets(l, packet)),
                priority: def.queue.params().priority_band(),
                law: law.unwrap_or(LinkLaw::Fifo),
            });
        }
        let mut flows = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let bottleneck = f
                .forward
                .iter()
                .map(|l| sc.links[l.0 as usize].rate.as_f64() / 8.0 / packet)
                .fold(f64::INFINITY, f64::min);
            let (src, ecn) = match source(&f, packet, bottleneck) {
                Ok(s) => s,
                Err(why) => {
                    outside.push((format!("flow {}", f.id), why));
                    continue;
                }
            };
            let size = match &f.scheme {
                SchemeConfig::Cbr(p) => p.packet_size.map_or(sc.packet_size, |b| b.0 as u32),
                _ => sc.packet_size,
            };
            let hops: Vec<usize> = f.forward.iter().map(|l| l.0 as usize).collect();
            let hop_delay: Vec<f64> = hops.iter().map(|&l| hop_time(&sc.links[l], size)).collect();
            let reverse_delay: Vec<f64> = f
                .reverse
                .iter()
                .map(|l| hop_time(&sc.links[l.0 as usize], sc.ack_size))
                .collect();
            let rev_total: f64 = reverse_delay.iter().sum();
            let mut back = vec![0.0; hops.len()];
            let mut acc = rev_total;
            for k in (0..hops.len()).rev() {
                acc += hop_delay[k];
                back[k] = acc;
            }
            let mut reverse = Vec::with_capacity(f.reverse.len());
            let mut acc = rev_total;
            for (l, dl) in f.reverse.iter().zip(&reverse_delay) {
                reverse.push((l.0 as usize, acc));
                acc -= dl;
            }
            let prop_delay = hop_delay.iter().sum::<f64>() + rev_total;
            flows.push(Flow {
                id: f.id.clone(),
                kind: f.scheme.kind(),
                source: src,
                ecn,
                // The packet run's start for this seed, its random jitter included.
                start: sc.flow_times(i).0.as_secs_f64(),
                stop: f.stop.map_or(f64::INFINITY, |s| s.as_secs_f64()),
                hops,
                hop_delay,
                back,
                reverse,
                prop_delay,
                packet_scale: size as f64 / packet,
            });
        }
        if !outside.is_empty() {
            return Err(Outside(outside));
        }
        let events = sc
            .events
            .iter()
            .map(|e| {
                let at = e.at.as_secs_f64();
                match e.action {
                    EventAction::SetRate { link, rate } => (
                        at,
                        Change::Rate {
                            link: link.0 as usize,
                            capacity: rate.as_f64() / 8.0 / packet,
                        },
                    ),
                    EventAction::SetDelay { link, delay } => (
                        at,
                        Change::Delay {
                            link: link.0 as usize,
                            delay: delay.as_secs_f64(),
                        },
                    ),
                }
            })
            .collect();
        Ok(Network {
            links,
            flows,
            packet_size: packet,
            events,
        })
    }

    /// Recomputes the delays of every flow crossing `link` after its propagation delay changed
    /// by `delta` seconds.
    pub fn shift_delay(&mut self, link: usize, delta: f64) {
        for f in &mut self.flows {
            for (k, &l) in f.hops.iter().enumerate() {
                if l == link {
                    f.hop_delay[k] += delta;
                    for b in &mut f.back[..=k] {
                        *b += delta;
                    }
                    f.prop_delay += delta;
                }
            }
            let on_reverse = f.reverse.iter().position(|&(l, _)| l == link);
            if let Some(m) = on_reverse {
                for b in &mut f.back {
                    *b += delta;
                }
                for (_, b) in &mut f.reverse[..=m] {
                    *b += delta;
                }
                f.prop_delay += delta;
            }
        }
    }

    /// The links that can never hold a queue, so that the integrator may treat them as pure
    /// delay: a FIFO that is no flow's first hop (a source's rate is not bounded by a link) and
    /// whose feeding links (the hops just before it on every path through it) have capacities
    /// summing to at most its own, none of them changed by a scheduled event. What reaches it
    /// from one feeding link must also arrive after one delay (the same packet size), so that it
    /// is that link's output at one past instant, at most that link's capacity — then the
    /// arrivals never exceed the service and the backlog stays zero (an egress access link
    /// behind a slower bottleneck is the common case).
    pub fn cannot_queue(&self) -> Vec<bool> {
        let n = self.links.len();
        let mut ok: Vec<bool> = self
            .links
            .iter()
            .map(|l| matches!(l.law, LinkLaw::Fifo))
            .collect();
        let mut rate_changes = vec![false; n];
        for (_, change) in &self.events {
            if let Change::Rate { link, .. } = change {
                rate_changes[*link] = true;
                ok[*link] = false;
            }
        }
        // Per link, its feeding links with the delay from each.
        let mut feeders: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        let mut carried = vec![false; n];
        for f in &self.flows {
            for (k, &l) in f.hops.iter().enumerate() {
                carried[l] = true;
                if k == 0 {
                    ok[l] = false;
                    continue;
                }
                let (u, d) = (f.hops[k - 1], f.hop_delay[k - 1]);
                match feeders[l].iter().find(|(v, _)| *v == u) {
                    Some(&(_, d0)) if d0 != d => ok[l] = false,
                    Some(_) => {}
                    None => feeders[l].push((u, d)),
                }
            }
        }
        for l in 0..n {
            if !ok[l] || !carried[l] {
                ok[l] = false;
                continue;
            }
            let fed: f64 = feeders[l]
                .iter()
                .map(|&(u, _)| self.links[u].capacity)
                .sum();
            ok[l] =
                fed <= self.links[l].capacity && feeders[l].iter().all(|&(u, _)| !rate_changes[u]);
        }
        ok
    }

    /// The longest delay any flow reads its history at, now or after a scheduled delay change.
    pub fn longest_delay(&self, sc: &Scenario) -> f64 {
        let mut extra = vec![0.0f64; self.links.len()];
        for (l, def) in sc.links.iter().enumerate() {
            for e in &sc.events {
                if let EventAction::SetDelay { link, delay } = e.action {
                    if link.0 as usize == l {
                        extra[l] = extra[l].max(delay.as_secs_f64() - def.delay.as_secs_f64());
                    }
                }
            }
        }
        self.flows
            .iter()
            .map(|f| {
                f.prop_delay
                    + f.hops
                        .iter()
                        .chain(f.reverse.iter().map(|(l, _)| l))
                        .map(|&l| extra[l])
                        .sum::<f64>()
            })
            .fold(0.0, f64::max)
    }
}

/// Whether an AVQ link is in AVD (`delay`) mode.
pub fn is_avd(law: &LinkLaw) -> bool {
    matches!(law, LinkLaw::Avq(a) if a.mode == AvqMode::Delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dumbbell of `templates::dumbbell` (access links 10× the bottleneck) with `extra`
    /// appended, and which of its links cannot queue, by name.
    fn pure(extra: &str, egress_rate: &str) -> Vec<String> {
        let text = acclab_scenario::templates::dumbbell("reno", 2, 100, 50, 10).replace(
            "between = [\"r2\", \"d{i}\"]\nrate = \"1000Mbps\"",
            &format!("between = [\"r2\", \"d{{i}}\"]\nrate = \"{egress_rate}\""),
        );
        let sc = acclab_scenario::parse(&format!("{text}{extra}"), "t.toml").unwrap();
        let net = Network::of(&sc).unwrap();
        let can = net.cannot_queue();
        (0..net.links.len())
            .filter(|&l| can[l])
            .map(|l| net.links[l].name.clone())
            .collect()
    }

    #[test]
    fn egress_links_behind_a_slower_bottleneck_cannot_queue() {
        // The first hops (a source is not bounded by a link) and the bottleneck can queue.
        assert_eq!(pure("", "1000Mbps"), ["r2->d0", "r2->d1"]);
        // As fast as the bottleneck: still none.
        assert_eq!(pure("", "100Mbps"), ["r2->d0", "r2->d1"]);
        // Slower than what feeds it.
        assert!(pure("", "99Mbps").is_empty());
        // A rate that changes, on the link or on what feeds it.
        let change = |link: &str| {
            format!(
                "[[event]]\nat = \"1s\"\nset_rate = {{ link = \"{link}\", rate = \"100Mbps\" }}\n"
            )
        };
        assert_eq!(pure(&change("r2->d0"), "1000Mbps"), ["r2->d1"]);
        assert!(pure(&change("r1->r2"), "1000Mbps").is_empty());
        // A delay change keeps every flow from one feeding link on one delay: no matter.
        let delay = "[[event]]\nat = \"1s\"\nset_delay = { link = \"r1->r2\", delay = \"20ms\" }\n";
        assert_eq!(pure(delay, "1000Mbps"), ["r2->d0", "r2->d1"]);
    }

    /// A shared buffer has no fluid law: the switch is named as outside the domain.
    #[test]
    fn a_shared_buffer_is_outside_the_domain() {
        let text = acclab_scenario::templates::dumbbell("reno", 2, 100, 50, 10);
        let sc = acclab_scenario::parse(
            &format!("{text}[[shared_buffer]]\nnodes = [\"r1\"]\nsize = \"1MB\"\n"),
            "t.toml",
        )
        .unwrap();
        let Err(Outside(why)) = Network::of(&sc) else {
            panic!("a shared buffer was modelled");
        };
        assert_eq!(why.len(), 1);
        assert_eq!(why[0].0, "node r1");
        assert!(why[0].1.contains("shared buffer"), "{}", why[0].1);
    }
}
