//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, "BBR" below; Linux tcp_bbr.c).
//!
//! BBR models the path by its bottleneck bandwidth (BtlBw, the maximum delivery rate over the
//! last 10 round trips) and its round-trip propagation time (RTprop, the minimum RTT over the
//! last 10 s) — model.rs — and paces at pacing_gain × BtlBw with at most
//! cwnd_gain × BtlBw × RTprop in flight. The gains come from a state machine:
//!
//! - **Startup**: both gains 2/ln 2, doubling the sending rate each round, until BtlBw has not
//!   grown by 25% for three rounds (the pipe is full, §4.3.2.2);
//! - **Drain**: pacing gain ln 2/2 until what is in flight is down to one BDP (§4.3.3);
//! - **ProbeBW**: cwnd gain 2 and pacing gains cycling 5/4, 3/4, 1 × 6, one phase per RTprop,
//!   starting at a random phase other than 3/4 (§4.3.4);
//! - **ProbeRTT**: when RTprop has not been refreshed for 10 s, at most 4 packets in flight for
//!   200 ms and a round trip, to measure RTprop again (§4.3.5).
//!
//! Losses do not reduce the rate: on fast retransmit BBR keeps what is in flight (packet
//! conservation for one round, §4.2.3.4) and restores its window when recovery ends; a timeout
//! sets cwnd to one segment until the repair, then restores it. ECN is ignored (v1).
//!
//! Departures, all deliberate:
//! - Rounds are counted by the cumulative ACK passing the highest segment sent when the round
//!   began (the transport has no SACK; BBR §4.1.1.3 counts `packet.delivered`, the same
//!   boundary for cumulative ACKs).
//! - Packet conservation is the transport's: BBR sets cwnd at entry to the transport's pipe
//!   estimate plus one segment, and keeps it for a round; the transport then sends a segment
//!   for each one that leaves — with SACK (the default) as RFC 6675 counts `pipe`, without it
//!   by NewReno's window inflation (transport/tcp.rs). After that round BBR grows its cwnd as
//!   outside recovery.
//! - BtlBw's filter is an exact windowed maximum (Linux's minmax approximates with three
//!   samples); no pacing margin (Linux paces 1% below the rate); no idle restart (bulk and
//!   finite transfers only); the send quantum enters only the cwnd budget (no TSO bursts).

mod model;
mod recovery;
pub mod v3;

use rand::RngExt;

pub use model::{MaxFilter, PathModel};
pub use v3::{Bbr3, Bbr3Params};

use super::{AckSample, CongestionController, CongestionEvent};
use crate::params::{positive, FlowContext, ParamError, SchemeParams};
use crate::rng::Rng;
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};

/// BBR §4.3.4.4: the ProbeBW pacing-gain cycle.
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// BBR §4.2.3.3: BBRMinPipeCwnd, segments.
const MIN_PIPE_CWND: u64 = 4;

/// BBR's state-machine states (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// BBR's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BbrSettings {
    pub mss: u64,
    pub initial_window: u64,
    /// BBRHighGain, Startup's gains (2/ln 2 ≈ 2.885).
    pub high_gain: f64,
    /// ProbeBW's cwnd gain (2).
    pub cwnd_gain: f64,
    /// BtlBwFilterLen, rounds (10).
    pub bw_window_rounds: u64,
    /// RTpropFilterLen (10 s): how long an RTprop estimate lasts before ProbeRTT.
    pub probe_rtt_interval: Duration,
    /// ProbeRTTDuration (200 ms).
    pub probe_rtt_duration: Duration,
}

