//! What the scheme tests share: the dumbbell they run on.

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
