//! The scenario vocabulary: serde-tagged configuration enums that also build the state machines.
//!
//! A flow's `kind` and `params` (SPEC §9) deserialise into [`SchemeConfig`]; a link's `queue`
//! table into [`QueueConfig`]. Adding an algorithm is one new file, one variant here and one arm
//! in the matching `build`. Unknown keys are errors (`deny_unknown_fields`), never ignored.

use serde::{Deserialize, Serialize};

use crate::cc::acc::aiad::AccAiad;
use crate::cc::acc::expected::ExpectedRate;
use crate::cc::acc::mw::AccMw;
use crate::cc::acc::p::AccP;
use crate::cc::acc::AccPolicy;
use crate::cc::reno::Reno;
use crate::cc::vegas::{BaseRtt, Vegas, VegasConfig};
use crate::cc::CongestionController;
use crate::packet::FlowId;
use crate::queue::avq::{Avq, AvqConfig, AvqMode};
use crate::queue::bat::{Bat, BatClassConfig, BatConfig};
use crate::queue::clcc::ClccConfig;
use crate::queue::red::{Red, RedConfig};
use crate::queue::rem::{Rem, RemConfig};
use crate::queue::{DropTail, PriorityFifo, QueueDiscipline};
use crate::transport::cbr::{CbrSink, CbrSource, CbrStep};
use crate::transport::monaco::{Estimator, MonacoConfig, MonacoReceiver, MonacoSender};
use crate::transport::onoff::{ControllerFactory, OnOffSender};
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::web::{ObjectTransport, WebModel, WebReceiver, WebSender};
use crate::transport::Endpoint;
use crate::units::{Bytes, Duration, Limit, Rate};

/// A flow's scheme and its parameters: `kind = "reno"`, `params = { … }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", content = "params", rename_all = "kebab-case")]
pub enum SchemeConfig {
    /// TCP Reno with NewReno loss recovery.
    Reno(RenoParams),
    /// TCP Vegas (PF or WPF, baseRTT min / Vegas-k / fixed) over NewReno loss recovery.
    Vegas(VegasParams),
    /// Vegas+REM (002 §5): Vegas whose congestion avoidance follows the price REM marks convey.
    VegasRem(VegasParams),
    /// Constant bit rate, not responsive.
    Cbr(CbrParams),
    /// On-off mice: exponential file sizes and off times, each file a fresh TCP transfer.
    Onoff(OnOffParams),
    /// Monaco: ACC with the out-of-band receiver-based accumulation estimator (000 §IV-B).
    Monaco(MonacoParams),
    /// Web users (SURGE-style sessions, pages, Pareto objects), each object a short Reno transfer.
    Web(WebParams),
}

/// `web` parameters; defaults in transport/web.rs (`WebModel::default`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebParams {
    /// Users multiplexed on this flow.
    pub users: u32,
    pub pages_per_session: Option<f64>,
    pub session_gap: Option<Duration>,
    pub think_time: Option<Duration>,
    pub think_shape: Option<f64>,
    pub objects_per_page: Option<f64>,
    pub objects_shape: Option<f64>,
    pub object_size: Option<Bytes>,
    pub object_shape: Option<f64>,
    pub min_rto: Option<Duration>,
    pub initial_window: Option<u64>,
    /// Carry each object on a fresh Monaco loop with these settings instead of TCP Reno (003
    /// Table I: its web users are loops of weight 1). `min_rto` and `initial_window` are then
    /// the loop's own, given here.
    pub monaco: Option<MonacoParams>,
}

impl WebParams {
    /// The model these parameters describe.
    pub fn model(&self) -> WebModel {
        let d = WebModel::default();
        WebModel {
            users: self.users,
            pages_per_session: self.pages_per_session.unwrap_or(d.pages_per_session),
            session_gap: self.session_gap.unwrap_or(d.session_gap),
            think_time: self.think_time.unwrap_or(d.think_time),
            think_shape: self.think_shape.unwrap_or(d.think_shape),
            objects_per_page: self.objects_per_page.unwrap_or(d.objects_per_page),
            objects_shape: self.objects_shape.unwrap_or(d.objects_shape),
            object_size: self.object_size.map_or(d.object_size, |b| b.0 as f64),
            object_shape: self.object_shape.unwrap_or(d.object_shape),
        }
    }

    fn validate(&self) -> Result<(), String> {
        let m = self.model();
        if m.users == 0 {
            return Err("web needs at least one user".into());
        }
        for (name, shape) in [
            ("think_shape", m.think_shape),
            ("objects_shape", m.objects_shape),
            ("object_shape", m.object_shape),
        ] {
            if !(shape > 1.0 && shape.is_finite()) {
                return Err(format!(
                    "web `{name}` must exceed 1 (a finite mean), not {shape}"
                ));
            }
        }
        if !(m.objects_per_page >= 1.0 && m.pages_per_session >= 1.0) {
            return Err("web `objects_per_page` and `pages_per_session` must be at least 1".into());
        }
        if m.think_time.0 == 0 || m.session_gap.0 == 0 {
            return Err("web `think_time` and `session_gap` must be positive".into());
        }
        match &self.monaco {
            Some(_) if self.min_rto.is_some() || self.initial_window.is_some() => Err(
                "web `min_rto` and `initial_window` are TCP's; with `monaco` give them inside it"
                    .into(),
            ),
            Some(monaco) => monaco.validate(),
            None => Ok(()),
        }
    }
}

