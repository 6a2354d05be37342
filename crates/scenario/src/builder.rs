//! The typed builder: a scenario from Rust, with exactly the checks a scenario file gets.
//!
//! ```
//! use acclab_core::config::{RenoParams, SchemeConfig};
//! use acclab_core::{Duration, Rate};
//! use acclab_scenario::Scenario;
//!
//! let ms = Duration::from_millis;
//! let sc = Scenario::builder("dumbbell", Duration::from_secs(60))
//!     .duplex("s0", "r1", Rate::from_mbps(1000), ms(1))
//!     .duplex("r1", "r2", Rate::from_mbps(100), ms(10))
//!     .duplex("r2", "d0", Rate::from_mbps(1000), ms(1))
//!     .flow("f0", SchemeConfig::Reno(RenoParams::default()))
//!     .from("s0")
//!     .to("d0")
//!     .build()?;
//! assert_eq!(sc.flows.get(0).forward.len(), 3);
//! # Ok::<(), acclab_scenario::ScenarioError>(())
//! ```
//!
//! Methods that set a link's or a flow's keys (`queue`, `loss`; `from`, `to`, `start`, …) apply
//! to the links of the last `link`/`duplex` call or to the last `flow`. The builder makes a
//! [`ScenarioSpec`], so everything a file can say the builder can, and [`ScenarioSpec::resolve`]
//! checks both; an error names the key path as a patch writes it (`flow.f0.params.weight`).

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::link::{Jitter, LossModel};
use acclab_core::queue::shared_buffer::SharedBufferParams;
use acclab_core::{Bytes, Duration, Rate};

use crate::error::ScenarioError;
use crate::routing::Ecmp;
use crate::scenario::Scenario;
use crate::spec::{
    EventSpec, EventSpecAction, FlowSpec, LinkDelay, LinkRate, LinkSpec, ScenarioSpec,
    SharedBufferSpec,
};
use crate::topology::{Shape, Tier, TierLinks};
use crate::workload::WorkloadSpec;

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct ScenarioBuilder {
    def: ScenarioSpec,
    /// Links added by the last `link` or `duplex` call.
    last_links: std::ops::Range<usize>,
    /// A method called out of order (e.g. `from` before any `flow`), reported by `build`.
    misuse: Option<ScenarioError>,
}

impl Scenario {
    /// A scenario named `name` that runs for `duration`; see [`ScenarioBuilder`].
    pub fn builder(name: &str, duration: Duration) -> ScenarioBuilder {
        ScenarioBuilder::new(ScenarioSpec::new(name, duration))
    }
}

impl ScenarioBuilder {
    /// Continues from an existing scenario (e.g. one read from a file).
    pub fn new(def: ScenarioSpec) -> ScenarioBuilder {
        ScenarioBuilder {
            def,
            last_links: 0..0,
            misuse: None,
        }
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.def.seed = Some(seed);
        self
    }

    /// Data packet size, headers included (default 1000 B).
    pub fn packet_size(mut self, size: Bytes) -> Self {
        self.def.defaults.packet_size = Some(size);
        self
    }

    /// ACK and control packet size (default 40 B).
    pub fn ack_size(mut self, size: Bytes) -> Self {
        self.def.defaults.ack_size = Some(size);
        self
    }

    /// The queue of links added from now on that do not set their own (default: the file's
    /// `[defaults] queue` when the builder continues a file, else DropTail, 1000 packets).
    pub fn default_queue(mut self, queue: QueueConfig) -> Self {
        self.def.defaults.queue = Some(queue);
        self
    }

    /// The queue a link added now gets when it sets none (`default_queue`'s, or DropTail of
    /// 1000 packets).
    pub fn link_queue(&self) -> QueueConfig {
        self.def.defaults.link_queue()
    }

    /// A link from `from` to `to`.
    pub fn link(self, from: &str, to: &str, rate: Rate, delay: Duration) -> Self {
        self.links(&[(from, to)], rate, delay)
    }

    /// Two links, `a -> b` and `b -> a` (a file's `between = [a, b]`).
    pub fn duplex(self, a: &str, b: &str, rate: Rate, delay: Duration) -> Self {
        self.links(&[(a, b), (b, a)], rate, delay)
    }

