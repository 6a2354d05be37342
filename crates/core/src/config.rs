//! The scenario vocabulary: a flow's `kind` + `params` and a link's `queue` table, as two tagged
//! enums that delegate to the algorithms.
//!
//! Each algorithm owns its parameters: the struct (serde, defaults, documentation of every key),
//! its validation and its `build` live in the algorithm's own file, behind [`SchemeParams`] or
//! [`QueueParams`] (declared in [`crate::params`], which the algorithms import; this file imports
//! the algorithms, never the other way round). This file only names them. Adding a scheme or a
//! queue discipline is one new file (the algorithm with its parameter struct) plus one variant
//! line in the `tagged_enum!` invocations below. Unknown keys are errors
//! (`deny_unknown_fields`), never ignored.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::queue::QueueDiscipline;
use crate::transport::Endpoint;
use crate::units::Limit;

pub use crate::params::{
    positive, FlowContext, ParamError, QueueContext, QueueParams, SchemeParams,
};

pub use crate::cc::bbr::{Bbr3Params, BbrParams};
pub use crate::cc::copa::CopaParams;
pub use crate::cc::cubic::CubicParams;
pub use crate::cc::dctcp::DctcpParams;
pub use crate::cc::hpcc::HpccParams;
pub use crate::cc::ledbat::LedbatParams;
pub use crate::cc::prague::PragueParams;
pub use crate::cc::python::{ArgValue, ControllerFactory, Controllers, PythonParams};
pub use crate::cc::reno::RenoParams;
pub use crate::cc::swift::SwiftParams;
pub use crate::cc::vegas::{BaseRttParam, PerUnit, VegasParams, VegasRemParams};
pub use crate::cc::vivace::VivaceParams;
pub use crate::queue::avq::{AvdStamp, AvqMode, AvqParams};
pub use crate::queue::bat::{BatClassParams, BatParams};
pub use crate::queue::clcc::{ClccParams, RatioParam};
pub use crate::queue::codel::CodelParams;
pub use crate::queue::droptail::DroptailParams;
pub use crate::queue::dualpi2::DualPi2Params;
pub use crate::queue::fq_codel::FqCodelParams;
pub use crate::queue::pie::PieParams;
pub use crate::queue::priority::PriorityParams;
pub use crate::queue::red::RedParams;
pub use crate::queue::rem::RemParams;
pub use crate::queue::step_ecn::StepEcnParams;
pub use crate::transport::cbr::{CbrParams, CbrStep};
pub use crate::transport::external::{CommandParams, KernelTcpParams};
pub use crate::transport::monaco::{AccPolicyName, Estimator, MonacoParams};
pub use crate::transport::onoff::{OnOffParams, OnOffScheme};
pub use crate::transport::web::WebParams;

/// Declares a tagged enum over parameter structs: the enum, its `kind` names, `from_kind` (the
/// parameters of a kind from any serde deserializer, so that a front end can track key paths),
/// `params` (the variant as a trait object), and serialisation as `kind` plus the parameters.
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])* $enum:ident: dyn $trait:ident, $layout:ident;
        $( $(#[doc = $vdoc:literal])* $variant:ident($params:ty) = $kind:literal, )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $enum {
            $( $(#[doc = $vdoc])* $variant($params), )*
        }

        impl $enum {
            /// Every `kind`, as written in scenario files.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            /// The `kind` as written in scenario files.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( $enum::$variant(_) => $kind, )*
                }
            }

            /// The parameters of `kind`, read from `params`.
            pub fn from_kind<'de, D: Deserializer<'de>>(kind: &str, params: D) -> Result<Self, D::Error> {
                match kind {
                    $( $kind => <$params>::deserialize(params).map($enum::$variant), )*
                    other => Err(serde::de::Error::unknown_variant(other, Self::KINDS)),
                }
            }

            /// What `kind` is: its doc comment above.
            pub fn about(kind: &str) -> Option<String> {
                match kind {
                    $( $kind => Some([$($vdoc),*].iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ")), )*
                    _ => None,
                }
            }

            /// The JSON Schema of `kind`'s parameters: keys, types, defaults and each field's
            /// doc comment, from the very struct that reads them.
            pub fn schema(kind: &str) -> Option<schemars::Schema> {
                match kind {
                    $( $kind => Some(schemars::schema_for!($params)), )*
                    _ => None,
                }
            }

            /// The parameters, as the trait every variant implements.
            pub fn params(&self) -> &dyn $trait {
                match self {
                    $( $enum::$variant(p) => p, )*
                }
            }
        }

        impl Serialize for $enum {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $enum::$variant(p) => tagged_enum!(@ser $layout, s, $kind, p), )*
                }
            }
        }
    };
    // `kind = "..."`, `params = { ... }` (a flow).
    (@ser adjacent, $s:ident, $kind:literal, $p:ident) => {{
        use serde::ser::SerializeStruct;
        let mut st = $s.serialize_struct("Tagged", 2)?;
        st.serialize_field("kind", $kind)?;
        st.serialize_field("params", $p)?;
        st.end()
    }};
    // `{ kind = "...", ... }` (a queue).
    (@ser internal, $s:ident, $kind:literal, $p:ident) => {{
        #[derive(Serialize)]
        struct Tagged<'a, P> {
            kind: &'static str,
            #[serde(flatten)]
            params: &'a P,
        }
        Tagged { kind: $kind, params: $p }.serialize($s)
    }};
}

