//! acclab-repro: the paper experiments of EXPERIMENTS.md, one [`Spec`] per ID.
//!
//! An experiment loads its scenario (or family of scenarios) from `scenarios/repro/` (compiled
//! in, so the binary works from any directory), runs it, computes the comparison rows (paper
//! value, theory value, measured value, tolerance, pass/fail) and draws its figure. `--quick`
//! runs the `<id>.quick.toml` variant, scaled down to run in seconds while checking the same
//! claim.
//!
//! Adding a reproduction: write its scenario files, declare its [`Spec`] with the function that
//! runs its cases and checks (in the module of its paper), and add one line to [`registry`].

/// The [`Spec`] of a reproduction whose scenario is `scenarios/repro/<id>.toml` and, with
/// `quick`, whose quick variant is `<id>.quick.toml`: `spec!("acc-fig2", "000 Fig. 2: …", quick,
/// acc_fig2)`.
macro_rules! spec {
    ($id:literal, $title:literal, $reproduce:path) => {
        $crate::Spec {
            id: $id,
            title: $title,
            scenario: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/repro/",
                $id,
                ".toml"
            )),
            quick: None,
            reproduce: $reproduce,
        }
    };
    ($id:literal, $title:literal, quick, $reproduce:path) => {
        $crate::Spec {
            id: $id,
            title: $title,
            scenario: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/repro/",
                $id,
                ".toml"
            )),
            quick: Some(include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/repro/",
                $id,
                ".quick.toml"
            ))),
            reproduce: $reproduce,
        }
    };
}

pub mod acc;
pub mod cellular;
pub mod checks;
pub mod clcc;
pub mod common;
pub mod dc;
pub mod modern;
pub mod qos;
pub mod report;
pub mod stacks;
pub mod vegas;

use std::path::PathBuf;

pub use report::{Report, Row};

/// Why a reproduction could not run (as opposed to running and failing its checks).
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    #[error(transparent)]
    Scenario(#[from] acclab_scenario::ScenarioError),
    #[error("theory: {0}")]
    Theory(#[from] acclab_theory::num::NumError),
    #[error("writing results: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
    /// This machine cannot run the experiment (live runs in network namespaces need root):
    /// nothing was measured, and nothing failed.
    #[error("cannot run here: {0}")]
    Unavailable(String),
}

/// Where and how a reproduction runs.
pub struct Ctx<'a> {
    pub quick: bool,
    /// Directory for every file the experiment writes (created by the caller).
    pub out: PathBuf,
    /// Told (run label, fraction of simulated time done) now and then.
    pub progress: &'a (dyn Fn(&str, f64) + Sync),
    /// Capacity traces for the experiments over cellular links (`NAME.down`/`NAME.up` pairs in
    /// Mahimahi's format); `None`: the synthetic pair acclab ships.
    pub traces: Option<PathBuf>,
}

/// One reproduced experiment, declared: its ID, what it reproduces, its scenario file(s), and
/// the function that runs its cases (typed edits of the scenario's model) and checks the claims.
/// [`Spec::run`] is the one runner: it picks the full or quick scenario, keeps it beside the
/// results, and hands it to `reproduce`.
pub struct Spec {
    /// The ID of EXPERIMENTS.md, e.g. "vegas-table1".
    pub id: &'static str,
    /// The paper, figure and claim, in a line ("000 Fig. 2: …").
    pub title: &'static str,
    /// The scenario file (compiled in, so the binary works from any directory).
    pub scenario: &'static str,
    /// The quick variant (`<id>.quick.toml`), scaled down to run in seconds while checking the
    /// same claim; `None`: the full run is already quick.
    pub quick: Option<&'static str>,
    /// Runs the cases and returns the comparison (its files in `e.ctx.out`).
    pub reproduce: fn(&Exp) -> Result<Report, ReproError>,
}

impl Spec {
    pub fn id(&self) -> &'static str {
        self.id
    }

    pub fn title(&self) -> &'static str {
        self.title
    }

    /// Runs the experiment and returns the comparison (its files are in `ctx.out`).
    pub fn run(&self, ctx: &Ctx) -> Result<Report, ReproError> {
        let text = match (ctx.quick, self.quick) {
            (true, Some(quick)) => quick,
            _ => self.scenario,
        };
        common::keep_scenario(&ctx.out, "scenario.toml", text)?;
        (self.reproduce)(&Exp {
            spec: self,
            ctx,
            text,
        })
    }
}

/// An experiment as it runs: its spec, where and how, and the scenario text picked for it.
pub struct Exp<'a> {
    pub spec: &'a Spec,
    pub ctx: &'a Ctx<'a>,
    /// The scenario file's text, full or quick.
    pub text: &'static str,
}

impl Exp<'_> {
    pub fn id(&self) -> &'static str {
        self.spec.id
    }

    pub fn title(&self) -> &'static str {
        self.spec.title
    }

    /// The scenario, read and checked (errors name the experiment, the line and the key).
    pub fn scenario(&self) -> Result<acclab_scenario::Scenario, ReproError> {
        Ok(acclab_scenario::parse(self.text, self.spec.id)?)
    }

    /// The scenario as written, to build cases from.
    pub fn def(&self) -> Result<acclab_scenario::ScenarioSpec, ReproError> {
        Ok(acclab_scenario::parse_spec(self.text, self.spec.id)?)
    }

    /// Draws a chart titled "`id`: `title`" into the run's directory and lists its files in
    /// `report`.
    pub fn draw(
        &self,
        report: &mut Report,
        name: &str,
        title: impl std::fmt::Display,
        x: &str,
        y: &str,
        series: Vec<acclab_results::plot::Series>,
    ) -> Result<(), ReproError> {
        let chart = common::chart(format!("{}: {title}", self.spec.id), x, y, series);
        report.files.extend(acclab_results::plot::write_chart(
            &self.ctx.out,
            name,
            &chart,
        )?);
        Ok(())
    }

    /// An empty comparison for this run.
    pub fn report(&self) -> Report {
        Report::new(self.spec.id, self.spec.title, self.ctx.quick)
    }
}

/// Every reproduction, in EXPERIMENTS.md order.
pub fn registry() -> Vec<&'static Spec> {
    vec![
        &vegas::TABLE1,
        &vegas::TABLE2,
        &vegas::FIG5,
        &vegas::TABLE5,
        &vegas::FIG8,
        &vegas::REM_FIG7,
        &acc::FIG2,
        &acc::FIG4,
        &acc::FIG5,
        &acc::FIG6,
        &acc::FIG7,
        &acc::FIG8,
        &acc::FIG9,
        &acc::FIG10,
        &acc::FIG11,
        &qos::FIG4,
        &qos::FIG5,
        &qos::FIG6,
        &qos::FIG7,
        &clcc::FIG1,
        &clcc::FIG3,
        &clcc::FIG6,
        &clcc::FIG7,
        &clcc::FIG8,
        &clcc::FIG9,
        &modern::COMPARISON,
        &dc::COMPARISON,
        &cellular::COMPARISON,
        &stacks::REAL_STACKS,
    ]
}

/// The reproduction with this ID.
pub fn find(id: &str) -> Option<&'static Spec> {
    registry().into_iter().find(|e| e.id == id)
}
