//! Shared-buffer switches (Choudhury & Hahne 1998) end to end: the output queues of a switch
//! settle where the dynamic threshold's steady state puts them, the pool never holds more
//! than its size, and an incast that overflows a static per-port split of the same memory is
//! absorbed by the shared pool.

use acclab_results::Summary;
use acclab_scenario::parse;

/// A star: senders `a0`…`a3` on 10 Gb/s links into switch `s`, whose 1 Gb/s ports lead to
/// `r0` and `r1`; `pool` is the `[[shared_buffer]]` of `s` (or nothing), `queue` every link's
/// queue, `flows` the flows.
fn star(pool: &str, queue: &str, flows: &str, duration: &str) -> Summary {
    let text = format!(
        r#"name = "star"
duration = "{duration}"
[defaults]
queue = {queue}
[[link]]
between = ["a{{i}}", "s"]
count = 16
rate = "10Gbps"
delay = "5us"
[[link]]
between = ["s", "r{{i}}"]
count = 2
rate = "1Gbps"
delay = "5us"
{pool}
{flows}
"#
    );
    let sc = parse(&text, "star.toml").unwrap();
    acclab_sim::run(sc, &mut |_| {}).1
}

/// A CBR source at 2 Gb/s from `a{i}` into each receiver port named.
fn overload(ports: &[usize]) -> String {
    ports
        .iter()
        .map(|&r| {
            format!(
                "[[flow]]\nid = \"c{r}\"\nkind = \"cbr\"\nfrom = \"a{r}\"\nto = \"r{r}\"\nparams = {{ rate = \"2Gbps\" }}\n"
            )
        })
        .collect()
}

fn port<'a>(s: &'a Summary, name: &str) -> &'a acclab_results::summary::LinkSummary {
    s.links.iter().find(|l| l.id == name).unwrap()
}

/// CH98 §III: n output queues overloaded together each settle at α·B/(1 + α·n), and the pool
/// keeps B/(1 + α·n) for a queue that becomes active. With B = 300 KB (300 packets of 1000 B)
/// and α = 1: one queue holds 150 packets, two hold 100 each; with α = 2, one holds 200.
/// Within a packet: a packet is admitted only if it fits under the threshold.
#[test]
fn overloaded_ports_settle_at_the_dynamic_thresholds_steady_state() {
    let inf = "{ kind = \"droptail\", limit = \"inf\" }";
    for (alpha, ports, each) in [
        (1.0, vec![0], 150u64),
        (1.0, vec![0, 1], 100),
        (2.0, vec![0], 200),
    ] {
        let pool =
            format!("[[shared_buffer]]\nnodes = [\"s\"]\nsize = \"300KB\"\nalpha = {alpha}\n");
        let s = star(&pool, inf, &overload(&ports), "50ms");
        for &r in &ports {
            let q = port(&s, &format!("s->r{r}")).max_queue_pkts;
            assert!(
                q + 1 >= each && q <= each,
                "alpha {alpha}, {} ports: s->r{r} held {q} packets, CH98 says {each}",
                ports.len()
            );
            assert!(port(&s, &format!("s->r{r}")).drops > 0, "overloaded");
        }
        let b = &s.shared_buffers[0];
        assert_eq!((b.node.as_str(), b.size_bytes), ("s", 300_000));
        assert!(b.peak_bytes <= 300_000);
        assert!(b.peak_bytes >= (each - 1) * 1000 * ports.len() as u64);
    }
}

/// The same switch without the pool: its ports' own limits (here "inf") hold everything.
#[test]
fn without_a_pool_the_ports_limits_alone_apply() {
    let s = star(
        "",
        "{ kind = \"droptail\", limit = \"400pkt\" }",
        &overload(&[0]),
        "50ms",
    );
    assert_eq!(port(&s, "s->r0").max_queue_pkts, 400);
    assert!(s.shared_buffers.is_empty());
}

/// 16 Reno senders answer r0 at once, 64 KB each (a partition/aggregate query). The switch has
/// 240 KB of memory for its 18 ports. Split statically (13 packets a port) the receiver's port
/// overflows at once and the senders lose packets; shared with α = 1 the one busy port may take
/// half the pool (120 packets): fewer drops (Reno's slow start still overshoots it), and no
/// collapse.
#[test]
fn a_shared_pool_absorbs_an_incast_that_a_static_split_drops() {
    let flows = "[[flow]]\nid = \"q{i}\"\nkind = \"reno\"\nfrom = \"a{i}\"\nto = \"r0\"\ncount = 16\nparams = { size = \"64KB\", initial_window = 10, min_rto = \"10ms\", sack = true }\n[output]\nwindow = [\"0s\", \"200ms\"]\n";
    let drops = |s: &Summary| port(s, "s->r0").drops;
    let fixed = star(
        "",
        "{ kind = \"droptail\", limit = \"13pkt\" }",
        flows,
        "200ms",
    );
    let shared = star(
        "[[shared_buffer]]\nnodes = [\"s\"]\nsize = \"240KB\"\n",
        "{ kind = \"droptail\", limit = \"inf\" }",
        flows,
        "200ms",
    );
    let pool = &shared.shared_buffers[0];
    assert!(pool.peak_bytes <= 240_000 && pool.end_bytes == 0);
    assert!(port(&shared, "s->r0").max_queue_pkts > 13 * 4);
    assert!(
        drops(&shared) < drops(&fixed),
        "shared {} drops, static {}",
        drops(&shared),
        drops(&fixed)
    );
    // Split statically, the 16 windows of one packet each already overflow the 13-packet
    // port and the senders back off timeout after timeout (incast collapse): the median
    // flow takes ~80 ideal completion times and two flows are unfinished after 200 ms. Shared,
    // every flow is done and the median near 16 flows' fair share (~13).
    let fct = |s: &Summary| s.fct.clone().unwrap().overall;
    assert_eq!(fct(&shared).unfinished, 0);
    let p50 = |s: &Summary| fct(s).slowdown_p50.unwrap();
    assert!(
        p50(&shared) * 3.0 < p50(&fixed),
        "{} vs {}",
        p50(&shared),
        p50(&fixed)
    );
}
