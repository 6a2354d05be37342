//! PIE (RFC 8033): Proportional Integral controller Enhanced.
//!
//! Every `t_update` (15 ms) PIE moves its drop probability by
//! p = α·(qdelay − target) + β·(qdelay − qdelay_old) (RFC 8033 §4.2, α = 0.125 Hz,
//! β = 1.25 Hz, target 15 ms), scaled down while the probability is small (the auto-tuning of
//! §4.2), and drops (or, with `ecn`, marks) arriving packets at random with that probability
//! (§4.1), except while a burst allowance (150 ms) lasts or while the queue is short.
//!
//! The queueing delay is measured with timestamps, as RFC 8033 §4.2 allows and Linux's
//! `sch_pie` does by default: the sojourn time of the last packet to leave, zero once the queue
//! has emptied.
//!
//! Departures: no de-randomisation (§5.4, optional; Linux does without it); PIE is always
//! active (§5.2's active/inactive switch is optional); Linux's extra 2% step when the delay
//! exceeds 250 ms is not taken. The random stream is the link's own (seeded).

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::params::{positive, ParamError, QueueContext, QueueParams};
use crate::rng::Rng;
use crate::units::{Duration, Limit, Time};

/// PIE settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PieSettings {
    /// QDELAY_REF (RFC 8033 §4.2: 15 ms).
    pub target: Duration,
    /// T_UPDATE (15 ms).
    pub t_update: Duration,
    /// α and β, in Hz (0.125 and 1.25).
    pub alpha: f64,
    pub beta: f64,
    /// MAX_BURST (150 ms).
    pub max_burst: Duration,
    /// Mark ECN-capable packets instead of dropping them while the probability is at most
    /// `mark_ecn_threshold` (§5.1: 10%).
    pub ecn: bool,
    pub mark_ecn_threshold: f64,
    /// MEAN_PKTSIZE, bytes: a queue of two packets or less is never dropped from.
    pub mean_packet: u64,
}

/// The PIE policy (in an [`AqmQueue`], which holds the buffer).
#[derive(Clone, Debug)]
pub struct Pie {
    cfg: PieSettings,
    rng: Rng,
    drop_prob: f64,
    /// The current queueing delay: the last departure's sojourn time, 0 once empty.
    qdelay: Duration,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Time,
}

impl Pie {
    pub fn new(cfg: PieSettings, rng: Rng) -> Pie {
        Pie {
            rng,
            drop_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: cfg.max_burst,
            next_update: Time::ZERO + cfg.t_update,
            cfg,
        }
    }

    /// The drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// Runs the periodic updates due by `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            if self.at_rest() {
                // Nothing changes while idle: skip the updates an idle spell would run.
                let periods = now.since(self.next_update).0 / self.cfg.t_update.0 + 1;
                self.next_update += Duration(periods * self.cfg.t_update.0);
                return;
            }
            self.update();
            self.next_update += self.cfg.t_update;
        }
    }

    /// A fixed point of [`Pie::update`]: no delay, no probability, the burst allowance full.
    fn at_rest(&self) -> bool {
        self.drop_prob == 0.0
            && self.qdelay.0 == 0
            && self.qdelay_old.0 == 0
            && self.burst_allowance == self.cfg.max_burst
    }

    /// RFC 8033 §4.2, `calculate_drop_prob`, once per T_UPDATE.
    fn update(&mut self) {
        let (cur, old) = (self.qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64());
        let target = self.cfg.target.as_secs_f64();
        // p = α·(current_qdelay − QDELAY_REF) + β·(current_qdelay − qdelay_old)
        let mut p = self.cfg.alpha * (cur - target) + self.cfg.beta * (cur - old);
        // §4.2 auto-tuning: "small drop_prob_, small adjustments".
        p /= match self.drop_prob {
            d if d < 0.000001 => 2048.0,
            d if d < 0.00001 => 512.0,
            d if d < 0.0001 => 128.0,
            d if d < 0.001 => 32.0,
            d if d < 0.01 => 8.0,
            d if d < 0.1 => 2.0,
            _ => 1.0,
        };
        // §5.5: with a large probability, "the drop_prob adjustment should not exceed 2%".
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // §4.2: "Exponentially decay drop prob when congestion goes away".
        if self.qdelay.0 == 0 && self.qdelay_old.0 == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.2: burst_allowance_ = max(0, burst_allowance_ − T_UPDATE), reset to MAX_BURST once
        // the probability is 0 and both delays are under half the target.
        self.burst_allowance = Duration(self.burst_allowance.0.saturating_sub(self.cfg.t_update.0));
        let half = Duration(self.cfg.target.0 / 2);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// RFC 8033 §4.1 `drop_early`: whether an arrival is dropped (or marked).
    fn drop_early(&mut self, data: &Fifo) -> bool {
        if self.burst_allowance.0 > 0 {
            return false;
        }
        // "Safeguard PIE to be work conserving".
        let half = Duration(self.cfg.target.0 / 2);
        if (self.qdelay_old < half && self.drop_prob < 0.2)
            || data.backlog().bytes <= 2 * self.cfg.mean_packet
        {
            return false;
        }
        self.rng.random::<f64>() < self.drop_prob
    }
}

