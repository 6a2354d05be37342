//! What every algorithm's parameters share: the two traits a scheme's or a queue discipline's
//! parameter struct implements ([`SchemeParams`], [`QueueParams`]), the context they build in,
//! and the validation error with its key path. The algorithms import this module; the tagged
//! enums that name them all are in [`crate::config`], so neither imports the other.

use std::fmt;

use crate::packet::FlowId;
use crate::queue::QueueDiscipline;
use crate::transport::Endpoint;
use crate::units::{Limit, Rate};

/// A parameter that failed validation: its key path inside the `params` (or `queue`) table —
/// e.g. `kappa`, `classes[1].f_max`; empty when the table as a whole is wrong — and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl ParamError {
    /// An error of the parameter at `key`.
    pub fn at(key: impl Into<String>, message: impl Into<String>) -> ParamError {
        ParamError {
            key: key.into(),
            message: message.into(),
        }
    }

    /// The same error, seen from the table that holds `prefix` (`kappa` → `monaco.kappa`).
    pub fn within(self, prefix: &str) -> ParamError {
        let key = match self.key.as_str() {
            "" => prefix.to_string(),
            k if k.starts_with('[') => format!("{prefix}{k}"),
            k => format!("{prefix}.{k}"),
        };
        ParamError { key, ..self }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key.as_str() {
            "" => f.write_str(&self.message),
            k => write!(f, "`{k}`: {}", self.message),
        }
    }
}

thread_local! {
    /// The ranges the checks below named while [`ranges_checked_by`] listened.
    static NAMED: std::cell::RefCell<Option<Vec<(String, String)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Tells a listening [`ranges_checked_by`] that `key` was checked against `allowed`.
fn named(key: &str, allowed: impl FnOnce() -> String) {
    NAMED.with(|n| {
        if let Some(v) = n.borrow_mut().as_mut() {
            v.push((key.to_string(), allowed()));
        }
    });
}

/// Runs `check` (a validation) and returns every (key, allowed values) that the range checks
/// of this module made on its way, in order — how `acclab params` states each parameter's
/// range from the very code that enforces it.
pub fn ranges_checked_by(check: impl FnOnce()) -> Vec<(String, String)> {
    NAMED.with(|n| *n.borrow_mut() = Some(Vec::new()));
    check();
    NAMED.with(|n| n.borrow_mut().take().unwrap_or_default())
}

/// Requires `x` to be finite and positive.
pub fn positive(key: &str, x: f64) -> Result<(), ParamError> {
    named(key, || "(0, inf)".into());
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(ParamError::at(key, format!("must be positive, not {x}")))
    }
}

/// Requires `x` to be a finite number inside `range`; the error names the range, e.g. "must be
/// in (0, 1], not NaN".
pub fn in_range(
    key: &str,
    x: f64,
    range: impl std::ops::RangeBounds<f64>,
) -> Result<(), ParamError> {
    use std::ops::Bound;
    let lo = match range.start_bound() {
        Bound::Included(a) => format!("[{}", num(*a)),
        Bound::Excluded(a) => format!("({}", num(*a)),
        Bound::Unbounded => "(-inf".to_string(),
    };
    let hi = match range.end_bound() {
        Bound::Included(b) => format!("{}]", num(*b)),
        Bound::Excluded(b) => format!("{})", num(*b)),
        Bound::Unbounded => "inf)".to_string(),
    };
    named(key, || format!("{lo}, {hi}"));
    if x.is_finite() && range.contains(&x) {
        return Ok(());
    }
    Err(ParamError::at(
        key,
        format!("must be a finite number in {lo}, {hi}, not {}", num(x)),
    ))
}

/// A number as people write it: plain when moderate, in exponent form when huge or tiny.
fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e7).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Requires a count to be in [lo, hi]; the error names the range.
pub fn count_in(key: &str, n: u64, lo: u64, hi: u64) -> Result<(), ParamError> {
    named(key, || format!("[{lo}, {hi}]"));
    if (lo..=hi).contains(&n) {
        Ok(())
    } else {
        Err(ParamError::at(
            key,
            format!("must be in [{lo}, {hi}], not {n}"),
        ))
    }
}

