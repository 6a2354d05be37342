//! REM (002 §5; Athuraliya & Low): random exponential marking.
//!
//! Every period T (default 1 ms) the link price follows 002 eq. (30),
//! p ← max(0, p + γ·(μ·b + x − c)), with b the backlog in packets and x, c the arrivals and the
//! capacity in packets over the period. Each arriving packet not already marked is marked with
//! probability 1 − φ^(−p) (eq. (31)), so that the end-to-end mark probability is 1 − φ^(−Σp)
//! (eq. (32)). Packets that are not ECN-capable are dropped with that probability instead.
//! The price is updated lazily, for every period boundary passed, at the next arrival or
//! departure (an idle period counts no arrivals).

use rand::RngExt;

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::{Duration, Limit, Rate, Time};
use serde::{Deserialize, Serialize};

use std::ops::Bound::{Excluded, Included};

use crate::params::{in_range, period_at_least, ParamError, QueueContext, QueueParams, MIN_PERIOD};

/// REM settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RemSettings {
    pub phi: f64,
    pub mu: f64,
    pub gamma: f64,
    pub interval: Duration,
    /// Packet size used to count the capacity in packets per period.
    pub packet_size: u32,
}

/// The REM policy (in an [`AqmQueue`], which holds the buffer).
pub struct Rem {
    cfg: RemSettings,
    rate: Rate,
    rng: Rng,
    price: f64,
    arrivals: u64,
    next_update: Time,
}

impl Rem {
    pub fn new(cfg: RemSettings, rate: Rate, rng: Rng) -> Rem {
        Rem {
            next_update: Time::ZERO + cfg.interval,
            cfg,
            rate,
            rng,
            price: 0.0,
            arrivals: 0,
        }
    }

    pub fn price(&self) -> f64 {
        self.price
    }

    /// The marking probability 1 − φ^(−p) (002 eq. (31)).
    pub fn mark_probability(&self) -> f64 {
        1.0 - self.cfg.phi.powf(-self.price)
    }

    /// 002 eq. (30) for one period.
    fn update(&mut self, data: &Fifo) {
        let capacity = self.rate.bytes_in(self.cfg.interval) as f64 / self.cfg.packet_size as f64;
        let backlog = data.backlog().packets as f64;
        let x = std::mem::take(&mut self.arrivals) as f64;
        self.price =
            (self.price + self.cfg.gamma * (self.cfg.mu * backlog + x - capacity)).max(0.0);
    }

    fn catch_up(&mut self, now: Time, data: &Fifo) {
        while self.next_update <= now {
            self.update(data);
            self.next_update += self.cfg.interval;
        }
    }
}

impl Aqm for Rem {
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, _fits: bool, data: &Fifo) -> Verdict {
        self.catch_up(now, data);
        self.arrivals += 1;
        if !pkt.ecn.is_marked() && self.rng.random::<f64>() < self.mark_probability() {
            if !pkt.ecn.is_capable() {
                return Verdict::Drop;
            }
            pkt.ecn.mark();
            return Verdict::Marked;
        }
        Verdict::Pass
    }

    fn before_dequeue(&mut self, now: Time, data: &Fifo) {
        self.catch_up(now, data);
    }

    fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("rem_price".into(), self.price));
        out.push(("rem_mark_prob".into(), self.mark_probability()));
    }
}

/// `rem` parameters (002 §6.3 defaults).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// φ > 1: a packet is marked with probability 1 − φ^(−p) at price p (002 eq. (31)).
    #[serde(default = "rem_phi")]
    pub phi: f64,
    /// μ: the backlog's weight in the price update p ← max(0, p + γ·(μ·b + x − c)) (002 eq. (30)).
    #[serde(default = "rem_mu")]
    pub mu: f64,
    /// γ: the price update's step size (002 eq. (30)).
    #[serde(default = "rem_gamma")]
    pub gamma: f64,
    /// Period T of the price update.
    #[serde(default = "rem_interval")]
    pub interval: Duration,
    /// Monaco's out-of-band and reverse control packets skip the data queue (as for `droptail`).
    #[serde(default)]
    pub priority: bool,
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

impl QueueParams for RemParams {
    fn marks_ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Result<(), ParamError> {
        // 002 §5: marking probability 1 − φ^(−p) needs φ > 1; the price's step γ and the
        // queue's weight μ are finite and non-negative (γ positive).
        in_range("phi", self.phi, (Excluded(1.0), Included(1e6)))?;
        in_range("mu", self.mu, 0.0..=1e6)?;
        in_range("gamma", self.gamma, (Excluded(0.0), Included(1e6)))?;
        period_at_least("interval", self.interval, MIN_PERIOD)
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let p = self;
        let cfg = RemSettings {
            phi: p.phi,
            mu: p.mu,
            gamma: p.gamma,
            interval: p.interval,
            packet_size: ctx.packet_size,
        };
        let rng = crate::rng::stream(ctx.seed, &format!("{}:rem", ctx.name));
        Box::new(AqmQueue::with_priority(
            Rem::new(cfg, ctx.rate, rng),
            p.limit,
            p.priority,
        ))
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId, PacketKind};

    fn rem() -> AqmQueue<Rem> {
        let cfg = RemSettings {
            phi: 1.1,
            mu: 0.5,
            gamma: 0.005,
            interval: Duration::from_millis(1),
            packet_size: 1000,
        };
        // 8 Mb/s: one 1000 B packet per ms.
        let rem = Rem::new(cfg, Rate::from_mbps(8), crate::rng::stream(1, "rem"));
        AqmQueue::new(rem, Limit::Unlimited)
    }

    fn pop(q: &mut AqmQueue<Rem>, now: Time) -> Option<Packet> {
        q.dequeue(now, &mut Vec::new()).map(|d| d.packet)
    }

    #[test]
    fn price_follows_equation_30() {
        let mut r = rem();
        // 5 arrivals in the period, 3 still queued: p = 0.005·(0.5·3 + 5 − 1) = 0.0275.
        for _ in 0..5 {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
            p.ecn = Ecn::ECT;
            r.enqueue(Time::ZERO, &p).unwrap();
        }
        pop(&mut r, Time::ZERO);
        pop(&mut r, Time::ZERO);
        pop(&mut r, Time(1_000_000)); // the period ends with 3 queued: the update sees them
        let rem = r.aqm();
        assert!((rem.price() - 0.0275).abs() < 1e-12, "{}", rem.price());
        // An idle period with an empty queue lowers it by γ·c.
        while pop(&mut r, Time(1_000_000)).is_some() {}
        pop(&mut r, Time(2_000_000));
        let rem = r.aqm();
        assert!((rem.price() - 0.0225).abs() < 1e-12);
        assert!((rem.mark_probability() - (1.0 - 1.1f64.powf(-0.0225))).abs() < 1e-15);
    }

    #[test]
    fn marks_at_the_exponential_probability() {
        let mut r = rem();
        r.aqm_mut().price = 5.0; // 1 − 1.1^−5 = 0.379
        r.aqm_mut().next_update = Time::MAX;
        let mut marked = 0;
        for _ in 0..10_000 {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
            p.ecn = Ecn::ECT;
            r.enqueue(Time::ZERO, &p).unwrap();
            if pop(&mut r, Time::ZERO).unwrap().ecn.is_marked() {
                marked += 1;
            }
        }
        assert!((3600..4000).contains(&marked), "{marked}");
    }
}
