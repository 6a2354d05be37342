//! BAT (004 §III-A, eq. (1)): a rate-based AQM that forwards each arriving packet of traffic
//! class i with a transmit probability T_i, adapted every Δt (default 4 ms) on two AIMD levels:
//!
//!   T_i ← min(1, T_i + w)          if f_i ≤ f_min,i       (coarse: bring f_i into bounds)
//!   T_i ← T_i·(1 − w)              else if f_i > f_max,i
//!   T_i ← min(1, T_i + C_i·B̄)     else if B = 1          (fine: excess bandwidth available)
//!   T_i ← T_i·(1 − D_i·O_i)        otherwise
//!
//! with O_i the class's offered rate over the last Δt, f_i = T_i·O_i its serviced rate and B̄ an
//! EWMA of the excess-bandwidth signal B. Packets that pass go into a tail-drop FIFO.
//!
//! Choices the paper leaves open, documented:
//! - Rates are normalised to the link capacity (O_i = offered bits per Δt / (C·Δt)), so C_i and
//!   D_i are dimensionless and the bound of 004 eq. (7) reads D ≤ 1/ΣO_i.
//! - B(t) = 1 when the aggregate serviced rate Σf_i is below `excess_utilization` (default 0.98)
//!   of the capacity and the FIFO holds at most `low_queue` (default a quarter of its limit, or
//!   64 packets when unlimited); B̄ ← (15·B̄ + B)/16 at every update.
//! - Defaults w = 1/16, C_i = D_i = 1/16, T_i(0) = 1; f_min 0, f_max the capacity.
//! - A packet of a flow whose class the link does not know is forwarded without policing.
//! - With a CLCC controller (clcc.rs) the UDP class's D comes from CLCC, sampled every 100 ms.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::aqm::band_limits;
use super::clcc::{Clcc, ClccParams, ClccSample, ClccSettings, RatioParam};
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use std::ops::Bound::{Excluded, Included};

use crate::params::{in_range, period_at_least, ParamError, QueueContext, QueueParams, MIN_PERIOD};
use crate::rng::Rng;
use crate::units::{Duration, Limit, Rate, Time};

/// One class's settings; rates in bit/s.
#[derive(Clone, Debug, PartialEq)]
pub struct BatClassSettings {
    pub name: String,
    pub f_min: f64,
    pub f_max: Option<f64>,
    pub c: f64,
    pub d: f64,
}

/// BAT settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BatSettings {
    pub classes: Vec<BatClassSettings>,
    pub interval: Duration,
    pub w: f64,
    pub excess_utilization: f64,
    pub low_queue: Option<u64>,
    /// CLCC: its settings and the names of the UDP and TCP classes it balances.
    pub clcc: Option<(super::clcc::ClccSettings, String, String)>,
}

#[derive(Clone, Debug)]
struct Class {
    cfg: BatClassSettings,
    t: f64,
    /// Bytes offered / admitted since the last update, and since the last CLCC sample.
    offered: u64,
    admitted: u64,
    offered_sample: u64,
    admitted_sample: u64,
    /// The last update's normalised offered and serviced rates.
    o: f64,
    f: f64,
}

/// The BAT policy at one link (in an [`AqmQueue`], which holds the buffer).
pub struct Bat {
    cfg: BatSettings,
    capacity: f64,
    classes: Vec<Class>,
    /// Class index of each flow (by flow id), `None` when the class is not configured here.
    flow_class: Vec<Option<usize>>,
    rng: Rng,
    next_update: Time,
    next_sample: Time,
    b: bool,
    b_avg: f64,
    clcc: Option<(Clcc, usize, usize)>,
}

const CLCC_SAMPLE: Duration = Duration::from_millis(100);

impl Bat {
    /// `flow_classes[f]` is the class name of flow f.
    pub fn new(cfg: BatSettings, rate: Rate, flow_classes: &[String], rng: Rng) -> Bat {
        let classes: Vec<Class> = cfg
            .classes
            .iter()
            .map(|c| Class {
                cfg: c.clone(),
                t: 1.0,
                offered: 0,
                admitted: 0,
                offered_sample: 0,
                admitted_sample: 0,
                o: 0.0,
                f: 0.0,
            })
            .collect();
        let index = |name: &str| classes.iter().position(|c| c.cfg.name == name);
        let flow_class = flow_classes.iter().map(|n| index(n)).collect();
        let clcc = cfg.clcc.as_ref().and_then(|(c, udp, tcp)| {
            let (u, t) = (index(udp)?, index(tcp)?);
            Some((Clcc::new(c.clone(), classes[u].cfg.d), u, t))
        });
        Bat {
            capacity: rate.as_f64(),
            next_update: Time::ZERO + cfg.interval,
            next_sample: Time::ZERO + CLCC_SAMPLE,
            b: false,
            b_avg: 0.0,
            classes,
            flow_class,
            rng,
            clcc,
            cfg,
        }
    }

