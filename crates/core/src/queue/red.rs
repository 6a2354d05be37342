//! RED (Floyd & Jacobson 1993): random early detection on an EWMA of the queue length.
//!
//! On each arrival avg ← (1 − w_q)·avg + w_q·q, with the idle-time correction of the paper
//! (after an idle spell avg decays as if m small packets had arrived, m = idle time / the
//! transmission time of a packet); a packet dropped on arrival at an empty queue leaves it idle,
//! so the idle spell goes on from that arrival (otherwise an average left above max_th by a
//! burst never decays again: every later packet is dropped at the empty queue and none is ever
//! dequeued to start a spell — a Reno flow starved for good on a fat-tree). Between min_th and max_th the base probability is
//! p_b = max_p·(avg − min_th)/(max_th − min_th), spread by the count since the last drop:
//! p_a = p_b / (1 − count·p_b). Gentle mode ramps p_b from max_p to 1 between max_th and
//! 2·max_th instead of dropping everything above max_th. In byte mode (thresholds in bytes)
//! p_b scales with size / mean packet size. With `ecn`, ECN-capable packets are marked rather
//! than dropped (not above max_th in non-gentle mode, where RED always drops).

use rand::RngExt;

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::{Limit, Rate, Time};
use serde::{Deserialize, Serialize};

use std::ops::Bound::{Excluded, Included};

use crate::params::{in_range, ParamError, QueueContext, QueueParams};

/// RED settings; thresholds in packets, or in bytes for byte mode.
#[derive(Clone, Debug, PartialEq)]
pub struct RedSettings {
    pub min_th: f64,
    pub max_th: f64,
    pub bytes: bool,
    pub max_p: f64,
    pub wq: f64,
    pub gentle: bool,
    pub ecn: bool,
    /// Mean packet size for byte mode and the idle-time correction.
    pub mean_packet: f64,
}

/// The RED policy (in an [`AqmQueue`], which holds the buffer).
pub struct Red {
    cfg: RedSettings,
    rate: Rate,
    rng: Rng,
    avg: f64,
    count: i64,
    idle_since: Option<Time>,
}

impl Red {
    pub fn new(cfg: RedSettings, rate: Rate, rng: Rng) -> Red {
        Red {
            cfg,
            rate,
            rng,
            avg: 0.0,
            count: -1,
            idle_since: Some(Time::ZERO),
        }
    }

    /// The average queue (packets or bytes).
    pub fn average(&self) -> f64 {
        self.avg
    }

    fn current(&self, data: &Fifo) -> f64 {
        let b = data.backlog();
        if self.cfg.bytes {
            b.bytes as f64
        } else {
            b.packets as f64
        }
    }

    fn update_average(&mut self, now: Time, data: &Fifo) {
        let wq = self.cfg.wq;
        if let Some(since) = self.idle_since.take() {
            // Idle: decay as if m packets of mean size had been sent meanwhile.
            let tx = self
                .rate
                .tx_time(self.cfg.mean_packet as u64)
                .as_secs_f64()
                .max(1e-12);
            let m = (now - since).as_secs_f64() / tx;
            self.avg *= (1.0 - wq).powf(m);
        }
        self.avg = (1.0 - wq) * self.avg + wq * self.current(data);
    }

    /// The base probability p_b for the current average.
    pub fn base_probability(&self) -> f64 {
        let (min, max, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        if self.avg < min {
            0.0
        } else if self.avg < max {
            max_p * (self.avg - min) / (max - min)
        } else if self.cfg.gentle && self.avg < 2.0 * max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            1.0
        }
    }

    /// Whether RED acts on this arrival, and whether it may mark instead of dropping.
    fn decide(&mut self, pkt: &Packet) -> Option<bool> {
        let mut pb = self.base_probability();
        if pb <= 0.0 {
            self.count = -1;
            return None;
        }
        let forced = pb >= 1.0;
        if self.cfg.bytes {
            pb = (pb * pkt.size as f64 / self.cfg.mean_packet).min(1.0);
        }
        self.count += 1;
        let pa = if forced {
            1.0
        } else {
            pb / (1.0 - self.count as f64 * pb).max(1e-9)
        };
        if self.rng.random::<f64>() < pa.min(1.0) {
            self.count = 0;
            let may_mark = self.cfg.ecn
                && pkt.ecn.is_capable()
                && (self.cfg.gentle || self.avg < self.cfg.max_th);
            Some(may_mark)
        } else {
            None
        }
    }
}

