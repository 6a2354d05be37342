//! BBRv3 (draft-ietf-ccwg-bbr, "BBRv3" below; Linux's tcp_bbr.c of the v3 release), beside
//! BBR v1 (mod.rs).
//!
//! The model adds to v1's max bandwidth and min RTT the bounds v3 learns from loss and ECN:
//! `inflight_hi` (the volume in flight at which the path last showed too much loss or
//! marking, §4.5.10), and the short-term `bw_lo` / `inflight_lo` that each round with loss
//! cuts by β = 0.7 outside bandwidth probing (§4.5.10.3). The states:
//!
//! - **Startup**: pacing gain 2.77, cwnd gain 2, until the bandwidth has not grown 25% for
//!   three rounds, or a round shows too much loss (§4.3.1.3 BBRCheckStartupHighLoss);
//! - **Drain**: pacing gain 0.35 until what is in flight is down to one BDP (§4.3.2);
//! - **ProbeBW**, four phases (§4.3.3): DOWN (pacing 0.9, until in flight is at most a BDP and
//!   under `inflight_hi` less 15% headroom), CRUISE (1.0), REFILL (1.0 for one round, after
//!   resetting the short-term bounds), UP (1.25, cwnd gain 2.25, raising `inflight_hi` by a
//!   slope that doubles each round, until the bandwidth stops growing or the loss rate
//!   exceeds 2%). A new probe starts after a random 2–3 s, or after as many rounds as Reno
//!   would take to grow by a BDP (at most 63: Reno coexistence, §4.3.3.5);
//! - **ProbeRTT**: every 5 s without a lower RTT, cwnd = 0.5 × BDP for 200 ms and a round
//!   (§4.3.4).
//!
//! The bandwidth estimate is the maximum delivery rate over the last two probe cycles
//! (§4.5.2.4), bounded by `bw_lo`; the pacing rate is 1% under gain × bw (§4.6.2); cwnd is
//! gain × BDP plus three send quanta, capped by `inflight_hi` (less the headroom in CRUISE
//! and ProbeRTT) and `inflight_lo` (§4.6.4.6 BBRBoundCwndForModel). Loss recovery keeps v1's
//! packet conservation and timeout handling (recovery.rs, shared).
//!
//! Departures, all deliberate:
//! - Rounds, as in v1, end when the cumulative ACK passes the highest segment sent when the
//!   round began.
//! - The loss signal is per round, not per rate sample: the bytes retransmitted in the round
//!   (each retransmission is a segment the transport declared lost) against the bytes
//!   delivered and lost in it; "too much" is more than `loss_thresh` (2%) of them. Startup's
//!   high-loss exit asks in addition for at least 6 lost segments in the round (the draft
//!   counts 6 discontiguous lost ranges).
//! - ECN (`ecn = true`, off by default as in Linux): the fraction of bytes acknowledged with
//!   an echo in a round above `ecn_thresh` (0.5) is "too much", as loss is; the receiver
//!   echoes CE per ACK as acclab's receivers always do.
//! - "cwnd-limited" (UP's growth of `inflight_hi`) is an ACK whose in-flight volume was within
//!   a segment of cwnd. No `extra_acked` aggregation allowance (§4.5.6), no idle restart.

use rand::RngExt;

use super::model::MaxFilter;
use super::recovery::Recovery;
use crate::cc::{AckSample, CongestionController, CongestionEvent, SentSample};
use crate::params::{in_range, FlowContext, ParamError, SchemeParams};
use crate::rng::Rng;
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};

/// BBRv3 §4.6.4.1 BBRMinPipeCwnd, segments.
const MIN_PIPE_CWND: u64 = 4;
/// §2.7: BBRStartupPacingGain = 4·ln 2 ≈ 2.77.
const STARTUP_PACING_GAIN: f64 = 2.77;
/// §2.7: BBRStartupCwndGain.
const STARTUP_CWND_GAIN: f64 = 2.0;
/// §2.7: BBRDrainPacingGain.
const DRAIN_PACING_GAIN: f64 = 0.35;
/// §2.7: the default cwnd gain (ProbeBW other than UP, Drain).
const DEFAULT_CWND_GAIN: f64 = 2.0;
/// §4.3.3.5: ProbeBW_UP's cwnd gain.
const UP_CWND_GAIN: f64 = 2.25;
/// §4.3.3: the ProbeBW phases' pacing gains.
const DOWN_PACING_GAIN: f64 = 0.9;
const UP_PACING_GAIN: f64 = 1.25;
/// §4.6.4.5: ProbeRTT's cwnd gain.
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// §4.6.2: BBRPacingMarginPercent.
const PACING_MARGIN: f64 = 0.01;
/// §4.3.1.3: BBRStartupFullLossCnt.
const STARTUP_FULL_LOSS_COUNT: u64 = 6;
/// §4.3.3.5: the largest Reno-coexistence wait, rounds.
const MAX_RENO_ROUNDS: u64 = 63;

