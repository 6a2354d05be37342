//! DualPI2 (RFC 9332): the DualQ Coupled AQM of L4S. Two queues share one buffer: the L queue
//! holds ECT(1) and CE packets (the L4S identifier, RFC 9331 §5.1), the C queue everything else.
//! A PI controller of the C queue's delay (PI2) keeps a base probability p′; the C queue drops
//! (or, for ECN-capable packets, marks) with p_C = p′² (the square suits classic flows'
//! 1/√p rate), and the L queue marks with p_CL = k·p′ (linear, for scalable flows' 1/p rate),
//! or more when its own delay passes a shallow threshold — so that a Prague and a CUBIC flow
//! get about equal rates with k = 2 (§2.4).
//!
//! The pseudocode of RFC 9332 Appendix A, with its defaults: target 15 ms, Tupdate 16 ms,
//! α = 0.16 Hz, β = 3.2 Hz, k = 2; the L queue's native AQM a ramp from `l_threshold` over
//! `l_range` (the Appendix's minTh 800 µs, range 400 µs), or a step at `l_threshold` when
//! `l_range` is 0 (the default here, a step at 1 ms, as Linux's `step_thresh`).
//!
//! Choices RFC 9332 leaves open, and departures:
//! - The scheduler is a time-shifted FIFO (§4.2.2 and A.1's `scheduler()` example): the head
//!   of the L queue goes first unless the C queue's head has waited `tshift` longer (default
//!   2 × target). Linux uses a weighted round robin instead.
//! - The PI update runs lazily on each enqueue and dequeue, for every Tupdate boundary passed
//!   since, with the C queue's delay then (its head's sojourn): what a timer would compute.
//! - The C queue's delay is its head's sojourn time; the L queue's native AQM looks at each
//!   packet's own sojourn as it leaves (A.1's `lq.time()`).
//! - L marking is A.1's deterministic `recur()` (a mark every 1/p_L packets), C marking and
//!   dropping random (p′ > max(u₁, u₂), probability p′²).
//! - Overload (§4.2.3): once k·p′ reaches 1 the L queue cannot mark harder, and its packets
//!   are dropped with p_C as classic packets are. The buffer limit is shared (A.1: drop on
//!   arrival when the two queues hold the limit); default 10,000 packets (Linux's) rather
//!   than the RFC's 250 ms at the link rate.

use serde::{Deserialize, Serialize};

use super::{
    Backlog, Dequeued, DropReason, Dropped, Enqueued, Fifo, QueueDiscipline, QueueState, QueueStats,
};
use crate::packet::Packet;
use crate::params::{in_range, ParamError, QueueContext, QueueParams};
use crate::rng::Rng;
use crate::units::{Duration, Limit, Rate, Time};
use rand::RngExt;

/// The DualPI2 discipline.
pub struct DualPi2 {
    l: Fifo,
    c: Fifo,
    limit: Limit,
    cfg: DualPi2Params,
    /// p′, the PI2 controller's base probability, in [0, 1].
    p: f64,
    /// The C queue's delay at the last update (for the proportional term).
    prev_q: Duration,
    next_update: Time,
    /// `recur()`'s accumulator for the L queue's marks.
    l_count: f64,
    rng: Rng,
    /// The sojourn of the last packet each queue let go: what a monitor samples.
    last_sojourn: [Duration; 2],
    tshift: Duration,
}

impl DualPi2 {
    /// A DualPI2 whose buffer, when `cfg` gives none, holds 250 ms at `rate`.
    pub fn new(cfg: DualPi2Params, rate: Rate, rng: Rng) -> DualPi2 {
        let cfg_tshift = cfg.tshift.unwrap_or(Duration(2 * cfg.target.0));
        DualPi2 {
            l: Fifo::new(Limit::Unlimited),
            c: Fifo::new(Limit::Unlimited),
            // A.1: "limit = MAX_LINK_RATE * 250 ms".
            limit: cfg
                .limit
                .unwrap_or(Limit::Bytes(rate.bytes_in(DEFAULT_BUFFER).max(3000))),
            next_update: Time::ZERO + cfg.t_update,
            cfg,
            p: 0.0,
            prev_q: Duration::ZERO,
            l_count: 0.0,
            rng,
            last_sojourn: [Duration::ZERO; 2],
            tshift: cfg_tshift,
        }
    }

    /// The base probability p′.
    pub fn probability(&self) -> f64 {
        self.p
    }

    /// The C queue's delay at `t`: its head's sojourn (zero when empty).
    fn c_delay(&self, t: Time) -> Duration {
        self.c.head_time().map_or(Duration::ZERO, |at| t - at)
    }

