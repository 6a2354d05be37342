//! Controllers written in Python (`kind = "python"` flows): the factory that makes one instance
//! of the user's class per flow, and the adapter through which the TCP sender calls it — the
//! same [`CongestionController`] hooks every Rust controller has, so SACK, ECN, pacing and
//! delayed ACKs work unchanged.
//!
//! The contract (documented for users in `acclab/controller.py`): callbacks `on_ack(now, ack)`,
//! `on_congestion(now, event)`, and, if the class defines them, `on_sent(now, sent)` and
//! `on_recovery_end(now)`; times in integer ns, rates in bit/s. After each, the adapter reads the
//! instance's `cwnd` (bytes), `ssthresh` (bytes or None) and `pacing_rate` (bit/s or None). An
//! exception in the user's code, or a value that is not a number in range, ends the run with an
//! `acclab.ControllerError` naming the class, the callback, the flow and the simulated time (the
//! original exception as its cause): it unwinds out of the simulation as a [`Raised`] (no panic
//! hook), which `guarded` turns back into the exception.

use std::sync::Arc;

use acclab_core::cc::{AckSample, Congestion, CongestionController, CongestionEvent, SentSample};
use acclab_core::config::{ArgValue, ControllerFactory, Controllers, FlowContext, PythonParams};
use acclab_core::{Rate, Time};
use pyo3::call::PyCallArgs;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::{intern, IntoPyObjectExt};

use crate::Raised;

/// An ACK of new data, as `on_ack` sees it.
#[pyclass(module = "acclab._acclab", name = "Ack", frozen, get_all)]
pub struct Ack {
    /// Bytes newly acknowledged.
    acked_bytes: u64,
    /// The RTT sample this ACK gives, ns (None: none).
    rtt: Option<u64>,
    /// Bytes in flight before this ACK.
    in_flight: u64,
    /// Handled in fast recovery (window growth is suspended there).
    in_recovery: bool,
    /// Highest segment number sent so far, and the one acknowledged up to (exclusive).
    highest_sent: u64,
    cumulative_ack: u64,
    /// The ACK echoes an ECN mark.
    ecn_echo: bool,
    /// With Accurate ECN feedback (L4S flows): the CE-marked segments newly reported.
    ce_segments: Option<u64>,
    /// The one-way delay the ACK reports (data sent → ACK sent), ns.
    one_way_delay: Option<u64>,
    /// The delivery-rate sample (only for classes with `wants_rate_samples = True`).
    rate: Option<Py<RateSample>>,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation).
#[pyclass(module = "acclab._acclab", name = "RateSample", frozen, get_all)]
pub struct RateSample {
    /// Bytes delivered over the interval, and the interval, ns.
    delivered: u64,
    interval: u64,
    /// delivered / interval, bit/s.
    delivery_rate: u64,
    is_app_limited: bool,
    /// Bytes delivered on the connection so far.
    total_delivered: u64,
}

/// A congestion event, as `on_congestion` sees it.
#[pyclass(module = "acclab._acclab", name = "CongestionEvent", frozen, get_all)]
pub struct Event {
    /// "loss" (three duplicate ACKs or SACK), "ecn" (an echo, at most once per RTT) or
    /// "timeout".
    kind: &'static str,
    /// FlightSize, bytes (what RFC 5681's ssthresh halves).
    in_flight: u64,
    /// Bytes believed still in the network (RFC 6675's pipe; 0 on a timeout).
    pipe: u64,
}

/// A segment just sent, as `on_sent` sees it.
#[pyclass(module = "acclab._acclab", name = "Sent", frozen, get_all)]
pub struct Sent {
    seq: u64,
    bytes: u64,
    in_flight: u64,
    retransmission: bool,
}

/// Makes each `python` flow's controller: calls the Python `make(controller, args, flow)` (the
/// package's resolver: a name given to `acclab.run`, a `module:Class` or a `file.py:Class`)
/// and wraps the instance.
pub struct Factory {
    make: Py<PyAny>,
}

impl Factory {
    pub fn controllers(make: Py<PyAny>) -> Controllers {
        Controllers::of(Arc::new(Factory { make }))
    }
}

fn arg(py: Python<'_>, v: &ArgValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        ArgValue::Bool(b) => b.into_py_any(py)?,
        ArgValue::Int(i) => i.into_py_any(py)?,
        ArgValue::Float(x) => x.into_py_any(py)?,
        ArgValue::Str(s) => s.into_py_any(py)?,
        ArgValue::List(l) => {
            let items = l.iter().map(|v| arg(py, v)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        ArgValue::Table(t) => {
            let d = PyDict::new(py);
            for (k, v) in t {
                d.set_item(k, arg(py, v)?)?;
            }
            d.into_any().unbind()
        }
    })
}

