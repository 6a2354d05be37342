//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019 — short key `hpcc`
//! in docs/references.md): a window set from in-band telemetry. Every queue a data packet
//! leaves writes its rate, the time, its transmitted bytes and its queue length into the packet
//! ([`crate::telemetry`]); the ACK brings them back. From two successive records of each link
//! the sender estimates the link's normalised inflight bytes u_j = min(qLen, qLen′)/(B·T) +
//! txRate/B (Algorithm 1, MeasureInflight), takes the most loaded link, smooths it into U over
//! T, and sets its window so that U approaches the target η: W = W_c / (U/η) + W_AI, or
//! W_c + W_AI while U < η for fewer than maxStage rounds (ComputeWind). W_c, the reference
//! window, moves once per RTT (lastUpdateSeq); every ACK recomputes W from it ("fast reaction
//! without overreaction", §3.3). The sender paces at R = W/T.
//!
//! Departures (each stated where it is made):
//! - HPCC runs over RDMA NICs with go-back-N and a lossless (PFC) fabric; here it runs over
//!   acclab's TCP transport (SACK recovery by default) on ordinary queues, so it must react to
//!   loss: a fast retransmit halves W_c (once per recovery, as the transport reports it), a
//!   timeout sets it to one segment (as htsim's HPCC does on a NACK); the next ACKs' telemetry
//!   then grows it back.
//! - T, the base RTT, is the flow's own unloaded RTT (propagation plus one data packet's and
//!   one ACK's serialisation per hop, from the scenario) unless `base_rtt` is given; the paper
//!   uses one network-wide T (the largest). W_init = B·T with B the flow's first link (its
//!   NIC): the flow starts at line rate, as HPCC does; `initial_window` does not apply.
//! - W_AI = W_init·(1 − η)/N, the paper's rule (§3.3, "N is the expected maximum number of
//!   concurrent flows on a link"), with N = `flows` (default 10, as htsim's HPCC).
//! - U starts at η (htsim's choice; the paper is silent). A path whose links change (another
//!   ECMP path after a failure, or packet spraying) restarts the per-link history, so that
//!   txRate is never computed across two links.
//! - The window is at least `min_rate`·T (the HPCC simulator's minimum rate, 100 Mb/s) and at
//!   most W_init; below one segment it is one segment and the pacing rate does the rest.
//! - Telemetry arrives with ACKs of new data; duplicate ACKs (loss recovery) bring none, and
//!   an ACK whose data packet's telemetry was not kept (a retransmission's echo) leaves W be.

use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{in_range, positive, FlowContext, ParamError, SchemeParams};
use crate::telemetry::{IntHop, Telemetry, MAX_HOPS};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::{Duration, Rate, Time};

/// HPCC's sender state (Algorithm 1's variables).
#[derive(Clone, Debug)]
pub struct Hpcc {
    mss: f64,
    eta: f64,
    max_stage: u32,
    /// T, seconds.
    t: f64,
    /// W_init = B·T, bytes: the largest window.
    w_init: f64,
    /// W_AI, bytes.
    w_ai: f64,
    /// The smallest window, bytes (min_rate · T).
    w_min: f64,
    /// W_c, the reference window, bytes.
    wc: f64,
    /// W, the window in use, bytes.
    w: f64,
    /// U, the smoothed normalised inflight of the most loaded link.
    u: f64,
    inc_stage: u32,
    last_update_seq: u64,
    /// L: each link's last record (MeasureInflight's history), `len` of them.
    links: [IntHop; MAX_HOPS],
    len: usize,
    /// The telemetry of the data packet the next ACK echoes.
    pending: Option<Telemetry>,
}

impl Hpcc {
    /// A sender whose path begins at a link of rate `line` and whose base RTT is `base_rtt`
    /// (unless `p.base_rtt` is given).
    pub fn new(mss: u64, p: &HpccParams, line: Rate, base_rtt: Duration) -> Hpcc {
        let t = p.base_rtt.unwrap_or(base_rtt).as_secs_f64().max(1e-9);
        let mss = mss as f64;
        let w_init = (line.as_f64() / 8.0 * t).max(mss);
        Hpcc {
            mss,
            eta: p.eta,
            max_stage: p.max_stage,
            t,
            w_init,
            // §3.3: W_AI = W_init·(1 − η)/N.
            w_ai: w_init * (1.0 - p.eta) / f64::from(p.flows),
            w_min: (p.min_rate.as_f64() / 8.0 * t).min(w_init),
            wc: w_init,
            w: w_init,
            u: p.eta,
            inc_stage: 0,
            last_update_seq: 0,
            links: [IntHop::default(); MAX_HOPS],
            len: 0,
            pending: None,
        }
    }

