//! Time, size and rate types, and the unit strings scenario files use.
//!
//! Time is an integer count of nanoseconds (SPEC §2): there is no floating-point clock anywhere in
//! acclab, so the same scenario gives the same events on every machine. Rates are bits per second,
//! sizes bytes. Scenario strings carry their unit (`"100Mbps"`, `"4ms"`, `"60KB"`, `"90pkt"`); a
//! bare number is rejected rather than guessed. KB = 1000 B, as the papers use it; KiB = 1024 B.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

const NS_PER_S: u64 = 1_000_000_000;

/// An instant: nanoseconds since the start of a run (simulation) or of a session (live).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A buffer limit: a number of packets, a number of bytes, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
    Unlimited,
}

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn from_secs_f64(s: f64) -> Time {
        Time(Duration::from_secs_f64(s).0)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * NS_PER_S)
    }
    /// Rounds to the nearest nanosecond; negative or non-finite input gives zero.
    pub fn from_secs_f64(s: f64) -> Duration {
        if s.is_finite() && s > 0.0 {
            Duration((s * NS_PER_S as f64).round() as u64)
        } else {
            Duration::ZERO
        }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating: an interval never goes negative.
    fn sub(self, earlier: Time) -> Duration {
        self.since(earlier)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}

impl Rate {
    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// Rate of `bytes` carried over `d`; zero for an empty interval.
    pub fn of(bytes: u64, d: Duration) -> f64 {
        if d.0 == 0 {
            0.0
        } else {
            bytes as f64 * 8.0 * NS_PER_S as f64 / d.0 as f64
        }
    }
    /// Serialisation time of `bytes` at this rate, rounded up to the next nanosecond so that a
    /// link never carries more than its rate. A zero rate never finishes.
    pub fn tx_time(self, bytes: u64) -> Duration {
        if self.0 == 0 {
            return Duration(u64::MAX);
        }
        let bits = bytes as u128 * 8 * NS_PER_S as u128;
        // Every packet (under 2.3 GB) fits in 64 bits: one u64 division on the hot path instead
        // of a 128-bit library call; the same quotient.
        if let Ok(bits) = u64::try_from(bits) {
            return Duration(bits.div_ceil(self.0));
        }
        Duration(bits.div_ceil(self.0 as u128).min(u64::MAX as u128) as u64)
    }
    /// Bytes this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: Duration) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * NS_PER_S as u128)) as u64
    }
}

/// A rate with its reciprocal, so that a transmission time costs a multiplication and a shift
/// instead of a division: the simulator's links, which compute one per packet-hop. The times
/// are exactly [`Rate::tx_time`]'s — division by an invariant integer [GM94, Thm. 4.2]: for
/// 0 < d ≤ 2^l and m = ⌈2^(N+l) / d⌉, ⌊n / d⌋ = ⌊m·n / 2^(N+l)⌋ for every 0 ≤ n < 2^N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reciprocal {
    rate: Rate,
    /// m for N = 63 (in [2^63, 2^64) when l ≥ 1); 0 where the multiplication does not apply
    /// (a rate of 0 or 1 b/s, or one of 2^62 b/s and more): those divide.
    magic: u64,
}

impl Reciprocal {
    /// The widest numerator the multiplication is exact for: N = 63.
    const N: u32 = 63;
    /// Transmissions of fewer bytes than this are multiplied: the numerator ⌈bytes·8·10^9⌉
    /// taken as ⌊(bytes·8·10^9 + d − 1) / d⌋ stays under 2^63 with d < 2^62.
    const FAST_BYTES: u32 = 1 << 29;

    pub fn new(rate: Rate) -> Reciprocal {
        let d = rate.0;
        let magic = if (2..1 << 62).contains(&d) {
            let l = Reciprocal::ceil_log2(d);
            // m = ⌈2^(N+l) / d⌉ < 2^64 since d > 2^(l-1).
            let m = (1u128 << (Reciprocal::N + l)).div_ceil(u128::from(d));
            u64::try_from(m).expect("m < 2^64 for d > 2^(l-1)")
        } else {
            0
        };
        Reciprocal { rate, magic }
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// l = ⌈log2 d⌉ for d ≥ 1.
    #[inline(always)]
    fn ceil_log2(d: u64) -> u32 {
        u64::BITS - (d - 1).leading_zeros()
    }

    /// [`Rate::tx_time`] of `bytes` at this rate.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Duration {
        if bytes >= Reciprocal::FAST_BYTES || self.magic == 0 {
            return self.rate.tx_time(u64::from(bytes));
        }
        let d = self.rate.0;
        // ⌈x / d⌉ = ⌊(x + d − 1) / d⌋; x < 2^62 and d < 2^62, so n < 2^63 = 2^N.
        let n = u64::from(bytes) * 8 * NS_PER_S + (d - 1);
        let l = Reciprocal::ceil_log2(d);
        // ⌊m·n / 2^(63+l)⌋ [GM94, Thm. 4.2], as the high word shifted by l − 1 (l ≥ 1 here).
        let high = ((u128::from(self.magic) * u128::from(n)) >> 64) as u64;
        Duration(high >> (l - 1))
    }
}

