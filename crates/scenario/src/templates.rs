//! Scenario text for standard topologies, shared by the benchmark and the tests.

/// N NewReno flows over a 100 Mb/s, 10 ms bottleneck with a DropTail buffer of `buffer_pkts`
/// packets and 1 Gb/s, 1 ms access links (RTT 24 ms, bandwidth-delay product 300 packets).
/// Flows start within the first 100 ms (seeded jitter). This is the scenario acclab is held
/// against ns-3 on (with 1000 packets of buffer and 60 s).
pub fn reno_dumbbell(flows: usize, buffer_pkts: usize, duration_s: u64) -> String {
    reno_dumbbell_at(flows, 100, buffer_pkts, duration_s)
}

/// [`reno_dumbbell`] with a bottleneck of `bottleneck_mbps` and access links ten times faster.
pub fn reno_dumbbell_at(
    flows: usize,
    bottleneck_mbps: u64,
    buffer_pkts: usize,
    duration_s: u64,
) -> String {
    dumbbell("reno", flows, bottleneck_mbps, buffer_pkts, duration_s)
}

/// The dumbbell of [`reno_dumbbell_at`] with flows of scheme `kind` (default parameters).
pub fn dumbbell(
    kind: &str,
    flows: usize,
    bottleneck_mbps: u64,
    buffer_pkts: usize,
    duration_s: u64,
) -> String {
    let access_mbps = 10 * bottleneck_mbps;
    format!(
        r#"name = "{kind}-dumbbell-{flows}"
duration = "{duration_s}s"
[[link]]
between = ["r1", "r2"]
rate = "{bottleneck_mbps}Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = "{buffer_pkts}pkt" }}
[[link]]
count = {flows}
between = ["s{{i}}", "r1"]
rate = "{access_mbps}Mbps"
delay = "1ms"
[[link]]
count = {flows}
between = ["r2", "d{{i}}"]
rate = "{access_mbps}Mbps"
delay = "1ms"
[[flow]]
count = {flows}
id = "f{{i}}"
kind = "{kind}"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "100ms"
"#
    )
}

/// A k-ary fat-tree of 10 Gb/s, 1 µs links with 200-packet port queues marking ECN above 20
/// packets, 1500-byte packets, flows spread by ECMP; DCTCP flows (initial window 10, 1 ms
/// minimum RTO) drawn from the web-search distribution at `load` of every host's link, arriving
/// until the end of the run. The fabric benchmarks' scenario (htsim's datacenter setup).
pub fn fat_tree_websearch(k: u32, load: f64, duration_ms: u64) -> String {
    fat_tree(&format!("fattree-k{k}-websearch"), k, duration_ms)
        + &format!(
            r#"[[workload]]
id = "ws"
kind = "dctcp"
params = {{ {DCTCP_PARAMS} }}
sizes = "websearch"
load = {load}
"#
        )
}

/// The fabric of [`fat_tree_websearch`] with a permutation of long-lived DCTCP flows instead:
/// every host sends one flow, from the start to the end, to another host, each host receiving
/// one (a random derangement, seeded). htsim's other datacenter benchmark.
pub fn fat_tree_permutation(k: u32, duration_ms: u64) -> String {
    let hosts = (k * k * k / 4) as usize;
    let mut text = fat_tree(&format!("fattree-k{k}-permutation"), k, duration_ms);
    for (i, d) in crate::workload::derangement(hosts, 1, "permutation")
        .into_iter()
        .enumerate()
    {
        text += &format!(
            "[[flow]]\nid = \"p{i}\"\nkind = \"dctcp\"\nfrom = \"h{i}\"\nto = \"h{d}\"\n\
             params = {{ {DCTCP_PARAMS} }}\n"
        );
    }
    text
}

/// The fabric benchmarks' DCTCP parameters.
const DCTCP_PARAMS: &str = r#"initial_window = 10, min_rto = "1ms""#;

/// The fabric benchmarks' k-ary fat-tree, without traffic: add `[[flow]]` or `[[workload]]`
/// tables to its text.
pub fn fat_tree(name: &str, k: u32, duration_ms: u64) -> String {
    format!(
        r#"name = "{name}"
duration = "{duration_ms}ms"
[defaults]
packet_size = "1500B"
[routing]
ecmp = "flow"
[topology]
kind = "fat-tree"
k = {k}
link_rate = "10Gbps"
link_delay = "1us"
queue = {{ kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every host of the permutation sends one long flow and receives one, never its own.
    #[test]
    fn the_permutation_sends_each_host_to_one_other() {
        let sc = crate::parse(&fat_tree_permutation(4, 1), "perm.toml").unwrap();
        assert_eq!(sc.flows.len(), 16);
        let mut from: Vec<_> = sc.flows.iter().map(|f| f.src).collect();
        let mut to: Vec<_> = sc.flows.iter().map(|f| f.dst).collect();
        assert!(sc.flows.iter().all(|f| f.src != f.dst));
        assert!(sc.flows.iter().all(|f| f.scheme.size().is_none()));
        from.sort();
        from.dedup();
        to.sort();
        to.dedup();
        assert_eq!((from.len(), to.len()), (16, 16));
    }
}
