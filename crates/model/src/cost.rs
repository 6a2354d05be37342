//! What a model run will cost, checked before anything is allocated (issue 55 §2): the
//! history's memory and the integration's wall time, each against a bound, so that a tiny
//! `--step` or a huge delay is an error that says what to change, not a failed allocation that
//! aborts the process (and a Python interpreter with it) or a run of hours.

use acclab_scenario::Scenario;

use crate::network::Outside;

/// The most memory a model's history may take (4 GiB): past it the allocation would fail and
/// abort the process (the Python interpreter with it) instead of an error.
pub const MAX_HISTORY_BYTES: f64 = 4.0 * (1u64 << 30) as f64;
/// Wall time of a step on the 2-core machine, per source integrated and per history value:
/// measured 0.31 µs a step for the 4-flow Reno dumbbell, 6.4 µs for 100 flows (8 values each).
const SOURCE_STEP_S: f64 = 7e-8;
const VALUE_STEP_S: f64 = 5e-9;
/// The longest model run started (by the estimate above): an hour.
pub const MAX_WALL_S: f64 = 3600.0;

/// Refuses a model whose history (rows of `width` values back over `longest` seconds of delay
/// at step `h`) or whose integration (the run's steps, each over `sources` sources and `width`
/// values) is beyond the bounds above, saying which and what to change.
pub(crate) fn check_cost(
    sc: &Scenario,
    sources: usize,
    width: usize,
    longest: f64,
    h: f64,
) -> Result<(), Outside> {
    let rows = (longest / h).ceil() + 3.0;
    let bytes = rows * width.max(1) as f64 * 8.0;
    let steps = sc.duration.as_secs_f64() / h;
    let wall = steps * (1e-7 + sources as f64 * SOURCE_STEP_S + width as f64 * VALUE_STEP_S);
    let mut why = Vec::new();
    // A NaN (a zero step) is refused too.
    if bytes.is_nan() || bytes > MAX_HISTORY_BYTES {
        why.push((
            "memory".to_string(),
            format!(
                "its history ({rows:.3e} steps of {h:.3e} s back over the longest delay, {longest} s, × {width} series) needs {:.1} GB, over {:.1} GB: use a longer --step or shorter delays",
                bytes / 1e9,
                MAX_HISTORY_BYTES / 1e9
            ),
        ));
    }
    if wall.is_nan() || wall > MAX_WALL_S {
        why.push((
            "time".to_string(),
            format!(
                "{steps:.3e} steps of {h:.3e} s over {sources} sources would take about {:.1} h, over {:.0} h: use a longer --step or a shorter run",
                wall / 3600.0,
                MAX_WALL_S / 3600.0
            ),
        ));
    }
    match why.is_empty() {
        true => Ok(()),
        false => Err(Outside(why)),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Model, Settings};

    /// Issue 55 §2: `acclab model --step 1ns` allocated 5.4 GB and ran for hours, a huge delay
    /// aborted the process (Python's interpreter with it) on a failed allocation. Both are
    /// refused before anything is allocated, saying what to change.
    #[test]
    fn models_beyond_memory_or_an_hour_are_refused_first() {
        // Four Reno flows over 100 Mb/s, 10 ms, for 60 s.
        let dumbbell = acclab_scenario::templates::reno_dumbbell(4, 1000, 60);
        let sc = acclab_scenario::parse(&dumbbell, "c.toml").unwrap();
        let step = |ns| Settings {
            step_ns: Some(ns),
            ..Default::default()
        };
        assert!(Model::new(&sc, step(100_000)).is_ok());
        let e = Model::new(&sc, step(1)).err().unwrap().to_string();
        assert!(e.contains("time:") && e.contains("--step"), "{e}");
        let far = acclab_scenario::parse(
            &dumbbell
                .replace("\"10ms\"", "\"30000000s\"")
                .replace("\"60s\"", "\"600000s\""),
            "c.toml",
        )
        .unwrap();
        let e = Model::new(&far, Settings::default())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("memory:") && e.contains("GB"), "{e}");
    }
}
