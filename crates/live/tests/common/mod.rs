//! What the live tests share: whether this machine lets them build a testbed, and one live run
//! at a time.

/// Whether this process may create network namespaces: root, with iproute2's `ip`.
pub fn may_create_namespaces() -> Result<(), &'static str> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    // "Uid: real effective saved fs"
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1));
    if euid != Some("0") {
        return Err("not root");
    }
    let ip = std::process::Command::new("ip").arg("-V").output();
    if !ip.is_ok_and(|o| o.status.success()) {
        return Err("iproute2's `ip` is not installed");
    }
    Ok(())
}

/// Whether a test that needs what `check` checks runs here. If not, it says why and is skipped
/// — except where `ACCLAB_REQUIRE_NETNS` is set (CI, which runs as root), where it fails, so
/// that a skip there cannot pass for a check.
#[allow(dead_code)] // each test binary uses what it needs
pub fn runs_here(check: Result<(), &str>) -> bool {
    let Err(why) = check else {
        return true;
    };
    assert!(
        std::env::var_os("ACCLAB_REQUIRE_NETNS").is_none(),
        "ACCLAB_REQUIRE_NETNS is set but this test cannot run here: {why}"
    );
    eprintln!("SKIPPED: {why}");
    false
}

/// Live runs take their turn: each holds the machine's attention (its real-time threads, its
/// clock) for its length, and two at once on two cores would distort both.
#[allow(dead_code)] // each test binary uses what it needs
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}