    /// RFC 9332 A.1 `dualpi2_update()`, at every Tupdate boundary up to `now`.
    fn update(&mut self, now: Time) {
        let (alpha_u, beta_u) = (
            self.cfg.alpha * self.cfg.t_update.as_secs_f64(),
            self.cfg.beta * self.cfg.t_update.as_secs_f64(),
        );
        while self.next_update <= now {
            let t = self.next_update;
            let curq = self.c_delay(t);
            // p′ += α_U·(curq − target) + β_U·(curq − prevq), in seconds, clamped to [0, 1].
            let err = curq.as_secs_f64() - self.cfg.target.as_secs_f64();
            let trend = curq.as_secs_f64() - self.prev_q.as_secs_f64();
            self.p = (self.p + alpha_u * err + beta_u * trend).clamp(0.0, 1.0);
            self.prev_q = curq;
            self.next_update = t + self.cfg.t_update;
        }
    }

    /// A.1 `laqm()`: the L queue's native marking probability for a sojourn of `q`.
    fn native_l(&self, q: Duration) -> f64 {
        let (th, range) = (self.cfg.l_threshold, self.cfg.l_range);
        if range == Duration::ZERO {
            return if q >= th { 1.0 } else { 0.0 };
        }
        if q >= th + range {
            1.0
        } else if q > th {
            (q - th).as_secs_f64() / range.as_secs_f64()
        } else {
            0.0
        }
    }

    /// A.1 `recur()`: true once per 1/`p` calls.
    fn recur(&mut self, p: f64) -> bool {
        self.l_count += p;
        if self.l_count > 1.0 {
            self.l_count -= 1.0;
            true
        } else {
            false
        }
    }

    /// p′ > max(u₁, u₂): true with probability p′² (A.1's classic decision).
    fn squared(&mut self) -> bool {
        let (a, b): (f64, f64) = (self.rng.random(), self.rng.random());
        self.p > a.max(b)
    }

    /// Whether the shared buffer has no room for `pkt`.
    fn full(&self, pkt: &Packet) -> bool {
        let (l, c) = (self.l.backlog(), self.c.backlog());
        !self
            .limit
            .admits(l.packets + c.packets, l.bytes + c.bytes, pkt.size as u64)
    }
}

impl QueueState for DualPi2 {
    fn backlog(&self) -> Backlog {
        let (l, c) = (self.l.backlog(), self.c.backlog());
        Backlog {
            packets: l.packets + c.packets,
            bytes: l.bytes + c.bytes,
        }
    }

    fn stats(&self) -> QueueStats {
        self.l.stats().merged(self.c.stats())
    }

    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("dualpi2_p".into(), self.p));
        out.push(("dualpi2_l_pkts".into(), self.l.backlog().packets as f64));
        out.push(("dualpi2_c_pkts".into(), self.c.backlog().packets as f64));
        out.push((
            "dualpi2_l_sojourn_ms".into(),
            self.last_sojourn[0].as_secs_f64() * 1e3,
        ));
        out.push((
            "dualpi2_c_sojourn_ms".into(),
            self.last_sojourn[1].as_secs_f64() * 1e3,
        ));
    }
}

impl QueueDiscipline for DualPi2 {
    fn enqueue(&mut self, now: Time, pkt: &Packet) -> Result<Enqueued, Dropped> {
        self.update(now);
        // A.1 `dualpi2_enqueue()`: drop when the shared buffer is full, then classify:
        // ECT(1) and CE to the L queue, the rest to the C queue.
        let full = self.full(pkt);
        let q = if pkt.ecn.is_l4s() {
            &mut self.l
        } else {
            &mut self.c
        };
        if full {
            return Err(q.drop(*pkt, DropReason::Overflow));
        }
        q.push_fitting(now, *pkt);
        Ok(Enqueued { marked: false })
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        self.update(now);
        loop {
            let (lh, ch) = (self.l.head_time(), self.c.head_time());
            // The time-shifted FIFO: L first unless C's head has waited tshift longer.
            let from_l = match (lh, ch) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(l), Some(c)) => (now - c) <= (now - l) + self.tshift,
            };
            if from_l {
                let (mut pkt, at) = self.l.pop().expect("a head");
                let sojourn = now - at;
                self.last_sojourn[0] = sojourn;
                let coupled = self.cfg.k * self.p;
                if coupled >= 1.0 && self.squared() {
                    // §4.2.3 overload: L packets dropped as classic ones.
                    dropped.push(self.l.drop(pkt, DropReason::HeadDrop));
                    continue;
                }
                // A.1: p_L = max(laqm(sojourn), p_CL); marked by recur().
                let p_l = self.native_l(sojourn).max(coupled.min(1.0));
                let marked = self.recur(p_l) && pkt.ecn.is_capable();
                if marked {
                    pkt.ecn.mark();
                    self.l.count_mark();
                }
                self.l.count_sent(&pkt);
                return Some(Dequeued {
                    packet: pkt,
                    sojourn,
                    marked,
                });
            }
            let (mut pkt, at) = self.c.pop().expect("a head");
            let sojourn = now - at;
            self.last_sojourn[1] = sojourn;
            let mut marked = false;
            if self.squared() {
                if !pkt.ecn.is_capable() {
                    dropped.push(self.c.drop(pkt, DropReason::HeadDrop));
                    continue;
                }
                pkt.ecn.mark();
                self.c.count_mark();
                marked = true;
            }
            self.c.count_sent(&pkt);
            return Some(Dequeued {
                packet: pkt,
                sojourn,
                marked,
            });
        }
    }

    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.l.iter().chain(self.c.iter()).for_each(f);
    }
}