/// `monaco` parameters (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MonacoParams {
    pub policy: AccPolicyName,
    /// Policy gain: κ of ACC-P and ACC-MW (default 0.5); the step in packets of ACC-AIAD
    /// (default 1).
    pub kappa: Option<f64>,
    /// Target accumulation a*.
    pub target: Bytes,
    pub estimator: EstimatorName,
    /// Increase the window by at most one packet per control period (003 §II).
    pub increase_cap: bool,
    /// Weighted-rate service: the loop's target accumulation is weight × target (003).
    pub weight: f64,
    /// Expected minimum rate r_e (003 §IV); `target` × `weight` is then a_p*, the target
    /// accumulation beyond r_e.
    pub expected_rate: Option<Rate>,
    /// Accumulation limit A (003 eq. (16)): at it the loop degrades to weight A/a*.
    pub limit: Option<Bytes>,
    /// Initial window.
    pub initial_window: Bytes,
    /// RTT assumed for pacing before the first control period completes.
    pub initial_rtt: Duration,
    /// Lower bound of the control-packet timeout.
    pub min_rto: Duration,
    /// Count the AVD virtual delay as part of the RTT when pacing (not in 000; on by default,
    /// see `MonacoConfig::virtual_rtt`).
    pub virtual_rtt: bool,
}

impl Default for MonacoParams {
    fn default() -> Self {
        MonacoParams {
            policy: AccPolicyName::AccP,
            kappa: None,
            target: Bytes(3000),
            estimator: EstimatorName::Rate,
            increase_cap: false,
            weight: 1.0,
            expected_rate: None,
            limit: None,
            initial_window: Bytes(2000),
            initial_rtt: Duration::from_millis(100),
            min_rto: Duration::from_millis(200),
            virtual_rtt: true,
        }
    }
}

impl MonacoParams {
    /// The sender's settings: the policy these parameters name, with its own random stream.
    fn sender_config(&self, ctx: &FlowContext, rng: crate::rng::Rng) -> MonacoConfig {
        let kappa = self.kappa();
        let policy: Box<dyn AccPolicy> = match self.policy {
            AccPolicyName::AccP if self.is_expected_rate_service() => Box::new(ExpectedRate::new(
                kappa,
                self.expected_rate.map_or(0.0, |r| r.as_f64() / 8.0),
                self.limit.map_or(f64::INFINITY, |a| a.0 as f64),
            )),
            AccPolicyName::AccP => Box::new(AccP { kappa }),
            AccPolicyName::AccAiad => Box::new(AccAiad {
                kappa_packets: kappa,
            }),
            AccPolicyName::AccMw => Box::new(AccMw { kappa }),
        };
        MonacoConfig {
            packet_size: ctx.packet_size,
            control_size: ctx.ack_size,
            target: self.target_bytes(),
            policy,
            increase_cap: self.increase_cap,
            initial_window: self.initial_window.0 as f64,
            initial_rtt: self.initial_rtt,
            min_rto: self.min_rto,
            virtual_rtt: self.virtual_rtt,
            rng,
        }
    }

    fn estimator(&self) -> Estimator {
        match self.estimator {
            EstimatorName::Rate => Estimator::Rate,
            EstimatorName::Count => Estimator::Count,
        }
    }

    /// The target accumulation in bytes, weight included.
    pub fn target_bytes(&self) -> f64 {
        self.weight * self.target.0 as f64
    }

    /// Whether the loop runs 003 Algorithm 1 (an expected rate or a limit is given).
    pub fn is_expected_rate_service(&self) -> bool {
        self.expected_rate.is_some() || self.limit.is_some()
    }

    /// The policy gain, with each policy's default.
    pub fn kappa(&self) -> f64 {
        self.kappa.unwrap_or(match self.policy {
            AccPolicyName::AccAiad => 1.0,
            AccPolicyName::AccP | AccPolicyName::AccMw => 0.5,
        })
    }

    fn validate(&self) -> Result<(), String> {
        let k = self.kappa();
        if !(k.is_finite() && k > 0.0) {
            return Err(format!("monaco `kappa` must be positive, not {k}"));
        }
        if !(self.weight.is_finite() && self.weight > 0.0) {
            return Err(format!(
                "monaco `weight` must be positive, not {}",
                self.weight
            ));
        }
        if self.initial_rtt.0 == 0 {
            return Err("monaco `initial_rtt` must be positive".into());
        }
        if self.is_expected_rate_service() && self.policy != AccPolicyName::AccP {
            return Err(format!(
                "monaco `expected_rate` and `limit` need policy \"acc-p\" (003 Algorithm 1 is ACC-P's law), not {:?}",
                self.policy
            ));
        }
        if let Some(a) = self.limit {
            if (a.0 as f64) < self.target_bytes() {
                return Err(format!(
                    "monaco `limit` {} B is below the target accumulation {} B (weight × target); the loop could never reach its target",
                    a.0,
                    self.target_bytes()
                ));
            }
        }
        Ok(())
    }
}

