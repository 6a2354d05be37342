//! The terminal summary of a run.

use acclab_sim::Summary;

const MAX_ROWS: usize = 20;

fn opt(x: Option<f64>, scale: f64, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{:.*}", digits, v * scale))
}

/// Prints flows and links over the measurement window; long tables are cut to the first rows.
pub fn print_summary(s: &Summary) {
    println!(
        "\n{}: {:.1} s simulated in {:.2} s wall ({} events, {} packet-hops); window {:.1}–{:.1} s",
        s.scenario,
        s.sim_time_s,
        s.wall_time_s,
        s.events,
        s.packet_hops,
        s.window.from_s,
        s.window.to_s
    );
    println!(
        "\n{:<20} {:<6} {:>12} {:>9} {:>9} {:>12} {:>8}",
        "flow", "kind", "thr (Mb/s)", "lost", "rexmit", "mean RTT ms", "cwnd KB"
    );
    for f in s.flows.iter().take(MAX_ROWS) {
        println!(
            "{:<20} {:<6} {:>12.3} {:>9} {:>9} {:>12} {:>8}",
            f.id,
            f.kind,
            f.throughput_bps / 1e6,
            f.lost_packets,
            f.retransmits,
            opt(f.mean_rtt_s, 1e3, 2),
            opt(f.mean_cwnd_bytes, 1e-3, 1),
        );
    }
    if s.flows.len() > MAX_ROWS {
        println!(
            "… and {} more flows (see summary.json)",
            s.flows.len() - MAX_ROWS
        );
    }
    let mut links: Vec<_> = s
        .links
        .iter()
        .filter(|l| l.transmitted_packets > 0)
        .collect();
    links.sort_by(|a, b| b.utilization.total_cmp(&a.utilization));
    println!(
        "\n{:<20} {:>10} {:>8} {:>12} {:>10} {:>8}",
        "busiest links", "rate Mb/s", "util", "mean queue", "max queue", "drops"
    );
    for l in links.iter().take(MAX_ROWS.min(8)) {
        println!(
            "{:<20} {:>10.1} {:>8.3} {:>12.1} {:>10} {:>8}",
            l.id,
            l.rate_bps as f64 / 1e6,
            l.utilization,
            l.mean_queue_pkts,
            l.max_queue_pkts,
            l.drops
        );
    }
    if let Some(j) = s.fairness.jain {
        println!("\nJain's fairness index over the window: {j:.4}");
    }
}