/// The buffer when `limit` is not given: RFC 9332 A.1's 250 ms at the link's rate.
pub const DEFAULT_BUFFER: Duration = Duration::from_millis(250);

/// `dualpi2` parameters (RFC 9332 Appendix A's defaults).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Params {
    /// The buffer both queues share, packets or bytes (default: 250 ms at the link's rate,
    /// RFC 9332 A.1; Linux's default is 10000 packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// The C queue's delay target (15 ms).
    pub target: Duration,
    /// The PI controller's update interval (16 ms).
    pub t_update: Duration,
    /// The integral gain, Hz (0.16).
    pub alpha: f64,
    /// The proportional gain, Hz (3.2).
    pub beta: f64,
    /// The coupling factor k: the L queue marks with k·p′ (2).
    pub k: f64,
    /// The L queue's own marking threshold on a packet's sojourn (1 ms).
    pub l_threshold: Duration,
    /// The width of the L queue's marking ramp above the threshold; 0: a step (0).
    pub l_range: Duration,
    /// The time-shifted FIFO's shift: the C queue's head goes first once it has waited this
    /// much longer than the L queue's (default: twice the target).
    pub tshift: Option<Duration>,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            limit: None,
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            k: 2.0,
            l_threshold: Duration::from_millis(1),
            l_range: Duration::ZERO,
            tshift: None,
        }
    }
}

