//! Sweeps from Python: a sweep's plan (`SweepPlan`) and one of its runs as a Dask task.

use std::path::PathBuf;

use acclab_scenario::sweep_spec::{Axis, Seeds, SweepSpec};
use acclab_scenario::ScenarioSpec;
use acclab_study::plan::Plan;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::{
    controller, guarded, has_python_flows, provenance_of, scenario_error, threads_arg, to_toml,
    value_error, PyScenario,
};

/// One run of a sweep, as a Dask task (or a sweep with Python controllers) runs it: the
/// scenario's text, the point's values as (key, TOML text) and the seed; `controllers` as
/// `run`'s. Returns summary.json's text. The GIL is released unless Python controllers run.
#[pyfunction]
#[pyo3(signature = (text, patches, seed, controllers = None, threads = None))]
pub(crate) fn run_point(
    py: Python<'_>,
    text: &str,
    patches: Vec<(String, String)>,
    seed: u64,
    controllers: Option<Py<PyAny>>,
    threads: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let threads = threads_arg(threads)?;
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
    // (Not given: $ACCLAB_THREADS, or 1 — a task runs beside others on its worker.)
    let threads = match threads {
        Some(t) => t.of(&sc),
        None => acclab_study::default_threads(&sc).map_err(value_error)?,
    };
    let work =
        move || guarded(|| acclab_study::run_scenario_on(sc, None, None, threads, &mut |_| {}));
    let done = if python { work() } else { py.detach(work) }?
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&done.summary).map_err(value_error)
}

/// A run as a task: (index, id, seed, the point's values as (key, TOML text)).
type PlannedTask = (usize, String, u64, Vec<(String, String)>);

/// A sweep's plan over a scenario: its runs, and the tables from their summaries.
#[pyclass(module = "acclab._acclab", name = "SweepPlan")]
pub(crate) struct PySweepPlan {
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
    #[pyo3(signature = (out, jobs = None, keep_runs = false, progress = None, threads = None))]
    fn run_local(
        &self,
        py: Python<'_>,
        out: PathBuf,
        jobs: Option<usize>,
        keep_runs: bool,
        progress: Option<Py<PyAny>>,
        threads: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(String, String)> {
        // Each run on `threads` ($ACCLAB_THREADS, or auto), as many at once as the cores hold.
        let threads =
            acclab_study::threads_or_default(threads_arg(threads)?).map_err(value_error)?;
        let (jobs, threads) =
            acclab_study::sweep::jobs_and_threads(jobs, threads, self.plan.runs.len());
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
