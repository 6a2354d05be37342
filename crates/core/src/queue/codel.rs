//! CoDel (RFC 8289): controlled delay, an AQM that drops at the head of the queue.
//!
//! Each packet's sojourn time is measured as it leaves. While the sojourn time has stayed above
//! `target` (5 ms) for at least `interval` (100 ms), CoDel is in its dropping state: it drops a
//! packet, and the next after interval/√count, count being the drops of this state (the
//! control law, RFC 8289 §4.3), until a packet leaves with a sojourn time below `target` (or
//! less than one MTU stays queued). With `ecn = true`, ECN-capable packets are marked instead of
//! dropped (RFC 8289 §5.6, as Linux's codel does).
//!
//! The code follows RFC 8289 §5's reference pseudocode. Its `dequeue` loop ("while now ≥
//! drop_next: drop, dequeue the next, …") runs here one packet at a time: the queue container
//! (aqm.rs) offers each head packet to [`Codel::on_departure`], which remembers what the loop
//! was doing with the packet before (`Pending`).
//!
//! Departures: MTU (the `maxpacket` of §5.3) is the scenario's packet size; time is integer ns
//! and √count is computed in floating point (RFC 8289 §5.5 allows Newton's method; the result
//! differs by at most a nanosecond).

use serde::{Deserialize, Serialize};

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::params::{positive, ParamError, QueueContext, QueueParams};
use crate::units::{Duration, Limit, Time};

/// CoDel settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelSettings {
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    /// One MTU, bytes: below this backlog CoDel never drops (RFC 8289 §5.3).
    pub maxpacket: u64,
}

/// What the dequeue loop of RFC 8289 §5 was doing when it moved on to the next head packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Pending {
    #[default]
    Nothing,
    /// The previous packet was the drop that entered the dropping state: this one is returned
    /// whatever its sojourn time (§5.7, "r = dodequeue(now); dropping = true; … return r.p").
    AfterFirstDrop,
    /// The previous packet was dropped in the dropping loop: this one decides whether the
    /// state continues, and the next drop is scheduled (§5.7, inside the `while`).
    AfterLoopDrop,
}

/// The CoDel policy (in an [`AqmQueue`], which holds the buffer).
#[derive(Clone, Debug)]
pub struct Codel {
    cfg: CodelSettings,
    /// When the sojourn time will have been above target for an interval (0: not above).
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    pending: Pending,
    /// A packet was offered during the current dequeue.
    offered: bool,
}

impl Codel {
    pub fn new(cfg: CodelSettings) -> Codel {
        Codel {
            cfg,
            first_above_time: None,
            drop_next: Time::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            pending: Pending::Nothing,
            offered: false,
        }
    }

    /// Whether CoDel is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// RFC 8289 §5.5: t + interval / √count.
    fn control_law(&self, t: Time, count: u32) -> Time {
        t + Duration::from_secs_f64(
            self.cfg.interval.as_secs_f64() / f64::from(count.max(1)).sqrt(),
        )
    }