impl Aqm for Pie {
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, fits: bool, data: &Fifo) -> Verdict {
        self.catch_up(now);
        if !fits || !self.drop_early(data) {
            return Verdict::Pass; // (an arrival that does not fit is tail-dropped)
        }
        // §5.1: mark instead of dropping while drop_prob is below mark_ecnth.
        if self.cfg.ecn && pkt.ecn.is_capable() && self.drop_prob <= self.cfg.mark_ecn_threshold {
            if !pkt.ecn.is_marked() {
                pkt.ecn.mark();
            }
            return Verdict::Marked;
        }
        Verdict::Drop
    }

    fn before_dequeue(&mut self, now: Time, _data: &Fifo) {
        self.catch_up(now);
    }

    fn on_departure(&mut self, _: Time, _: &mut Packet, sojourn: Duration, _: &Fifo) -> Verdict {
        self.qdelay = sojourn;
        Verdict::Pass
    }

    fn after_dequeue(&mut self, _now: Time, data: &Fifo) {
        if data.is_empty() {
            self.qdelay = Duration::ZERO; // as Linux's sch_pie with timestamps
        }
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("pie_drop_prob".into(), self.drop_prob));
        out.push(("pie_qdelay_s".into(), self.qdelay.as_secs_f64()));
    }
}

/// `pie` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PieParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// QDELAY_REF, the target queueing delay (RFC 8033: 15 ms).
    pub target: Duration,
    /// T_UPDATE, the update period (15 ms).
    pub t_update: Duration,
    /// α, Hz (0.125).
    pub alpha: f64,
    /// β, Hz (1.25).
    pub beta: f64,
    /// MAX_BURST (150 ms).
    pub max_burst: Duration,
    /// Mark ECN-capable packets instead of dropping them (RFC 8033 §5.1).
    pub ecn: bool,
    /// The probability above which ECN-capable packets are dropped too (10%).
    pub mark_ecn_threshold: f64,
    /// Monaco's out-of-band and reverse control packets skip the data queue.
    pub priority: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            limit: Limit::Packets(1000), // Linux's sch_pie default
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            ecn: false,
            mark_ecn_threshold: 0.1,
            priority: false,
        }
    }
}

