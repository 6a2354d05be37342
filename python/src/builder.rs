//! The typed scenario builder for Python (`acclab.Builder`), mirroring the Rust one.

use acclab_scenario::ScenarioBuilder;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{scenario_error, to_toml, value_error, PyScenario};

fn duration(s: &str, key: &str) -> PyResult<acclab_core::Duration> {
    acclab_core::Duration::parse(s).map_err(|e| value_error(format!("{key}: {e}")))
}

fn rate(s: &str, key: &str) -> PyResult<acclab_core::Rate> {
    acclab_core::Rate::parse(s).map_err(|e| value_error(format!("{key}: {e}")))
}

/// `{"kind": "droptail", "limit": "100pkt"}` → a queue configuration.
fn queue(d: &Bound<'_, PyDict>) -> PyResult<acclab_core::config::QueueConfig> {
    let toml::Value::Table(mut t) = to_toml(d.as_any())? else {
        unreachable!("a dict is a table")
    };
    let Some(toml::Value::String(kind)) = t.remove("kind") else {
        return Err(value_error(
            "queue: give its \"kind\", e.g. {\"kind\": \"red\", …}",
        ));
    };
    acclab_core::config::QueueConfig::from_kind(&kind, toml::Value::Table(t))
        .map_err(|e| value_error(format!("queue: {e}")))
}

/// The typed builder, mirroring the Rust one: every method returns the builder.
#[pyclass(module = "acclab._acclab", name = "Builder")]
pub(crate) struct PyBuilder {
    inner: Option<ScenarioBuilder>,
}

/// A link's rate, delay, queue and loss as the Python methods take them.
type LinkArgs<'a, 'py> = (
    &'a str,
    &'a str,
    Option<&'a Bound<'py, PyDict>>,
    Option<f64>,
);

impl PyBuilder {
    /// Adds links with `add` and gives them the queue and loss of `args`.
    fn links<'p>(
        slf: PyRefMut<'p, Self>,
        (rate_, delay, queue_, loss): LinkArgs<'_, '_>,
        add: impl FnOnce(ScenarioBuilder, acclab_core::Rate, acclab_core::Duration) -> ScenarioBuilder,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let (r, d) = (rate(rate_, "rate")?, duration(delay, "delay")?);
        let q = queue_.map(queue).transpose()?;
        Self::with(slf, |b| {
            let b = add(b, r, d);
            let b = match q {
                Some(q) => b.queue(q),
                None => b,
            };
            Ok(match loss {
                Some(p) => b.loss(p),
                None => b,
            })
        })
    }

    fn with(
        mut slf: PyRefMut<'_, Self>,
        f: impl FnOnce(ScenarioBuilder) -> PyResult<ScenarioBuilder>,
    ) -> PyResult<PyRefMut<'_, Self>> {
        let b = slf
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this builder has been built already"))?;
        slf.inner = Some(f(b)?);
        Ok(slf)
    }
}

#[pymethods]
impl PyBuilder {
    /// A scenario named `name` that runs for `duration` (`"60s"`).
    #[new]
    fn new(name: &str, duration_: &str) -> PyResult<Self> {
        let d = duration(duration_, "duration")?;
        Ok(PyBuilder {
            inner: Some(acclab_scenario::Scenario::builder(name, d)),
        })
    }

    fn seed(slf: PyRefMut<'_, Self>, seed: u64) -> PyResult<PyRefMut<'_, Self>> {
        Self::with(slf, |b| Ok(b.seed(seed)))
    }

    /// The queue of links added from now on that do not set their own.
    fn default_queue<'p>(
        slf: PyRefMut<'p, Self>,
        queue_: &Bound<'_, PyDict>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let q = queue(queue_)?;
        Self::with(slf, |b| Ok(b.default_queue(q)))
    }

