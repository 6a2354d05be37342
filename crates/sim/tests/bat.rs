//! BAT end to end: two CBR classes with equal minima share the link equally.

use acclab_scenario::parse;

#[test]
fn two_cbr_classes_with_equal_minima_get_half_each() {
    let src = r#"name = "bat"
duration = "20s"
[[link]]
from = "r1"
to = "r2"
rate = "100Mbps"
delay = "2ms"
queue = { kind = "bat", limit = "200pkt", classes = [{ name = "a", f_min = "20Mbps" }, { name = "b", f_min = "20Mbps" }] }
[[link]]
count = 2
between = ["h{i}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = 2
between = ["r2", "k{i}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
id = "one"
kind = "cbr"
class = "a"
from = "h0"
to = "k0"
params = { rate = "100Mbps" }
[[flow]]
id = "two"
kind = "cbr"
class = "b"
from = "h1"
to = "k1"
params = { rate = "70Mbps" }
"#;
    let (sim, s) = acclab_sim::run(parse(src, "bat").unwrap(), &mut |_| {});
    for f in &s.flows {
        let err = (f.throughput_bps - 50e6).abs() / 50e6;
        assert!(err < 0.05, "{}: {} Mb/s", f.id, f.throughput_bps / 1e6);
    }
    assert!(s.links[0].utilization > 0.95);
    // The per-class AQM state reaches links.csv.
    let m = sim.monitor();
    assert!(m.aqm_columns.iter().any(|c| c == "a_transmit_prob"));
}

#[test]
fn clcc_naming_a_missing_class_is_an_error() {
    let bad = r#"name = "bat"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
queue = { kind = "bat", limit = "20pkt", classes = [{ name = "udp" }], clcc = { r_ref = 0.5, tcp_class = "tcp" } }
"#;
    let e = parse(bad, "bad.toml").unwrap_err();
    assert!(e.to_string().contains("\"tcp\""), "{e}");
    // The line that writes the queue, and the key that names the class.
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.key, "link[0].queue.clcc.tcp_class", "{e}");
}
