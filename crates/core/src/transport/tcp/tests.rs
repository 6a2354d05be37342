use crate::cc::{AckSample, Congestion, CongestionController, CongestionEvent, SentSample};
use crate::packet::{Ecn, FlowId, Packet, PacketKind, Payload, Sack};
use crate::transport::Endpoint;
use crate::units::{Duration, Time};

use super::*;
use crate::cc::reno::Reno;

const MSS: u64 = 1000;

fn sender(initial_window: u64) -> TcpSender<Reno> {
    let cfg = TcpSettings {
        initial_window,
        ..TcpSettings::default()
    };
    let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, initial_window));
    s.handle_start(Time::ZERO);
    s
}

fn drain<C: CongestionController>(s: &mut TcpSender<C>, now: Time) -> Vec<u64> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|p| p.seq)
        .collect()
}

fn ack(next: u64, echo: Time) -> Packet {
    Packet::ack(FlowId(0), 40, next, echo)
}

fn ms(x: u64) -> Time {
    Time(x * 1_000_000)
}

/// RFC 9293 §3.8.6.2.1: new data only up to SND.UNA + the receiver's buffer, however large
/// the congestion window; what a loss holds back at the receiver holds back the sender.
#[test]
fn the_receive_window_bounds_what_is_sent_past_the_cumulative_ack() {
    let cfg = TcpSettings {
        initial_window: 10,
        receive_window: Some(4),
        sack: true,
        ..TcpSettings::default()
    };
    let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 10));
    s.handle_start(Time::ZERO);
    assert_eq!(drain(&mut s, ms(0)), vec![0, 1, 2, 3]);
    s.handle_packet(ms(10), &ack(2, ms(0)));
    assert_eq!(drain(&mut s, ms(10)), vec![4, 5]);
    // Segment 2 lost: 3, 4 and 5 arrive and are SACKed; the window stays at 2 + 4.
    s.handle_packet(ms(20), &sack_ack(2, 3, 6));
    assert!(drain(&mut s, ms(20)).iter().all(|&q| q < 6));
}

/// ns-2's `overhead_`: each segment waits its own uniform draw from [0, overhead] after it
/// could have left, one at a time; the timer says when; a repair does not wait.
#[test]
fn send_overhead_delays_each_segment_by_a_fresh_draw_and_repairs_go_at_once() {
    let max = Duration::from_micros(100);
    let mut s = sender(1000).with_send_overhead(max, crate::rng::stream(7, "t"));
    let mut now = ms(0);
    let mut delays = Vec::new();
    for seq in 0..400 {
        let since = now;
        let p = loop {
            if let Some(p) = s.poll_transmit(now) {
                break p;
            }
            let at = s.poll_timeout().expect("a held segment arms the timer");
            assert!(
                at > now && at <= since + max,
                "release {at} outside (now, now + max]"
            );
            now = at;
        };
        assert_eq!(p.seq, seq);
        delays.push((now - since).0);
    }
    // Uniform on [0, 100 us]: mean 50 us (± 5 us is > 3 standard errors for 400 draws).
    let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
    assert!((45_000.0..55_000.0).contains(&mean), "mean delay {mean} ns");
    assert!(delays.iter().any(|&d| d > 90_000) && delays.iter().any(|&d| d < 10_000));
    // Three duplicate ACKs: the hole is resent at once, whatever the overhead holds.
    let t = now + Duration::from_millis(10);
    for _ in 0..3 {
        s.handle_packet(t, &ack(0, ms(0)));
    }
    assert_eq!(s.poll_transmit(t).map(|p| p.seq), Some(0));
}

#[test]
fn send_overhead_must_be_positive_and_at_most_100ms() {
    assert!(check_send_overhead(None).is_ok());
    assert!(check_send_overhead(Some(Duration::from_millis(100))).is_ok());
    for bad in [Duration(0), Duration::from_millis(101)] {
        let e = check_send_overhead(Some(bad)).unwrap_err().to_string();
        assert!(e.contains("send_overhead") && e.contains("100ms"), "{e}");
    }
}

#[test]
fn slow_start_opens_the_window_per_ack() {
    let mut s = sender(2);
    assert_eq!(drain(&mut s, ms(0)), vec![0, 1]);
    s.handle_packet(ms(10), &ack(1, ms(0)));
    assert_eq!(drain(&mut s, ms(10)), vec![2, 3]);
    s.handle_packet(ms(10), &ack(2, ms(0)));
    assert_eq!(drain(&mut s, ms(10)), vec![4, 5]);
    assert_eq!(s.stats().cwnd_bytes, Some(4 * MSS));
    assert_eq!(
        s.stats().srtt,
        Some(crate::units::Duration::from_millis(10))
    );
}

