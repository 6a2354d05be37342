//! Output directories that are never shared and never half-true (issue 21 §2).
//!
//! A run claims its directory atomically (`create_dir`, which fails if the directory exists, so
//! two runs started together never get the same one), writes everything into a staging
//! directory beside it (`.NAME.partial-PID`, holding an `INCOMPLETE` note until the end), and
//! publishes by rename only when every file is written: an empty claimed directory is replaced
//! by the staging one in one `rename`; into a directory that already has other files the files
//! are moved one by one, `summary.json` (the completion mark) and `comparison.json` last. A run
//! that fails removes its empty claim and leaves the staging directory, marked `INCOMPLETE`; a
//! killed one leaves the same. Nothing is written through a symbolic link: files are created in
//! the fresh staging directory, and a rename replaces a link instead of following it.
//! `--force` first removes the files acclab published there before (listed in `.acclab-files`,
//! plus the result files any version writes), so no stale plot survives.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The files whose presence means a directory holds results.
pub const RESULT_FILES: [&str; 8] = [
    "summary.json",
    "figures.json",
    "report.json",
    "flows.csv",
    "links.csv",
    "comparison.json",
    "router.json",
    "endpoints.json",
];

/// Moved last, in this order: their presence says the rest is there.
const COMPLETION_MARKS: [&str; 2] = ["comparison.json", "summary.json"];

/// The list of what acclab published into a directory, for `--force` to replace.
const MANIFEST: &str = ".acclab-files";

/// The note inside a staging directory until it is published.
const INCOMPLETE: &str = "INCOMPLETE";

/// A claimed output directory and its staging directory.
pub struct OutDir {
    /// Where the results will be.
    path: PathBuf,
    /// Where they are written until then.
    staging: PathBuf,
    /// This run created `path` (and may remove it again if it fails).
    created: bool,
    force: bool,
    published: bool,
    /// Held while this run may write into an explicitly named directory.
    _lock: Option<Lock>,
}

/// `.NAME.what` in the directory that holds `dir` (named NAME): hidden, on the same file system.
fn beside(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent.join(format!(".{name}.{what}"))
}

/// `.NAME.lock` beside an output directory, holding the process id of the run that writes into
/// it; removed when that run ends. A lock whose process is gone (a killed run) is taken over.
struct Lock(PathBuf);

impl Lock {
    fn take(dir: &Path) -> Result<Lock> {
        let path = beside(dir, "lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    writeln!(f, "{}", std::process::id())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    return Ok(Lock(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    let holder = holder.trim();
                    let alive = holder.parse::<u32>().is_ok_and(|pid| {
                        pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
                    });
                    // An empty lock may be one being written this instant: taken as held.
                    if alive || holder.is_empty() {
                        bail!(
                            "{} is being written by another acclab run (process {}); wait for it to finish or choose another --out",
                            dir.display(),
                            if holder.is_empty() { "starting" } else { holder }
                        );
                    }
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => bail!("cannot create {}: {e}", path.display()),
            }
        }
        bail!("{} is being written by another acclab run", dir.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn holds_results(d: &Path) -> bool {
    RESULT_FILES.iter().any(|f| d.join(f).exists())
}

/// A scenario or experiment name as a directory name: letters, digits, `-`, `_` and `.` kept,
/// anything else `_`, no leading dot (so ".." or ".hidden" cannot escape or hide).
pub fn safe_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    if safe.is_empty() {
        "run".into()
    } else {
        safe.into()
    }
}

impl OutDir {
    /// Claims `out`, or by default `root/<name>` (then `-2`, `-3`, … when taken). An explicit
    /// directory that already holds results is refused unless `force`.
    pub fn claim(out: Option<PathBuf>, root: &Path, name: &str, force: bool) -> Result<OutDir> {
        let mut lock = None;
        let (path, created) = match out {
            Some(d) => {
                // A link to a directory is followed: the results go where it points (a rename
                // onto the link itself would fail after the run, or replace the link).
                let d = match d.symlink_metadata() {
                    Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&d)
                        .with_context(|| format!("cannot follow the link {}", d.display()))?,
                    _ => d,
                };
                if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                // Runs given the same directory take turns: one holds it until it has
                // published, the others are refused (never two sets of results in one place).
                lock = Some(Lock::take(&d)?);
                if holds_results(&d) && !force {
                    let held: Vec<&str> = RESULT_FILES
                        .into_iter()
                        .filter(|f| d.join(f).exists())
                        .collect();
                    bail!(
                        "{} already holds results ({}); choose another --out or pass --force to \
                         overwrite them",
                        d.display(),
                        held.join(", ")
                    );
                }
                match std::fs::create_dir(&d) {
                    Ok(()) => (d, true),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {
                        (d, false)
                    }
                    Err(e) => bail!("cannot create {}: {e}", d.display()),
                }
            }
            None => {
                std::fs::create_dir_all(root)
                    .with_context(|| format!("cannot create {}", root.display()))?;
                let base = root.join(safe_name(name));
                let mut n = 1;
                loop {
                    let d = if n == 1 {
                        base.clone()
                    } else {
                        PathBuf::from(format!("{}-{n}", base.display()))
                    };
                    match std::fs::create_dir(&d) {
                        Ok(()) => break (d, true),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                        Err(e) => bail!("cannot create {}: {e}", d.display()),
                    }
                }
            }
        };
        let staging = beside(&path, &format!("partial-{}", std::process::id()));
        let mut out = OutDir {
            path,
            staging,
            created,
            force,
            published: false,
            _lock: lock,
        };
        // Writability is found out here, before anything is simulated.
        if let Err(e) = std::fs::create_dir(&out.staging).and_then(|()| {
            std::fs::write(
                out.staging.join(INCOMPLETE),
                format!(
                    "An acclab run (process {}) was writing its results for {} here and did not finish: these files are incomplete.\n",
                    std::process::id(),
                    out.path.display()
                ),
            )
        }) {
            out.published = true; // nothing to leave behind but the claim
            out.release_claim();
            bail!("cannot write results beside {}: {e}", out.path.display());
        }
        Ok(out)
    }