/// The ACC policy of a Monaco loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccPolicyName {
    AccP,
    AccAiad,
    AccMw,
}

/// Monaco's accumulation estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EstimatorName {
    Rate,
    Count,
}

/// `onoff` parameters (002 §6.1.3).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OnOffParams {
    /// "vegas" or "reno": the transport of each file.
    pub scheme: OnOffScheme,
    /// Mean file size (exponential).
    pub mean_size: Bytes,
    /// Mean off time (exponential).
    pub mean_off: Duration,
    /// Vegas parameters of each transfer when `scheme = "vegas"`.
    pub vegas: VegasParams,
}

/// The transport an on-off source uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnOffScheme {
    Vegas,
    Reno,
}

impl Default for OnOffParams {
    fn default() -> Self {
        OnOffParams {
            scheme: OnOffScheme::Vegas,
            mean_size: Bytes(1_000_000),
            mean_off: Duration::from_secs(3),
            vegas: VegasParams::default(),
        }
    }
}

/// `reno` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// React to ECN echoes (halve once per RTT) and send ECN-capable packets.
    pub ecn: bool,
    /// Bytes to transfer; absent = bulk (infinite backlog).
    pub size: Option<Bytes>,
    /// Lower bound of the retransmission timeout.
    pub min_rto: Duration,
    /// Initial window in segments.
    pub initial_window: u64,
}

impl Default for RenoParams {
    fn default() -> Self {
        let d = TcpConfig::default();
        RenoParams {
            ecn: false,
            size: None,
            min_rto: d.min_rto,
            initial_window: d.initial_window,
        }
    }
}

/// `vegas` parameters (SPEC §9).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// Lower threshold, packets (per RTT, or per `per` for WPF).
    pub alpha: f64,
    /// Upper threshold, packets.
    pub beta: f64,
    /// Slow-start exit threshold, packets.
    pub gamma: f64,
    /// "rtt" (PF) or a duration: α and β are packets per that duration, times baseRTT (WPF).
    pub per: PerUnit,
    /// "min" (minimum RTT seen) or a fixed duration.
    pub base_rtt: BaseRttParam,
    /// Vegas-k: baseRTT is the minimum of the last k per-RTT measurements.
    pub k: Option<u32>,
    /// vegas-rem only: the REM base φ the source inverts marks with (default 1.1).
    pub phi: Option<f64>,
    /// Bytes to transfer; absent = bulk.
    pub size: Option<Bytes>,
    pub min_rto: Duration,
    pub initial_window: u64,
}

impl Default for VegasParams {
    fn default() -> Self {
        let d = TcpConfig::default();
        VegasParams {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            per: PerUnit::Rtt,
            base_rtt: BaseRttParam::Min,
            k: None,
            phi: None,
            size: None,
            min_rto: d.min_rto,
            initial_window: d.initial_window,
        }
    }
}

impl VegasParams {
    /// The controller settings these parameters describe; `rem` selects Vegas+REM.
    pub fn controller(&self, mss: u64, rem: bool) -> VegasConfig {
        VegasConfig {
            marks: rem.then(|| self.phi.unwrap_or(1.1)),
            mss,
            initial_window: self.initial_window,
            alpha: self.alpha,
            beta: self.beta,
            gamma: self.gamma,
            per: match self.per {
                PerUnit::Rtt => None,
                PerUnit::Time(d) => Some(d),
            },
            base_rtt: match (self.base_rtt, self.k) {
                (BaseRttParam::Fixed(d), _) => BaseRtt::Fixed(d),
                (BaseRttParam::Min, Some(k)) => BaseRtt::LastK(k as usize),
                (BaseRttParam::Min, None) => BaseRtt::Min,
            },
        }
    }

    fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.beta >= self.alpha && self.gamma > 0.0) {
            return Err(format!(
                "vegas needs 0 < alpha <= beta and gamma > 0 (alpha {}, beta {}, gamma {})",
                self.alpha, self.beta, self.gamma
            ));
        }
        if matches!(self.per, PerUnit::Time(d) if d.0 == 0) {
            return Err("vegas `per` must be \"rtt\" or a positive duration".into());
        }
        if matches!(self.base_rtt, BaseRttParam::Fixed(d) if d.0 == 0) {
            return Err("vegas `base_rtt` must be \"min\" or a positive duration".into());
        }
        if self.k == Some(0) {
            return Err("vegas `k` must be at least 1".into());
        }
        if self.k.is_some() && matches!(self.base_rtt, BaseRttParam::Fixed(_)) {
            return Err("vegas `k` and a fixed `base_rtt` exclude each other".into());
        }
        Ok(())
    }
}