/// Sends segments 0..10 with a 10-segment window.
fn ten_in_flight() -> TcpSender<Reno> {
    let mut s = sender(10);
    assert_eq!(drain(&mut s, ms(0)).len(), 10);
    s
}

#[test]
fn third_duplicate_ack_triggers_fast_retransmit() {
    let mut s = ten_in_flight();
    // Segment 3 is lost: ACKs for 0,1,2 then duplicates for 4,5,6.
    for next in 1..=3 {
        s.handle_packet(ms(20), &ack(next, ms(0)));
    }
    // Slow start: each ACK frees one segment and adds one, so 6 more leave (13 in flight).
    let fresh = drain(&mut s, ms(20));
    assert_eq!(fresh, vec![10, 11, 12, 13, 14, 15]);
    s.handle_packet(ms(21), &ack(3, ms(0)));
    s.handle_packet(ms(21), &ack(3, ms(0)));
    assert!(
        drain(&mut s, ms(21)).is_empty(),
        "no retransmission before the third duplicate"
    );
    s.handle_packet(ms(21), &ack(3, ms(0)));
    assert_eq!(
        drain(&mut s, ms(21)).first(),
        Some(&3),
        "fast retransmit of the hole"
    );
    assert_eq!(s.stats().retransmits, 1);
    assert_eq!(s.stats().detected_losses, 1);
    // The repair restarts the retransmission timer (last armed by the new ACK at 20 ms).
    assert_eq!(s.poll_timeout(), Some(ms(21) + s.rtt.rto()));
    // ssthresh = FlightSize/2 = 13/2 segments (RFC 5681 eq. (4)).
    assert_eq!(s.stats().cwnd_bytes, Some(6500));
}

#[test]
fn partial_ack_retransmits_the_next_hole_and_full_ack_ends_recovery() {
    let mut s = ten_in_flight();
    // Segments 2 and 5 are lost.
    s.handle_packet(ms(20), &ack(1, ms(0)));
    s.handle_packet(ms(20), &ack(2, ms(0)));
    assert_eq!(drain(&mut s, ms(20)), vec![10, 11, 12, 13]); // 12 in flight
    for _ in 0..3 {
        s.handle_packet(ms(21), &ack(2, ms(0)));
    }
    assert_eq!(drain(&mut s, ms(21)), vec![2]);
    // The retransmission of 2 arrives: the receiver now misses 5 (partial ACK).
    s.handle_packet(ms(40), &ack(5, ms(21)));
    assert_eq!(
        drain(&mut s, ms(40)).first(),
        Some(&5),
        "partial ACK retransmits at once"
    );
    assert_eq!(s.stats().detected_losses, 1, "one recovery episode");
    s.handle_packet(ms(50), &ack(12, ms(40)));
    assert!(s.recovery_end.is_some(), "12 < 14: still a partial ACK");
    // Full acknowledgement of everything sent before recovery: back to ssthresh = 12/2.
    s.handle_packet(ms(60), &ack(14, ms(40)));
    assert!(s.recovery_end.is_none());
    assert_eq!(s.stats().cwnd_bytes, Some(6 * MSS));
    assert_eq!(s.inflation, 0);
}

/// An ACK up to `next` whose SACK block is `[start, end)`.
fn sack_ack(next: u64, start: u64, end: u64) -> Packet {
    let mut a = ack(next, ms(0));
    if let Payload::Ack { sack, .. } = &mut a.payload {
        *sack = Sack::new(next, start, end);
    }
    a
}