    /// U, the smoothed normalised inflight of the most loaded link.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// W, bytes (fractional).
    pub fn window_bytes(&self) -> f64 {
        self.w
    }

    /// Algorithm 1, MeasureInflight (lines 1–10): U from the records of `int` and the last
    /// ones of each link.
    fn measure_inflight(&mut self, int: &Telemetry) -> f64 {
        let hops = int.hops();
        let same_path =
            hops.len() == self.len && hops.iter().zip(&self.links).all(|(a, b)| a.link == b.link);
        if !same_path {
            // A new path (or the first ACK): its history starts here.
            self.len = hops.len();
            self.links[..hops.len()].copy_from_slice(hops);
            return self.u;
        }
        let mut u = 0.0;
        let mut tau = self.t;
        for (now, before) in hops.iter().zip(&self.links) {
            let dt = now.ts.0.saturating_sub(before.ts.0) as f64 * 1e-9;
            let b = now.rate.as_f64() / 8.0; // bytes per second
            if dt <= 0.0 || b <= 0.0 {
                continue; // no time between the two records: no rate to measure
            }
            // Line 4: txRate = (ack.L[i].txBytes − L[i].txBytes) / (ack.L[i].ts − L[i].ts).
            let tx_rate = now.tx_bytes.saturating_sub(before.tx_bytes) as f64 / dt;
            // Line 5: u′ = min(ack.L[i].qlen, L[i].qlen)/(ack.L[i].B·T) + txRate/ack.L[i].B.
            let u_hop = now.qlen.min(before.qlen) as f64 / (b * self.t) + tx_rate / b;
            // Lines 6–7: the most loaded link, and the time its two records span.
            if u_hop > u {
                u = u_hop;
                tau = dt;
            }
        }
        // Lines 8–9: τ = min(τ, T); U = (1 − τ/T)·U + τ/T·u.
        let tau = tau.min(self.t);
        self.u = (1.0 - tau / self.t) * self.u + tau / self.t * u;
        // Line 27: L = ack.L.
        self.links[..hops.len()].copy_from_slice(hops);
        self.u
    }

    /// Algorithm 1, ComputeWind (lines 11–20).
    fn compute_wind(&mut self, u: f64, update_wc: bool) -> f64 {
        let w = if u >= self.eta || self.inc_stage >= self.max_stage {
            // Line 13: multiplicative adjustment towards η, plus W_AI.
            let w = self.wc / (u / self.eta) + self.w_ai;
            if update_wc {
                self.inc_stage = 0;
                self.wc = self.clamp(w);
            }
            w
        } else {
            // Line 17: additive increase.
            let w = self.wc + self.w_ai;
            if update_wc {
                self.inc_stage += 1;
                self.wc = self.clamp(w);
            }
            w
        };
        self.clamp(w)
    }

    fn clamp(&self, w: f64) -> f64 {
        w.clamp(self.w_min, self.w_init)
    }
}

