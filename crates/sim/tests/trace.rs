//! Packet traces: the pcapng files read back by tshark (Debian's `tshark`) hold each packet once
//! per capture point (its arrival at the queue, its departure onto the wire), every enqueue,
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
fn tshark_reads_each_packet_once_per_capture_point_with_its_tcp_sequence_number() {
    // Issue 54 §6: one file with an enqueue and a dequeue record of every packet made
    // Wireshark call each second copy a retransmission.
    let tmp = std::env::temp_dir().join(format!("acclab-trace-{}", std::process::id()));
    let (pcap_dir, csv_dir, wire_dir) = (tmp.join("pcap"), tmp.join("csv"), tmp.join("wire"));
    let sim = run(
        &scenario(r#"trace = { links = ["r1->r2"], format = "pcap", capture = "both" }"#),
        &pcap_dir,
    );
    run(
        &scenario(r#"trace = { links = ["r1->r2"], format = "csv" }"#),
        &csv_dir,
    );
    run(
        &scenario(r#"trace = { links = ["r1->r2"], format = "pcap" }"#),
        &wire_dir,
    );
    let names = |d: &Path| {
        let mut n: Vec<String> = std::fs::read_dir(d.join("pcap"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        n.sort();
        n
    };
    assert_eq!(
        names(&pcap_dir),
        ["r1-to-r2.pcapng", "r1-to-r2.queue.pcapng"]
    );
    // The default capture point is the wire, and it is the same file.
    assert_eq!(names(&wire_dir), ["r1-to-r2.pcapng"]);
    let read = |d: &Path, f: &str| {
        fields(
            &d.join("pcap").join(f),
            &[
                "frame.interface_name",
                "frame.comment",
                "tcp.seq_raw",
                "ip.dsfield.ecn",
                "frame.len",
                "tcp.analysis.retransmission",
                "tcp.srcport",
            ],
        )
    };
    let wire = read(&pcap_dir, "r1-to-r2.pcapng");
    let queue = read(&pcap_dir, "r1-to-r2.queue.pcapng");
    assert_eq!(wire, read(&wire_dir, "r1-to-r2.pcapng"));
    let event = |r: &Vec<String>| r[1].split(' ').next().unwrap().to_string();
    let count = |rs: &[Vec<String>], e: &str| rs.iter().filter(|r| event(r) == e).count() as u64;
    let bottleneck = sim.network().queue(LinkId(0)).stats();
    assert_eq!(sim.scenario().links[0].name, "r1->r2");
    assert!(wire.iter().chain(&queue).all(|r| r[0] == "r1->r2"));
    // One record per packet at each point: every transmission at the wire, every arrival at
    // the queue (dropped ones too; RED drops only on arrival).
    assert_eq!(wire.len() as u64, bottleneck.dequeued_packets);
    assert_eq!(count(&wire, "dequeue"), bottleneck.dequeued_packets);
    assert_eq!(count(&queue, "enqueue"), bottleneck.enqueued_packets);
    assert_eq!(count(&queue, "drop"), bottleneck.dropped_packets);
    assert_eq!(
        queue.len() as u64,
        bottleneck.enqueued_packets + bottleneck.dropped_packets
    );
    assert!(bottleneck.marked_packets > 0 && bottleneck.dropped_packets > 0);
    // RED marks on arrival: those records say so and carry CE (ECN field 3), as do the same
    // packets when they leave; transmissions are the packet's full size.
    let marked = queue.iter().filter(|r| r[1] == "enqueue mark");
    assert_eq!(marked.clone().count() as u64, bottleneck.marked_packets);
    assert!(marked.clone().all(|r| r[3] == "3"));
    let ce_out = wire.iter().filter(|r| r[3] == "3").count() as u64;
    assert!(ce_out > 0 && ce_out <= bottleneck.marked_packets);
    assert!(wire.iter().all(|r| r[4] == "1000"));
    // What Wireshark calls a retransmission at the wire is one: no more are flagged than the
    // senders retransmitted (with two records of every packet in one file, about half were).
    let flagged = wire.iter().filter(|r| r[5] == "1").count() as u64;
    let resent: u64 = (0..2).map(|f| sim.endpoint_stats(f).0.retransmits).sum();
    assert!(
        flagged <= resent,
        "{flagged} flagged, {resent} retransmitted"
    );

    // The CSV trace of the same run lists the same transmissions in the same order; its
    // segment numbers times the MSS (1000 − 40 bytes) are the pcap's TCP sequence numbers.
    let mut csv = csv::Reader::from_path(csv_dir.join("trace.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let sent: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[1] == "dequeue").collect();
    assert_eq!(sent.len(), wire.len());
    for (row, rec) in sent.iter().zip(&wire) {
        assert_eq!(&row[4], "data");
        let seq: u64 = row[6].parse().unwrap();
        assert_eq!(rec[2], (seq * 960).to_string(), "{row:?}");
    }
    assert!(!pcap_dir.join("pcap/r1-to-r2.pcapng.part").exists());
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
        sim.scenario().flows.get(1).scheme,
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
    assert!(!tmp.join("none/trace.csv").exists() && !tmp.join("none/pcap").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
