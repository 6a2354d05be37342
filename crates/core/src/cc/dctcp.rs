//! DCTCP (RFC 8257): Reno's window growth with a reaction proportional to the extent of
//! congestion.
//!
//! The sender estimates α, the fraction of its bytes that were CE-marked, once per window of
//! data (§3.3: α ← (1 − g)·α + g·M, g = 1/16) and, at most once per window, answers an ECN echo
//! with cwnd ← cwnd·(1 − α/2) (§3.3 step 8) instead of halving. Losses and timeouts are Reno's
//! (§3.4). The switch side is `step-ecn` (queue/step_ecn.rs, §3.1); the receiver's CE state
//! machine (§3.2) is the TCP receiver's (transport/tcp.rs), whose every ACK carries the CE
//! state of the segments it acknowledges.
//!
//! Departures: α starts at 1 (§3.3 leaves the initial value open; Linux's
//! `dctcp_alpha_on_init` and ns-3's `DctcpAlphaOnInit` default to 1); ECN is always on.

use super::reno::Reno;
use super::{AckSample, Congestion, CongestionController, CongestionEvent};
use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::transport::tcp::tcp_scheme_params;
use crate::transport::Endpoint;
use crate::units::Time;

/// DCTCP's state: Reno's window, α and the observation window.
#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    /// g, the weight of a new sample (§3.3: 1/16).
    g: f64,
    alpha: f64,
    /// The observation window ends when the cumulative ACK passes this segment (`Window_End`).
    window_end: Option<u64>,
    bytes_acked: u64,
    bytes_marked: u64,
}

impl Dctcp {
    pub fn new(mss: u64, initial_window: u64, g: f64, alpha: f64) -> Dctcp {
        Dctcp {
            reno: Reno::new(mss, initial_window),
            g,
            alpha,
            window_end: None,
            bytes_acked: 0,
            bytes_marked: 0,
        }
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// §3.3 steps 2–7: count the ACK's bytes, and update α when the window ends.
    fn observe(&mut self, ack: &AckSample) {
        // Step 2: "Bytes_Acked += acked"; step 3: "If the ECE flag is set, Bytes_Marked += acked".
        self.bytes_acked += ack.acked_bytes;
        if ack.ecn_echo {
            self.bytes_marked += ack.acked_bytes;
        }
        let Some(end) = self.window_end else {
            self.window_end = Some(ack.highest_sent); // step 1
            return;
        };
        // Step 4: "If the acknowledgment number is less than or equal to Window_End, stop".
        if ack.cumulative_ack <= end {
            return;
        }
        // Steps 5–6: M = Bytes_Marked / Bytes_Acked; α = (1 − g)·α + g·M.
        let m = self.bytes_marked as f64 / self.bytes_acked.max(1) as f64;
        self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
        // Step 7: a new window: Window_End = SND.NXT, counters reset.
        self.window_end = Some(ack.highest_sent);
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }
}

impl CongestionController for Dctcp {
    fn on_ack(&mut self, now: Time, ack: &AckSample) {
        self.observe(ack);
        self.reno.on_ack(now, ack);
    }

    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        match ev.kind {
            // §3.3 step 8 (the transport reacts at most once per window, RFC 3168 §6.1.2):
            // cwnd = cwnd × (1 − α/2), and ssthresh with it (Linux's dctcp_ssthresh).
            Congestion::Ecn => {
                let cwnd = self.reno.window() as f64;
                self.reno
                    .reduce_to((cwnd * (1.0 - self.alpha / 2.0)) as u64);
            }
            // §3.4: "A DCTCP sender ... SHOULD react to loss episodes in the same way as
            // conventional TCP" (RFC 5681).
            Congestion::Loss | Congestion::Timeout => self.reno.on_congestion_event(now, ev),
        }
    }

    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn in_slow_start(&self) -> bool {
        self.reno.in_slow_start()
    }

    fn ssthresh(&self) -> Option<u64> {
        self.reno.ssthresh()
    }

    /// α, the estimate of the fraction of marked bytes (DCTCP eq. (1)).
    fn state(&self, out: &mut crate::transport::CcState) {
        out.push("alpha", Some(self.alpha));
    }
}