/// BBRv3's states (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

/// §4.5.10: where the ACKs of a bandwidth probe stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// BBRv3's state.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    mss: u64,
    p: Bbr3Params,
    rng: Rng,
    state: State,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: Rate,
    cwnd: u64,
    recovery: Recovery,
    has_rtt: bool,

    // Rounds (§4.5.1).
    delivered: u64,
    round_count: u64,
    round_end: Option<u64>,
    round_start: bool,

    // The long-term model.
    /// Max delivery rate over the last two probe cycles, bit/s (§4.5.2.4).
    max_bw: MaxFilter,
    cycle_count: u64,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Time,
    probe_rtt_min_delay: Option<Duration>,
    probe_rtt_min_stamp: Time,
    /// §4.5.10.2 inflight_hi (inflight_longterm), bytes.
    inflight_hi: Option<u64>,

    // The short-term model (§4.5.10.3).
    bw_lo: Option<u64>,
    inflight_lo: Option<u64>,
    bw_latest: u64,
    inflight_latest: u64,

    // This round's signals.
    round_delivered: u64,
    round_lost: u64,
    round_lost_segments: u64,
    round_ce: u64,

    // Startup.
    filled_pipe: bool,
    full_bw: u64,
    full_bw_count: u32,

    // ProbeBW.
    ack_phase: AckPhase,
    cycle_stamp: Time,
    bw_probe_wait: Duration,
    rounds_since_bw_probe: u64,
    bw_probe_up_cnt: u64,
    bw_probe_up_acks: u64,
    bw_probe_up_rounds: u32,
    /// UP's own plateau detection (§4.3.3.6 full_bw_now).
    up_full_bw: u64,
    up_full_bw_count: u32,

    // ProbeRTT.
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
}

impl Bbr3 {
    pub fn new(mss: u64, p: &Bbr3Params, rng: Rng) -> Bbr3 {
        let initial = p.initial_window.max(1) * mss;
        // §4.6.2 BBRInitPacingRate: InitialCwnd / (SRTT or 1 ms) × the startup gain.
        let nominal = initial as f64 * 8.0 / 1e-3;
        Bbr3 {
            mss,
            rng,
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            pacing_rate: Rate::from_bps((STARTUP_PACING_GAIN * nominal) as u64),
            cwnd: initial,
            recovery: Recovery::default(),
            has_rtt: false,
            delivered: 0,
            round_count: 0,
            round_end: None,
            round_start: false,
            max_bw: MaxFilter::new(2),
            cycle_count: 0,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Time::ZERO,
            inflight_hi: None,
            bw_lo: None,
            inflight_lo: None,
            bw_latest: 0,
            inflight_latest: 0,
            round_delivered: 0,
            round_lost: 0,
            round_lost_segments: 0,
            round_ce: 0,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            ack_phase: AckPhase::Init,
            cycle_stamp: Time::ZERO,
            bw_probe_wait: Duration::from_secs(2),
            rounds_since_bw_probe: 0,
            bw_probe_up_cnt: u64::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            up_full_bw: 0,
            up_full_bw_count: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            p: p.clone(),
        }
    }

    /// The state-machine state.
    pub fn state(&self) -> State {
        self.state
    }

    /// `inflight_hi`, bytes, once a probe has found one.
    pub fn inflight_hi(&self) -> Option<u64> {
        self.inflight_hi
    }

    /// §4.5.2.5 BBRBoundBWForModel: bw = min(max_bw, bw_lo), bit/s.
    pub fn bw(&self) -> u64 {
        let max = self.max_bw.get();
        self.bw_lo.map_or(max, |lo| max.min(lo))
    }

    fn initial_cwnd(&self) -> u64 {
        self.p.initial_window.max(1) * self.mss
    }

    /// §4.6.3 BBRSetSendQuantum, bytes.
    fn send_quantum(&self) -> u64 {
        let bps = self.pacing_rate.bps();
        if bps < 1_200_000 {
            self.mss
        } else if bps < 24_000_000 {
            2 * self.mss
        } else {
            (bps / 8 / 1000).min(64_000)
        }
    }

