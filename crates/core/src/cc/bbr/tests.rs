//! BBR's state transitions and gains, driven by a synthetic path: a 10 Mb/s bottleneck with a
//! 100 ms RTprop, ACKs arriving ten per round, each round's rate sample the smaller of the
//! pacing rate and the bottleneck's.

use super::*;
use crate::cc::Congestion;
use crate::transport::rate_sample::RateSample;

const MSS: u64 = 1000;

fn bbr(seed: u64) -> Bbr {
    let p = BbrParams::default();
    Bbr::new(
        BbrSettings {
            mss: MSS,
            initial_window: 2,
            high_gain: p.high_gain,
            cwnd_gain: p.cwnd_gain,
            bw_window_rounds: p.bw_window_rounds,
            probe_rtt_interval: p.probe_rtt_interval,
            probe_rtt_duration: p.probe_rtt_duration,
        },
        crate::rng::stream(seed, "bbr-test"),
    )
}

/// The synthetic path and the sender's sequence space.
struct Path {
    now: Time,
    seq: u64,
    capacity: Rate,
    rtt: Duration,
}

impl Path {
    fn new() -> Path {
        Path {
            now: Time::ZERO,
            seq: 0,
            capacity: Rate::from_mbps(10),
            rtt: Duration::from_millis(100),
        }
    }

    /// One round of ten ACKs over an RTT, `in_flight` bytes outstanding at each.
    fn round(&mut self, b: &mut Bbr, in_flight: u64) {
        let rate = b.pacing_rate.min(self.capacity);
        let end = self.seq + 20;
        for _ in 0..10 {
            self.now += Duration(self.rtt.0 / 10);
            self.seq += 1;
            b.on_ack(self.now, &self.ack(end, in_flight, rate));
        }
    }

    fn ack(&self, highest: u64, in_flight: u64, rate: Rate) -> AckSample {
        AckSample {
            acked_bytes: MSS,
            rtt: Some(self.rtt),
            in_flight,
            in_recovery: false,
            highest_sent: highest,
            cumulative_ack: self.seq,
            ecn_echo: false,
            ce_segments: None,
            one_way_delay: None,
            rate: Some(RateSample {
                delivered: 10 * MSS,
                interval: self.rtt,
                delivery_rate: rate,
                is_app_limited: false,
                total_delivered: self.seq * MSS,
            }),
        }
    }
}

/// Startup until the pipe is full, Drain while more than a BDP is in flight, then ProbeBW.
fn to_probe_bw(b: &mut Bbr, path: &mut Path) {
    let bdp = 125_000; // 10 Mb/s × 100 ms
    for _ in 0..30 {
        let in_flight = if b.mode() == Mode::Drain {
            bdp / 2
        } else {
            2 * bdp
        };
        path.round(b, in_flight);
        if b.mode() == Mode::ProbeBw {
            return;
        }
    }
    panic!("never reached ProbeBW: {:?}", b.mode());
}

#[test]
fn startup_doubles_then_a_flat_bandwidth_fills_the_pipe_and_drain_leads_to_probe_bw() {
    let mut b = bbr(1);
    let mut path = Path::new();
    assert_eq!(b.mode(), Mode::Startup);
    assert!((b.pacing_gain() - 2.885).abs() < 1e-3, "2/ln 2");
    // §4.2.1: 2/ln2 × 2 segments / 1 ms before any RTT sample.
    assert_eq!(
        b.pacing_rate.bps(),
        (2.0 / std::f64::consts::LN_2 * 16e6) as u64
    );
    // The first RTT replaces the 1 ms guess: 2/ln2 × 2000 B / 100 ms.
    path.round(&mut b, 2 * MSS);
    assert!(b.model().btl_bw().bps() > 0);
    let mut rounds = 1;
    while b.mode() == Mode::Startup {
        path.round(&mut b, 250_000);
        rounds += 1;
        assert!(rounds < 30, "Startup never ended");
    }
    // The estimate tracks the bottleneck, and the pipe filled three rounds after BtlBw
    // stopped growing by 25% per round.
    assert_eq!(b.model().btl_bw(), Rate::from_mbps(10));
    assert_eq!(b.mode(), Mode::Drain);
    assert!((b.pacing_gain() - std::f64::consts::LN_2 / 2.0).abs() < 1e-9);
    assert_eq!(
        b.pacing_rate.bps(),
        (10e6 * std::f64::consts::LN_2 / 2.0) as u64
    );
    // Still two BDPs in flight: Drain stays; one BDP or less: ProbeBW.
    path.round(&mut b, 250_000);
    assert_eq!(b.mode(), Mode::Drain);
    path.round(&mut b, 100_000);
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert_eq!(b.cwnd_gain, 2.0);
}

