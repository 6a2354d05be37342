//! Random event sequences against every congestion controller: ACKs of random sizes, RTTs,
//! ECN echoes and rate samples, in and out of recovery, losses, ECN signals, timeouts and
//! recovery ends, in any order, with in-band telemetry before each ACK (for HPCC). Whatever
//! happens, the window stays at least one segment and finite, grows by no more than the ACKs
//! allow, a pacing rate is positive, and nothing panics.

use acclab_core::cc::bbr::{Bbr, Bbr3, Bbr3Params, BbrSettings};
use acclab_core::cc::copa::{Copa, CopaParams};
use acclab_core::cc::cubic::{Cubic, CubicSettings};
use acclab_core::cc::dctcp::Dctcp;
use acclab_core::cc::hpcc::{Hpcc, HpccParams};
use acclab_core::cc::ledbat::{Ledbat, LedbatParams};
use acclab_core::cc::prague::Prague;
use acclab_core::cc::reno::Reno;
use acclab_core::cc::swift::{Swift, SwiftParams};
use acclab_core::cc::vegas::{BaseRtt, Vegas, VegasSettings};
use acclab_core::cc::vivace::{Vivace, VivaceParams};
use acclab_core::cc::{AckSample, Congestion, CongestionController, CongestionEvent};
use acclab_core::telemetry::{IntHop, Telemetry};
use acclab_core::transport::rate_sample::RateSample;
use acclab_core::{Duration, Rate, Time};
use proptest::prelude::*;

const MSS: u64 = 1000;
const IW: u64 = 2;

#[derive(Clone, Debug)]
enum Op {
    Ack {
        segments: u64,
        rtt_ms: Option<u64>,
        recovery: bool,
        ecn: bool,
        rate_mbps: Option<u64>,
    },
    Event(Congestion, u64),
    RecoveryEnd,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u64..4, proptest::option::of(1u64..500), any::<bool>(), any::<bool>(),
              proptest::option::of(1u64..1000))
            .prop_map(|(segments, rtt_ms, recovery, ecn, rate_mbps)| Op::Ack {
                segments, rtt_ms, recovery, ecn, rate_mbps
            }),
        1 => (prop_oneof![Just(Congestion::Loss), Just(Congestion::Ecn), Just(Congestion::Timeout)],
              0u64..400)
            .prop_map(|(kind, segs)| Op::Event(kind, segs)),
        1 => Just(Op::RecoveryEnd),
        1 => (1u64..20_000).prop_map(Op::Wait),
    ]
}

