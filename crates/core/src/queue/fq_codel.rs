//! FQ-CoDel (RFC 8290): flow queueing with CoDel on each queue.
//!
//! Arriving packets are hashed by flow into one of `flows` queues (RFC 8290 §4.1.1), each a
//! FIFO run by its own CoDel (queue/codel.rs, RFC 8289). A deficit round robin with a byte
//! `quantum` serves them, new flows (queues that just became active) before old ones (§4.2),
//! so that a sparse flow's packets wait for nobody's backlog. When the shared buffer is over
//! its `limit`, the packet at the head of the queue with the most bytes is dropped (§4.1,
//! "pushed out"), whichever flow arrived.
//!
//! Departures: no hash of the 5-tuple: a scenario flow's index modulo `flows` picks its queue
//! (with a multiplier for a web flow's connections), so flows share a queue only when there
//! are more of them than queues; packets are pushed out one at a
//! time until the buffer is within its limit (Linux drops a batch of up to 64, half the fat
//! queue's backlog); the memory limit of
//! Linux (`memory_limit`) is not modelled. Monaco's control packets are hashed like any other
//! packet (no priority band).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::codel::{Codel, CodelSettings};
use super::{
    AqmQueue, Backlog, Dequeued, DropReason, Dropped, Enqueued, QueueDiscipline, QueueState,
    QueueStats,
};
use crate::packet::Packet;
use crate::params::{ParamError, QueueContext, QueueParams};
use crate::units::{Duration, Limit, Time};

/// Which list a queue is on (§4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Idle,
    New,
    Old,
}

/// One flow queue: a FIFO with its CoDel, its DRR deficit and its list.
struct FlowQueue {
    q: AqmQueue<Codel>,
    deficit: i64,
    list: List,
}

/// The FQ-CoDel discipline.
pub struct FqCodel {
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit: Limit,
    backlog: Backlog,
    /// Packets pushed out by arrivals, not yet handed to the driver.
    pushed_out: Vec<Dropped>,
}

impl FqCodel {
    pub fn new(flows: usize, quantum: u64, limit: Limit, codel: CodelSettings) -> FqCodel {
        FqCodel {
            queues: (0..flows.max(1))
                .map(|_| FlowQueue {
                    q: AqmQueue::new(Codel::new(codel.clone()), Limit::Unlimited),
                    deficit: 0,
                    list: List::Idle,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: quantum as i64,
            limit,
            backlog: Backlog::default(),
            pushed_out: Vec::new(),
        }
    }

    /// §4.1.1: the queue a packet belongs to.
    fn index(&self, pkt: &Packet) -> usize {
        // Flow i of a scenario gets queue i mod `flows`; a web flow's connections spread.
        let key = pkt.flow.0 as u64 + (pkt.conn as u64).wrapping_mul(2_654_435_761);
        (key % self.queues.len() as u64) as usize
    }

    /// Whether the shared buffer holds more than its limit.
    fn over_limit(&self) -> bool {
        match self.limit {
            Limit::Packets(n) => self.backlog.packets > n,
            Limit::Bytes(n) => self.backlog.bytes > n,
            Limit::Unlimited => false,
        }
    }

    /// §4.1: over the limit, drop at the head of the queue holding the most bytes. Returns
    /// whether a packet was dropped.
    fn push_out(&mut self) -> bool {
        let Some(fat) = (0..self.queues.len()).max_by_key(|&i| {
            (
                self.queues[i].q.data().backlog().bytes,
                std::cmp::Reverse(i),
            )
        }) else {
            return false;
        };
        // The fat queue's head leaves as a drop (not through CoDel, which did not choose it).
        let Some(d) = self.queues[fat].q.drop_head(DropReason::Overflow) else {
            return false;
        };
        self.backlog.packets -= 1;
        self.backlog.bytes -= d.packet.size as u64;
        self.pushed_out.push(d);
        true
    }
}

impl QueueState for FqCodel {
    fn backlog(&self) -> Backlog {
        self.backlog
    }

    fn stats(&self) -> QueueStats {
        self.queues
            .iter()
            .fold(QueueStats::default(), |s, q| s.merged(q.q.stats()))
    }

    fn aqm_state(&self, out: &mut Vec<(String, f64)>) {
        let active = self.queues.iter().filter(|q| q.list != List::Idle).count();
        out.push(("fq_active_queues".into(), active as f64));
    }
}

impl QueueDiscipline for FqCodel {
    fn enqueue(&mut self, now: Time, pkt: &Packet) -> Result<Enqueued, Dropped> {
        let i = self.index(pkt);
        let fq = &mut self.queues[i];
        let e = fq.q.enqueue(now, pkt)?; // unlimited per queue: only CoDel could refuse
        if fq.list == List::Idle {
            // §4.1: "the queue is added to the end of the list of new queues", with a full
            // quantum of credit.
            fq.list = List::New;
            fq.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        self.backlog.packets += 1;
        self.backlog.bytes += pkt.size as u64;
        while self.over_limit() && self.push_out() {}
        Ok(e)
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        loop {
            // §4.2: new queues first, then old ones.
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let fq = &mut self.queues[i];
            if fq.deficit <= 0 {
                // "its deficit is increased by quantum and the queue is put onto the end of
                // the list of old queues".
                fq.deficit += self.quantum;
                fq.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i);
                continue;
            }
            let before = dropped.len();
            let out = fq.q.dequeue(now, dropped);
            for d in &dropped[before..] {
                self.backlog.packets -= 1;
                self.backlog.bytes -= d.packet.size as u64;
            }
            match out {
                Some(d) => {
                    fq.deficit -= d.packet.size as i64;
                    self.backlog.packets -= 1;
                    self.backlog.bytes -= d.packet.size as u64;
                    return Some(d);
                }
                None => {
                    // §4.2: an empty new queue moves to the old list (so that it cannot
                    // come back as new at once); an empty old queue goes idle.
                    if from_new {
                        self.new_flows.pop_front();
                        if self.old_flows.is_empty() {
                            fq.list = List::Idle;
                        } else {
                            fq.list = List::Old;
                            self.old_flows.push_back(i);
                        }
                    } else {
                        self.old_flows.pop_front();
                        fq.list = List::Idle;
                    }
                }
            }
        }
    }

    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for q in &self.queues {
            q.q.for_each_packet(f);
        }
    }

    fn pushes_out(&self) -> bool {
        true
    }

    fn pushed_out(&mut self, out: &mut Vec<Dropped>) {
        out.append(&mut self.pushed_out);
    }
}

/// `fq-codel` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelParams {
    /// Shared buffer limit (Linux: 10240 packets).
    pub limit: Limit,
    /// Number of flow queues (RFC 8290 §5.2.2: 1024).
    pub flows: usize,
    /// DRR quantum, bytes (RFC 8290 §5.2.3: one MTU; default: the scenario's packet size).
    pub quantum: Option<crate::units::Bytes>,
    /// CoDel's target on each queue (default 5 ms).
    pub target: Duration,
    /// CoDel's interval on each queue (default 100 ms).
    pub interval: Duration,
    /// Mark ECN-capable packets instead of dropping them (Linux's default is on).
    pub ecn: bool,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            limit: Limit::Packets(10240),
            flows: 1024,
            quantum: None,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
        }
    }
}