#[test]
fn sack_recovery_resends_every_hole_in_one_round_and_nothing_else() {
    let cfg = TcpSettings {
        initial_window: 10,
        sack: true,
        ..TcpSettings::default()
    };
    let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 10));
    s.handle_start(Time::ZERO);
    assert_eq!(drain(&mut s, ms(0)).len(), 10);
    // Segments 2 and 5 are lost: ACKs for 0, 1, then SACKs of 3-4 and 6-9.
    s.handle_packet(ms(20), &ack(1, ms(0)));
    s.handle_packet(ms(20), &ack(2, ms(0)));
    drain(&mut s, ms(20));
    for (start, end) in [(3, 4), (3, 5), (6, 7), (6, 8)] {
        s.handle_packet(ms(21), &sack_ack(2, start, end));
    }
    // Recovery (three duplicates; segment 2 lost by RFC 6675's rule): 2 goes at once.
    // ssthresh = cwnd = FlightSize/2 = 6 segments; pipe = 12 outstanding − 4 SACKed −
    // 1 lost + 1 resent = 8: nothing more may leave.
    assert_eq!(drain(&mut s, ms(21)), vec![2]);
    assert_eq!(s.stats().cwnd_bytes, Some(6 * MSS));
    // Segments 8-11 arrive and are SACKed: 5 now has three SACKed above it and is lost;
    // it goes without waiting for a partial ACK (NewReno would wait a round trip).
    for end in 9..=12 {
        s.handle_packet(ms(22), &sack_ack(2, 6, end));
    }
    let resent = drain(&mut s, ms(22));
    assert_eq!(resent.first(), Some(&5), "{resent:?}");
    assert_eq!(s.stats().retransmits, 2);
    // The repairs arrive: everything is acknowledged, recovery ends, nothing resent twice.
    s.handle_packet(ms(41), &sack_ack(5, 6, 12));
    s.handle_packet(ms(42), &ack(14, ms(21)));
    assert!(s.recovery_end.is_none());
    assert_eq!(s.stats().retransmits, 2);
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn timeout_backs_off_collapses_the_window_and_goes_back_n() {
    let mut s = sender(4);
    assert_eq!(drain(&mut s, ms(0)), vec![0, 1, 2, 3]);
    let first = s.poll_timeout().unwrap();
    assert_eq!(first, ms(1000), "initial RTO is 1 s");
    s.handle_timeout(first);
    assert_eq!(drain(&mut s, first), vec![0], "one segment after a timeout");
    assert_eq!(s.stats().cwnd_bytes, Some(MSS));
    assert_eq!(
        s.poll_timeout(),
        Some(first + crate::units::Duration::from_secs(2))
    );
    // The ACK of 0 arrives: go-back-N resends 1 and 2 (cwnd 2 in slow start).
    s.handle_packet(ms(1100), &ack(1, first));
    assert_eq!(drain(&mut s, ms(1100)), vec![1, 2]);
    assert_eq!(s.stats().timeouts, 1);
}

#[test]
fn stop_ends_new_data_but_not_repair() {
    let mut s = sender(4);
    drain(&mut s, ms(0));
    s.handle_stop(ms(1));
    s.handle_packet(ms(10), &ack(1, ms(0)));
    assert!(drain(&mut s, ms(10)).is_empty());
    s.handle_timeout(ms(1000));
    assert_eq!(
        drain(&mut s, ms(1000)),
        vec![1],
        "lost data is still repaired"
    );
}

proptest::proptest! {
    /// Segments arriving in any order, some twice, with SACK or not: every ACK
    /// acknowledges the lowest segment not yet received, and the bytes delivered are those
    /// of the segments below it, each counted once (against a set of what has arrived);
    /// its ACKs are counted as sent.
    #[test]
    fn the_receiver_delivers_in_order_whatever_the_arrival_order(
        arrivals in proptest::collection::vec(0u64..300, 1..600),
        sack in proptest::bool::ANY,
    ) {
        let size = |seq: u64| 500 + (seq % 7) as u32 * 100;
        let mut r = TcpReceiver::with_options(FlowId(0), 40, None, sack);
        let mut seen = std::collections::BTreeSet::new();
        let mut acks = 0;
        for seq in arrivals {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, size(seq));
            p.seq = seq;
            r.handle_packet(ms(1), &p);
            seen.insert(seq);
            let next = (0..).find(|s| !seen.contains(s)).unwrap();
            let ack = r.poll_transmit(ms(1)).unwrap();
            acks += 1;
            proptest::prop_assert_eq!(ack.ack_info().unwrap().0, next);
            let bytes: u64 = (0..next).map(|s| size(s) as u64).sum();
            let stats = r.stats();
            proptest::prop_assert_eq!(stats.delivered_bytes, bytes);
            // Its ACKs are counted as sent, 40 bytes each.
            proptest::prop_assert_eq!(
                (stats.sent_packets, stats.sent_bytes),
                (acks, 40 * acks)
            );
        }
    }
}