impl ControllerFactory for Factory {
    fn controller(&self, p: &PythonParams, ctx: &FlowContext) -> Box<dyn CongestionController> {
        Python::attach(|py| {
            let made = (|| -> PyResult<Py<PyAny>> {
                let args = PyDict::new(py);
                for (k, v) in &p.args {
                    args.set_item(k, arg(py, v)?)?;
                }
                let flow = PyDict::new(py);
                flow.set_item("id", &ctx.name)?;
                flow.set_item("mss", ctx.packet_size)?;
                flow.set_item("initial_window", p.initial_window)?;
                flow.set_item("base_rtt", ctx.base_rtt.0)?;
                flow.set_item("line_rate", ctx.line_rate.0)?;
                flow.set_item("hops", ctx.hops)?;
                flow.set_item("seed", ctx.seed)?;
                flow.set_item("start", ctx.start.0)?;
                self.make.call1(py, (&p.controller, args, flow))
            })();
            let site = Site {
                class: p.controller.clone(),
                flow: ctx.name.clone(),
            };
            let obj = made.unwrap_or_else(|e| site.raise(py, e, "__init__", None));
            PyController::boxed(py, obj, site)
        })
    }
}

/// Which controller of which flow: what an error names.
struct Site {
    class: String,
    flow: String,
}

impl Site {
    /// Ends the run with `acclab.ControllerError` about `callback` (at `now`, if known), `cause`
    /// as its cause.
    fn raise(&self, py: Python<'_>, cause: PyErr, callback: &str, now: Option<Time>) -> ! {
        let at = now.map_or(String::new(), |t| {
            format!(" at t = {:.9} s", t.as_secs_f64())
        });
        let message = format!(
            "controller {:?} of flow {:?} failed in {callback}{at}: {cause}",
            self.class, self.flow
        );
        let err = py
            .import("acclab.controller")
            .and_then(|m| m.getattr("ControllerError"))
            .and_then(|cls| {
                cls.call1((
                    message.clone(),
                    &self.class,
                    &self.flow,
                    callback,
                    now.map(|t| t.as_secs_f64()),
                ))
            })
            .map(PyErr::from_value)
            .unwrap_or_else(|_| PyRuntimeError::new_err(message));
        err.set_cause(py, Some(cause));
        std::panic::resume_unwind(Box::new(Raised(err)))
    }
}

/// A Python controller instance behind the controller hooks.
struct PyController {
    obj: Py<PyAny>,
    site: Site,
    state: State,
    rate_samples: bool,
    has_on_sent: bool,
    has_on_recovery_end: bool,
}

/// What the transport reads of a controller after each callback.
#[derive(Default)]
struct State {
    cwnd: u64,
    ssthresh: Option<u64>,
    pacing: Option<Rate>,
    /// When `on_timer` is due (the instance's `timer`, ns).
    timer: Option<Time>,
}

/// `v` as a count of bytes (an int or a float, finite, ≥ 0; a float's fraction dropped, as a
/// Rust controller's `cwnd as u64`).
fn bytes(v: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    let x: f64 = v.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "`{name}` must be a number of bytes, not {}",
            v.get_type()
                .name()
                .map_or("?".to_string(), |n| n.to_string())
        ))
    })?;
    if !(x.is_finite() && x >= 0.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "`{name}` must be a finite number of bytes ≥ 0, not {x}"
        )));
    }
    Ok(if let Ok(i) = v.extract::<u64>() {
        i
    } else {
        x as u64
    })
}

impl PyController {
    fn boxed(py: Python<'_>, obj: Py<PyAny>, site: Site) -> Box<dyn CongestionController> {
        let b = obj.bind(py);
        let flag = |name: &str| -> PyResult<bool> {
            match b.getattr(name) {
                Ok(v) => v.is_truthy(),
                Err(_) => Ok(false),
            }
        };
        let defined = |name: &str| b.hasattr(name).unwrap_or(false);
        let rate_samples =
            flag("wants_rate_samples").unwrap_or_else(|e| site.raise(py, e, "__init__", None));
        let mut c = PyController {
            has_on_sent: defined("on_sent"),
            has_on_recovery_end: defined("on_recovery_end"),
            obj,
            site,
            state: State::default(),
            rate_samples,
        };
        c.read(py, &|| "__init__".into(), None);
        Box::new(c)
    }