    /// The test of RFC 8289 §5.4's `dodequeue`, for a packet that waited `sojourn` and left
    /// `remaining` bytes behind it.
    fn ok_to_drop(&mut self, now: Time, sojourn: Duration, remaining: u64) -> bool {
        if sojourn < self.cfg.target || remaining <= self.cfg.maxpacket {
            // Went below target: stay below for at least an interval before dropping again.
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                // Just went above target: drop if it stays above for an interval.
                self.first_above_time = Some(now + self.cfg.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// Marks `pkt` instead of dropping it, if ECN is on and the packet understands it.
    fn marks(&self, pkt: &mut Packet) -> bool {
        if self.cfg.ecn && pkt.ecn.is_capable() {
            pkt.ecn.mark();
            true
        } else {
            false
        }
    }

    /// The condition of the dropping loop (§5.7 `while (now >= drop_next && dropping)`), with
    /// `pkt` the packet at hand.
    fn drop_due(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        if now < self.drop_next {
            return Verdict::Pass;
        }
        self.count += 1;
        if self.marks(pkt) {
            // A mark ends this dequeue with the marked packet; the next signal is scheduled.
            self.drop_next = self.control_law(self.drop_next, self.count);
            return Verdict::Marked;
        }
        self.pending = Pending::AfterLoopDrop;
        Verdict::Drop
    }
}

impl Aqm for Codel {
    fn on_arrival(&mut self, _: Time, _: &mut Packet, _: bool, _: &Fifo) -> Verdict {
        Verdict::Pass // CoDel acts at the head only; overflow is the buffer's
    }

    fn before_dequeue(&mut self, _now: Time, _data: &Fifo) {
        self.pending = Pending::Nothing;
        self.offered = false;
    }

    fn on_departure(
        &mut self,
        now: Time,
        pkt: &mut Packet,
        sojourn: Duration,
        data: &Fifo,
    ) -> Verdict {
        self.offered = true;
        let ok = self.ok_to_drop(now, sojourn, data.backlog().bytes);
        match std::mem::take(&mut self.pending) {
            Pending::AfterFirstDrop => return Verdict::Pass,
            Pending::AfterLoopDrop => {
                if !ok {
                    self.dropping = false; // leave the dropping state
                    return Verdict::Pass;
                }
                self.drop_next = self.control_law(self.drop_next, self.count);
                return self.drop_due(now, pkt);
            }
            Pending::Nothing => {}
        }
        if self.dropping {
            if !ok {
                self.dropping = false; // sojourn time below target: leave the dropping state
                return Verdict::Pass;
            }
            return self.drop_due(now, pkt);
        }
        if !ok {
            return Verdict::Pass;
        }
        // Above target for an interval: enter the dropping state (§5.7, the Linux variant of
        // the count's restart: if the state was left recently, resume near its last rate).
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        let recent = (i128::from(now.0) - i128::from(self.drop_next.0))
            < 16 * i128::from(self.cfg.interval.0);
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = self.control_law(now, self.count);
        self.lastcount = self.count;
        if self.marks(pkt) {
            return Verdict::Marked;
        }
        self.pending = Pending::AfterFirstDrop;
        Verdict::Drop
    }

    fn after_dequeue(&mut self, _now: Time, _data: &Fifo) {
        // The queue ran empty: `dodequeue` returned no packet, which resets first_above_time
        // (§5.4) and, inside the dropping state or its loop, leaves it (§5.7).
        let empty_dequeue = match self.pending {
            Pending::Nothing => !self.offered,
            Pending::AfterLoopDrop | Pending::AfterFirstDrop => true,
        };
        if empty_dequeue {
            self.first_above_time = None;
            if self.pending != Pending::AfterFirstDrop {
                self.dropping = false;
            }
        }
        self.pending = Pending::Nothing;
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        out.push(("codel_dropping".into(), f64::from(u8::from(self.dropping))));
        out.push(("codel_count".into(), f64::from(self.count)));
    }
}

/// `queue = { kind = "codel", limit = "1000pkt" }` (RFC 8289; defaults its §4.2–4.4).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelParams {
    /// Buffer size (packets or bytes).
    pub limit: Limit,
    /// Acceptable standing queue delay (RFC 8289 §4.4: 5 ms).
    #[serde(default = "codel_target")]
    pub target: Duration,
    /// The window over which a standing queue is detected: about a worst-case RTT (§4.3:
    /// 100 ms).
    #[serde(default = "codel_interval")]
    pub interval: Duration,
    /// Mark ECN-capable packets instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// Monaco's out-of-band and reverse control packets skip the data queue (as for `droptail`).
    #[serde(default)]
    pub priority: bool,
}

fn codel_target() -> Duration {
    Duration::from_millis(5)
}
fn codel_interval() -> Duration {
    Duration::from_millis(100)
}

/// CoDel's two times (RFC 8289 §4.3–4.4), as `kind` (codel, fq-codel) gives them: both
/// positive, the target shorter than the interval.
pub(crate) fn check_times(
    kind: &str,
    target: Duration,
    interval: Duration,
) -> Result<(), ParamError> {
    positive("target", target.as_secs_f64())?;
    positive("interval", interval.as_secs_f64())?;
    if target >= interval {
        return Err(ParamError::at(
            "target",
            format!("{kind} `target` ({target}) must be shorter than `interval` ({interval})"),
        ));
    }
    Ok(())
}

impl QueueParams for CodelParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        check_times("codel", self.target, self.interval)
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let codel = Codel::new(CodelSettings {
            target: self.target,
            interval: self.interval,
            ecn: self.ecn,
            maxpacket: u64::from(ctx.packet_size),
        });
        Box::new(AqmQueue::with_priority(codel, self.limit, self.priority))
    }

