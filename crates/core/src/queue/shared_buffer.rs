//! A shared-buffer switch: the output queues of one switch draw on one pool of memory, each
//! limited by a dynamic threshold (Choudhury & Hahne 1998, [CH98] in docs/references.md), as
//! datacenter switch chips do.
//!
//! The pool holds `size` bytes, `B`; `Q(t)` is what all the switch's output queues hold
//! together. A queue may grow while it stays within
//!
//! ```text
//! T(t) = α · (B − Q(t))                                          CH98 eq. (1)
//! ```
//!
//! so a queue alone may take α/(1 + α) of the pool, and n queues congested together settle at
//! α·B/(1 + α·n) each, leaving B/(1 + α·n) free for a queue that becomes active (CH98 §III:
//! the reserve that makes the scheme fair to newcomers without static partitions).
//!
//! Departures from the paper, each for packets of unequal size:
//! - the paper's cells are bytes here: a packet of `s` bytes arriving at a queue holding `q`
//!   is admitted if `q + s ≤ T(t)` and `Q(t) + s ≤ B` (the paper blocks a cell when `q ≥ T`);
//! - T(t) is evaluated at the packet's arrival, from the occupancy then (the paper's
//!   continuous-time threshold, sampled at the only instants it decides anything).
//!
//! The discipline of each port (tail drop, step ECN, RED, …) still applies after the pool
//! admits a packet, with its own limit: set the ports' `limit = "inf"` to let the dynamic
//! threshold alone bound them, as the paper does.

use serde::{Deserialize, Serialize};

use super::{
    Backlog, Dequeued, DropReason, Dropped, Enqueued, QueueDiscipline, QueueState, QueueStats,
};
use crate::packet::Packet;
use crate::params::{in_range, ParamError};
use crate::units::{Bytes, Time};

/// The smallest and largest α: 1/1024 … 1024 (switch chips offer powers of two from 1/128 to 8;
/// CH98 studies 1/4 … 16).
pub const ALPHA_RANGE: std::ops::RangeInclusive<f64> = (1.0 / 1024.0)..=1024.0;
/// The largest pool: 1 GiB (today's largest switch buffers are ~100 MB).
pub const MAX_SIZE: u64 = 1 << 30;

/// `shared_buffer = { size = "9MB", alpha = 1 }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharedBufferParams {
    /// The pool, B: every output queue of the switch together holds at most this.
    pub size: Bytes,
    /// The dynamic threshold's factor α (CH98 eq. (1)); default 1.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
}

fn default_alpha() -> f64 {
    SharedBufferParams::DEFAULT_ALPHA
}

impl SharedBufferParams {
    /// α = 1: a queue alone takes half the pool (CH98's usual choice).
    pub const DEFAULT_ALPHA: f64 = 1.0;

    /// Checks the pool's size and α; `packet_size` is the scenario's data packet size, which
    /// the pool must hold.
    pub fn validate(&self, packet_size: u64) -> Result<(), ParamError> {
        in_range("alpha", self.alpha, ALPHA_RANGE)?;
        if self.size.0 > MAX_SIZE {
            return Err(ParamError::at(
                "size",
                format!(
                    "{} B is more than the largest pool, {MAX_SIZE} B",
                    self.size.0
                ),
            ));
        }
        // A queue alone may take α/(1 + α) of the pool: it must fit one packet.
        let alone = self.alpha / (1.0 + self.alpha) * self.size.0 as f64;
        if alone < packet_size as f64 {
            return Err(ParamError::at(
                "size",
                format!(
                    "{} B with alpha = {} lets one queue hold {alone:.0} B, less than one {packet_size} B packet",
                    self.size.0, self.alpha
                ),
            ));
        }
        Ok(())
    }
}

/// One switch's pool.
#[derive(Clone, Debug)]
pub struct SharedBuffer {
    size: u64,
    alpha: f64,
    /// Q(t): what the switch's output queues hold.
    used: u64,
    /// The most `used` has been.
    peak: u64,
}

