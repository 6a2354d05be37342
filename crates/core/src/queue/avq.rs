//! AVQ (Kunniyur & Srikant) and AVD / AVQ+VD (000 §IV-D, 003 §IV-A).
//!
//! A virtual queue VQ of size B (the physical buffer, in bytes) is served at a virtual capacity
//! C̃ that adapts so that the link runs at a target utilisation γ. On each arrival of b bytes at
//! time t (the previous at s), as SPEC §4 states the algorithm:
//!   VQ ← max(VQ − C̃·(t − s), 0);
//!   if VQ + b > B the packet is marked (ECN) or dropped, else VQ ← VQ + b;
//!   C̃ ← max(min(C̃ + α·γ·C·(t − s), C) − α·b, 0).
//! In `delay` mode (AVD) nothing is marked or dropped: the virtual queueing delay VQ/C̃ is
//! added to the virtual-delay field of every Monaco in-band control packet, which Monaco's
//! receiver adds to its accumulation estimate (â = â_DropTail + x̄·Σ t_AVD). The physical queue
//! is a tail-drop FIFO. Defaults γ = 0.98, α = 0.15.
//!
//! Departure, measured on acc-fig8: in `delay` mode the virtual queue has no bound B (000 §IV-D
//! gives none; in AVQ, B only decides when to mark). Bounded by the physical buffer, the virtual
//! delay saturates at B/C̃; when the loops' targets add up to more than B (acc-fig8's 20 loops
//! of 3 KB at a 55-packet buffer) no loop sees its target, all keep growing, and the physical
//! buffer overflows: 3 851 drops and shares of 1.73 / 1.10 / 1.02 Mb/s for 1.5 each. Unbounded,
//! the virtual queue grows with the total accumulation as a large DropTail queue would, while
//! the physical queue stays short: 109 drops, shares 1.42 / 1.42 / 1.42.

use super::aqm::band_limits;
use super::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use crate::packet::{Packet, PacketKind, Payload};
use crate::units::{Duration, Limit, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::params::{positive, ParamError, QueueContext, QueueParams};

/// What AVQ does when its virtual queue overflows (`mode = "mark" | "drop" | "delay"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AvqMode {
    Mark,
    Drop,
    /// AVD: add the virtual queueing delay to Monaco IB packets instead.
    Delay,
}

/// What an AVD link adds to the virtual-delay field of a Monaco IB packet.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum AvdStamp {
    /// The virtual delay less the physical queueing delay the IB is about to spend at the link
    /// (see [`Avq::delay_to_stamp`]).
    #[default]
    Excess,
    /// The whole virtual delay VQ/C̃, as 000 §IV-D writes it.
    Virtual,
}

/// AVQ settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AvqSettings {
    /// Virtual buffer B, bytes.
    pub virtual_buffer: f64,
    pub target_utilization: f64,
    pub alpha: f64,
    pub mode: AvqMode,
    /// The queue is priority-capable (its container has the high band, aqm.rs): Monaco's OB
    /// and reverse control packets skip the data queue, so at an AVD router the physical queue
    /// is also visible to Monaco (ftt_q) besides the virtual delay.
    pub priority: bool,
    pub stamp: AvdStamp,
}

/// The AVQ policy (in an [`AqmQueue`], which holds the buffer).
pub struct Avq {
    cfg: AvqSettings,
    /// Link capacity and virtual capacity, bytes per second.
    capacity: f64,
    virtual_capacity: f64,
    vq: f64,
    last_arrival: Option<Time>,
}

/// The largest virtual delay reported when the virtual capacity has collapsed to zero.
const MAX_VIRTUAL_DELAY: f64 = 1.0;

impl Avq {
    pub fn new(cfg: AvqSettings, rate: Rate) -> Avq {
        let capacity = rate.as_f64() / 8.0;
        Avq {
            capacity,
            virtual_capacity: cfg.target_utilization * capacity,
            vq: 0.0,
            last_arrival: None,
            cfg,
        }
    }

