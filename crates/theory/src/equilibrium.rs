//! From a scenario to its predicted equilibrium (SPEC §8).
//!
//! The flows in the theory's domain are those whose equilibrium maximises Σ U_s(x_s) over the
//! link capacities: Vegas (002 Theorem 1; with a fixed baseRTT d̂ ≠ d, Theorem 3's utility
//! (1+ε)·α·d·log x + ε·d·x) and Monaco / ACC (weight a*, 000 appendix). Constant-rate CBR flows active for the whole window are inelastic:
//! their rate is taken off the capacity of every link they cross. Everything else (Reno, finite
//! transfers, flows that start or stop inside the window) is outside the domain and listed with
//! the reason. A long-lived window-based TCP flow (Reno, CUBIC, DCTCP, BBR) active through the
//! window takes a share of every link it crosses that the theory cannot tell, so the flows in
//! the domain that cross such a link — and, since they share capacity with them, the flows
//! that cross theirs, and so on — get no prediction either, with the reason, rather than a number
//! as if that traffic were absent. Short or intermittent traffic outside the domain (web users,
//! on-off mice, finite transfers, flows that start or stop inside the window) only makes a
//! link's prediction approximate, which the notes say.
//!
//! Units: rates in packets per second, weights in packets, prices in seconds. A flow's
//! propagation delay d is its round-trip propagation delay plus the transmission time of a data
//! packet on each forward link and of an ACK on each reverse link (002 §6, footnote 3).

use acclab_core::config::{PerUnit, QueueConfig, SchemeConfig};
use acclab_scenario::Scenario;
use acclab_scenario::{EventAction, FlowDef};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

use crate::expected;
use crate::num::{self, NumError, Problem};

/// The predicted equilibrium of a scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Equilibrium {
    pub model: String,
    /// Per scenario flow, `None` when outside the domain. (Boxed: a workload's million flows
    /// are all outside, 8 bytes each rather than 120.)
    pub flows: Vec<Option<Box<FlowPrediction>>>,
    pub links: Vec<LinkPrediction>,
    pub outside: Vec<(String, Arc<str>)>,
    pub notes: Vec<String>,
}

