//! Random loss on a link, before its queue: independent (Bernoulli) losses, or bursts from the
//! Gilbert–Elliott channel [Gil60, Ell63], a two-state Markov chain stepped once per packet.
//!
//! Gilbert–Elliott's four parameters, as netem's `loss gemodel p r 1-h 1-k` takes them (and in
//! netem's order): `p`, the probability of going from the good state to the bad one; `r`, of
//! going back; `loss_bad` (netem's 1 − h), the loss probability in the bad state; `loss_good`
//! (1 − k), in the good state. With the defaults `loss_bad = 1`, `loss_good = 0` it is the
//! simple Gilbert model: every packet in a burst is lost, bursts last 1/r packets on average.
//!
//! Departure from netem: netem decides a packet's loss in the state it has just moved to
//! (and for a packet leaving the good state, with the good state's probability); here a packet
//! is lost or not in the channel's present state, and the channel then moves. The stationary
//! loss rate, [`LossModel::mean`], is the same.

use std::fmt;

use rand::RngExt;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::params::ParamError;
use crate::rng::Rng;

/// `loss = 0.01`, or `loss = { model = "gilbert-elliott", p = 0.01, r = 0.3 }`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    /// Each packet is lost with this probability, independently.
    Bernoulli(f64),
    GilbertElliott(GilbertElliott),
}

/// The Gilbert–Elliott channel's parameters (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GilbertElliott {
    /// Probability of moving from the good state to the bad one, per packet (netem's p).
    pub p: f64,
    /// Probability of moving from the bad state to the good one, per packet (netem's r).
    pub r: f64,
    /// Loss probability in the bad state (netem's 1 − h). Default 1.
    pub loss_bad: f64,
    /// Loss probability in the good state (netem's 1 − k). Default 0.
    pub loss_good: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for LossModel {
    fn default() -> LossModel {
        LossModel::Bernoulli(0.0)
    }
}

impl LossModel {
    /// Whether the link never loses a packet at random.
    pub fn is_none(&self) -> bool {
        *self == LossModel::Bernoulli(0.0)
    }

    /// The long-run fraction of packets lost: `p` itself, or the Gilbert–Elliott chain's
    /// stationary loss, π_G·loss_good + π_B·loss_bad with π_B = p / (p + r).
    pub fn mean(&self) -> f64 {
        match *self {
            LossModel::Bernoulli(p) => p,
            LossModel::GilbertElliott(g) => {
                let bad = g.p / (g.p + g.r);
                (1.0 - bad) * g.loss_good + bad * g.loss_bad
            }
        }
    }