/// Every controller, fresh.
fn controllers() -> Vec<(&'static str, Box<dyn CongestionController>)> {
    let cubic = |hystart, reno_friendly| CubicSettings {
        mss: MSS,
        initial_window: IW,
        c: 0.4,
        beta: 0.7,
        fast_convergence: true,
        hystart,
        reno_friendly,
        linux: false,
    };
    let vegas = |marks| VegasSettings {
        mss: MSS,
        initial_window: IW,
        alpha: 2.0,
        beta: 4.0,
        gamma: 1.0,
        per: None,
        base_rtt: BaseRtt::Min,
        marks,
    };
    let bbr = BbrSettings {
        mss: MSS,
        initial_window: IW,
        high_gain: 2.0 / std::f64::consts::LN_2,
        cwnd_gain: 2.0,
        bw_window_rounds: 10,
        probe_rtt_interval: Duration::from_secs(10),
        probe_rtt_duration: Duration::from_millis(200),
    };
    vec![
        ("reno", Box::new(Reno::new(MSS, IW))),
        ("vegas", Box::new(Vegas::new(vegas(None)))),
        ("vegas-rem", Box::new(Vegas::new(vegas(Some(1.1))))),
        ("cubic", Box::new(Cubic::new(cubic(false, true)))),
        ("cubic+hystart", Box::new(Cubic::new(cubic(true, true)))),
        (
            "cubic-no-reno-friendly",
            Box::new(Cubic::new(cubic(false, false))),
        ),
        ("dctcp", Box::new(Dctcp::new(MSS, IW, 1.0 / 16.0, 1.0))),
        (
            "copa",
            Box::new(Copa::new(
                MSS,
                &CopaParams {
                    initial_window: IW,
                    ..CopaParams::default()
                },
            )),
        ),
        (
            "vivace",
            Box::new(Vivace::new(
                MSS,
                &VivaceParams::default(),
                acclab_core::rng::stream(1, "vivace"),
            )),
        ),
        (
            "ledbat",
            Box::new(Ledbat::new(
                MSS,
                &LedbatParams {
                    initial_window: IW,
                    ..LedbatParams::default()
                },
            )),
        ),
        (
            "prague",
            Box::new(Prague::new(MSS, IW, 1.0 / 16.0, Duration::from_millis(25))),
        ),
        (
            "swift",
            Box::new(Swift::new(
                MSS,
                &SwiftParams {
                    initial_window: IW,
                    ..SwiftParams::default()
                },
                6,
            )),
        ),
        (
            "bbr",
            Box::new(Bbr::new(bbr, acclab_core::rng::stream(1, "bbr"))),
        ),
        (
            "bbr3",
            Box::new(Bbr3::new(
                MSS,
                &Bbr3Params {
                    initial_window: IW,
                    ..Bbr3Params::default()
                },
                acclab_core::rng::stream(1, "bbr3"),
            )),
        ),
        (
            "hpcc",
            Box::new(Hpcc::new(
                MSS,
                &HpccParams::default(),
                Rate::from_mbps(1000),
                Duration::from_millis(1),
            )),
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_controller_keeps_a_sane_window(ops in proptest::collection::vec(op(), 1..300)) {
        for (name, mut cc) in controllers() {
            let mut now = Time::ZERO;
            let (mut cum, mut highest, mut acked_total) = (0u64, 10u64, 0u64);
            for op in &ops {
                let before = cc.window();
                match *op {
                    Op::Ack { segments, rtt_ms, recovery, ecn, rate_mbps } => {
                        now += Duration::from_millis(1);
                        cum += segments;
                        highest = highest.max(cum + 10);
                        let bytes = segments * MSS;
                        acked_total += bytes;
                        let rate = rate_mbps.map(|m| RateSample {
                            delivered: bytes,
                            interval: Duration::from_millis(10),
                            delivery_rate: Rate::from_mbps(m),
                            is_app_limited: false,
                            total_delivered: acked_total,
                        });
                        // A one-link record, as a queue writes it (HPCC reads it; the others
                        // ignore it): the bytes acknowledged as transmitted, a queue from the RTT.
                        let mut int = Telemetry::default();
                        int.push(IntHop {
                            link: 0,
                            rate: Rate::from_mbps(1000),
                            ts: now,
                            tx_bytes: acked_total,
                            qlen: rtt_ms.unwrap_or(0) * 1000,
                        });
                        cc.on_telemetry(now, &int);
                        cc.on_ack(now, &AckSample {
                            acked_bytes: bytes,
                            rtt: rtt_ms.map(Duration::from_millis),
                            in_flight: (highest - cum) * MSS,
                            in_recovery: recovery,
                            highest_sent: highest,
                            cumulative_ack: cum,
                            ecn_echo: ecn,
                            ce_segments: None,
                            one_way_delay: None,
                            rate,
                        });
                        // No controller grows by more than 3× what one ACK acknowledges (BBR's
                        // cwnd += acked, slow start's one segment, CUBIC's ≤ ½ segment per
                        // segment, W_est's α < 1) — except to restore a saved window. (HPCC
                        // sets its window from the measured utilisation, W_c/(U/η), not from
                        // what an ACK acknowledges; it stays within its line-rate window. Vivace
                        // is rate-based: its window is a cap of 2·rate·sRTT that follows the
                        // RTT samples, not what an ACK acknowledges.)
                        let grown = cc.window().saturating_sub(before);
                        prop_assert!(
                            grown <= 3 * bytes || ["bbr", "bbr3", "hpcc", "vivace"].contains(&name),
                            "{}: grew {} on an ACK of {} B", name, grown, bytes
                        );
                    }
                    Op::Event(kind, segs) => {
                        let in_flight = segs * MSS;
                        let pipe = if kind == Congestion::Timeout { 0 } else { in_flight / 2 };
                        cc.on_congestion_event(now, &CongestionEvent { kind, in_flight, pipe });
                    }
                    Op::RecoveryEnd => cc.on_recovery_end(now),
                    Op::Wait(ms) => now += Duration::from_millis(ms),
                }
                let w = cc.window();
                prop_assert!(w >= MSS, "{}: window {} below one segment after {:?}", name, w, op);
                prop_assert!(
                    w <= IW * MSS + 4 * acked_total + 1000 * MSS,
                    "{}: window {} after {} B acknowledged", name, w, acked_total
                );
                if let Some(r) = cc.pacing_rate() {
                    prop_assert!(r.bps() > 0, "{}: pacing rate 0", name);
                }
                if let Some(a) = cc.accumulation() {
                    prop_assert!(a.is_finite(), "{}: accumulation {}", name, a);
                }
            }
        }
    }
}