    fn links(mut self, ends: &[(&str, &str)], rate: Rate, delay: Duration) -> Self {
        let first = self.def.links.len();
        for (from, to) in ends {
            self.def.links.push(LinkSpec {
                from: from.to_string(),
                to: to.to_string(),
                rate: rate.into(),
                delay: delay.into(),
                queue: self.def.defaults.link_queue(),
                loss: Default::default(),
                jitter: None,
            });
        }
        self.last_links = first..self.def.links.len();
        self
    }

    /// A generated fabric (see [`crate::topology`]): its links, both directions of every cable,
    /// each tier's rate, delay and queue from `tier`. Methods that set a link's keys then apply
    /// to all of them.
    pub fn topology(mut self, shape: Shape, tier: impl Fn(Tier) -> TierLinks) -> Self {
        if let Err((key, message)) = shape.validate() {
            self.misuse.get_or_insert(ScenarioError {
                file: self.def.name.clone(),
                line: None,
                key: format!("topology.{key}"),
                message,
            });
            return self;
        }
        let first = self.def.links.len();
        self.def
            .links
            .extend(shape.generate(&tier).into_iter().map(|(_, l)| l));
        self.last_links = first..self.def.links.len();
        self
    }

    /// Switches `nodes` each get a pool of `size` bytes that their output queues share, within
    /// the dynamic threshold α·(free pool) (`[[shared_buffer]]`; see
    /// [`acclab_core::queue::shared_buffer`]).
    pub fn shared_buffer(mut self, nodes: &[&str], size: Bytes, alpha: f64) -> Self {
        self.def.shared_buffers.push(SharedBufferSpec {
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            params: SharedBufferParams { size, alpha },
        });
        self
    }

    /// Multipath routing of the flows without an explicit path.
    pub fn ecmp(mut self, ecmp: Ecmp) -> Self {
        self.def.routing.ecmp = ecmp;
        self
    }

    /// The queue discipline of the last link(s) added.
    pub fn queue(self, queue: QueueConfig) -> Self {
        self.on_links("queue", |l| l.queue = queue.clone())
    }

    /// Random loss probability of the last link(s) added.
    pub fn loss(self, p: f64) -> Self {
        self.on_links("loss", |l| l.loss = LossModel::Bernoulli(p))
    }

    /// The loss model of the last link(s) added: Bernoulli or Gilbert–Elliott.
    pub fn loss_model(self, m: LossModel) -> Self {
        self.on_links("loss", |l| l.loss = m)
    }

    /// Delay variation on the last link(s) added.
    pub fn jitter(self, j: Jitter) -> Self {
        self.on_links("jitter", |l| l.jitter = Some(j))
    }

    /// The last link(s) added follow the capacity trace in `file` (Mahimahi's format) instead
    /// of their rate.
    pub fn capacity_trace(self, file: &str) -> Self {
        self.on_links("capacity_trace", |l| {
            l.rate = LinkRate::Trace {
                trace: file.to_string(),
            }
        })
    }

    /// The last link(s) added follow the delay trace in `file` (lines of `TIME DELAY`, ms)
    /// instead of their delay.
    pub fn delay_trace(self, file: &str) -> Self {
        self.on_links("delay_trace", |l| {
            l.delay = LinkDelay::Trace {
                trace: file.to_string(),
            }
        })
    }

    fn on_links(mut self, what: &str, mut f: impl FnMut(&mut LinkSpec)) -> Self {
        if self.last_links.is_empty() {
            self.misused(what, "links");
        }
        for l in &mut self.def.links[self.last_links.clone()] {
            f(l);
        }
        self
    }

    /// A flow of `scheme`; set its ends with [`from`](Self::from) and [`to`](Self::to).
    pub fn flow(mut self, id: &str, scheme: SchemeConfig) -> Self {
        self.def.flows.push(FlowSpec::new(id, scheme, "", ""));
        self
    }

    pub fn from(self, node: &str) -> Self {
        self.on_flow("from", |f| f.from = node.to_string())
    }

    pub fn to(self, node: &str) -> Self {
        self.on_flow("to", |f| f.to = node.to_string())
    }

