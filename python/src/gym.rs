//! The native half of `acclab.gym`: a simulation an environment steps one monitor interval at a
//! time. Its agent-driven flows are `kind = "python"` flows whose controller is "agent": an
//! [`Agent`](acclab_core::cc::agent::Agent) each, set and read through its
//! [`AgentHandle`]. `GymSim.step` applies the actions, simulates to the interval's end with the
//! GIL released, and returns what each interval measured; `step_all` does that for many
//! simulations at once on threads (the vector environment).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use acclab_core::cc::agent::{Action, AgentHandle, Interval};
use acclab_core::cc::CongestionController;
use acclab_core::config::{ControllerFactory, Controllers, FlowContext, PythonParams};
use acclab_core::Time;
use acclab_sim::Simulator;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{guarded, scenario_error, PyScenario};

/// The controller name that makes a `python` flow agent-driven.
const AGENT: &str = "agent";

/// Makes the agent flows' controllers from their handles.
struct AgentFactory {
    handles: BTreeMap<String, AgentHandle>,
}

impl ControllerFactory for AgentFactory {
    fn controller(&self, p: &PythonParams, ctx: &FlowContext) -> Box<dyn CongestionController> {
        let h = self
            .handles
            .get(&ctx.name)
            .filter(|_| p.controller == AGENT);
        // GymSim::new checked that every python flow is an agent with a handle.
        let h = h.expect("an agent flow has a handle (GymSim::new)");
        Box::new(h.controller(ctx.packet_size as u64))
    }
}

/// What a step returns per agent: the interval's measurements and the flow's RTT state, as
/// floats (bytes, counts, seconds, bit/s), in the order of `FIELDS`.
type Measured = Vec<f64>;

/// The names of a step's measurements, in order.
const FIELDS: [&str; 15] = [
    "sent_bytes",
    "lost_bytes",
    "acked_bytes",
    "ecn_bytes",
    "timeouts",
    "rtt_count",
    "mean_rtt",
    "rtt_min",
    "rtt_max",
    "latency_gradient",
    "delivery_rate",
    "srtt",
    "min_rtt",
    "interval",
    "queue_pkts",
];

/// A simulation stepped by an environment (behind a mutex: a Python object may be reached
/// from any thread; one step at a time holds it).
#[pyclass(module = "acclab._acclab", name = "GymSim")]
pub struct GymSim(Mutex<Stepped>);

struct Stepped {
    sim: Simulator,
    /// The link whose queue a step reports (the agent may see it), if any.
    watch: Option<acclab_scenario::LinkId>,
    agents: Vec<AgentHandle>,
    window_mode: bool,
    last: Time,
}

fn measured(i: &Interval, h: &AgentHandle, span: f64, queue: f64) -> Measured {
    let (srtt, min_rtt) = h.rtts();
    let s = |d: Option<acclab_core::Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
    let rtt = |x: f64| if i.rtt_count > 0 { x } else { f64::NAN };
    vec![
        i.sent_bytes as f64,
        i.lost_bytes as f64,
        i.acked_bytes as f64,
        i.ecn_bytes as f64,
        i.timeouts as f64,
        i.rtt_count as f64,
        i.mean_rtt().unwrap_or(f64::NAN),
        rtt(i.rtt_min),
        rtt(i.rtt_max),
        i.latency_gradient(),
        i.delivery_rate as f64,
        s(srtt),
        s(min_rtt),
        span,
        queue,
    ]
}

fn action(window_mode: bool, v: f64) -> PyResult<Action> {
    if !v.is_finite() || v <= 0.0 {
        return Err(PyValueError::new_err(format!(
            "an agent's {} must be a positive finite number, not {v}",
            if window_mode {
                "window (bytes)"
            } else {
                "rate (bit/s)"
            }
        )));
    }
    Ok(if window_mode {
        Action::Window(v.min(u64::MAX as f64 / 2.0) as u64)
    } else {
        Action::Rate(v.min(u64::MAX as f64 / 2.0) as u64)
    })
}

impl Stepped {
    fn set(&self, actions: &[f64]) -> PyResult<()> {
        if actions.len() != self.agents.len() {
            return Err(PyValueError::new_err(format!(
                "{} actions for {} agent flows",
                actions.len(),
                self.agents.len()
            )));
        }
        for (h, &v) in self.agents.iter().zip(actions) {
            h.act(action(self.window_mode, v)?);
        }
        Ok(())
    }

    /// Simulates to `until` (the scenario's end at most) and takes every agent's interval.
    fn run_to(&mut self, until: Time) -> Vec<Measured> {
        self.sim.advance(until);
        let now = self.sim.now();
        let span = now.since(self.last).as_secs_f64();
        self.last = now;
        let queue = self.watch.map_or(f64::NAN, |l| {
            use acclab_sim::observe::NetworkView;
            self.sim.network().queue(l).backlog().packets as f64
        });
        self.agents
            .iter()
            .map(|h| measured(&h.take(now), h, span, queue))
            .collect()
    }
}