    /// Checks the probabilities; errors name the key inside the `loss` table.
    pub fn validate(&self) -> Result<(), ParamError> {
        let prob = |key: &str, x: f64, closed: bool| {
            let ok = if closed {
                (0.0..=1.0).contains(&x)
            } else {
                (0.0..1.0).contains(&x)
            };
            if ok {
                Ok(())
            } else {
                let range = if closed { "[0, 1]" } else { "[0, 1)" };
                Err(ParamError::at(
                    key,
                    format!("probability {x} is not in {range}"),
                ))
            }
        };
        match *self {
            LossModel::Bernoulli(p) => prob("", p, false),
            LossModel::GilbertElliott(g) => {
                prob("p", g.p, true)?;
                prob("r", g.r, true)?;
                prob("loss_bad", g.loss_bad, true)?;
                prob("loss_good", g.loss_good, false)?;
                if g.p == 0.0 && g.r == 0.0 {
                    return Err(ParamError::at(
                        "r",
                        "p and r are both 0: the channel never changes state (give r > 0, or \
                         a Bernoulli `loss`)",
                    ));
                }
                if g.r == 0.0 && g.loss_bad >= 1.0 {
                    return Err(ParamError::at(
                        "r",
                        "r = 0 with loss_bad = 1: once bad, the link loses every packet for ever",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// A link's loss process: the model and, for Gilbert–Elliott, its state.
#[derive(Clone, Debug)]
pub struct LossProcess {
    model: LossModel,
    bad: bool,
}

impl LossProcess {
    /// The process in its good state (a Gilbert–Elliott channel starts good).
    pub fn new(model: LossModel) -> LossProcess {
        LossProcess { model, bad: false }
    }

    /// Whether the next packet is lost, drawing from `rng`. Bernoulli draws one number per
    /// packet (as the simulator always has); Gilbert–Elliott two.
    #[inline]
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self.model {
            LossModel::Bernoulli(p) => rng.random::<f64>() < p,
            LossModel::GilbertElliott(g) => {
                let (loss, leave) = if self.bad {
                    (g.loss_bad, g.r)
                } else {
                    (g.loss_good, g.p)
                };
                let lost = rng.random::<f64>() < loss;
                if rng.random::<f64>() < leave {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }
}

impl Serialize for LossModel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LossModel::Bernoulli(p) => s.serialize_f64(*p),
            LossModel::GilbertElliott(g) => {
                #[derive(Serialize)]
                struct Tagged<'a> {
                    model: &'static str,
                    #[serde(flatten)]
                    params: &'a GilbertElliott,
                }
                Tagged {
                    model: GILBERT_ELLIOTT,
                    params: g,
                }
                .serialize(s)
            }
        }
    }
}

const GILBERT_ELLIOTT: &str = "gilbert-elliott";

impl<'de> Deserialize<'de> for LossModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LossModel, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LossModel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a loss probability (e.g. 0.01) or a table { model = \"gilbert-elliott\", p, r, \
                     loss_bad, loss_good }",
                )
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<LossModel, E> {
                Ok(LossModel::Bernoulli(x))
            }
            fn visit_i64<E: de::Error>(self, x: i64) -> Result<LossModel, E> {
                Ok(LossModel::Bernoulli(x as f64))
            }
            fn visit_u64<E: de::Error>(self, x: u64) -> Result<LossModel, E> {
                Ok(LossModel::Bernoulli(x as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LossModel, A::Error> {
                /// The table as written: the model's name and its parameters.
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Table {
                    model: String,
                    p: f64,
                    r: f64,
                    #[serde(default = "one")]
                    loss_bad: f64,
                    #[serde(default)]
                    loss_good: f64,
                }
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if t.model != GILBERT_ELLIOTT {
                    return Err(de::Error::custom(format!(
                        "unknown loss model {:?} (known: \"{GILBERT_ELLIOTT}\"; a plain number is \
                         a Bernoulli loss probability)",
                        t.model
                    )));
                }
                Ok(LossModel::GilbertElliott(GilbertElliott {
                    p: t.p,
                    r: t.r,
                    loss_bad: t.loss_bad,
                    loss_good: t.loss_good,
                }))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    fn ge(p: f64, r: f64, loss_bad: f64, loss_good: f64) -> LossModel {
        LossModel::GilbertElliott(GilbertElliott {
            p,
            r,
            loss_bad,
            loss_good,
        })
    }

    #[test]
    fn gilbert_elliott_loses_its_stationary_fraction_in_bursts() {
        for m in [ge(0.01, 0.3, 1.0, 0.0), ge(0.05, 0.2, 0.7, 0.01)] {
            let mut proc = LossProcess::new(m);
            let mut rng = rng::stream(1, "test");
            let n = 2_000_000;
            let (mut lost, mut runs, mut prev) = (0u64, 0u64, false);
            for _ in 0..n {
                let l = proc.lose(&mut rng);
                lost += u64::from(l);
                runs += u64::from(l && !prev);
                prev = l;
            }
            let rate = lost as f64 / n as f64;
            // Standard error of a two-state chain's mean is a few times the Bernoulli one's.
            assert!(
                (rate - m.mean()).abs() < 0.05 * m.mean(),
                "{m:?}: {rate} vs {}",
                m.mean()
            );
            if let LossModel::GilbertElliott(g) = m {
                if g.loss_bad == 1.0 && g.loss_good == 0.0 {
                    // Simple Gilbert: bursts of 1/r packets on average.
                    let burst = lost as f64 / runs as f64;
                    assert!((burst - 1.0 / g.r).abs() < 0.05 / g.r, "burst {burst}");
                }
            }
        }
        assert!((ge(0.01, 0.3, 1.0, 0.0).mean() - 0.01 / 0.31).abs() < 1e-15);
    }

    #[test]
    fn bernoulli_draws_one_number_per_packet() {
        // The simulator's links have always drawn one number a packet: runs with `loss` stay
        // as they were.
        let mut a = rng::stream(3, "x");
        let mut b = rng::stream(3, "x");
        let mut proc = LossProcess::new(LossModel::Bernoulli(0.3));
        for _ in 0..1000 {
            assert_eq!(proc.lose(&mut a), b.random::<f64>() < 0.3);
        }
    }

    #[test]
    fn loss_reads_a_number_or_a_table_and_checks_it() {
        #[derive(Deserialize)]
        struct L {
            loss: LossModel,
        }
        let l: L = toml::from_str("loss = 0.01").unwrap();
        assert_eq!(l.loss, LossModel::Bernoulli(0.01));
        let l: L = toml::from_str("loss = 0").unwrap();
        assert!(l.loss.is_none());
        let l: L =
            toml::from_str("loss = { model = \"gilbert-elliott\", p = 0.01, r = 0.3 }").unwrap();
        assert_eq!(l.loss, ge(0.01, 0.3, 1.0, 0.0));
        let e = toml::from_str::<L>("loss = { model = \"gilbert\", p = 0.01, r = 0.3 }")
            .err()
            .unwrap();
        assert!(e.to_string().contains("unknown loss model"), "{e}");
        let e = toml::from_str::<L>("loss = { model = \"gilbert-elliott\", p = 0.01, q = 0.3 }")
            .err()
            .unwrap();
        assert!(e.to_string().contains("unknown field `q`"), "{e}");
        assert!(LossModel::Bernoulli(1.0).validate().is_err());
        assert_eq!(ge(1.5, 0.3, 1.0, 0.0).validate().unwrap_err().key, "p");
        assert_eq!(ge(0.0, 0.0, 1.0, 0.0).validate().unwrap_err().key, "r");
        assert_eq!(ge(0.1, 0.0, 1.0, 0.0).validate().unwrap_err().key, "r");
        // Written back as read.
        let t = toml::to_string(&std::collections::BTreeMap::from([(
            "loss",
            ge(0.01, 0.3, 1.0, 0.0),
        )]))
        .unwrap();
        let l: L = toml::from_str(&t).unwrap();
        assert_eq!(l.loss, ge(0.01, 0.3, 1.0, 0.0));
    }
}