    pub fn start(self, at: Duration) -> Self {
        self.on_flow("start", |f| f.start = Some(at))
    }

    /// A random extra start delay, uniform in [0, `jitter`).
    pub fn start_jitter(self, jitter: Duration) -> Self {
        self.on_flow("start_jitter", |f| f.start_jitter = Some(jitter))
    }

    pub fn stop(self, at: Duration) -> Self {
        self.on_flow("stop", |f| f.stop = Some(at))
    }

    /// The traffic class for class-based AQMs (default: the scheme's).
    pub fn class(self, class: &str) -> Self {
        self.on_flow("class", |f| f.class = Some(class.to_string()))
    }

    /// An explicit route, node by node from the flow's source to its destination.
    pub fn path(self, nodes: &[&str]) -> Self {
        self.on_flow("path", |f| {
            f.path = Some(nodes.iter().map(|n| n.to_string()).collect())
        })
    }

    fn on_flow(mut self, what: &str, f: impl FnOnce(&mut FlowSpec)) -> Self {
        match self.def.flows.last_mut() {
            Some(flow) => f(flow),
            None => self.misused(what, "flow"),
        }
        self
    }

    /// At `at`, the delay of link `link` (`"a->b"`) becomes `delay`.
    pub fn set_delay(mut self, at: Duration, link: &str, delay: Duration) -> Self {
        self.def.events.push(EventSpec {
            at,
            action: EventSpecAction::SetDelay {
                link: link.to_string(),
                delay,
            },
        });
        self
    }

    /// At `at`, the rate of link `link` (`"a->b"`) becomes `rate`.
    pub fn set_rate(mut self, at: Duration, link: &str, rate: Rate) -> Self {
        self.def.events.push(EventSpec {
            at,
            action: EventSpecAction::SetRate {
                link: link.to_string(),
                rate,
            },
        });
        self
    }

    /// Flows generated from a workload (`[[workload]]`: sizes at a load, incast, a traffic
    /// file), drawn when the scenario resolves.
    pub fn workload(mut self, workload: WorkloadSpec) -> Self {
        self.def.workloads.push(workload);
        self
    }

    /// Whether delays.csv holds every flow's one-way delay histogram (`[output]
    /// delay_histograms`).
    pub fn delay_histograms(mut self, on: bool) -> Self {
        self.def.output.delay_histograms = Some(on);
        self
    }

    /// Whether summary.json lists the flows of workloads too (`[output] flow_summaries`).
    pub fn flow_summaries(mut self, on: bool) -> Self {
        self.def.output.flow_summaries = Some(on);
        self
    }

    /// Whether the links' queueing delays come with their percentiles (`[output]
    /// queueing_percentiles`).
    pub fn queueing_percentiles(mut self, on: bool) -> Self {
        self.def.output.queueing_percentiles = Some(on);
        self
    }

    /// The flow-size buckets of the completion-time percentiles (`[output] fct_buckets`).
    pub fn fct_buckets(mut self, edges: &[Bytes]) -> Self {
        self.def.output.fct_buckets = Some(edges.to_vec());
        self
    }

    /// The measurement window (default: the second half of the run).
    pub fn window(mut self, from: Duration, to: Duration) -> Self {
        self.def.output.window = Some([from, to]);
        self
    }

    /// How often time series are sampled (default 100 ms).
    pub fn sample_interval(mut self, every: Duration) -> Self {
        self.def.output.sample_interval = Some(every);
        self
    }

    fn misused(&mut self, what: &str, needs: &str) {
        self.misuse.get_or_insert(ScenarioError {
            file: self.def.name.clone(),
            line: None,
            key: what.to_string(),
            message: format!("`{what}` was called before any {needs} was added"),
        });
    }

    /// The scenario as written so far, to patch, save or resolve later.
    pub fn into_def(self) -> Result<ScenarioSpec, ScenarioError> {
        match self.misuse {
            Some(e) => Err(e),
            None => Ok(self.def),
        }
    }

    /// Checks the scenario and builds the model.
    pub fn build(self) -> Result<Scenario, ScenarioError> {
        self.into_def()?.build()
    }
}
