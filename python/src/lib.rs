//! `acclab._acclab`: the native half of the Python package (python/acclab/ is the other half,
//! which turns what this returns into pandas DataFrames).
//!
//! Everything here is a thin layer over the Rust crates: scenarios are `ScenarioSpec`s (loaded,
//! patched by key path and built by the same code as the command line), runs go through
//! `acclab_study::run_scenario`, sweeps through `acclab_study`'s plan, runner and tables. The GIL
//! is released while simulating. What crosses to Dask workers is plain data — scenario text,
//! patches as TOML text, a seed — never these classes (a `Scenario` pickles as its text).

mod controller;
mod gym;

use std::path::PathBuf;

use acclab_scenario::sweep_spec::{Axis, Seeds, SweepSpec};
use acclab_scenario::{ScenarioBuilder, ScenarioError, ScenarioSpec};
use acclab_study::plan::Plan;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// A scenario error as `acclab.ScenarioError` (a ValueError with `file`, `line`, `key`).
fn scenario_error(py: Python<'_>, e: ScenarioError) -> PyErr {
    let made = py
        .import("acclab")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((e.message.clone(), e.file.clone(), e.line, e.key.clone())));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(_) => PyValueError::new_err(e.to_string()),
    }
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An exception raised in Python code that native work called back (a progress callback, or a
/// KeyboardInterrupt found while checking for signals): it ends the work by unwinding, without
/// the panic hook ([`std::panic::resume_unwind`]), and [`guarded`] raises it again.
pub(crate) struct Raised(pub(crate) PyErr);

/// Runs native work (the GIL released) so that no Rust panic crosses into Python: an exception
/// from a callback ([`Raised`]) comes back as itself; any other panic — a bug — as a
/// RuntimeError that says so, never as pyo3's `PanicException`, which `except Exception`
/// misses.
fn guarded<T>(work: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|payload| {
        match payload.downcast::<Raised>() {
            Ok(raised) => raised.0,
            Err(payload) => {
                let what = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                PyRuntimeError::new_err(format!(
                    "acclab failed inside (a bug; please report it): {what}"
                ))
            }
        }
    })
}

/// Called from native work with the GIL released, on the thread that released it: checks for a
/// pending signal (Ctrl-C's KeyboardInterrupt is raised only here, on Python's main thread) and
/// calls `callback(fraction)`; an exception from either ends the work ([`Raised`]).
fn call_back(callback: Option<&Py<PyAny>>, fraction: f64) {
    let outcome = Python::attach(|py| {
        py.check_signals()?;
        match callback {
            Some(cb) => cb.call1(py, (fraction,)).map(drop),
            None => Ok(()),
        }
    });
    if let Err(e) = outcome {
        std::panic::resume_unwind(Box::new(Raised(e)));
    }
}

/// A Python value as a TOML value: bool, int, float, list/tuple, dict; a str as on a command
/// line (`"10Mbps"` stays a string, `"10"` is the number 10).
fn to_toml(v: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    Ok(if v.is_instance_of::<PyBool>() {
        toml::Value::Boolean(v.extract()?)
    } else if v.is_instance_of::<PyInt>() {
        toml::Value::Integer(v.extract()?)
    } else if v.is_instance_of::<PyFloat>() {
        toml::Value::Float(v.extract()?)
    } else if v.is_instance_of::<PyString>() {
        acclab_scenario::value_of(&v.extract::<String>()?)
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        toml::Value::Array(
            v.try_iter()?
                .map(|x| to_toml(&x?))
                .collect::<PyResult<_>>()?,
        )
    } else if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            t.insert(k.extract::<String>()?, to_toml(&x)?);
        }
        toml::Value::Table(t)
    } else {
        return Err(PyTypeError::new_err(format!(
            "a scenario value is a bool, int, float, str, list or dict, not {}",
            v.get_type().name()?
        )));
    })
}

