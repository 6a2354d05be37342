//! Cross-validation with Linux (issue 25 §4): the kernel's Reno, CUBIC and BBR, emulated through
//! acclab's router in network namespaces, against acclab's simulated Reno, CUBIC and BBR on the same
//! scenario — a 20 Mb/s bottleneck, round-trip propagation delay 20 ms, a buffer of one
//! bandwidth-delay product (34 packets of 1500 B) — with one and with four flows.
//!
//! Each run lasts 70 s and is measured over its last 60: long enough that the few stalls of tens
//! of milliseconds this kind of virtual machine has (its hypervisor takes the CPUs away; the
//! router then reads a burst of packets late, which overflows the buffer at once) do not move
//! the means. Over 30 s, 2 of 14 runs missed the queue claim (13.6 and 21.4 packets against
//! 18.9 and 27.6), each in a run whose router had fallen 13–19 ms behind.
//!
//! Claims (each able to fail): per-flow throughput (the flows' mean) within 10%, the
//! bottleneck's mean queue within 20%, the period of the congestion window's sawtooth (mean
//! over flows) within 20%; and the Linux flows share the bottleneck with Jain's index ≥ 0.95.
//! Some claims do not hold in every case, and those cases say so where they are declared: the
//! queue with one flow, the period with four CUBIC flows and with BBR, fairness with BBR.
//!
//! The kernel's goodput is application bytes; acclab's throughput counts whole packets (SPEC
//! §2: a packet's size is on the wire, headers included). The kernel's is converted to wire
//! bytes with its segment's headers: 20 (IP) + 20 (TCP) + 12 (the timestamp option Linux sets
//! by default) bytes per 1448-byte segment of a 1500-byte packet.
//!
//! Needs root and iproute2 (network namespaces, TUN devices); skipped, saying why, elsewhere —
//! and a failure where `ACCLAB_REQUIRE_NETNS` is set (CI, which runs as root), so that a skip
//! there cannot pass for a check.

mod common;

use acclab_live::{LiveOptions, Network};
use acclab_results::Summary;
use common::{one_at_a_time, runs_here};