tagged_enum! {
    /// A flow's scheme and its parameters: `kind = "reno"`, `params = { … }`. The kinds whose
    /// parameters take more than 128 bytes are boxed: a workload's flows (a million in a
    /// scenario) of the common kinds take 136 bytes each for their scheme, not 280.
    SchemeConfig: dyn SchemeParams, adjacent;
    /// TCP Reno with NewReno loss recovery.
    Reno(RenoParams) = "reno",
    /// CUBIC (RFC 9438) over NewReno loss recovery, optionally with HyStart++ (RFC 9406).
    Cubic(CubicParams) = "cubic",
    /// DCTCP (RFC 8257): Reno growth, ECN reaction in proportion to the marked fraction.
    Dctcp(DctcpParams) = "dctcp",
    /// TCP Prague (draft-briscoe-iccrg-prague-congestion-control): the L4S sender — ECT(1),
    /// Accurate ECN, DCTCP's reduction, RTT-independent increase, paced.
    Prague(PragueParams) = "prague",
    /// LEDBAT (RFC 6817): less than best effort, the queueing delay it adds held near a
    /// target (100 ms), yielding to standard TCP.
    Ledbat(LedbatParams) = "ledbat",
    /// Copa (Arun & Balakrishnan, NSDI 2018): delay-based, towards 1/δ packets queued per flow,
    /// with a competitive mode against buffer-filling flows.
    Copa(CopaParams) = "copa",
    /// PCC Vivace (Dong et al., NSDI 2018): rate-based online learning, gradient ascent on a
    /// utility of throughput, RTT gradient and loss over monitor intervals.
    Vivace(Box<VivaceParams>) = "vivace",
    /// BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00): paced at the modelled
    /// bottleneck bandwidth, Startup / Drain / ProbeBW / ProbeRTT.
    Bbr(BbrParams) = "bbr",
    /// BBRv3 (draft-ietf-ccwg-bbr): v1's model with loss- and ECN-learned bounds
    /// (inflight_hi, bw_lo, inflight_lo), ProbeBW's DOWN / CRUISE / REFILL / UP.
    Bbr3(Box<Bbr3Params>) = "bbr3",
    /// Swift (Kumar et al., SIGCOMM 2020): AIMD on the window against a target delay scaled
    /// by hops and by the window, paced below one segment.
    Swift(Box<SwiftParams>) = "swift",
    /// HPCC (Li et al., SIGCOMM 2019): a window from the in-band telemetry of every queue on
    /// the path, towards a target utilisation η, paced at W/T.
    Hpcc(HpccParams) = "hpcc",
    /// TCP Vegas (PF or WPF, baseRTT min / Vegas-k / fixed) over NewReno loss recovery.
    Vegas(Box<VegasParams>) = "vegas",
    /// A controller written in Python (the `acclab` package runs it), over the TCP transport.
    Python(Box<PythonParams>) = "python",
    /// Vegas+REM (002 §5): Vegas whose congestion avoidance follows the price REM marks convey.
    VegasRem(Box<VegasRemParams>) = "vegas-rem",
    /// Constant bit rate, not responsive.
    Cbr(CbrParams) = "cbr",
    /// On-off mice: exponential file sizes and off times, each file a fresh TCP transfer.
    Onoff(Box<OnOffParams>) = "onoff",
    /// Monaco: ACC with the out-of-band receiver-based accumulation estimator (000 §IV-B).
    Monaco(Box<MonacoParams>) = "monaco",
    /// Web users (SURGE-style sessions, pages, Pareto objects), each object a short transfer.
    Web(Box<WebParams>) = "web",
    /// The kernel's own TCP between two network namespaces (live mode with `--netns` only).
    KernelTcp(Box<KernelTcpParams>) = "kernel-tcp",
    /// Unmodified programs (e.g. iperf3) in the flow's namespaces (live mode with `--netns`
    /// only).
    Command(Box<CommandParams>) = "command",
}