/// Requires a duration to be at least `min` (a timer period shorter than that would make a run
/// endless in events); the error names the bound.
pub fn period_at_least(
    key: &str,
    d: crate::units::Duration,
    min: crate::units::Duration,
) -> Result<(), ParamError> {
    named(key, || format!("at least {min}"));
    if d >= min {
        Ok(())
    } else {
        Err(ParamError::at(
            key,
            format!("must be at least {min}, not {d}"),
        ))
    }
}

/// The shortest period of any timer a parameter sets (REM's and BAT's updates, CBR's repeat):
/// 10 µs, 100,000 events per simulated second.
pub const MIN_PERIOD: crate::units::Duration = crate::units::Duration(10_000);

/// The fastest link or sending rate a scenario may give: 10 Tb/s.
pub const MAX_RATE: crate::units::Rate = crate::units::Rate(10_000_000_000_000);

/// Requires a rate in [1 bps, [`MAX_RATE`]].
pub fn rate_in_range(key: &str, r: crate::units::Rate) -> Result<(), ParamError> {
    named(key, || format!("[1 bps, {MAX_RATE}]"));
    if (1..=MAX_RATE.0).contains(&r.0) {
        Ok(())
    } else {
        Err(ParamError::at(
            key,
            format!("must be in [1 bps, {MAX_RATE}], not {r}"),
        ))
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;
    use std::ops::Bound::{Excluded, Included};

    #[test]
    fn ranges_reject_nan_infinities_and_outsiders_and_say_the_range() {
        let open = (Excluded(0.0), Included(1.0));
        assert!(in_range("p", 0.5, open).is_ok());
        assert!(in_range("p", 1.0, open).is_ok());
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(in_range("p", bad, open).is_err(), "{bad}");
        }
        let e = in_range("wq", 1e308, open).unwrap_err();
        assert_eq!(e.key, "wq");
        assert_eq!(e.message, "must be a finite number in (0, 1], not 1e308");
        let e = in_range("mu", f64::NAN, 0.0..=1e6).unwrap_err();
        assert_eq!(
            e.message,
            "must be a finite number in [0, 1000000], not NaN"
        );
        assert!(count_in("users", 0, 1, 10).is_err());
        assert_eq!(
            count_in("users", 11, 1, 10).unwrap_err().message,
            "must be in [1, 10], not 11"
        );
        assert!(period_at_least("interval", crate::units::Duration(9_999), MIN_PERIOD).is_err());
        assert!(period_at_least("interval", MIN_PERIOD, MIN_PERIOD).is_ok());
        assert!(rate_in_range("rate", crate::units::Rate(0)).is_err());
        assert!(rate_in_range("rate", MAX_RATE).is_ok());
        assert!(rate_in_range("rate", crate::units::Rate(MAX_RATE.0 + 1)).is_err());
    }
}

/// `true`, for `#[serde(default = "crate::params::yes")]` on switches that are on by default.
pub(crate) fn yes() -> bool {
    true
}

/// What a scheme needs from the scenario to build its endpoints.
#[derive(Clone, Debug)]
pub struct FlowContext {
    pub flow: FlowId,
    /// Default data packet size in bytes (headers included).
    pub packet_size: u32,
    /// ACK and control packet size in bytes.
    pub ack_size: u32,
    /// The run seed, for schemes that draw random numbers (with [`crate::rng::stream`]).
    pub seed: u64,
    /// The flow's name in the scenario, which names its random stream.
    pub name: String,
    /// Links on the flow's forward path (Swift's topology scaling reads it, where the paper
    /// reads the TTL).
    pub hops: u32,
    /// The rate of the flow's first link (its NIC), where its path begins.
    pub line_rate: crate::units::Rate,
    /// The flow's unloaded round-trip time: propagation both ways plus one data packet's
    /// serialisation on each forward link and one ACK's on each reverse link.
    pub base_rtt: crate::units::Duration,
    /// When the flow starts (its `start` plus its drawn jitter).
    pub start: crate::units::Time,
    /// Where `kind = "python"` flows get their controllers (none: such flows are refused).
    pub controllers: crate::cc::python::Controllers,
}