fn scenario(kind: &str, n: usize) -> acclab_scenario::Scenario {
    scenario_over(kind, n, r#"{ kind = "droptail", limit = "34pkt" }"#, "")
}

/// The dumbbell with `queue` at the bottleneck and `output` added to its `[output]` table.
fn scenario_over(kind: &str, n: usize, queue: &str, output: &str) -> acclab_scenario::Scenario {
    let text = format!(
        r#"name = "linux-{n}"
duration = "70s"
seed = 3
[defaults]
packet_size = "1500B"
[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "8ms"
queue = {queue}
[[link]]
count = {n}
between = ["s{{i}}", "r1"]
rate = "1Gbps"
delay = "1ms"
[[link]]
count = {n}
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
count = {n}
id = "f{{i}}"
{kind}
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "1s"
[output]
window = ["10s", "70s"]
sample_interval = "10ms"
{output}
"#
    );
    acclab_scenario::parse(&text, "linux.toml").expect("scenario")
}

/// What is compared of one run.
#[derive(Debug)]
struct Measured {
    /// Mean per-flow throughput over the window, wire bytes, bit/s.
    throughput: f64,
    mean_queue: f64,
    /// Mean over flows of the time between window reductions, s.
    period: f64,
    jain: f64,
}

/// `kernel`: the flows are Linux's, whose goodput is converted to wire bytes.
fn measure(sim: &acclab_sim::Simulator, s: &Summary, kernel: bool) -> Measured {
    let n = s.flows.len();
    let thr: Vec<f64> = s
        .flows
        .iter()
        .map(|f| match kernel {
            true => acclab_live::kernel::wire_bytes(f.throughput_bps, 1500),
            false => f.throughput_bps,
        })
        .collect();
    let (from, to) = (s.window.from_s, s.window.to_s);
    let periods: Vec<f64> = (0..n as u32)
        .filter_map(|f| {
            let w: Vec<(f64, f64)> = sim
                .monitor()
                .flow_samples
                .iter()
                .filter(|x| x.flow == f && x.t_s >= from && x.t_s <= to)
                .filter_map(|x| Some((x.t_s, x.cwnd_bytes? as f64)))
                .collect();
            let cuts = reductions(&w);
            (cuts.len() >= 3).then(|| (cuts[cuts.len() - 1] - cuts[0]) / (cuts.len() - 1) as f64)
        })
        .collect();
    assert_eq!(
        periods.len(),
        n,
        "every flow saw several reductions: {periods:?}"
    );
    let sum: f64 = thr.iter().sum();
    let sq: f64 = thr.iter().map(|x| x * x).sum();
    Measured {
        throughput: sum / n as f64,
        mean_queue: s.links[0].mean_queue_pkts,
        period: periods.iter().sum::<f64>() / n as f64,
        jain: sum * sum / (n as f64 * sq),
    }
}

/// When each window reduction began: the time of the peak from which the window fell by over
/// 15% before it grew again. A multiplicative decrease is 30% (CUBIC) or 50% (Reno); Linux's
/// proportional rate reduction (RFC 6937) spreads it over a round trip, so over several
/// samples, which count as one reduction.
fn reductions(w: &[(f64, f64)]) -> Vec<f64> {
    let mut out = Vec::new();
    let Some(&(t0, w0)) = w.first() else {
        return out;
    };
    let (mut peak, mut at) = (w0, t0);
    let mut trough: Option<f64> = None;
    for &(t, x) in &w[1..] {
        match trough {
            None if x >= peak => (peak, at) = (x, t),
            None if x < 0.85 * peak => {
                out.push(at);
                trough = Some(x);
            }
            None => {}
            Some(low) if x <= low => trough = Some(x),
            // Growing again: the next peak is ahead.
            Some(_) => {
                trough = None;
                (peak, at) = (x, t);
            }
        }
    }
    out
}

#[test]
fn reductions_spread_over_samples_count_once() {
    let w: Vec<(f64, f64)> = [10., 11., 12., 10.5, 9., 7., 6., 6., 7., 8., 9., 10., 5., 6.]
        .iter()
        .enumerate()
        .map(|(i, &x)| (i as f64, x))
        .collect();
    assert_eq!(reductions(&w), vec![2.0, 11.0]);
}

/// Namespaces, and TUN devices in them.
fn may_create_namespaces() -> Result<(), &'static str> {
    common::may_create_namespaces()?;
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err("no /dev/net/tun");
    }
    Ok(())
}

/// What of the claims a case is held to.
#[derive(Clone, Copy)]
struct Held {
    /// The mean queue within 20% (see the BBR tests).
    queue: bool,
    /// The sawtooth period within 20% (see the CUBIC ×4 test).
    period: bool,
    /// The Linux flows' Jain index at least 0.95 (see the BBR tests).
    fair: bool,
}

/// Runs Linux's `cc` and acclab's over the scenario with `n` flows, checks what `held` says,
/// and returns what Linux measured (`None` where the test cannot run here).
fn compare(cc: &str, n: usize, held: Held) -> Option<Measured> {
    if !runs_here(may_create_namespaces()) {
        return None;
    }
    // The simulation too takes its turn: it would take a core from another test's live run.
    let _turn = one_at_a_time();
    let (sim, s) = acclab_sim::run(scenario(&format!("kind = \"{cc}\""), n), &mut |_| {});
    let simulated = measure(&sim, &s, false);
    let opts = LiveOptions {
        network: Network::Namespaces,
        ..Default::default()
    };
    let kernel_kind = format!("kind = \"kernel-tcp\"\nparams = {{ cc = \"{cc}\" }}");
    let (ksim, ks) =
        acclab_live::run(scenario(&kernel_kind, n), &opts, &mut |_| {}).expect("live run");
    let live = ks.live.as_ref().expect("live summary");
    let ip = live.ip.as_ref().expect("real stacks' counters");
    assert!(ip.accepted > 10_000, "{ip:?}");
    assert_eq!(ip.rejected_foreign + ip.write_failures, 0, "{ip:?}");
    let kernel = measure(&ksim, &ks, true);
    eprintln!(
        "{cc} x{n}: simulated {simulated:?}\n{cc} x{n}: Linux     {kernel:?}\nlive: {live:?}"
    );
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    assert!(
        rel(kernel.throughput, simulated.throughput) <= 0.10,
        "per-flow throughput: Linux {:.3} Mb/s, acclab {:.3} Mb/s",
        kernel.throughput / 1e6,
        simulated.throughput / 1e6
    );
    assert!(
        !held.queue || rel(kernel.mean_queue, simulated.mean_queue) <= 0.20,
        "mean queue: Linux {:.1} pkts, acclab {:.1} pkts",
        kernel.mean_queue,
        simulated.mean_queue
    );
    assert!(
        !held.fair || kernel.jain >= 0.95,
        "Linux flows share the bottleneck unfairly: Jain {:.3}",
        kernel.jain
    );
    assert!(
        !held.period || rel(kernel.period, simulated.period) <= 0.20,
        "sawtooth period: Linux {:.3} s, acclab {:.3} s",
        kernel.period,
        simulated.period
    );
    Some(kernel)
}

