//! acclab-results: what every tier's run leaves behind, in one shape — the packet simulator's,
//! the model tier's and live mode's alike. It belongs to no tier: each tier fills these types in
//! from its own records and writes them through these functions.
//!
//! - [`summary`]: `summary.json` (SPEC §7), with the theory's and the model's values beside the
//!   measured ones;
//! - [`samples`]: the rows and columns of `flows.csv` and `links.csv`, written as a run goes;
//! - [`csv_row`]: CSV rows built in one reused buffer, as the csv crate would write them;
//! - [`plot`]: the standard plots of a run, redrawn from its files, and the general [`plot::Chart`]
//!   of the reproductions' figures;
//! - [`fct`]: flow completion times (`fct.csv`) and slowdowns by flow size;
//! - [`delay`]: one-way delay statistics per flow (mean, percentiles, jitter);
//! - [`network`]: a picture of a scenario's network;
//! - [`files`]: files written whole or not at all;
//! - [`table`]: tables shown as terminal text and as HTML alike;
//! - [`html`]: the static page of `acclab report`.

pub mod csv_row;
pub mod delay;
pub mod fct;
pub mod files;
pub mod html;
pub mod network;
pub mod plot;
pub mod provenance;
pub mod queues;
pub mod samples;
pub mod summary;
pub mod table;

pub use summary::Summary;
