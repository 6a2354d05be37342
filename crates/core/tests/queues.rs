//! Random operation sequences against every queue discipline (each kind, with and without the
//! high band) and a policy that drops at the head: what goes in comes out, is dropped, or is
//! still held — by the driver's count and by the queue's own counters — and no band exceeds
//! its limit or reorders its packets.

use acclab_core::config::{QueueConfig, QueueContext};
use acclab_core::packet::{Ecn, FlowId, PacketKind};
use acclab_core::queue::{Aqm, AqmQueue, Fifo, QueueDiscipline, Verdict};
use acclab_core::{Duration, Limit, Packet, Rate, Time};
use proptest::prelude::*;

const QUEUES: &[&str] = &[
    r#"kind = "droptail"
limit = "8pkt""#,
    r#"kind = "droptail"
limit = "6000B"
priority = true"#,
    r#"kind = "priority"
limit = "5pkt"
high_limit = "2pkt""#,
    r#"kind = "red"
limit = "12pkt"
min_th = "2pkt"
max_th = "6pkt"
ecn = true"#,
    r#"kind = "red"
limit = "12000B"
min_th = "2000B"
max_th = "6000B"
priority = true"#,
    r#"kind = "rem"
limit = "10pkt"
gamma = 0.5"#,
    r#"kind = "rem"
limit = "10pkt"
gamma = 0.5
priority = true"#,
    r#"kind = "avq"
limit = "10pkt""#,
    r#"kind = "avq"
limit = "10pkt"
mode = "drop"
priority = true"#,
    r#"kind = "avq"
limit = "10pkt"
mode = "delay"
priority = true"#,
    r#"kind = "bat"
limit = "10pkt"
classes = [{ name = "a" }, { name = "b", d = 0.5 }]
interval = "1ms""#,
    r#"kind = "bat"
limit = "10pkt"
classes = [{ name = "a" }, { name = "b", d = 0.5 }]
interval = "1ms"
priority = true
clcc = { r_ref = 1.0, udp_class = "a", tcp_class = "b" }"#,
    r#"kind = "codel"
limit = "20pkt"
target = "1ms"
interval = "4ms""#,
    r#"kind = "codel"
limit = "20pkt"
target = "1ms"
interval = "4ms"
ecn = true
priority = true"#,
    r#"kind = "step-ecn"
limit = "12pkt"
threshold = "4pkt""#,
    r#"kind = "pie"
limit = "20pkt"
target = "1ms"
t_update = "1ms"
max_burst = "0ms""#,
    r#"kind = "pie"
limit = "20pkt"
target = "1ms"
t_update = "1ms"
max_burst = "2ms"
ecn = true
priority = true"#,
    r#"kind = "dualpi2"
limit = "12pkt"
target = "1ms"
t_update = "1ms""#,
    r#"kind = "dualpi2"
limit = "9000B"
l_threshold = "100us"
l_range = "200us""#,
    r#"kind = "fq-codel"
limit = "12pkt"
flows = 3
target = "1ms"
interval = "4ms""#,
    r#"kind = "fq-codel"
limit = "9000B"
quantum = "300B"
ecn = true
target = "1ms"
interval = "4ms""#,
];

/// Drops every head that waited longer than 3 ms, as CoDel and PIE may.
struct DropStale;

impl Aqm for DropStale {
    fn on_arrival(&mut self, _: Time, _: &mut Packet, _: bool, _: &Fifo) -> Verdict {
        Verdict::Pass
    }
    fn on_departure(&mut self, _: Time, _: &mut Packet, sojourn: Duration, _: &Fifo) -> Verdict {
        if sojourn > Duration::from_millis(3) {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    }
}

fn build(i: usize) -> (Box<dyn QueueDiscipline>, Vec<Limit>) {
    if i == QUEUES.len() {
        let q = AqmQueue::new(DropStale, Limit::Packets(8)).with_high_band(Limit::Packets(3));
        return (Box::new(q), vec![Limit::Packets(8), Limit::Packets(3)]);
    }
    let mut t: toml::Table = toml::from_str(QUEUES[i]).unwrap();
    let kind = t.remove("kind").unwrap();
    let cfg = QueueConfig::from_kind(kind.as_str().unwrap(), toml::Value::Table(t)).unwrap();
    let classes: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
    let q = cfg.build(&QueueContext {
        rate: Rate::from_mbps(10),
        seed: 7,
        name: format!("queue{i}"),
        flow_classes: classes.into(),
        packet_size: 1000,
    });
    (q, cfg.limits())
}

#[derive(Clone, Debug)]
enum Op {
    Arrive {
        flow: u32,
        kind: PacketKind,
        size: u32,
        ect: bool,
    },
    Depart,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..4, prop::sample::select(PacketKind::ALL.to_vec()), 40u32..1500, any::<bool>())
            .prop_map(|(flow, kind, size, ect)| Op::Arrive { flow, kind, size, ect }),
        3 => Just(Op::Depart),
        1 => (1u64..2_000_000).prop_map(Op::Wait),
    ]
}

