//! The ACC / Monaco experiments of 000 (Xia et al. — Accumulation-based Congestion Control).
//!
//! One file per group of figures: [`policies`] (Fig. 2), [`vegas_pitfalls`] (Figs. 4, 5),
//! [`dynamics`] (Figs. 6–8), [`multi_bottleneck`] (Figs. 9, 10), [`live`] (Fig. 11); here, what
//! they share.

mod dynamics;
mod live;
mod multi_bottleneck;
mod policies;
mod vegas_pitfalls;

pub use dynamics::{FIG6, FIG7, FIG8};
pub use live::FIG11;
pub use multi_bottleneck::{FIG10, FIG9};
pub use policies::FIG2;
pub use vegas_pitfalls::{FIG4, FIG5};

use acclab_core::config::{AccPolicyName, MonacoParams, SchemeConfig};
use acclab_results::plot::Series;
use acclab_scenario::Scenario;

use crate::common::{self, flow_series, mbps, Run};

/// Every flow of `sc` switched to `scheme`.
pub(super) fn with_scheme(sc: &Scenario, scheme: &SchemeConfig) -> Scenario {
    with_scheme_where(sc, scheme, |_| true)
}

/// The scenario with `scheme` on the flows whose id `pick` accepts; the others keep theirs.
pub(super) fn with_scheme_where(
    sc: &Scenario,
    scheme: &SchemeConfig,
    pick: impl Fn(&str) -> bool,
) -> Scenario {
    let mut sc = sc.clone();
    for f in sc.flows.written_mut().iter_mut().filter(|f| pick(&f.id)) {
        f.scheme = scheme.clone();
    }
    sc
}

pub(super) fn monaco(policy: AccPolicyName) -> SchemeConfig {
    SchemeConfig::Monaco(Box::new(MonacoParams {
        policy,
        ..MonacoParams::default()
    }))
}

/// Throughput over time of every flow of a run.
pub(super) fn throughput_series(run: &Run) -> Vec<Series> {
    run.summary
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Series::new(
                f.id.clone(),
                flow_series(&run.sim, &[i], |s| Some(mbps(s.throughput_bps))),
            )
        })
        .collect()
}

/// Flow indices of a set ("set1-3" belongs to "set1").
pub(super) fn members(run: &Run, set: &str) -> Vec<usize> {
    (0..run.summary.flows.len())
        .filter(|&i| common::class_of(&run.summary.flows[i].id) == set)
        .collect()
}