/// Vegas's α/β unit: per RTT (PF) or per a fixed duration (WPF).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PerUnit {
    Rtt,
    Time(Duration),
}

/// Vegas's baseRTT source in a scenario: "min" or a fixed duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaseRttParam {
    Min,
    Fixed(Duration),
}

/// A string that is either `keyword` or a duration.
fn keyword_or_duration<'de, D: serde::Deserializer<'de>>(
    d: D,
    keyword: &'static str,
) -> Result<Option<Duration>, D::Error> {
    let s = String::deserialize(d)?;
    if s == keyword {
        return Ok(None);
    }
    Duration::parse(&s)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("expected \"{keyword}\" or a duration: {e}")))
}

impl<'de> Deserialize<'de> for PerUnit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(keyword_or_duration(d, "rtt")?.map_or(PerUnit::Rtt, PerUnit::Time))
    }
}
impl Serialize for PerUnit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PerUnit::Rtt => s.serialize_str("rtt"),
            PerUnit::Time(d) => d.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for BaseRttParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(keyword_or_duration(d, "min")?.map_or(BaseRttParam::Min, BaseRttParam::Fixed))
    }
}
impl Serialize for BaseRttParam {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BaseRttParam::Min => s.serialize_str("min"),
            BaseRttParam::Fixed(d) => d.serialize(s),
        }
    }
}

/// `cbr` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrParams {
    pub rate: Rate,
    /// Packet size; absent = the scenario's default packet size.
    pub packet_size: Option<Bytes>,
    /// Rate changes relative to the flow's start: `{ at = "5s", rate = "120Mbps" }`; an entry
    /// without `rate` pauses the source.
    #[serde(default)]
    pub schedule: Vec<CbrStepConfig>,
    /// Repeat the schedule with this period (square waves).
    pub repeat: Option<Duration>,
}

/// One step of a CBR schedule.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrStepConfig {
    pub at: Duration,
    pub rate: Option<Rate>,
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
}