#[test]
fn probe_bw_cycles_its_gains_one_rtprop_each_never_starting_at_three_quarters() {
    for seed in 0..20 {
        let mut b = bbr(seed);
        let mut path = Path::new();
        to_probe_bw(&mut b, &mut path);
        assert_ne!(
            b.pacing_gain(),
            0.75,
            "seed {seed} started in the draining phase"
        );
        // Follow the cycle for 16 RTprops with a BDP in flight (so the 5/4 phase lasts
        // one RTprop only if 5/4 BDP is in flight: give it that).
        let mut gains = vec![b.pacing_gain()];
        for _ in 0..16 {
            let in_flight = if b.pacing_gain() > 1.0 {
                200_000
            } else {
                125_000
            };
            path.round(&mut b, in_flight);
            gains.push(b.pacing_gain());
        }
        // Every 5/4 phase is followed by a 3/4 phase, then six phases of 1.
        for w in gains.windows(2) {
            if w[0] == 1.25 && w[1] != 1.25 {
                assert_eq!(w[1], 0.75, "seed {seed}: {gains:?}");
            }
        }
        assert!(gains.contains(&1.25) && gains.contains(&0.75), "{gains:?}");
        assert_eq!(b.pacing_rate.bps(), (b.pacing_gain() * 10e6) as u64);
        // The cwnd target is 2 × BDP + 3 send quanta (§4.2.3.2; 2 segments at 10 Mb/s),
        // which cwnd approaches by what each ACK delivers and never exceeds.
        assert_eq!(b.inflight(b.cwnd_gain), 250_000 + 3 * 2 * MSS);
        assert!(
            b.window() <= 256_000 && b.window() > 200_000,
            "{}",
            b.window()
        );
    }
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_lower_rtt_then_back_to_probe_bw() {
    let mut b = bbr(3);
    let mut path = Path::new();
    to_probe_bw(&mut b, &mut path);
    let cwnd = b.window();
    // RTT samples 10% above RTprop for 10 s: RTprop expires.
    path.rtt = Duration::from_millis(110);
    while b.mode() != Mode::ProbeRtt {
        path.round(&mut b, 125_000);
        assert!(path.now < Time::ZERO + Duration::from_secs(20));
    }
    assert!(path.now >= Time::ZERO + Duration::from_secs(10));
    assert_eq!(b.window(), 4 * MSS, "ProbeRTT: BBRMinPipeCwnd");
    assert_eq!(b.pacing_gain(), 1.0);
    // Inflight falls to 4 segments: 200 ms and a round later, ProbeRTT ends and the window
    // comes back.
    let entered = path.now;
    while b.mode() == Mode::ProbeRtt {
        path.round(&mut b, 4 * MSS);
        assert!(path.now < entered + Duration::from_secs(1));
    }
    assert!(path.now >= entered + Duration::from_millis(200));
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert!(b.window() >= cwnd, "{} < {cwnd}", b.window());
    assert_eq!(b.model().rtprop(), Some(Duration::from_millis(110)));
}

#[test]
fn losses_keep_the_flight_and_recovery_restores_the_window() {
    let mut b = bbr(4);
    let mut path = Path::new();
    to_probe_bw(&mut b, &mut path);
    let cwnd = b.window();
    let rate = b.pacing_rate;
    // The transport's pipe at the loss: 20 segments of the flight are known to have left.
    let loss = CongestionEvent {
        pipe: cwnd - 20 * MSS,
        ..CongestionEvent::new(Congestion::Loss, cwnd)
    };
    b.on_congestion_event(path.now, &loss);
    assert_eq!(b.window(), cwnd - 19 * MSS, "pipe + 1 segment");
    assert_eq!(b.pacing_rate, rate, "a loss does not change the rate");
    // Conservation for the rest of this round and the next: ACKs do not grow the window.
    path.round(&mut b, cwnd);
    assert_eq!(b.window(), cwnd - 19 * MSS);
    b.on_recovery_end(path.now);
    assert_eq!(b.window(), cwnd);
    // A timeout: one segment until the repair is acknowledged, then the window comes back.
    b.on_congestion_event(
        path.now,
        &CongestionEvent::new(Congestion::Timeout, 200 * MSS),
    );
    assert_eq!(b.window(), MSS);
    let end = path.seq + 5;
    let mut a = path.ack(end, MSS, rate);
    b.on_ack(path.now, &a);
    assert!(b.window() < cwnd);
    path.seq = end;
    a = path.ack(end + 10, MSS, rate);
    b.on_ack(path.now, &a);
    assert!(b.window() >= cwnd);
    // ECN is ignored.
    let before = b.window();
    b.on_congestion_event(path.now, &CongestionEvent::new(Congestion::Ecn, 0));
    assert_eq!(b.window(), before);
}

#[test]
fn parameters_are_checked() {
    let bad = BbrParams {
        high_gain: 0.5,
        ..BbrParams::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("high_gain"));
    let bad = BbrParams {
        bw_window_rounds: 0,
        ..BbrParams::default()
    };
    assert!(bad.validate().is_err());
    assert!(BbrParams::default().validate().is_ok());
}
