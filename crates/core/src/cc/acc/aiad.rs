//! ACC-AIAD: 000 eq. (3), ẇ = −(κ/rtt)·sgn(a − a*), discretised over one control period (one
//! RTT) as cwnd ← cwnd − κ_A·sgn(â − a*), with κ_A one packet: Vegas's rule, driven by
//! Monaco's estimate.

use super::{AccPolicy, Feedback};

/// ACC-AIAD with step κ_A packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccAiad {
    /// Step in packets (SPEC §5: one packet).
    pub kappa_packets: f64,
}

impl AccPolicy for AccAiad {
    fn next_window(&mut self, cwnd: f64, fb: &Feedback) -> f64 {
        let err = fb.accumulation - fb.target;
        let sgn = if err > 0.0 {
            1.0
        } else if err < 0.0 {
            -1.0
        } else {
            0.0
        }; // 000 eq. (4)
        cwnd - self.kappa_packets * fb.mss * sgn // 000 eq. (3) × rtt
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fb;
    use super::*;

    #[test]
    fn steps_one_packet_by_the_sign() {
        let mut p = AccAiad { kappa_packets: 1.0 };
        assert_eq!(p.next_window(10_000.0, &fb(9000.0)), 9000.0);
        assert_eq!(p.next_window(10_000.0, &fb(0.0)), 11_000.0);
        assert_eq!(p.next_window(10_000.0, &fb(3000.0)), 10_000.0);
    }
}