impl QueueParams for PieParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        positive("target", self.target.as_secs_f64())?;
        positive("t_update", self.t_update.as_secs_f64())?;
        positive("alpha", self.alpha)?;
        positive("beta", self.beta)?;
        if !self.max_burst.as_secs_f64().is_finite() {
            return Err(ParamError::at("max_burst", "must be a finite duration"));
        }
        if !(0.0..=1.0).contains(&self.mark_ecn_threshold) {
            return Err(ParamError::at(
                "mark_ecn_threshold",
                format!(
                    "pie `mark_ecn_threshold` must be in [0, 1], not {}",
                    self.mark_ecn_threshold
                ),
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let pie = Pie::new(
            PieSettings {
                target: self.target,
                t_update: self.t_update,
                alpha: self.alpha,
                beta: self.beta,
                max_burst: self.max_burst,
                ecn: self.ecn,
                mark_ecn_threshold: self.mark_ecn_threshold,
                mean_packet: u64::from(ctx.packet_size),
            },
            crate::rng::stream(ctx.seed, &format!("{}:pie", ctx.name)),
        );
        Box::new(AqmQueue::with_priority(pie, self.limit, self.priority))
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId, PacketKind};

    fn pie(ecn: bool) -> AqmQueue<Pie> {
        let cfg = PieSettings {
            ecn,
            mean_packet: 1000,
            ..pie_defaults()
        };
        AqmQueue::new(
            Pie::new(cfg, crate::rng::stream(1, "pie")),
            Limit::Unlimited,
        )
    }

    fn pie_defaults() -> PieSettings {
        let p = PieParams::default();
        PieSettings {
            target: p.target,
            t_update: p.t_update,
            alpha: p.alpha,
            beta: p.beta,
            max_burst: p.max_burst,
            ecn: p.ecn,
            mark_ecn_threshold: p.mark_ecn_threshold,
            mean_packet: 1000,
        }
    }

    #[test]
    fn the_update_is_the_scaled_pi_law() {
        let mut p = Pie::new(pie_defaults(), crate::rng::stream(1, "pie"));
        // 45 ms of delay from nothing, probability 0: p = (0.125·0.030 + 1.25·0.045)/2048.
        p.qdelay = Duration::from_millis(45);
        p.update();
        let want = (0.125 * 0.030 + 1.25 * 0.045) / 2048.0;
        assert!((p.drop_prob() - want).abs() < 1e-15, "{}", p.drop_prob());
        // At 5%: the adjustment is halved; steady at 45 ms: only the integral term.
        p.drop_prob = 0.05;
        p.update();
        assert!((p.drop_prob() - (0.05 + 0.125 * 0.030 / 2.0)).abs() < 1e-12);
        // Above 10%, at most +2% per update (§5.5).
        p.drop_prob = 0.5;
        p.qdelay = Duration::from_millis(500);
        p.update();
        assert!((p.drop_prob() - 0.52).abs() < 1e-12);
        // No delay now or before: the law's −α·target, then a 2% decay.
        p.drop_prob = 0.5;
        p.qdelay = Duration::ZERO;
        p.qdelay_old = Duration::ZERO;
        p.update();
        assert!((p.drop_prob() - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12);
        // A falling delay pulls the probability down, never below 0.
        p.qdelay_old = Duration::from_millis(500);
        p.update();
        assert_eq!(p.drop_prob(), 0.0);
    }

    #[test]
    fn the_burst_allowance_protects_a_burst_then_runs_out() {
        let mut p = Pie::new(pie_defaults(), crate::rng::stream(1, "pie"));
        p.qdelay = Duration::from_millis(100);
        // 150 ms of allowance = 10 updates of 15 ms.
        for _ in 0..9 {
            p.update();
        }
        assert!(p.burst_allowance.0 > 0);
        p.update();
        assert_eq!(p.burst_allowance, Duration::ZERO);
    }

    /// Packets arrive every `gap_us` µs and leave every 1 ms for `secs`: the mean sojourn of the
    /// last half, the drops (or marks) and the packets sent.
    fn overload(q: &mut AqmQueue<Pie>, gap_us: u64, secs: u64, ect: bool) -> (f64, u64, u64) {
        let (mut signals, mut sent, mut late, mut late_n) = (0, 0, 0.0, 0.0);
        let mut next_arrival = Time::ZERO;
        let mut dropped = Vec::new();
        for t in 0..secs * 1000 {
            let now = Time::ZERO + Duration::from_millis(t);
            while next_arrival <= now {
                let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
                if ect {
                    p.ecn = Ecn::ECT;
                }
                match q.enqueue(next_arrival, &p) {
                    Ok(e) => signals += u64::from(e.marked),
                    Err(_) => signals += 1,
                }
                next_arrival += Duration(gap_us * 1000);
            }
            dropped.clear();
            if let Some(d) = q.dequeue(now, &mut dropped) {
                sent += 1;
                if t >= secs * 500 {
                    late += d.sojourn.as_secs_f64();
                    late_n += 1.0;
                }
            }
        }
        (late / late_n, signals, sent)
    }

    #[test]
    fn a_light_load_is_left_alone() {
        let (delay, drops, _) = overload(&mut pie(false), 1111, 10, false);
        assert_eq!(drops, 0);
        assert!(delay < 0.002);
    }

    #[test]
    fn an_overload_is_held_near_the_target_delay() {
        // 20% more arrivals than the link serves (a non-responsive load): the queue would grow
        // without bound; PIE's probability settles near 1/6 and the delay near 15 ms.
        for ecn in [false, true] {
            let mut q = pie(ecn);
            let (delay, signals, sent) = overload(&mut q, 833, 30, ecn);
            assert!(
                (0.005..0.05).contains(&delay),
                "ecn {ecn}: mean sojourn {delay} s"
            );
            assert!(signals > 4000, "ecn {ecn}: {signals} drops/marks");
            assert!(sent > 29_000);
            let p = q.aqm().drop_prob();
            assert!((0.05..0.4).contains(&p), "drop probability {p}");
        }
    }
}