/// Every claim. The one-flow cases once held only throughput, period and fairness: Linux's mean
/// queue came out 6–28% below acclab's (Reno 13.4–17.8 packets against 18.9). The cause was the
/// kernel flow's receiving thread, an ordinary one, held off a core while it held its socket:
/// the data that arrived meanwhile went unacknowledged for 10–30 ms (captures in the hosts'
/// namespaces: 162 such gaps in one 40-s run), the sender then sent a burst, the buffer
/// overflowed early and the window fell from below its peak. At the endpoints' real-time
/// priority ([`acclab_live::priority`]) Linux's queue is 4–7% below acclab's (Reno 17.5–18.1 in
/// four runs, CUBIC 23.3–23.6 against 24.6 in two) and its throughput within 1%.
const ALL: Held = Held {
    queue: true,
    period: true,
    fair: true,
};

#[test]
fn one_linux_reno_flow_matches_acclab_reno() {
    compare("reno", 1, ALL);
}

/// And closer still to acclab configured as Linux runs: delayed ACKs (an ACK per two segments
/// or after 40 ms) and byte counting (RFC 3465, growth by the bytes each ACK acknowledges),
/// which take acclab's sawtooth from 0.377 s to 0.419 s and its mean queue from 20.0 to 21.7
/// packets; Linux's were 0.405–0.434 s and 19.7–22.5 packets in four runs. Held: the period
/// within 10%, the mean queue within 15% — the same scenario, so no tolerance for a different
/// configuration is needed.
#[test]
fn four_linux_reno_flows_match_acclab_reno() {
    let Some(linux) = compare("reno", 4, ALL) else {
        return;
    };
    hold_as_linux(
        &linux,
        "reno",
        "delayed_ack = \"40ms\", byte_counting = true",
    );
}

/// acclab's `cc` with `params` (configured as Linux runs) against Linux's flows `linux` on the
/// same four-flow scenario: the sawtooth period within 10%, the mean queue within 15%.
fn hold_as_linux(linux: &Measured, cc: &str, params: &str) {
    let kind = format!("kind = \"{cc}\"\nparams = {{ {params} }}");
    let (sim, s) = acclab_sim::run(scenario(&kind, 4), &mut |_| {});
    let acc = measure(&sim, &s, false);
    eprintln!("{cc} x4: acclab as Linux runs ({params}) {acc:?}");
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    assert!(
        rel(linux.period, acc.period) <= 0.10,
        "sawtooth period: Linux {:.3} s, acclab with {params} {:.3} s",
        linux.period,
        acc.period
    );
    assert!(
        rel(linux.mean_queue, acc.mean_queue) <= 0.15,
        "mean queue: Linux {:.1} pkts, acclab with {params} {:.1} pkts",
        linux.mean_queue,
        acc.mean_queue
    );
}

#[test]
fn one_linux_cubic_flow_matches_acclab_cubic() {
    compare("cubic", 1, ALL);
}

/// Against acclab's RFC 9438 CUBIC, throughput and queue only: with four flows Linux's
/// sawtooth is about 27% slower (0.487–0.552 s between reductions against 0.394–0.455, seed 3)
/// at the same mean window and queue. The cause is tcp_cubic.c's arithmetic at these small
/// windows (about 16 segments): ssthresh rounded down to whole segments (⌊15·0.7⌋ = 10, a 33%
/// cut), W_est at α_cubic throughout where RFC 9438 §4.3 switches to α = 1 past the last
/// window, and the window trailing W_est by a round trip. acclab's CUBIC with `linux = true`
/// runs that arithmetic: 0.473–0.581 s (mean 0.510 against Linux's 0.525), queue 28.0 against
/// 27.9 packets. Held against it: the period within 10%, the mean queue within 15%.
#[test]
fn four_linux_cubic_flows_match_acclab_cubic() {
    let Some(linux) = compare(
        "cubic",
        4,
        Held {
            queue: true,
            period: false,
            fair: true,
        },
    ) else {
        return;
    };
    hold_as_linux(&linux, "cubic", "linux = true");
}