impl SharedBuffer {
    pub fn new(p: &SharedBufferParams) -> SharedBuffer {
        SharedBuffer {
            size: p.size.0,
            alpha: p.alpha,
            used: 0,
            peak: 0,
        }
    }

    /// T(t) in bytes (CH98 eq. (1)).
    pub fn threshold(&self) -> f64 {
        self.alpha * (self.size - self.used) as f64
    }

    /// Whether a packet of `size` bytes may join a queue holding `queue` bytes.
    #[inline]
    pub fn admits(&self, queue: u64, size: u64) -> bool {
        self.used + size <= self.size && (queue + size) as f64 <= self.threshold()
    }

    /// A queue of the switch went from `before` to `after` bytes.
    #[inline]
    pub fn changed(&mut self, before: u64, after: u64) {
        self.used = self.used + after - before;
        self.peak = self.peak.max(self.used);
    }

    /// Q(t).
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The most the pool has held.
    pub fn peak(&self) -> u64 {
        self.peak
    }
}

/// An output queue of a shared-buffer switch: its discipline, behind the pool's admission. The
/// pool is passed in by the driver, which keeps the pools of all switches.
pub struct SharedPort {
    queue: Box<dyn QueueDiscipline>,
    /// Packets the pool refused (counted as this queue's overflow drops).
    refused: u64,
}

impl SharedPort {
    pub fn new(queue: Box<dyn QueueDiscipline>) -> SharedPort {
        SharedPort { queue, refused: 0 }
    }

    /// Offers `pkt` to the port: refused as an overflow if the pool's threshold does not admit
    /// it, else offered to the discipline.
    pub fn enqueue(
        &mut self,
        pool: &mut SharedBuffer,
        now: Time,
        pkt: &Packet,
    ) -> Result<Enqueued, Dropped> {
        let before = self.queue.backlog().bytes;
        if !pool.admits(before, u64::from(pkt.size)) {
            self.refused += 1;
            return Err(Dropped {
                packet: *pkt,
                reason: DropReason::Overflow,
            });
        }
        let r = self.queue.enqueue(now, pkt);
        pool.changed(before, self.queue.backlog().bytes);
        r
    }

    /// The next packet to transmit (see [`QueueDiscipline::dequeue`]); its bytes, and those of
    /// any dropped at the head, return to the pool.
    pub fn dequeue(
        &mut self,
        pool: &mut SharedBuffer,
        now: Time,
        dropped: &mut Vec<Dropped>,
    ) -> Option<Dequeued> {
        let before = self.queue.backlog().bytes;
        let d = self.queue.dequeue(now, dropped);
        pool.changed(before, self.queue.backlog().bytes);
        d
    }

    /// The packets an arrival pushed out (see [`QueueDiscipline::pushed_out`]), their bytes
    /// returned to the pool.
    pub fn pushed_out(&mut self, pool: &mut SharedBuffer, out: &mut Vec<Dropped>) {
        let before = self.queue.backlog().bytes;
        self.queue.pushed_out(out);
        pool.changed(before, self.queue.backlog().bytes);
    }

    /// The discipline behind the pool.
    pub fn discipline(&self) -> &dyn QueueDiscipline {
        &*self.queue
    }

    /// The discipline behind the pool, to change (its rate).
    pub fn discipline_mut(&mut self) -> &mut dyn QueueDiscipline {
        &mut *self.queue
    }
}