/// Why a unit string was rejected. The message names the value and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad {what} {value:?}: {reason}")]
pub struct UnitError {
    pub what: &'static str,
    pub value: String,
    pub reason: String,
}

fn unit_error(what: &'static str, value: &str, reason: impl Into<String>) -> UnitError {
    UnitError {
        what,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Splits `"12.5Mbps"` into the number and the unit and checks the number is finite and > 0
/// (or ≥ 0 when `allow_zero`).
fn split_number<'a>(
    what: &'static str,
    s: &'a str,
    allow_zero: bool,
) -> Result<(f64, &'a str), UnitError> {
    let t = s.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(t.len());
    // 'e' is part of a number only when followed by a digit or sign; otherwise it starts a unit.
    let (mut num, mut unit) = t.split_at(end);
    if let Some(pos) = num.find('e') {
        if pos + 1 == num.len() {
            unit = &t[pos..];
            num = &t[..pos];
        }
    }
    let unit = unit.trim();
    if num.is_empty() {
        return Err(unit_error(what, s, "it does not start with a number"));
    }
    let x: f64 = num
        .parse()
        .map_err(|_| unit_error(what, s, format!("{num:?} is not a number")))?;
    if !x.is_finite() {
        return Err(unit_error(what, s, "the number is not finite"));
    }
    if x < 0.0 {
        return Err(unit_error(what, s, "it is negative"));
    }
    if x == 0.0 && !allow_zero {
        return Err(unit_error(what, s, "it must be greater than zero"));
    }
    Ok((x, unit))
}

fn to_integer(what: &'static str, s: &str, x: f64) -> Result<u64, UnitError> {
    let r = x.round();
    if r > u64::MAX as f64 / 2.0 {
        return Err(unit_error(what, s, "it is too large"));
    }
    Ok(r as u64)
}

impl Duration {
    /// Parses `"4ms"`, `"250us"`, `"1.5s"`, `"10ns"`, `"2min"`; zero is allowed (`"0s"`).
    /// Microseconds may also be written `µs` (the micro sign, U+00B5) or `μs` (Greek mu,
    /// U+03BC), which look alike and which people paste from papers: accepted on purpose.
    pub fn parse(s: &str) -> Result<Duration, UnitError> {
        const WHAT: &str = "duration";
        let (x, unit) = split_number(WHAT, s, true)?;
        let scale = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "min" => 60e9,
            "" => {
                return Err(unit_error(
                    WHAT,
                    s,
                    "missing unit (use ns, us or µs, ms, s or min)",
                ))
            }
            u => {
                return Err(unit_error(
                    WHAT,
                    s,
                    format!("unknown unit {u:?} (use ns, us or µs, ms, s or min)"),
                ))
            }
        };
        Ok(Duration(to_integer(WHAT, s, x * scale)?))
    }
}

impl Rate {
    /// Parses `"100Mbps"` or `"100Mb/s"`, `"1.5Gbps"`, `"64kbps"`, `"6000KB/s"` (bytes); must be
    /// greater than zero.
    pub fn parse(s: &str) -> Result<Rate, UnitError> {
        const WHAT: &str = "rate";
        const UNITS: &str = "use bps, kbps, Mbps, Gbps (or b/s, kb/s, Mb/s, Gb/s), \
                             or bytes: B/s, KB/s, MB/s, GB/s";
        let (x, unit) = split_number(WHAT, s, false)?;
        let scale = match unit {
            "bps" | "b/s" => 1.0,
            "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
            "Mbps" | "Mb/s" => 1e6,
            "Gbps" | "Gb/s" => 1e9,
            "Tbps" | "Tb/s" => 1e12,
            "B/s" => 8.0,
            "KB/s" | "kB/s" => 8e3,
            "MB/s" => 8e6,
            "GB/s" => 8e9,
            "" => return Err(unit_error(WHAT, s, format!("missing unit ({UNITS})"))),
            u => return Err(unit_error(WHAT, s, format!("unknown unit {u:?} ({UNITS})"))),
        };
        let bps = to_integer(WHAT, s, x * scale)?;
        if bps == 0 {
            return Err(unit_error(WHAT, s, "it is below 1 bit per second"));
        }
        Ok(Rate(bps))
    }
}

fn byte_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