/// A flow's scheme: its parameters, how they are checked, and the endpoints they build.
pub trait SchemeParams {
    /// Checks what serde cannot: ranges and combinations of parameters.
    fn validate(&self) -> Result<(), ParamError>;
    /// Builds the sender and the receiver of one flow (of validated parameters: cannot fail).
    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>);
    /// The traffic class a flow of this scheme belongs to unless the scenario says otherwise.
    fn default_class(&self) -> &'static str {
        "tcp"
    }
    /// Whether the receiver sends packets back (ACKs, reverse control), so the flow needs a
    /// route from its destination to its source.
    fn sends_feedback(&self) -> bool {
        true
    }
    /// Whether the flow's data packets collect in-band telemetry from the queues they leave
    /// (HPCC's INT, [`crate::telemetry`]), handed to its sender with the ACKs.
    fn telemetry(&self) -> bool {
        false
    }
    /// What runs the flow when acclab's own endpoints do not (a kernel TCP connection,
    /// programs): such a flow runs only in live mode's network namespaces, and the simulator
    /// refuses it. `None` for every scheme acclab implements.
    fn external(&self) -> Option<&'static str> {
        None
    }
    /// Whether the flow sends ECN-capable packets and reacts to echoes (RFC 3168).
    fn ecn(&self) -> bool {
        false
    }
}

/// A boxed scheme's parameters are its parameters: [`crate::config::SchemeConfig`] keeps its
/// larger variants boxed, so that a workload's flows of the common kinds (Reno, CUBIC, DCTCP,
/// BBR), a million of them in a scenario, are not each as large as the largest kind.
impl<T: SchemeParams + ?Sized> SchemeParams for Box<T> {
    fn validate(&self) -> Result<(), ParamError> {
        (**self).validate()
    }
    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (**self).build(ctx)
    }
    fn default_class(&self) -> &'static str {
        (**self).default_class()
    }
    fn sends_feedback(&self) -> bool {
        (**self).sends_feedback()
    }
    fn telemetry(&self) -> bool {
        (**self).telemetry()
    }
    fn external(&self) -> Option<&'static str> {
        (**self).external()
    }
    fn ecn(&self) -> bool {
        (**self).ecn()
    }
}

/// What a queue discipline needs from the scenario.
#[derive(Clone, Debug)]
pub struct QueueContext {
    pub rate: Rate,
    pub seed: u64,
    /// The link's name, which names its random stream.
    pub name: String,
    /// The traffic class of each flow (by flow id), for class-based AQMs; shared by every link
    /// of a scenario (a clone is a reference count, not a copy of every flow's class). Empty
    /// unless a link's discipline asks for them ([`QueueParams::needs_flow_classes`]): a
    /// million flows' classes are not copied for disciplines that never read them.
    pub flow_classes: std::sync::Arc<[String]>,
    /// The scenario's data packet size (for AQMs that count in packets).
    pub packet_size: u32,
}

/// A link's queue discipline: its parameters, how they are checked, and the queue they build.
pub trait QueueParams {
    /// Checks what serde cannot.
    fn validate(&self) -> Result<(), ParamError>;
    /// Checks what depends on the link the queue is in front of (its rate, the scenario's data
    /// packet size): a class's guaranteed rate above the link's, a marking threshold below one
    /// packet. Called after [`validate`](Self::validate), for every link.
    fn validate_on_link(&self, _rate: Rate, _packet_size: u32) -> Result<(), ParamError> {
        Ok(())
    }
    /// Builds the discipline (of validated parameters: cannot fail).
    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline>;
    /// Whether the discipline reads [`QueueContext::flow_classes`] (class-based AQMs).
    fn needs_flow_classes(&self) -> bool {
        false
    }
    /// Every buffer limit this discipline enforces (for invariant checks): one per band.
    fn limits(&self) -> Vec<Limit>;
    /// Whether high-priority packets (Monaco's out-of-band control packets) have a band of
    /// their own in front of the data: a discipline with more than one buffer limit has bands.
    /// Whether the queue can mark ECN-capable packets (CE) instead of dropping them.
    fn marks_ecn(&self) -> bool {
        false
    }
    fn priority_band(&self) -> bool {
        self.limits().len() > 1
    }
}
