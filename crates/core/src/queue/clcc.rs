//! CLCC (004 §IV): closed-loop control of BAT's decrease constant for non-responsive traffic.
//!
//! An integral controller adapts D_UDP so that the ratio r of serviced UDP to serviced TCP rate
//! follows a reference r_ref (configured, or the max-min fair allocation of the offered loads):
//! - r is sampled every 100 ms and averaged over the last second (a low-pass filter);
//! - every second, x_d = (r_ref − r̄)/r_ref (004 eq. (5)) and D_UDP ← D_UDP·(1 + β·x_d), the
//!   integral law of eq. (6) with b_0 = β·D_UDP, β < 0 chosen from three magnitudes by |x_d|;
//! - D_UDP is bounded to [D_min, min(D_max, C/ΣO)] (004 eq. (7), in BAT's normalised units);
//! - control preemption: while the offered UDP load is below its reference share or its assured
//!   minimum, D_UDP is not integrated but decays by 10% per period (004 §IV-B).
//!
//! Choices the paper leaves open (its Fig. 5 is lost in the text), documented defaults: β = −0.1,
//! −0.5, −1.0 for |x_d| below 0.1, below 0.5 and above; D_min = 1e-4 (a multiplicative law
//! cannot leave zero); D_max = 1.

use serde::{Deserialize, Serialize};

/// CLCC settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ClccSettings {
    /// Desired UDP/TCP ratio; `None` = the max-min fair allocation of the offered loads.
    pub r_ref: Option<f64>,
    /// β for |x_d| < thresholds[0], < thresholds[1], and above.
    pub betas: [f64; 3],
    pub thresholds: [f64; 2],
    pub d_min: f64,
    pub d_max: f64,
    /// Samples per control period (10 × 100 ms = 1 s).
    pub samples_per_period: usize,
    /// Apply the upper bound min(D_max, 1/ΣO) (004 §IV-A); off only to show what it prevents.
    pub bound: bool,
    /// Control preemption (004 §IV-B); off only to show the wind-up it prevents.
    pub preemption: bool,
}

impl Default for ClccSettings {
    fn default() -> Self {
        ClccSettings {
            r_ref: None,
            betas: [-0.1, -0.5, -1.0],
            thresholds: [0.1, 0.5],
            d_min: 1e-4,
            d_max: 1.0,
            samples_per_period: 10,
            bound: true,
            preemption: true,
        }
    }
}

/// One 100 ms sample of the classes CLCC watches, rates normalised to the link capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClccSample {
    pub udp_serviced: f64,
    pub tcp_serviced: f64,
    pub udp_offered: f64,
    /// Sum of every class's offered rate.
    pub total_offered: f64,
    /// The UDP class's assured minimum rate.
    pub udp_min: f64,
}

/// The controller's state.
#[derive(Clone, Debug)]
pub struct Clcc {
    cfg: ClccSettings,
    d_udp: f64,
    samples: Vec<ClccSample>,
    /// The last period's mean ratio and reference, for monitors.
    pub last_ratio: f64,
    pub last_reference: f64,
    pub preempted: bool,
}

impl Clcc {
    pub fn new(cfg: ClccSettings, d_udp: f64) -> Clcc {
        Clcc {
            d_udp: d_udp.clamp(cfg.d_min, cfg.d_max),
            cfg,
            samples: Vec::new(),
            last_ratio: 0.0,
            last_reference: 0.0,
            preempted: false,
        }
    }

    /// The decrease constant BAT applies to the UDP class now.
    pub fn d_udp(&self) -> f64 {
        self.d_udp
    }

    /// The UDP share of the link the reference asks for, for the given offered loads.
    fn reference(&self, s: &ClccSample) -> (f64, f64) {
        match self.cfg.r_ref {
            Some(r) => (r, r / (1.0 + r)),
            None => {
                // Max-min between the UDP aggregate (its offered load) and the elastic TCP one
                // on a link of capacity 1: UDP gets min(offered, 1/2).
                let udp = s.udp_offered.min(0.5);
                (udp / (1.0 - udp), udp)
            }
        }
    }

    /// Takes one 100 ms sample; every `samples_per_period` samples runs one control step.
    pub fn on_sample(&mut self, s: ClccSample) {
        self.samples.push(s);
        if self.samples.len() < self.cfg.samples_per_period {
            return;
        }
        let n = self.samples.len() as f64;
        let mean = |f: fn(&ClccSample) -> f64| self.samples.iter().map(f).sum::<f64>() / n;
        let avg = ClccSample {
            udp_serviced: mean(|s| s.udp_serviced),
            tcp_serviced: mean(|s| s.tcp_serviced),
            udp_offered: mean(|s| s.udp_offered),
            total_offered: mean(|s| s.total_offered),
            udp_min: mean(|s| s.udp_min),
        };
        // r̄: the mean of the per-sample ratios (004 §IV: sampled every 100 ms, averaged over 1 s).
        let ratio = self
            .samples
            .iter()
            .map(|s| s.udp_serviced / s.tcp_serviced.max(1e-9))
            .sum::<f64>()
            / n;
        self.samples.clear();
        let (r_ref, udp_share) = self.reference(&avg);
        self.last_ratio = ratio;
        self.last_reference = r_ref;
        self.preempted =
            self.cfg.preemption && (avg.udp_offered < udp_share || avg.udp_offered <= avg.udp_min);
        let upper = if self.cfg.bound {
            self.cfg.d_max.min(1.0 / avg.total_offered.max(1e-9)) // 004 eq. (7)
        } else {
            f64::INFINITY
        };
        if self.preempted {
            self.d_udp *= 0.9;
        } else {
            let x_d = (r_ref - ratio) / r_ref.max(1e-12); // 004 eq. (5)
            let beta = if x_d.abs() < self.cfg.thresholds[0] {
                self.cfg.betas[0]
            } else if x_d.abs() < self.cfg.thresholds[1] {
                self.cfg.betas[1]
            } else {
                self.cfg.betas[2]
            };
            self.d_udp *= 1.0 + beta * x_d; // 004 eq. (6), b_0 = β·D_UDP
        }
        self.d_udp = self.d_udp.clamp(self.cfg.d_min, upper.max(self.cfg.d_min));
    }
}

