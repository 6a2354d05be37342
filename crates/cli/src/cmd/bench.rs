//! `acclab bench`: simulator throughput on the fixed Reno dumbbells acclab is held against ns-3
//! and htsim on: N NewReno flows, a bottleneck of rate R and 10 ms with a 1000-packet DropTail,
//! access links of 10 R and 1 ms, 1000-byte packets, flows starting within 100 ms — and on
//! datacenter fabrics (`fattree-k8`, `fattree-k16`: DCTCP under the web-search workload at 50%
//! load, [`acclab_scenario::templates::fat_tree_websearch`]; `fattree-k8-perm`, `fattree-k16-perm`:
//! a permutation of long DCTCP flows, [`acclab_scenario::templates::fat_tree_permutation`] —
//! htsim's two datacenter benchmarks), where the figure to watch is the
//! cost per packet-hop (data and ACKs at every queue, as htsim counts them). Each case
//! runs in a fresh process so that its peak memory (VmHWM) is its own; the median of the
//! repetitions is reported. With `--model` each case also integrates the model tier on the same
//! scenario (its default grouping and step, samples computed and discarded as the packet run's)
//! and reports its wall time as a share of the packet run's (issue 23's target: under 1% for
//! 100 flows over 100 s). `--flows` cases may run Vegas or Monaco flows instead (`--scheme`),
//! to measure the model tier on their laws.
//!
//! `--against OTHER` compares this build with another acclab executable (an older checkout's
//! `target/release/acclab`, say) on the same cases: the two run in pairs, so that both see the
//! host in the same state, and the figure is the median of the pairs' ratios of time per
//! packet-hop. A shared machine moves single runs by 5-20%, which unpaired medians taken
//! minutes apart do not cancel. Where two CPUs are free and the case is serial, a pair's two
//! runs go side by side — at the same time, each pinned to a CPU of its own, the CPUs swapped
//! from pair to pair — else (or with `--back-to-back`) one right after the other, their order
//! alternating. Side by side cancels what moves the host from second to second: on this
//! project's 2-CPU VM, 15 pairs of a 2 s dumbbell run had ratios within 1.024–1.121 (half of
//! them within 1.036–1.075), where back-to-back pairs of the same builds spread over 0.62–1.86
//! (docs/performance.md, session 42). The two runs share the last-level cache and the memory
//! bus, so their absolute times are not a lone run's; their ratio is what is compared.

use std::process::Command;

use acclab_scenario::templates::{dumbbell, fat_tree_permutation, fat_tree_websearch};
use anyhow::{bail, Context, Result};

/// A benchmark case: flows, bottleneck rate (Mb/s), simulated milliseconds, the flows' scheme;
/// or, with `fattree = Some(k)`, the web-search fat-tree, or with `permutation` too the
/// permutation of long flows on it (flows, rate and scheme unused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub flows: usize,
    pub rate_mbps: u64,
    pub duration_ms: u64,
    pub scheme: Scheme,
    pub fattree: Option<u32>,
    pub permutation: bool,
    /// Threads of one run: 1 is the serial engine, more the parallel one.
    pub threads: usize,
    /// The links keep their queueing delays' percentiles (`[output] queueing_percentiles`),
    /// as every scenario does by default; `false`: their mean alone.
    pub queueing_percentiles: bool,
    /// The run writes its samples' files (flows.csv, links.csv, delays.csv) as `acclab run`
    /// does, into a temporary directory, instead of dropping them.
    pub files: bool,
}

/// The flows' scheme (default parameters). The named cases are Reno: the comparisons' setup.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheme {
    #[default]
    Reno,
    Vegas,
    Monaco,
}

impl Scheme {
    pub fn kind(self) -> &'static str {
        match self {
            Scheme::Reno => "reno",
            Scheme::Vegas => "vegas",
            Scheme::Monaco => "monaco",
        }
    }
}

/// The named cases: the ns-3 comparison (100 Mb/s, 60 s) and the htsim comparison (issue 27).
const NAMED: &[(&str, Case)] = &[
    ("dumbbell-10", case(10, 100, 60)),
    ("dumbbell-100", case(100, 100, 60)),
    ("1g-1000", case(1000, 1000, 10)),
    ("10g-10", case(10, 10_000, 20)),
    ("10g-1000", case(1000, 10_000, 20)),
    ("10g-10000", case(10_000, 10_000, 20)),
    ("fattree-k8", fat_tree(8, 1000)),
    ("fattree-k16", fat_tree(16, 100)),
    (
        "fattree-k8-perm",
        Case {
            permutation: true,
            ..fat_tree(8, 20)
        },
    ),
    (
        "fattree-k16-perm",
        Case {
            permutation: true,
            ..fat_tree(16, 5)
        },
    ),
    (
        "fattree-k32-perm",
        Case {
            permutation: true,
            ..fat_tree(32, 1)
        },
    ),
];