/// A scenario: read from a file or text, made by a `Builder`, patched by key path.
#[pyclass(module = "acclab._acclab", name = "Scenario", from_py_object)]
#[derive(Clone)]
struct PyScenario {
    def: ScenarioSpec,
    /// The file's `[sweep]` table, if it had one.
    sweep: Option<SweepSpec>,
}

#[pymethods]
impl PyScenario {
    /// Reads a scenario file (and its `[sweep]` table, if any).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let (def, sweep) =
            acclab_scenario::sweep_spec::load(&path).map_err(|e| scenario_error(py, e))?;
        Ok(PyScenario { def, sweep })
    }

    /// Reads scenario text; `file` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, file = "<string>"))]
    fn parse(py: Python<'_>, text: &str, file: &str) -> PyResult<Self> {
        let err = |e| scenario_error(py, e);
        acclab_scenario::parse(text, file).map_err(err)?;
        let def = acclab_scenario::parse_spec(text, file).map_err(err)?;
        let sweep = SweepSpec::from_file_text(text, file).map_err(err)?;
        Ok(PyScenario { def, sweep })
    }

    /// Sets the value at a key path (`flow.f0.params.weight`, `link."r1->r2".rate`), checked
    /// as the file would be; a rejected value leaves the scenario as it was.
    fn set(&mut self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = to_toml(value)?;
        self.def.set(key, v).map_err(|e| scenario_error(py, e))
    }

    /// Sets several key paths at once and then checks the scenario, for values that only fit
    /// together (`{"duration": "20s", "output.window": ["5s", "20s"]}`).
    fn update(&mut self, py: Python<'_>, values: &Bound<'_, PyDict>) -> PyResult<()> {
        let values = values
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, to_toml(&v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        self.def.set_all(&values).map_err(|e| scenario_error(py, e))
    }

    /// The scenario as a TOML file (groups expanded, defaults left out).
    fn to_toml(&self) -> String {
        self.def.to_toml()
    }

    /// Checks the whole scenario (as `acclab check` does).
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        self.def
            .build()
            .map(|_| ())
            .map_err(|e| scenario_error(py, e))
    }

    /// The estimated cost of a run: events, wall time, output, memory.
    fn cost(&self, py: Python<'_>) -> PyResult<String> {
        let sc = self.def.build().map_err(|e| scenario_error(py, e))?;
        Ok(acclab_sim::cost::estimate(&sc).to_string())
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    #[getter]
    fn name(&self) -> String {
        self.def.name.clone()
    }

    /// Simulated duration, s.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.def.duration.as_secs_f64()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.def.seed.unwrap_or(acclab_scenario::spec::DEFAULT_SEED)
    }

    /// The flows' ids.
    #[getter]
    fn flows(&self) -> Vec<String> {
        self.def.flows.iter().map(|f| f.id.clone()).collect()
    }

    /// The links' names (`"a->b"`).
    #[getter]
    fn links(&self) -> Vec<String> {
        self.def.links.iter().map(|l| l.name()).collect()
    }

    /// Whether the file had a `[sweep]` table.
    #[getter]
    fn has_sweep(&self) -> bool {
        self.sweep.is_some()
    }

    fn __repr__(&self) -> String {
        format!(
            "<acclab.Scenario {:?}: {} links, {} flows, {} s>",
            self.def.name,
            self.def.links.len(),
            self.def.flows.len(),
            self.def.duration.as_secs_f64()
        )
    }

    /// Pickles as its text (so it can go to a Dask worker or a subprocess).
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String, String))> {
        let f = py
            .import("acclab._acclab")?
            .getattr("Scenario")?
            .getattr("parse")?
            .unbind();
        Ok((f, (self.def.to_toml(), self.def.name.clone())))
    }
}

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
struct PyBuilder {
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

/// Runs a scenario. Returns summary.json's text and why the theory has no prediction (or
/// None). With `out`, the run's files (flows.csv, links.csv, summary.json) are written there;
/// `progress(fraction)` is called about a hundred times. `controllers`, if given, is called as
/// `controllers(controller, args, flow)` for each `python` flow and returns its controller
/// instance. The GIL is released meanwhile, unless the run has Python controllers (which hold
/// it as they run).
#[pyfunction]
#[pyo3(signature = (scenario, seed = None, out = None, progress = None, controllers = None, threads = None))]
fn run(
    py: Python<'_>,
    scenario: &PyScenario,
    seed: Option<u64>,
    out: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    controllers: Option<Py<PyAny>>,
    threads: Option<usize>,
) -> PyResult<(String, Option<String>)> {
    let threads = match threads {
        Some(n @ 1..=256) => n,
        Some(n) => {
            return Err(PyValueError::new_err(format!(
                "threads = {n}: a thread count from 1 to 256"
            )))
        }
        None => {
            acclab_study::default_threads().map_err(|e| PyValueError::new_err(e.to_string()))?
        }
    };
    let mut def = scenario.def.clone();
    if seed.is_some() {
        def.seed = seed;
    }
    let mut sc = def.build().map_err(|e| scenario_error(py, e))?;
    let provenance = out.as_ref().map(|_| provenance_of(&def, Some(sc.seed)));
    let python = has_python_flows(&sc);
    if let (true, Some(make)) = (python, controllers) {
        sc.controllers = controller::Factory::controllers(make);
    }
    let total = sc.duration.0.max(1);
    let work = move || {
        guarded(|| {
            let mut next = 0u64;
            acclab_study::run_scenario_on(
                sc,
                out.as_deref(),
                provenance.as_ref(),
                threads,
                &mut |t| {
                    if t.0 >= next {
                        next = t.0 + total / 100;
                        call_back(progress.as_ref(), t.0 as f64 / total as f64);
                    }
                },
            )
        })
    };
    let done = if python { work() } else { py.detach(work) }?;
    let done = done.map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(format!("cannot write the run's files: {e}")),
    })?;
    let json = serde_json::to_string_pretty(&done.summary).map_err(value_error)?;
    Ok((json, done.no_theory))
}

