//! `kind = "python"`: a flow whose congestion controller is code outside the core — a Python
//! class, run by the `acclab` Python package (`acclab.run(sc, controllers = {...})`).
//!
//! The core knows nothing of Python. A flow of this kind is an ordinary TCP flow (the same
//! sender, loss recovery, SACK, ECN, pacing and receiver as every TCP scheme) whose
//! [`CongestionController`] comes from a [`ControllerFactory`] that the caller puts into the
//! scenario ([`Controllers`]); the factory gets this flow's [`PythonParams`] (which controller,
//! with which arguments) and its [`FlowContext`]. A scenario with such a flow and no factory is
//! refused before a run starts (`Scenario::not_simulable`), so `build` never meets one without.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::CongestionController;
use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;

/// A value in a Python controller's `args` table: passed to its constructor as a keyword
/// argument (a TOML table becomes a dict, an array a list).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ArgValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<ArgValue>),
    Table(BTreeMap<String, ArgValue>),
}

tcp_scheme_params! {
    /// `python` parameters: which controller, its arguments, and the TCP keys every TCP scheme
    /// has.
    pub struct PythonParams {
        /// The controller: a name in the `controllers` given to `acclab.run`, a Python
        /// `module:Class`, or a file `path/to/file.py:Class` (relative to the working
        /// directory).
        pub controller: String = String::new(),
        /// Keyword arguments of the controller's constructor.
        pub args: BTreeMap<String, ArgValue> = BTreeMap::new(),
        /// Send ECN-capable packets and hand ECN echoes to the controller (as congestion events
        /// of kind "ecn", at most one per RTT, RFC 3168 §6.1.2).
        pub ecn: bool = false,
    }
    sack = false;
}

impl SchemeParams for PythonParams {
    fn ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        if self.controller.trim().is_empty() {
            return Err(ParamError::at(
                "controller",
                "python flows need `controller`: a name given to acclab.run's `controllers`, \
                 a `module:Class` or a `file.py:Class`",
            ));
        }
        self.tcp(self.ecn).validate("python")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let factory = ctx.controllers.0.as_ref().expect(
            "a python flow is built only with a controller factory (Scenario::not_simulable)",
        );
        let cc = factory.controller(self, ctx);
        self.tcp(self.ecn).endpoints(ctx, cc)
    }
}

/// Makes the controllers of `kind = "python"` flows.
pub trait ControllerFactory: Send + Sync {
    /// The controller of the flow `ctx` describes, whose parameters are `params`. Called when
    /// the flow's endpoints are built (at its start, for a flow with a finite transfer).
    fn controller(&self, params: &PythonParams, ctx: &FlowContext)
        -> Box<dyn CongestionController>;
}

/// The controller factory a scenario's `python` flows get theirs from, if it has one.
#[derive(Clone, Default)]
pub struct Controllers(pub Option<Arc<dyn ControllerFactory>>);

impl Controllers {
    pub fn of(factory: Arc<dyn ControllerFactory>) -> Controllers {
        Controllers(Some(factory))
    }

    pub fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

impl std::fmt::Debug for Controllers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "Controllers(given)",
            None => "Controllers(none)",
        })
    }
}

/// Two scenarios' controllers are equal when they are the same factory (or both absent).
impl PartialEq for Controllers {
    fn eq(&self, other: &Controllers) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::config::SchemeConfig;
    use crate::units::{Duration, Rate};
    use crate::FlowId;

    /// A factory that hands out Reno and counts its calls.
    struct RenoFactory(std::sync::atomic::AtomicUsize);

    impl ControllerFactory for RenoFactory {
        fn controller(&self, p: &PythonParams, ctx: &FlowContext) -> Box<dyn CongestionController> {
            assert_eq!(p.controller, "tests:Reno");
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::new(Reno::new(ctx.packet_size as u64, p.initial_window))
        }
    }

    /// A flow's `params` table, read as the scenario reader does.
    fn params(text: &str) -> Result<SchemeConfig, String> {
        let t: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let sc = SchemeConfig::from_kind("python", t).map_err(|e| e.to_string())?;
        sc.validate().map_err(|e| e.message)?;
        Ok(sc)
    }

    #[test]
    fn params_take_a_controller_and_any_arguments() {
        let sc = params(
            r#"controller = "tests:Reno"
               ecn = true
               size = "10KB"
               args = { beta = 0.7, name = "x", steps = [1, 2], on = true, sub = { k = 3 } }"#,
        )
        .unwrap();
        let SchemeConfig::Python(p) = &sc else {
            panic!("{sc:?}")
        };
        assert_eq!(p.args["beta"], ArgValue::Float(0.7));
        assert_eq!(
            p.args["steps"],
            ArgValue::List(vec![ArgValue::Int(1), ArgValue::Int(2)])
        );
        assert_eq!(p.args["on"], ArgValue::Bool(true));
        assert_eq!(sc.size().map(|b| b.0), Some(10_000));
        // It writes back as it was read.
        let text = toml::to_string(p).unwrap();
        assert_eq!(params(&text).unwrap(), sc, "{text}");
    }

    #[test]
    fn a_controller_must_be_named_and_keys_are_checked() {
        let e = params("").unwrap_err();
        assert!(e.contains("python flows need `controller`"), "{e}");
        let e = params(r#"controler = "x:Y""#).unwrap_err();
        assert!(e.contains("controler"), "{e}");
    }

    #[test]
    fn the_factory_gives_the_flow_its_controller() {
        let factory = Arc::new(RenoFactory(Default::default()));
        let ctx = FlowContext {
            flow: FlowId(0),
            packet_size: 1500,
            ack_size: 40,
            seed: 1,
            name: "f0".into(),
            hops: 1,
            line_rate: Rate(1_000_000_000),
            base_rtt: Duration::from_millis(1),
            start: crate::units::Time::ZERO,
            controllers: Controllers::of(factory.clone()),
        };
        let p = PythonParams {
            controller: "tests:Reno".into(),
            ..PythonParams::default()
        };
        let (tx, _rx) = p.build(&ctx);
        assert_eq!(tx.stats().cwnd_bytes, Some(p.initial_window * 1500));
        assert_eq!(factory.0.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(ctx.controllers, ctx.controllers.clone());
        assert_ne!(ctx.controllers, Controllers::default());
    }
}
