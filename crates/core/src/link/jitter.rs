//! Delay variation on a link: each packet's propagation delay is the link's `delay` plus a
//! draw from a distribution, as netem's `delay D J [distribution X]` [netem] makes it, in either
//! of netem's two behaviours — packets reordered when a later one draws a shorter delay (netem's
//! time-sorted queue, `reorder = true`), or kept in order, each held behind the one ahead
//! (`reorder = false`, the default here).
//!
//! The draw, with `amount` J: `uniform`, uniform in [−J, +J] (netem without a table);
//! `normal`, J·N(0, 1); `pareto`, J·(X − E X)/σ_X for X Pareto with shape 3 (a heavy right
//! tail; zero mean, standard deviation J); `paretonormal`, 0.25 of the normal draw and 0.75 of
//! the Pareto one, rescaled to standard deviation J (netem's mix, here exact rather than a
//! table). A packet's delay is never negative: a draw below −delay gives zero.
//!
//! Not modelled: netem's correlation between successive draws (known to be broken in netem
//! itself, and dropped from its documentation's advice).

use rand::RngExt;
use rand_distr::{Distribution, Pareto, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::params::ParamError;
use crate::rng::Rng;
use crate::units::Duration;

/// `jitter = { amount = "5ms", distribution = "normal", reorder = false }` on a link.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Jitter {
    /// The spread J: the half-width of `uniform`, the standard deviation of the others.
    pub amount: Duration,
    /// The draw's distribution (default `uniform`).
    #[serde(default)]
    pub distribution: JitterDistribution,
    /// Whether a packet may overtake one sent before it on the link (netem's default
    /// behaviour). Default false: each packet arrives no earlier than the one ahead.
    #[serde(default)]
    pub reorder: bool,
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum JitterDistribution {
    #[default]
    Uniform,
    Normal,
    Pareto,
    Paretonormal,
}

/// The Pareto shape of the `pareto` draws: the mean is 3/2 and the variance 3/4 of the scale².
const PARETO_SHAPE: f64 = 3.0;

impl Jitter {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.amount == Duration::ZERO {
            return Err(ParamError::at(
                "amount",
                "a jitter of 0 varies nothing (leave `jitter` out)",
            ));
        }
        Ok(())
    }

    /// One packet's propagation delay on a link of delay `base`.
    pub fn delay(&self, base: Duration, rng: &mut Rng) -> Duration {
        let j = self.amount.as_nanos() as f64;
        let x = match self.distribution {
            JitterDistribution::Uniform => rng.random_range(-1.0..=1.0),
            JitterDistribution::Normal => rng.sample::<f64, _>(StandardNormal),
            JitterDistribution::Pareto => standard_pareto(rng),
            JitterDistribution::Paretonormal => {
                let (n, p) = (rng.sample::<f64, _>(StandardNormal), standard_pareto(rng));
                (0.25 * n + 0.75 * p) / (0.25f64.powi(2) + 0.75f64.powi(2)).sqrt()
            }
        };
        let d = base.as_nanos() as f64 + j * x;
        Duration(d.max(0.0).round() as u64)
    }

    /// The shortest delay [`delay`](Self::delay) can draw on a link of delay `base`: `base` −
    /// J for `uniform`; `base` − J·(E X − 1)/σ_X for `pareto` (its draw is never below the
    /// Pareto minimum, 1: −1/√3 standard deviations), less a nanosecond for the rounding;
    /// zero for `normal` and `paretonormal`, which are unbounded below. A parallel run's
    /// lookahead on a link between partitions.
    pub fn min_delay(&self, base: Duration) -> Duration {
        let j = self.amount.as_nanos() as f64;
        let below = match self.distribution {
            JitterDistribution::Uniform => j,
            JitterDistribution::Pareto => j / 3f64.sqrt(),
            JitterDistribution::Normal | JitterDistribution::Paretonormal => return Duration(0),
        };
        Duration((base.as_nanos() as f64 - below - 1.0).max(0.0).floor() as u64)
    }
}

