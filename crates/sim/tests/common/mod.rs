//! What the tests share: the dumbbell the scheme tests run on; how the parallel tests say
//! where two outputs part.
// Each test binary uses some of these.
#![allow(dead_code)]

/// A dumbbell scenario (TOML): `hosts` senders s{i} → r1 → r2 → receivers d{i}, access links
/// 1 Gb/s and 1 ms, 1500-byte packets; the bottleneck r1–r2 described by `bottleneck` (TOML
/// lines: rate, delay, queue, loss …); `flows` its `[[flow]]` tables; run for `duration`
/// (seed `seed`) and measured over `window`.
pub fn dumbbell(
    bottleneck: &str,
    hosts: usize,
    flows: &str,
    duration: &str,
    window: (&str, &str),
    seed: u64,
) -> String {
    let (from, to) = window;
    format!(
        r#"name = "dumbbell"
duration = "{duration}"
seed = {seed}
[defaults]
packet_size = "1500B"
[[link]]
between = ["r1", "r2"]
{bottleneck}
[[link]]
count = {hosts}
between = ["s{{i}}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = {hosts}
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "1ms"
{flows}
[output]
window = ["{from}", "{to}"]
"#
    )
}

/// Where texts `a` (the serial run's) and `b` (a parallel run's) first differ: the line, or
/// their lengths.
pub fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
        if x != y {
            return format!("line {i}:\n serial:   {x}\n parallel: {y}");
        }
    }
    format!("lengths {} vs {}", la.len(), lb.len())
}