tcp_scheme_params! {
    /// `dctcp` parameters.
    pub struct DctcpParams {
        /// g, the weight of each window's marked fraction in α (RFC 8257: 1/16), in (0, 1].
        pub g: f64 = 1.0 / 16.0,
        /// α at the start, in [0, 1] (Linux, ns-3: 1).
        pub initial_alpha: f64 = 1.0,
    }
    sack = true;
}

impl SchemeParams for DctcpParams {
    fn ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Result<(), ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ParamError::at(
                "g",
                format!("dctcp `g` must be in (0, 1], not {}", self.g),
            ));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(ParamError::at(
                "initial_alpha",
                format!(
                    "dctcp `initial_alpha` must be in [0, 1], not {}",
                    self.initial_alpha
                ),
            ));
        }
        self.tcp(true).validate("dctcp")
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cc = Dctcp::new(
            ctx.packet_size as u64,
            self.initial_window,
            self.g,
            self.initial_alpha,
        );
        self.tcp(true).endpoints(ctx, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// An ACK of one segment up to `cumulative`, the window ending at `highest`.
    fn ack(cumulative: u64, highest: u64, marked: bool) -> AckSample {
        AckSample {
            acked_bytes: MSS,
            rtt: None,
            in_flight: 0,
            in_recovery: false,
            highest_sent: highest,
            cumulative_ack: cumulative,
            ecn_echo: marked,
            ce_segments: None,
            one_way_delay: None,
            rate: None,
        }
    }

    #[test]
    fn alpha_moves_by_g_towards_each_windows_marked_fraction() {
        let mut d = Dctcp::new(MSS, 10, 1.0 / 16.0, 1.0);
        d.on_ack(Time::ZERO, &ack(1, 10, false)); // opens the first window, ending at 10
                                                  // Segments 2..=10: within the window, 3 of them marked.
        for s in 2..=10 {
            d.on_ack(Time::ZERO, &ack(s, 20, s % 3 == 0));
        }
        assert_eq!(d.alpha(), 1.0, "no update before the window ends");
        d.on_ack(Time::ZERO, &ack(11, 20, false));
        // M = 3 marked of 11 acknowledged segments (the first ACK counts too).
        let m = 3.0 / 11.0;
        let want = 15.0 / 16.0 + m / 16.0;
        assert!((d.alpha() - want).abs() < 1e-12, "{} vs {want}", d.alpha());
        // Unmarked windows decay α geometrically by (1 − g).
        // Three more windows end at segments 21, 31 and 41.
        for next in 12..=41 {
            d.on_ack(Time::ZERO, &ack(next, (next / 10 + 1) * 10, false));
        }
        let decayed = want * (15.0f64 / 16.0).powi(3);
        assert!((d.alpha() - decayed).abs() < 1e-12, "{}", d.alpha());
    }

    #[test]
    fn an_echo_cuts_by_half_alpha_and_a_loss_halves() {
        let mut d = Dctcp::new(MSS, 40, 1.0 / 16.0, 0.2);
        let ecn = CongestionEvent::new(Congestion::Ecn, 40 * MSS);
        d.on_congestion_event(Time::ZERO, &ecn);
        assert_eq!(d.window(), 36 * MSS, "40 · (1 − 0.2/2)");
        assert_eq!(d.ssthresh(), Some(36 * MSS));
        let loss = CongestionEvent::new(Congestion::Loss, 36 * MSS);
        d.on_congestion_event(Time::ZERO, &loss);
        assert_eq!(d.window(), 18 * MSS, "RFC 5681 eq. (4)");
        // α = 1: an echo halves, as Reno would.
        let mut d = Dctcp::new(MSS, 40, 1.0 / 16.0, 1.0);
        d.on_congestion_event(Time::ZERO, &ecn);
        assert_eq!(d.window(), 20 * MSS);
    }

    #[test]
    fn parameters_are_checked() {
        for bad in [
            DctcpParams {
                g: 0.0,
                ..DctcpParams::default()
            },
            DctcpParams {
                initial_alpha: f64::NAN,
                ..DctcpParams::default()
            },
        ] {
            assert!(bad.validate().is_err());
        }
        assert!(DctcpParams::default().validate().is_ok());
    }
}