impl SchemeConfig {
    /// The scheme's name as written in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            SchemeConfig::Reno(_) => "reno",
            SchemeConfig::Vegas(_) => "vegas",
            SchemeConfig::VegasRem(_) => "vegas-rem",
            SchemeConfig::Cbr(_) => "cbr",
            SchemeConfig::Onoff(_) => "onoff",
            SchemeConfig::Monaco(_) => "monaco",
            SchemeConfig::Web(_) => "web",
        }
    }

    /// Checks what serde cannot: ranges and combinations of parameters.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            SchemeConfig::Vegas(p) if p.phi.is_some() => {
                Err("`phi` applies to vegas-rem only".into())
            }
            SchemeConfig::Vegas(p) => p.validate(),
            SchemeConfig::VegasRem(p) if p.phi.is_some_and(|f| f <= 1.0) => {
                Err("vegas-rem `phi` must exceed 1".into())
            }
            SchemeConfig::VegasRem(p) => p.validate(),
            SchemeConfig::Onoff(p) if p.vegas.size.is_some() => {
                Err("onoff draws its file sizes; `vegas.size` does not apply".into())
            }
            SchemeConfig::Onoff(p) => p.vegas.validate(),
            SchemeConfig::Monaco(p) => p.validate(),
            SchemeConfig::Web(p) => p.validate(),
            SchemeConfig::Reno(p) if p.initial_window == 0 => {
                Err("reno `initial_window` must be at least 1".into())
            }
            _ => Ok(()),
        }
    }

    /// Builds the sender and the receiver of one flow.
    pub fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let mss = ctx.packet_size as u64;
        let sender = |size: Option<Bytes>, min_rto, initial_window, ecn, cc| {
            let cfg = TcpConfig {
                packet_size: ctx.packet_size,
                transfer_bytes: size.map(|b: Bytes| b.0),
                initial_window,
                min_rto,
                ecn,
                ..TcpConfig::default()
            };
            TcpSender::new(ctx.flow, cfg, cc)
        };
        let receiver = || Box::new(TcpReceiver::new(ctx.flow, ctx.ack_size));
        match self {
            SchemeConfig::Reno(p) => {
                let cc = Box::new(Reno::new(mss, p.initial_window));
                let tx = sender(p.size, p.min_rto, p.initial_window, p.ecn, cc);
                (Box::new(tx), receiver())
            }
            SchemeConfig::Vegas(p) | SchemeConfig::VegasRem(p) => {
                let rem = matches!(self, SchemeConfig::VegasRem(_));
                let cc = Box::new(Vegas::new(p.controller(mss, rem)));
                // Vegas+REM sends ECN-capable packets: REM marks them instead of dropping.
                let tx = sender(p.size, p.min_rto, p.initial_window, rem, cc);
                (Box::new(tx), receiver())
            }
            SchemeConfig::Onoff(p) => {
                let factory: ControllerFactory = match p.scheme {
                    OnOffScheme::Vegas => {
                        let cfg = p.vegas.controller(mss, false);
                        Box::new(move || {
                            Box::new(Vegas::new(cfg.clone())) as Box<dyn CongestionController>
                        })
                    }
                    OnOffScheme::Reno => {
                        let iw = p.vegas.initial_window;
                        Box::new(move || {
                            Box::new(Reno::new(mss, iw)) as Box<dyn CongestionController>
                        })
                    }
                };
                let tx = sender(
                    None,
                    p.vegas.min_rto,
                    p.vegas.initial_window,
                    false,
                    factory(),
                );
                let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:onoff", ctx.name));
                let src = OnOffSender::new(tx, factory, rng, p.mean_size.0 as f64, p.mean_off);
                (Box::new(src), receiver())
            }
            SchemeConfig::Web(p) => {
                let model = p.model();
                let (transport, rx) = match &p.monaco {
                    None => {
                        let d = TcpConfig::default();
                        let cfg = TcpConfig {
                            packet_size: ctx.packet_size,
                            min_rto: p.min_rto.unwrap_or(d.min_rto),
                            initial_window: p.initial_window.unwrap_or(d.initial_window),
                            ..d
                        };
                        let rx = WebReceiver::new(ctx.flow, model.users, ctx.ack_size);
                        (ObjectTransport::Reno(cfg), rx)
                    }
                    Some(m) => {
                        let rx = WebReceiver::monaco(
                            ctx.flow,
                            model.users,
                            ctx.ack_size,
                            m.target_bytes(),
                            m.estimator(),
                        );
                        let (m, ctx) = (m.clone(), ctx.clone());
                        let mut objects = 0u64;
                        let next_loop = move || {
                            objects += 1;
                            let name = format!("flow:{}:web-object:{objects}", ctx.name);
                            m.sender_config(&ctx, crate::rng::stream(ctx.seed, &name))
                        };
                        (ObjectTransport::Monaco(Box::new(next_loop)), rx)
                    }
                };
                let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:web", ctx.name));
                let tx = WebSender::new(ctx.flow, &model, transport, rng)
                    .expect("web parameters are checked by SchemeConfig::validate");
                (Box::new(tx), Box::new(rx))
            }
            SchemeConfig::Monaco(p) => {
                let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:monaco", ctx.name));
                let cfg = p.sender_config(ctx, rng);
                let estimator = p.estimator();
                (
                    Box::new(MonacoSender::new(ctx.flow, cfg)),
                    Box::new(MonacoReceiver::new(
                        ctx.flow,
                        ctx.ack_size,
                        p.target_bytes(),
                        estimator,
                    )),
                )
            }
            SchemeConfig::Cbr(p) => {
                let size = p.packet_size.map_or(ctx.packet_size, |b| b.0 as u32);
                let schedule = p
                    .schedule
                    .iter()
                    .map(|s| CbrStep {
                        at: s.at,
                        rate: s.rate,
                    })
                    .collect();
                (
                    Box::new(CbrSource::new(ctx.flow, p.rate, size, schedule, p.repeat)),
                    Box::new(CbrSink::new()),
                )
            }
        }
    }

    /// The traffic class a flow of this scheme belongs to unless the scenario says otherwise.
    pub fn default_class(&self) -> &'static str {
        match self {
            SchemeConfig::Cbr(_) => "udp",
            SchemeConfig::Monaco(_) => "acc",
            SchemeConfig::Reno(_)
            | SchemeConfig::Vegas(_)
            | SchemeConfig::VegasRem(_)
            | SchemeConfig::Onoff(_)
            | SchemeConfig::Web(_) => "tcp",
        }
    }

    /// Whether the receiver sends packets back (ACKs, reverse control), so the flow needs a
    /// route from its destination to its source.
    pub fn sends_feedback(&self) -> bool {
        !matches!(self, SchemeConfig::Cbr(_))
    }
}

/// A link's queue discipline: `queue = { kind = "droptail", limit = "90pkt" }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum QueueConfig {
    /// Tail-drop FIFO. `priority = true` marks it priority-capable: Monaco's out-of-band and
    /// reverse control packets then skip the data queue (a two-band FIFO with both limits equal).
    Droptail {
        limit: Limit,
        #[serde(default)]
        priority: bool,
    },
    /// Two-priority strict FIFO; `high_limit` defaults to `limit`.
    Priority {
        limit: Limit,
        high_limit: Option<Limit>,
    },
    /// BAT rate-based AQM per traffic class (004 eq. (1)), optionally with CLCC.
    Bat(BatParams),
    /// RED (Floyd–Jacobson).
    Red(RedParams),
    /// REM (002 §5).
    Rem(RemParams),
    /// AVQ (Kunniyur–Srikant); `mode = "delay"` is AVD / AVQ+VD for Monaco.
    Avq(AvqParams),
}

