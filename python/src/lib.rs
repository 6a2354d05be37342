//! `acclab._acclab`: the native half of the Python package (python/acclab/ is the other half,
//! which turns what this returns into pandas DataFrames).
//!
//! Everything here is a thin layer over the Rust crates: scenarios are `ScenarioSpec`s (loaded,
//! patched by key path and built by the same code as the command line), runs go through
//! `acclab_study::run_scenario`, sweeps through `acclab_study`'s plan, runner and tables. The GIL
//! is released while simulating. What crosses to Dask workers is plain data — scenario text,
//! patches as TOML text, a seed — never these classes (a `Scenario` pickles as its text).

mod builder;
mod controller;
mod gym;
mod sweep;

use std::path::PathBuf;

use acclab_scenario::sweep_spec::SweepSpec;
use acclab_scenario::{ScenarioError, ScenarioSpec};
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

/// A `threads=` argument: `"auto"` or a count from 1 to 256 (None: not given).
pub(crate) fn threads_arg(t: Option<&Bound<'_, PyAny>>) -> PyResult<Option<acclab_study::Threads>> {
    let Some(t) = t else { return Ok(None) };
    let text = if t.is_instance_of::<PyString>() {
        t.extract::<String>()?
    } else if let Ok(n) = t.extract::<i64>() {
        n.to_string()
    } else {
        return Err(PyTypeError::new_err("threads: \"auto\" or an int"));
    };
    acclab_study::Threads::parse(&text)
        .map(Some)
        .map_err(|e| value_error(format!("threads = {e}")))
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
    threads: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, Option<String>)> {
    let threads = acclab_study::threads_or_default(threads_arg(threads)?).map_err(value_error)?;
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
    let threads = threads.of(&sc);
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

/// The same allocator as the acclab command's, for its huge pages (see the workspace's
/// Cargo.toml): Rust's memory only; Python's objects stay with Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _acclab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScenario>()?;
    m.add_class::<builder::PyBuilder>()?;
    m.add_class::<sweep::PySweepPlan>()?;
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
    m.add_function(wrap_pyfunction!(sweep::run_point, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