/// A `command` flow: unmodified iperf3, its server and client in the flow's two namespaces,
/// through the emulated bottleneck. The router's count of the payload it delivered agrees with
/// what iperf3's client says it sent, the bottleneck is full, and the programs' output is kept.
/// The client names its congestion control (`-C cubic`): otherwise it runs the machine's
/// default, which is BBR on some (this project's VMs), whose ProbeRTT holds the window at four
/// packets for 200 ms every 10 s — a dip to 0.82–0.85 of the link in the second it falls in,
/// which took CI's 5–14 s utilisation to 0.94 once.
#[test]
fn iperf3_runs_unmodified_through_the_emulated_bottleneck() {
    let iperf3 = || {
        std::process::Command::new("iperf3")
            .arg("--version")
            .output()
            .map_err(|_| "iperf3 is not installed")
            .map(|_| ())
    };
    if !runs_here(may_create_namespaces().and_then(|()| iperf3())) {
        return;
    }
    let kind = "kind = \"command\"\nparams = { server = \"iperf3 -s -1 -p {port}\", client = \"iperf3 -c {dst} -p {port} -t 14 -C cubic -J\" }";
    let mut sc = scenario(kind, 1);
    sc.duration = acclab_core::Duration::from_secs_f64(16.0);
    sc.output.window = (
        acclab_core::Time::from_secs_f64(3.0),
        acclab_core::Time::from_secs_f64(16.0),
    );
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = LiveOptions {
        network: Network::Namespaces,
        files: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let _turn = one_at_a_time();
    let (sim, s) = acclab_live::run(sc, &opts, &mut |_| {}).expect("live run");
    let log = std::fs::read_to_string(dir.path().join("programs/f0-client.log"))
        .expect("the client's output is kept");
    assert!(dir.path().join("programs/f0-server.log").exists());
    let report: serde_json::Value = serde_json::from_str(&log).expect("iperf3 -J output");
    let received = report["end"]["sum_received"]["bytes"]
        .as_f64()
        .expect("iperf3's bytes received");
    let f = &s.flows[0];
    // The router counts payload delivered to the receiving host, retransmissions included;
    // iperf3's server what its application read (the sender's count includes what was still
    // in its socket buffer when the test ended, which iperf3 discards).
    let delivered = f.delivered_bytes as f64;
    assert!(
        (delivered - received).abs() / received < 0.05,
        "router delivered {delivered} payload bytes, iperf3 received {received}"
    );
    // Busy while iperf3 sends, once past its slow start's losses (it stops writing at 14 s;
    // the window runs to the end so that everything it wrote is counted delivered). From 2 s
    // on, one run in four measured 0.83: the recovery from slow start's overshoot of the
    // one-BDP buffer takes seconds.
    let busy: Vec<f64> = sim
        .monitor()
        .link_samples
        .iter()
        .filter(|x| x.link == 0 && x.t_s > 5.0 && x.t_s <= 14.0)
        .map(|x| x.utilization)
        .collect();
    let utilization = busy.iter().sum::<f64>() / busy.len() as f64;
    assert!(
        utilization > 0.95,
        "bottleneck utilisation {utilization} from 5 to 14 s"
    );
}

/// ECN end to end with a real stack, and the pcap of the emulated bottleneck. Linux CUBIC with
/// ECN negotiated (`ecn = true`: net.ipv4.tcp_ecn in its namespace) through a step-marking
/// queue (K = 20 packets, 100-packet buffer): the queue sets CE in the real IP header, Linux's
/// receiver echoes it (ECE) and its sender reduces (CWR, RFC 3168 §6.1.2) — so the flow fills
/// the link without a loss, as acclab's CUBIC with ECN does on the same scenario. (K must
/// exceed (1/β − 1)·BDP ≈ 0.43 × 34 packets for CUBIC's reduction to β = 0.7 to leave the
/// link busy: with K = 10, acclab's used 80% of it.) The trace (`[output] trace`, pcap) holds the kernels' own headers,
/// with valid IP checksums, CE on the records of the packets the queue marked; `tcp_info.csv`
/// the kernel's own count of CE-marked deliveries and its CWR state.
#[test]
fn ecn_marks_reach_linux_and_the_trace_holds_its_packets() {
    if !runs_here(may_create_namespaces()) {
        return;
    }
    let mut sc = scenario_over(
        "kind = \"kernel-tcp\"\nparams = { cc = \"cubic\", ecn = true }",
        1,
        r#"{ kind = "step-ecn", limit = "100pkt", threshold = "20pkt" }"#,
        r#"trace = { links = ["r1->r2", "r2->r1"], format = "pcap", capture = "both" }"#,
    );
    let mut simulated = scenario_over(
        "kind = \"cubic\"\nparams = { ecn = true }",
        1,
        r#"{ kind = "step-ecn", limit = "100pkt", threshold = "20pkt" }"#,
        "",
    );
    // Measured from 8 s: Linux's CUBIC leaves slow start early (HyStart) and its concave
    // growth takes K = ∛(W_max·(1 − β)/C) ≈ 3.4 s to reach the link's rate; from 2 s, it used
    // 80–84% of the link.
    for sc in [&mut sc, &mut simulated] {
        sc.duration = acclab_core::Duration::from_secs_f64(20.0);
        sc.output.window = (
            acclab_core::Time::from_secs_f64(8.0),
            acclab_core::Time::from_secs_f64(20.0),
        );
    }
    let _turn = one_at_a_time();
    let (_, acc) = acclab_sim::run(simulated, &mut |_| {});
    let acc_link = &acc.links[0];
    eprintln!("acclab: bottleneck {acc_link:?}\nflow {:?}", acc.flows[0]);
    let dir = tempfile::tempdir().expect("temporary directory");
    let opts = LiveOptions {
        network: Network::Namespaces,
        files: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let (_, s) = acclab_live::run(sc, &opts, &mut |_| {}).expect("live run");
    let (link, flow) = (&s.links[0], &s.flows[0]);
    eprintln!("bottleneck {link:?}\nflow {flow:?}");
    assert!(link.marks > 100, "the queue marked {} packets", link.marks);
    assert_eq!(link.drops, 0, "a marking queue with room dropped");
    assert_eq!(
        flow.retransmits, 0,
        "Linux retransmitted: ECN did not reach it"
    );
    let rate = acclab_live::kernel::wire_bytes(flow.throughput_bps, 1500);
    assert!(rate > 0.9 * 20e6, "Linux reached {:.2} Mb/s", rate / 1e6);
    let acc_rate = acc.flows[0].throughput_bps;
    assert!(
        acc_link.drops == 0 && acc_link.marks > 0 && acc_rate > 0.9 * 20e6,
        "acclab's CUBIC with ECN: {acc_link:?}"
    );
    assert!(
        (rate - acc_rate).abs() / acc_rate <= 0.10,
        "Linux {:.2} Mb/s, acclab {:.2} Mb/s",
        rate / 1e6,
        acc_rate / 1e6
    );

    // The kernel's own view, read at every 10-ms sample: its CE count and its CWR state.
    let info = std::fs::read_to_string(dir.path().join("tcp_info.csv")).expect("tcp_info.csv");
    let rows: Vec<Vec<&str>> = info
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(
        rows.len() > 1_500,
        "{} TCP_INFO readings in 20 s",
        rows.len()
    );
    let header: Vec<&str> = info.lines().next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let last = rows.last().expect("a reading");
    let delivered_ce: u64 = last[col("delivered_ce")].parse().expect("a count");
    assert!(delivered_ce > 0, "the kernel counted no CE-marked delivery");
    assert!(
        rows.iter().any(|r| r[col("ca_state")] == "cwr"),
        "never in CWR"
    );
    // One file per link and capture point (the queue's arrivals, the wire's departures).
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path().join("pcap"))
        .expect("pcap/")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "r1-to-r2.pcapng",
            "r1-to-r2.queue.pcapng",
            "r2-to-r1.pcapng",
            "r2-to-r1.queue.pcapng"
        ]
    );
    let (mut records, mut ece_acks, mut cwr_data) = (0u64, 0u64, 0u64);
    // CE-marked data records at the queue's arrivals and at the wire's departures.
    let (mut ce_queue, mut ce_wire) = (0u64, 0u64);
    for path in &files {
        let at_queue = path.to_string_lossy().ends_with(".queue.pcapng");
        let file = std::fs::File::open(path).expect("a pcapng file");
        let mut reader = pcap_file::pcapng::PcapNgReader::new(file).expect("a pcapng file");
        while let Some(block) = reader.next_block() {
            let pcap_file::pcapng::Block::EnhancedPacket(epb) = block.expect("a readable block")
            else {
                continue;
            };
            records += 1;
            let bytes = &epb.data;
            let ip = etherparse::Ipv4HeaderSlice::from_slice(bytes).expect("an IPv4 header");
            let header = &bytes[..ip.slice().len()];
            assert_eq!(acclab_live::ip::header_checksum(header), 0, "IP checksum");
            assert_eq!(ip.source()[..2], [10, 201], "a host's address");
            assert!(epb.original_len as usize >= bytes.len());
            let tcp = etherparse::TcpHeaderSlice::from_slice(&bytes[ip.slice().len()..])
                .expect("the kernel's TCP header, captured whole");
            assert!(tcp.source_port() == 20_000 && tcp.destination_port() == 20_000);
            let data = epb.original_len as usize > ip.slice().len() + tcp.slice().len();
            let ce = u64::from(data && ip.ecn() == etherparse::IpEcn::CongestionExperienced);
            match at_queue {
                true => ce_queue += ce,
                false => ce_wire += ce,
            }
            ece_acks += u64::from(!data && !tcp.syn() && tcp.ece());
            cwr_data += u64::from(data && tcp.cwr());
        }
    }
    eprintln!(
        "trace: {records} records, CE data {ce_queue} at the queue and {ce_wire} on the wire, {ece_acks} ECE ACKs, {cwr_data} CWR"
    );
    assert!(records > 20_000, "{records} records");
    // A marked packet's arrival (at the queue, recorded once marked) carries CE, and so does
    // its departure (at the wire) — but for the marked packets still queued when the run
    // ends: at most the queue's 100.
    assert!(
        ce_queue >= link.marks && ce_wire <= ce_queue && ce_wire + 100 >= link.marks,
        "CE records: {ce_queue} at the queue, {ce_wire} on the wire, for {} marks",
        link.marks
    );
    // Linux's receiver sets ECE on its ACKs from a CE until the sender's CWR (RFC 3168 §6.1.3).
    assert!(
        ece_acks > 10 && cwr_data > 10,
        "ECE {ece_acks}, CWR {cwr_data}"
    );
}