/// The provenance of a run of `def` (with `seed`, if given; a sweep's base has none) made
/// from Python: the Python process's command line.
fn provenance_of(def: &ScenarioSpec, seed: Option<u64>) -> acclab_results::provenance::Provenance {
    let mut command: Vec<String> = std::env::args().collect();
    command.insert(0, "(acclab's Python package, in)".into());
    acclab_results::provenance::Provenance::of_spec(def, seed, command, None, &[])
}

/// Whether a built scenario has flows whose controllers are written in Python.
fn has_python_flows(sc: &acclab_scenario::Scenario) -> bool {
    sc.flows
        .iter()
        .any(|f| matches!(f.scheme, acclab_core::config::SchemeConfig::Python(_)))
}

/// Integrates the model tier on a scenario (what `acclab model` does): writes flows.csv,
/// links.csv and summary.json into `out` and returns summary.json's text and why the theory has
/// no prediction (or None). `step` as "500us" (default: the model's own), `grouping` one of
/// each, identical, homogeneous; `progress(fraction)` is called about 200 times. The GIL is
/// released meanwhile.
#[pyfunction]
#[pyo3(signature = (scenario, out, step = None, grouping = "homogeneous", progress = None))]
fn model(
    py: Python<'_>,
    scenario: &PyScenario,
    out: PathBuf,
    step: Option<&str>,
    grouping: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, Option<String>)> {
    let sc = scenario.def.build().map_err(|e| scenario_error(py, e))?;
    let provenance = provenance_of(&scenario.def, Some(sc.seed));
    let step_ns = step
        .map(|s| acclab_model::parse_step(&sc, s).map_err(|e| value_error(format!("step {e}"))))
        .transpose()?;
    let settings = acclab_model::Settings {
        step_ns,
        grouping: grouping.parse().map_err(value_error)?,
        ..Default::default()
    };
    // Outside the model's domain: say which parts and why, before writing anything.
    acclab_model::Model::new(&sc, settings).map_err(value_error)?;
    let total = sc.duration.0.max(1);
    let done = py.detach(|| {
        guarded(|| {
            acclab_study::model_scenario(&sc, settings, &out, Some(&provenance), &mut |t| {
                call_back(progress.as_ref(), t.0 as f64 / total as f64);
            })
        })
    })?;
    let (summary, no_theory) =
        done.map_err(|e| PyRuntimeError::new_err(format!("cannot write the model's files: {e}")))?;
    let json = serde_json::to_string_pretty(&summary).map_err(value_error)?;
    Ok((json, no_theory))
}