impl QueueParams for DualPi2Params {
    fn marks_ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Result<(), ParamError> {
        for (key, d) in [("target", self.target), ("t_update", self.t_update)] {
            if d == Duration::ZERO {
                return Err(ParamError::at(
                    key,
                    format!("dualpi2 `{key}` must be above 0"),
                ));
            }
        }
        in_range("alpha", self.alpha, 0.0..)?;
        in_range("beta", self.beta, 0.0..)?;
        // RFC 9332 §2.4: k = 2 balances Prague and CUBIC; below 1 the L queue would mark less
        // than the classic queue drops.
        in_range("k", self.k, 1.0..)?;
        if self.limit == Some(Limit::Unlimited) {
            return Err(ParamError::at(
                "limit",
                "dualpi2 `limit` must be a number of packets or bytes, not \"inf\"",
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        Box::new(DualPi2::new(
            self.clone(),
            ctx.rate,
            crate::rng::stream(ctx.seed, &format!("{}:dualpi2", ctx.name)),
        ))
    }

    fn limits(&self) -> Vec<Limit> {
        self.limit.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId, PacketKind};

    fn pkt(ecn: Ecn) -> Packet {
        let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
        p.ecn = ecn;
        p
    }

    fn q(p: DualPi2Params) -> DualPi2 {
        DualPi2::new(p, Rate::from_mbps(100), crate::rng::stream(1, "dualpi2"))
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_and_are_served_first() {
        let mut d = q(DualPi2Params::default());
        d.enqueue(ms(0), &pkt(Ecn::ECT)).unwrap();
        d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap();
        let mut ce = Ecn::ECT;
        ce.mark();
        d.enqueue(ms(1), &pkt(ce)).unwrap();
        d.enqueue(ms(1), &pkt(Ecn::ECT1)).unwrap();
        assert_eq!((d.l.backlog().packets, d.c.backlog().packets), (2, 2));
        let mut out = Vec::new();
        // L first although it came later (the C head has not waited tshift = 30 ms longer).
        let first = d.dequeue(ms(2), &mut out).unwrap();
        assert!(first.packet.ecn.is_l4s());
        // Once the C head has waited 30 ms more than the L head, it goes first.
        let mut d = q(DualPi2Params::default());
        d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap();
        d.enqueue(ms(31), &pkt(Ecn::ECT1)).unwrap();
        assert!(!d.dequeue(ms(31), &mut out).unwrap().packet.ecn.is_l4s());
    }

    #[test]
    fn the_l_queue_marks_at_its_step_and_by_recur() {
        let mut d = q(DualPi2Params::default());
        let mut out = Vec::new();
        // Sojourn 2 ms ≥ the 1 ms step: p_L = 1, and recur() marks all but the first.
        for _ in 0..5 {
            d.enqueue(ms(0), &pkt(Ecn::ECT1)).unwrap();
        }
        let marks: Vec<bool> = (0..5)
            .map(|_| d.dequeue(ms(2), &mut out).unwrap().marked)
            .collect();
        assert_eq!(marks, vec![false, true, true, true, true]);
        // Below the step and with p′ = 0: no marks.
        d.enqueue(ms(10), &pkt(Ecn::ECT1)).unwrap();
        assert!(!d.dequeue(ms(10), &mut out).unwrap().marked);
        // A ramp: half-way up it, every other packet.
        let mut r = q(DualPi2Params {
            l_threshold: Duration::from_micros(800),
            l_range: Duration::from_micros(400),
            ..DualPi2Params::default()
        });
        for _ in 0..10 {
            r.enqueue(ms(0), &pkt(Ecn::ECT1)).unwrap();
        }
        let t = Time(1_000_000);
        let n = (0..10)
            .filter(|_| r.dequeue(t, &mut out).unwrap().marked)
            .count();
        assert_eq!(
            n, 4,
            "recur() marks when its count passes 1: the 3rd, 5th, 7th, 9th"
        );
    }

    #[test]
    fn the_pi_controller_steers_p_with_the_classic_delay_and_couples_the_l_queue() {
        let mut d = q(DualPi2Params::default());
        // One classic packet standing in the queue from 0 on.
        let mut out = Vec::new();
        d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap();
        d.update(ms(16));
        // First update at 16 ms: curq 16 ms, 1 ms over the target; prevq 0.
        let want = 0.16 * 0.016 * 0.001 + 3.2 * 0.016 * 0.016;
        assert!(
            (d.probability() - want).abs() < 1e-12,
            "{}",
            d.probability()
        );
        // A standing queue (its head ever older) drives p′ up…
        let before = d.probability();
        d.update(ms(160));
        assert!(d.probability() > before);
        // …and an empty one down to zero: −α_U·target = −3.84e-5 per update.
        let mut e = q(DualPi2Params::default());
        e.p = 0.01;
        e.update(ms(10_000));
        assert_eq!(e.probability(), 0.0);
        let _ = d.dequeue(ms(200), &mut out);
        // The L queue marks at k·p′ when its own delay is low: with p′ = 0.1, 20% of packets.
        let mut d = q(DualPi2Params::default());
        d.p = 0.1;
        d.next_update = Time::MAX;
        for _ in 0..1000 {
            d.enqueue(ms(0), &pkt(Ecn::ECT1)).unwrap();
        }
        let marked = (0..1000)
            .filter(|_| d.dequeue(ms(0), &mut out).unwrap().marked)
            .count();
        assert!((199..=200).contains(&marked), "{marked}"); // recur's strict > and rounding
                                                            // The C queue drops packets that are not ECN-capable with p′² = 1%.
        out.clear();
        let mut sent = 0;
        for _ in 0..10 {
            for _ in 0..2_000 {
                d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap();
            }
            while d.dequeue(ms(0), &mut out).is_some() {
                sent += 1;
            }
        }
        let rate = out.len() as f64 / (out.len() + sent) as f64;
        assert!((rate - 0.01).abs() < 0.002, "{rate}");
    }

    #[test]
    fn the_default_buffer_is_250_ms_at_the_link_rate() {
        assert_eq!(q(DualPi2Params::default()).limit, Limit::Bytes(3_125_000));
    }

    #[test]
    fn the_shared_buffer_refuses_arrivals_when_full() {
        let mut d = q(DualPi2Params {
            limit: Some(Limit::Packets(3)),
            ..DualPi2Params::default()
        });
        d.enqueue(ms(0), &pkt(Ecn::ECT1)).unwrap();
        d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap();
        d.enqueue(ms(0), &pkt(Ecn::ECT1)).unwrap();
        let e = d.enqueue(ms(0), &pkt(Ecn::NOT_ECT)).unwrap_err();
        assert_eq!(e.reason, DropReason::Overflow);
        assert_eq!(d.stats().dropped_packets, 1);
        assert_eq!(d.backlog().packets, 3);
    }
}
