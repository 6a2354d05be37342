//! The native half of `acclab.gym`: a simulation an environment steps one monitor interval at a
//! time. Its agent-driven flows are `kind = "python"` flows whose controller is "agent": an
//! [`Agent`](acclab_core::cc::agent::Agent) each, set and read through its
//! [`AgentHandle`]. `GymSim.step` applies the actions, simulates to the interval's end with the
//! GIL released, and returns what each interval measured; `step_all` does that for many
//! simulations at once on threads (the vector environment).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use acclab_core::cc::agent::{Action, AgentHandle};
use acclab_core::cc::agent_env::{
    next_interval, ActionKind, AgentEnv, EnvSpec, Feature, Measure, Outcome, Reward,
};
use acclab_core::cc::CongestionController;
use acclab_core::config::{ControllerFactory, Controllers, FlowContext, PythonParams};
use acclab_core::Time;
use acclab_sim::Simulator;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
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

/// A simulation stepped by an environment (behind a mutex: a Python object may be reached
/// from any thread; one step at a time holds it).
#[pyclass(module = "acclab._acclab", name = "GymSim")]
pub struct GymSim(Mutex<Stepped>);

struct Stepped {
    sim: Simulator,
    /// The link whose queue a step reports (the agent may see it), if any.
    watch: Option<acclab_scenario::LinkId>,
    agents: Vec<AgentHandle>,
    /// Each agent's first action (bit/s or bytes), as given.
    initial: Vec<f64>,
    window_mode: bool,
    last: Time,
    /// The environment's per-step work, once `configure` has set it.
    env: Option<EnvState>,
}

