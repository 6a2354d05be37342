//! Ctrl-C and SIGTERM during a run, a model integration or a reproduction: the work stops at
//! its next progress tick (a few milliseconds of wall time at most) and the command says how far
//! it got, that nothing was published, and where its partial files are, instead of the process
//! dying with them unmentioned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use acclab_core::Time;

/// The payload a run unwinds with when it is interrupted: the simulated time it had reached,
/// where the tick knows it.
pub struct Interrupted(pub Option<Time>);

/// A run's watch for SIGINT and SIGTERM (installed for its life, removed when dropped).
pub struct Watch {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Watch {
    pub fn start() -> Watch {
        let flag = Arc::new(AtomicBool::new(false));
        let ids = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
            .into_iter()
            .filter_map(|s| signal_hook::flag::register(s, flag.clone()).ok())
            .collect();
        Watch { flag, ids }
    }

    /// Called from a run's progress ticks: unwinds out of the run once a signal came.
    pub fn check(&self, t: Time) {
        self.stop_if_signalled(Some(t));
    }

    /// Called from progress ticks that do not know the simulated time (a reproduction's).
    pub fn check_any(&self) {
        self.stop_if_signalled(None);
    }

    fn stop_if_signalled(&self, t: Option<Time>) {
        if self.flag.load(Ordering::Relaxed) {
            std::panic::panic_any(Interrupted(t));
        }
    }

    /// Runs `work`, which calls [`Watch::check`] or [`Watch::check_any`] as it goes; an
    /// interrupt becomes the error that says how far it got (of `end`, `verb`: "simulated") and
    /// that nothing was published to `dest`. (The output directory's own note, as it is dropped,
    /// then says where the partial files are.)
    pub fn guard<T>(
        &self,
        (end, verb): (Option<acclab_core::Duration>, &str),
        dest: &std::path::Path,
        work: impl FnOnce() -> T,
    ) -> anyhow::Result<T> {
        self.run(work).map_err(|at| {
            let at = match (at, end) {
                (Some(at), Some(end)) => format!(
                    " at {:.3} s of {:.3} s {verb}",
                    at.as_secs_f64(),
                    end.as_secs_f64()
                ),
                _ => String::new(),
            };
            anyhow::anyhow!(
                "interrupted{at}: nothing was published to {}",
                dest.display()
            )
        })
    }

    /// Runs `work`; `Err(t)` if it was interrupted (at simulated time `t`, where known).
    fn run<T>(&self, work: impl FnOnce() -> T) -> Result<T, Option<Time>> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
            Ok(v) => Ok(v),
            Err(p) => match p.downcast::<Interrupted>() {
                Ok(i) => Err(i.0),
                Err(p) => std::panic::resume_unwind(p),
            },
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