tagged_enum! {
    /// A link's queue discipline: `queue = { kind = "droptail", limit = "90pkt" }`.
    QueueConfig: dyn QueueParams, internal;
    /// Tail-drop FIFO (optionally priority-capable for Monaco's control packets).
    Droptail(DroptailParams) = "droptail",
    /// Two-priority strict FIFO.
    Priority(PriorityParams) = "priority",
    /// BAT rate-based AQM per traffic class (004 eq. (1)), optionally with CLCC.
    Bat(BatParams) = "bat",
    /// RED (Floyd–Jacobson).
    Red(RedParams) = "red",
    /// REM (002 §5).
    Rem(RemParams) = "rem",
    /// AVQ (Kunniyur–Srikant); `mode = "delay"` is AVD / AVQ+VD for Monaco.
    Avq(AvqParams) = "avq",
    /// CoDel (RFC 8289): drops (or marks) at the head against a standing queue delay.
    Codel(CodelParams) = "codel",
    /// PIE (RFC 8033): random early drops (or marks) from a PI controller of the queueing delay.
    Pie(PieParams) = "pie",
    /// FQ-CoDel (RFC 8290): per-flow queues served by deficit round robin, CoDel on each.
    FqCodel(FqCodelParams) = "fq-codel",
    /// Step ECN marking above a threshold K (DCTCP's switch, RFC 8257 §3.1).
    StepEcn(StepEcnParams) = "step-ecn",
    /// DualPI2 (RFC 9332): the L4S DualQ Coupled AQM — an L queue for ECT(1) marked at a
    /// shallow step and k·p′, a classic queue under PI2 (p′²).
    DualPi2(DualPi2Params) = "dualpi2",
}