    pub fn virtual_capacity_bps(&self) -> f64 {
        self.virtual_capacity * 8.0
    }

    /// The virtual queueing delay VQ/C̃, seconds.
    pub fn virtual_delay(&self) -> f64 {
        if self.virtual_capacity > 0.0 {
            (self.vq / self.virtual_capacity).min(MAX_VIRTUAL_DELAY)
        } else if self.vq > 0.0 {
            MAX_VIRTUAL_DELAY
        } else {
            0.0
        }
    }

    /// What an IB arriving now gets added to its virtual-delay field. With [`AvdStamp::Excess`]:
    /// the virtual queueing delay less the physical queueing delay the IB is about to spend
    /// here. 000 §IV-D's estimate â = â_DropTail + x̄·Σ t_AVD counts an AVD link through t_AVD
    /// alone; but when the link is priority-capable the OB skips its physical queue while the
    /// IB waits in it, so that wait is in ftt_q (â_DropTail) as well. Stamping the difference
    /// counts the link once, as max(virtual, physical) delay: the virtual delay whenever AVQ
    /// keeps the physical queue below it (its purpose), the physical queue in a transient that
    /// outgrows it. Without the high band the OB waits like the IB and the full virtual delay
    /// is stamped. Counting the physical queue twice (`Virtual`) doubles the loop gain of a
    /// loop that dominates the link: on qos-fig5 with w = 30 it oscillated (queue 0–200
    /// packets every ~0.4 s), held the link at 0.88 and pinned C̃ at C.
    fn delay_to_stamp(&self, data: &Fifo) -> f64 {
        let counts_physical = self.cfg.priority && self.cfg.stamp == AvdStamp::Excess;
        let physical = if counts_physical && self.capacity > 0.0 {
            data.backlog().bytes as f64 / self.capacity
        } else {
            0.0
        };
        (self.virtual_delay() - physical).max(0.0)
    }

    /// Runs the virtual queue for one arrival; true when it overflows.
    fn arrive(&mut self, now: Time, bytes: f64) -> bool {
        let dt = self.last_arrival.map_or(0.0, |s| (now - s).as_secs_f64());
        self.last_arrival = Some(now);
        self.vq = (self.vq - self.virtual_capacity * dt).max(0.0);
        let overflow = self.vq + bytes > self.cfg.virtual_buffer;
        if !overflow || self.cfg.mode == AvqMode::Delay {
            self.vq += bytes; // AVD: unbounded (see the module note)
        }
        let a = self.cfg.alpha;
        let grown = (self.virtual_capacity + a * self.cfg.target_utilization * self.capacity * dt)
            .min(self.capacity);
        self.virtual_capacity = (grown - a * bytes).max(0.0);
        overflow
    }
}

impl Aqm for Avq {
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, _fits: bool, data: &Fifo) -> Verdict {
        let overflow = self.arrive(now, pkt.size as f64);
        match self.cfg.mode {
            AvqMode::Delay if pkt.kind == PacketKind::ControlIb => {
                if let Payload::InBand(ib) = &mut pkt.payload {
                    ib.virtual_delay += Duration::from_secs_f64(self.delay_to_stamp(data));
                }
                Verdict::Marked
            }
            AvqMode::Delay => Verdict::Pass,
            AvqMode::Mark if overflow && pkt.ecn.is_capable() && !pkt.ecn.is_marked() => {
                pkt.ecn.mark();
                Verdict::Marked
            }
            AvqMode::Mark if overflow && pkt.ecn.is_capable() => Verdict::Pass,
            AvqMode::Mark | AvqMode::Drop if overflow => Verdict::Drop,
            _ => Verdict::Pass,
        }
    }

    fn set_rate(&mut self, rate: Rate) {
        self.capacity = rate.as_f64() / 8.0;
    }

    fn state(&self, out: &mut Vec<(String, f64)>) {
        out.push((
            "avq_virtual_capacity_bps".into(),
            self.virtual_capacity_bps(),
        ));
        out.push(("avq_virtual_queue_bytes".into(), self.vq));
        if self.cfg.mode == AvqMode::Delay {
            out.push(("avd_virtual_delay_s".into(), self.virtual_delay()));
        }
    }
}