impl Bytes {
    /// Parses `"1000B"`, `"60KB"`, `"1.5MB"`, `"64KiB"`; must be greater than zero.
    pub fn parse(s: &str) -> Result<Bytes, UnitError> {
        const WHAT: &str = "size";
        let (x, unit) = split_number(WHAT, s, false)?;
        let scale = byte_scale(unit).ok_or_else(|| {
            unit_error(
                WHAT,
                s,
                format!("unknown unit {unit:?} (use B, KB, MB, GB, KiB, MiB or GiB)"),
            )
        })?;
        let b = to_integer(WHAT, s, x * scale)?;
        if b == 0 {
            return Err(unit_error(WHAT, s, "it is below one byte"));
        }
        Ok(Bytes(b))
    }
}

impl Limit {
    /// Parses `"90pkt"`, `"60KB"` (any byte unit) or `"inf"`; a limit of zero is rejected.
    pub fn parse(s: &str) -> Result<Limit, UnitError> {
        const WHAT: &str = "limit";
        let t = s.trim();
        if t == "inf" || t == "unlimited" {
            return Ok(Limit::Unlimited);
        }
        let (x, unit) = split_number(WHAT, s, false)?;
        if unit == "pkt" || unit == "pkts" || unit == "packets" {
            if x.fract() != 0.0 {
                return Err(unit_error(WHAT, s, "a packet count must be whole"));
            }
            return Ok(Limit::Packets(to_integer(WHAT, s, x)?));
        }
        match byte_scale(unit) {
            Some(scale) => Ok(Limit::Bytes(to_integer(WHAT, s, x * scale)?.max(1))),
            None => Err(unit_error(
                WHAT,
                s,
                format!("unknown unit {unit:?} (use pkt, a byte unit such as KB, or \"inf\")"),
            )),
        }
    }

    /// Whether a queue holding `pkts` packets and `bytes` bytes can accept one more of `size`.
    pub fn admits(self, pkts: u64, bytes: u64, size: u64) -> bool {
        match self {
            Limit::Packets(n) => pkts < n,
            Limit::Bytes(n) => bytes + size <= n,
            Limit::Unlimited => true,
        }
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            write!(f, "0s")
        } else if ns.is_multiple_of(NS_PER_S) {
            write!(f, "{}s", ns / NS_PER_S)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (scale, unit) in [
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
        ] {
            if b >= scale && b.is_multiple_of(scale / 1000) {
                return write!(f, "{}{unit}", b as f64 / scale as f64);
            }
        }
        write!(f, "{b}bps")
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Packets(n) => write!(f, "{n}pkt"),
            Limit::Bytes(n) => write!(f, "{n}B"),
            Limit::Unlimited => write!(f, "inf"),
        }
    }
}

/// Scenario values are strings with units; a bare number is an error that says which unit to add.
macro_rules! unit_serde {
    ($t:ty, $expect:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        <$t>::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<$t, E> {
                        Err(E::custom(format!(
                            "bare number {n}: write it as a string with a unit, {}",
                            $expect
                        )))
                    }
                    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<$t, E> {
                        self.visit_i64(n as i64)
                    }
                    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<$t, E> {
                        Err(E::custom(format!(
                            "bare number {n}: write it as a string with a unit, {}",
                            $expect
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        form_schema!($t, string_schema($expect));
    };
}

/// `impl JsonSchema` for a parameter type with its own serde, as `schema`, inlined where used
/// (the field's doc comment then becomes its description).
macro_rules! form_schema {
    ($t:ty, $schema:expr) => {
        impl schemars::JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $schema
            }
        }
    };
}
pub(crate) use form_schema;

/// The schema of a parameter written as a string: `x-form` says what it takes (the field's doc
/// comment, merged in as its description, says what it means).
pub fn string_schema(form: &str) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "x-form": form })
}
unit_serde!(Duration, "a duration such as \"4ms\"");
unit_serde!(Rate, "a rate such as \"100Mbps\"");
unit_serde!(Bytes, "a size such as \"60KB\"");
unit_serde!(Limit, "a limit such as \"90pkt\", \"60KB\" or \"inf\"");

#[cfg(test)]
mod tests {
    use super::*;