/// The web-search load of the fat-tree cases.
const FABRIC_LOAD: f64 = 0.5;

const fn case(flows: usize, rate_mbps: u64, duration_s: u64) -> Case {
    Case {
        flows,
        rate_mbps,
        duration_ms: duration_s * 1000,
        scheme: Scheme::Reno,
        fattree: None,
        permutation: false,
        threads: 1,
        queueing_percentiles: true,
        files: false,
    }
}

const fn fat_tree(k: u32, duration_ms: u64) -> Case {
    Case {
        flows: 0,
        rate_mbps: 10_000,
        duration_ms,
        scheme: Scheme::Reno,
        fattree: Some(k),
        permutation: false,
        threads: 1,
        queueing_percentiles: true,
        files: false,
    }
}

fn parse_case(s: &str) -> Result<String, String> {
    if s == "all" || NAMED.iter().any(|(n, _)| *n == s) {
        Ok(s.to_string())
    } else {
        let names: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
        Err(format!(
            "unknown case {s:?}: one of {}, or all",
            names.join(", ")
        ))
    }
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Named cases, comma-separated: dumbbell-10, dumbbell-100 (100 Mb/s, 60 s: the ns-3
    /// comparison), 1g-1000 (1000 flows at 1 Gb/s, 10 s), 10g-10, 10g-1000, 10g-10000 (10 Gb/s,
    /// 20 s: the htsim comparison), fattree-k8 (128 hosts, 1 s), fattree-k16 (1,024 hosts,
    /// 0.1 s: DCTCP, web search at 50% load), fattree-k8-perm (20 ms), fattree-k16-perm (5 ms),
    /// fattree-k32-perm (8,192 hosts, 1 ms: a permutation of long DCTCP flows), or all.
    #[arg(long, value_delimiter = ',', value_parser = parse_case,
          default_values_t = ["dumbbell-10".to_string(), "dumbbell-100".to_string()])]
    case: Vec<String>,
    /// Instead of named cases: these flow counts on the 100 Mb/s dumbbell (with --duration-s).
    #[arg(long, value_delimiter = ',')]
    flows: Vec<usize>,
    /// Simulated seconds of the --flows cases.
    #[arg(long, default_value_t = 60)]
    duration_s: u64,
    /// The --flows cases' scheme (the named cases are Reno).
    #[arg(long, value_enum, default_value_t = Scheme::Reno, requires = "flows")]
    scheme: Scheme,
    /// Repetitions per case; the median wall time is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Also integrate the model tier on each case and report its wall time beside the packet
    /// run's.
    #[arg(long, conflicts_with = "against")]
    model: bool,
    /// Another acclab executable to compare with: each repetition runs a case on both, side by
    /// side on two CPUs (or back to back), and the median of the pairs' ratios of time per
    /// packet-hop is reported.
    #[arg(long, value_name = "ACCLAB")]
    against: Option<std::path::PathBuf>,
    /// With --against: run each pair's two runs one after the other (order alternating), not
    /// side by side on two CPUs.
    #[arg(long, requires = "against")]
    back_to_back: bool,
    /// Instead of timing: run each case once and report the available parallelism of a
    /// conservative parallel engine with this many partitions (comma-separated, 1–4096).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["against", "model"],
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    parallelism: Vec<u32>,
    /// Run each case on each of these thread counts (comma-separated: 1 is the serial engine,
    /// more the parallel one, whose results are the serial run's).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize],
          value_parser = clap::builder::ValueParser::new(clap::builder::TypedValueParser::map(clap::value_parser!(u64).range(1..=256), |t| t as usize)))]
    threads: Vec<usize>,
    /// Run the cases with `[output] queueing_percentiles = false`: the links keep their
    /// queueing delays' mean alone, no histogram (what a large fabric's run gains from it).
    #[arg(long)]
    queueing_mean: bool,
    /// Each run writes its samples as `acclab run` does (flows.csv, links.csv, delays.csv,
    /// into a temporary directory; every link and flow every 100 ms), its time counted, instead
    /// of taking them and dropping them: what a run's files cost.
    #[arg(long)]
    files: bool,
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// One case, in this process: prints a single JSON line. Setup is reading the scenario and
/// building the simulator; wall is the run alone.
pub fn run_case(c: Case, model: bool) -> Result<()> {
    let t0 = std::time::Instant::now();
    let mut sc = acclab_scenario::parse(&scenario_text(c), "<bench>")?;
    sc.output.queueing_percentiles = c.queueing_percentiles;
    let flows = sc.flows.len();
    let model_sc = model.then(|| sc.clone());
    let mut sim = acclab_sim::Simulator::new(sc);
    // Samples are taken as in any run (every 100 ms) but neither kept nor written, so that the
    // figures are the simulator's and peak memory does not grow with the duration; with
    // `files`, written as a run writes them.
    let dir = match c.files {
        true => {
            let dir = tempfile::tempdir().context("cannot make a directory for the files")?;
            acclab_sim::output::stream_outputs(dir.path(), &mut sim, false)
                .context("cannot write the samples' files")?;
            Some(dir)
        }
        false => {
            sim.stream_samples(Box::new(()), false);
            None
        }
    };
    let setup = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    if c.threads > 1 {
        sim.run_parallel(c.threads, &mut |_| {}).map_err(|why| {
            anyhow::anyhow!("the case cannot run on {} threads: {why}", c.threads)
        })?;
    } else {
        sim.run(&mut |_| {});
    }
    if dir.is_some() {
        sim.finish_samples()
            .context("cannot write the samples' files")?;
    }
    let wall = t1.elapsed().as_secs_f64();
    let s = acclab_sim::output::summary(&sim, wall);
    let bottleneck = s
        .links
        .iter()
        .find(|l| l.id == "r1->r2")
        .map_or(0, |l| l.transmitted_packets);
    let (model_wall, model_steps, model_classes) = if let Some(sc) = &model_sc {
        let mut m = acclab_model::Model::new(sc, acclab_model::Settings::default())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let t2 = std::time::Instant::now();
        m.run(&mut ());
        (
            Some(t2.elapsed().as_secs_f64()),
            Some(m.steps),
            Some(m.classes()),
        )
    } else {
        (None, None, None)
    };
    let line = serde_json::json!({
        "model_wall_s": model_wall,
        "model_steps": model_steps,
        "model_classes": model_classes,
        "flows": flows,
        "rate_mbps": c.rate_mbps,
        "scheme": c.scheme.kind(),
        "duration_s": c.duration_ms as f64 / 1e3,
        "setup_s": setup,
        "wall_s": wall,
        "events": s.events,
        "packet_hops": s.packet_hops,
        "bottleneck_packets": bottleneck,
        "peak_rss_mb": peak_rss_mb(),
    });
    println!("{line}");
    Ok(())
}