#[test]
fn receiver_buffers_out_of_order_and_acks_cumulatively() {
    let mut r = TcpReceiver::new(FlowId(0), 40);
    let mut acks = vec![];
    for seq in [0, 2, 3, 1, 5] {
        let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
        p.seq = seq;
        p.sent_at = ms(seq);
        r.handle_packet(ms(10), &p);
        let a = r.poll_transmit(ms(10)).unwrap();
        let (next, echo) = a.ack_info().unwrap();
        assert_eq!(echo, ms(seq));
        acks.push(next);
    }
    assert_eq!(acks, vec![1, 1, 1, 4, 4]);
    assert_eq!(r.stats().delivered_bytes, 4000);
}

#[test]
fn ecn_echo_halves_once_per_window() {
    let cfg = TcpSettings {
        initial_window: 8,
        ecn: true,
        ..TcpSettings::default()
    };
    let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 8));
    s.handle_start(Time::ZERO);
    let sent = drain(&mut s, ms(0));
    assert_eq!(sent.len(), 8);
    let mut a = ack(1, ms(0));
    a.ecn.set_echo();
    s.handle_packet(ms(10), &a);
    let after_first = s.stats().cwnd_bytes.unwrap();
    // The echo is handled after the ACK: 7 segments in flight → ssthresh 3.5 segments.
    assert_eq!(after_first, 3500);
    let mut b = ack(2, ms(0));
    b.ecn.set_echo();
    s.handle_packet(ms(10), &b);
    assert!(
        s.stats().cwnd_bytes.unwrap() >= after_first,
        "no second reduction in one window"
    );
    assert_eq!(s.stats().retransmits, 0);
}

/// A fixed 200-segment window paced at 8 Mb/s (one 1000 B segment per ms), recording what
/// the transport tells it.
#[derive(Default)]
struct Probe {
    sent: std::sync::Arc<std::sync::Mutex<Vec<(Time, SentSample)>>>,
    rates: std::sync::Arc<std::sync::Mutex<Vec<crate::units::Rate>>>,
    events: std::sync::Arc<std::sync::Mutex<Vec<Congestion>>>,
}

impl CongestionController for Probe {
    fn on_sent(&mut self, now: Time, s: &SentSample) {
        self.sent.lock().unwrap().push((now, *s));
    }
    fn on_ack(&mut self, _: Time, a: &AckSample) {
        if let Some(r) = a.rate {
            self.rates.lock().unwrap().push(r.delivery_rate);
        }
    }
    fn on_congestion_event(&mut self, _: Time, e: &CongestionEvent) {
        self.events.lock().unwrap().push(e.kind);
    }
    fn window(&self) -> u64 {
        200 * MSS
    }
    fn pacing_rate(&self) -> Option<crate::units::Rate> {
        Some(crate::units::Rate::from_mbps(8))
    }
    fn wants_rate_samples(&self) -> bool {
        true
    }
}

/// With a send overhead below the pacing gap, each segment leaves within the overhead after
/// its slot on the pacer's schedule, and the schedule does not drift: the paced rate holds.
#[test]
fn send_overhead_jitters_a_paced_sender_without_slowing_it() {
    let max = Duration::from_micros(500);
    let mut s = TcpSender::new(FlowId(0), TcpSettings::default(), Probe::default())
        .with_send_overhead(max, crate::rng::stream(3, "t"));
    s.handle_start(Time::ZERO);
    let mut sent = Vec::new();
    let mut t = Time::ZERO;
    while sent.len() < 150 {
        sent.extend(std::iter::from_fn(|| s.poll_transmit(t)).map(|_| t));
        t = s.poll_timeout().expect("paced or held");
    }
    // Segment k's slot is k ms (8 Mb/s, 1000 B); it leaves in [slot, slot + overhead].
    for (k, at) in sent.iter().enumerate() {
        let slot = ms(k as u64);
        assert!(*at >= slot && *at <= slot + max, "segment {k} at {at}");
    }
    assert!(sent.iter().enumerate().any(|(k, at)| *at > ms(k as u64)));
}

