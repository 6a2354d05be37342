//! Ctrl-C and SIGTERM during a run: the run stops at its next progress tick (a few
//! milliseconds of wall time at most) and the command says where its partial files are,
//! instead of the process dying with them unmentioned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use acclab_core::Time;

/// The payload a run unwinds with when it is interrupted.
pub struct Interrupted(pub Time);

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
        if self.flag.load(Ordering::Relaxed) {
            std::panic::panic_any(Interrupted(t));
        }
    }

    /// Runs `work`; `Err(t)` if it was interrupted at simulated time `t`.
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> Result<T, Time> {
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
