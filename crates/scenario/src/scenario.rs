//! The scenario model: what a validated scenario holds, whatever front end (TOML file or the
//! builder) made it. Ids are indices into the scenario's own vectors.

use acclab_core::config::{FlowContext, QueueConfig, SchemeConfig};
use acclab_core::link::{CapacityTrace, Jitter, LossModel};
use acclab_core::transport::{Endpoint, EndpointSlot};
use acclab_core::{rng, FlowId};
use acclab_core::{Duration, Rate, Time};
use rand::RngExt;

pub use crate::flows::FlowDef;
pub use crate::ids::{LinkId, NodeId};

/// A scenario ready to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub duration: Duration,
    pub seed: u64,
    pub packet_size: u32,
    pub ack_size: u32,
    pub nodes: Vec<String>,
    pub links: Vec<LinkDef>,
    /// Nodes whose output queues share a pool of memory, at most one entry per node.
    pub shared_buffers: Vec<SharedBufferDef>,
    pub flows: crate::flows::Flows,
    pub events: Vec<EventDef>,
    pub output: OutputDef,
    /// Where the `kind = "python"` flows get their controllers: given by the `acclab` Python
    /// package (`acclab.run(sc, controllers = {...})`), never by a file.
    pub controllers: acclab_core::config::Controllers,
}

/// A node (a switch) whose links' output queues share one pool of memory
/// ([`acclab_core::queue::shared_buffer`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SharedBufferDef {
    pub node: NodeId,
    pub params: acclab_core::queue::shared_buffer::SharedBufferParams,
}

/// One unidirectional link, named `"from->to"`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDef {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    /// The link's rate: for a link whose capacity follows a trace, the trace's mean capacity
    /// (what the theory, the model tier and rate-aware queues use).
    pub rate: Rate,
    /// The capacity trace the link follows instead of serialising at `rate`.
    pub capacity: Option<CapacityTraceDef>,
    /// The propagation delay; for a link whose delay follows a trace, the trace's mean over the
    /// run (what the theory and the model tier use), the run itself following the trace's
    /// changes (`set_delay` events at the end of `Scenario::events`).
    pub delay: Duration,
    /// The delay trace the link follows, if any (its file).
    pub delay_trace: Option<String>,
    pub queue: QueueConfig,
    /// Random loss (transmission errors) before the queue.
    pub loss: LossModel,
    /// Delay variation around `delay`.
    pub jitter: Option<Jitter>,
}

/// A link's capacity trace and the file it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityTraceDef {
    pub file: String,
    pub trace: std::sync::Arc<CapacityTrace>,
}

/// A scheduled change.
#[derive(Clone, Debug, PartialEq)]
pub struct EventDef {
    pub at: Time,
    pub action: EventAction,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventAction {
    SetDelay { link: LinkId, delay: Duration },
    SetRate { link: LinkId, rate: Rate },
}

/// What to measure and when.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputDef {
    pub window: (Time, Time),
    pub sample_interval: Duration,
    /// Per-packet traces, off unless asked for.
    pub trace: Option<TraceDef>,
    /// The links the run plots show; empty: the bottlenecks, found from the run's queues.
    pub plot_links: Vec<LinkId>,
    /// Upper edges (bytes, increasing) of the flow-size buckets of the completion-time
    /// percentiles.
    pub fct_buckets: Vec<u64>,
    /// Whether delays.csv holds every flow's one-way delay histogram (`[output]
    /// delay_histograms`; by default on, off with `[[workload]]` tables).
    pub delay_histograms: bool,
    /// Whether the links' queueing delays come with their percentiles (`[output]
    /// queueing_percentiles`; by default on), or as their mean alone.
    pub queueing_percentiles: bool,
    /// How many flows summary.json lists, the first of [`Scenario::flows`] (`None`: every
    /// flow). With `[[workload]]` tables, by default those of the `[[flow]]` tables, which come
    /// first (`[output] flow_summaries`): fct.csv lists a workload's flows.
    pub summary_flows: Option<usize>,
}