/// CLCC on a BAT link (004 §IV; defaults in queue/clcc.rs).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClccParams {
    /// The desired UDP/TCP ratio, or "max-min".
    pub r_ref: RatioParam,
    #[serde(default = "udp_name")]
    pub udp_class: String,
    #[serde(default = "tcp_name")]
    pub tcp_class: String,
    /// Upper bound of D_UDP (also bounded by 1/ΣO; omit for no bound beyond that).
    pub d_max: Option<f64>,
    /// β for |x_d| < 0.1, < 0.5 and above.
    pub betas: Option<[f64; 3]>,
    /// Bound D_UDP by min(d_max, 1/ΣO) (default true; false only to study its effect).
    #[serde(default = "crate::params::yes")]
    pub bound: bool,
    /// Control preemption (default true; false only to study its effect).
    #[serde(default = "crate::params::yes")]
    pub preemption: bool,
}

fn udp_name() -> String {
    "udp".into()
}
fn tcp_name() -> String {
    "tcp".into()
}

/// A ratio, or "max-min".
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum RatioParam {
    Fixed(f64),
    MaxMin,
}

crate::units::form_schema!(
    RatioParam,
    schemars::json_schema!({ "x-form": "a positive ratio such as 0.42, or \"max-min\"" })
);
impl<'de> Deserialize<'de> for RatioParam {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(x) if x > 0.0 && x.is_finite() => Ok(RatioParam::Fixed(x)),
            Raw::N(x) => Err(serde::de::Error::custom(format!(
                "r_ref must be positive, not {x}"
            ))),
            Raw::S(s) if s == "max-min" => Ok(RatioParam::MaxMin),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "r_ref must be a ratio such as 0.42 or \"max-min\", not {s:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(udp: f64, tcp: f64, offered_udp: f64) -> ClccSample {
        ClccSample {
            udp_serviced: udp,
            tcp_serviced: tcp,
            udp_offered: offered_udp,
            total_offered: offered_udp + 1.0,
            udp_min: 0.0,
        }
    }

    fn period(c: &mut Clcc, s: ClccSample) {
        for _ in 0..10 {
            c.on_sample(s);
        }
    }

    #[test]
    fn too_much_udp_raises_d_and_too_little_lowers_it() {
        let cfg = ClccSettings {
            r_ref: Some(0.5),
            ..ClccSettings::default()
        };
        let mut c = Clcc::new(cfg.clone(), 0.1);
        // r = 2 vs 0.5: x_d = −3, β = −1 ⇒ D ← D·4, bounded by 1/ΣO = 1/1.9.
        period(&mut c, sample(0.6, 0.3, 0.9));
        assert!((c.d_udp() - 0.4).abs() < 1e-12, "{}", c.d_udp());
        // r = 0.4: x_d = 0.2 ⇒ β = −0.5 ⇒ D ← D·0.9.
        period(&mut c, sample(0.4, 1.0, 0.9));
        assert!((c.d_udp() - 0.36).abs() < 1e-12, "{}", c.d_udp());
        // r = 0.49: |x_d| = 0.02 ⇒ β = −0.1.
        period(&mut c, sample(0.49, 1.0, 0.9));
        assert!((c.d_udp() - 0.36 * (1.0 - 0.1 * 0.02)).abs() < 1e-12);
    }

    #[test]
    fn bound_holds() {
        let cfg = ClccSettings {
            r_ref: Some(0.1),
            ..ClccSettings::default()
        };
        let mut c = Clcc::new(cfg, 0.5);
        for _ in 0..20 {
            period(&mut c, sample(0.9, 0.1, 2.0));
            assert!(c.d_udp() <= 1.0 / 3.0 + 1e-12, "{}", c.d_udp());
        }
    }

    #[test]
    fn preemption_decays_instead_of_integrating() {
        let cfg = ClccSettings {
            r_ref: Some(0.5),
            ..ClccSettings::default()
        };
        let mut c = Clcc::new(cfg, 0.2);
        // Offered UDP 0.2 < its reference share 1/3: no integration, 10% decay.
        period(&mut c, sample(0.2, 0.8, 0.2));
        assert!(c.preempted);
        assert!((c.d_udp() - 0.18).abs() < 1e-12);
    }
}
