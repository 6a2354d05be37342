//! A scenario's flows: those written (`[[flow]]` tables, the builder's flows) held whole, and
//! after them each workload's flows **drawn** — held as what tells them apart (start, size,
//! hosts, routes), 32 bytes and its routes' links a flow, and made whole ([`FlowDef`]) when
//! read.
//!
//! A workload's million flows held whole took ~350 bytes each before a packet was sent (the
//! definition's 264 and its id and routes on the heap), the largest part of a million-flow
//! run's memory (issue 56: memory independent of the run's length); drawn, they take ~80.
//! Every flow of a workload shares its kind, parameters (but the size), class and routing, and
//! has no start jitter and no stop: what [`Flows::get`] puts back.

use std::borrow::Cow;

use acclab_core::config::SchemeConfig;
use acclab_core::units::Bytes;
use acclab_core::Time;

use acclab_core::Duration;

use crate::ids::{LinkId, NodeId};

/// One flow with its routes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowDef {
    pub id: String,
    pub scheme: SchemeConfig,
    /// Traffic class for class-based AQMs (BAT): the `class` key, or the scheme's default
    /// (borrowed: a workload's million flows hold no copy of it).
    pub class: std::borrow::Cow<'static, str>,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: Time,
    /// Random extra start delay, uniform in [0, start_jitter), drawn from the flow's stream.
    pub start_jitter: Duration,
    pub stop: Option<Time>,
    /// Links from source to destination, and back (ACKs, reverse control packets). For a
    /// sprayed flow, one of its paths (the one per-flow ECMP would pick): what the theory and
    /// the model tier see.
    pub forward: Box<[LinkId]>,
    pub reverse: Box<[LinkId]>,
    /// Packets are sprayed over every shortest path (`[routing] ecmp = "packet"`): each node
    /// picks a next hop per packet ([`crate::routing::Ecmp::Packet`]).
    pub spray: bool,
}

/// A flow as read from [`Flows`]: borrowed if written, made whole if drawn.
pub type FlowView<'a> = Cow<'a, FlowDef>;

/// A scenario's flows, in order: the written ones, then each workload's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flows {
    written: Vec<FlowDef>,
    drawn: Vec<Drawn>,
    /// How many flows the workloads have drawn.
    drawn_len: usize,
}

/// Where a flow is held ([`Flows::at`]).
enum At<'a> {
    Written(&'a FlowDef),
    /// A workload's, and the flow's index in it.
    Drawn(&'a Drawn, usize),
}

/// One workload's flows.
#[derive(Clone, Debug, PartialEq)]
struct Drawn {
    /// Which of the scenario's workloads it is (counted from 0).
    number: usize,
    /// The flows' ids are this and their index in the workload.
    id: String,
    /// Their scheme, the size of each flow's transfer aside.
    scheme: SchemeConfig,
    class: Cow<'static, str>,
    spray: bool,
    flows: Vec<Compact>,
    /// Every flow's forward then reverse links, one after the other.
    links: Vec<LinkId>,
}

/// What tells a workload's flow from the others.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Compact {
    start: Time,
    size: u64,
    src: NodeId,
    dst: NodeId,
    /// Where its links begin in [`Drawn::links`], and how many of them are forward, reverse.
    at: u32,
    forward: u16,
    reverse: u16,
}

impl Flows {
    /// How many flows there are.
    pub fn len(&self) -> usize {
        self.written.len() + self.drawn_len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The flows written (`[[flow]]` tables), which come first.
    pub fn written(&self) -> &[FlowDef] {
        &self.written
    }

    /// The flows written, to change (the builder, patches, tests): drawn flows come after
    /// them, so their indices move with the written flows' count.
    pub fn written_mut(&mut self) -> &mut Vec<FlowDef> {
        &mut self.written
    }

    /// Flow `i` (panics beyond [`Flows::len`], as a slice's index does).
    pub fn get(&self, i: usize) -> FlowView<'_> {
        match self.at(i) {
            At::Written(f) => Cow::Borrowed(f),
            At::Drawn(d, k) => Cow::Owned(d.whole(k)),
        }
    }