    /// §4.6.4.2 BBRBDPMultiple: gain × bw × min_rtt, bytes; `None` before an RTT sample.
    fn bdp(&self, gain: f64) -> Option<u64> {
        let rtt = self.min_rtt?;
        Some((gain * self.bw() as f64 / 8.0 * rtt.as_secs_f64()) as u64)
    }

    /// §4.6.4.2 BBRInflight: BDP × gain plus three send quanta; the initial window before
    /// any RTT sample.
    fn inflight(&self, gain: f64) -> u64 {
        self.bdp(gain)
            .map_or(self.initial_cwnd(), |b| b + 3 * self.send_quantum())
    }

    /// §4.5.10.2 BBRInflightWithHeadroom: inflight_hi less 15%, at least the minimum pipe.
    fn inflight_with_headroom(&self) -> u64 {
        match self.inflight_hi {
            None => u64::MAX,
            Some(hi) => {
                let headroom = ((self.p.headroom * hi as f64) as u64).max(self.mss);
                hi.saturating_sub(headroom).max(MIN_PIPE_CWND * self.mss)
            }
        }
    }

    fn is_probing_bw(&self) -> bool {
        matches!(
            self.state,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    fn in_probe_bw(&self) -> bool {
        matches!(
            self.state,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    fn set_state(&mut self, state: State, pacing_gain: f64, cwnd_gain: f64) {
        self.state = state;
        self.pacing_gain = pacing_gain;
        self.cwnd_gain = cwnd_gain;
    }

    // ---- Signals (§4.5.10) ----

    /// §4.5.10.1 IsInflightTooHigh, per round (see the header): loss above `loss_thresh` of
    /// the round's traffic, or (with ECN) echoes above `ecn_thresh` of its bytes.
    fn too_high(&self) -> bool {
        let traffic = self.round_delivered + self.round_lost;
        let lossy =
            self.round_lost > 0 && self.round_lost as f64 > self.p.loss_thresh * traffic as f64;
        let marked = self.p.ecn
            && self.round_delivered > 0
            && self.round_ce as f64 > self.p.ecn_thresh * self.round_delivered as f64;
        lossy || marked
    }

    /// §4.5.10.2 BBRHandleInflightTooHigh: remember the volume that hurt, and stop probing.
    fn handle_too_high(&mut self, now: Time, in_flight: u64) {
        let target = self.inflight(1.0);
        let hi = in_flight.max((self.p.beta * target as f64) as u64);
        self.inflight_hi = Some(hi.max(MIN_PIPE_CWND * self.mss));
        if self.state == State::ProbeBwUp {
            self.start_down(now);
        }
    }

    /// §4.5.10.3 BBRAdaptLowerBoundsFromCongestion, at the end of a round with loss (or
    /// marks), outside bandwidth probing: bw_lo and inflight_lo cut by β, no lower than what
    /// the round delivered.
    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bw() || !(self.round_lost > 0 || (self.p.ecn && self.round_ce > 0)) {
            return;
        }
        let bw_lo = self.bw_lo.unwrap_or(self.max_bw.get());
        let inflight_lo = self.inflight_lo.unwrap_or(self.cwnd);
        self.bw_lo = Some(self.bw_latest.max((self.p.beta * bw_lo as f64) as u64));
        self.inflight_lo = Some(
            self.inflight_latest
                .max((self.p.beta * inflight_lo as f64) as u64),
        );
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = None;
        self.inflight_lo = None;
    }

    // ---- Startup and Drain (§4.3.1, §4.3.2) ----

    /// §4.3.1.2 BBRCheckFullBWReached and §4.3.1.3 BBRCheckStartupHighLoss.
    fn check_startup_done(&mut self, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        if self.state == State::Startup
            && self.too_high()
            && self.round_lost_segments >= STARTUP_FULL_LOSS_COUNT
        {
            // §4.3.1.3: inflight_hi = max(BDP, inflight_latest).
            let bdp = self.inflight(1.0);
            self.inflight_hi = Some(bdp.max(self.inflight_latest));
            self.filled_pipe = true;
        } else {
            let bw = self.max_bw.get();
            if bw as f64 >= self.full_bw as f64 * 1.25 {
                self.full_bw = bw;
                self.full_bw_count = 0;
            } else {
                self.full_bw_count += 1;
                if self.full_bw_count >= 3 {
                    self.filled_pipe = true;
                }
            }
        }
        if self.filled_pipe && self.state == State::Startup {
            self.set_state(State::Drain, DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN);
        }
    }

    /// §4.3.2 BBRCheckDrainDone.
    fn check_drain_done(&mut self, now: Time, in_flight: u64) {
        if self.state == State::Drain && in_flight <= self.inflight(1.0) {
            self.start_down(now);
        }
    }

    // ---- ProbeBW (§4.3.3) ----

    /// §4.3.3.6 BBRStartProbeBW_DOWN: a new cycle, a new wait before the next probe.
    fn start_down(&mut self, now: Time) {
        self.bw_probe_up_cnt = u64::MAX;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_bw_probe = 0;
        // §4.3.3.5 BBRPickProbeWait: 2 s plus up to 1 s at random.
        let extra = self.rng.random_range(0..1_000_000_000u64);
        self.bw_probe_wait = Duration::from_secs(2) + Duration(extra);
        self.cycle_stamp = now;
        // §4.5.2.4 BBRAdvanceMaxBwFilter.
        self.cycle_count += 1;
        self.max_bw.expire(self.cycle_count);
        self.start_round();
        self.set_state(State::ProbeBwDown, DOWN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    fn start_cruise(&mut self) {
        self.set_state(State::ProbeBwCruise, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §4.3.3.6 BBRStartProbeBW_REFILL.
    fn start_refill(&mut self) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(State::ProbeBwRefill, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §4.3.3.6 BBRStartProbeBW_UP.
    fn start_up(&mut self, now: Time) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.up_full_bw = 0;
        self.up_full_bw_count = 0;
        self.cycle_stamp = now;
        self.set_state(State::ProbeBwUp, UP_PACING_GAIN, UP_CWND_GAIN);
        self.raise_inflight_hi_slope();
    }

    /// §4.5.1 BBRStartRound: the next round ends after what is sent from now.
    fn start_round(&mut self) {
        self.round_end = None;
    }

    /// §4.3.3.5 BBRIsTimeToProbeBW: the random wait has passed, or Reno would have probed.
    fn time_to_probe(&self, now: Time) -> bool {
        if now.since(self.cycle_stamp) >= self.bw_probe_wait {
            return true;
        }
        // BBRIsRenoCoexistenceProbeTime: rounds ≥ min(BDP in packets, 63).
        let reno_rounds = (self.inflight(1.0) / self.mss).min(MAX_RENO_ROUNDS);
        self.rounds_since_bw_probe >= reno_rounds
    }

    /// §4.3.3.6 BBRIsTimeToCruise.
    fn time_to_cruise(&self, in_flight: u64) -> bool {
        in_flight <= self.inflight_with_headroom() && in_flight <= self.inflight(1.0)
    }

    /// §4.5.10.2 BBRRaiseInflightHiSlope: inflight_hi grows by 1, 2, 4, … segments per round.
    fn raise_inflight_hi_slope(&mut self) {
        let growth = 1u64 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (self.cwnd / self.mss / growth).max(1);
    }

    /// §4.5.10.2 BBRProbeInflightHiUpward.
    fn probe_inflight_hi_upward(&mut self, acked: u64, cwnd_limited: bool) {
        let Some(hi) = self.inflight_hi else { return };
        if !cwnd_limited || self.cwnd < hi {
            return;
        }
        self.bw_probe_up_acks += acked / self.mss.max(1);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = Some(hi + delta * self.mss);
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// §4.5.10.2 BBRAdaptUpperBounds, then §4.3.3.6 BBRUpdateProbeBWCyclePhase.
    fn update_probe_bw(
        &mut self,
        now: Time,
        ack: &AckSample,
        in_flight: u64,
        cwnd_limited: bool,
        rate: u64,
    ) {
        if !self.filled_pipe {
            return;
        }
        if self.round_start {
            self.ack_phase = match self.ack_phase {
                AckPhase::ProbeStarting => AckPhase::ProbeFeedback,
                AckPhase::ProbeStopping => AckPhase::Init,
                other => other,
            };
        }
        if !self.in_probe_bw() {
            return;
        }
        if let Some(hi) = self.inflight_hi {
            if ack.in_flight > hi && !self.too_high() {
                self.inflight_hi = Some(ack.in_flight);
            }
        }
        match self.state {
            State::ProbeBwDown => {
                if self.time_to_probe(now) {
                    self.start_refill();
                } else if self.time_to_cruise(in_flight) {
                    self.start_cruise();
                }
            }
            State::ProbeBwCruise if self.time_to_probe(now) => self.start_refill(),
            State::ProbeBwRefill if self.round_start => self.start_up(now),
            State::ProbeBwUp => {
                self.probe_inflight_hi_upward(ack.acked_bytes, cwnd_limited);
                // §4.3.3.6 BBRIsTimeToGoDown: limited by inflight_hi, the bandwidth plateau
                // is not measured; otherwise three rounds under 25% growth end the probe.
                if cwnd_limited && self.inflight_hi.is_some_and(|hi| self.cwnd >= hi) {
                    self.up_full_bw = rate;
                    self.up_full_bw_count = 0;
                } else if self.round_start {
                    if rate as f64 >= self.up_full_bw as f64 * 1.25 {
                        self.up_full_bw = rate;
                        self.up_full_bw_count = 0;
                    } else {
                        self.up_full_bw_count += 1;
                        if self.up_full_bw_count >= 3 {
                            self.ack_phase = AckPhase::ProbeStopping;
                            self.start_down(now);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    // ---- ProbeRTT (§4.3.4) ----

    /// §4.5.3 BBRUpdateMinRTT: the 5 s probe_rtt_min_delay, and min_rtt over 10 s from it.
    /// Returns whether ProbeRTT is due.
    fn update_min_rtt(&mut self, now: Time, rtt: Option<Duration>) -> bool {
        let expired = now > self.probe_rtt_min_stamp + self.p.probe_rtt_interval;
        if let Some(r) = rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| r < m) || expired {
                self.probe_rtt_min_delay = Some(r);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.p.min_rtt_filter;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        expired
    }

    /// §4.3.4.4 BBRCheckProbeRTT.
    fn check_probe_rtt(&mut self, now: Time, due: bool, ack: &AckSample, in_flight: u64) {
        if self.state != State::ProbeRtt && due && self.has_rtt {
            self.recovery.save(self.cwnd, false);
            self.set_state(State::ProbeRtt, 1.0, PROBE_RTT_CWND_GAIN);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state != State::ProbeRtt {
            return;
        }
        match self.probe_rtt_done_stamp {
            None if in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(now + self.p.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.round_end = Some(ack.highest_sent);
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    // §4.3.4.5 BBRExitProbeRTT.
                    self.probe_rtt_min_stamp = now;
                    self.reset_lower_bounds();
                    self.cwnd = self.recovery.restored(self.cwnd);
                    if self.filled_pipe {
                        self.start_down(now);
                        self.start_cruise();
                    } else {
                        self.set_state(State::Startup, STARTUP_PACING_GAIN, STARTUP_CWND_GAIN);
                    }
                }
            }
        }
    }

    /// §4.6.4.5 BBRProbeRTTCwnd: half a BDP, at least the minimum pipe.
    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp(PROBE_RTT_CWND_GAIN)
            .unwrap_or(0)
            .max(MIN_PIPE_CWND * self.mss)
    }

    // ---- Control (§4.6) ----

    /// §4.6.2 BBRSetPacingRateWithGain: 1% under gain × bw; never lower before the pipe is
    /// full.
    fn set_pacing_rate(&mut self, rtt: Option<Duration>) {
        if let (false, Some(r)) = (self.has_rtt, rtt) {
            self.has_rtt = true;
            if self.max_bw.get() == 0 && r.0 > 0 {
                let nominal = self.initial_cwnd() as f64 * 8.0 / r.as_secs_f64();
                self.pacing_rate = Rate::from_bps((STARTUP_PACING_GAIN * nominal) as u64);
            }
        }
        let rate = (self.pacing_gain * self.bw() as f64 * (1.0 - PACING_MARGIN)) as u64;
        if rate > 0 && (self.filled_pipe || rate > self.pacing_rate.bps()) {
            self.pacing_rate = Rate::from_bps(rate);
        }
    }

    /// §4.6.4.6 BBRSetCwnd with BBRBoundCwndForProbeRTT and BBRBoundCwndForModel.
    fn set_cwnd(&mut self, acked: u64) {
        if !self.recovery.conserving(self.round_count) {
            let target = self.inflight(self.cwnd_gain);
            if self.filled_pipe {
                self.cwnd = (self.cwnd + acked).min(target);
            } else if self.cwnd < target || self.delivered < self.initial_cwnd() {
                self.cwnd += acked;
            }
        }
        let min_pipe = MIN_PIPE_CWND * self.mss;
        self.cwnd = self.cwnd.max(min_pipe);
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        let mut cap = match self.state {
            State::ProbeBwCruise | State::ProbeRtt => self.inflight_with_headroom(),
            _ if self.in_probe_bw() => self.inflight_hi.unwrap_or(u64::MAX),
            _ => u64::MAX,
        };
        if let Some(lo) = self.inflight_lo {
            cap = cap.min(lo);
        }
        self.cwnd = self.cwnd.min(cap.max(min_pipe));
    }
}

impl CongestionController for Bbr3 {
    fn on_sent(&mut self, _now: Time, s: &SentSample) {
        if s.retransmission {
            // Each retransmission is a segment the transport declared lost (see the header).
            self.round_lost += s.bytes;
            self.round_lost_segments += 1;
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        self.delivered += ack.acked_bytes;
        // §4.5.1 BBRUpdateRound. At a round's start its signals are judged, then reset.
        self.round_start = false;
        if self.round_end.is_none_or(|end| ack.cumulative_ack > end) {
            self.round_end = Some(ack.highest_sent);
            self.round_count += 1;
            self.round_start = true;
            self.rounds_since_bw_probe += 1;
        }
        let in_flight = ack.in_flight.saturating_sub(ack.acked_bytes);
        let cwnd_limited = ack.in_flight + self.mss >= self.cwnd;
        let app_limited = ack.rate.is_some_and(|r| r.is_app_limited);
        let rate = ack.rate.map_or(0, |r| r.delivery_rate.bps());
        // §4.5.2 BBRUpdateMaxBw.
        if let Some(rs) = ack.rate {
            if rs.delivery_rate.bps() >= self.max_bw.get() || !rs.is_app_limited {
                self.max_bw.update(self.cycle_count, rs.delivery_rate.bps());
            }
            // §4.5.10.3 BBRUpdateLatestDeliverySignals.
            self.bw_latest = self.bw_latest.max(rs.delivery_rate.bps());
            self.inflight_latest = self.inflight_latest.max(rs.delivered);
        }
        self.round_delivered += ack.acked_bytes;
        let ce = match ack.ce_segments {
            Some(n) => n * self.mss,
            None if ack.ecn_echo => ack.acked_bytes,
            None => 0,
        };
        self.round_ce += ce.min(ack.acked_bytes);

        // Loss and ECN: while probing, too much of either ends the probe at once (§4.5.10.2).
        if self.too_high() && (self.state == State::ProbeBwUp || self.state == State::ProbeBwRefill)
        {
            self.handle_too_high(now, ack.in_flight);
        }
        self.check_startup_done(app_limited);
        self.check_drain_done(now, in_flight);
        self.update_probe_bw(now, ack, in_flight, cwnd_limited, rate);
        let due = self.update_min_rtt(now, ack.rtt);
        self.check_probe_rtt(now, due, ack, in_flight);
        if self.round_start {
            // §4.5.10.3: at the end of a round with congestion, the short-term bounds.
            self.adapt_lower_bounds();
            self.bw_latest = rate;
            self.inflight_latest = ack.rate.map_or(0, |r| r.delivered);
            self.round_delivered = 0;
            self.round_lost = 0;
            self.round_lost_segments = 0;
            self.round_ce = 0;
        }
        self.set_pacing_rate(ack.rtt);
        if let Some(cwnd) = self.recovery.on_ack(ack, self.cwnd) {
            self.cwnd = cwnd;
        }
        self.set_cwnd(ack.acked_bytes);
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        // §4.6.4.4: v1's recovery (recovery.rs); ECN is counted per ACK (on_ack), not here.
        let (mss, round, probe_rtt) = (self.mss, self.round_count, self.state == State::ProbeRtt);
        if let Some(cwnd) = self.recovery.on_event(ev, self.cwnd, mss, round, probe_rtt) {
            self.cwnd = cwnd;
        }
    }

    fn on_recovery_end(&mut self, _now: Time) {
        self.cwnd = self.recovery.end(self.cwnd);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn in_slow_start(&self) -> bool {
        self.state == State::Startup
    }

    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.pacing_rate)
    }

    /// The state (§4.3) as a number — 0 Startup, 1 Drain, 2 ProbeBW_DOWN, 3 ProbeBW_CRUISE,
    /// 4 ProbeBW_REFILL, 5 ProbeBW_UP, 6 ProbeRTT — the model's bw and inflight_hi.
    fn state(&self, out: &mut crate::transport::CcState) {
        let state = match self.state {
            State::Startup => 0.0,
            State::Drain => 1.0,
            State::ProbeBwDown => 2.0,
            State::ProbeBwCruise => 3.0,
            State::ProbeBwRefill => 4.0,
            State::ProbeBwUp => 5.0,
            State::ProbeRtt => 6.0,
        };
        out.push("bbr3_state", Some(state));
        out.push("bw_bps", Some(self.bw() as f64));
        out.push("inflight_hi_bytes", self.inflight_hi().map(|b| b as f64));
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn base_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
}

tcp_scheme_params! {
    /// `bbr3` parameters (draft-ietf-ccwg-bbr's defaults).
    pub struct Bbr3Params {
        /// BBRLossThresh: the loss rate of a round that is "too much" (0.02).
        pub loss_thresh: f64 = 0.02,
        /// BBRBeta: the cut of the short-term bounds per congested round (0.7).
        pub beta: f64 = 0.7,
        /// BBRHeadroom: the share of inflight_hi left free outside probing (0.15).
        pub headroom: f64 = 0.15,
        /// Use ECN marks as a congestion signal (false, as Linux's default).
        pub ecn: bool = false,
        /// The fraction of a round's bytes echoing CE that is "too much" (0.5).
        pub ecn_thresh: f64 = 0.5,
        /// ProbeRTTInterval: how long without a lower RTT before ProbeRTT ("5s").
        pub probe_rtt_interval: Duration = Duration::from_secs(5),
        /// MinRTTFilterLen ("10s").
        pub min_rtt_filter: Duration = Duration::from_secs(10),
        /// ProbeRTTDuration ("200ms").
        pub probe_rtt_duration: Duration = Duration::from_millis(200),
    }
    sack = true;
}

impl SchemeParams for Bbr3Params {
    fn validate(&self) -> Result<(), ParamError> {
        use std::ops::Bound::{Excluded, Included};
        in_range(
            "loss_thresh",
            self.loss_thresh,
            (Excluded(0.0), Excluded(1.0)),
        )?;
        in_range("beta", self.beta, (Excluded(0.0), Excluded(1.0)))?;
        in_range("headroom", self.headroom, (Included(0.0), Excluded(1.0)))?;
        in_range(
            "ecn_thresh",
            self.ecn_thresh,
            (Excluded(0.0), Included(1.0)),
        )?;
        for (key, d) in [
            ("probe_rtt_interval", self.probe_rtt_interval),
            ("min_rtt_filter", self.min_rtt_filter),
            ("probe_rtt_duration", self.probe_rtt_duration),
        ] {
            in_range(
                key,
                d.as_secs_f64(),
                (Excluded(0.0), Excluded(f64::INFINITY)),
            )?;
        }
        self.tcp(self.ecn).validate("bbr3")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let rng = crate::rng::stream(ctx.seed, &format!("{}:bbr3", ctx.name));
        let cc = Bbr3::new(ctx.packet_size as u64, self, rng);
        self.tcp(self.ecn).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::rate_sample::RateSample;

    const MSS: u64 = 1000;

    fn bbr3() -> Bbr3 {
        Bbr3::new(MSS, &Bbr3Params::default(), crate::rng::stream(1, "bbr3"))
    }

    /// An ACK of `segs` segments at `mbps`, 10 ms RTT, with `in_flight` bytes out before it.
    fn ack(b: &mut Bbr3, now_ms: u64, cum: u64, segs: u64, mbps: u64, in_flight: u64) {
        let mut a = AckSample::of(segs * MSS, Some(Duration::from_millis(10)));
        a.cumulative_ack = cum;
        a.highest_sent = cum + in_flight / MSS;
        a.in_flight = in_flight;
        a.rate = Some(RateSample {
            delivered: in_flight,
            interval: Duration::from_millis(10),
            delivery_rate: Rate::from_mbps(mbps),
            is_app_limited: false,
            total_delivered: cum * MSS,
        });
        b.on_ack(Time::ZERO + Duration::from_millis(now_ms), &a);
    }

    /// One round per call: the cumulative ACK passes what was outstanding.
    fn rounds(b: &mut Bbr3, from: u64, n: u64, mbps: u64, in_flight: u64) -> u64 {
        let mut cum = from;
        for i in 0..n {
            cum += 101;
            ack(b, 10 * (from / 100 + i + 1), cum, 1, mbps, in_flight);
        }
        cum
    }

    #[test]
    fn startup_ends_on_a_plateau_and_drain_hands_over_to_probe_bw_down() {
        let mut b = bbr3();
        assert_eq!(
            (b.state(), b.pacing_gain),
            (State::Startup, STARTUP_PACING_GAIN)
        );
        // The bandwidth stops growing: three rounds under 25% more → Drain.
        let cum = rounds(&mut b, 0, 5, 10, 100 * MSS);
        assert_eq!(b.state(), State::Drain);
        assert_eq!(b.pacing_gain, DRAIN_PACING_GAIN);
        // In flight down to a BDP (10 Mb/s × 10 ms = 12.5 kB) → ProbeBW_DOWN, and since it is
        // already under a BDP (no inflight_hi yet), on to CRUISE on the same ACK (§4.3.3.6).
        rounds(&mut b, cum, 1, 10, 5 * MSS);
        assert_eq!(b.state(), State::ProbeBwCruise);
        assert_eq!(b.pacing_gain, 1.0);
        assert_eq!(b.cycle_count, 1, "DOWN started a cycle");
    }

    #[test]
    fn too_much_loss_while_probing_up_sets_inflight_hi_and_goes_down() {
        let mut b = bbr3();
        let cum = rounds(&mut b, 0, 5, 10, 100 * MSS);
        let cum = rounds(&mut b, cum, 1, 10, 5 * MSS);
        b.start_refill();
        let cum = rounds(&mut b, cum, 1, 10, 20 * MSS);
        assert_eq!(b.state(), State::ProbeBwUp);
        assert_eq!(b.pacing_gain, UP_PACING_GAIN);
        // 5 of ~100 segments lost in the round: 5% > 2%.
        for seq in 0..5 {
            let s = SentSample {
                seq,
                bytes: MSS,
                in_flight: 0,
                retransmission: true,
            };
            b.on_sent(Time::ZERO, &s);
        }
        ack(&mut b, 1000, cum + 1, 1, 10, 30 * MSS);
        assert_eq!(b.state(), State::ProbeBwDown);
        let hi = b.inflight_hi().expect("inflight_hi learned");
        assert!(
            hi >= 30 * MSS,
            "inflight_hi {hi} is at least what was in flight"
        );
        // Outside probing the cwnd keeps 15% headroom under it in CRUISE.
        assert_eq!(b.inflight_with_headroom(), hi - (0.15 * hi as f64) as u64);
    }

    #[test]
    fn a_lossy_round_outside_probing_cuts_the_short_term_bounds_by_beta() {
        let mut b = bbr3();
        let cum = rounds(&mut b, 0, 5, 10, 100 * MSS);
        let cum = rounds(&mut b, cum, 1, 10, 5 * MSS);
        b.start_cruise();
        b.bw_latest = 0;
        b.inflight_latest = 0;
        let s = SentSample {
            seq: 1,
            bytes: MSS,
            in_flight: 0,
            retransmission: true,
        };
        b.on_sent(Time::ZERO, &s);
        let max = b.max_bw.get();
        b.adapt_lower_bounds();
        assert_eq!(b.bw_lo, Some((0.7 * max as f64) as u64));
        assert_eq!(b.bw(), (0.7 * max as f64) as u64, "bw = min(max_bw, bw_lo)");
        let _ = cum;
        // REFILL forgets them.
        b.start_refill();
        assert_eq!((b.bw_lo, b.inflight_lo), (None, None));
    }

    #[test]
    fn reno_coexistence_bounds_the_wait_between_probes() {
        let mut b = bbr3();
        let cum = rounds(&mut b, 0, 5, 10, 100 * MSS);
        rounds(&mut b, cum, 1, 10, 5 * MSS);
        assert_eq!(b.state(), State::ProbeBwCruise);
        // BDP = 12.5 segments + 3 quanta → 15 rounds (< 63), long before 2 s.
        let reno = (b.inflight(1.0) / MSS).min(MAX_RENO_ROUNDS);
        b.rounds_since_bw_probe = reno - 1;
        assert!(!b.time_to_probe(b.cycle_stamp));
        b.rounds_since_bw_probe = reno;
        assert!(b.time_to_probe(b.cycle_stamp));
        assert!(b.time_to_probe(b.cycle_stamp + Duration::from_secs(3)));
    }
}
