//! `acclab capacity`: link capacity traces in Mahimahi's format — make a synthetic one (a
//! Markov-modulated process, [`acclab_core::link::CapacityTrace::markov`]) or describe one.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use acclab_core::link::{CapacityTrace, MarkovState};
use acclab_core::{rng, Duration, Rate};

#[derive(clap::Subcommand)]
pub enum CapacityCommand {
    /// Write a synthetic capacity trace: the link moves between states of given mean capacity
    /// and mean dwell time (exponential), picking the next state uniformly among the others;
    /// within a state, 1500-byte delivery opportunities arrive as a Poisson process.
    Markov {
        /// A state, RATE:DWELL (e.g. 12Mbps:2s, or 0Mbps:300ms for an outage); repeat for
        /// each state (the link starts in the first).
        #[arg(long = "state", required = true)]
        states: Vec<String>,
        /// The trace's length (its period when it repeats): whole milliseconds.
        #[arg(long)]
        duration: String,
        /// The random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The file to write (Mahimahi's format: one line per opportunity, in ms).
        #[arg(long)]
        out: PathBuf,
        /// Overwrite the file if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Describe capacity traces: opportunities, period, mean capacity, and how the capacity
    /// of one-second windows spreads.
    Info {
        /// Trace files (Mahimahi's format).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn capacity(cmd: CapacityCommand) -> Result<()> {
    match cmd {
        CapacityCommand::Markov {
            states,
            duration,
            seed,
            out,
            force,
        } => {
            let states = states
                .iter()
                .map(|s| parse_state(s))
                .collect::<Result<Vec<_>>>()?;
            let duration = Duration::parse(&duration).with_context(|| "--duration")?;
            if out.exists() && !force {
                bail!(
                    "{} exists: give --force to overwrite it, or another --out",
                    out.display()
                );
            }
            let mut rng = rng::stream(seed, "capacity-trace");
            let trace = CapacityTrace::markov(&states, duration, &mut rng)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            acclab_results::files::write_atomic(&out, trace.to_mahimahi().as_bytes())
                .with_context(|| format!("writing {}", out.display()))?;
            println!(
                "{}: {} opportunities in {}, mean capacity {}",
                out.display(),
                trace.opportunities(),
                trace.period(),
                trace.mean_rate()
            );
        }
        CapacityCommand::Info { files } => {
            println!(
                "{:<36} {:>9} {:>10} {:>10} {:>8} {:>8} {:>8} {:>7}",
                "trace", "opps", "period", "mean Mb/s", "p5", "p50", "p95", "empty"
            );
            for f in files {
                let text = std::fs::read_to_string(&f)
                    .with_context(|| format!("reading {}", f.display()))?;
                let t = CapacityTrace::parse(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
                let mut bins = t.binned_rates(Duration::from_secs(1));
                bins.sort_by(f64::total_cmp);
                let q = |p: f64| {
                    bins.get(((bins.len() as f64 - 1.0) * p).round() as usize)
                        .map_or("-".to_string(), |x| format!("{:.2}", x / 1e6))
                };
                let empty = bins.iter().filter(|&&b| b == 0.0).count();
                println!(
                    "{:<36} {:>9} {:>10} {:>10.2} {:>8} {:>8} {:>8} {:>7}",
                    f.display().to_string(),
                    t.opportunities(),
                    t.period().to_string(),
                    t.mean_rate().as_f64() / 1e6,
                    q(0.05),
                    q(0.5),
                    q(0.95),
                    format!("{empty}/{}", bins.len()),
                );
            }
            println!("(p5, p50, p95: capacity of one-second windows, Mb/s; empty: windows without an opportunity)");
        }
    }
    Ok(())
}

/// `RATE:DWELL`, e.g. `12Mbps:2s`.
fn parse_state(s: &str) -> Result<MarkovState> {
    let Some((rate, dwell)) = s.split_once(':') else {
        bail!("--state {s:?}: write RATE:DWELL, e.g. 12Mbps:2s");
    };
    // A zero rate is an outage here (Rate::parse refuses it: no link has rate zero).
    let number: String = rate
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let rate = match Rate::parse(rate) {
        Ok(r) => r,
        Err(_) if number.parse::<f64>() == Ok(0.0) => Rate(0),
        Err(e) => bail!("--state {s:?}: the rate: {e}"),
    };
    let dwell = Duration::parse(dwell).with_context(|| format!("--state {s:?}: the dwell time"))?;
    Ok(MarkovState { rate, dwell })
}