    /// Every flow, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = FlowView<'_>> + Clone + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// Each flow's scheme with the flow's index, but a workload's once, with its first flow
    /// (its flows' schemes differ in their sizes alone): what is true of a scheme, found
    /// without making a million flows whole.
    pub fn schemes(&self) -> impl Iterator<Item = (usize, &SchemeConfig)> + '_ {
        let mut first = self.written.len();
        let drawn = self.drawn.iter().map(move |d| {
            let at = first;
            first += d.flows.len();
            (at, &d.scheme)
        });
        self.written
            .iter()
            .enumerate()
            .map(|(i, f)| (i, &f.scheme))
            .chain(drawn)
    }

    /// Flow `i`'s scheme, but for the size of its transfer (a workload's flows share one
    /// scheme, whose size is its first flow's): for its kind and what the kind does, without
    /// making the flow whole.
    pub fn scheme_but_size(&self, i: usize) -> &SchemeConfig {
        match self.at(i) {
            At::Written(f) => &f.scheme,
            At::Drawn(d, _) => &d.scheme,
        }
    }

    /// Flow `i`'s id, without making it whole.
    pub fn id(&self, i: usize) -> Cow<'_, str> {
        match self.at(i) {
            At::Written(f) => Cow::Borrowed(&f.id),
            At::Drawn(d, k) => Cow::Owned(format!("{}{k}", d.id)),
        }
    }

    /// Flow `i`'s source and destination, without making it whole.
    pub fn ends(&self, i: usize) -> (NodeId, NodeId) {
        match self.at(i) {
            At::Written(f) => (f.src, f.dst),
            At::Drawn(d, k) => (d.flows[k].src, d.flows[k].dst),
        }
    }

    /// When flow `i` starts (before its start jitter), without making it whole.
    pub fn start(&self, i: usize) -> Time {
        match self.at(i) {
            At::Written(f) => f.start,
            At::Drawn(d, k) => d.flows[k].start,
        }
    }

    /// Flow `i`'s transfer size, if finite, without making it whole.
    pub fn size(&self, i: usize) -> Option<Bytes> {
        match self.at(i) {
            At::Written(f) => f.scheme.size(),
            At::Drawn(d, k) => Some(Bytes(d.flows[k].size)),
        }
    }

    /// Flow `i`'s forward and reverse links, without making it whole.
    pub fn routes(&self, i: usize) -> (&[LinkId], &[LinkId]) {
        match self.at(i) {
            At::Written(f) => (&f.forward, &f.reverse),
            At::Drawn(d, k) => d.routes(k),
        }
    }

    /// Whether flow `i`'s packets are sprayed over every shortest path ([`FlowDef::spray`]).
    pub fn sprayed(&self, i: usize) -> bool {
        match self.at(i) {
            At::Written(f) => f.spray,
            At::Drawn(d, _) => d.spray,
        }
    }

    /// Where flow `i` is: a written flow, or a workload's and its index there.
    fn at(&self, i: usize) -> At<'_> {
        if let Some(f) = self.written.get(i) {
            return At::Written(f);
        }
        let (d, k) = self.locate(i);
        At::Drawn(d, k)
    }

    /// The workload and the index in it of flow `i`, one of theirs.
    fn locate(&self, i: usize) -> (&Drawn, usize) {
        let mut k = i - self.written.len();
        for d in &self.drawn {
            if k < d.flows.len() {
                return (d, k);
            }
            k -= d.flows.len();
        }
        panic!("flow {i} of {}", self.len())
    }

    /// Adds `f`, the next flow of workload `workload` (counted from 0; its first flow begins
    /// it, `of` flows long), whose id is the workload's, `id`, with the flow's index in it. A
    /// workload's flows are alike but for their start, size, hosts and routes — they have a
    /// finite transfer, no jitter, no stop (`workload::Arrival`); a route too long to hold is
    /// the error.
    pub(crate) fn draw(
        &mut self,
        workload: usize,
        id: &str,
        of: usize,
        f: FlowDef,
    ) -> Result<(), String> {
        if self.drawn.last().map(|d| d.number) != Some(workload) {
            self.drawn.push(Drawn {
                number: workload,
                id: id.to_string(),
                scheme: f.scheme.clone(),
                class: f.class.clone(),
                spray: f.spray,
                flows: Vec::with_capacity(of),
                links: Vec::new(),
            });
        }
        let d = self.drawn.last_mut().expect("a workload begun");
        let hops = u16::MAX as usize;
        if f.forward.len() > hops || f.reverse.len() > hops {
            return Err(format!(
                "flow {:?}: its route has {} links, more than a workload's flow may have ({hops})",
                f.id,
                f.forward.len().max(f.reverse.len())
            ));
        }
        let at = u32::try_from(d.links.len())
            .ok()
            .filter(|&a| a as usize + f.forward.len() + f.reverse.len() <= u32::MAX as usize)
            .ok_or_else(|| {
                format!(
                    "flow {:?}: the workload's routes take more than {} links in all",
                    f.id,
                    u32::MAX
                )
            })?;
        let size = f.scheme.size().expect("a workload's flow has a size");
        d.flows.push(Compact {
            start: f.start,
            size: size.0,
            src: f.src,
            dst: f.dst,
            at,
            forward: f.forward.len() as u16,
            reverse: f.reverse.len() as u16,
        });
        d.links.extend_from_slice(&f.forward);
        d.links.extend_from_slice(&f.reverse);
        self.drawn_len += 1;
        // Made whole again, it is the flow given: ids, scheme, class, jitter, stop, spray
        // (checked where the tests run, which make every kind of workload).
        debug_assert_eq!(
            d.whole(d.flows.len() - 1),
            f,
            "a workload's flows are alike but for start, size, hosts and routes"
        );
        Ok(())
    }
}