/// A case's scenario, as TOML.
fn scenario_text(c: Case) -> String {
    match c.fattree {
        Some(k) if c.permutation => fat_tree_permutation(k, c.duration_ms),
        Some(k) => fat_tree_websearch(k, FABRIC_LOAD, c.duration_ms),
        None => dumbbell(
            c.scheme.kind(),
            c.flows,
            c.rate_mbps,
            1000,
            c.duration_ms / 1000,
        ),
    }
}

/// `--parallelism`: each case run once, serially, with its events counted by partition and
/// lookahead window for each partition count (acclab_sim::parallelism): the speed-up an ideal
/// machine with a core per partition would reach.
fn parallelism(cases: &[(String, Case)], parts: &[u32]) -> Result<()> {
    println!(
        "{:<17} {:>5} {:>10} {:>12} {:>10} {:>9} {:>12} {:>10} {:>11}",
        "case",
        "parts",
        "lookahead",
        "events",
        "windows",
        "ev/window",
        "crossing %",
        "imbalance",
        "available ×"
    );
    for (name, c) in cases {
        let sc = acclab_scenario::parse(&scenario_text(*c), "<bench>")?;
        let probe = acclab_sim::parallelism::ParallelismProbe::new(&sc, parts);
        let mut bar = crate::progress::TimeBar::new(&sc, "counting events by partition", false);
        let mut sim = acclab_sim::Simulator::new(sc);
        sim.stream_samples(Box::new(()), false);
        let probe = sim.run_probed(probe, &mut |t| bar.at(t));
        bar.finish();
        for p in probe.finish() {
            println!(
                "{:<17} {:>5} {:>10} {:>12} {:>10} {:>9.1} {:>12.2} {:>10.2} {:>11.2}",
                name,
                p.parts,
                p.lookahead.map_or("-".into(), |d| format!("{d}")),
                p.events,
                p.windows,
                p.events as f64 / p.windows.max(1) as f64,
                100.0 * p.crossing as f64 / p.events.max(1) as f64,
                p.imbalance(),
                p.available_parallelism()
            );
        }
    }
    println!(
        "(available ×: events over the critical path, Σ per window of the busiest partition's \
         events; synchronisation free — a ceiling. Partitions: racks kept whole, pods together.)"
    );
    Ok(())
}