/// `red` parameters; thresholds in packets ("5pkt") or bytes ("5KB", byte mode).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    pub limit: Limit,
    pub min_th: Limit,
    pub max_th: Limit,
    #[serde(default = "red_max_p")]
    pub max_p: f64,
    #[serde(default = "red_wq")]
    pub wq: f64,
    #[serde(default = "yes")]
    pub gentle: bool,
    #[serde(default)]
    pub ecn: bool,
}

fn red_max_p() -> f64 {
    0.1
}
fn red_wq() -> f64 {
    0.002
}

/// `rem` parameters (002 §6.3 defaults).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemParams {
    pub limit: Limit,
    #[serde(default = "rem_phi")]
    pub phi: f64,
    #[serde(default = "rem_mu")]
    pub mu: f64,
    #[serde(default = "rem_gamma")]
    pub gamma: f64,
    #[serde(default = "rem_interval")]
    pub interval: Duration,
}

fn rem_phi() -> f64 {
    1.1
}
fn rem_mu() -> f64 {
    0.5
}
fn rem_gamma() -> f64 {
    0.005
}
fn rem_interval() -> Duration {
    Duration::from_millis(1)
}

/// `avq` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AvqParams {
    pub limit: Limit,
    #[serde(default = "avq_gamma")]
    pub target_utilization: f64,
    #[serde(default = "avq_alpha")]
    pub alpha: f64,
    #[serde(default = "avq_mode")]
    pub mode: AvqModeName,
    /// As for `droptail`: Monaco's out-of-band and reverse control packets skip the data queue.
    #[serde(default)]
    pub priority: bool,
    /// What a `delay`-mode (AVD) link adds to Monaco IB packets: `excess` (default) the virtual
    /// delay less the IB's physical wait at the link, counting the link once; `virtual` the
    /// whole virtual delay, as 000 §IV-D writes it (at a priority-capable link the physical
    /// queue is then counted twice, in ftt_q and in the virtual delay).
    #[serde(default)]
    pub avd_stamp: AvdStamp,
}

pub use crate::queue::avq::AvdStamp;

fn avq_gamma() -> f64 {
    0.98
}
fn avq_alpha() -> f64 {
    0.15
}
fn avq_mode() -> AvqModeName {
    AvqModeName::Mark
}

/// What AVQ does on virtual-queue overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AvqModeName {
    Mark,
    Drop,
    Delay,
}

/// `queue = { kind = "bat", ... }` (SPEC §9; defaults in queue/bat.rs).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BatParams {
    pub limit: Limit,
    pub classes: Vec<BatClassParams>,
    #[serde(default = "bat_interval")]
    pub interval: Duration,
    /// Coarse AIMD step w.
    #[serde(default = "bat_w")]
    pub w: f64,
    /// B(t) = 1 below this fraction of the capacity (and with a short queue).
    #[serde(default = "bat_excess")]
    pub excess_utilization: f64,
    /// Queue length (packets) at or below which B(t) may be 1; default a quarter of the limit.
    pub low_queue: Option<u64>,
    pub clcc: Option<ClccParams>,
}

fn bat_interval() -> Duration {
    Duration::from_millis(4)
}
fn bat_w() -> f64 {
    0.0625
}
fn bat_excess() -> f64 {
    0.98
}
fn bat_cd() -> f64 {
    0.0625
}

/// One BAT traffic class. Flows join a class by their `class` key (default: "udp" for cbr,
/// "tcp" for reno, vegas and onoff, "acc" for monaco).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BatClassParams {
    pub name: String,
    /// Assured minimum rate (absent = 0).
    pub f_min: Option<Rate>,
    /// Maximum rate (absent = the link's capacity).
    pub f_max: Option<Rate>,
    #[serde(default = "bat_cd")]
    pub c: f64,
    #[serde(default = "bat_cd")]
    pub d: f64,
}

/// CLCC on a BAT link (004 §IV; defaults in queue/clcc.rs).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClccParams {
    /// The desired UDP/TCP ratio, or "max-min".
    pub r_ref: RatioParam,
    #[serde(default = "udp_name")]
    pub udp_class: String,
    #[serde(default = "tcp_name")]
    pub tcp_class: String,
    /// Upper bound of D_UDP (also bounded by 1/ΣO; omit for no bound beyond that).
    pub d_max: Option<f64>,
    /// β for |x_d| < 0.1, < 0.5 and above.
    pub betas: Option<[f64; 3]>,
    /// Bound D_UDP by min(d_max, 1/ΣO) (default true; false only to study its effect).
    #[serde(default = "yes")]
    pub bound: bool,
    /// Control preemption (default true; false only to study its effect).
    #[serde(default = "yes")]
    pub preemption: bool,
}

fn yes() -> bool {
    true
}

fn udp_name() -> String {
    "udp".into()
}
fn tcp_name() -> String {
    "tcp".into()
}

/// A ratio, or "max-min".
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum RatioParam {
    Fixed(f64),
    MaxMin,
}