impl Flows {
    /// Gives back what the workloads' route tables reserved beyond their use (they grow by
    /// doubling: up to half of a million flows' 50 MB).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.drawn.iter_mut().for_each(|d| d.links.shrink_to_fit());
    }
}

impl Drawn {
    fn routes(&self, k: usize) -> (&[LinkId], &[LinkId]) {
        let c = &self.flows[k];
        let at = c.at as usize;
        let mid = at + c.forward as usize;
        (
            &self.links[at..mid],
            &self.links[mid..mid + c.reverse as usize],
        )
    }

    fn whole(&self, k: usize) -> FlowDef {
        let c = &self.flows[k];
        let (forward, reverse) = self.routes(k);
        FlowDef {
            id: format!("{}{k}", self.id),
            scheme: self
                .scheme
                .with_size(Bytes(c.size))
                .expect("a workload's scheme carries a size"),
            class: self.class.clone(),
            src: c.src,
            dst: c.dst,
            start: c.start,
            start_jitter: Duration::ZERO,
            stop: None,
            forward: forward.into(),
            reverse: reverse.into(),
            spray: self.spray,
        }
    }
}

impl From<Vec<FlowDef>> for Flows {
    fn from(written: Vec<FlowDef>) -> Flows {
        Flows {
            written,
            ..Flows::default()
        }
    }
}

impl<'a> IntoIterator for &'a Flows {
    type Item = FlowView<'a>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = FlowView<'a>> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    /// Two workloads after a written flow: every accessor says what the flow made whole says,
    /// the ids run on within each workload, and `schemes` names each workload once.
    #[test]
    fn a_drawn_flow_reads_as_the_flow_it_was() {
        let text = crate::templates::fat_tree("drawn", 4, 20)
            + r#"[[flow]]
id = "long"
kind = "reno"
from = "h0"
to = "h5"
[[workload]]
id = "ws"
kind = "dctcp"
sizes = "websearch"
load = 0.3
[[workload]]
id = "in"
kind = "cubic"
pattern = "incast"
senders = 4
size = "3KB"
period = "1ms"
"#;
        let sc = crate::parse(&text, "drawn.toml").unwrap();
        let flows = &sc.flows;
        assert!(flows.written().len() == 1 && flows.len() > 1);
        let (mut ws, mut incast) = (0, 0);
        for i in 0..flows.len() {
            let f = flows.get(i);
            assert_eq!(flows.id(i), f.id);
            assert_eq!(flows.ends(i), (f.src, f.dst));
            assert_eq!(flows.start(i), f.start);
            assert_eq!(flows.size(i), f.scheme.size());
            assert_eq!(flows.routes(i), (&f.forward[..], &f.reverse[..]));
            assert_eq!(flows.sprayed(i), f.spray);
            assert_eq!(flows.scheme_but_size(i).kind(), f.scheme.kind());
            if i > 0 {
                assert!(!f.forward.is_empty() && !f.reverse.is_empty());
                let (prefix, n) = match f.scheme.kind() {
                    "dctcp" => ("ws", &mut ws),
                    _ => ("in", &mut incast),
                };
                assert_eq!(f.id, format!("{prefix}{n}"));
                *n += 1;
            }
        }
        assert!(ws > 20 && incast == 4 * 20, "{ws} and {incast} flows");
        let schemes: Vec<(usize, &str)> = flows.schemes().map(|(i, s)| (i, s.kind())).collect();
        assert_eq!(schemes, [(0, "reno"), (1, "dctcp"), (1 + ws, "cubic")]);
        assert_eq!(flows.iter().count(), flows.len());
    }
}