impl Equilibrium {
    /// The equilibrium as JSON (`acclab theory --json`, the Python package's `theory`): a flow
    /// outside the theory is an object with its id and the reason, not a bare null.
    pub fn to_json(&self, sc: &Scenario) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("an equilibrium serialises");
        if let Some(flows) = v.get_mut("flows").and_then(|f| f.as_array_mut()) {
            let outside: HashMap<&str, &str> = self
                .outside
                .iter()
                .map(|(id, w)| (id.as_str(), &**w))
                .collect();
            for (f, def) in flows.iter_mut().zip(&sc.flows) {
                if f.is_null() {
                    let why = outside
                        .get(def.id.as_str())
                        .copied()
                        .unwrap_or("outside the theory's domain");
                    *f = serde_json::json!({ "id": def.id, "outside": why });
                }
            }
        }
        v
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowPrediction {
    pub id: String,
    pub throughput_bps: f64,
    pub rate_pkts_per_s: f64,
    /// w_s in U_s = w_s·log x_s (+ b_s·x_s), packets.
    pub weight_pkts: f64,
    /// True round-trip propagation delay d, s.
    pub prop_delay_s: f64,
    /// The baseRTT the source uses (d, or the fixed value), s.
    pub base_rtt_s: f64,
    pub queueing_delay_s: f64,
    pub rtt_s: f64,
    pub window_pkts: f64,
    pub window_bytes: f64,
    /// An expected-rate loop's contracted rate (003 §IV), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_rate_bps: Option<f64>,
    /// Whether the loop sits at its accumulation limit (then weight_pkts is A/packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_limit: Option<bool>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkPrediction {
    pub id: String,
    pub price_s: f64,
    pub queue_pkts: f64,
    pub utilization: f64,
}

/// A flow's utility in the NUM problem.
struct Utility {
    weight: f64,
    linear: f64,
    base_rtt: f64,
    /// Expected minimum rate r_s, packets/s (003 §IV).
    min_rate: f64,
    /// Accumulation limit A_s, packets (infinite for none).
    limit: f64,
}

/// Round-trip propagation delay of `f`, transmission times included.
pub fn propagation_delay(sc: &Scenario, f: &FlowDef) -> f64 {
    let hop = |links: &[acclab_scenario::LinkId], size: u32| -> f64 {
        links
            .iter()
            .map(|l| {
                let l = &sc.links[l.0 as usize];
                (l.delay + l.rate.tx_time(size as u64)).as_secs_f64()
            })
            .sum()
    };
    hop(&f.forward, sc.packet_size) + hop(&f.reverse, sc.ack_size)
}

/// The flow's utility, or why it is outside the domain.
fn utility(f: &FlowDef, d: f64, packet_size: f64) -> Result<Utility, String> {
    if f.spray {
        // A sprayed flow's rate splits over every shortest path: a multipath problem, which
        // the routing matrix (one path per flow) does not hold.
        return Err("its packets are sprayed over many paths (ecmp = \"packet\"); the theory routes each flow over one".into());
    }
    match (&f.scheme, f.scheme.vegas()) {
        (_, Some(p)) => {
            if p.size.is_some() {
                return Err("a finite transfer has no equilibrium rate".into());
            }
            if p.alpha != p.beta {
                return Err(format!(
                    "vegas with alpha {} < beta {} has a set of equilibria (002 §3), not one point: outside the domain, which holds Vegas with alpha = beta only",
                    p.alpha, p.beta
                ));
            }
            let base = match p.base_rtt {
                acclab_core::config::BaseRttParam::Fixed(b) => b.as_secs_f64(),
                acclab_core::config::BaseRttParam::Min => d,
            };
            // PF: α packets; WPF: α packets per unit time × baseRTT (002 §3.2).
            let weight = match p.per {
                PerUnit::Rtt => p.alpha,
                PerUnit::Time(unit) => p.alpha * base / unit.as_secs_f64(),
            };
            // 002 Theorem 3: a baseRTT error d̂ − d adds (d̂ − d)·x to the utility.
            Ok(Utility {
                weight,
                linear: base - d,
                base_rtt: base,
                min_rate: 0.0,
                limit: f64::INFINITY,
            })
        }
        // ACC / Monaco: weighted PF with weight a* (000 appendix), here in packets; an
        // expected-rate loop maximises a*·log(x − r) up to its limit (003 §IV).
        (SchemeConfig::Monaco(p), _) => Ok(Utility {
            weight: p.target_bytes() / packet_size,
            linear: 0.0,
            base_rtt: d,
            min_rate: p
                .expected_rate
                .map_or(0.0, |r| r.as_f64() / 8.0 / packet_size),
            limit: p.limit.map_or(f64::INFINITY, |a| a.0 as f64 / packet_size),
        }),
        (other, _) => Err(format!("{} is not in the theory's domain", other.kind())),
    }
}

/// Whether `f` is a long-lived window-based TCP flow (no finite size), or a real stack's flow
/// that may be one (live mode's kernel TCP, programs): traffic the theory does not model that
/// takes a persistent, unknown share of its links.
fn persistent_tcp(f: &FlowDef) -> bool {
    match &f.scheme {
        SchemeConfig::KernelTcp(p) => p.size.is_none(),
        SchemeConfig::Command(_) => true,
        SchemeConfig::Reno(p) => p.size.is_none(),
        SchemeConfig::Cubic(p) => p.size.is_none(),
        SchemeConfig::Dctcp(p) => p.size.is_none(),
        SchemeConfig::Prague(p) => p.size.is_none(),
        SchemeConfig::Ledbat(p) => p.size.is_none(),
        SchemeConfig::Copa(p) => p.size.is_none(),
        SchemeConfig::Vivace(p) => p.size.is_none(),
        SchemeConfig::Bbr(p) => p.size.is_none(),
        SchemeConfig::Bbr3(p) => p.size.is_none(),
        SchemeConfig::Swift(p) => p.size.is_none(),
        SchemeConfig::Hpcc(p) => p.size.is_none(),
        SchemeConfig::Python(p) => p.size.is_none(),
        _ => false,
    }
}

/// Whether `f` is active over the whole window [from, to].
fn active_throughout(sc: &Scenario, f: &FlowDef) -> bool {
    let (from, to) = sc.output.window;
    f.start + f.start_jitter <= from && f.stop.is_none_or(|s| s >= to)
}

/// Predicts the equilibrium of `sc`.
pub fn predict(sc: &Scenario) -> Result<Equilibrium, NumError> {
    predict_listed(sc, usize::MAX)
}

/// The note of a prediction that counts `n` flows outside the domain for reason `why`, flows
/// a run's summary does not list (a workload's: [`predict_listed`]).
pub fn unlisted_note(n: usize, why: &str) -> String {
    format!("{n} flows of workloads outside the domain: {why}")
}

/// The flows outside the domain: the first `listed` each with its reason, the others counted
/// by reason.
struct Outside {
    listed: usize,
    list: Vec<(String, Arc<str>)>,
    unlisted: std::collections::BTreeMap<Arc<str>, usize>,
}

impl Outside {
    fn push(&mut self, i: usize, f: &FlowDef, why: Arc<str>) {
        match i < self.listed {
            true => self.list.push((f.id.clone(), why)),
            false => *self.unlisted.entry(why).or_default() += 1,
        }
    }
}

/// Predicts the equilibrium of `sc` as a run's summary shows it, which lists its first
/// `listed` flows: the others outside the domain are counted by reason in the notes
/// ([`unlisted_note`]), not listed by id — a workload's million flows, all outside, made a
/// list of 60 MB.
pub fn predict_listed(sc: &Scenario, listed: usize) -> Result<Equilibrium, NumError> {
    let bits = 8.0 * sc.packet_size as f64;
    // An AVQ link steers its arrival rate to γ·C (Kunniyur–Srikant; 000 §IV-D for AVD): that is
    // the capacity its responsive flows share.
    let usable: Vec<f64> = sc
        .links
        .iter()
        .map(|l| match &l.queue {
            QueueConfig::Avq(p) => p.target_utilization,
            _ => 1.0,
        })
        .collect();
    let mut capacity: Vec<f64> = sc
        .links
        .iter()
        .zip(&usable)
        .map(|(l, u)| u * l.rate.as_f64() / bits)
        .collect();
    let mut outside = Outside {
        listed,
        list: Vec::new(),
        unlisted: Default::default(),
    };
    // The reasons, each kept once however many flows it is given for (a workload's million).
    let mut reasons: HashMap<String, Arc<str>> = HashMap::new();
    let mut why = |r: String| -> Arc<str> {
        reasons
            .entry(r)
            .or_insert_with_key(|r| Arc::from(r.as_str()))
            .clone()
    };
    let mut notes = Vec::new();
    let mut members = Vec::new(); // (scenario flow index, utility, d)
    let mut unmodelled_links = vec![false; sc.links.len()];
    // Links with persistent traffic the theory does not model: why (which flow).
    let mut foreign: Vec<Option<String>> = vec![None; sc.links.len()];
    for (i, f) in sc.flows.iter().enumerate() {
        let (from, to) = sc.output.window;
        let overlaps = f.start < to && f.stop.is_none_or(|s| s > from);
        if !overlaps {
            outside.push(i, &f, why("not active in the measurement window".into()));
            continue;
        }
        let whole = active_throughout(sc, &f);
        if let SchemeConfig::Cbr(p) = &f.scheme {
            if whole && p.schedule.is_empty() {
                for l in &f.forward {
                    capacity[l.0 as usize] -= p.rate.as_f64() / bits;
                }
                outside.push(
                    i,
                    &f,
                    why("inelastic: its rate is taken off the capacities".into()),
                );
                continue;
            }
        }
        let d = propagation_delay(sc, &f);
        match utility(&f, d, sc.packet_size as f64) {
            Ok(u) if whole => members.push((i, u, d)),
            Ok(_) => outside.push(i, &f, why("starts or stops inside the window".into())),
            Err(r) => outside.push(i, &f, why(r)),
        }
        if members.last().is_none_or(|m| m.0 != i) {
            let persistent = whole && persistent_tcp(&f);
            for l in &f.forward {
                unmodelled_links[l.0 as usize] = true;
                if persistent && foreign[l.0 as usize].is_none() {
                    foreign[l.0 as usize] = Some(format!("{} flow {}", f.scheme.kind(), f.id));
                }
            }
        }
    }
    // Flows in the domain that share a link with such traffic, directly or through other flows
    // in the domain, leave the domain too (a fixed point: each pass taints the links of the
    // flows it removes).
    loop {
        let before = members.len();
        let mut kept = Vec::with_capacity(members.len());
        for m in members.drain(..) {
            let f = &sc.flows.get(m.0);
            match f.forward.iter().find_map(|l| {
                foreign[l.0 as usize]
                    .as_ref()
                    .map(|who| (sc.links[l.0 as usize].name.clone(), who.clone()))
            }) {
                Some((link, who)) => {
                    outside.push(
                        m.0,
                        f,
                        why(format!("shares link {link} with {who}, whose share the theory cannot tell (it is outside the domain), so it predicts nothing here rather than a rate as if that traffic were absent")),
                    );
                    for l in &f.forward {
                        foreign[l.0 as usize].get_or_insert_with(|| format!("flow {}", f.id));
                    }
                }
                None => kept.push(m),
            }
        }
        members = kept;
        if members.len() == before {
            break;
        }
    }
    for (l, c) in capacity.iter_mut().enumerate() {
        if *c <= 0.0 {
            notes.push(format!(
                "link {}: inelastic flows take all of its capacity",
                sc.links[l].name
            ));
            *c = 1e-9;
        }
    }
    // (A delay trace's changes are its own note: the prediction uses its mean.)
    let changed: Vec<usize> = sc
        .events
        .iter()
        .filter(|e| match e.action {
            EventAction::SetDelay { link, .. } => sc.links[link.0 as usize].delay_trace.is_none(),
            EventAction::SetRate { .. } => true,
        })
        .map(|e| match e.action {
            EventAction::SetDelay { link, .. } | EventAction::SetRate { link, .. } => {
                link.0 as usize
            }
        })
        .collect();
    let problem = Problem {
        capacity: capacity.clone(),
        routes: members
            .iter()
            .map(|(i, _, _)| {
                sc.flows
                    .get(*i)
                    .forward
                    .iter()
                    .map(|l| l.0 as usize)
                    .collect()
            })
            .collect(),
        weight: members.iter().map(|(_, u, _)| u.weight).collect(),
        linear: members.iter().map(|(_, u, _)| u.linear).collect(),
        min_rate: members.iter().map(|(_, u, _)| u.min_rate).collect(),
    };
    let limits: Vec<f64> = members.iter().map(|(_, u, _)| u.limit).collect();
    let services = limits.iter().any(|a| a.is_finite());
    let (sol, at_limit) = if members.is_empty() {
        let empty = num::Solution {
            rate: vec![],
            price: vec![0.0; capacity.len()],
        };
        (empty, vec![])
    } else if services {
        let a = expected::solve(&problem, &limits)?;
        (a.solution, a.at_limit)
    } else {
        (num::solve(&problem)?, vec![false; members.len()])
    };
    let mut flows: Vec<Option<Box<FlowPrediction>>> = vec![None; sc.flows.len()];
    // At a REM link the price is REM's, fed back by marks, and at an AVQ link it is the virtual
    // queue's: their equilibrium physical queue is zero (002 §5, 000 §IV-D).
    let queues = |l: usize| !matches!(sc.links[l].queue, QueueConfig::Rem(_) | QueueConfig::Avq(_));
    for (k, (i, u, d)) in members.iter().enumerate() {
        let f = &sc.flows.get(*i);
        let x = sol.rate[k];
        let q: f64 = f
            .forward
            .iter()
            .map(|l| l.0 as usize)
            .filter(|&l| queues(l))
            .map(|l| sol.price[l])
            .sum();
        let rtt = d + q;
        if f.forward
            .iter()
            .chain(&f.reverse)
            .any(|l| changed.contains(&(l.0 as usize)))
        {
            notes.push(format!("flow {}: a scheduled event changes a link on its path; the prediction uses the initial values", f.id));
        }
        let service = u.min_rate > 0.0 || u.limit.is_finite();
        flows[*i] = Some(Box::new(FlowPrediction {
            id: f.id.clone(),
            throughput_bps: x * bits,
            rate_pkts_per_s: x,
            weight_pkts: if at_limit[k] { u.limit } else { u.weight },
            prop_delay_s: *d,
            base_rtt_s: u.base_rtt,
            queueing_delay_s: q,
            rtt_s: rtt,
            window_pkts: x * rtt,
            window_bytes: x * rtt * sc.packet_size as f64,
            expected_rate_bps: (u.min_rate > 0.0).then_some(u.min_rate * bits),
            at_limit: service.then_some(at_limit[k]),
        }));
    }
    let links = sc
        .links
        .iter()
        .enumerate()
        .map(|(l, def)| {
            let elastic: f64 = members
                .iter()
                .enumerate()
                .filter(|(_, (i, _, _))| sc.flows.get(*i).forward.iter().any(|x| x.0 as usize == l))
                .map(|(k, _)| sol.rate[k])
                .sum();
            let full = def.rate.as_f64() / bits;
            let carries = members
                .iter()
                .any(|(i, _, _)| sc.flows.get(*i).forward.iter().any(|x| x.0 as usize == l));
            if carries {
                notes.extend(link_departures(def));
            }
            if unmodelled_links[l] && sol.price[l] > 0.0 {
                notes.push(format!("link {}: also carries flows outside the theory's domain; its prediction is approximate", def.name));
            }
            LinkPrediction {
                id: def.name.clone(),
                price_s: sol.price[l],
                queue_pkts: if queues(l) { sol.price[l] * capacity[l] } else { 0.0 },
                utilization: (elastic + (usable[l] * full - capacity[l])) / full,
            }
        })
        .collect();
    Ok(Equilibrium {
        model: if services {
            "expected minimum rates: max Σ w·log(x − r) s.t. R·x ≤ c, loops at their accumulation limit A as weight A, r = 0 (003 §IV)".into()
        } else {
            "weighted proportional fairness: max Σ w·log x (+ b·x) s.t. R·x ≤ c (002 Theorems 1 and 3)".into()
        },
        flows,
        links,
        outside: outside.list,
        notes: notes
            .into_iter()
            .chain((outside.unlisted.into_iter()).map(|(why, n)| unlisted_note(n, &why)))
            .collect(),
    })
}

/// What the theory leaves out of link `def`, which a predicted flow crosses: a capacity that
/// follows a trace (the theory uses its mean), delay variation (its mean delay), random loss.
fn link_departures(def: &acclab_scenario::LinkDef) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &def.capacity {
        out.push(format!(
            "link {}: its capacity follows the trace {:?}; the prediction uses its mean capacity, {}",
            def.name,
            std::path::Path::new(&c.file)
                .file_name()
                .map_or(c.file.as_str().into(), |n| n.to_string_lossy()),
            def.rate
        ));
    }
    if let Some(file) = &def.delay_trace {
        out.push(format!(
            "link {}: its delay follows the trace {:?}; the prediction uses its mean delay over the run, {}",
            def.name,
            std::path::Path::new(file)
                .file_name()
                .map_or(file.as_str().into(), |n| n.to_string_lossy()),
            def.delay
        ));
    }
    if def.jitter.is_some() {
        out.push(format!(
            "link {}: its delay varies (jitter); the prediction uses its mean delay, {}",
            def.name, def.delay
        ));
    }
    if let acclab_core::link::LossModel::GilbertElliott(_) = def.loss {
        out.push(format!(
            "link {}: bursty random loss (Gilbert–Elliott, {:.3}% on average) is not in the theory; the prediction is as if the link were lossless",
            def.name,
            100.0 * def.loss.mean()
        ));
    }
    out
}