/// An environment's settings, each agent's part, and each agent's last measure.
struct EnvState {
    spec: EnvSpec,
    agents: Vec<AgentEnv>,
    last: Vec<Measure>,
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
    fn run_to(&mut self, until: Time) -> Vec<Measure> {
        self.sim.advance(until);
        let now = self.sim.now();
        let span = now.since(self.last).as_secs_f64();
        self.last = now;
        let queue = self.watch.map_or(f64::NAN, |l| {
            use acclab_sim::observe::NetworkView;
            self.sim.network().queue(l).backlog().packets as f64
        });
        let secs = |d: Option<acclab_core::Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        self.agents
            .iter()
            .map(|h| {
                let (srtt, min_rtt) = h.rtts();
                let cwnd = h.window() as f64;
                Measure::new(&h.take(now), secs(srtt), secs(min_rtt), span, queue, cwnd)
            })
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
            initial,
            window_mode,
            last: Time::ZERO,
            env: None,
        })))
    }

    /// The names of each agent's measurements, in the order `step` returns them.
    #[staticmethod]
    fn fields() -> Vec<&'static str> {
        Measure::FIELDS.to_vec()
    }

    /// Sets each agent's action, simulates for `interval_s` seconds (to the scenario's end at
    /// most) with the GIL released, and returns each agent's measurements.
    fn step(&self, py: Python<'_>, actions: Vec<f64>, interval_s: f64) -> PyResult<Vec<Vec<f64>>> {
        let mut s = self.lock();
        s.set(&actions)?;
        let until = s.until(interval_s)?;
        let stepped: &mut Stepped = &mut s;
        let ms = py.detach(|| guarded(|| stepped.run_to(until)))?;
        Ok(ms.iter().map(Measure::values).collect())
    }

    /// Sets up the environment's per-step work in Rust (acclab_core::cc::agent_env): the
    /// observation's `features` over `history` intervals; `action` "rate-multiplier" (scale
    /// `action_limit`), "cwnd" (up to `action_limit` segments) or "rate" (up to
    /// `action_limit` Mb/s), with `discrete` values or continuous; `reward` "aurora",
    /// "alpha-fair" (`alpha`), "power" or "num" (each agent's `targets`, bit/s), times
    /// `reward_scale`; `mi` a fixed monitor interval (s) or None for one smoothed RTT;
    /// `base_rtt` (s) and `bdp_pkts` the network's. Returns the observation's length per agent.
    #[pyo3(signature = (*, features, history, action, action_limit, discrete, max_rate_bps,
                        reward, alpha, reward_scale, mi, base_rtt, bdp_pkts, targets,
                        packet_bytes = 1500.0))]
    #[allow(clippy::too_many_arguments)]
    fn configure(
        &self,
        features: Vec<String>,
        history: usize,
        action: &str,
        action_limit: f64,
        discrete: Option<u32>,
        max_rate_bps: f64,
        reward: &str,
        alpha: f64,
        reward_scale: f64,
        mi: Option<f64>,
        base_rtt: f64,
        bdp_pkts: f64,
        targets: Vec<f64>,
        packet_bytes: f64,
    ) -> PyResult<usize> {
        let bad = |e: acclab_core::cc::agent_env::SpecError| PyValueError::new_err(e.0);
        let features = features
            .iter()
            .map(|f| Feature::parse(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        let action = match action {
            "rate-multiplier" => ActionKind::RateMultiplier {
                scale: action_limit,
            },
            "cwnd" => ActionKind::Cwnd { max: action_limit },
            "rate" => ActionKind::Rate {
                max_mbps: action_limit,
            },
            other => {
                return Err(PyValueError::new_err(format!(
                    "action {other:?}: \"rate-multiplier\", \"cwnd\" or \"rate\""
                )))
            }
        };
        let reward = match reward {
            "aurora" => Reward::Aurora,
            "alpha-fair" => Reward::AlphaFair { alpha },
            "power" => Reward::Power,
            "num" => Reward::Num,
            other => {
                return Err(PyValueError::new_err(format!(
                    "reward {other:?}: \"aurora\", \"alpha-fair\", \"power\" or \"num\""
                )))
            }
        };
        let spec = EnvSpec {
            features,
            history,
            action,
            discrete,
            max_rate_bps,
            reward,
            reward_scale,
            mi,
            base_rtt,
            bdp_pkts,
            packet_bytes,
        };
        spec.validate().map_err(bad)?;
        let mut s = self.lock();
        if targets.len() != s.agents.len() {
            return Err(PyValueError::new_err(format!(
                "{} targets for {} agents",
                targets.len(),
                s.agents.len()
            )));
        }
        let agents = s
            .initial
            .iter()
            .zip(&targets)
            .map(|(&x, &t)| AgentEnv::new(&spec, x, t))
            .collect();
        let n = spec.observation_len();
        s.env = Some(EnvState {
            spec,
            agents,
            last: Vec::new(),
        });
        Ok(n)
    }

    /// The environment's first interval, at the agents' initial settings: writes the
    /// observation into `out` (float32, agents × the observation's length) and returns
    /// (done, time s, rewards, throughputs bit/s, RTTs s, loss fractions).
    fn env_start(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<EnvStep> {
        let mut s = self.lock();
        let dt = next_interval(&s.env()?.spec, &[]);
        let until = s.until(dt)?;
        self.env_finish(py, s, until, out)
    }

    /// One environment step: each agent's action (its index when discrete), one monitor
    /// interval simulated with the GIL released, the observation written into `out`; returns
    /// as `env_start`.
    fn env_step(
        &self,
        py: Python<'_>,
        actions: Vec<f64>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<EnvStep> {
        let mut s = self.lock();
        let values = s.env_values(&actions)?;
        let until = s.env_apply(values)?;
        self.env_finish(py, s, until, out)
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

    fn env_finish(
        &self,
        py: Python<'_>,
        mut s: MutexGuard<'_, Stepped>,
        until: Time,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<EnvStep> {
        let stepped: &mut Stepped = &mut s;
        let ms = py.detach(|| guarded(|| stepped.run_to(until)))?;
        let mut obs = vec![0.0f32; s.observation_len()];
        let r = s.env_observe(ms, &mut obs);
        write_out(py, out, &obs)?;
        Ok(r)
    }
}

/// What an environment step returns: whether the scenario's end is reached, the simulated
/// time (s), and each agent's reward, throughput (bit/s), RTT (s) and loss fraction.
type EnvStep = (bool, f64, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

impl Stepped {
    fn env(&mut self) -> PyResult<&mut EnvState> {
        self.env
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("configure() the environment before env_step"))
    }

    /// Each agent's action as a value in its range (checked, nothing applied yet).
    fn env_values(&mut self, actions: &[f64]) -> PyResult<Vec<f64>> {
        let env = self.env()?;
        if actions.len() != env.agents.len() {
            return Err(PyValueError::new_err(format!(
                "{} actions for {} agent flows",
                actions.len(),
                env.agents.len()
            )));
        }
        actions
            .iter()
            .map(|&a| env.spec.value(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(e.0))
    }

    /// Applies checked action values ([`Stepped::env_values`]) and returns when the monitor
    /// interval ends.
    fn env_apply(&mut self, values: Vec<f64>) -> PyResult<Time> {
        let window_mode = self.window_mode;
        let env = self.env()?;
        let mut settings = Vec::with_capacity(values.len());
        for (ag, v) in env.agents.iter_mut().zip(values) {
            settings.push(action(window_mode, ag.act(&env.spec, v))?);
        }
        let dt = next_interval(&env.spec, &env.last);
        for (h, a) in self.agents.iter().zip(settings) {
            h.act(a);
        }
        self.until(dt)
    }

    /// Records the interval's measures: each agent's observation into `obs` (agent after
    /// agent), and what the step returns.
    fn env_observe(&mut self, ms: Vec<Measure>, obs: &mut [f32]) -> EnvStep {
        let done = self.sim.now() >= self.sim.end();
        let now = self.sim.now().as_secs_f64();
        let env = self.env.as_mut().expect("env_values checked it");
        let n = env.spec.observation_len();
        let outs: Vec<Outcome> = env
            .agents
            .iter_mut()
            .zip(&ms)
            .zip(obs.chunks_mut(n))
            .map(|((ag, m), o)| {
                let out = ag.observe(&env.spec, m);
                o.copy_from_slice(ag.observation(&env.spec));
                out
            })
            .collect();
        env.last = ms;
        let col = |f: fn(&Outcome) -> f64| outs.iter().map(f).collect::<Vec<_>>();
        (
            done,
            now,
            col(|o| o.reward),
            col(|o| o.throughput_bps),
            col(|o| o.rtt),
            col(|o| o.loss),
        )
    }

    fn observation_len(&self) -> usize {
        self.env
            .as_ref()
            .map_or(0, |e| e.spec.observation_len() * e.agents.len())
    }
}

/// Copies `data` into a writable, contiguous float32 array (numpy's) of the same size.
fn write_out(py: Python<'_>, out: &Bound<'_, PyAny>, data: &[f32]) -> PyResult<()> {
    let buf = PyBuffer::<f32>::get(out)?;
    buf.copy_from_slice(py, data)
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
) -> PyResult<Vec<Vec<Vec<f64>>>> {
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
    let ms = run_all(py, work, threads)?;
    Ok(ms
        .iter()
        .map(|m| m.iter().map(Measure::values).collect())
        .collect())
}

/// Runs each simulation to its time, on up to `threads` tasks of rayon's pool (no thread
/// started per step; one runs inline) with the GIL released; each one's measures, in order.
fn run_all(
    py: Python<'_>,
    mut work: Vec<(&mut Stepped, Time)>,
    threads: usize,
) -> PyResult<Vec<Vec<Measure>>> {
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

/// One environment step of many simulations at once (the vector environment): `actions[i]`
/// for `sims[i]`, stepped on up to `threads` threads with the GIL released, `sims[i]`'s
/// observation written into row `rows[i]` of `out` (float32, one row per environment, each
/// its agents' observations one after another). Returns what `GymSim.env_step` returns, per
/// simulation — the same as stepping them one by one.
#[pyfunction]
pub fn env_step_all(
    py: Python<'_>,
    sims: Vec<Bound<'_, GymSim>>,
    actions: Vec<Vec<f64>>,
    out: &Bound<'_, PyAny>,
    rows: Vec<usize>,
    threads: usize,
) -> PyResult<Vec<EnvStep>> {
    if actions.len() != sims.len() || rows.len() != sims.len() {
        return Err(PyValueError::new_err(format!(
            "{} simulations, {} action lists, {} rows",
            sims.len(),
            actions.len(),
            rows.len()
        )));
    }
    let buf = PyBuffer::<f32>::get(out)?;
    let mut obs = buf.to_vec(py)?;
    let refs: Vec<_> = sims.iter().map(|s| s.borrow()).collect();
    let mut guards: Vec<_> = refs.iter().map(|r| r.lock()).collect();
    let width = guards.first().map_or(0, |g| g.observation_len());
    for (g, &row) in guards.iter().zip(&rows) {
        if g.observation_len() != width || (row + 1) * width > obs.len() {
            return Err(PyValueError::new_err(format!(
                "row {row} of {} floats does not fit an output of {} floats",
                g.observation_len(),
                obs.len()
            )));
        }
    }
    // Every action is checked before any simulation changes.
    let values = guards
        .iter_mut()
        .zip(&actions)
        .map(|(g, a)| g.env_values(a))
        .collect::<PyResult<Vec<_>>>()?;
    let mut work = Vec::with_capacity(guards.len());
    for (g, v) in guards.iter_mut().zip(values) {
        let until = g.env_apply(v)?;
        work.push((&mut **g, until));
    }
    let ms = run_all(py, work, threads)?;
    let results = guards
        .iter_mut()
        .zip(ms)
        .zip(&rows)
        .map(|((g, m), &row)| g.env_observe(m, &mut obs[row * width..(row + 1) * width]))
        .collect();
    buf.copy_from_slice(py, &obs)?;
    Ok(results)
}