impl<'de> Deserialize<'de> for RatioParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(x) if x > 0.0 && x.is_finite() => Ok(RatioParam::Fixed(x)),
            Raw::N(x) => Err(serde::de::Error::custom(format!(
                "r_ref must be positive, not {x}"
            ))),
            Raw::S(s) if s == "max-min" => Ok(RatioParam::MaxMin),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "r_ref must be a ratio such as 0.42 or \"max-min\", not {s:?}"
            ))),
        }
    }
}

impl BatParams {
    fn validate(&self) -> Result<(), String> {
        if self.classes.is_empty() {
            return Err("bat needs at least one class".into());
        }
        let mut names: Vec<&str> = self.classes.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err("bat class names must be distinct".into());
        }
        if !(self.w > 0.0 && self.w < 1.0) {
            return Err(format!("bat `w` must be in (0, 1), not {}", self.w));
        }
        if let Some(c) = &self.clcc {
            for n in [&c.udp_class, &c.tcp_class] {
                if !names.contains(&n.as_str()) {
                    return Err(format!(
                        "clcc names class {n:?}, which this bat queue does not have"
                    ));
                }
            }
        }
        Ok(())
    }

    fn config(&self) -> BatConfig {
        BatConfig {
            limit: self.limit,
            classes: self
                .classes
                .iter()
                .map(|c| BatClassConfig {
                    name: c.name.clone(),
                    f_min: c.f_min.map_or(0.0, |r| r.as_f64()),
                    f_max: c.f_max.map(|r| r.as_f64()),
                    c: c.c,
                    d: c.d,
                })
                .collect(),
            interval: self.interval,
            w: self.w,
            excess_utilization: self.excess_utilization,
            low_queue: self.low_queue,
            clcc: self.clcc.as_ref().map(|c| {
                let d = ClccConfig::default();
                (
                    ClccConfig {
                        r_ref: match c.r_ref {
                            RatioParam::Fixed(r) => Some(r),
                            RatioParam::MaxMin => None,
                        },
                        betas: c.betas.unwrap_or(d.betas),
                        d_max: c.d_max.unwrap_or(f64::INFINITY),
                        bound: c.bound,
                        preemption: c.preemption,
                        ..d
                    },
                    c.udp_class.clone(),
                    c.tcp_class.clone(),
                )
            }),
        }
    }
}

/// What a queue discipline needs from the scenario.
#[derive(Clone, Debug)]
pub struct QueueContext {
    pub rate: Rate,
    pub seed: u64,
    /// The link's name, which names its random stream.
    pub name: String,
    /// The traffic class of each flow (by flow id), for class-based AQMs.
    pub flow_classes: Vec<String>,
    /// The scenario's data packet size (for AQMs that count in packets).
    pub packet_size: u32,
}