pub fn bench(args: BenchArgs) -> Result<()> {
    let cases: Vec<(String, Case)> = if !args.flows.is_empty() {
        args.flows
            .iter()
            .map(|&n| {
                let name = match args.scheme {
                    Scheme::Reno => format!("{n}@100M"),
                    other => format!("{n}@100M {}", other.kind()),
                };
                let c = Case {
                    scheme: args.scheme,
                    ..case(n, 100, args.duration_s)
                };
                (name, c)
            })
            .collect()
    } else if args.case.iter().any(|c| c == "all") {
        NAMED.iter().map(|(n, c)| (n.to_string(), *c)).collect()
    } else {
        NAMED
            .iter()
            .filter(|(n, _)| args.case.iter().any(|c| c == n))
            .map(|(n, c)| (n.to_string(), *c))
            .collect()
    };
    if !args.parallelism.is_empty() {
        return parallelism(&cases, &args.parallelism);
    }
    // Each case on each thread count asked for.
    let cases: Vec<(String, Case)> = cases
        .into_iter()
        .map(|(name, c)| match args.queueing_mean {
            true => (
                format!("{name} q-mean"),
                Case {
                    queueing_percentiles: false,
                    ..c
                },
            ),
            false => (name, c),
        })
        .map(|(name, c)| match args.files {
            true => (format!("{name} files"), Case { files: true, ..c }),
            false => (name, c),
        })
        .flat_map(|(name, c)| {
            args.threads.iter().map(move |&threads| match threads {
                1 => (name.clone(), c),
                t => (format!("{name} x{t}"), Case { threads: t, ..c }),
            })
        })
        .collect();
    let exe = std::env::current_exe().context("cannot find the acclab executable")?;
    if let Some(other) = &args.against {
        return compare(&exe, other, &cases, args.repeat.max(1), args.back_to_back);
    }
    println!(
        "{:<15} {:>7} {:>8} {:>9} {:>12} {:>10} {:>11} {:>11} {:>10} {:>12} {:>14} {:>8}",
        "case",
        "flows",
        "setup s",
        "wall s",
        "events",
        "ev/pkt-hop",
        "Mevents/s",
        "Mpkt-hops/s",
        "ns/pkt-hop",
        "bottl. pkts",
        "ns/bottl. pkt",
        "peak MB"
    );
    if args.model {
        println!("{:>15} {:>7} {:>9}", "", "model s", "of run %");
    }
    for (name, c) in &cases {
        let mut runs = Vec::new();
        for _ in 0..args.repeat.max(1) {
            runs.push(run_child(&exe, c, args.model)?);
        }
        let median = |key: &str| median_of(runs.iter().filter_map(|r| r[key].as_f64()).collect());
        let (wall, setup) = (median("wall_s"), median("setup_s"));
        let num = |k: &str| runs[0][k].as_f64().unwrap_or(f64::NAN);
        let peak = runs
            .iter()
            .filter_map(|r| r["peak_rss_mb"].as_f64())
            .fold(0.0, f64::max);
        // A fabric has no single bottleneck.
        let per_bottleneck = match num("bottleneck_packets") {
            n if n > 0.0 => format!("{:.1}", wall * 1e9 / n),
            _ => "-".into(),
        };
        println!(
            "{:<15} {:>7} {:>8.3} {:>9.3} {:>12} {:>10.2} {:>11.2} {:>11.2} {:>10.1} {:>12} {:>14} {:>8.1}",
            name,
            num("flows"),
            setup,
            wall,
            num("events"),
            num("events") / num("packet_hops"),
            num("events") / wall / 1e6,
            num("packet_hops") / wall / 1e6,
            wall * 1e9 / num("packet_hops"),
            num("bottleneck_packets"),
            per_bottleneck,
            peak
        );
        if args.model {
            // Each repetition's model time over its own packet run's (paired), median.
            let mut share: Vec<f64> = runs
                .iter()
                .filter_map(|r| Some(r["model_wall_s"].as_f64()? / r["wall_s"].as_f64()?))
                .collect();
            share.sort_by(f64::total_cmp);
            println!(
                "{:>15} {:>7.4} {:>9.3}",
                "model:",
                median("model_wall_s"),
                100.0 * share.get(share.len() / 2).copied().unwrap_or(f64::NAN)
            );
        }
    }
    println!(
        "(median of {} runs per case; ns-3.37, Debian's, on this machine kind: 10 flows ≈ 35 k, 100 flows ≈ 17 k bottleneck pkt/s)",
        args.repeat.max(1)
    );
    Ok(())
}

