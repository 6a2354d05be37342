//! Real-time scheduling for live runs.
//!
//! A live run measures time with the wall clock, so a router or endpoint thread that the kernel
//! leaves waiting behind other work (a busy machine, a parallel build) is time the emulated
//! network did not have: datagrams wait in socket buffers, delays grow, Monaco reads that as
//! queueing. Where the system allows it (Linux, as root or with CAP_SYS_NICE), the threads of a
//! live run take the `SCHED_FIFO` policy at a low real-time priority, so ordinary processes
//! cannot hold them off a core; the kernel's real-time throttling (by default 5% of every second
//! kept for ordinary processes) keeps the machine usable. Elsewhere nothing changes.
//!
//! Priority decides who gets a core; it does not decide how fast an idle core wakes. On a
//! virtual machine an idle vCPU halts, and a halted vCPU runs again only when the hypervisor
//! schedules it — on this project's 2-core VMs, milliseconds later, dozens of times a second.
//! So for the length of a live run [`shallow_idle`] asks the kernel (PM QoS,
//! `/dev/cpu_dma_latency` = 0) to keep every CPU in its polling idle state. Measured on one
//! Linux CUBIC flow with ECN through the emulated bottleneck (20 s; seven runs with it, four
//! without): packets the router handed out over a millisecond late 1–134 against 107–13,398,
//! its largest lag 1.4–15 ms against 8–33 ms, and Linux's rate 19.16–19.36 Mb/s against
//! 12.9–19.3. Idle
//! CPUs spin while it is held (power, not other work: a polling CPU takes any runnable task).

/// The real-time priority (1–99) endpoint threads ask for: low, above every ordinary process
/// and below the kernel's own real-time threads.
pub const ENDPOINTS: i32 = 10;
/// The router's, one above: when it wakes for an event it takes a core from an endpoint.
pub const ROUTER: i32 = 11;

/// Gives the calling thread real-time priority `priority` if the system allows it; says whether
/// it did. The live threads never spin, so they hold a core only for the work they do.
pub fn raise(priority: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        set(libc::SCHED_FIFO, priority)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = priority;
        false
    }
}

/// The calling thread's scheduling, put back when dropped: for a thread that is raised only
/// for a while (the router, on the thread that called it).
pub struct Restore {
    #[cfg(target_os = "linux")]
    saved: Option<(i32, i32)>,
}

/// Raises the calling thread as [`raise`] does until the returned guard is dropped.
pub fn raise_for_now(priority: i32) -> Restore {
    #[cfg(target_os = "linux")]
    {
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: both calls only read or write the calling thread's scheduling and `param`.
        let policy = unsafe { libc::sched_getscheduler(0) };
        let got = unsafe { libc::sched_getparam(0, &mut param) } == 0;
        let saved =
            (policy >= 0 && got && raise(priority)).then_some((policy, param.sched_priority));
        Restore { saved }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = priority;
        Restore {}
    }
}

impl Restore {
    /// Whether the thread got real-time priority.
    pub fn raised(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.saved.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some((policy, priority)) = self.saved {
            set(policy, priority);
        }
    }
}

#[cfg(target_os = "linux")]
fn set(policy: i32, priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler reads `param` and changes only the calling thread's policy
    // (pid 0); it has no other effect on memory.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

/// Keeps the CPUs out of deep idle states while it lives ([`shallow_idle`]).
pub struct ShallowIdle {
    #[cfg(target_os = "linux")]
    _request: Option<std::fs::File>,
}

/// Asks for the shallowest idle state on every CPU (a PM QoS request of 0 µs wake-up latency,
/// held as long as `/dev/cpu_dma_latency` stays open) where the system allows it (Linux, as
/// root); the request ends when the guard is dropped. Elsewhere nothing changes.
pub fn shallow_idle() -> ShallowIdle {
    #[cfg(target_os = "linux")]
    {
        use std::io::Write;
        let request = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|()| f))
            .ok();
        ShallowIdle { _request: request }
    }
    #[cfg(not(target_os = "linux"))]
    {
        ShallowIdle {}
    }
}