/// BBR's state.
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrSettings,
    model: PathModel,
    rng: Rng,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: Rate,
    /// Congestion window, bytes.
    cwnd: u64,
    recovery: recovery::Recovery,
    /// A loss was detected since the last ACK (`rs.losses > 0`).
    lost: bool,
    /// Total bytes acknowledged (`C.delivered`).
    delivered: u64,
    round_count: u64,
    /// The round ends when the cumulative ACK passes this segment.
    round_end: Option<u64>,
    round_start: bool,
    filled_pipe: bool,
    full_bw: u64,
    full_bw_count: u32,
    cycle_index: usize,
    cycle_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    /// An RTT sample has set the pacing rate from the initial window (Linux's
    /// `bbr_init_pacing_rate_from_rtt`).
    has_rtt: bool,
}

impl Bbr {
    pub fn new(cfg: BbrSettings, rng: Rng) -> Bbr {
        let initial = cfg.initial_window.max(1) * cfg.mss;
        // §4.2.1 BBRInitPacingRate: nominal_bandwidth = InitialCwnd / (SRTT or 1 ms).
        let nominal = initial as f64 * 8.0 / 1e-3;
        Bbr {
            model: PathModel::new(cfg.bw_window_rounds, cfg.probe_rtt_interval),
            rng,
            mode: Mode::Startup,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            pacing_rate: Rate::from_bps((cfg.high_gain * nominal) as u64),
            cwnd: initial,
            recovery: recovery::Recovery::default(),
            lost: false,
            delivered: 0,
            round_count: 0,
            round_end: None,
            round_start: false,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            has_rtt: false,
            cfg,
        }
    }

    /// The state-machine state.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The path model (BtlBw, RTprop).
    pub fn model(&self) -> &PathModel {
        &self.model
    }

    /// The ProbeBW phase's pacing gain (or the state's).
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    fn initial_cwnd(&self) -> u64 {
        self.cfg.initial_window.max(1) * self.cfg.mss
    }

    /// §4.2.2 BBRSetSendQuantum, bytes.
    fn send_quantum(&self) -> u64 {
        let bps = self.pacing_rate.bps();
        if bps < 1_200_000 {
            self.cfg.mss
        } else if bps < 24_000_000 {
            2 * self.cfg.mss
        } else {
            (bps / 8 / 1000).min(64_000)
        }
    }

    /// §4.2.3.2 BBRInflight(gain): gain × BDP + 3 send quanta; the initial window before any
    /// RTT sample.
    fn inflight(&self, gain: f64) -> u64 {
        match self.model.bdp() {
            None => self.initial_cwnd(),
            Some(bdp) => (gain * bdp) as u64 + 3 * self.send_quantum(),
        }
    }