/// `avq` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvqParams {
    /// Buffer size of the physical queue (packets or bytes).
    pub limit: Limit,
    /// γ: the utilisation AVQ steers the link to (Kunniyur–Srikant).
    #[serde(default = "avq_gamma")]
    pub target_utilization: f64,
    /// α: the virtual capacity's adaptation gain, C̃' = α·(γ·C − λ).
    #[serde(default = "avq_alpha")]
    pub alpha: f64,
    /// What AVQ does when its virtual queue overflows: mark (ECN), drop, or delay — AVD / AVQ+VD
    /// for Monaco (000 §IV-D), which adds the virtual delay VQ/C̃ to IB control packets.
    #[serde(default = "avq_mode")]
    pub mode: AvqMode,
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

impl AvqParams {
    /// AVQ with buffer `limit` and every other parameter at its default, as a file that gives
    /// only `limit` gets.
    pub fn new(limit: Limit) -> AvqParams {
        AvqParams {
            limit,
            target_utilization: avq_gamma(),
            alpha: avq_alpha(),
            mode: avq_mode(),
            priority: false,
            avd_stamp: AvdStamp::default(),
        }
    }
}

fn avq_gamma() -> f64 {
    0.98
}
fn avq_alpha() -> f64 {
    0.15
}
fn avq_mode() -> AvqMode {
    AvqMode::Mark
}

impl QueueParams for AvqParams {
    fn marks_ecn(&self) -> bool {
        self.mode == AvqMode::Mark
    }