/// A packet trace's file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// pcapng with synthesised IPv4/TCP/UDP headers (`pcap/`, a file per link and capture
    /// point): Wireshark, tshark and tcpdump read them.
    #[default]
    Pcap,
    /// One row per event (`trace.csv`).
    Csv,
}

/// Where a pcap trace captures a link's packets. Each capture point is a file of its own, so
/// that a packet is recorded once per file, as one tcpdump would see it (Wireshark reads two
/// records of one packet in a file as a retransmission).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Capture {
    /// As packets leave onto the link (what tcpdump on the sending interface sees): one
    /// record per transmission, CE set where the queue marked.
    #[default]
    Wire,
    /// As packets arrive at the link's queue: one record per arrival, those dropped included
    /// (the record's comment says why).
    Queue,
    /// Both points, each its own file.
    Both,
}

impl Capture {
    pub fn is_wire(&self) -> bool {
        *self == Capture::Wire
    }
}

/// What to trace: every enqueue, transmission, drop and mark at the chosen links, and of the
/// chosen flows' packets wherever they are.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDef {
    pub links: Vec<LinkId>,
    /// Flows by index.
    pub flows: Vec<u32>,
    pub format: TraceFormat,
    /// A pcap trace's capture points (a CSV trace lists every event, named).
    pub capture: Capture,
}

impl Scenario {
    /// The sender and receiver of every flow, built from their scheme configurations:
    /// `[sender 0, receiver 0, sender 1, …]` (each at its [`EndpointSlot`]).
    pub fn build_endpoints(&self) -> Vec<Box<dyn Endpoint>> {
        let mut endpoints: Vec<Box<dyn Endpoint>> =
            Vec::with_capacity(EndpointSlot::count(self.flows.len()));
        for i in 0..self.flows.len() {
            let (tx, rx) = self.build_flow_endpoints(i);
            endpoints.push(tx);
            endpoints.push(rx);
        }
        endpoints
    }