/// BBR has no sawtooth: its window is 2 × its BDP estimate and falls only in ProbeRTT (every
/// 10 s) and in loss recovery, so the period is not compared. Open findings, not hidden (seed 3,
/// 70 s, window 10–70 s, two runs): with one flow Linux's mean queue is 77–92% above acclab's
/// (13.0 and 14.0 against 7.3 packets) and its window falls every 0.7–1.2 s (loss recovery: the
/// queue reaches the one-BDP buffer) where acclab's falls only in ProbeRTT — a likely cause is the emulator's jitter
/// (the router adds 0.3–4 ms, `acclab live bench --netns`): ACKs that arrive in bursts give
/// delivery-rate samples above the link's rate, which BBR's max filter keeps, so it paces
/// above the link; not yet established. With four flows Linux's BBR shares the link less evenly
/// (Jain 0.90–0.93 against acclab's 0.997), as BBR v1 is known to on shallow buffers.
#[test]
fn one_linux_bbr_flow_matches_acclab_bbr() {
    compare(
        "bbr",
        1,
        Held {
            queue: false,
            period: false,
            fair: true,
        },
    );
}

#[test]
fn four_linux_bbr_flows_match_acclab_bbr() {
    compare(
        "bbr",
        4,
        Held {
            queue: true,
            period: false,
            fair: false,
        },
    );
}

