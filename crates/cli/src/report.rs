//! The summary of a run: its tables, printed on the terminal and shown on `acclab report`'s
//! page alike.

use acclab_results::table::{Align, Table};
use acclab_results::Summary;

const MAX_ROWS: usize = 20;

fn opt(x: Option<f64>, scale: f64, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{:.*}", digits, v * scale))
}

/// Says which flows' goodput is above what their receivers got in the window (by more than 1%),
/// and why: goodput counts bytes delivered in order, so a repair that fills a hole releases
/// data received before it, even before the window opened; what the receiver got is what the
/// path carried, which its capacity bounds.
fn goodput_above_received(s: &Summary) -> Option<String> {
    let above: Vec<&str> = s
        .flows
        .iter()
        .filter(|f| f.throughput_bps > 1.01 * f.received_bps)
        .map(|f| f.id.as_str())
        .collect();
    let (shown, more) = (above.len().min(5), above.len().saturating_sub(5));
    (!above.is_empty()).then(|| {
        format!(
            "goodput above what the receiver got ({}{}): goodput counts data delivered in order, \
             and a repair releases at once the data received behind the hole, some of it before \
             the window opened; `recv` is what the path carried",
            above[..shown].join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    })
}

/// Prints flows and links over the measurement window; long tables are cut to the first rows.
pub fn print_summary(s: &Summary) {
    // Runs under a second (datacenter fabrics) in milliseconds, so that their times show.
    let (scale, unit) = if s.sim_time_s < 1.0 {
        (1e3, "ms")
    } else {
        (1.0, "s")
    };
    println!(
        "\n{}: {:.1} {unit} simulated in {:.2} s wall ({} events, {} packet-hops); window {:.1}–{:.1} {unit}",
        s.scenario,
        s.sim_time_s * scale,
        s.wall_time_s,
        s.events,
        s.packet_hops,
        s.window.from_s * scale,
        s.window.to_s * scale
    );
    if !s.flows.is_empty() {
        print!("\n{}", flow_table(s, MAX_ROWS).text(MAX_ROWS));
    }
    if s.flows.len() > MAX_ROWS {
        println!(
            "… and {} more flows (see summary.json)",
            s.flows.len() - MAX_ROWS
        );
    }
    if s.unlisted_flows > 0 {
        println!(
            "\n{} flows of workloads not listed: fct.csv has each ([output] flow_summaries = true \
             lists them in summary.json too)",
            s.unlisted_flows
        );
    }
    if let Some(note) = goodput_above_received(s) {
        println!("{note}");
    }
    print!("\n{}", link_table(s).text(MAX_ROWS.min(8)));
    if let Some(j) = s.fairness.jain {
        println!("\nJain's fairness index over the window: {j:.4}");
    }
    if let Some(fct) = fct_table(s) {
        print!("\n{}", fct.text(usize::MAX));
    }
    let notes = theory_notes(s);
    let outside = notes.iter().filter(|n| n.starts_with("no theory")).count();
    for n in notes
        .iter()
        .filter(|n| !n.starts_with("no theory"))
        .chain(notes.iter().filter(|n| n.starts_with("no theory")).take(8))
    {
        println!("{n}");
    }
    if outside > 8 {
        println!(
            "… and {} more flows outside the theory (summary.json)",
            outside - 8
        );
    }
}

/// The flows over the measurement window: goodput, what the receiver got, losses,
/// retransmissions, mean RTT and window, with the theory's and the model tier's values beside
/// where the run has them: the first `rows` flows (a workload's run has a million).
pub fn flow_table(s: &Summary, rows: usize) -> Table {
    let theory = s.flows.iter().any(|f| f.theory.is_some());
    let model = s.flows.iter().any(|f| f.model.is_some());
    let mut columns = vec![
        "flow",
        "kind",
        "goodput Mb/s",
        "recv Mb/s",
        "lost",
        "rexmit",
        "mean RTT ms",
        "cwnd KB",
    ];
    if theory {
        columns.extend(["theory: thr", "RTT ms", "cwnd KB"]);
    }
    if model {
        columns.extend(["model: thr", "RTT ms", "cwnd KB"]);
    }
    let mut t = Table::new(columns).align(1, Align::Left);
    for f in s.flows.iter().take(rows) {
        let mut cells = vec![
            f.id.clone(),
            f.kind.to_string(),
            format!("{:.3}", f.throughput_bps / 1e6),
            format!("{:.3}", f.received_bps / 1e6),
            f.lost_packets.to_string(),
            f.retransmits.to_string(),
            opt(f.mean_rtt_s, 1e3, 2),
            opt(f.mean_cwnd_bytes, 1e-3, 1),
        ];
        if theory {
            match &f.theory {
                Some(p) => cells.extend([
                    format!("{:.3}", p.throughput_bps / 1e6),
                    format!("{:.2}", p.rtt_s * 1e3),
                    format!("{:.1}", p.cwnd_bytes * 1e-3),
                ]),
                None => cells.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        if model {
            match &f.model {
                Some(m) => cells.extend([
                    format!("{:.3}", m.throughput_bps / 1e6),
                    opt(m.mean_rtt_s, 1e3, 2),
                    opt(m.mean_cwnd_bytes, 1e-3, 1),
                ]),
                None => cells.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        t.push(cells);
    }
    t
}

/// The links that carried packets, busiest first: rate, utilisation, queue, drops and the
/// 99th percentile of the queueing delay (its mean, in a run that kept no percentiles: `[output]
/// queueing_percentiles = false`), with the model tier's values beside where it has them.
pub fn link_table(s: &Summary) -> Table {
    let model = s.flows.iter().any(|f| f.model.is_some());
    let mut links: Vec<_> = s
        .links
        .iter()
        .filter(|l| l.transmitted_packets > 0)
        .collect();
    links.sort_by(|a, b| b.utilization.total_cmp(&a.utilization));
    let p99 = !links
        .iter()
        .any(|l| l.queueing_delay.is_some_and(|q| q.p99_s.is_none()));
    let mut columns = vec![
        "busiest links",
        "rate Mb/s",
        "util",
        "mean queue",
        "max queue",
        "drops",
        if p99 { "q-delay p99" } else { "q-delay mean" },
    ];
    if model {
        columns.extend(["model: util", "mean queue"]);
    }
    let mut t = Table::new(columns);
    for l in links {
        let mut cells = vec![
            l.id.clone(),
            format!("{:.1}", l.rate_bps as f64 / 1e6),
            format!("{:.3}", l.utilization),
            format!("{:.1}", l.mean_queue_pkts),
            l.max_queue_pkts.to_string(),
            l.drops.to_string(),
            l.queueing_delay.map_or("-".to_string(), |q| {
                format!("{:.3} ms", q.p99_s.unwrap_or(q.mean_s) * 1e3)
            }),
        ];
        if model {
            match &l.model {
                Some(m) => cells.extend([
                    format!("{:.3}", m.utilization),
                    format!("{:.1}", m.mean_queue_pkts),
                ]),
                None => cells.extend(["-".into(), "-".into()]),
            }
        }
        t.push(cells);
    }
    t
}

/// The flow-completion-time slowdowns by flow size and overall, where the run has them.
pub fn fct_table(s: &Summary) -> Option<Table> {
    let fct = s.fct.as_ref()?;
    let x = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let mut t = Table::new([
        "FCT slowdown",
        "flows",
        "unfinished",
        "p50",
        "p95",
        "p99",
        "mean FCT ms",
    ]);
    for b in fct.buckets.iter().chain(std::iter::once(&fct.overall)) {
        t.push(vec![
            b.sizes.clone(),
            b.flows.to_string(),
            b.unfinished.to_string(),
            x(b.slowdown_p50),
            x(b.slowdown_p95),
            x(b.slowdown_p99),
            b.mean_fct_s
                .map_or("-".to_string(), |v| format!("{:.3}", v * 1e3)),
        ]);
    }
    Some(t)
}

/// What the theory says beside the tables: why a flow has no prediction ("no theory for …") —
/// except inelastic CBR flows, which the theory does take into account (off the capacities) —
/// and its notes ("theory note: …").
pub fn theory_notes(s: &Summary) -> Vec<String> {
    let Some(t) = &s.theory else {
        return Vec::new();
    };
    t.notes
        .iter()
        .map(|n| format!("theory note: {n}"))
        .chain(
            t.outside
                .iter()
                .filter(|(_, w)| !w.starts_with("inelastic"))
                .map(|(id, w)| format!("no theory for {id}: {w}")),
        )
        .collect()
}

/// Prints a predicted equilibrium.
pub fn print_equilibrium(sc: &acclab_scenario::Scenario, eq: &acclab_theory::Equilibrium) {
    println!("{}: predicted equilibrium\nmodel: {}\n", sc.name, eq.model);
    println!(
        "{:<20} {:>12} {:>10} {:>10} {:>12} {:>10} {:>10}  service",
        "flow", "rate Mb/s", "weight pkt", "d ms", "queueing ms", "RTT ms", "cwnd KB"
    );
    for f in eq.flows.iter().flatten().take(MAX_ROWS * 5) {
        println!(
            "{:<20} {:>12.4} {:>10.3} {:>10.3} {:>12.4} {:>10.3} {:>10.2}  {}",
            f.id,
            f.throughput_bps / 1e6,
            f.weight_pkts,
            f.prop_delay_s * 1e3,
            f.queueing_delay_s * 1e3,
            f.rtt_s * 1e3,
            f.window_bytes / 1e3,
            service(f)
        );
    }
    println!(
        "\n{:<20} {:>12} {:>12} {:>8}",
        "link", "price ms", "queue pkt", "util"
    );
    for l in eq.links.iter().filter(|l| l.price_s > 0.0) {
        println!(
            "{:<20} {:>12.4} {:>12.2} {:>8.4}",
            l.id,
            l.price_s * 1e3,
            l.queue_pkts,
            l.utilization
        );
    }
    for (id, why) in eq.outside.iter().take(MAX_ROWS) {
        println!("outside the theory: {id}: {why}");
    }
    if eq.outside.len() > MAX_ROWS {
        println!(
            "… and {} more flows outside the theory",
            eq.outside.len() - MAX_ROWS
        );
    }
    for n in &eq.notes {
        println!("note: {n}");
    }
}

/// How an expected-rate loop fares in the prediction: "-" for other loops.
fn service(f: &acclab_theory::equilibrium::FlowPrediction) -> String {
    match (f.expected_rate_bps, f.at_limit) {
        (_, Some(true)) => "at its accumulation limit (weight A, r = 0)".into(),
        (Some(r), _) => format!("expected {:.4} Mb/s met", r / 1e6),
        (None, Some(false)) => "below its accumulation limit".into(),
        (None, None) => "-".into(),
    }
}

/// The model tier's fixed point, for flows the NUM theory leaves out (`acclab theory`).
pub fn print_fixed_point(sc: &acclab_scenario::Scenario, fp: &acclab_model::FixedPoint) {
    println!(
        "\nBeyond the NUM theory: the model tier's fixed point (its laws without feedback delay, integrated until the rates settle{})",
        if fp.settled { "" } else { "; NOT settled after 600 s" }
    );
    println!("{:<20} {:<10} {:>12}", "flow", "kind", "rate Mb/s");
    for (f, x) in sc.flows.iter().zip(&fp.throughput_bps).take(MAX_ROWS * 5) {
        println!("{:<20} {:<10} {:>12.4}", f.id, f.scheme.kind(), x / 1e6);
    }
    println!("\n{:<20} {:>12}", "link", "queue pkt");
    for (l, q) in sc
        .links
        .iter()
        .zip(&fp.queue_pkts)
        .filter(|(_, q)| **q > 0.01)
    {
        println!("{:<20} {:>12.2}", l.name, q);
    }
}

/// The ACC loops' stability with feedback delay (`acclab theory`).
pub fn print_stability(st: &acclab_model::stability::Stability) {
    println!(
        "\nStability of the ACC loops with feedback delay (the model linearised about its fixed point; bottlenecks {}):",
        st.bottlenecks.join(", ")
    );
    let limit = match st.kappa_max {
        _ if st.scale_max.is_infinite() => {
            "no gain up to 10^4 times the scenario's destabilises them".to_string()
        }
        Some(k) => format!("stable for kappa < {k:.3}"),
        None => format!(
            "stable with every flow's kappa times less than {:.3}",
            st.scale_max
        ),
    };
    println!(
        "  {limit}; at the boundary the queues oscillate at {:.2} Hz",
        st.boundary_frequency_hz
    );
    println!(
        "  the scenario's gains: {} (margin x{:.2}; rightmost root {:.3}/s{})",
        if st.stable() {
            "stable"
        } else {
            "UNSTABLE: the model oscillates"
        },
        st.scale_max,
        st.abscissa,
        if st.frequency_hz > 0.0 {
            format!(" at {:.2} Hz", st.frequency_hz)
        } else {
            String::new()
        }
    );
    // The packets' boundary: the feedback delays as a packet sender measures them.
    let packets = match st.kappa_max_measured {
        _ if st.scale_max_measured.is_infinite() => "no gain up to 10^4 times".to_string(),
        Some(k) => format!("kappa < {k:.3}"),
        None => format!(
            "every flow's kappa times less than {:.3}",
            st.scale_max_measured
        ),
    };
    println!(
        "  with the delays a packet sender measures a queue with (the queueing its report waited out too): stable for {packets} — where packet runs change (docs/reference.md, the model tier){}",
        if st.scale_max_measured < 1.0 {
            "; the scenario's gains are above it: expect the packet run's queues to oscillate"
        } else {
            ""
        }
    );
}
