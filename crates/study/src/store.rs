//! A sweep's directory:
//!
//! ```text
//! DIR/sweep.json        the plan: keys, points, seeds, every run's index, id, point and seed
//! DIR/runs/<id>.json    one finished run: its point, seed and summary (what the tables read)
//! DIR/runs/<id>/        its summary.json, flows.csv, links.csv (only with --keep-runs)
//! DIR/runs.csv, DIR/aggregate.csv, DIR/<metric>-vs-<key>.png/svg   written by collecting
//! ```
//!
//! Every file is written under a temporary name and renamed into place, so a killed sweep
//! leaves whole records or none, and processes sharing the directory (a Slurm array running
//! `--only K`) never see each other's half-written files. A run's record is never rewritten.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::plan::Plan;
use crate::StudyError;

/// The plan's file.
pub const PLAN_FILE: &str = "sweep.json";
/// The list of table and plot files the last collection wrote (replaced by the next).
const MANIFEST: &str = ".acclab-files";

/// An open sweep directory.
pub struct SweepDir {
    root: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StudyError + '_ {
    move |err| StudyError::Io {
        path: path.display().to_string(),
        err,
    }
}

/// Writes `bytes` to `path` whole or not at all ([`acclab_results::files::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StudyError> {
    acclab_results::files::write_atomic(path, bytes).map_err(io(path))
}

/// Whether sweep.json's text `old` is a plan of another acclab build for the same scenario
/// and axes.
fn made_by_another(old: &str, plan: &Plan) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(old) else {
        return false;
    };
    v["acclab"].as_str() != Some(plan.acclab.as_str())
        && v["scenario"].as_str() == Some(plan.scenario.as_str())
        && v["keys"] == serde_json::json!(plan.keys)
        && v["points"] == serde_json::json!(plan.points)
}

impl SweepDir {
    /// Opens `root` for `plan`, creating it. A directory that holds another sweep (its
    /// sweep.json differs) or files that are not a sweep's is refused unless `force`; with
    /// `force` the plan and the tables are replaced and the run records kept (a record is
    /// found by its run's id, so only matching runs are reused).
    pub fn open(root: &Path, plan: &Plan, force: bool) -> Result<SweepDir, StudyError> {
        let plan_text = serde_json::to_string_pretty(plan).expect("a plan serialises") + "\n";
        let plan_path = root.join(PLAN_FILE);
        match std::fs::read_to_string(&plan_path) {
            Ok(old) if old == plan_text => {}
            Ok(old) if !force && made_by_another(&old, plan) => {
                return Err(StudyError::Refused(format!(
                    "{} holds this sweep as {} planned it, and this is acclab {}: its runs' ids \
                     name the acclab that made them, so none would be reused; choose another \
                     --out, or pass --force to run it again here (the old records stay)",
                    root.display(),
                    serde_json::from_str::<serde_json::Value>(&old)
                        .ok()
                        .and_then(|v| v["acclab"].as_str().map(|s| format!("acclab {s}")))
                        .unwrap_or_else(|| "an older acclab".into()),
                    plan.acclab
                )))
            }
            Ok(_) if !force => {
                return Err(StudyError::Refused(format!(
                    "{} holds another sweep (its {PLAN_FILE} differs from this one's); choose \
                     another --out, or pass --force to replace its plan and tables (its runs are \
                     kept and reused where they match)",
                    root.display()
                )))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let other = std::fs::read_dir(root)
                    .map(|d| {
                        d.filter_map(Result::ok)
                            .any(|e| !e.file_name().to_string_lossy().starts_with('.'))
                    })
                    .unwrap_or(false);
                if other && !force {
                    return Err(StudyError::Refused(format!(
                        "{} holds files that are not a sweep's; choose another --out or pass --force",
                        root.display()
                    )));
                }
            }
            Err(e) => return Err(io(&plan_path)(e)),
        }
        let runs = root.join("runs");
        std::fs::create_dir_all(&runs).map_err(io(&runs))?;
        let dir = SweepDir {
            root: root.to_path_buf(),
        };
        if std::fs::read_to_string(&plan_path).ok().as_deref() != Some(plan_text.as_str()) {
            write_atomic(&plan_path, plan_text.as_bytes())?;
        }
        Ok(dir)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A finished sweep's directory and its plan, to read (its records, its tables) without
    /// running anything.
    pub fn read(root: &Path) -> Result<(SweepDir, Plan), StudyError> {
        let path = root.join(PLAN_FILE);
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let plan = serde_json::from_str(&text).map_err(|e| {
            StudyError::Refused(format!("{}: not a sweep plan ({e})", path.display()))
        })?;
        let dir = SweepDir {
            root: root.to_path_buf(),
        };
        Ok((dir, plan))
    }

    fn record_path(&self, id: &str) -> PathBuf {
        self.root.join("runs").join(format!("{id}.json"))
    }

    /// The directory of a run's own files (`--keep-runs`).
    pub fn run_files(&self, id: &str) -> PathBuf {
        self.root.join("runs").join(id)
    }

    /// Whether run `id` is finished (and, with `keep_runs`, has its files).
    pub fn is_done(&self, id: &str, keep_runs: bool) -> bool {
        self.record_path(id).is_file() && (!keep_runs || self.run_files(id).is_dir())
    }

    /// Saves a finished run's record unless it has one already.
    pub fn save_record(&self, id: &str, record: &serde_json::Value) -> Result<(), StudyError> {
        let path = self.record_path(id);
        if path.is_file() {
            return Ok(());
        }
        let text = serde_json::to_string(record).expect("a record serialises") + "\n";
        write_atomic(&path, text.as_bytes())
    }

    /// A finished run's record.
    pub fn load_record(&self, id: &str) -> Result<serde_json::Value, StudyError> {
        let path = self.record_path(id);
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        serde_json::from_str(&text).map_err(|e| {
            StudyError::Refused(format!(
                "{}: not a run record ({e}); delete it and run the sweep again to redo that run",
                path.display()
            ))
        })
    }

    /// Publishes a kept run's files from `staging` (a directory inside `runs/`) as `runs/<id>/`.
    pub fn publish_run_files(&self, id: &str, staging: &Path) -> Result<(), StudyError> {
        let to = self.run_files(id);
        if to.is_dir() {
            // Another process finished the same run first: its files are these files.
            let _ = std::fs::remove_dir_all(staging);
            return Ok(());
        }
        std::fs::rename(staging, &to).map_err(io(&to))
    }

    /// A fresh staging directory for a kept run's files.
    pub fn staging_for(&self, id: &str) -> Result<PathBuf, StudyError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let d = self.root.join("runs").join(format!(
            ".{id}.partial-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&d).map_err(io(&d))?;
        Ok(d)
    }

    /// Removes the table and plot files an earlier collection wrote (so none of a former plot
    /// survives a changed list of metrics), then records `files` as this collection's.
    pub fn replace_outputs(&self, files: &[String]) -> Result<(), StudyError> {
        let manifest = self.root.join(MANIFEST);
        if let Ok(old) = std::fs::read_to_string(&manifest) {
            for f in old.lines().filter(|f| !files.iter().any(|n| n == f)) {
                if !f.contains('/') && !f.starts_with('.') && f != PLAN_FILE {
                    let _ = std::fs::remove_file(self.root.join(f));
                }
            }
        }
        write_atomic(&manifest, (files.join("\n") + "\n").as_bytes())
    }

    /// Writes one output file of the sweep whole.
    pub fn write_output(&self, name: &str, bytes: &[u8]) -> Result<(), StudyError> {
        write_atomic(&self.root.join(name), bytes)
    }
}