#[test]
fn a_pacing_controller_is_paced_told_of_each_send_and_given_rate_samples() {
    let probe = Probe::default();
    let (sent, rates, events) = (
        probe.sent.clone(),
        probe.rates.clone(),
        probe.events.clone(),
    );
    let mut s = TcpSender::new(FlowId(0), TcpSettings::default(), probe);
    s.handle_start(Time::ZERO);
    // The window allows 200 segments at once, the pacer one per ms.
    let mut t = Time::ZERO;
    while t < ms(20) {
        drain(&mut s, t);
        t = s.poll_timeout().unwrap().min(ms(20));
    }
    let times: Vec<Time> = sent.lock().unwrap().iter().map(|(t, _)| *t).collect();
    assert_eq!(times, (0..20).map(ms).collect::<Vec<_>>());
    assert!(sent
        .lock()
        .unwrap()
        .iter()
        .all(|(_, x)| !x.retransmission && x.bytes == MSS));
    assert_eq!(sent.lock().unwrap()[5].1.in_flight, 5 * MSS);
    // Each segment is ACKed 50 ms after it left; run 200 ms, 1 ms at a time. From the
    // second round on (the 51st sample), every delivery-rate sample is the paced rate (the first round's
    // samples measure from the flight's start, DRE §3.3, and ramp up).
    for t in 20..200 {
        let due: Vec<u64> = sent
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, _)| *at + Duration::from_millis(50) == ms(t))
            .map(|(_, x)| x.seq)
            .collect();
        for seq in due {
            s.handle_packet(ms(t), &ack(seq + 1, ms(t - 50)));
        }
        drain(&mut s, ms(t));
    }
    let r = rates.lock().unwrap();
    assert!(r.len() > 100, "{}", r.len());
    assert!(
        r[50..]
            .iter()
            .all(|r| r.bps().abs_diff(8_000_000) < 200_000),
        "{r:?}"
    );
    drop(r);
    let last = sent.lock().unwrap().last().unwrap().1.seq;
    // Three duplicate ACKs: one congestion event, of kind Loss.
    let una = s.snd_una;
    assert!(una < last);
    for _ in 0..3 {
        s.handle_packet(ms(200), &ack(una, ms(150)));
    }
    assert_eq!(*events.lock().unwrap(), [Congestion::Loss]);
}

fn data(seq: u64, sent: Time) -> Packet {
    let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
    p.seq = seq;
    p.sent_at = sent;
    p
}

#[test]
fn delayed_acks_cover_two_segments_or_wait_at_most_the_delay() {
    let mut r = TcpReceiver::with_delayed_ack(FlowId(0), 40, Some(Duration::from_millis(40)));
    // Two in-order segments: one ACK, for both, echoing the first one's timestamp.
    r.handle_packet(ms(10), &data(0, ms(1)));
    assert!(r.poll_transmit(ms(10)).is_none());
    assert_eq!(r.poll_timeout(), Some(ms(50)));
    r.handle_packet(ms(11), &data(1, ms(2)));
    let a = r.poll_transmit(ms(11)).unwrap();
    assert_eq!(a.ack_info(), Some((2, ms(1))));
    assert!(r.poll_transmit(ms(11)).is_none() && r.poll_timeout().is_none());
    // A lone segment: acknowledged when the delay runs out.
    r.handle_packet(ms(20), &data(2, ms(3)));
    r.handle_timeout(ms(59));
    assert!(r.poll_transmit(ms(59)).is_none());
    r.handle_timeout(ms(60));
    assert_eq!(
        r.poll_transmit(ms(60)).unwrap().ack_info(),
        Some((3, ms(3)))
    );
    // Out of order: at once (a duplicate ACK); the segment that fills the hole: at once.
    r.handle_packet(ms(70), &data(4, ms(4)));
    assert_eq!(
        r.poll_transmit(ms(70)).unwrap().ack_info(),
        Some((3, ms(4)))
    );
    r.handle_packet(ms(71), &data(3, ms(5)));
    assert_eq!(
        r.poll_transmit(ms(71)).unwrap().ack_info(),
        Some((5, ms(5)))
    );
    // RFC 8257 §3.2: an unmarked segment waits; a marked one changes the CE state, which
    // sends the waiting ACK at once without ECE; the marked one then waits in turn and
    // its ACK, covering two marked segments, carries ECE.
    let marked = |seq, sent| {
        let mut p = data(seq, sent);
        p.ecn = Ecn::ECT;
        p.ecn.mark();
        p
    };
    r.handle_packet(ms(79), &data(5, ms(6)));
    assert!(r.poll_transmit(ms(79)).is_none());
    r.handle_packet(ms(80), &marked(6, ms(7)));
    let a = r.poll_transmit(ms(80)).unwrap();
    assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((6, ms(6))), false));
    assert!(r.poll_transmit(ms(80)).is_none());
    r.handle_packet(ms(81), &marked(7, ms(8)));
    let a = r.poll_transmit(ms(81)).unwrap();
    assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((8, ms(7))), true));
    // Back to unmarked: a lone segment's delayed ACK, without ECE.
    r.handle_packet(ms(90), &data(8, ms(9)));
    r.handle_timeout(ms(130));
    let a = r.poll_transmit(ms(130)).unwrap();
    assert_eq!((a.ack_info(), a.ecn.is_echo()), (Some((9, ms(9))), false));
    assert!(check_delayed_ack(Some(Duration::from_millis(500))).is_err());
    assert!(check_delayed_ack(Some(Duration::ZERO)).is_err());
    assert!(check_delayed_ack(Some(Duration::from_millis(200))).is_ok());
}