    /// §4.2.3.4 BBRRestoreCwnd.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.recovery.restored(self.cwnd);
    }

    // ---- The state machine (§4.3) ----

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.cfg.high_gain;
        self.cwnd_gain = self.cfg.high_gain;
    }

    /// §4.3.2.2 BBRCheckFullPipe: BtlBw grew by less than 25% in three non-app-limited rounds.
    fn check_full_pipe(&mut self, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        let bw = self.model.btl_bw().bps();
        if bw as f64 >= self.full_bw as f64 * 1.25 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= 3 {
            self.filled_pipe = true;
        }
    }

    /// §4.3.3 BBRCheckDrain.
    fn check_drain(&mut self, now: Time, in_flight: u64) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.cfg.high_gain; // BBRDrainGain
            self.cwnd_gain = self.cfg.high_gain;
        }
        if self.mode == Mode::Drain && in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(now);
        }
    }

    /// §4.3.4.5 BBREnterProbeBW: a random phase other than the draining one.
    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.cfg.cwnd_gain;
        let n = PACING_GAIN_CYCLE.len();
        self.cycle_index = n - 1 - self.rng.random_range(0..n - 1);
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// §4.3.4.4 BBRIsNextCyclePhase: a phase lasts an RTprop; probing (5/4) goes on until
    /// a loss or until 5/4 of a BDP is in flight, draining (3/4) stops early once one BDP is.
    fn check_cycle_phase(&mut self, now: Time, prior_inflight: u64) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self
            .model
            .rtprop()
            .is_some_and(|r| now.since(self.cycle_stamp) > r);
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length && (self.lost || prior_inflight >= self.inflight(self.pacing_gain))
        } else {
            full_length || prior_inflight <= self.inflight(1.0)
        };
        if next {
            self.advance_cycle_phase(now);
        }
    }

    /// §4.3.5 BBRCheckProbeRTT and BBRHandleProbeRTT.
    fn check_probe_rtt(
        &mut self,
        now: Time,
        rtprop_expired: bool,
        ack: &AckSample,
        in_flight: u64,
    ) {
        if self.mode != Mode::ProbeRtt && rtprop_expired {
            self.recovery.save(self.cwnd, false); // §4.2.3.4 BBRSaveCwnd
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.probe_rtt_done_stamp = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done_stamp {
            None if in_flight <= MIN_PIPE_CWND * self.cfg.mss => {
                self.probe_rtt_done_stamp = Some(now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.round_end = Some(ack.highest_sent); // next_round_delivered = C.delivered
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.model.refresh_rtprop(now);
                    self.restore_cwnd();
                    // BBRExitProbeRTT
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.enter_startup();
                    }
                }
            }
        }
    }

    // ---- Control parameters (§4.2) ----

    /// §4.2.1 BBRSetPacingRateWithGain: never lower before the pipe is full.
    fn set_pacing_rate(&mut self, rtt: Option<Duration>) {
        if let (false, Some(r)) = (self.has_rtt, rtt) {
            // Linux's bbr_init_pacing_rate_from_rtt: the first RTT replaces the 1 ms guess.
            self.has_rtt = true;
            if self.model.btl_bw().bps() == 0 && r.0 > 0 {
                let nominal = self.initial_cwnd() as f64 * 8.0 / r.as_secs_f64();
                self.pacing_rate = Rate::from_bps((self.cfg.high_gain * nominal) as u64);
            }
        }
        let rate = (self.pacing_gain * self.model.btl_bw().bps() as f64) as u64;
        if rate > 0 && (self.filled_pipe || rate > self.pacing_rate.bps()) {
            self.pacing_rate = Rate::from_bps(rate);
        }
    }

    /// §4.2.3.5 BBRSetCwnd.
    fn set_cwnd(&mut self, ack: &AckSample) {
        if !self.recovery.conserving(self.round_count) {
            let target = self.inflight(self.cwnd_gain);
            if self.filled_pipe {
                self.cwnd = (self.cwnd + ack.acked_bytes).min(target);
            } else if self.cwnd < target || self.delivered < self.initial_cwnd() {
                self.cwnd += ack.acked_bytes;
            }
            self.cwnd = self.cwnd.max(MIN_PIPE_CWND * self.cfg.mss);
        }
        // §4.2.3.6 BBRModulateCwndForProbeRTT.
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_PIPE_CWND * self.cfg.mss);
        }
    }
}

