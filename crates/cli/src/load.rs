//! Reading a scenario for a command: `--set` patches, errors naming the file, and where
//! results go.

use std::path::{Path, PathBuf};

use anyhow::Result;

use acclab_scenario as scenario;

use crate::outdir;

/// What `run` and `model` both take: a scenario, its patches, where results go and how.
#[derive(clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Output directory [default: results/<scenario name> (`model`: <name>-model), or the next
    /// free one with -2, -3, …].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Set a key of the scenario before running: KEY=VALUE, e.g. flow.f0.params.weight=10 or
    /// 'link."r1->r2".queue.kind=avq' (repeatable; checked as the file would be).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Also write plots (PNG and SVG; see --preset and --formats) of goodput, cwnd, queues and
    /// utilisation, with the theory's equilibrium (dotted) and the model tier's trajectory
    /// (dashed) where there are (`acclab plot DIR` draws them again later).
    #[arg(long)]
    pub plots: bool,
    #[command(flatten)]
    pub figures: crate::cmd::plot::FigureArgs,
    /// Overwrite results already in the output directory.
    #[arg(long)]
    pub force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Reads a scenario file once with `--set KEY=VALUE` patches applied (checked as the file would
/// be); also says whether the file has a `[sweep]` table.
pub fn load_with(path: &Path, set: &[String]) -> Result<Loaded> {
    let loaded = scenario::sweep_spec::load_file(path)?;
    let has_sweep = loaded.sweep.is_some();
    if set.is_empty() {
        return Ok(Loaded {
            scenario: loaded.scenario,
            def: loaded.def,
            has_sweep,
        });
    }
    let mut def = loaded.def;
    let patches = scenario::sweep_spec::assignments(set).map_err(anyhow::Error::msg)?;
    def.set_all(&patches).map_err(|e| given_by_set(e, path))?;
    Ok(Loaded {
        scenario: def.build().map_err(|e| given_by_set(e, path))?,
        def,
        has_sweep,
    })
}

/// A scenario file read and patched: the scenario to run, its spec (for the effective
/// scenario a run keeps), and whether the file has a `[sweep]` table.
pub struct Loaded {
    pub scenario: acclab_scenario::Scenario,
    pub def: acclab_scenario::ScenarioSpec,
    pub has_sweep: bool,
}

impl Loaded {
    /// The provenance of a run of this scenario with `seed`, started by this command from
    /// the file at `path` patched with `set` (acclab_results::provenance).
    pub fn provenance(
        &self,
        seed: u64,
        path: &Path,
        set: &[String],
    ) -> acclab_results::provenance::Provenance {
        provenance_of(&self.def, Some(seed), Some(path), set)
    }
}

/// The provenance of a run of `def` (with `seed`, if given), started by this command (from
/// `path`, patched with `set`).
pub fn provenance_of(
    def: &acclab_scenario::ScenarioSpec,
    seed: Option<u64>,
    path: Option<&Path>,
    set: &[String],
) -> acclab_results::provenance::Provenance {
    acclab_results::provenance::Provenance::of_spec(
        def,
        seed,
        std::env::args().collect(),
        path,
        set,
    )
}

/// An error of a scenario patched on the command line: in the file named, from `--set` (no line
/// of the file wrote the value).
pub fn given_by_set(
    e: acclab_scenario::ScenarioError,
    path: &Path,
) -> acclab_scenario::ScenarioError {
    let e = in_file(e, path);
    acclab_scenario::ScenarioError {
        message: format!("(with --set) {}", e.message),
        ..e
    }
}

/// An error of a scenario built from the file at `path` (a sweep point, a patch): the file is
/// named as it was given, not by the scenario's name.
pub fn in_file(e: acclab_scenario::ScenarioError, path: &Path) -> acclab_scenario::ScenarioError {
    acclab_scenario::ScenarioError {
        file: path.display().to_string(),
        ..e
    }
}

/// Claims where results go (outdir.rs): an explicit directory that already holds results is
/// refused unless `force`; the default directory never overwrites: it moves on to `-2`, `-3`, …
pub fn output_dir(out: Option<PathBuf>, name: &str, force: bool) -> Result<outdir::OutDir> {
    outdir::OutDir::claim(out, Path::new("results"), name, force)
}

/// " (did you mean \"x\"?)" for the known name nearest to `name` (Jaro–Winkler similarity at
/// least 0.8, as clap's own suggestions), or "" when none is near.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(String::new(), |(_, k)| format!(" (did you mean {k:?}?)"))
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn near_misses_get_the_nearest_name() {
        let known = ["acc-fig2", "acc-fig4", "vegas-fig5"];
        assert_eq!(
            did_you_mean("acc-fig-2", known),
            " (did you mean \"acc-fig2\"?)"
        );
        assert_eq!(
            did_you_mean("vegas-fig-5", known),
            " (did you mean \"vegas-fig5\"?)"
        );
        assert_eq!(did_you_mean("hpcc-incast", known), "");
    }
}