    fn validate(&self) -> Result<(), ParamError> {
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return Err(ParamError::at(
                "target_utilization",
                format!(
                    "avq `target_utilization` must be in (0, 1], not {}",
                    self.target_utilization
                ),
            ));
        }
        positive("alpha", self.alpha)
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let p = self;
        let virtual_buffer = match p.limit {
            Limit::Packets(n) => (n * ctx.packet_size as u64) as f64,
            Limit::Bytes(n) => n as f64,
            Limit::Unlimited => f64::INFINITY,
        };
        let cfg = AvqSettings {
            virtual_buffer,
            target_utilization: p.target_utilization,
            alpha: p.alpha,
            priority: p.priority,
            stamp: p.avd_stamp,
            mode: p.mode,
        };
        Box::new(AqmQueue::with_priority(
            Avq::new(cfg, ctx.rate),
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
    use crate::queue::QueueState;

    /// A Monaco in-band control packet, with nothing stamped yet.
    fn in_band() -> Packet {
        let mut ib = Packet::new(FlowId(0), PacketKind::ControlIb, 40);
        ib.payload = Payload::InBand(Default::default());
        ib
    }

    #[test]
    fn new_gives_what_a_file_with_only_the_limit_gives() {
        let p: AvqParams = toml::from_str(r#"limit = "90pkt""#).unwrap();
        assert_eq!(p, AvqParams::new(Limit::Packets(90)));
    }
    use crate::packet::{Ecn, FlowId};

    fn avq_with(mode: AvqMode, priority: bool) -> AqmQueue<Avq> {
        let cfg = AvqSettings {
            virtual_buffer: 10_000.0,
            target_utilization: 0.98,
            alpha: 0.15,
            mode,
            priority,
            stamp: AvdStamp::Excess,
        };
        let limit = Limit::Packets(100);
        AqmQueue::with_priority(Avq::new(cfg, Rate::from_mbps(8)), limit, priority)
        // 1 MB/s
    }

    fn avq(mode: AvqMode) -> AqmQueue<Avq> {
        avq_with(mode, false)
    }

    fn pop(q: &mut AqmQueue<Avq>, now: Time) -> Option<Packet> {
        q.dequeue(now, &mut Vec::new()).map(|d| d.packet)
    }

    #[test]
    fn a_priority_capable_avq_lets_control_packets_overtake_data() {
        let mut a = avq_with(AvqMode::Delay, true);
        for kind in [
            PacketKind::Data,
            PacketKind::ControlIb,
            PacketKind::ControlOb,
        ] {
            a.enqueue(Time::ZERO, &Packet::new(FlowId(0), kind, 40))
                .unwrap();
        }
        assert_eq!(a.backlog().packets, 3);
        let order: Vec<_> = std::iter::from_fn(|| pop(&mut a, Time::ZERO))
            .map(|p| p.kind)
            .collect();
        assert_eq!(
            order,
            [
                PacketKind::ControlOb,
                PacketKind::Data,
                PacketKind::ControlIb
            ]
        );
    }

    #[test]
    fn virtual_queue_and_capacity_follow_the_update_rules() {
        let mut q = avq(AvqMode::Mark);
        let a = q.aqm_mut();
        assert_eq!(a.virtual_capacity, 980_000.0);
        a.arrive(Time::ZERO, 1000.0);
        // VQ = 1000; C̃ = min(980000 + 0, 1e6) − 150 = 979 850.
        assert_eq!(a.vq, 1000.0);
        assert_eq!(a.virtual_capacity, 979_850.0);
        // 1 ms later: VQ drains 979.85 B; C̃ grows by 0.15·0.98·1e6·0.001 = 147, capped, − 150.
        a.arrive(Time(1_000_000), 1000.0);
        assert!((a.vq - (1000.0 - 979.85 + 1000.0)).abs() < 1e-9, "{}", a.vq);
        assert!((a.virtual_capacity - (979_850.0 + 147.0 - 150.0)).abs() < 1e-9);
    }

    #[test]
    fn overflow_marks_ect_and_drops_the_rest() {
        let mut a = avq(AvqMode::Mark);
        let mut ect = Packet::new(FlowId(0), PacketKind::Data, 1000);
        ect.ecn = Ecn::ECT;
        // Eleven back-to-back 1000 B arrivals overflow the 10 000 B virtual buffer.
        for _ in 0..10 {
            a.enqueue(Time::ZERO, &ect).unwrap();
        }
        a.enqueue(Time::ZERO, &ect).unwrap();
        assert_eq!(a.stats().marked_packets, 1);
        let plain = Packet::new(FlowId(0), PacketKind::Data, 1000);
        assert!(a.enqueue(Time::ZERO, &plain).is_err());
    }

    #[test]
    fn the_avd_virtual_queue_is_not_bounded_by_the_buffer() {
        // Twenty back-to-back 1000 B arrivals: AVQ's virtual queue stops at its 10 000 B buffer,
        // AVD's keeps all 20 000 B (and marks and drops nothing).
        let mut mark = avq(AvqMode::Mark);
        let mut delay = avq(AvqMode::Delay);
        for _ in 0..20 {
            let _ = mark.enqueue(Time::ZERO, &Packet::new(FlowId(0), PacketKind::Data, 1000));
            delay
                .enqueue(Time::ZERO, &Packet::new(FlowId(0), PacketKind::Data, 1000))
                .unwrap();
        }
        assert_eq!(mark.aqm().vq, 10_000.0);
        assert_eq!(delay.aqm().vq, 20_000.0);
        assert_eq!(delay.stats().marked_packets, 0);
    }

    /// The IB stamped after `data` back-to-back 1000 B packets at a priority-capable AVD link.
    fn stamp_behind(data: usize, stamp: AvdStamp, virtual_capacity: f64) -> f64 {
        let mut a = avq_with(AvqMode::Delay, true);
        a.aqm_mut().cfg.stamp = stamp;
        a.aqm_mut().cfg.virtual_buffer = 1e9;
        for _ in 0..data {
            a.enqueue(Time::ZERO, &Packet::new(FlowId(0), PacketKind::Data, 1000))
                .unwrap();
        }
        // Pin C̃ (arrivals at one instant do not let it grow back) to compare with the formula.
        a.aqm_mut().virtual_capacity = virtual_capacity;
        a.aqm_mut().cfg.alpha = 0.0;
        a.enqueue(Time::ZERO, &in_band()).unwrap();
        let ib = std::iter::from_fn(|| pop(&mut a, Time::ZERO))
            .find(|p| p.kind == PacketKind::ControlIb)
            .unwrap();
        ib.virtual_delay().as_secs_f64()
    }

    #[test]
    fn a_priority_capable_avd_link_counts_its_physical_queue_once() {
        // C = 1 MB/s. Five packets queued: physical wait 5 ms. VQ = 5040 B.
        // C̃ = 0.5 MB/s: virtual delay 10.08 ms, of which 5 ms the IB spends queueing anyway.
        let excess = stamp_behind(5, AvdStamp::Excess, 500_000.0);
        assert!((excess - (0.010_08 - 0.005)).abs() < 1e-6, "{excess}");
        // The paper's stamp adds the whole virtual delay.
        let literal = stamp_behind(5, AvdStamp::Virtual, 500_000.0);
        assert!((literal - 0.010_08).abs() < 1e-6, "{literal}");
        // C̃ = C: the virtual queue is the physical one; only the IB's own 40 B are left.
        let same = stamp_behind(5, AvdStamp::Excess, 1_000_000.0);
        assert!((same - 0.000_04).abs() < 1e-6, "{same}");
    }

    #[test]
    fn delay_mode_stamps_in_band_control_packets() {
        let mut a = avq(AvqMode::Delay);
        for _ in 0..5 {
            a.enqueue(Time::ZERO, &Packet::new(FlowId(0), PacketKind::Data, 1000))
                .unwrap();
        }
        let ib = in_band();
        a.enqueue(Time::ZERO, &ib).unwrap();
        let stamped = std::iter::from_fn(|| pop(&mut a, Time::ZERO))
            .find(|p| p.kind == PacketKind::ControlIb)
            .unwrap();
        // VQ = 5040 B over C̃ ≈ 979 244 B/s ≈ 5.15 ms.
        let expected = 5040.0 / a.aqm().virtual_capacity;
        assert!((stamped.virtual_delay().as_secs_f64() - expected).abs() < 1e-6);
        assert_eq!(a.stats().dropped_packets, 0);
    }

    /// Constant-rate arrivals for `secs` at `load` × capacity: (final C̃ in B/s, marked fraction
    /// over the last second).
    fn open_loop(load: f64, secs: f64) -> (f64, f64) {
        let mut a = avq(AvqMode::Mark);
        let gap = Duration((1000.0 / (load * 1e6) * 1e9) as u64);
        let n = (secs * load * 1000.0) as usize;
        let last = (load * 1000.0) as usize;
        let mut t = Time::ZERO;
        let mut marked = 0;
        for i in 0..n {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
            p.ecn = Ecn::ECT;
            a.enqueue(t, &p).unwrap();
            if pop(&mut a, t).unwrap().ecn.is_marked() && i >= n - last {
                marked += 1;
            }
            t += gap;
        }
        (a.aqm().virtual_capacity, marked as f64 / last as f64)
    }

    #[test]
    fn virtual_capacity_drifts_as_the_fluid_law_says() {
        // dC̃/dt = α·(γ·C − λ): at λ = 1.2·C it falls by 0.15·0.22 MB/s per second, from
        // 0.98 MB/s to 0.947 after one second, and then everything is marked once C̃ < λ keeps
        // the virtual queue full.
        let (c, _) = open_loop(1.2, 1.0);
        assert!((c - (980_000.0 - 0.15 * 220_000.0)).abs() < 2_000.0, "{c}");
        let (_, marked) = open_loop(1.2, 30.0);
        assert!(marked > 0.99, "{marked}");
        // Below the target (λ = 0.8·C) C̃ climbs to C and nothing is marked.
        let (c, marked) = open_loop(0.8, 30.0);
        assert!(
            (c - 1_000_000.0).abs() <= 150.0 && marked == 0.0,
            "{c} {marked}"
        ); // capped at C, less α·b
    }
}