    fn limits(&self) -> Vec<Limit> {
        band_limits(self.limit, self.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, FlowId, PacketKind};
    use crate::queue::QueueState;
    use crate::queue::{DropReason, QueueDiscipline};

    fn codel(ecn: bool) -> AqmQueue<Codel> {
        AqmQueue::new(
            Codel::new(CodelSettings {
                target: Duration::from_millis(5),
                interval: Duration::from_millis(100),
                ecn,
                maxpacket: 1000,
            }),
            Limit::Unlimited,
        )
    }

    fn ms(m: u64) -> Time {
        Time::ZERO + Duration::from_millis(m)
    }

    /// Packets arrive every `gap_us` µs and leave every 1 ms (a 1000 B packet at 8 Mb/s) for
    /// `secs`: returns the times of the drops (or marks) and the packets sent.
    fn overload(q: &mut AqmQueue<Codel>, gap_us: u64, secs: u64, ect: bool) -> (Vec<Time>, u64) {
        let mut signals = Vec::new();
        let mut sent = 0;
        let mut next_arrival = Time::ZERO;
        let mut dropped = Vec::new();
        for t in 0..secs * 1000 {
            let now = ms(t);
            while next_arrival <= now {
                let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
                if ect {
                    p.ecn = Ecn::ECT;
                }
                q.enqueue(next_arrival, &p).unwrap();
                next_arrival += Duration(gap_us * 1000);
            }
            dropped.clear();
            if let Some(d) = q.dequeue(now, &mut dropped) {
                sent += 1;
                if d.marked {
                    signals.push(now);
                }
            }
            assert!(dropped.iter().all(|d| d.reason == DropReason::HeadDrop));
            signals.extend(dropped.iter().map(|_| now));
        }
        (signals, sent)
    }

    #[test]
    fn a_queue_below_target_is_left_alone() {
        // Arrivals at 90% of the service rate: the queue never builds.
        let mut q = codel(false);
        let (drops, sent) = overload(&mut q, 1111, 5, false);
        assert!(drops.is_empty());
        assert!(sent > 4400);
    }

    #[test]
    fn a_standing_queue_is_dropped_at_the_control_law_rate() {
        // Arrivals at twice the service rate: the queue grows by one packet per ms, the sojourn
        // time passes 5 ms at about 5 ms and stays above, so the first drop comes an interval
        // later (≈105 ms), the next interval/√count after each other: 100 ms (count 1), then
        // 100/√2 and 100/√3 ms (RFC 8289 §5.5).
        let mut q = codel(false);
        let (drops, _) = overload(&mut q, 500, 1, false);
        assert!(drops.len() > 5, "{drops:?}");
        let first = drops[0];
        assert!(
            (ms(100)..=ms(110)).contains(&first),
            "first drop at {first:?}"
        );
        let gap = |i: usize| (drops[i + 1] - drops[i]).as_secs_f64() * 1e3;
        assert!((100.0..=101.0).contains(&gap(0)), "{} ms", gap(0));
        assert!((70.7..=71.7).contains(&gap(1)), "{} ms: 100/√2", gap(1));
        assert!((57.7..=58.7).contains(&gap(2)), "{} ms: 100/√3", gap(2));
        assert!(q.aqm().dropping());
        let s = q.stats();
        assert_eq!(s.dropped_packets, drops.len() as u64);
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let mut q = codel(true);
        let (marks, _) = overload(&mut q, 500, 1, true);
        assert!(marks.len() > 5);
        assert_eq!(q.stats().dropped_packets, 0);
        assert_eq!(q.stats().marked_packets, marks.len() as u64);
        // Not ECN-capable: dropped even with `ecn` on.
        let mut q = codel(true);
        let (drops, _) = overload(&mut q, 500, 1, false);
        assert_eq!(q.stats().dropped_packets, drops.len() as u64);
    }

    #[test]
    fn draining_below_target_leaves_the_dropping_state() {
        let mut q = codel(false);
        overload(&mut q, 500, 1, false);
        assert!(q.aqm().dropping());
        // No more arrivals: the queue drains, sojourn times fall below target at the end.
        let mut t = 1000;
        let mut dropped = Vec::new();
        while q.dequeue(ms(t), &mut dropped).is_some() {
            t += 1;
        }
        assert!(!q.aqm().dropping());
        assert_eq!(q.backlog().packets, 0);
    }

    #[test]
    fn parameters_are_checked() {
        let p: CodelParams = toml::from_str(r#"limit = "100pkt""#).unwrap();
        assert_eq!(p.target, Duration::from_millis(5));
        assert!(p.validate().is_ok());
        let bad: CodelParams = toml::from_str("limit = \"100pkt\"\ntarget = \"200ms\"").unwrap();
        assert!(bad.validate().unwrap_err().to_string().contains("interval"));
    }
}