impl CongestionController for Bbr {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        self.delivered += ack.acked_bytes;
        // §4.1.1.3 BBRUpdateRound.
        self.round_start = false;
        if self.round_end.is_none_or(|end| ack.cumulative_ack > end) {
            self.round_end = Some(ack.highest_sent);
            self.round_count += 1;
            self.round_start = true;
        }
        let prior_inflight = ack.in_flight;
        let in_flight = ack.in_flight.saturating_sub(ack.acked_bytes);
        // §4.1 BBRUpdateModelAndState.
        let app_limited = ack.rate.is_some_and(|r| r.is_app_limited);
        if let Some(rs) = ack.rate {
            self.model
                .on_rate(self.round_count, rs.delivery_rate, rs.is_app_limited);
        }
        self.check_cycle_phase(now, prior_inflight);
        self.check_full_pipe(app_limited);
        self.check_drain(now, in_flight);
        let expired = self.model.on_rtt(now, ack.rtt);
        self.check_probe_rtt(now, expired, ack, in_flight);
        // §4.2 BBRUpdateControlParameters.
        self.set_pacing_rate(ack.rtt);
        if let Some(cwnd) = self.recovery.on_ack(ack, self.cwnd) {
            self.cwnd = cwnd;
        }
        self.set_cwnd(ack);
        self.lost = false;
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        // §4.2.3.4: packet conservation on fast recovery, one segment after a timeout (ECN is
        // ignored by v1).
        let (mss, round, probe_rtt) = (self.cfg.mss, self.round_count, self.mode == Mode::ProbeRtt);
        if let Some(cwnd) = self.recovery.on_event(ev, self.cwnd, mss, round, probe_rtt) {
            self.cwnd = cwnd;
            self.lost = true;
        }
    }

    fn on_recovery_end(&mut self, _now: Time) {
        self.cwnd = self.recovery.end(self.cwnd);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn in_slow_start(&self) -> bool {
        self.mode == Mode::Startup
    }

    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.pacing_rate)
    }

    /// The state (§4.3) as a number — 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT — and BtlBw.
    fn state(&self, out: &mut crate::transport::CcState) {
        let mode = match self.mode {
            Mode::Startup => 0.0,
            Mode::Drain => 1.0,
            Mode::ProbeBw => 2.0,
            Mode::ProbeRtt => 3.0,
        };
        out.push("bbr_state", Some(mode));
        out.push("btl_bw_bps", Some(self.model.btl_bw().bps() as f64));
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn base_rtt(&self) -> Option<Duration> {
        self.model.rtprop()
    }
}

tcp_scheme_params! {
    /// `bbr` parameters.
    pub struct BbrParams {
        /// Startup's pacing and cwnd gain (2/ln 2 ≈ 2.885).
        pub high_gain: f64 = 2.0 / std::f64::consts::LN_2,
        /// ProbeBW's cwnd gain (2).
        pub cwnd_gain: f64 = 2.0,
        /// Rounds of the bottleneck-bandwidth max filter (10).
        pub bw_window_rounds: u64 = 10,
        /// How long an RTprop estimate lasts before ProbeRTT ("10s").
        pub probe_rtt_interval: Duration = Duration::from_secs(10),
        /// ProbeRTT's duration ("200ms").
        pub probe_rtt_duration: Duration = Duration::from_millis(200),
    }
    sack = true;
}

impl SchemeParams for BbrParams {
    fn validate(&self) -> Result<(), ParamError> {
        for (key, gain) in [("high_gain", self.high_gain), ("cwnd_gain", self.cwnd_gain)] {
            if !(gain.is_finite() && (1.0..=100.0).contains(&gain)) {
                return Err(ParamError::at(
                    key,
                    format!("bbr `{key}` must be in [1, 100], not {gain}"),
                ));
            }
        }
        if !(1..=1000).contains(&self.bw_window_rounds) {
            return Err(ParamError::at(
                "bw_window_rounds",
                format!(
                    "bbr `bw_window_rounds` must be in [1, 1000], not {}",
                    self.bw_window_rounds
                ),
            ));
        }
        positive("probe_rtt_interval", self.probe_rtt_interval.as_secs_f64())?;
        positive("probe_rtt_duration", self.probe_rtt_duration.as_secs_f64())?;
        self.tcp(false).validate("bbr")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cfg = BbrSettings {
            mss: ctx.packet_size as u64,
            initial_window: self.initial_window,
            high_gain: self.high_gain,
            cwnd_gain: self.cwnd_gain,
            bw_window_rounds: self.bw_window_rounds,
            probe_rtt_interval: self.probe_rtt_interval,
            probe_rtt_duration: self.probe_rtt_duration,
        };
        let rng = crate::rng::stream(ctx.seed, &format!("{}:bbr", ctx.name));
        let cc = Bbr::new(cfg, rng);
        self.tcp(false).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests;