    fn low_queue(&self, data: &Fifo) -> u64 {
        self.cfg.low_queue.unwrap_or(match data.limit() {
            Limit::Packets(n) => n / 4,
            Limit::Bytes(n) => n / 4000,
            Limit::Unlimited => 64,
        })
    }

    /// 004 eq. (1) for every class, once per Δt.
    fn update(&mut self, data: &Fifo) {
        let scale = self.capacity * self.cfg.interval.as_secs_f64() / 8.0; // bytes per Δt at C
        for c in &mut self.classes {
            c.o = c.offered as f64 / scale;
            c.f = c.t * c.o;
            c.offered = 0;
            c.admitted = 0;
        }
        let serviced: f64 = self.classes.iter().map(|c| c.f).sum();
        self.b = serviced < self.cfg.excess_utilization
            && data.backlog().packets <= self.low_queue(data);
        self.b_avg = (15.0 * self.b_avg + f64::from(u8::from(self.b))) / 16.0;
        let d_udp = self.clcc.as_ref().map(|(c, u, _)| (*u, c.d_udp()));
        let w = self.cfg.w;
        for (i, c) in self.classes.iter_mut().enumerate() {
            let f_min = c.cfg.f_min / self.capacity;
            let f_max = c.cfg.f_max.map_or(f64::INFINITY, |m| m / self.capacity);
            let d = match d_udp {
                Some((u, d)) if u == i => d,
                _ => c.cfg.d,
            };
            c.t = if c.f <= f_min {
                (c.t + w).min(1.0)
            } else if c.f > f_max {
                c.t * (1.0 - w)
            } else if self.b {
                (c.t + c.cfg.c * self.b_avg).min(1.0)
            } else {
                (c.t * (1.0 - d * c.o)).max(0.0)
            };
        }
    }

    /// One 100 ms CLCC sample.
    fn sample(&mut self) {
        let scale = self.capacity * CLCC_SAMPLE.as_secs_f64() / 8.0;
        let total_offered: f64 = self
            .classes
            .iter()
            .map(|c| c.offered_sample as f64 / scale)
            .sum();
        if let Some((clcc, u, t)) = &mut self.clcc {
            let (u, t) = (&self.classes[*u], &self.classes[*t]);
            clcc.on_sample(ClccSample {
                udp_serviced: u.admitted_sample as f64 / scale,
                tcp_serviced: t.admitted_sample as f64 / scale,
                udp_offered: u.offered_sample as f64 / scale,
                total_offered,
                udp_min: u.cfg.f_min / self.capacity,
            });
        }
        for c in &mut self.classes {
            c.offered_sample = 0;
            c.admitted_sample = 0;
        }
    }

    fn catch_up(&mut self, now: Time, data: &Fifo) {
        while self.next_update <= now {
            self.update(data);
            self.next_update += self.cfg.interval;
        }
        while self.next_sample <= now {
            self.sample();
            self.next_sample += CLCC_SAMPLE;
        }
    }
}

impl Aqm for Bat {
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, fits: bool, data: &Fifo) -> Verdict {
        self.catch_up(now, data);
        let Some(i) = self.flow_class.get(pkt.flow.0 as usize).copied().flatten() else {
            return Verdict::Pass;
        };
        let size = pkt.size as u64;
        let c = &mut self.classes[i];
        c.offered += size;
        c.offered_sample += size;
        if c.t < 1.0 && self.rng.random::<f64>() >= c.t {
            return Verdict::Drop;
        }
        if fits {
            c.admitted += size;
            c.admitted_sample += size;
        }
        Verdict::Pass
    }

    fn before_dequeue(&mut self, now: Time, data: &Fifo) {
        self.catch_up(now, data);
    }

    fn set_rate(&mut self, rate: Rate) {
        self.capacity = rate.as_f64();
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        for c in &self.classes {
            out.push((format!("{}_offered_bps", c.cfg.name), c.o * self.capacity));
            out.push((format!("{}_serviced_bps", c.cfg.name), c.f * self.capacity));
            out.push((format!("{}_transmit_prob", c.cfg.name), c.t));
        }
        out.push(("excess_bandwidth_avg".into(), self.b_avg));
        if let Some((clcc, _, _)) = &self.clcc {
            out.push(("d_udp".into(), clcc.d_udp()));
            out.push(("clcc_ratio".into(), clcc.last_ratio));
            out.push(("clcc_reference".into(), clcc.last_reference));
        }
    }
}

