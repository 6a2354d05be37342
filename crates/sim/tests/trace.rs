//! Packet traces: a pcapng trace read back by tshark (Debian's `tshark`) holds every enqueue,
//! transmission, drop and mark the queue counted, with the TCP sequence numbers the CSV trace
//! of the same run gives; a flow trace follows one flow over every link; a run without a trace
//! writes none.

use std::path::Path;
use std::process::Command;

use acclab_core::config::SchemeConfig;
use acclab_scenario::{parse, LinkId};
use acclab_sim::observe::NetworkView;
use acclab_sim::{output, Simulator};

fn scenario(trace: &str) -> String {
    format!(
        r#"name = "traced"
duration = "3s"
[[link]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
queue = {{ kind = "red", limit = "30pkt", min_th = "3pkt", max_th = "10pkt", ecn = true }}
[[link]]
count = 2
between = ["s{{i}}", "r1"]
rate = "100Mbps"
delay = "1ms"
[[link]]
count = 2
between = ["r2", "d{{i}}"]
rate = "100Mbps"
delay = "1ms"
[[flow]]
count = 2
id = "f{{i}}"
kind = "reno"
from = "s{{i}}"
to = "d{{i}}"
params = {{ ecn = true }}
[output]
{trace}
"#
    )
}

/// Runs `src` with its outputs streamed into `dir`; the simulator, finished.
fn run(src: &str, dir: &Path) -> Simulator {
    std::fs::create_dir_all(dir).unwrap();
    let mut sim = Simulator::new(parse(src, "traced.toml").unwrap());
    output::stream_outputs(dir, &mut sim, false).unwrap();
    sim.run(&mut |_| {});
    sim.finish_samples().unwrap();
    sim
}

/// tshark, installed with apt-get if it is missing and this runs as root (as CI does).
fn tshark() -> &'static str {
    let present = || {
        Command::new("tshark")
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !present() {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0"));
        if root {
            for args in [&["update", "-qq"][..], &["install", "-y", "-qq", "tshark"]] {
                let _ = Command::new("apt-get")
                    .args(args)
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status();
            }
        }
    }
    assert!(
        present(),
        "this test reads a trace with tshark: install it (Debian: apt-get install tshark)"
    );
    "tshark"
}

/// `fields` of every record of the pcapng at `path`, tab-separated.
fn fields(path: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new(tshark());
    cmd.arg("-r")
        .arg(path)
        .args(["-T", "fields", "-E", "separator=/t"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect()
}

#[test]
fn tshark_reads_every_queue_event_with_its_tcp_sequence_number() {
    let tmp = std::env::temp_dir().join(format!("acclab-trace-{}", std::process::id()));
    let (pcap_dir, csv_dir) = (tmp.join("pcap"), tmp.join("csv"));
    let sim = run(
        &scenario(r#"trace = { links = ["r1->r2"], format = "pcap" }"#),
        &pcap_dir,
    );
    run(
        &scenario(r#"trace = { links = ["r1->r2"], format = "csv" }"#),
        &csv_dir,
    );
    assert!(!pcap_dir.join("trace.pcapng.part").exists());
    let records = fields(
        &pcap_dir.join("trace.pcapng"),
        &[
            "frame.interface_name",
            "frame.comment",
            "tcp.seq_raw",
            "ip.dsfield.ecn",
            "frame.len",
        ],
    );
    let event = |r: &Vec<String>| r[1].split(' ').next().unwrap().to_string();
    let count = |e: &str| records.iter().filter(|r| event(r) == e).count() as u64;
    let bottleneck = sim.network().queue(LinkId(0)).stats();
    assert_eq!(sim.scenario().links[0].name, "r1->r2");
    assert!(records.iter().all(|r| r[0] == "r1->r2"));
    assert_eq!(count("enqueue"), bottleneck.enqueued_packets);
    assert_eq!(count("dequeue"), bottleneck.dequeued_packets);
    assert_eq!(count("drop"), bottleneck.dropped_packets);
    assert_eq!(count("mark"), bottleneck.marked_packets);
    assert!(bottleneck.marked_packets > 0 && bottleneck.dropped_packets > 0);
    // Marked packets carry CE (ECN field 3); transmissions are the packet's full size.
    assert!(records
        .iter()
        .filter(|r| event(r) == "mark")
        .all(|r| r[3] == "3"));
    assert!(records
        .iter()
        .filter(|r| event(r) == "dequeue")
        .all(|r| r[4] == "1000"));

    // The CSV trace of the same run lists the same events in the same order; its segment
    // numbers times the MSS (1000 − 40 bytes) are the pcap's TCP sequence numbers.
    let mut csv = csv::Reader::from_path(csv_dir.join("trace.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), records.len());
    for (row, rec) in rows.iter().zip(&records) {
        assert_eq!(&row[1], event(rec).as_str());
        assert_eq!(&row[4], "data");
        let seq: u64 = row[6].parse().unwrap();
        assert_eq!(rec[2], (seq * 960).to_string(), "{row:?}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_flow_trace_follows_the_flow_over_every_link_and_no_trace_writes_nothing() {
    let tmp = std::env::temp_dir().join(format!("acclab-flow-trace-{}", std::process::id()));
    let sim = run(
        &scenario(r#"trace = { flows = ["f1"], format = "csv" }"#),
        &tmp.join("flow"),
    );
    assert!(matches!(
        sim.scenario().flows[1].scheme,
        SchemeConfig::Reno(_)
    ));
    let mut csv = csv::Reader::from_path(tmp.join("flow/trace.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert!(rows.iter().all(|r| &r[3] == "f1"));
    let mut links: Vec<&str> = rows.iter().map(|r| r.get(2).unwrap()).collect();
    links.sort();
    links.dedup();
    // Data: s1->r1, r1->r2, r2->d1; ACKs back: d1->r2, r2->r1, r1->s1.
    assert_eq!(
        links,
        ["d1->r2", "r1->r2", "r1->s1", "r2->d1", "r2->r1", "s1->r1"]
    );
    run(&scenario(""), &tmp.join("none"));
    assert!(!tmp.join("none/trace.csv").exists() && !tmp.join("none/trace.pcapng").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