    /// Flow `i`'s sender and receiver, built from its scheme configuration, as they are at
    /// the start of a run.
    pub fn build_flow_endpoints(&self, i: usize) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let f = self.flows.get(i);
        f.scheme.build(&FlowContext {
            flow: FlowId(i as u32),
            packet_size: self.packet_size,
            ack_size: self.ack_size,
            seed: self.seed,
            name: f.id.clone(),
            hops: f.forward.len() as u32,
            line_rate: f
                .forward
                .first()
                .map_or(Rate(0), |l| self.links[l.0 as usize].rate),
            base_rtt: self.base_rtt(i),
            start: self.flow_times(i).0,
            controllers: self.controllers.clone(),
        })
    }

    /// The controller-state columns of flows.csv: the variables of every scheme's senders
    /// (`Endpoint::cc_state`), in the order first met (a TCP sender's `ssthresh_bytes` and
    /// `pacing_rate_bps`, then its controller's own), read from one sender of each scheme built
    /// for the purpose — but for Python and agent controllers, whose construction runs Python
    /// code: theirs are a TCP sender's (their own state is Python's). Every tier writes these
    /// columns, so that its flows.csv has the simulator's shape.
    pub fn cc_columns(&self) -> Vec<String> {
        let mut columns: Vec<String> = Vec::new();
        let mut add = |name: &str| {
            if !columns.iter().any(|c| c == name) {
                columns.push(name.to_string());
            }
        };
        let mut kinds: Vec<&str> = Vec::new();
        for (i, scheme) in self.flows.schemes() {
            let kind = scheme.kind();
            if kinds.contains(&kind) {
                continue;
            }
            kinds.push(kind);
            if matches!(kind, "python" | "agent") {
                acclab_core::transport::tcp::TCP_STATE
                    .iter()
                    .for_each(|n| add(n));
                continue;
            }
            for (name, _) in self.build_flow_endpoints(i).0.cc_state().iter() {
                add(name);
            }
        }
        columns
    }

    /// When flow `i` starts (its start jitter drawn from the run's seed) and stops: every tier
    /// starts it then.
    pub fn flow_times(&self, i: usize) -> (Time, Option<Time>) {
        // A workload's flows start when drawn, and stop when done.
        let Some(f) = self.flows.written().get(i) else {
            return (self.flows.start(i), None);
        };
        let jitter = if f.start_jitter.0 > 0 {
            let mut r = rng::stream(self.seed, &format!("flow:{}:start", f.id));
            Duration(r.random_range(0..f.start_jitter.0))
        } else {
            Duration::ZERO
        };
        (f.start + jitter, f.stop)
    }

    /// For each node, the index of its pool in `shared_buffers`, if it has one (one pass, so
    /// that a fabric's links find theirs without a scan each).
    pub fn shared_buffer_of_node(&self) -> Vec<Option<u32>> {
        let mut of = vec![None; self.nodes.len()];
        for (i, b) in self.shared_buffers.iter().enumerate() {
            of[b.node.0 as usize] = Some(i as u32);
        }
        of
    }

    /// Flow `i`'s unloaded round-trip time: the delays of its forward and reverse links, one
    /// data packet's transmission on each forward link and one ACK's on each reverse link.
    pub fn base_rtt(&self, i: usize) -> Duration {
        let (forward, reverse) = self.flows.routes(i);
        let way = |route: &[LinkId], size: u32| -> Duration {
            route
                .iter()
                .map(|l| &self.links[l.0 as usize])
                .fold(Duration::ZERO, |t, l| {
                    t + l.delay + l.rate.tx_time(u64::from(size))
                })
        };
        way(forward, self.packet_size) + way(reverse, self.ack_size)
    }

    /// How many flows summary.json lists: the first [`OutputDef::summary_flows`], or all.
    pub fn listed_flows(&self) -> usize {
        self.output
            .summary_flows
            .map_or(self.flows.len(), |n| n.min(self.flows.len()))
    }

    /// The ideal completion time of flow `i`'s finite transfer, were it alone in the network:
    /// from its start until the ACK of its last byte is back, its packets sent back-to-back at
    /// line rate and forwarded store-and-forward, the last one possibly short. With full
    /// packets of transmission time t_j on hop j and delay d_j, full packet k leaves hop h at
    /// Σ_{j≤h} t_j + Σ_{j<h} d_j + (k − 1)·max_{j≤h} t_j (a tandem of store-and-forward
    /// links paces a train at its slowest hop so far); the last packet leaves each hop when it
    /// has arrived and the packet before it has left, plus its own transmission time. Then the
    /// last ACK's transmission and propagation back. `None` for bulk flows and schemes without
    /// a size.
    pub fn ideal_fct(&self, i: usize) -> Option<Duration> {
        let size = self.flows.size(i)?.0.max(1);
        let (forward, reverse) = self.flows.routes(i);
        let p = u64::from(self.packet_size);
        let full = (size - 1) / p; // full packets before the last one
        let last = size - full * p;
        let mut t_full = Duration::ZERO; // Σ_{j≤h} t_j + Σ_{j<h} d_j
        let mut slowest = Duration::ZERO; // max_{j≤h} t_j
        let mut last_ready = Duration::ZERO; // when the last packet is at hop h's queue
        for l in forward.iter().map(|l| &self.links[l.0 as usize]) {
            let tx = l.rate.tx_time(p);
            t_full += tx;
            slowest = slowest.max(tx);
            let ahead = match full {
                0 => Duration::ZERO,
                k => t_full + slowest.saturating_mul(k - 1),
            };
            let left = last_ready.max(ahead) + l.rate.tx_time(last);
            last_ready = left + l.delay;
            t_full += l.delay;
        }
        let mut t = last_ready;
        for l in reverse.iter().map(|l| &self.links[l.0 as usize]) {
            t += l.delay + l.rate.tx_time(u64::from(self.ack_size));
        }
        Some(t)
    }

    /// The finite flows between hosts named `h<number>` as a traffic file's flows (host index =
    /// the number), in order of start; empty when there are none. Runs write them as
    /// `traffic.txt` ([`crate::workload::write_flow_file`], the HPCC simulator's format), so
    /// that a generated workload can be run again elsewhere (`pattern = "file"`) or by another
    /// simulator.
    pub fn traffic(&self) -> Vec<crate::workload::FileFlow> {
        let host = |n: NodeId| -> Option<usize> {
            self.nodes[n.0 as usize].strip_prefix('h')?.parse().ok()
        };
        // Reserved for every flow: grown by doubling, a million flows' would take up to 64 MB.
        let mut flows = Vec::with_capacity(self.flows.len());
        flows.extend((0..self.flows.len()).filter_map(|i| {
            let (src, dst) = self.flows.ends(i);
            Some(crate::workload::FileFlow {
                src: host(src)?,
                dst: host(dst)?,
                size: self.flows.size(i)?.0,
                start: Duration(self.flow_times(i).0 .0),
            })
        }));
        flows.sort_by_key(|f| (f.start, f.src));
        flows
    }

    /// The first flow that a real stack runs (`kernel-tcp`, `command`), not acclab's endpoints.
    pub fn first_external_flow(&self) -> Option<crate::flows::FlowView<'_>> {
        let (i, _) = self.flows.schemes().find(|(_, s)| s.external().is_some())?;
        Some(self.flows.get(i))
    }

    /// Why the simulator cannot run this scenario: its first flow that acclab's endpoints do not
    /// run (`kind = "kernel-tcp"` or `"command"`), which only live mode's network namespaces can.
    pub fn not_simulable(&self) -> Option<String> {
        if !self.controllers.is_some() {
            if let Some((i, _)) = self
                .flows
                .schemes()
                .find(|(_, s)| matches!(s, SchemeConfig::Python(_)))
            {
                let f = self.flows.get(i);
                return Some(format!(
                    "flow {:?} (kind = \"python\") has a controller written in Python, which runs \
                     from Python's acclab package: `acclab.run(acclab.load(FILE), \
                     controllers = {{...}})`",
                    f.id
                ));
            }
        }
        let f = self.first_external_flow()?;
        Some(format!(
            "flow {:?} (kind = {:?}) is {}, which runs only in `acclab live run --netns` (as root); \
             the simulator runs acclab's own schemes (e.g. kind = \"reno\", \"cubic\", \"bbr\")",
            f.id,
            f.scheme.kind(),
            f.scheme.external().unwrap_or_default()
        ))
    }

    /// What in the scenario is valid but probably not what was meant, for `acclab check` and
    /// `acclab run` to say before running.
    ///
    /// Monaco measures a flow's accumulation from the delay its out-of-band control packet sees
    /// against the in-band one, and 000 §IV-B has the out-of-band packet skip the data queue: a
    /// router without a priority band makes it wait behind the data, so the estimate (and the
    /// window) is wrong — many times the target, long queues, other flows starved.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        // An ECN scheme (DCTCP above all) whose path never marks sees only losses.
        let marks = |route: &[LinkId]| {
            route
                .iter()
                .any(|l| self.links[l.0 as usize].queue.params().marks_ecn())
        };
        let unmarked: Vec<usize> = (0..self.flows.len())
            .filter(|&i| self.flows.scheme_but_size(i).ecn() && !marks(self.flows.routes(i).0))
            .collect();
        if let Some(&i) = unmarked.first() {
            let f = self.flows.get(i);
            let more = match unmarked.len() {
                1 => String::new(),
                n => format!(" (and {} other flow(s))", n - 1),
            };
            out.push(format!(
                "flow {:?}{more} uses ECN ({}), but no queue on its path marks packets: it sees only losses, as a loss-based scheme — give its bottleneck a marking queue (kind = \"step-ecn\", or ecn = true on red, pie, codel, fq-codel)",
                f.id,
                f.scheme.kind()
            ));
        }
        // One warning for all Monaco flows (a workload may hold a million): the first flow, how
        // many others, and the links without a priority band on any of their paths.
        let mut plain = vec![false; self.links.len()];
        let mut monaco = (0..self.flows.len())
            .filter(|&i| matches!(self.flows.scheme_but_size(i), SchemeConfig::Monaco(_)))
            .filter(|&i| {
                let mut any = false;
                for l in self.flows.routes(i).0 {
                    if !self.links[l.0 as usize].queue.params().priority_band() {
                        plain[l.0 as usize] = true;
                        any = true;
                    }
                }
                any
            });
        if let Some(first) = monaco.next() {
            let more = match monaco.count() {
                0 => String::new(),
                n => format!(" (and {n} other flow(s))"),
            };
            const SHOWN: usize = 8;
            let names: Vec<String> = (self.links.iter().zip(&plain))
                .filter(|(_, &p)| p)
                .map(|(l, _)| format!("{} ({})", l.name, l.queue.kind()))
                .collect();
            let listed = match names.len() {
                n if n > SHOWN => format!("{} and {} more", names[..SHOWN].join(", "), n - SHOWN),
                _ => names.join(", "),
            };
            out.push(format!(
                "flow {:?}{more} is Monaco, but link(s) {listed} on its path(s) have no priority band: its out-of-band control packets wait behind the data there, which Monaco's accumulation estimate assumes they skip (000 §IV-B) — give those queues `priority = true` (or kind = \"priority\")",
                self.flows.id(first),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_ecn_scheme_over_queues_that_never_mark_is_warned_of() {
        let text = |queue: &str, params: &str| {
            format!(
                "name = \"w\"\nduration = \"1s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\nqueue = {queue}\n[[flow]]\ncount = 2\nid = \"d{{i}}\"\nkind = \"dctcp\"\nfrom = \"a\"\nto = \"b\"\n[[flow]]\nid = \"r\"\nkind = \"reno\"\nparams = {params}\nfrom = \"a\"\nto = \"b\"\n"
            )
        };
        let droptail = "{ kind = \"droptail\", limit = \"100pkt\" }";
        let w = crate::parse(&text(droptail, "{}"), "w").unwrap().warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("flow \"d0\" (and 1 other flow(s)) uses ECN (dctcp)"),
            "{w:?}"
        );
        let w = crate::parse(&text(droptail, "{ ecn = true }"), "w")
            .unwrap()
            .warnings();
        assert!(w[0].contains("(and 2 other flow(s))"), "{w:?}");
        for marking in [
            "{ kind = \"step-ecn\", limit = \"100pkt\", threshold = \"20pkt\" }",
            "{ kind = \"red\", limit = \"100pkt\", min_th = \"10pkt\", max_th = \"30pkt\", ecn = true }",
            "{ kind = \"codel\", limit = \"100pkt\", ecn = true }",
        ] {
            let w = crate::parse(&text(marking, "{ ecn = true }"), "w").unwrap().warnings();
            assert!(w.is_empty(), "{marking}: {w:?}");
        }
        let red = "{ kind = \"red\", limit = \"100pkt\", min_th = \"10pkt\", max_th = \"30pkt\" }";
        assert_eq!(
            crate::parse(&text(red, "{}"), "w")
                .unwrap()
                .warnings()
                .len(),
            1
        );
    }

    #[test]
    fn monaco_over_a_queue_without_a_priority_band_is_warned_of() {
        let text = |queue: &str| {
            format!(
                "name = \"w\"\nduration = \"1s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\nqueue = {queue}\n[[flow]]\nid = \"m\"\nkind = \"monaco\"\nfrom = \"a\"\nto = \"b\"\n[[flow]]\nid = \"r\"\nkind = \"reno\"\nfrom = \"a\"\nto = \"b\"\n"
            )
        };
        let sc = crate::parse(&text("{ kind = \"droptail\", limit = \"100pkt\" }"), "w").unwrap();
        let w = sc.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("flow \"m\"") && w[0].contains("a->b (droptail)"),
            "{w:?}"
        );
        // Many Monaco flows: one warning, naming the first and counting the rest.
        let many = text("{ kind = \"droptail\", limit = \"100pkt\" }")
            .replace("id = \"m\"\nkind", "count = 1000\nid = \"m{i}\"\nkind");
        let w = crate::parse(&many, "w").unwrap().warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("flow \"m0\" (and 999 other flow(s)) is Monaco"),
            "{w:?}"
        );
        for ok in [
            "{ kind = \"droptail\", limit = \"100pkt\", priority = true }",
            "{ kind = \"priority\", limit = \"100pkt\" }",
            "{ kind = \"avq\", mode = \"delay\", limit = \"100pkt\", priority = true }",
        ] {
            assert!(
                crate::parse(&text(ok), "w").unwrap().warnings().is_empty(),
                "{ok}"
            );
        }
    }
}