/// One Linux flow of `cc` and acclab's `kind` (a `[[flow]]`'s kind and params lines), each over
/// the synthetic LTE capacity trace acclab ships (a 11.4 Mb/s mean, 1–24 Mb/s states) through a
/// 100-packet tail-drop buffer for 40 s, measured over 10–40 s: (Linux's throughput, acclab's,
/// Linux's mean queue, acclab's), printed. `None` where namespaces cannot be made.
fn over_the_trace(cc: &str, kind: &str) -> Option<(f64, f64, f64, f64)> {
    if !runs_here(may_create_namespaces()) {
        return None;
    }
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/traces/markov-lte.down"
    );
    let over_trace = |kind: &str| {
        let mut sc = scenario_over(kind, 1, r#"{ kind = "droptail", limit = "100pkt" }"#, "");
        sc.duration = acclab_core::Duration::from_secs(40);
        let t = acclab_core::link::CapacityTrace::parse(&std::fs::read_to_string(trace).unwrap())
            .unwrap();
        let l = &mut sc.links[0];
        l.rate = t.mean_rate();
        l.capacity = Some(acclab_scenario::CapacityTraceDef {
            file: "markov-lte.down".into(),
            trace: std::sync::Arc::new(t),
        });
        sc.output.window = (
            acclab_core::Time::from_secs_f64(10.0),
            acclab_core::Time::from_secs_f64(40.0),
        );
        sc
    };
    let _turn = one_at_a_time();
    let (_, s) = acclab_sim::run(over_trace(kind), &mut |_| {});
    let opts = LiveOptions {
        network: Network::Namespaces,
        ..Default::default()
    };
    let (_, ks) = acclab_live::run(
        over_trace(&format!(
            "kind = \"kernel-tcp\"\nparams = {{ cc = \"{cc}\" }}"
        )),
        &opts,
        &mut |_| {},
    )
    .expect("live run");
    let linux = acclab_live::kernel::wire_bytes(ks.flows[0].throughput_bps, 1500);
    let acclab = s.flows[0].throughput_bps;
    let (lq, aq) = (ks.links[0].mean_queue_pkts, s.links[0].mean_queue_pkts);
    eprintln!(
        "{cc} over the trace: Linux {:.3} Mb/s, queue {lq:.1}; acclab {:.3} Mb/s, queue {aq:.1}; utilisation {:.3} / {:.3}",
        linux / 1e6,
        acclab / 1e6,
        ks.links[0].utilization,
        s.links[0].utilization
    );
    Some((linux, acclab, lq, aq))
}