impl QueueParams for FqCodelParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }

    fn validate(&self) -> Result<(), ParamError> {
        if !(1..=65_536).contains(&self.flows) {
            return Err(ParamError::at(
                "flows",
                format!("fq-codel `flows` must be in [1, 65536], not {}", self.flows),
            ));
        }
        if self.quantum.is_some_and(|q| q.0 == 0) {
            return Err(ParamError::at(
                "quantum",
                "fq-codel `quantum` must be positive",
            ));
        }
        super::codel::check_times("fq-codel", self.target, self.interval)
    }

    fn build(&self, ctx: &QueueContext) -> Box<dyn QueueDiscipline> {
        let mtu = u64::from(ctx.packet_size);
        Box::new(FqCodel::new(
            self.flows,
            self.quantum.map_or(mtu, |q| q.0),
            self.limit,
            CodelSettings {
                target: self.target,
                interval: self.interval,
                ecn: self.ecn,
                maxpacket: mtu,
            },
        ))
    }

    fn limits(&self) -> Vec<Limit> {
        vec![self.limit]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, PacketKind};

    fn fq(limit: u64) -> FqCodel {
        let p = FqCodelParams::default();
        FqCodel::new(
            16,
            1000,
            Limit::Packets(limit),
            CodelSettings {
                target: p.target,
                interval: p.interval,
                ecn: false,
                maxpacket: 1000,
            },
        )
    }

    fn pkt(flow: u32, seq: u64) -> Packet {
        let mut p = Packet::new(FlowId(flow), PacketKind::Data, 1000);
        p.seq = seq;
        p
    }

    #[test]
    fn a_sparse_flow_overtakes_a_backlog_and_flows_alternate() {
        let mut q = fq(1000);
        let mut out = Vec::new();
        for s in 0..10 {
            q.enqueue(Time::ZERO, &pkt(0, s)).unwrap();
        }
        // Flow 0 is served, drains its quantum and goes to the old list.
        assert_eq!(
            q.dequeue(Time::ZERO, &mut out).unwrap().packet.flow,
            FlowId(0)
        );
        // A packet of a new flow arrives: it goes first (new list), then the two alternate.
        q.enqueue(Time::ZERO, &pkt(1, 0)).unwrap();
        q.enqueue(Time::ZERO, &pkt(1, 1)).unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut out))
            .map(|d| d.packet.flow.0)
            .take(5)
            .collect();
        assert_eq!(order, vec![1, 0, 1, 0, 0]);
        assert!(out.is_empty());
    }

    #[test]
    fn overflow_pushes_out_the_fattest_queue_head() {
        let mut q = fq(5);
        for s in 0..4 {
            q.enqueue(Time::ZERO, &pkt(0, s)).unwrap();
        }
        q.enqueue(Time::ZERO, &pkt(1, 0)).unwrap();
        // The sixth packet, of the sparse flow: flow 0's head (seq 0) is pushed out instead.
        q.enqueue(Time::ZERO, &pkt(1, 1)).unwrap();
        let mut pushed = Vec::new();
        q.pushed_out(&mut pushed);
        assert_eq!(pushed.len(), 1);
        assert_eq!(
            (pushed[0].packet.flow, pushed[0].packet.seq),
            (FlowId(0), 0)
        );
        assert_eq!(pushed[0].reason, DropReason::Overflow);
        assert_eq!(q.backlog().packets, 5);
        assert_eq!(q.stats().dropped_packets, 1);
        assert_eq!(q.stats().enqueued_packets, 6);
    }
}