    /// Staging directories beside this one's that runs no longer alive left behind (killed or
    /// interrupted): `.NAME.partial-PID` whose process is gone.
    pub fn stale_partials(&self) -> Vec<PathBuf> {
        let parent = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let Ok(entries) = std::fs::read_dir(parent) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let pid: u32 = name
                    .strip_prefix('.')?
                    .rsplit_once(".partial-")?
                    .1
                    .parse()
                    .ok()?;
                let gone = pid != std::process::id()
                    && !Path::new(&format!("/proc/{pid}")).exists()
                    && e.path().join(INCOMPLETE).is_file();
                gone.then(|| e.path())
            })
            .collect();
        out.sort();
        out
    }

    /// The final directory.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the results go once published.
    pub fn final_path(&self) -> &Path {
        &self.path
    }

    /// Where to write until [`publish`](Self::publish).
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Moves the finished results into place.
    pub fn publish(mut self) -> Result<PathBuf> {
        std::fs::remove_file(self.staging.join(INCOMPLETE))?;
        let mut entries: Vec<String> = std::fs::read_dir(&self.staging)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|n| {
            (
                COMPLETION_MARKS
                    .iter()
                    .position(|m| m == n)
                    .map_or(0, |i| i + 1),
                n.clone(),
            )
        });
        std::fs::write(self.staging.join(MANIFEST), entries.join("\n") + "\n")?;
        let empty = std::fs::read_dir(&self.path)?.next().is_none();
        if empty {
            // One rename: the results appear whole or not at all.
            std::fs::rename(&self.staging, &self.path).with_context(|| {
                format!(
                    "cannot move {} to {}",
                    self.staging.display(),
                    self.path.display()
                )
            })?;
        } else {
            if self.force {
                self.remove_previous()?;
            }
            for name in entries.iter().chain(std::iter::once(&MANIFEST.to_string())) {
                let to = self.path.join(name);
                if to.is_dir() && !to.is_symlink() {
                    std::fs::remove_dir_all(&to)?;
                }
                std::fs::rename(self.staging.join(name), &to)
                    .with_context(|| format!("cannot move results into {}", to.display()))?;
            }
            std::fs::remove_dir(&self.staging)?;
        }
        self.published = true;
        Ok(self.path.clone())
    }

    /// `--force`: removes what acclab published into the directory before.
    fn remove_previous(&self) -> Result<()> {
        let listed = std::fs::read_to_string(self.path.join(MANIFEST)).unwrap_or_default();
        for name in listed
            .lines()
            .chain(RESULT_FILES)
            .chain(std::iter::once(MANIFEST))
            .filter(|n| !n.is_empty() && !n.contains('/') && *n != "." && *n != "..")
        {
            let p = self.path.join(name);
            if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)?;
            } else if p.symlink_metadata().is_ok() {
                std::fs::remove_file(&p)?;
            }
        }
        Ok(())
    }

    /// Removes the claimed directory if this run created it and it is still empty.
    fn release_claim(&self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if !self.published {
            self.release_claim();
            // A run that wrote nothing leaves nothing; one that did leaves it, marked.
            let only_note = std::fs::read_dir(&self.staging)
                .map(|d| d.flatten().all(|e| e.file_name() == INCOMPLETE))
                .unwrap_or(false);
            if only_note {
                let _ = std::fs::remove_file(self.staging.join(INCOMPLETE));
                let _ = std::fs::remove_dir(&self.staging);
            } else {
                eprintln!(
                    "note: the run did not finish; what it wrote is in {} (marked {INCOMPLETE})",
                    self.staging.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_escape_or_hide() {
        assert_eq!(safe_name(".."), "run");
        assert_eq!(safe_name("../etc"), "_etc");
        assert_eq!(safe_name(".hidden"), "hidden");
        assert_eq!(safe_name("a/b c"), "a_b_c");
        assert_eq!(
            safe_name("modern-comparison.quick"),
            "modern-comparison.quick"
        );
    }

    #[test]
    fn claims_are_exclusive_and_publishing_is_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let a = OutDir::claim(None, tmp.path(), "x", false).unwrap();
        let b = OutDir::claim(None, tmp.path(), "x", false).unwrap();
        assert_eq!(a.path(), tmp.path().join("x"));
        assert_eq!(b.path(), tmp.path().join("x-2"));
        std::fs::write(a.staging().join("summary.json"), "{}").unwrap();
        assert!(
            !a.path().join("summary.json").exists(),
            "nothing shows before publishing"
        );
        let done = a.publish().unwrap();
        assert!(done.join("summary.json").exists());
        assert!(!done.join(INCOMPLETE).exists());
        // A run that fails leaves no claim and a staging directory marked incomplete...
        let staging = b.staging().to_path_buf();
        std::fs::write(staging.join("flows.csv"), "time_s\n0.1\n").unwrap();
        drop(b);
        assert!(!tmp.path().join("x-2").exists());
        assert!(staging.join(INCOMPLETE).exists());
        // ... and one that wrote nothing leaves nothing.
        let c = OutDir::claim(None, tmp.path(), "y", false).unwrap();
        let staging = c.staging().to_path_buf();
        drop(c);
        assert!(!staging.exists() && !tmp.path().join("y").exists());
    }

    /// Issue 55 §3: four runs given the same fresh --out all reported success and three were
    /// lost. While one holds the directory the others are refused; a killed run's lock is taken
    /// over; a link to a directory is followed before anything is simulated.
    #[test]
    fn runs_given_one_directory_take_turns_and_links_are_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("out");
        let first = OutDir::claim(Some(d.clone()), tmp.path(), "", false).unwrap();
        let e = OutDir::claim(Some(d.clone()), tmp.path(), "", false)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("being written by another acclab run"),
            "{e}"
        );
        std::fs::write(first.staging().join("summary.json"), "1").unwrap();
        first.publish().unwrap();
        // Published: the next is refused for the results, not the lock.
        let e = OutDir::claim(Some(d.clone()), tmp.path(), "", false)
            .err()
            .unwrap();
        assert!(e.to_string().contains("already holds results"), "{e}");
        assert!(!tmp.path().join(".out.lock").exists());
        // A lock left by a process that is gone is taken over.
        let other = tmp.path().join("other");
        std::fs::write(tmp.path().join(".other.lock"), "4294967\n").unwrap();
        let taken = OutDir::claim(Some(other.clone()), tmp.path(), "", false).unwrap();
        drop(taken);
        // A link to an empty directory: the results land in the directory it points to.
        let target = tmp.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let via = OutDir::claim(Some(link.clone()), tmp.path(), "", false).unwrap();
        std::fs::write(via.staging().join("summary.json"), "1").unwrap();
        via.publish().unwrap();
        assert!(target.join("summary.json").exists());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    }

    #[test]
    fn force_replaces_the_previous_set_and_keeps_other_files() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("out");
        let first = OutDir::claim(Some(d.clone()), tmp.path(), "", false).unwrap();
        for f in ["summary.json", "old-plot.svg"] {
            std::fs::write(first.staging().join(f), "1").unwrap();
        }
        first.publish().unwrap();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        assert!(OutDir::claim(Some(d.clone()), tmp.path(), "", false).is_err());
        let second = OutDir::claim(Some(d.clone()), tmp.path(), "", true).unwrap();
        std::fs::write(second.staging().join("summary.json"), "2").unwrap();
        second.publish().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("summary.json")).unwrap(),
            "2"
        );
        assert!(
            !d.join("old-plot.svg").exists(),
            "a stale plot survived --force"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "mine"
        );
    }
}
