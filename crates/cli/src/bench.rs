//! `acclab bench`: simulator throughput on the fixed dumbbell that acclab is compared with ns-3 on
//! (N NewReno flows, bottleneck 100 Mb/s 10 ms with a 1000-packet DropTail, access 1 Gb/s 1 ms,
//! 1000-byte packets, 60 s simulated). Each case runs in a fresh process so that its peak memory
//! (VmHWM) is its own.

use std::process::Command;

use acclab_scenario::templates::reno_dumbbell;
use anyhow::{bail, Context, Result};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Flow counts to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [10usize, 100])]
    flows: Vec<usize>,
    /// Simulated seconds per case.
    #[arg(long, default_value_t = 60)]
    duration_s: u64,
    /// Repetitions per case; the median wall time is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// One case, in this process: prints a single JSON line.
pub fn case(n: usize, duration_s: u64) -> Result<()> {
    let sc = acclab_scenario::parse(&reno_dumbbell(n, 1000, duration_s), "<bench>")?;
    let (_, s) = acclab_sim::run(sc, &mut |_| {});
    let bottleneck = s
        .links
        .iter()
        .find(|l| l.id == "r1->r2")
        .map_or(0, |l| l.transmitted_packets);
    let line = serde_json::json!({
        "flows": n,
        "wall_s": s.wall_time_s,
        "events": s.events,
        "packet_hops": s.packet_hops,
        "bottleneck_packets": bottleneck,
        "peak_rss_mb": peak_rss_mb(),
    });
    println!("{line}");
    Ok(())
}

pub fn bench(args: BenchArgs) -> Result<()> {
    let exe = std::env::current_exe().context("cannot find the acclab executable")?;
    println!(
        "{:>6} {:>9} {:>12} {:>11} {:>14} {:>16} {:>18} {:>10}",
        "flows",
        "wall s",
        "events",
        "Mevents/s",
        "Mpkt-hops/s",
        "bottleneck pkts",
        "bottleneck pkt/s",
        "peak MB"
    );
    for &n in &args.flows {
        let mut runs = Vec::new();
        for _ in 0..args.repeat.max(1) {
            let out = Command::new(&exe)
                .args(["bench-case", &n.to_string(), &args.duration_s.to_string()])
                .output()
                .context("cannot start a benchmark case")?;
            if !out.status.success() {
                bail!(
                    "benchmark case failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            runs.push(v);
        }
        runs.sort_by(|a, b| {
            a["wall_s"]
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b["wall_s"].as_f64().unwrap_or(0.0))
        });
        let m = &runs[runs.len() / 2];
        let wall = m["wall_s"].as_f64().unwrap_or(f64::NAN);
        let num = |k: &str| m[k].as_f64().unwrap_or(f64::NAN);
        let peak = runs
            .iter()
            .filter_map(|r| r["peak_rss_mb"].as_f64())
            .fold(0.0, f64::max);
        println!(
            "{:>6} {:>9.3} {:>12} {:>11.2} {:>14.2} {:>16} {:>18.0} {:>10.1}",
            n,
            wall,
            num("events"),
            num("events") / wall / 1e6,
            num("packet_hops") / wall / 1e6,
            num("bottleneck_packets"),
            num("bottleneck_packets") / wall,
            peak
        );
    }
    println!("(median of {} runs per case; ns-3.48 on this machine kind: 10 flows ≈ 35 k, 100 flows ≈ 17 k bottleneck pkt/s)", args.repeat.max(1));
    Ok(())
}