fn within(limit: Limit, packets: u64, bytes: u64) -> bool {
    match limit {
        Limit::Packets(n) => packets <= n,
        Limit::Bytes(n) => bytes <= n,
        Limit::Unlimited => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_queue_conserves_packets(which in 0..=QUEUES.len(), ops in prop::collection::vec(op(), 1..400)) {
        let (mut q, limits) = build(which);
        let mut now = Time::ZERO;
        let (mut accepted, mut refused, mut sent, mut head_dropped) = (0u64, 0u64, 0u64, 0u64);
        let (mut in_bytes, mut out_bytes) = (0u64, 0u64);
        // Packets leave in arrival order within a band — within a band and flow for FQ-CoDel,
        // which serves flows in turn.
        let per_flow = QUEUES.get(which).is_some_and(|q| q.contains("fq-codel"));
        let mut last_seq = std::collections::HashMap::<(usize, u32), u64>::new();
        let mut dropped = Vec::new();
        for (seq, op) in ops.into_iter().enumerate() {
            match op {
                Op::Arrive { flow, kind, size, ect } => {
                    let mut p = Packet::new(FlowId(flow), kind, size);
                    p.seq = seq as u64;
                    if ect {
                        p.ecn = Ecn::ECT;
                    }
                    match q.enqueue(now, &p) {
                        Ok(_) => {
                            accepted += 1;
                            in_bytes += size as u64;
                            // A discipline may push a queued packet out instead (FQ-CoDel).
                            dropped.clear();
                            q.pushed_out(&mut dropped);
                            prop_assert!(dropped.is_empty() || q.pushes_out());
                            for d in &dropped {
                                head_dropped += 1;
                                out_bytes += d.packet.size as u64;
                            }
                        }
                        Err(d) => {
                            refused += 1;
                            prop_assert_eq!(d.packet.seq, seq as u64);
                        }
                    }
                }
                Op::Depart => {
                    dropped.clear();
                    if let Some(d) = q.dequeue(now, &mut dropped) {
                        sent += 1;
                        out_bytes += d.packet.size as u64;
                        prop_assert!(d.sojourn.0 <= now.0);
                        // Within a band (data or control) packets leave in arrival order.
                        let band = usize::from(d.packet.kind.is_high_priority()) * 2
                            + usize::from(d.packet.kind.is_forward());
                        let key = (band, if per_flow { d.packet.flow.0 } else { 0 });
                        prop_assert!(last_seq.get(&key).is_none_or(|&s| s < d.packet.seq));
                        last_seq.insert(key, d.packet.seq);
                    }
                    for d in &dropped {
                        head_dropped += 1;
                        out_bytes += d.packet.size as u64;
                    }
                }
                Op::Wait(ns) => now += Duration(ns),
            }
            let b = q.backlog();
            let s = q.stats();
            prop_assert_eq!(b.packets, accepted - sent - head_dropped);
            prop_assert_eq!(b.bytes, in_bytes - out_bytes);
            prop_assert_eq!(s.enqueued_packets, accepted);
            prop_assert_eq!(s.dequeued_packets, sent);
            prop_assert_eq!(s.dropped_packets, refused + head_dropped);
            let mut held = 0;
            q.for_each_packet(&mut |_| held += 1);
            prop_assert_eq!(held, b.packets);
            // Every band within its limit implies the total within the sum of the limits.
            let (mut pkts, mut bytes, mut bounded) = (0u64, 0u64, true);
            for l in &limits {
                match l {
                    Limit::Packets(n) => pkts += n,
                    Limit::Bytes(n) => bytes += n,
                    Limit::Unlimited => bounded = false,
                }
            }
            if bounded {
                let limit = if bytes > 0 { Limit::Bytes(bytes) } else { Limit::Packets(pkts) };
                prop_assert!(within(limit, b.packets, b.bytes), "{:?} over {:?}", b, limits);
            }
        }
    }
}