/// A Pareto draw of shape 3, shifted and scaled to mean 0 and standard deviation 1.
fn standard_pareto(rng: &mut Rng) -> f64 {
    let a = PARETO_SHAPE;
    let x: f64 = Pareto::new(1.0, a).expect("a valid shape").sample(rng);
    let mean = a / (a - 1.0);
    let sd = (a / ((a - 1.0).powi(2) * (a - 2.0))).sqrt();
    (x - mean) / sd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    /// No draw is shorter than `min_delay`, and the bounded distributions come close to it.
    #[test]
    fn no_draw_is_shorter_than_the_least_delay() {
        let base = Duration::from_micros(10);
        for (dist, least) in [
            (JitterDistribution::Uniform, 7_999),
            (JitterDistribution::Pareto, 8_844),
            (JitterDistribution::Normal, 0),
            (JitterDistribution::Paretonormal, 0),
        ] {
            let j = Jitter {
                amount: Duration::from_micros(2),
                distribution: dist,
                reorder: false,
            };
            assert_eq!(j.min_delay(base), Duration(least), "{dist:?}");
            let mut rng = rng::stream(9, "jitter");
            let shortest = (0..200_000).map(|_| j.delay(base, &mut rng)).min().unwrap();
            assert!(shortest >= j.min_delay(base), "{dist:?}: {shortest:?}");
            if least > 0 {
                assert!(shortest.as_nanos() < least + 200, "{dist:?}: {shortest:?}");
            }
        }
        let wide = Jitter {
            amount: Duration::from_micros(20),
            distribution: JitterDistribution::Uniform,
            reorder: false,
        };
        assert_eq!(wide.min_delay(base), Duration(0));
    }

    #[test]
    fn each_distribution_has_its_spread_and_no_delay_is_negative() {
        let base = Duration::from_millis(10);
        for (dist, sd) in [
            (JitterDistribution::Uniform, 1.0 / 3f64.sqrt()),
            (JitterDistribution::Normal, 1.0),
            (JitterDistribution::Pareto, 1.0),
            (JitterDistribution::Paretonormal, 1.0),
        ] {
            let j = Jitter {
                amount: Duration::from_millis(2),
                distribution: dist,
                reorder: false,
            };
            let mut rng = rng::stream(5, "jitter");
            let n = 400_000;
            let xs: Vec<f64> = (0..n)
                .map(|_| (j.delay(base, &mut rng).as_nanos() as f64 - 10e6) / 2e6)
                .collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            assert!(mean.abs() < 0.01, "{dist:?} mean {mean}");
            // Pareto of shape 3 has no fourth moment: its sample variance converges slowly.
            let tol = if matches!(
                dist,
                JitterDistribution::Uniform | JitterDistribution::Normal
            ) {
                0.01
            } else {
                0.1
            };
            assert!(
                (var.sqrt() - sd).abs() < tol * sd,
                "{dist:?} sd {}",
                var.sqrt()
            );
            if dist == JitterDistribution::Uniform {
                assert!(xs.iter().all(|x| x.abs() <= 1.0));
            }
        }
        // A spread larger than the delay clips at zero.
        let j = Jitter {
            amount: Duration::from_millis(50),
            distribution: JitterDistribution::Normal,
            reorder: true,
        };
        let mut rng = rng::stream(5, "jitter");
        let zeros = (0..10_000)
            .filter(|_| j.delay(Duration::from_millis(1), &mut rng) == Duration::ZERO)
            .count();
        assert!(zeros > 4000, "{zeros}");
    }

    #[test]
    fn jitter_reads_its_table() {
        let j: Jitter = toml::from_str("amount = \"5ms\"\ndistribution = \"pareto\"").unwrap();
        assert_eq!(j.distribution, JitterDistribution::Pareto);
        assert!(!j.reorder);
        assert!(toml::from_str::<Jitter>("amount = \"5ms\"\nspread = 1").is_err());
        let zero: Jitter = toml::from_str("amount = \"0ms\"").unwrap();
        assert_eq!(zero.validate().unwrap_err().key, "amount");
    }
}