impl QueueConfig {
    /// The built-in default when neither the link nor `[defaults]` gives a queue.
    pub fn default_queue() -> QueueConfig {
        QueueConfig::Droptail {
            limit: Limit::Packets(1000),
            priority: false,
        }
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |what: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!("{what} must be positive, not {x}"))
            }
        };
        match self {
            QueueConfig::Bat(p) => p.validate(),
            QueueConfig::Red(p) => match (p.min_th, p.max_th) {
                (Limit::Packets(a), Limit::Packets(b)) if a < b => positive("red `wq`", p.wq),
                (Limit::Bytes(a), Limit::Bytes(b)) if a < b => positive("red `wq`", p.wq),
                _ => Err(
                    "red thresholds must be both packets or both bytes, with min_th < max_th"
                        .into(),
                ),
            },
            QueueConfig::Rem(p) if p.phi <= 1.0 => {
                Err(format!("rem `phi` must exceed 1, not {}", p.phi))
            }
            QueueConfig::Rem(p) => positive("rem `gamma`", p.gamma)
                .and(positive("rem `interval`", p.interval.as_secs_f64())),
            QueueConfig::Avq(p) if !(p.target_utilization > 0.0 && p.target_utilization <= 1.0) => {
                Err(format!(
                    "avq `target_utilization` must be in (0, 1], not {}",
                    p.target_utilization
                ))
            }
            QueueConfig::Avq(p) => positive("avq `alpha`", p.alpha),
            _ => Ok(()),
        }
    }

    pub fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        match self {
            QueueConfig::Bat(p) => Box::new(Bat::new(
                p.config(),
                ctx.rate,
                &ctx.flow_classes,
                crate::rng::stream(ctx.seed, &format!("{}:bat", ctx.name)),
            )),
            QueueConfig::Red(p) => {
                let (min, max, bytes) = match (p.min_th, p.max_th) {
                    (Limit::Bytes(a), Limit::Bytes(b)) => (a as f64, b as f64, true),
                    (Limit::Packets(a), Limit::Packets(b)) => (a as f64, b as f64, false),
                    _ => (0.0, f64::INFINITY, false), // refused by `validate`
                };
                let cfg = RedConfig {
                    limit: p.limit,
                    min_th: min,
                    max_th: max,
                    bytes,
                    max_p: p.max_p,
                    wq: p.wq,
                    gentle: p.gentle,
                    ecn: p.ecn,
                    mean_packet: ctx.packet_size as f64,
                };
                Box::new(Red::new(
                    cfg,
                    ctx.rate,
                    crate::rng::stream(ctx.seed, &format!("{}:red", ctx.name)),
                ))
            }
            QueueConfig::Rem(p) => {
                let cfg = RemConfig {
                    limit: p.limit,
                    phi: p.phi,
                    mu: p.mu,
                    gamma: p.gamma,
                    interval: p.interval,
                    packet_size: ctx.packet_size,
                };
                Box::new(Rem::new(
                    cfg,
                    ctx.rate,
                    crate::rng::stream(ctx.seed, &format!("{}:rem", ctx.name)),
                ))
            }
            QueueConfig::Avq(p) => {
                let virtual_buffer = match p.limit {
                    Limit::Packets(n) => (n * ctx.packet_size as u64) as f64,
                    Limit::Bytes(n) => n as f64,
                    Limit::Unlimited => f64::INFINITY,
                };
                let cfg = AvqConfig {
                    limit: p.limit,
                    virtual_buffer,
                    target_utilization: p.target_utilization,
                    alpha: p.alpha,
                    priority: p.priority,
                    stamp: p.avd_stamp,
                    mode: match p.mode {
                        AvqModeName::Mark => AvqMode::Mark,
                        AvqModeName::Drop => AvqMode::Drop,
                        AvqModeName::Delay => AvqMode::Delay,
                    },
                };
                Box::new(Avq::new(cfg, ctx.rate))
            }
            &QueueConfig::Droptail {
                limit,
                priority: false,
            } => Box::new(DropTail::new(limit)),
            &QueueConfig::Droptail {
                limit,
                priority: true,
            } => Box::new(PriorityFifo::new(limit, limit)),
            &QueueConfig::Priority { limit, high_limit } => {
                Box::new(PriorityFifo::new(limit, high_limit.unwrap_or(limit)))
            }
        }
    }

    /// Every buffer limit this discipline enforces (for invariant checks).
    pub fn limits(&self) -> Vec<Limit> {
        match *self {
            QueueConfig::Droptail { limit, .. } => vec![limit],
            QueueConfig::Priority { limit, high_limit } => vec![limit, high_limit.unwrap_or(limit)],
            QueueConfig::Bat(ref p) => vec![p.limit],
            QueueConfig::Red(ref p) => vec![p.limit],
            QueueConfig::Rem(ref p) => vec![p.limit],
            QueueConfig::Avq(ref p) => vec![p.limit],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_tables_parse_and_reject_unknown_keys() {
        let q: QueueConfig = toml::from_str("kind = \"droptail\"\nlimit = \"90pkt\"").unwrap();
        assert_eq!(
            q,
            QueueConfig::Droptail {
                limit: Limit::Packets(90),
                priority: false
            }
        );
        let e = toml::from_str::<QueueConfig>("kind = \"droptail\"\nlimit = \"9pkt\"\nlimt = 1")
            .unwrap_err();
        assert!(e.to_string().contains("limt"), "{e}");
        let e = toml::from_str::<QueueConfig>("kind = \"bogus\"\nlimit = \"9pkt\"").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }

    #[test]
    fn schemes_parse_with_defaults() {
        let s: SchemeConfig = toml::from_str("kind = \"reno\"\nparams = {}").unwrap();
        assert_eq!(s, SchemeConfig::Reno(RenoParams::default()));
        let s: SchemeConfig =
            toml::from_str("kind = \"cbr\"\nparams = { rate = \"10Mbps\" }").unwrap();
        assert_eq!(s.kind(), "cbr");
        let s: SchemeConfig = toml::from_str(
            "kind = \"vegas\"\nparams = { alpha = 2, beta = 2, per = \"10ms\", k = 8 }",
        )
        .unwrap();
        let SchemeConfig::Vegas(v) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(v.per, PerUnit::Time(Duration::from_millis(10)));
        assert_eq!(v.controller(1000, false).base_rtt, BaseRtt::LastK(8));
        assert_eq!(v.controller(1000, true).marks, Some(1.1));
        let e = toml::from_str::<SchemeConfig>("kind = \"vegas\"\nparams = { per = \"often\" }")
            .unwrap_err();
        assert!(e.to_string().contains("\"rtt\" or a duration"), "{e}");
        let bad: SchemeConfig =
            toml::from_str("kind = \"vegas\"\nparams = { alpha = 3, beta = 2 }").unwrap();
        assert!(bad.validate().is_err());
        let phi_on_vegas: SchemeConfig =
            toml::from_str("kind = \"vegas\"\nparams = { phi = 1.2 }").unwrap();
        assert!(phi_on_vegas.validate().is_err());
        let e =
            toml::from_str::<SchemeConfig>("kind = \"reno\"\nparams = { ecm = true }").unwrap_err();
        assert!(e.to_string().contains("ecm"), "{e}");
    }
}