impl Aqm for Red {
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, _fits: bool, data: &Fifo) -> Verdict {
        self.update_average(now, data);
        match self.decide(pkt) {
            Some(true) => {
                pkt.ecn.mark();
                Verdict::Marked
            }
            Some(false) => {
                // Dropped at an empty queue: it stays idle, from now.
                if data.is_empty() {
                    self.idle_since = Some(now);
                }
                Verdict::Drop
            }
            None => Verdict::Pass,
        }
    }

    fn after_dequeue(&mut self, now: Time, data: &Fifo) {
        // The queue went idle: the average decays from here at the next arrival.
        if data.is_empty() && self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("red_avg".into(), self.avg));
        out.push(("red_prob".into(), self.base_probability()));
    }
}

/// `red` parameters; thresholds in packets ("5pkt") or bytes ("5KB", byte mode).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// Average queue below which nothing is dropped or marked.
    pub min_th: Limit,
    /// Average queue at which the drop probability reaches `max_p` (and, unless `gentle`, every
    /// packet is dropped above it).
    pub max_th: Limit,
    /// Drop (or mark) probability at `max_th`.
    #[serde(default = "red_max_p")]
    pub max_p: f64,
    /// Weight of the average queue's exponential moving average (Floyd–Jacobson's w_q).
    #[serde(default = "red_wq")]
    pub wq: f64,
    /// Gentle RED: between `max_th` and twice it the probability rises from `max_p` to 1 instead of
    /// jumping to 1.
    #[serde(default = "crate::params::yes")]
    pub gentle: bool,
    /// Mark ECN-capable packets (RFC 3168) instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// Monaco's out-of-band and reverse control packets skip the data queue (as for `droptail`).
    #[serde(default)]
    pub priority: bool,
}

fn red_max_p() -> f64 {
    0.1
}
fn red_wq() -> f64 {
    0.002
}

