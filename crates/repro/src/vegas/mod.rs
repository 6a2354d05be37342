//! The Vegas experiments of 002 (Low, Peterson, Wang — Understanding TCP Vegas: a duality model).
//!
//! One file per experiment: [`tables`] (Tables I, II), [`mice`] (Fig. 5), [`base_rtt`]
//! (Tables V, VI), [`buffers`] (Fig. 8), [`rem`] (Fig. 7, Table VII); here, what they share.

mod base_rtt;
mod buffers;
mod mice;
mod rem;
mod tables;

pub use base_rtt::TABLE5;
pub use buffers::FIG8;
pub use mice::FIG5;
pub use rem::REM_FIG7;
pub use tables::{TABLE1, TABLE2};

pub(super) const BOTTLENECK: &str = "r1->r2";

/// The y label of a window plot: KB, as every window people read in acclab, with what a packet
/// is (002's tables count windows in packets).
pub(super) fn window_kb(packet_bytes: f64) -> String {
    format!(
        "congestion window (KB; one packet = {} KB)",
        packet_bytes / 1e3
    )
}