impl CongestionController for Hpcc {
    fn on_telemetry(&mut self, _now: Time, int: &Telemetry) {
        self.pending = Some(*int);
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSample) {
        let Some(int) = self.pending.take() else {
            return;
        };
        let u = self.measure_inflight(&int);
        // Lines 22–26: W_c moves once per RTT, when the ACK passes what was sent at the last
        // update (snd_nxt then).
        if ack.cumulative_ack > self.last_update_seq {
            self.w = self.compute_wind(u, true);
            self.last_update_seq = ack.highest_sent + 1;
        } else {
            self.w = self.compute_wind(u, false);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        self.pending = None;
        match ev.kind {
            // Not ECN-capable: never echoed. (An echo would be a loss's signal.)
            Congestion::Loss | Congestion::Ecn => self.wc = self.clamp(self.wc / 2.0),
            Congestion::Timeout => {
                self.wc = self.clamp(self.mss);
                self.inc_stage = 0;
            }
        }
        self.w = self.wc;
    }

    fn window(&self) -> u64 {
        self.w.max(self.mss) as u64
    }

    fn pacing_rate(&self) -> Option<Rate> {
        // Line 27: R = W/T.
        Some(Rate::from_bps(
            ((self.w * 8.0 / self.t).round() as u64).max(1),
        ))
    }
}

tcp_scheme_params! {
    /// `hpcc` parameters (defaults: see the module header).
    pub struct HpccParams {
        /// η, the target utilisation, in (0, 1].
        pub eta: f64 = 0.95,
        /// maxStage: additive-increase rounds before a multiplicative step, ≥ 0.
        pub max_stage: u32 = 5,
        /// N in W_AI = W_init·(1 − η)/N: the expected largest number of flows on a link, ≥ 1.
        pub flows: u32 = 10,
        /// T, the base RTT; absent: the flow's own unloaded RTT.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub base_rtt: Option<Duration> = None,
        /// The smallest sending rate (the window's floor is this times T).
        pub min_rate: Rate = Rate::from_bps(100_000_000),
    }
    sack = true;
}

impl SchemeParams for HpccParams {
    fn validate(&self) -> Result<(), ParamError> {
        use std::ops::Bound::{Excluded, Included};
        in_range("eta", self.eta, (Excluded(0.0), Included(1.0)))?;
        in_range("max_stage", f64::from(self.max_stage), 0.0..=1000.0)?;
        in_range("flows", f64::from(self.flows), 1.0..=1e6)?;
        if let Some(t) = self.base_rtt {
            in_range("base_rtt", t.as_secs_f64(), (Excluded(0.0), Included(10.0)))?;
        }
        positive("min_rate", self.min_rate.as_f64())?;
        let default_iw = crate::transport::tcp::TcpSettings::default().initial_window;
        if self.initial_window != default_iw {
            return Err(ParamError::at(
                "initial_window",
                "hpcc starts at line rate (W_init = B·T, the module header): `initial_window` \
                 does not apply; leave it out"
                    .to_string(),
            ));
        }
        self.tcp(false).validate("hpcc")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Hpcc::new(ctx.packet_size as u64, self, ctx.line_rate, ctx.base_rtt);
        self.tcp(false).endpoints(ctx, cc)
    }