    /// The reciprocal's time is the division's, at the edges of its range and beyond them.
    #[test]
    fn a_reciprocal_times_as_the_division_does() {
        let rates = [
            0,
            1,
            2,
            3,
            7,
            1_000,
            999_999_937,
            1_000_000_000,
            10_000_000_000,
            40_000_000_000,
            100_000_000_000,
            (1 << 61) + 1,
            (1 << 62) - 1,
            1 << 62,
            u64::MAX,
        ];
        let sizes = [
            0,
            1,
            40,
            64,
            1500,
            9000,
            65_535,
            (1 << 29) - 1,
            1 << 29,
            u32::MAX,
        ];
        for d in rates {
            let r = Reciprocal::new(Rate(d));
            for b in sizes {
                assert_eq!(
                    r.tx_time(b),
                    Rate(d).tx_time(u64::from(b)),
                    "{b} B at {d} b/s"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_reciprocal_times_as_the_division_does_anywhere(
            d in 0u64..1 << 63,
            bytes in proptest::prop_oneof![0u32..70_000, 0u32..1 << 29, proptest::num::u32::ANY],
            power in 1u32..63,
        ) {
            // Every rate, and powers of two and their neighbours (where m is smallest/largest).
            for d in [d, (1 << power) - 1, 1 << power, (1 << power) + 1] {
                let r = Reciprocal::new(Rate(d));
                proptest::prop_assert_eq!(r.tx_time(bytes), Rate(d).tx_time(u64::from(bytes)));
            }
        }
    }

    #[test]
    fn parses_durations() {
        assert_eq!(Duration::parse("4ms"), Ok(Duration::from_millis(4)));
        assert_eq!(Duration::parse("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(Duration::parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(Duration::parse("0s"), Ok(Duration::ZERO));
        assert_eq!(Duration::parse("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(Duration::parse("1e-3s"), Ok(Duration::from_millis(1)));
        // The micro sign and Greek mu both mean microseconds (accepted on purpose).
        assert_eq!(Duration::parse("10\u{b5}s"), Ok(Duration::from_micros(10)));
        assert_eq!(Duration::parse("10\u{3bc}s"), Ok(Duration::from_micros(10)));
    }

    #[test]
    fn rejects_bad_durations() {
        for bad in ["4", "4 parsecs", "-1s", "ms", "", "1..2s", "NaNs"] {
            assert!(Duration::parse(bad).is_err(), "{bad:?} accepted");
        }
        let e = Duration::parse("4").unwrap_err();
        assert!(e.to_string().contains("missing unit"), "{e}");
    }

    #[test]
    fn parses_rates() {
        assert_eq!(Rate::parse("100Mbps"), Ok(Rate(100_000_000)));
        assert_eq!(Rate::parse("1.5Gbps"), Ok(Rate(1_500_000_000)));
        assert_eq!(Rate::parse("64kbps"), Ok(Rate(64_000)));
        assert_eq!(Rate::parse("6000KB/s"), Ok(Rate(48_000_000)));
        // acclab's own output writes Mb/s: it reads back.
        assert_eq!(Rate::parse("100Mb/s"), Ok(Rate(100_000_000)));
        assert_eq!(Rate::parse("2.5Gb/s"), Ok(Rate(2_500_000_000)));
        assert_eq!(Rate::parse("64kb/s"), Ok(Rate(64_000)));
        assert_eq!(Rate::parse("9600b/s"), Ok(Rate(9_600)));
        let e = Rate::parse("0Mbps").unwrap_err();
        assert!(e.to_string().contains("greater than zero"), "{e}");
        assert!(Rate::parse("10Mbs")
            .unwrap_err()
            .to_string()
            .contains("Mbs"));
        assert!(Rate::parse("-5Mbps").is_err());
    }

    #[test]
    fn parses_sizes_and_limits() {
        assert_eq!(Bytes::parse("1000B"), Ok(Bytes(1000)));
        assert_eq!(Bytes::parse("60KB"), Ok(Bytes(60_000)));
        assert_eq!(Bytes::parse("64KiB"), Ok(Bytes(65_536)));
        assert_eq!(Limit::parse("90pkt"), Ok(Limit::Packets(90)));
        assert_eq!(Limit::parse("60KB"), Ok(Limit::Bytes(60_000)));
        assert_eq!(Limit::parse("inf"), Ok(Limit::Unlimited));
        assert!(Limit::parse("0pkt").is_err());
        assert!(Limit::parse("2.5pkt").is_err());
        assert!(Limit::parse("90").is_err());
    }

    #[test]
    fn serialisation_time_rounds_up() {
        // 1000 B at 100 Mb/s = 80 us exactly; at 3 bit/s a byte takes 8/3 s, rounded up.
        assert_eq!(
            Rate::from_mbps(100).tx_time(1000),
            Duration::from_micros(80)
        );
        assert_eq!(Rate(3).tx_time(1).0, 2_666_666_667);
        assert_eq!(
            Rate::from_mbps(8).bytes_in(Duration::from_secs(1)),
            1_000_000
        );
    }

    #[test]
    fn display_round_trips() {
        for s in ["4ms", "250us", "1s", "7ns"] {
            assert_eq!(Duration::parse(s).unwrap().to_string(), s);
        }
        for s in ["100Mbps", "1.5Gbps", "64kbps"] {
            assert_eq!(Rate::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn bare_numbers_are_rejected_with_a_hint() {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct S {
            d: Duration,
        }
        let e = toml::from_str::<S>("d = 4").unwrap_err().to_string();
        assert!(e.contains("string with a unit"), "{e}");
    }
}
