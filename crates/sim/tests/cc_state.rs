//! The controllers' state in flows.csv (issue 54 §5): DCTCP's α as its analysis predicts it,
//! CUBIC's W_max and slow-start threshold, BBR's state and bandwidth estimate.

use std::path::Path;

use acclab_scenario::parse;
use acclab_sim::{output, Simulator};

/// Runs `src` with its outputs streamed into `dir`; the rows of its flows.csv, by column name.
fn flows_csv(src: &str, dir: &Path) -> (Simulator, Vec<std::collections::HashMap<String, String>>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut sim = Simulator::new(parse(src, "cc.toml").unwrap());
    output::stream_outputs(dir, &mut sim, false).unwrap();
    sim.run(&mut |_| {});
    sim.finish_samples().unwrap();
    let mut r = csv::Reader::from_path(dir.join("flows.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|row| {
            let row = row.unwrap();
            header
                .iter()
                .cloned()
                .zip(row.iter().map(String::from))
                .collect()
        })
        .collect();
    (sim, rows)
}

fn num(row: &std::collections::HashMap<String, String>, k: &str) -> Option<f64> {
    row.get(k).and_then(|v| v.parse().ok())
}

/// Two DCTCP flows over a 100 Mb/s, 10 ms path with K = 20 packets. DCTCP's analysis (Alizadeh
/// et al., SIGCOMM 2010, §3.3): each flow's window saws from W* = (C·RTT + K)/N packets down by
/// a factor α/2 and back, so its mean is W*(1 − α/4), and α settles near √(2/W*). Checked: the
/// mean window is W*(1 − α/4) within 5% (measured 72.5 against 75.1); α is the fraction of
/// packets the bottleneck marked within 10% (it is that fraction's moving average, g = 1/16);
/// and the analysis' √(2/W*) within 30% (its sawtooth is an idealisation: measured 0.126
/// against 0.161).
#[test]
fn dctcp_alpha_is_the_marked_fraction_and_near_its_analysis() {
    let dir = std::env::temp_dir().join(format!("acclab-cc-state-{}", std::process::id()));
    let (sim, rows) = flows_csv(
        r#"name = "dctcp-alpha"
duration = "10s"
[output]
window = ["4s", "10s"]
[[link]]
between = ["s", "r"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["r", "d"]
rate = "100Mbps"
delay = "4ms"
queue = { kind = "step-ecn", limit = "300pkt", threshold = "20pkt" }
[[flow]]
count = 2
id = "dctcp{i}"
kind = "dctcp"
from = "s"
to = "d"
"#,
        &dir,
    );
    let s = acclab_sim::output::summary(&sim, 0.0);
    let in_window =
        |r: &&std::collections::HashMap<String, String>| num(r, "time_s").is_some_and(|t| t > 4.0);
    let alphas: Vec<f64> = rows
        .iter()
        .filter(in_window)
        .filter_map(|r| num(r, "alpha"))
        .collect();
    assert!(alphas.len() >= 100, "{} α samples", alphas.len());
    let alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
    let bottleneck = s.links.iter().find(|l| l.id == "r->d").unwrap();
    let sent = bottleneck.queueing_delay.unwrap().packets as f64;
    let marked = bottleneck.marks_in_window as f64 / sent;
    assert!(
        (alpha / marked - 1.0).abs() < 0.10,
        "α {alpha}, marked {marked}"
    );
    // 1000-byte packets: C = 12,500 packets/s; RTT = 10 ms of propagation, plus the
    // serialisations (0.8 ms at 100 Mb/s, 8 µs at 1 Gb/s, for data; the ACKs' less).
    let rtt = 0.010 + 0.0008 + 0.000_008;
    let w_star = (12_500.0 * rtt + 20.0) / 2.0;
    let window = s.flows[0].mean_cwnd_bytes.unwrap() / 1000.0;
    let mean = w_star * (1.0 - alpha / 4.0);
    assert!(
        (window / mean - 1.0).abs() < 0.05,
        "{window} vs W*(1 − α/4) {mean}"
    );
    let predicted = (2.0 / w_star).sqrt();
    assert!(
        (alpha / predicted - 1.0).abs() < 0.30,
        "α {alpha} vs √(2/W*) {predicted}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// CUBIC's W_max is where its window last fell from, or with fast convergence (RFC 9438 §4.7)
/// (1 + β)/2 of it, and ssthresh is β of it (§4.6, β = 0.7; whole segments, rounded down), so
/// ssthresh / W_max is 0.7 or 0.7/0.85; BBR's state is one of its four (§4.3) and its pacing
/// rate follows its BtlBw estimate (pacing_gain × BtlBw).
#[test]
fn cubic_and_bbr_state_columns() {
    let dir = std::env::temp_dir().join(format!("acclab-cc-cubic-bbr-{}", std::process::id()));
    let (_, rows) = flows_csv(
        r#"name = "cubic-bbr"
duration = "8s"
[[link]]
between = ["s", "r"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["r", "d"]
rate = "50Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "100pkt" }
[[flow]]
id = "cubic"
kind = "cubic"
from = "s"
to = "d"
[[flow]]
id = "bbr"
kind = "bbr"
from = "s"
to = "d"
"#,
        &dir,
    );
    let cubic: Vec<_> = rows.iter().filter(|r| r["flow"] == "cubic").collect();
    let with_w_max: Vec<_> = cubic
        .iter()
        .filter(|r| num(r, "w_max_bytes").is_some())
        .collect();
    assert!(!with_w_max.is_empty(), "CUBIC never lost");
    for r in &with_w_max {
        let (w, t) = (
            num(r, "w_max_bytes").unwrap(),
            num(r, "ssthresh_bytes").unwrap(),
        );
        assert!(
            t / w > 0.69 && t / w < 0.7 / 0.85 + 0.01,
            "ssthresh {t}, W_max {w}"
        );
    }
    // Before its first loss: no W_max, no slow-start threshold (infinite): empty cells.
    assert_eq!(cubic[0]["w_max_bytes"], "");
    assert_eq!(cubic[0]["ssthresh_bytes"], "");
    let bbr: Vec<_> = rows.iter().filter(|r| r["flow"] == "bbr").collect();
    let states: std::collections::BTreeSet<i64> = bbr
        .iter()
        .filter_map(|r| num(r, "bbr_state"))
        .map(|s| s as i64)
        .collect();
    assert!(
        states.is_subset(&[0, 1, 2, 3].into()) && states.contains(&2),
        "{states:?}"
    );
    for r in bbr.iter().filter(|r| r["bbr_state"] == "2") {
        let (pace, bw) = (
            num(r, "pacing_rate_bps").unwrap(),
            num(r, "btl_bw_bps").unwrap(),
        );
        assert!(
            pace >= 0.75 * bw * 0.99 && pace <= 1.25 * bw * 1.01,
            "{pace} vs {bw}"
        );
    }
    // Reno-only columns are not CUBIC's: a flow without a variable leaves its cell empty.
    assert!(bbr.iter().all(|r| r["w_max_bytes"].is_empty()));
    std::fs::remove_dir_all(&dir).unwrap();
}