/// The theory's predicted equilibrium, as JSON (what `acclab theory --json` prints).
#[pyfunction]
fn theory(py: Python<'_>, scenario: &PyScenario) -> PyResult<String> {
    let sc = scenario.def.build().map_err(|e| scenario_error(py, e))?;
    let eq = acclab_theory::predict(&sc)
        .map_err(|e| value_error(format!("the theory cannot solve it: {e}")))?;
    serde_json::to_string(&eq.to_json(&sc)).map_err(value_error)
}

/// A run's summary (summary.json's text) as a table: `entity`, `id`, `kind`, then every
/// metric, named as in summary.json (nested ones joined with `_`).
#[pyfunction]
fn summary_table(summary_json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(summary_json).map_err(value_error)?;
    let t = acclab_study::table::Tidy::of(&[(0, v)]);
    String::from_utf8(t.entities_csv()).map_err(value_error)
}

/// One run of a sweep, as a Dask task (or a sweep with Python controllers) runs it: the
/// scenario's text, the point's values as (key, TOML text) and the seed; `controllers` as
/// `run`'s. Returns summary.json's text. The GIL is released unless Python controllers run.
#[pyfunction]
#[pyo3(signature = (text, patches, seed, controllers = None))]
fn run_point(
    py: Python<'_>,
    text: &str,
    patches: Vec<(String, String)>,
    seed: u64,
    controllers: Option<Py<PyAny>>,
) -> PyResult<String> {
    let mut def =
        acclab_scenario::parse_spec(text, "<sweep>").map_err(|e| scenario_error(py, e))?;
    let values: Vec<(String, toml::Value)> = patches
        .into_iter()
        .map(|(k, v)| (k, acclab_scenario::value_of(&v)))
        .collect();
    def.set_all(&values).map_err(|e| scenario_error(py, e))?;
    def.seed = Some(seed);
    let mut sc = def.build().map_err(|e| scenario_error(py, e))?;
    let python = has_python_flows(&sc);
    if let (true, Some(make)) = (python, controllers) {
        sc.controllers = controller::Factory::controllers(make);
    }
    let work = move || guarded(|| acclab_study::run_scenario(sc, None, None, &mut |_| {}));
    let done = if python { work() } else { py.detach(work) }?
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&done.summary).map_err(value_error)
}

/// A run as a task: (index, id, seed, the point's values as (key, TOML text)).
type PlannedTask = (usize, String, u64, Vec<(String, String)>);

/// A sweep's plan over a scenario: its runs, and the tables from their summaries.
#[pyclass(module = "acclab._acclab", name = "SweepPlan")]
struct PySweepPlan {
    base: ScenarioSpec,
    text: String,
    plan: Plan,
}