impl QueueParams for RedParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        // Floyd–Jacobson: a probability, and an EWMA weight.
        in_range("max_p", self.max_p, 0.0..=1.0)?;
        in_range("wq", self.wq, (Excluded(0.0), Included(1.0)))?;
        match (self.min_th, self.max_th) {
            (Limit::Packets(a), Limit::Packets(b)) if a < b => Ok(()),
            (Limit::Bytes(a), Limit::Bytes(b)) if a < b => Ok(()),
            _ => Err(ParamError::at(
                "max_th",
                "red thresholds must be both packets or both bytes, with min_th < max_th",
            )),
        }
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let p = self;
        let (min, max, bytes) = match (p.min_th, p.max_th) {
            (Limit::Bytes(a), Limit::Bytes(b)) => (a as f64, b as f64, true),
            (Limit::Packets(a), Limit::Packets(b)) => (a as f64, b as f64, false),
            _ => (0.0, f64::INFINITY, false), // refused by `validate`
        };
        let cfg = RedSettings {
            min_th: min,
            max_th: max,
            bytes,
            max_p: p.max_p,
            wq: p.wq,
            gentle: p.gentle,
            ecn: p.ecn,
            mean_packet: ctx.packet_size as f64,
        };
        let limit = p.limit;
        let rng = crate::rng::stream(ctx.seed, &format!("{}:red", ctx.name));
        Box::new(AqmQueue::with_priority(
            Red::new(cfg, ctx.rate, rng),
            limit,
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
    use crate::packet::{FlowId, PacketKind};

    fn red(gentle: bool) -> Red {
        let cfg = RedSettings {
            min_th: 5.0,
            max_th: 15.0,
            bytes: false,
            max_p: 0.1,
            wq: 0.002,
            gentle,
            ecn: false,
            mean_packet: 1000.0,
        };
        Red::new(cfg, Rate::from_mbps(10), crate::rng::stream(1, "red"))
    }

    #[test]
    fn average_is_an_ewma_with_idle_decay() {
        let mut r = red(true);
        r.idle_since = None;
        let mut fifo = Fifo::new(Limit::Unlimited);
        for _ in 0..10 {
            fifo.push(Time::ZERO, Packet::new(FlowId(0), PacketKind::Data, 1000))
                .unwrap();
        }
        r.update_average(Time::ZERO, &fifo);
        assert!((r.average() - 0.02).abs() < 1e-12, "{}", r.average());
        // Idle for 80 ms = 100 packet times at 10 Mb/s: avg × 0.998^100, then one arrival at q=0.
        r.idle_since = Some(Time::ZERO);
        while fifo.pop().is_some() {}
        r.update_average(Time(80_000_000), &fifo);
        let expected = 0.02 * 0.998f64.powf(100.0) * 0.998;
        assert!(
            (r.average() - expected).abs() < 1e-12,
            "{} vs {expected}",
            r.average()
        );
    }

    /// An average left high by a burst decays over the idle spell that follows, even when
    /// the first packets after it are dropped at the empty queue (before, a drop at an empty
    /// queue ended the spell for good: no dequeue came to start the next one, the average
    /// stayed above max_th and every later packet was dropped).
    #[test]
    fn drops_at_an_empty_queue_do_not_end_its_idle_spell() {
        let mut r = red(false);
        r.avg = 40.0; // above max_th: every arrival dropped
        let fifo = Fifo::new(Limit::Unlimited);
        let mut pkt = Packet::new(FlowId(0), PacketKind::Data, 1000);
        // The queue went idle at 0 (as `Red::new` starts). A packet at 1 ms finds the average
        // still far above max_th and is dropped; then one packet a second, each into the empty
        // queue (1 s = 1,250 packet times at 10 Mb/s: the average falls by 0.998^1250 ≈ 0.08
        // a second).
        let mut verdicts = vec![r.on_arrival(Time(1_000_000), &mut pkt, true, &fifo)];
        for s in 1..4 {
            verdicts.push(r.on_arrival(Time(s * 1_000_000_000), &mut pkt, true, &fifo));
        }
        assert_eq!(verdicts[0], Verdict::Drop);
        assert!(r.average() < 5.0, "{}", r.average());
        assert_eq!(verdicts[3], Verdict::Pass, "{verdicts:?}");
    }

    #[test]
    fn probability_ramps_between_thresholds_and_gently_beyond() {
        let mut r = red(true);
        for (avg, p) in [
            (4.0, 0.0),
            (10.0, 0.05),
            (15.0, 0.1),
            (22.5, 0.55),
            (31.0, 1.0),
        ] {
            r.avg = avg;
            assert!(
                (r.base_probability() - p).abs() < 1e-12,
                "avg {avg}: {}",
                r.base_probability()
            );
        }
        let mut hard = red(false);
        hard.avg = 16.0;
        assert_eq!(hard.base_probability(), 1.0);
    }

    #[test]
    fn count_spreads_drops_evenly() {
        // p_b = 0.05: p_a = p_b/(1 − count·p_b) reaches 1 by count 20, so the gap between drops
        // never exceeds 20 arrivals.
        let mut r = red(true);
        r.avg = 10.0;
        let mut gaps = vec![];
        let mut since = 0;
        for _ in 0..5000 {
            since += 1;
            if r.decide(&Packet::new(FlowId(0), PacketKind::Data, 1000))
                .is_some()
            {
                gaps.push(since);
                since = 0;
            }
        }
        assert!(gaps.iter().all(|&g| g <= 21), "{:?}", gaps.iter().max());
        let mean = gaps.iter().sum::<i32>() as f64 / gaps.len() as f64;
        assert!((8.0..14.0).contains(&mean), "mean gap {mean}");
    }

    #[test]
    fn priority_puts_the_high_band_in_front_of_red() {
        let p: RedParams = toml::from_str(
            r#"limit = "10pkt"
min_th = "2pkt"
max_th = "6pkt"
priority = true"#,
        )
        .unwrap();
        let mut q = p.build(&QueueContext {
            rate: Rate::from_mbps(10),
            seed: 1,
            name: "link:r1->r2".into(),
            flow_classes: std::sync::Arc::from(Vec::<String>::new()),
            packet_size: 1000,
        });
        for kind in [PacketKind::Data, PacketKind::ControlOb] {
            q.enqueue(Time::ZERO, &Packet::new(FlowId(0), kind, 40))
                .unwrap();
        }
        let first = q.dequeue(Time::ZERO, &mut Vec::new()).unwrap();
        assert_eq!(first.packet.kind, PacketKind::ControlOb);
        let mut state = Vec::new();
        q.aqm_state(&mut state);
        let names: Vec<&str> = state.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["red_avg", "red_prob", "high_queue_pkts"]);
    }
}