/// The median of `v` (the upper one of an even count), NaN if empty.
fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs case `c` with `bench-case` of executable `exe` in a fresh process; its JSON line.
fn run_child(exe: &std::path::Path, c: &Case, model: bool) -> Result<serde_json::Value> {
    finish_child(exe, spawn_child(exe, c, model, None)?)
}

/// Starts `bench-case` for `c` in `exe`, its output piped; on `cpu` alone if given (set in the
/// child before it runs `exe`, so that every instruction of it runs there).
fn spawn_child(
    exe: &std::path::Path,
    c: &Case,
    model: bool,
    cpu: Option<usize>,
) -> Result<std::process::Child> {
    let fabric: Vec<String> = match c.fattree {
        Some(k) => vec![
            "--fattree".into(),
            k.to_string(),
            "--duration-ms".into(),
            c.duration_ms.to_string(),
        ]
        .into_iter()
        .chain(c.permutation.then(|| "--permutation".to_string()))
        .collect(),
        None => Vec::new(),
    };
    let mut cmd = Command::new(exe);
    cmd.args([
        "bench-case",
        &c.flows.to_string(),
        &(c.duration_ms / 1000).to_string(),
        "--rate-mbps",
        &c.rate_mbps.to_string(),
        "--scheme",
        c.scheme.kind(),
    ])
    .args(fabric)
    .args(model.then_some("--model"))
    .args((c.threads > 1).then(|| format!("--threads={}", c.threads)))
    .args((!c.queueing_percentiles).then_some("--queueing-mean"))
    .args(c.files.then_some("--files"))
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    if let Some(cpu) = cpu {
        let mut set = nix::sched::CpuSet::new();
        set.set(cpu)
            .with_context(|| format!("CPU {cpu} is beyond what an affinity mask holds"))?;
        // SAFETY: the closure runs in the forked child before exec and makes one system call
        // (async-signal-safe), allocating nothing.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                    .map_err(std::io::Error::from)
            });
        }
    }
    cmd.spawn()
        .with_context(|| format!("cannot start {}", exe.display()))
}

/// Waits for a `bench-case` child of `exe` and reads the JSON line it printed.
fn finish_child(exe: &std::path::Path, child: std::process::Child) -> Result<serde_json::Value> {
    let out = child
        .wait_with_output()
        .with_context(|| format!("cannot wait for {}", exe.display()))?;
    if !out.status.success() {
        bail!(
            "benchmark case failed in {}: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "{} bench-case did not print a JSON line (is it an acclab executable?); it printed {:?}",
            exe.display(),
            String::from_utf8_lossy(&out.stdout).trim()
        )
    })
}