impl SchemeConfig {
    /// Checks what serde cannot: ranges and combinations of parameters.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.params().validate()
    }

    /// Builds the sender and the receiver of one flow.
    pub fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        self.params().build(ctx)
    }

    /// The traffic class a flow of this scheme belongs to unless the scenario says otherwise.
    pub fn default_class(&self) -> &'static str {
        self.params().default_class()
    }

    /// Whether the receiver sends packets back, so the flow needs a reverse route.
    pub fn sends_feedback(&self) -> bool {
        self.params().sends_feedback()
    }

    /// Whether the flow's data packets collect in-band telemetry ([`crate::telemetry`]).
    pub fn telemetry(&self) -> bool {
        self.params().telemetry()
    }

    /// Vegas's parameters: a `vegas` flow's, or those a `vegas-rem` flow's Vegas runs with.
    pub fn vegas(&self) -> Option<&VegasParams> {
        match self {
            SchemeConfig::Vegas(p) => Some(p),
            SchemeConfig::VegasRem(p) => Some(&p.0),
            _ => None,
        }
    }

    /// The finite transfer this flow carries, bytes (the TCP schemes' and Monaco's `size` key);
    /// `None`: bulk, or a scheme without one.
    pub fn size(&self) -> Option<crate::units::Bytes> {
        match self {
            SchemeConfig::Reno(p) => p.size,
            SchemeConfig::Cubic(p) => p.size,
            SchemeConfig::Dctcp(p) => p.size,
            SchemeConfig::Prague(p) => p.size,
            SchemeConfig::Ledbat(p) => p.size,
            SchemeConfig::Copa(p) => p.size,
            SchemeConfig::Vivace(p) => p.size,
            SchemeConfig::Bbr(p) => p.size,
            SchemeConfig::Bbr3(p) => p.size,
            SchemeConfig::Swift(p) => p.size,
            SchemeConfig::Hpcc(p) => p.size,
            SchemeConfig::Vegas(p) => p.size,
            SchemeConfig::Python(p) => p.size,
            SchemeConfig::Monaco(p) => p.size,
            _ => None,
        }
    }

    /// The initial window, segments, of the schemes whose packets in flight a congestion
    /// window bounds (each ACK-clocked, reacting to loss, marks or delay): what the cost
    /// estimate counts a flow's packets in the network by. `None` for the others — rate-based
    /// (Vivace, CBR), Python's (any window a controller likes), Monaco's (it opens its window
    /// without bound where it sees no accumulation), and the schemes of many transfers.
    pub fn initial_window(&self) -> Option<u64> {
        match self {
            SchemeConfig::Reno(p) => Some(p.initial_window),
            SchemeConfig::Cubic(p) => Some(p.initial_window),
            SchemeConfig::Dctcp(p) => Some(p.initial_window),
            SchemeConfig::Prague(p) => Some(p.initial_window),
            SchemeConfig::Ledbat(p) => Some(p.initial_window),
            SchemeConfig::Copa(p) => Some(p.initial_window),
            SchemeConfig::Bbr(p) => Some(p.initial_window),
            SchemeConfig::Bbr3(p) => Some(p.initial_window),
            SchemeConfig::Swift(p) => Some(p.initial_window),
            SchemeConfig::Hpcc(p) => Some(p.initial_window),
            SchemeConfig::Vegas(p) => Some(p.initial_window),
            SchemeConfig::VegasRem(p) => Some(p.0.initial_window),
            _ => None,
        }
    }

    /// This scheme carrying a finite transfer of `size` bytes, for the schemes whose flows can
    /// (the TCP ones and Monaco: their `size` key); `None` for the others.
    pub fn with_size(&self, size: crate::units::Bytes) -> Option<SchemeConfig> {
        let mut s = self.clone();
        match &mut s {
            SchemeConfig::Reno(p) => p.size = Some(size),
            SchemeConfig::Cubic(p) => p.size = Some(size),
            SchemeConfig::Dctcp(p) => p.size = Some(size),
            SchemeConfig::Prague(p) => p.size = Some(size),
            SchemeConfig::Ledbat(p) => p.size = Some(size),
            SchemeConfig::Copa(p) => p.size = Some(size),
            SchemeConfig::Vivace(p) => p.size = Some(size),
            SchemeConfig::Bbr(p) => p.size = Some(size),
            SchemeConfig::Bbr3(p) => p.size = Some(size),
            SchemeConfig::Swift(p) => p.size = Some(size),
            SchemeConfig::Hpcc(p) => p.size = Some(size),
            SchemeConfig::Vegas(p) => p.size = Some(size),
            SchemeConfig::Python(p) => p.size = Some(size),
            SchemeConfig::Monaco(p) => p.size = Some(size),
            _ => return None,
        }
        Some(s)
    }

    /// Whether the flow uses ECN ([`SchemeParams::ecn`]).
    pub fn ecn(&self) -> bool {
        self.params().ecn()
    }

    /// What runs the flow if not acclab's endpoints ([`SchemeParams::external`]).
    pub fn external(&self) -> Option<&'static str> {
        self.params().external()
    }
}

impl QueueConfig {
    /// The built-in default when neither the link nor `[defaults]` gives a queue.
    pub fn default_queue() -> QueueConfig {
        QueueConfig::Droptail(DroptailParams {
            limit: Limit::Packets(1000),
            priority: false,
        })
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.params().validate()
    }