    /// A link `src -> dst`, with an optional queue (`{"kind": …, …}`) and loss probability.
    #[pyo3(signature = (src, dst, rate_, delay, queue_ = None, loss = None))]
    fn link<'p>(
        slf: PyRefMut<'p, Self>,
        src: &str,
        dst: &str,
        rate_: &str,
        delay: &str,
        queue_: Option<&Bound<'_, PyDict>>,
        loss: Option<f64>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        Self::links(slf, (rate_, delay, queue_, loss), |b, r, d| {
            b.link(src, dst, r, d)
        })
    }

    /// Two links, `a -> b` and `b -> a`.
    #[pyo3(signature = (a, b, rate_, delay, queue_ = None, loss = None))]
    fn duplex<'p>(
        slf: PyRefMut<'p, Self>,
        a: &str,
        b: &str,
        rate_: &str,
        delay: &str,
        queue_: Option<&Bound<'_, PyDict>>,
        loss: Option<f64>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        Self::links(slf, (rate_, delay, queue_, loss), |bld, r, d| {
            bld.duplex(a, b, r, d)
        })
    }

    /// A flow of `kind` (`"reno"`, `"monaco"`, …) from `src` to `dst`, with its parameters.
    #[pyo3(signature = (id, kind, src, dst, params = None, start = None, stop = None, start_jitter = None, class_ = None, path = None))]
    #[allow(clippy::too_many_arguments)]
    fn flow<'p>(
        slf: PyRefMut<'p, Self>,
        id: &str,
        kind: &str,
        src: &str,
        dst: &str,
        params: Option<&Bound<'_, PyDict>>,
        start: Option<&str>,
        stop: Option<&str>,
        start_jitter: Option<&str>,
        class_: Option<&str>,
        path: Option<Vec<String>>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let p = match params {
            Some(d) => to_toml(d.as_any())?,
            None => toml::Value::Table(Default::default()),
        };
        let scheme = acclab_core::config::SchemeConfig::from_kind(kind, p)
            .map_err(|e| value_error(format!("flow {id:?}: {e}")))?;
        let start = start.map(|s| duration(s, "start")).transpose()?;
        let stop = stop.map(|s| duration(s, "stop")).transpose()?;
        let jitter = start_jitter
            .map(|s| duration(s, "start_jitter"))
            .transpose()?;
        Self::with(slf, |b| {
            let mut b = b.flow(id, scheme).from(src).to(dst);
            if let Some(t) = start {
                b = b.start(t);
            }
            if let Some(t) = stop {
                b = b.stop(t);
            }
            if let Some(t) = jitter {
                b = b.start_jitter(t);
            }
            if let Some(c) = class_ {
                b = b.class(c);
            }
            if let Some(p) = &path {
                let nodes: Vec<&str> = p.iter().map(String::as_str).collect();
                b = b.path(&nodes);
            }
            Ok(b)
        })
    }

    /// A generated fabric, as a file's `[topology]`: `kind` `"fat-tree"` (with `k` and
    /// `oversubscription`) or `"leaf-spine"` (`leaves`, `spines`, `hosts_per_leaf`); every link at
    /// `rate_` and `delay` with `queue_` (default: the default queue), and `tiers` overriding them
    /// per tier (`{"core": {"rate": "40Gbps"}}`; tiers `host`, `aggregation`, `core`, `spine`).
    #[pyo3(signature = (kind, rate_, delay, queue_ = None, k = None, oversubscription = None, leaves = None, spines = None, hosts_per_leaf = None, tiers = None))]
    #[allow(clippy::too_many_arguments)]
    fn topology<'p>(
        slf: PyRefMut<'p, Self>,
        kind: &str,
        rate_: &str,
        delay: &str,
        queue_: Option<&Bound<'_, PyDict>>,
        k: Option<u32>,
        oversubscription: Option<u32>,
        leaves: Option<u32>,
        spines: Option<u32>,
        hosts_per_leaf: Option<u32>,
        tiers: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        use acclab_scenario::{Shape, Tier, TierLinks};
        let need = |v: Option<u32>, key: &str| {
            v.ok_or_else(|| value_error(format!("topology: a {kind} needs `{key}`")))
        };
        let (shape, unused) = match kind {
            "fat-tree" => (
                Shape::FatTree {
                    k: need(k, "k")?,
                    oversubscription: oversubscription.unwrap_or(1),
                },
                [
                    ("leaves", leaves),
                    ("spines", spines),
                    ("hosts_per_leaf", hosts_per_leaf),
                ],
            ),
            "leaf-spine" => (
                Shape::LeafSpine {
                    leaves: need(leaves, "leaves")?,
                    spines: need(spines, "spines")?,
                    hosts_per_leaf: need(hosts_per_leaf, "hosts_per_leaf")?,
                },
                [("k", k), ("oversubscription", oversubscription), ("", None)],
            ),
            other => {
                return Err(value_error(format!(
                    "topology: unknown kind {other:?}; one of fat-tree, leaf-spine"
                )))
            }
        };
        if let Some((key, _)) = unused.iter().find(|(_, v)| v.is_some()) {
            return Err(value_error(format!(
                "topology: `{key}` is not a key of a {kind}"
            )));
        }
        let base = TierLinks {
            rate: rate(rate_, "rate")?,
            delay: duration(delay, "delay")?,
            queue: match queue_ {
                Some(q) => queue(q)?,
                None => slf
                    .inner
                    .as_ref()
                    .map(|b| b.link_queue())
                    .unwrap_or_else(acclab_core::config::QueueConfig::default_queue),
            },
        };
        let mut own: Vec<(Tier, TierLinks)> = Vec::new();
        for (name, d) in tiers.map(|t| t.iter()).into_iter().flatten() {
            let name: String = name.extract()?;
            let tier = *shape
                .tiers()
                .iter()
                .find(|t| t.key() == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = shape.tiers().iter().map(|t| t.key()).collect();
                    value_error(format!(
                        "topology: a {kind} has no tier {name:?} (its tiers: {})",
                        names.join(", ")
                    ))
                })?;
            let d = d.cast::<PyDict>()?;
            let mut links = base.clone();
            for (key, v) in d.iter() {
                let key: String = key.extract()?;
                let at = format!("topology tier {name}: {key}");
                match key.as_str() {
                    "rate" => links.rate = rate(&v.extract::<String>()?, &at)?,
                    "delay" => links.delay = duration(&v.extract::<String>()?, &at)?,
                    "queue" => links.queue = queue(v.cast::<PyDict>()?)?,
                    _ => return Err(value_error(format!("{at}: not a key (rate, delay, queue)"))),
                }
            }
            own.push((tier, links));
        }
        Self::with(slf, |b| {
            Ok(b.topology(shape, |tier| {
                own.iter()
                    .find(|(t, _)| *t == tier)
                    .map_or_else(|| base.clone(), |(_, l)| l.clone())
            }))
        })
    }

    /// Flows generated from a workload, as a file's `[[workload]]` table with the same keys:
    /// `{"id": "ws", "kind": "dctcp", "sizes": "websearch", "load": 0.5}` (all-to-all at a
    /// load), `"pattern"` `"incast"` (`senders`, `size`, `period`, `receiver`), `"permutation"`
    /// or `"file"` (`file`); `start`, `stop` and the kind's parameters as in a file.
    fn workload<'p>(
        slf: PyRefMut<'p, Self>,
        table: &Bound<'_, PyDict>,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let toml::Value::Table(t) = to_toml(table.as_any())? else {
            unreachable!("a dict is a table")
        };
        let w = acclab_scenario::file::workload_from_table(t).map_err(value_error)?;
        Self::with(slf, |b| Ok(b.workload(w)))
    }

    /// Switches `nodes` each get a pool of `size` bytes (`"4MB"`) that their output queues
    /// share, each within α·(free pool) (`[[shared_buffer]]`; α = 1 by default).
    #[pyo3(signature = (nodes, size, alpha = acclab_core::queue::shared_buffer::SharedBufferParams::DEFAULT_ALPHA))]
    fn shared_buffer<'p>(
        slf: PyRefMut<'p, Self>,
        nodes: Vec<String>,
        size: &str,
        alpha: f64,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let size =
            acclab_core::Bytes::parse(size).map_err(|e| value_error(format!("size: {e}")))?;
        Self::with(slf, |b| {
            let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
            Ok(b.shared_buffer(&nodes, size, alpha))
        })
    }

    /// Multipath routing of the flows without a path: `"none"` (one shortest path, the
    /// default), `"flow"` (per-flow ECMP) or `"packet"` (packet spraying).
    fn ecmp<'p>(slf: PyRefMut<'p, Self>, mode: &str) -> PyResult<PyRefMut<'p, Self>> {
        let ecmp: acclab_scenario::Ecmp = toml::Value::String(mode.to_string())
            .try_into()
            .map_err(|_| value_error(format!("ecmp: {mode:?} is not one of none, flow, packet")))?;
        Self::with(slf, |b| Ok(b.ecmp(ecmp)))
    }

    /// The measurement window (`"20s"`, `"60s"`).
    fn window<'p>(slf: PyRefMut<'p, Self>, start: &str, end: &str) -> PyResult<PyRefMut<'p, Self>> {
        let (a, b) = (duration(start, "window")?, duration(end, "window")?);
        Self::with(slf, |bld| Ok(bld.window(a, b)))
    }

    fn sample_interval<'p>(slf: PyRefMut<'p, Self>, every: &str) -> PyResult<PyRefMut<'p, Self>> {
        let d = duration(every, "sample_interval")?;
        Self::with(slf, |b| Ok(b.sample_interval(d)))
    }

    /// At time `at`, link `link` (`"a->b"`) changes its rate.
    fn set_rate<'p>(
        slf: PyRefMut<'p, Self>,
        at: &str,
        link: &str,
        rate_: &str,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let (t, r) = (duration(at, "at")?, rate(rate_, "rate")?);
        Self::with(slf, |b| Ok(b.set_rate(t, link, r)))
    }

    /// At time `at`, link `link` changes its propagation delay.
    fn set_delay<'p>(
        slf: PyRefMut<'p, Self>,
        at: &str,
        link: &str,
        delay: &str,
    ) -> PyResult<PyRefMut<'p, Self>> {
        let (t, d) = (duration(at, "at")?, duration(delay, "delay")?);
        Self::with(slf, |b| Ok(b.set_delay(t, link, d)))
    }

    /// The scenario, checked whole.
    fn build(&mut self, py: Python<'_>) -> PyResult<PyScenario> {
        let b = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this builder has been built already"))?;
        let def = b.into_def().map_err(|e| scenario_error(py, e))?;
        def.build().map_err(|e| scenario_error(py, e))?;
        Ok(PyScenario { def, sweep: None })
    }
}