/// `--against`: each case `repeat` times on this build and on `other`, in pairs run side by side
/// on two CPUs where it can (see the module's header), else back to back (this build first in
/// odd pairs, `other` first in even ones); per case the two medians of wall time, the median,
/// lowest and highest of the pairs' ratios of time per packet-hop (this build's over the
/// other's), and how far the two runs' bottleneck packet counts are apart.
fn compare(
    exe: &std::path::Path,
    other: &std::path::Path,
    cases: &[(String, Case)],
    repeat: usize,
    back_to_back: bool,
) -> Result<()> {
    if !other.is_file() {
        bail!(
            "--against {}: no such file (give the path of another acclab executable)",
            other.display()
        );
    }
    let cpus = if back_to_back { None } else { two_cpus() };
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    println!(
        "{:<15} {:>7} {:>9} {:>9} {:>7} {:>15} {:>9} {:>11}",
        "case", "flows", "this s", "other s", "ratio", "pairs' range", "speed-up", "pkts apart"
    );
    let mut sides = Vec::new();
    for (name, c) in cases {
        let (mut this, mut that, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut apart: f64 = 0.0;
        // A parallel run wants every CPU: its pairs go back to back.
        let side_by_side = cpus.filter(|_| c.threads == 1);
        sides.push(side_by_side.is_some());
        for pair in 0..repeat {
            if progress {
                eprint!("\r{name}: pair {}/{repeat} ", pair + 1);
            }
            let (a, b) = match side_by_side {
                Some((x, y)) => {
                    let (ca, cb) = if pair % 2 == 0 { (x, y) } else { (y, x) };
                    let mut a = spawn_child(exe, c, false, Some(ca))?;
                    let b = match spawn_child(other, c, false, Some(cb)) {
                        Ok(b) => b,
                        Err(e) => {
                            // Not left running on its own.
                            let _ = a.kill();
                            let _ = a.wait();
                            return Err(e);
                        }
                    };
                    // Both waited for before either's failure is reported: none is left behind.
                    let (ra, rb) = (finish_child(exe, a), finish_child(other, b));
                    (ra?, rb?)
                }
                None if pair % 2 == 0 => {
                    let a = run_child(exe, c, false)?;
                    (a, run_child(other, c, false)?)
                }
                None => {
                    let b = run_child(other, c, false)?;
                    (run_child(exe, c, false)?, b)
                }
            };
            let num = |v: &serde_json::Value, key: &str| {
                v[key]
                    .as_f64()
                    .with_context(|| format!("a bench-case line without {key}: {v}"))
            };
            let (wa, wb) = (num(&a, "wall_s")?, num(&b, "wall_s")?);
            this.push(wa);
            that.push(wb);
            // Per packet-hop: two builds whose runs differ a little (a changed tie rule, say)
            // are compared on the same work.
            ratios.push((wa / num(&a, "packet_hops")?) / (wb / num(&b, "packet_hops")?));
            // A fabric has no single bottleneck: its packet-hops are compared instead.
            let key = match c.fattree {
                Some(_) => "packet_hops",
                None => "bottleneck_packets",
            };
            let pkts = |v: &serde_json::Value| v[key].as_f64().unwrap_or(f64::NAN);
            apart = apart.max((pkts(&a) - pkts(&b)).abs() / pkts(&b).max(1.0));
        }
        if progress {
            eprint!("\r{:40}\r", "");
        }
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ratio = median_of(ratios);
        println!(
            "{:<15} {:>7} {:>9.3} {:>9.3} {:>7.3} {:>15} {:>8.2}x {:>10.2}%",
            name,
            c.flows,
            median_of(this),
            median_of(that),
            ratio,
            format!("{lo:.3}-{hi:.3}"),
            1.0 / ratio,
            100.0 * apart
        );
    }
    let how = match (sides.iter().all(|&s| s), sides.iter().any(|&s| s)) {
        (true, _) => "side by side, each on a CPU of its own, the CPUs swapped from pair to pair",
        (false, true) => "side by side on two CPUs (the serial cases) or back to back in alternating order (the parallel ones)",
        (false, false) => "back to back in alternating order",
    };
    println!(
        "({repeat} pairs per case, run {how}; ratio: median of the pairs' (this build's time per \
         packet-hop / the other's); speed-up: its inverse; pkts apart: the largest difference in \
         bottleneck packets between the two builds' runs)"
    );
    Ok(())
}

/// Two CPUs this process may run on (the first two of its affinity mask), for a pair's runs
/// side by side; `None` if it has fewer, or may not set a process's affinity (a container
/// that forbids it: the mask set again unchanged, as a test).
fn two_cpus() -> Option<(usize, usize)> {
    let me = nix::unistd::Pid::from_raw(0);
    let set = nix::sched::sched_getaffinity(me).ok()?;
    nix::sched::sched_setaffinity(me, &set).ok()?;
    let mut cpus = (0..nix::sched::CpuSet::count()).filter(|&i| set.is_set(i).unwrap_or(false));
    Some((cpus.next()?, cpus.next()?))
}