    /// Builds the discipline.
    pub fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        self.params().build(ctx)
    }

    /// Every buffer limit this discipline enforces (for invariant checks).
    pub fn limits(&self) -> Vec<Limit> {
        self.params().limits()
    }

    /// Checks what depends on the link: see [`QueueParams::validate_on_link`].
    pub fn validate_on_link(
        &self,
        rate: crate::units::Rate,
        packet_size: u32,
    ) -> Result<(), ParamError> {
        self.params().validate_on_link(rate, packet_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::vegas::BaseRtt;
    use crate::units::Duration;

    /// Every flow of a scenario holds its scheme inline (a workload's million flows too): the
    /// kinds a workload runs (Reno, CUBIC, DCTCP, BBR) stay inline, the larger ones boxed.
    #[test]
    fn a_scheme_takes_at_most_136_bytes() {
        assert!(std::mem::size_of::<SchemeConfig>() <= 136);
        for inline in [
            std::mem::size_of::<RenoParams>(),
            std::mem::size_of::<CubicParams>(),
            std::mem::size_of::<DctcpParams>(),
            std::mem::size_of::<BbrParams>(),
        ] {
            assert!(inline <= 128, "{inline}");
        }
    }

    /// A queue table, as a front end reads it: `kind` split off, the rest to `from_kind`.
    fn queue(src: &str) -> Result<QueueConfig, toml::de::Error> {
        let mut t: toml::Table = toml::from_str(src)?;
        let kind = t.remove("kind").and_then(|k| k.as_str().map(String::from));
        QueueConfig::from_kind(&kind.unwrap_or_default(), toml::Value::Table(t))
    }

    /// A flow's `kind` and `params`.
    fn scheme(kind: &str, params: &str) -> Result<SchemeConfig, toml::de::Error> {
        let t: toml::Table = toml::from_str(params)?;
        SchemeConfig::from_kind(kind, toml::Value::Table(t))
    }

    #[test]
    fn queue_tables_parse_and_reject_unknown_keys() {
        let q = queue("kind = \"droptail\"\nlimit = \"90pkt\"").unwrap();
        assert_eq!(
            q,
            QueueConfig::Droptail(DroptailParams {
                limit: Limit::Packets(90),
                priority: false
            })
        );
        let e = queue("kind = \"droptail\"\nlimit = \"9pkt\"\nlimt = 1").unwrap_err();
        assert!(e.to_string().contains("limt"), "{e}");
        let e = queue("kind = \"bogus\"\nlimit = \"9pkt\"").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }

    #[test]
    fn schemes_parse_with_defaults() {
        let s = scheme("reno", "").unwrap();
        assert_eq!(s, SchemeConfig::Reno(RenoParams::default()));
        let s: SchemeConfig = scheme("cbr", "rate = \"10Mbps\"").unwrap();
        assert_eq!(s.kind(), "cbr");
        let s = scheme("vegas", "alpha = 2\nbeta = 2\nper = \"10ms\"\nk = 8").unwrap();
        let SchemeConfig::Vegas(v) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(v.per, PerUnit::Time(Duration::from_millis(10)));
        assert_eq!(v.controller(1000, false).base_rtt, BaseRtt::LastK(8));
        assert_eq!(v.controller(1000, true).marks, Some(1.1));
        let e = scheme("vegas", "per = \"often\"").unwrap_err();
        assert!(e.to_string().contains("\"rtt\" or a duration"), "{e}");
        let bad = scheme("vegas", "alpha = 3\nbeta = 2").unwrap();
        assert!(bad.validate().is_err());
        let phi_on_vegas = scheme("vegas", "phi = 1.2").unwrap();
        assert_eq!(phi_on_vegas.validate().unwrap_err().key, "phi");
        let e = scheme("reno", "ecm = true").unwrap_err();
        assert!(e.to_string().contains("ecm"), "{e}");
    }

    #[test]
    fn every_kind_round_trips_through_serialisation() {
        for (kind, params) in [
            ("monaco", "weight = 2.0\npolicy = \"acc-mw\""),
            ("vegas-rem", "phi = 1.2"),
            ("cbr", "rate = \"10Mbps\"\nschedule = [{ at = \"1s\" }]"),
        ] {
            let s = scheme(kind, params).unwrap();
            let text = toml::to_string(&s).unwrap();
            let mut back: toml::Table = toml::from_str(&text).unwrap();
            let params = back.remove("params").unwrap();
            assert_eq!(SchemeConfig::from_kind(kind, params).unwrap(), s, "{text}");
        }
        let q = queue("kind = \"avq\"\nlimit = \"50pkt\"\nmode = \"delay\"").unwrap();
        let text = toml::to_string(&q).unwrap();
        assert_eq!(queue(&text).unwrap(), q, "{text}");
    }

    #[test]
    fn a_nested_error_names_its_whole_key() {
        let e = ParamError::at("f_max", "must be positive").within("classes[1]");
        assert_eq!(e.key, "classes[1].f_max");
        assert_eq!(ParamError::at("", "bad").within("monaco").key, "monaco");
    }
}