#[pymethods]
impl GymSim {
    /// `scenario` with the flows named in `agents` of kind "python" and controller "agent";
    /// `mode` "window" (actions are windows, bytes) or "rate" (pacing rates, bit/s); `initial`
    /// each agent's first action; `watch` a link (`"r1->r2"`) whose queue each step reports.
    #[new]
    #[pyo3(signature = (scenario, agents, mode, initial, watch = None))]
    fn new(
        py: Python<'_>,
        scenario: &PyScenario,
        agents: Vec<String>,
        mode: &str,
        initial: Vec<f64>,
        watch: Option<String>,
    ) -> PyResult<Self> {
        let window_mode = match mode {
            "window" => true,
            "rate" => false,
            other => {
                return Err(PyValueError::new_err(format!(
                    "mode {other:?}: \"window\" or \"rate\""
                )))
            }
        };
        let mut sc = scenario.def.build().map_err(|e| scenario_error(py, e))?;
        if initial.len() != agents.len() {
            return Err(PyValueError::new_err(format!(
                "{} initial actions for {} agents",
                initial.len(),
                agents.len()
            )));
        }
        let mut handles = BTreeMap::new();
        let mut order = Vec::new();
        for (name, &v) in agents.iter().zip(&initial) {
            let h = AgentHandle::new(action(window_mode, v)?);
            handles.insert(name.clone(), h.clone());
            order.push(h);
        }
        for f in &sc.flows {
            if let acclab_core::config::SchemeConfig::Python(p) = &f.scheme {
                if p.controller != AGENT || !handles.contains_key(&f.id) {
                    return Err(PyValueError::new_err(format!(
                        "flow {:?} is a python flow but not one of the agents {agents:?} \
                         (controller \"{AGENT}\")",
                        f.id
                    )));
                }
            }
        }
        for name in &agents {
            let is_agent = sc.flows.iter().any(|f| {
                &f.id == name
                    && matches!(&f.scheme,
                        acclab_core::config::SchemeConfig::Python(p) if p.controller == AGENT)
            });
            if !is_agent {
                return Err(PyValueError::new_err(format!(
                    "agent {name:?} is not a flow of kind \"python\" with controller \"{AGENT}\""
                )));
            }
        }
        let watch = match watch {
            None => None,
            Some(name) => Some(
                sc.links
                    .iter()
                    .position(|l| l.name == name)
                    .map(|i| acclab_scenario::LinkId(i as u32))
                    .ok_or_else(|| PyValueError::new_err(format!("watch: no link {name:?}")))?,
            ),
        };
        sc.controllers = Controllers::of(Arc::new(AgentFactory { handles }));
        let sim = guarded(|| Simulator::new(sc))?;
        Ok(GymSim(Mutex::new(Stepped {
            sim,
            watch,
            agents: order,
            window_mode,
            last: Time::ZERO,
        })))
    }

    /// The names of each agent's measurements, in the order `step` returns them.
    #[staticmethod]
    fn fields() -> Vec<&'static str> {
        FIELDS.to_vec()
    }

    /// Sets each agent's action, simulates for `interval_s` seconds (to the scenario's end at
    /// most) with the GIL released, and returns each agent's measurements.
    fn step(&self, py: Python<'_>, actions: Vec<f64>, interval_s: f64) -> PyResult<Vec<Measured>> {
        let mut s = self.lock();
        s.set(&actions)?;
        let until = s.until(interval_s)?;
        let stepped: &mut Stepped = &mut s;
        py.detach(|| guarded(|| stepped.run_to(until)))
    }

    /// Simulated time now, s.
    fn now(&self) -> f64 {
        self.lock().sim.now().as_secs_f64()
    }

    /// The scenario's end, s.
    fn end(&self) -> f64 {
        self.lock().sim.end().as_secs_f64()
    }

    /// Whether the scenario's end is reached.
    fn done(&self) -> bool {
        let s = self.lock();
        s.sim.now() >= s.sim.end()
    }
}

impl GymSim {
    fn lock(&self) -> MutexGuard<'_, Stepped> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Stepped {
    fn until(&self, interval_s: f64) -> PyResult<Time> {
        if !(interval_s.is_finite() && interval_s > 0.0) {
            return Err(PyValueError::new_err(format!(
                "a monitor interval must be a positive number of seconds, not {interval_s}"
            )));
        }
        let step = acclab_core::Duration::from_secs_f64(interval_s).max(acclab_core::Duration(1));
        Ok(self.sim.now() + step)
    }
}

/// Steps every simulation of a vector environment at once, on up to `threads` threads with the
/// GIL released: `actions[i]` and `intervals[i]` for `sims[i]`. Returns each one's
/// measurements, in order — the same as stepping them one by one.
#[pyfunction]
pub fn step_all(
    py: Python<'_>,
    sims: Vec<Bound<'_, GymSim>>,
    actions: Vec<Vec<f64>>,
    intervals: Vec<f64>,
    threads: usize,
) -> PyResult<Vec<Vec<Measured>>> {
    if actions.len() != sims.len() || intervals.len() != sims.len() {
        return Err(PyValueError::new_err(format!(
            "{} simulations, {} action lists, {} intervals",
            sims.len(),
            actions.len(),
            intervals.len()
        )));
    }
    let refs: Vec<_> = sims.iter().map(|s| s.borrow()).collect();
    let mut guards: Vec<_> = refs.iter().map(|r| r.lock()).collect();
    let mut work = Vec::with_capacity(guards.len());
    for ((g, a), &dt) in guards.iter_mut().zip(&actions).zip(&intervals) {
        g.set(a)?;
        let until = g.until(dt)?;
        work.push((&mut **g, until));
    }
    // At most `threads` tasks on rayon's pool (no thread started per step); one runs inline.
    let threads = threads.clamp(1, work.len().max(1));
    let chunk = work.len().div_ceil(threads).max(1);
    py.detach(|| {
        guarded(|| {
            if threads == 1 {
                return work.iter_mut().map(|(g, until)| g.run_to(*until)).collect();
            }
            use rayon::prelude::*;
            work.par_iter_mut()
                .with_min_len(chunk)
                .map(|(g, until)| g.run_to(*until))
                .collect()
        })
    })
}