/// `queue = { kind = "bat", ... }` (SPEC §9; defaults in queue/bat.rs).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// The traffic classes, each `{ name, f_min, f_max, c, d }`: flows join the class their `class`
    /// (by default "tcp" or "udp") names; BAT controls each class's admitted rate (004 eq. (1)).
    pub classes: Vec<BatClassParams>,
    /// Period of BAT's rate update (004 §II).
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
    /// The CLCC controller (004 §III) adapting the UDP class's D_UDP toward the ratio `r_ref`;
    /// absent: BAT alone.
    pub clcc: Option<ClccParams>,
    /// Monaco's out-of-band and reverse control packets skip the data queue (as for `droptail`).
    #[serde(default)]
    pub priority: bool,
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
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
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

impl QueueParams for BatParams {
    fn needs_flow_classes(&self) -> bool {
        true
    }
    fn validate(&self) -> Result<(), ParamError> {
        if self.classes.is_empty() {
            return Err(ParamError::at("classes", "bat needs at least one class"));
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, c) in self.classes.iter().enumerate() {
            if names.contains(&c.name.as_str()) {
                return Err(ParamError::at(
                    format!("classes[{i}].name"),
                    format!("bat class names must be distinct ({:?} twice)", c.name),
                ));
            }
            names.push(&c.name);
            // 004 §II: f_min,i ≤ f_max,i, the band BAT steers the class's rate into.
            if let (Some(lo), Some(hi)) = (c.f_min, c.f_max) {
                if lo > hi {
                    return Err(ParamError::at(
                        format!("classes[{i}].f_min"),
                        format!("class {:?}: f_min ({lo}) is above its f_max ({hi})", c.name),
                    ));
                }
            }
            if c.f_max == Some(Rate(0)) {
                return Err(ParamError::at(
                    format!("classes[{i}].f_max"),
                    format!(
                        "class {:?}: f_max must be above 0 bps (omit it for no maximum)",
                        c.name
                    ),
                ));
            }
            // 004 eq. (1): the gains of the rate error and of the queue term.
            in_range(&format!("classes[{i}].c"), c.c, 0.0..=1.0)?;
            in_range(&format!("classes[{i}].d"), c.d, 0.0..=1.0)?;
        }
        period_at_least("interval", self.interval, MIN_PERIOD)?;
        in_range(
            "excess_utilization",
            self.excess_utilization,
            (Excluded(0.0), Included(1.0)),
        )?;
        if !(self.w > 0.0 && self.w < 1.0) {
            return Err(ParamError::at(
                "w",
                format!("bat `w` must be in (0, 1), not {}", self.w),
            ));
        }
        if let Some(c) = &self.clcc {
            // 004 eq. (7): D_UDP's upper bound; eq. (8): the gains are negative.
            if let Some(d) = c.d_max {
                in_range("clcc.d_max", d, 1e-4..=1e6)?;
            }
            for (j, b) in c.betas.iter().flatten().enumerate() {
                in_range(&format!("clcc.betas[{j}]"), *b, -1e3..0.0)?;
            }
            for (key, n) in [("udp_class", &c.udp_class), ("tcp_class", &c.tcp_class)] {
                if !names.contains(&n.as_str()) {
                    return Err(ParamError::at(
                        format!("clcc.{key}"),
                        format!("clcc names class {n:?}, which this bat queue does not have"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_on_link(&self, rate: Rate, _packet_size: u32) -> Result<(), ParamError> {
        // The guarantees are shares of this link: together they cannot exceed it (004 §II).
        let mut sum = 0u64;
        for (i, c) in self.classes.iter().enumerate() {
            let f_min = c.f_min.map_or(0, |r| r.0);
            if f_min > rate.0 {
                return Err(ParamError::at(
                    format!("classes[{i}].f_min"),
                    format!(
                        "class {:?}: f_min ({}) is above the link's rate ({rate})",
                        c.name,
                        Rate(f_min)
                    ),
                ));
            }
            sum = sum.saturating_add(f_min);
            if sum > rate.0 {
                return Err(ParamError::at(
                    format!("classes[{i}].f_min"),
                    format!(
                        "the classes' f_min add up to {} by class {:?}, above the link's rate ({rate})",
                        Rate(sum),
                        c.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let rng = crate::rng::stream(ctx.seed, &format!("{}:bat", ctx.name));
        let bat = Bat::new(self.config(), ctx.rate, &ctx.flow_classes, rng);
        Box::new(AqmQueue::with_priority(bat, self.limit, self.priority))
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

impl BatParams {
    /// The AQM's settings these parameters describe.
    fn config(&self) -> BatSettings {
        BatSettings {
            classes: self
                .classes
                .iter()
                .map(|c| BatClassSettings {
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
                let d = ClccSettings::default();
                (
                    ClccSettings {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, PacketKind};

    fn class(name: &str, f_min: f64, f_max: Option<f64>) -> BatClassSettings {
        BatClassSettings {
            name: name.into(),
            f_min,
            f_max,
            c: 0.0625,
            d: 0.0625,
        }
    }

    fn bat(classes: Vec<BatClassSettings>) -> Bat {
        let cfg = BatSettings {
            classes,
            interval: Duration::from_millis(4),
            w: 0.0625,
            excess_utilization: 0.98,
            low_queue: None,
            clcc: None,
        };
        let flows = vec!["a".to_string(), "b".to_string()];
        Bat::new(
            cfg,
            Rate::from_mbps(100),
            &flows,
            crate::rng::stream(1, "bat"),
        )
    }

    /// Offers `bytes` of class `i` during the current interval (bypassing the random filter).
    fn offer(b: &mut Bat, i: usize, bytes: u64) {
        b.classes[i].offered += bytes;
    }

    // 100 Mb/s for 4 ms is 50 000 bytes: offering 25 000 bytes is O = 0.5.
    #[test]
    fn below_minimum_increases_by_w() {
        let mut b = bat(vec![class("a", 60e6, None), class("b", 0.0, None)]);
        b.classes[0].t = 0.5;
        offer(&mut b, 0, 25_000); // f = 0.25 ≤ 0.6
        b.update(&Fifo::new(Limit::Packets(100)));
        assert_eq!(b.classes[0].t, 0.5625);
    }

    #[test]
    fn above_maximum_decreases_by_w() {
        let mut b = bat(vec![class("a", 0.0, Some(10e6)), class("b", 0.0, None)]);
        offer(&mut b, 0, 25_000); // f = 0.5 > 0.1
        b.update(&Fifo::new(Limit::Packets(100)));
        assert_eq!(b.classes[0].t, 1.0 - 0.0625);
    }

    #[test]
    fn excess_bandwidth_increases_by_c_times_average() {
        let mut b = bat(vec![class("a", 0.0, None), class("b", 0.0, None)]);
        b.classes[0].t = 0.5;
        offer(&mut b, 0, 25_000); // Σf = 0.25 < 0.98 and the queue is empty: B = 1
        b.update(&Fifo::new(Limit::Packets(100)));
        // B̄ = 1/16 after one update: T += 0.0625 · 1/16.
        assert!(b.b);
        assert!((b.classes[0].t - (0.5 + 0.0625 / 16.0)).abs() < 1e-12);
    }

    #[test]
    fn congestion_decreases_by_d_times_offered() {
        let mut b = bat(vec![class("a", 0.0, None), class("b", 0.0, None)]);
        offer(&mut b, 0, 30_000); // O = 0.6
        offer(&mut b, 1, 30_000); // Σf = 1.2 ≥ 0.98: B = 0
        b.update(&Fifo::new(Limit::Packets(100)));
        assert!(!b.b);
        assert!((b.classes[0].t - (1.0 - 0.0625 * 0.6)).abs() < 1e-12);
    }

    #[test]
    fn packets_pass_with_their_class_probability() {
        let mut b = bat(vec![class("a", 0.0, None), class("b", 0.0, None)]);
        b.classes[0].t = 0.25;
        b.next_update = Time::MAX;
        b.next_sample = Time::MAX;
        let mut q = AqmQueue::new(b, Limit::Packets(100));
        let mut passed = 0;
        for _ in 0..4000 {
            if q.enqueue(Time::ZERO, &Packet::new(FlowId(0), PacketKind::Data, 100))
                .is_ok()
            {
                passed += 1;
                q.dequeue(Time::ZERO, &mut Vec::new());
            }
        }
        let admitted: u64 = q.aqm().classes.iter().map(|c| c.admitted).sum();
        assert_eq!(
            admitted,
            passed * 100,
            "what BAT let through and the buffer took"
        );
        assert!(
            (900..1100).contains(&passed),
            "{passed} of 4000 at T = 0.25"
        );
    }
}