    /// Reads the instance's `cwnd`, `ssthresh`, `pacing_rate` and `timer` after a callback
    /// (`callback()` names it if they are bad).
    fn read(&mut self, py: Python<'_>, callback: &dyn Fn() -> String, now: Option<Time>) {
        let b = self.obj.bind(py);
        let got = (|| -> PyResult<State> {
            let cwnd = bytes(&b.getattr(intern!(py, "cwnd"))?, "cwnd")?;
            let ssthresh = match b.getattr(intern!(py, "ssthresh")) {
                // math.inf: no threshold yet (slow start until the first reduction).
                Ok(v) if v.extract::<f64>().is_ok_and(|x| x == f64::INFINITY) => Some(u64::MAX),
                Ok(v) if !v.is_none() => Some(bytes(&v, "ssthresh")?),
                _ => None,
            };
            let pacing = match b.getattr(intern!(py, "pacing_rate")) {
                Ok(v) if !v.is_none() => {
                    let bps = bytes(&v, "pacing_rate")?;
                    if bps == 0 {
                        return Err(pyo3::exceptions::PyValueError::new_err(
                            "`pacing_rate` must be > 0 bit/s (None: no pacing)",
                        ));
                    }
                    Some(Rate(bps))
                }
                _ => None,
            };
            let timer = match b.getattr(intern!(py, "timer")) {
                Ok(v) if !v.is_none() => {
                    let t: u64 = v.extract().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(format!(
                            "`timer` must be a time in integer ns or None, not {v}"
                        ))
                    })?;
                    if now.is_some_and(|now| t <= now.0) {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "`timer` must be later than now ({} ns), not {t} ns",
                            now.map_or(0, |n| n.0)
                        )));
                    }
                    Some(Time(t))
                }
                _ => None,
            };
            Ok(State {
                cwnd,
                ssthresh,
                pacing,
                timer,
            })
        })();
        match got {
            Ok(state) => self.state = state,
            Err(e) => self.site.raise(py, e, &callback(), now),
        }
    }

    /// Calls the instance's `callback(*args)` at `now`: its exception ends the run; else the
    /// state it left is read.
    fn invoke<'py>(
        &mut self,
        py: Python<'py>,
        callback: &Bound<'py, PyString>,
        now: Time,
        args: impl PyCallArgs<'py>,
    ) {
        if let Err(e) = self.obj.bind(py).call_method1(callback, args) {
            self.site.raise(py, e, &callback.to_string(), Some(now));
        }
        self.read(py, &|| callback.to_string(), Some(now));
    }
}

impl CongestionController for PyController {
    fn on_sent(&mut self, now: Time, s: &SentSample) {
        if !self.has_on_sent {
            return;
        }
        Python::attach(|py| {
            let sent = Sent {
                seq: s.seq,
                bytes: s.bytes,
                in_flight: s.in_flight,
                retransmission: s.retransmission,
            };
            self.invoke(py, intern!(py, "on_sent"), now, (now.0, sent));
        })
    }

    fn on_ack(&mut self, now: Time, a: &AckSample) {
        Python::attach(|py| {
            let rate = a.rate.map(|r| {
                Py::new(
                    py,
                    RateSample {
                        delivered: r.delivered,
                        interval: r.interval.0,
                        delivery_rate: r.delivery_rate.0,
                        is_app_limited: r.is_app_limited,
                        total_delivered: r.total_delivered,
                    },
                )
            });
            let rate = match rate.transpose() {
                Ok(r) => r,
                Err(e) => self.site.raise(py, e, "on_ack", Some(now)),
            };
            let ack = Ack {
                acked_bytes: a.acked_bytes,
                rtt: a.rtt.map(|d| d.0),
                in_flight: a.in_flight,
                in_recovery: a.in_recovery,
                highest_sent: a.highest_sent,
                cumulative_ack: a.cumulative_ack,
                ecn_echo: a.ecn_echo,
                ce_segments: a.ce_segments,
                one_way_delay: a.one_way_delay.map(|d| d.0),
                rate,
            };
            self.invoke(py, intern!(py, "on_ack"), now, (now.0, ack));
        })
    }

    fn on_congestion_event(&mut self, now: Time, e: &CongestionEvent) {
        Python::attach(|py| {
            let event = Event {
                kind: match e.kind {
                    Congestion::Loss => "loss",
                    Congestion::Ecn => "ecn",
                    Congestion::Timeout => "timeout",
                },
                in_flight: e.in_flight,
                pipe: e.pipe,
            };
            self.invoke(py, intern!(py, "on_congestion"), now, (now.0, event));
        })
    }

    fn on_recovery_end(&mut self, now: Time) {
        if !self.has_on_recovery_end {
            return;
        }
        Python::attach(|py| {
            self.invoke(py, intern!(py, "on_recovery_end"), now, (now.0,));
        })
    }

    fn timer(&self) -> Option<Time> {
        self.state.timer
    }

    fn on_timer(&mut self, now: Time) {
        Python::attach(|py| {
            self.invoke(py, intern!(py, "on_timer"), now, (now.0,));
        })
    }

    fn window(&self) -> u64 {
        self.state.cwnd
    }

    fn in_slow_start(&self) -> bool {
        self.state.ssthresh.is_some_and(|s| self.state.cwnd < s)
    }

    fn ssthresh(&self) -> Option<u64> {
        self.state.ssthresh
    }

    fn pacing_rate(&self) -> Option<Rate> {
        self.state.pacing
    }

    fn wants_rate_samples(&self) -> bool {
        self.rate_samples
    }
}