/// The range of rates Vegas flows with α < β can settle at: their equilibria form a set (002
/// §3: any window whose diff lies in [α, β] holds), the weighted-PF solutions for weights
/// between α·d and β·d. For each such flow (at most 64), its rate with weight β against every
/// other such flow at α, and with α against β: exact bounds on one bottleneck, the corners of
/// the weight box on a network. Empty when the scenario has no such flow or the theory cannot
/// solve the corners (other flows outside its domain take the flow out too).
pub fn vegas_bounds(sc: &Scenario) -> Vec<(String, f64, f64)> {
    let set: Vec<usize> = sc
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(&f.scheme, SchemeConfig::Vegas(p) if p.alpha < p.beta && p.size.is_none()))
        .map(|(i, _)| i)
        .take(64)
        .collect();
    // Flow `me`'s predicted rate with its weight at β and every other set flow's at α
    // (`high`), or the other way round.
    let solve = |me: usize, high: bool| -> Option<f64> {
        let mut c = sc.clone();
        for &j in &set {
            if let SchemeConfig::Vegas(p) = &mut c.flows.written_mut()[j].scheme {
                let w = if (j == me) == high { p.beta } else { p.alpha };
                p.alpha = w;
                p.beta = w;
            }
        }
        let eq = predict(&c).ok()?;
        eq.flows[me].as_ref().map(|p| p.throughput_bps)
    };
    let mut out = Vec::new();
    for &i in &set {
        if let (Some(lo), Some(hi)) = (solve(i, false), solve(i, true)) {
            out.push((sc.flows.get(i).id.clone(), lo, hi));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two parallel bottlenecks: a–b carries Monaco flows m1, m2 and (when `reno`) a Reno flow;
    /// c–d carries Monaco flow m3 alone.
    fn scenario(reno: &str) -> Scenario {
        let text = format!(
            r#"
name = "mix"
duration = "60s"
[output]
window = ["20s", "60s"]
[defaults]
queue = {{ kind = "red", limit = "200pkt", min_th = "20pkt", max_th = "60pkt", priority = true }}
[[link]]
between = ["a", "b"]
rate = "50Mbps"
delay = "10ms"
[[link]]
between = ["c", "d"]
rate = "50Mbps"
delay = "10ms"
[[flow]]
id = "m1"
kind = "monaco"
from = "a"
to = "b"
[[flow]]
id = "m2"
kind = "monaco"
from = "a"
to = "b"
[[flow]]
id = "m3"
kind = "monaco"
from = "c"
to = "d"
{reno}
"#
        );
        acclab_scenario::parse(&text, "mix.toml").unwrap()
    }

    /// Default Vegas (α = 2 < β = 4): two flows on one link can settle anywhere from 2:4 to 4:2.
    #[test]
    fn vegas_with_alpha_below_beta_gives_bounds() {
        let text = r#"
name = "v"
duration = "60s"
[[link]]
between = ["a", "b"]
rate = "12Mbps"
delay = "10ms"
[[flow]]
id = "v1"
kind = "vegas"
from = "a"
to = "b"
[[flow]]
id = "v2"
kind = "vegas"
from = "a"
to = "b"
"#;
        let sc = acclab_scenario::parse(text, "v.toml").unwrap();
        let b = vegas_bounds(&sc);
        assert_eq!(b.len(), 2);
        let (lo, hi) = (b[0].1, b[0].2);
        // Weights 2 against 4 and 4 against 2 of 12 Mb/s: 4 and 8 Mb/s.
        assert!(
            (lo - 4e6).abs() < 1e-3 * 4e6 && (hi - 8e6).abs() < 1e-3 * 8e6,
            "{lo} {hi}"
        );
    }

    const RENO: &str = "[[flow]]\nid = \"r\"\nkind = \"reno\"\nfrom = \"a\"\nto = \"b\"\n";

    /// issue 26: Monaco on a link shared with Reno got a rate as if the Reno flow were absent.
    #[test]
    fn no_prediction_where_untheorised_tcp_shares_the_link() {
        let alone = predict(&scenario("")).unwrap();
        assert!(alone.flows.iter().all(Option::is_some));
        let mixed = predict(&scenario(RENO)).unwrap();
        assert!(mixed.flows[0].is_none() && mixed.flows[1].is_none());
        let why = &mixed.outside.iter().find(|(id, _)| id == "m1").unwrap().1;
        assert!(why.contains("shares link a->b with reno flow r"), "{why}");
        // In JSON the flows without a prediction carry their id and the reason.
        let json = mixed.to_json(&scenario(RENO));
        assert_eq!(json["flows"][0]["id"], "m1");
        assert_eq!(json["flows"][0]["outside"].as_str(), Some(&**why));
        assert_eq!(json["flows"][2]["id"], "m3");
        assert!(json["flows"][2]["throughput_bps"].is_number());
        // The flow on the other bottleneck keeps its prediction, the same as without Reno (to
        // the solver's accuracy: the problems differ in size).
        let (a, b) = (
            alone.flows[2].as_ref().unwrap().throughput_bps,
            mixed.flows[2].as_ref().unwrap().throughput_bps,
        );
        assert!((a - b).abs() < 1e-6 * a, "{a} vs {b}");
        // A Reno flow that stops inside the window is intermittent: a note, not an exclusion.
        let short = predict(&scenario(&format!("{RENO}stop = \"40s\"\n"))).unwrap();
        assert!(short.flows[0].is_some());
        assert!(
            short.notes.iter().any(|n| n.contains("approximate")),
            "{:?}",
            short.notes
        );
    }
}