/// Linux over a capacity trace (issue 53 §1): the emulator's links take the same descriptions
/// as the simulator's, so the kernel's CUBIC runs over the trace beside acclab's CUBIC
/// (`linux = true`). Held: per-flow throughput within 10% and the mean queue within 25% (the
/// trace's swings, not a standing sawtooth, set it).
#[test]
fn one_linux_cubic_flow_over_a_capacity_trace_matches_acclab_cubic() {
    let Some((linux, acclab, lq, aq)) =
        over_the_trace("cubic", "kind = \"cubic\"\nparams = { linux = true }")
    else {
        return;
    };
    assert!(
        (linux - acclab).abs() <= 0.10 * acclab,
        "throughput: Linux {linux}, acclab {acclab}"
    );
    assert!(
        (lq - aq).abs() <= 0.25 * aq,
        "mean queue: Linux {lq}, acclab {aq}"
    );
}

/// BBR v1 over the same trace (issue 53 §2's cross-check where Linux has the scheme): Linux's
/// tcp_bbr beside acclab's `bbr`. Measured (two runs, 2026-11-27): Linux 11.04 and 11.12 Mb/s
/// against acclab's 10.75 (3%), mean queue 55.4 and 57.6 packets against 40.4 — Linux's BBR
/// keeps more queued, as on fixed links (`one_linux_bbr_flow_matches_acclab_bbr` says why).
/// Held: throughput within 10%; the queue only within 50% of the larger (the known gap).
#[test]
fn one_linux_bbr_flow_over_a_capacity_trace_matches_acclab_bbr() {
    let Some((linux, acclab, lq, aq)) = over_the_trace("bbr", "kind = \"bbr\"") else {
        return;
    };
    assert!(
        (linux - acclab).abs() <= 0.10 * acclab,
        "throughput: Linux {linux}, acclab {acclab}"
    );
    assert!(
        (lq - aq).abs() <= 0.5 * aq.max(lq),
        "mean queue: Linux {lq}, acclab {aq}"
    );
}