/// A data segment `seq`, CE-marked if `ce`, as an L4S sender sends it.
fn l4s_data(seq: u64, ce: bool) -> Packet {
    let mut p = Packet::new(FlowId(0), PacketKind::Data, MSS as u32);
    p.seq = seq;
    p.ecn = Ecn::ECT1;
    if ce {
        p.ecn.mark();
    }
    p
}

/// RFC 9768 §3.2.2: the receiver counts CE packets from 5 and every ACK carries the count
/// modulo 8; a CE packet after one that was not, or a second CE since the last ACK, is
/// acknowledged at once even with delayed ACKs (§3.2.2.5.1).
#[test]
fn an_accecn_receiver_counts_ce_packets_in_every_ack() {
    let mut r =
        TcpReceiver::with_delayed_ack(FlowId(0), 40, Some(Duration::from_millis(40))).with_accecn();
    let mut acks = Vec::new();
    let deliver = |r: &mut TcpReceiver, seq: u64, ce: bool, acks: &mut Vec<(u64, u8)>| {
        r.handle_packet(ms(seq), &l4s_data(seq, ce));
        while let Some(a) = r.poll_transmit(ms(seq)) {
            assert!(!a.ecn.is_echo(), "no RFC 3168 echo under AccECN");
            acks.push((a.ack_info().unwrap().0, a.ecn.ace()));
        }
    };
    deliver(&mut r, 0, false, &mut acks); // delayed
    deliver(&mut r, 1, false, &mut acks); // the second: ACK, ACE = 5
    deliver(&mut r, 2, true, &mut acks); // CE after not-CE: at once, ACE = 6
    deliver(&mut r, 3, true, &mut acks); // delayed (one CE since the last ACK)
    deliver(&mut r, 4, true, &mut acks); // second segment: ACK, ACE = 0 (8 mod 8)
    assert_eq!(acks, vec![(2, 5), (3, 6), (5, 0)]);
}

/// RFC 9768 §3.2.2.3 and Appendix A.2: the sender decodes the marks each ACK newly reports
/// from ACE, and when an ACK covers 8 or more segments assumes ACE may have wrapped.
#[test]
fn an_accecn_sender_decodes_ace_and_guards_against_its_wrap() {
    let cfg = TcpSettings {
        initial_window: 40,
        ecn: true,
        l4s: true,
        ..TcpSettings::default()
    };
    let mut s = TcpSender::new(FlowId(0), cfg, Reno::new(MSS, 40));
    s.handle_start(Time::ZERO);
    let sent: Vec<Packet> = std::iter::from_fn(|| s.poll_transmit(ms(0))).collect();
    assert!(sent.iter().all(|p| p.ecn == Ecn::ECT1), "ECT(1) data");
    let ace_ack = |next: u64, cep: u64| {
        let mut a = ack(next, ms(0));
        a.ecn.set_ace(cep);
        a
    };
    // Two segments, none marked (r.cep still 5): no reaction.
    s.handle_packet(ms(10), &ace_ack(2, 5));
    assert_eq!(s.s_cep, 5);
    let cwnd = s.stats().cwnd_bytes.unwrap();
    assert!(cwnd > 40 * MSS);
    // Two more, one marked: d.cep = 1, a reduction.
    s.handle_packet(ms(11), &ace_ack(4, 6));
    assert_eq!(s.s_cep, 6);
    assert!(s.stats().cwnd_bytes.unwrap() < cwnd);
    // An ACK of 10 segments whose ACE went 6 → 1 (3 mod 8): 3, or 11 after a wrap; the safe
    // reading is the largest ≤ 10 congruent to 3: 3.
    s.handle_packet(ms(12), &ace_ack(14, 1));
    assert_eq!(s.s_cep, 9);
    // 12 segments acknowledged, ACE unchanged (0 mod 8): 0 or 8 — assume 8.
    s.handle_packet(ms(13), &ace_ack(26, 9));
    assert_eq!(s.s_cep, 17);
}