fn study_error(py: Python<'_>, e: acclab_study::StudyError) -> PyErr {
    match e {
        acclab_study::StudyError::Scenario(e) => scenario_error(py, e),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

#[pymethods]
impl PySweepPlan {
    /// `grid`: {key: values}, values a list (a string in it may be a range) or a string (a
    /// comma list or a range, as on the command line); added to the file's `[sweep]`, if any.
    /// `seeds`: a count or a list. `zip`: groups of keys varied together.
    #[new]
    #[pyo3(signature = (scenario, grid = None, seeds = None, zip = None, metrics = None))]
    fn new(
        py: Python<'_>,
        scenario: &PyScenario,
        grid: Option<&Bound<'_, PyDict>>,
        seeds: Option<&Bound<'_, PyAny>>,
        zip: Option<Vec<Vec<String>>>,
        metrics: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let mut spec = scenario.sweep.clone().unwrap_or_else(SweepSpec::empty);
        for (k, v) in grid.into_iter().flat_map(|g| g.iter()) {
            let key: String = k.extract()?;
            if key == "seed" {
                return Err(value_error(
                    "`seed` is not a grid key: use seeds=N or seeds=[…]",
                ));
            }
            let axis = if v.is_instance_of::<PyString>() {
                Axis::from_text(&key, &v.extract::<String>()?)
            } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
                let items = v
                    .try_iter()?
                    .map(|x| to_toml(&x?))
                    .collect::<PyResult<Vec<_>>>()?;
                Axis::from_values(&key, items)
            } else {
                Axis::from_values(&key, vec![to_toml(&v)?])
            }
            .map_err(|m| value_error(format!("grid[{key:?}]: {m}")))?;
            if axis.values.is_empty() {
                return Err(value_error(format!("grid[{key:?}]: no values")));
            }
            spec.set_axis(axis);
        }
        spec.zip.extend(zip.unwrap_or_default());
        spec.check_zip()
            .map_err(|m| value_error(format!("zip: {m}")))?;
        if let Some(s) = seeds {
            spec.seeds = Some(if let Ok(n) = s.extract::<u64>() {
                if n == 0 {
                    return Err(value_error("seeds: a count is at least 1"));
                }
                Seeds::Count(n)
            } else {
                Seeds::List(s.extract::<Vec<u64>>().map_err(|_| {
                    value_error("seeds: a count (int) or a list of seeds (ints ≥ 0)")
                })?)
            });
        }
        if let Some(m) = metrics {
            spec.metrics = m;
        }
        // Local and Dask runs both start from the scenario's text.
        let text = scenario.def.to_toml();
        let base = acclab_scenario::parse_spec(&text, &scenario.def.name)
            .map_err(|e| scenario_error(py, e))?;
        let plan = Plan::new(&base, &spec).map_err(|e| scenario_error(py, e))?;
        Ok(PySweepPlan { base, text, plan })
    }

    /// Every run: (index, id, seed, [(key, value as TOML text)]).
    fn runs(&self) -> Vec<PlannedTask> {
        self.plan
            .runs
            .iter()
            .map(|r| {
                let patches = self.plan.values[r.point]
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_string()))
                    .collect();
                (r.index, r.id.clone(), r.seed, patches)
            })
            .collect()
    }

    /// Whether the scenario has flows with controllers written in Python (their runs hold the
    /// GIL: `acclab.sweep` runs them in processes, or on Dask).
    #[getter]
    fn python(&self, py: Python<'_>) -> PyResult<bool> {
        let sc = self.base.build().map_err(|e| scenario_error(py, e))?;
        Ok(has_python_flows(&sc))
    }

    /// The scenario's text every run starts from.
    #[getter]
    fn text(&self) -> String {
        self.text.clone()
    }

    #[getter]
    fn keys(&self) -> Vec<String> {
        self.plan.keys.clone()
    }

    /// sweep.json's text: keys, points, seeds, runs.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.plan).map_err(value_error)
    }

    /// runs.csv and aggregate.csv from every run's summary.json text, in plan order.
    fn table(&self, summaries: Vec<String>) -> PyResult<(String, String)> {
        if summaries.len() != self.plan.runs.len() {
            return Err(value_error(format!(
                "{} summaries for {} runs",
                summaries.len(),
                self.plan.runs.len()
            )));
        }
        let runs = summaries
            .iter()
            .enumerate()
            .map(|(i, s)| serde_json::from_str(s).map(|v| (i, v)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(value_error)?;
        let tidy = acclab_study::table::Tidy::of(&runs);
        let agg = tidy.aggregate(&self.plan);
        Ok((
            String::from_utf8(tidy.to_csv(&self.plan)).map_err(value_error)?,
            String::from_utf8(acclab_study::table::aggregate_csv(&self.plan, &agg))
                .map_err(value_error)?,
        ))
    }

    /// Runs the sweep on `jobs` threads into the sweep directory `out` (resumable, as the
    /// command line's), collects it and returns runs.csv's and aggregate.csv's text.
    /// `progress(done, total)` is called after each run. The GIL is released meanwhile.
    #[pyo3(signature = (out, jobs = None, keep_runs = false, progress = None))]
    fn run_local(
        &self,
        py: Python<'_>,
        out: PathBuf,
        jobs: Option<usize>,
        keep_runs: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(String, String)> {
        // Each run on $ACCLAB_THREADS threads (default 1), as many at once as the cores hold.
        let threads =
            acclab_study::default_threads().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let jobs = jobs
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get()) / threads
            })
            .max(1);
        // The runs go on a thread of their own while this one, Python's, watches for Ctrl-C
        // (KeyboardInterrupt is raised only on the main thread) and for an exception from the
        // progress callback: either stops the sweep from starting more runs; the finished
        // runs' records are kept (the sweep resumes from them).
        let stop = std::sync::atomic::AtomicBool::new(false);
        let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
        let halt = |e: PyErr| {
            raised
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        };
        let result = py.detach(|| {
            guarded(|| {
                std::thread::scope(|scope| {
                    let worker = scope.spawn(|| {
                        let dir = acclab_study::store::SweepDir::open(&out, &self.plan, false)?;
                        // How the sweep was made (its first invocation's; a resumed one keeps it).
                        let record = out.join(acclab_results::provenance::RECORD_FILE);
                        if !record.exists() {
                            provenance_of(&self.base, None).write(&out).map_err(|err| {
                                acclab_study::StudyError::Io {
                                    path: out.display().to_string(),
                                    err,
                                }
                            })?;
                        }
                        let all: Vec<usize> = (0..self.plan.runs.len()).collect();
                        let todo = acclab_study::sweep::pending(&self.plan, &dir, &all, keep_runs);
                        let total = todo.len();
                        let count = std::sync::atomic::AtomicUsize::new(0);
                        acclab_study::sweep::execute(
                            &self.base,
                            &self.plan,
                            &dir,
                            &todo,
                            jobs,
                            threads,
                            keep_runs,
                            &stop,
                            &|_| {
                                let n =
                                    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                                if let Some(cb) = &progress {
                                    if let Err(e) = Python::attach(|py| cb.call1(py, (n, total))) {
                                        halt(e);
                                    }
                                }
                            },
                        )?;
                        acclab_study::sweep::collect(&self.plan, &dir)
                    });
                    while !worker.is_finished() {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            halt(e);
                        }
                    }
                    worker
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
            })
        })?;
        if let Some(e) = raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        let c = result.map_err(|e| study_error(py, e))?;
        Ok((
            String::from_utf8(c.tidy.to_csv(&self.plan)).map_err(value_error)?,
            String::from_utf8(acclab_study::table::aggregate_csv(&self.plan, &c.aggregate))
                .map_err(value_error)?,
        ))
    }

    fn __len__(&self) -> usize {
        self.plan.runs.len()
    }
}

/// The same allocator as the acclab command's, for its huge pages (see the workspace's
/// Cargo.toml): Rust's memory only; Python's objects stay with Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _acclab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScenario>()?;
    m.add_class::<PyBuilder>()?;
    m.add_class::<PySweepPlan>()?;
    m.add_class::<controller::Ack>()?;
    m.add_class::<controller::RateSample>()?;
    m.add_class::<controller::Event>()?;
    m.add_class::<controller::Sent>()?;
    m.add_class::<gym::GymSim>()?;
    m.add_function(wrap_pyfunction!(gym::step_all, m)?)?;
    m.add_function(wrap_pyfunction!(gym::env_step_all, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(theory, m)?)?;
    m.add_function(wrap_pyfunction!(model, m)?)?;
    m.add_function(wrap_pyfunction!(summary_table, m)?)?;
    m.add_function(wrap_pyfunction!(run_point, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