    fn telemetry(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const LINE: Rate = Rate(10_000_000_000);

    /// T = 10 µs at 10 Gb/s: W_init = 12,500 bytes, W_AI = 62.5 bytes.
    fn hpcc() -> Hpcc {
        Hpcc::new(MSS, &HpccParams::default(), LINE, Duration::from_micros(10))
    }

    /// One link's record at `ts_us`, `tx` bytes sent so far and `qlen` queued.
    fn rec(link: u32, ts_us: u64, tx: u64, qlen: u64) -> IntHop {
        IntHop {
            link,
            rate: LINE,
            ts: Time(ts_us * 1000),
            tx_bytes: tx,
            qlen,
        }
    }

    fn int(hops: &[IntHop]) -> Telemetry {
        let mut t = Telemetry::default();
        hops.iter().for_each(|h| t.push(*h));
        t
    }

    fn ack(h: &mut Hpcc, hops: &[IntHop], cum: u64, highest: u64) {
        h.on_telemetry(Time::ZERO, &int(hops));
        let mut a = AckSample::of(MSS, None);
        a.cumulative_ack = cum;
        a.highest_sent = highest;
        h.on_ack(Time::ZERO, &a);
    }

    #[test]
    fn it_starts_at_line_rate_with_the_papers_additive_step() {
        let h = hpcc();
        assert_eq!(h.window(), 12_500);
        assert!((h.w_ai - 12_500.0 * 0.05 / 10.0).abs() < 1e-9);
        assert_eq!(h.pacing_rate(), Some(LINE));
    }

    /// Lines 4–9: a link at full rate with a standing queue of one BDP is at u = 2; the most
    /// loaded link counts; U moves towards it by τ/T.
    #[test]
    fn inflight_is_measured_at_the_most_loaded_link() {
        let mut h = hpcc();
        // 10 µs apart: link 0 idle, link 1 sent 12,500 bytes (full rate) with 12,500 queued.
        ack(&mut h, &[rec(0, 0, 0, 0), rec(1, 0, 0, 12_500)], 1, 1);
        ack(
            &mut h,
            &[rec(0, 10, 0, 0), rec(1, 10, 12_500, 12_500)],
            2,
            2,
        );
        // τ = T: U = u = 12,500/(1.25e9·1e-5) + 1.25e9/1.25e9 = 2.
        assert!((h.utilisation() - 2.0).abs() < 1e-9, "{}", h.utilisation());
        // Line 13: W = W_c/(U/η) + W_AI, W_c moved (this ACK passed lastUpdateSeq).
        let w = 12_500.0 / (2.0 / 0.95) + 62.5;
        assert!((h.window_bytes() - w).abs() < 1e-6, "{}", h.window_bytes());
    }

    /// Lines 12–19: below η the window grows by W_AI per ACK from W_c, and W_c itself only
    /// once per RTT; after maxStage additive rounds the multiplicative rule applies.
    #[test]
    fn below_target_the_reference_window_grows_once_per_rtt() {
        let mut h = hpcc();
        h.wc = 5_000.0;
        h.w = 5_000.0;
        // A link at half rate and no queue: u = 0.5.
        let mut t = 0;
        let mut tx = 0;
        let mut next = |h: &mut Hpcc, cum: u64, highest: u64| {
            t += 10;
            tx += 6_250;
            ack(h, &[rec(0, t, tx, 0)], cum, highest);
        };
        // The first record is history only, U stays η: the multiplicative rule at U = η
        // leaves W_c, plus W_AI; W_c moves (the ACK passes lastUpdateSeq 0), next at 11.
        next(&mut h, 1, 10);
        assert!((h.wc - 5_062.5).abs() < 1e-9, "{}", h.wc);
        // τ = T from here on: U = u = 0.5. Not past 11: W = W_c + W_AI, W_c unchanged.
        next(&mut h, 2, 10);
        assert!((h.wc - 5_062.5).abs() < 1e-9);
        assert!((h.window_bytes() - 5_125.0).abs() < 1e-9);
        next(&mut h, 12, 20); // past 11: W_c grows, stage 1
        assert!((h.wc - 5_125.0).abs() < 1e-9);
        assert_eq!(h.inc_stage, 1);
        for cum in [22, 32, 42, 52] {
            next(&mut h, cum, cum + 8);
        }
        assert_eq!(h.inc_stage, 5);
        assert!((h.wc - 5_375.0).abs() < 1e-9);
        // Stage 5 = maxStage: the multiplicative rule, towards η, even below it.
        next(&mut h, 62, 70);
        assert!((h.wc - (5_375.0_f64 / (0.5 / 0.95) + 62.5).min(12_500.0)).abs() < 1e-6);
        assert_eq!(h.inc_stage, 0);
    }

    #[test]
    fn a_new_path_restarts_the_history() {
        let mut h = hpcc();
        ack(&mut h, &[rec(0, 0, 0, 0), rec(1, 0, 0, 0)], 1, 1);
        let u = h.utilisation();
        // Same length, another second link: no rate across two links.
        ack(&mut h, &[rec(0, 10, 12_500, 0), rec(2, 10, 1, 0)], 2, 2);
        assert_eq!(h.utilisation(), u);
        assert_eq!(h.links[1].link, 2);
    }

    #[test]
    fn losses_halve_the_reference_window_and_a_timeout_resets_it() {
        let mut h = hpcc();
        h.on_congestion_event(Time::ZERO, &CongestionEvent::new(Congestion::Loss, 10_000));
        assert_eq!(h.window(), 6_250);
        h.on_congestion_event(
            Time::ZERO,
            &CongestionEvent::new(Congestion::Timeout, 10_000),
        );
        // One segment, floored at min_rate·T = 125 bytes: the window is a segment, paced.
        assert_eq!(h.window(), 1_000);
        assert_eq!(h.pacing_rate(), Some(Rate(800_000_000)));
    }

    #[test]
    fn an_ack_without_telemetry_leaves_the_window() {
        let mut h = hpcc();
        let mut a = AckSample::of(MSS, None);
        a.cumulative_ack = 5;
        h.on_ack(Time::ZERO, &a);
        assert_eq!(h.window(), 12_500);
    }

    #[test]
    fn parameters_are_checked() {
        let bad = [
            HpccParams {
                eta: 0.0,
                ..HpccParams::default()
            },
            HpccParams {
                eta: 1.5,
                ..HpccParams::default()
            },
            HpccParams {
                flows: 0,
                ..HpccParams::default()
            },
            HpccParams {
                base_rtt: Some(Duration::ZERO),
                ..HpccParams::default()
            },
            HpccParams {
                min_rate: Rate(0),
                ..HpccParams::default()
            },
            HpccParams {
                initial_window: 4,
                ..HpccParams::default()
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
        assert!(HpccParams::default().validate().is_ok());
    }
}