impl QueueState for SharedPort {
    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }

    fn stats(&self) -> QueueStats {
        let mut s = self.queue.stats();
        s.dropped_packets += self.refused;
        s
    }

    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        self.queue.aqm_state(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::queue::droptail::DropTail;
    use crate::units::Limit;
    use crate::FlowId;
    use rand::RngExt;

    fn params(size: u64, alpha: f64) -> SharedBufferParams {
        SharedBufferParams {
            size: Bytes(size),
            alpha,
        }
    }

    fn port() -> SharedPort {
        SharedPort::new(Box::new(DropTail::droptail(Limit::Unlimited)))
    }

    fn pkt(size: u32) -> Packet {
        Packet::new(FlowId(0), PacketKind::Data, size)
    }

    /// Fills `ports[i]` with packets of 100 B until the pool refuses one, round-robin over
    /// `active`, and returns what each holds.
    fn fill(pool: &mut SharedBuffer, ports: &mut [SharedPort], active: &[usize]) -> Vec<u64> {
        let mut open: Vec<usize> = active.to_vec();
        while !open.is_empty() {
            open.retain(|&i| ports[i].enqueue(pool, Time::ZERO, &pkt(100)).is_ok());
        }
        ports.iter().map(|p| p.backlog().bytes).collect()
    }

    /// CH98 §III: n queues congested together settle at α·B/(1 + α·n) each (to within a
    /// packet), and the pool keeps B/(1 + α·n) free.
    #[test]
    fn congested_queues_settle_at_the_papers_steady_state() {
        for (alpha, n) in [(1.0, 1), (1.0, 3), (2.0, 2), (0.5, 4), (8.0, 1)] {
            let b = 100_000u64;
            let mut pool = SharedBuffer::new(&params(b, alpha));
            let mut ports: Vec<SharedPort> = (0..6).map(|_| port()).collect();
            let held = fill(&mut pool, &mut ports, &(0..n).collect::<Vec<_>>());
            let each = alpha * b as f64 / (1.0 + alpha * n as f64);
            for &q in &held[..n] {
                assert!(
                    (q as f64 - each).abs() <= 100.0 * (1.0 + alpha),
                    "alpha {alpha}, n {n}: {q} B vs {each:.0} B"
                );
            }
            assert!(held[n..].iter().all(|&q| q == 0));
            assert_eq!(pool.used(), held.iter().sum::<u64>());
            let free = b as f64 / (1.0 + alpha * n as f64);
            assert!((b - pool.used()) as f64 >= free - 100.0 * (1.0 + alpha) * n as f64);
        }
    }

    /// The reserve lets a newly active queue in while the others are at their threshold.
    #[test]
    fn a_newcomer_is_admitted_while_others_sit_at_their_threshold() {
        let mut pool = SharedBuffer::new(&params(100_000, 1.0));
        let mut ports: Vec<SharedPort> = (0..3).map(|_| port()).collect();
        fill(&mut pool, &mut ports, &[0, 1]);
        assert!(ports[0].enqueue(&mut pool, Time::ZERO, &pkt(100)).is_err());
        assert!(ports[2].enqueue(&mut pool, Time::ZERO, &pkt(100)).is_ok());
        // One refusal ended the filling, one just now.
        assert_eq!(ports[0].stats().dropped_packets, 2);
    }

    /// Bytes return to the pool as packets leave, and the pool never holds more than B.
    #[test]
    fn dequeues_return_bytes_and_the_pool_stays_within_its_size() {
        let mut pool = SharedBuffer::new(&params(10_000, 1024.0));
        let mut ports: Vec<SharedPort> = (0..4).map(|_| port()).collect();
        let mut drops = Vec::new();
        let mut rng = crate::rng::stream(7, "shared-buffer-test");
        for step in 0..20_000u64 {
            let i = rng.random_range(0..4usize);
            if rng.random::<f64>() < 0.6 {
                let _ = ports[i].enqueue(&mut pool, Time(step), &pkt(rng.random_range(40..1500)));
            } else {
                ports[i].dequeue(&mut pool, Time(step), &mut drops);
            }
            let sum: u64 = ports.iter().map(|p| p.backlog().bytes).sum();
            assert_eq!(pool.used(), sum);
            assert!(pool.used() <= 10_000);
        }
        assert!(
            pool.peak() > 8_000,
            "the test filled the pool: {}",
            pool.peak()
        );
    }

    #[test]
    fn parameters_are_checked() {
        assert!(params(100_000, 1.0).validate(1000).is_ok());
        let e = params(100_000, 0.0).validate(1000).unwrap_err();
        assert_eq!(e.key, "alpha");
        let e = params(1500, 1.0).validate(1000).unwrap_err();
        assert_eq!(e.key, "size");
        assert!(e.message.contains("750 B"), "{}", e.message);
        assert!(params(MAX_SIZE + 1, 1.0).validate(1000).is_err());
    }
}
