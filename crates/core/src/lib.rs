//! acclab-core: the sans-IO protocol core.
//!
//! Everything here is a pure state machine: it takes the current time and an event (a packet
//! arrived, a timer fired, a packet to enqueue or dequeue) and returns what to do. Nothing here
//! reads a clock, sleeps or touches a socket, so the discrete-event simulator (`acclab-sim`) and
//! the live runtime drive the very same code (SPEC §1).
//!
//! - [`units`]: integer-nanosecond time, bytes, bit rates and their scenario strings.
//! - [`packet`]: the packet every tier moves.
//! - [`transport`]: the endpoint API (`handle_*` / `poll_transmit` / `poll_timeout`) and the
//!   transports: TCP (reliable, window-based, pluggable congestion control) and CBR.
//! - [`cc`]: the congestion-controller trait and one file per controller.
//! - [`queue`]: the queue-discipline trait and one file per discipline.
//! - [`link`]: what a link does besides queueing: trace-driven capacity, random and bursty
//!   loss, delay variation.
//! - [`config`]: the serde-tagged enums that are both the scenario vocabulary and the factory.
//! - [`rng`]: deterministic per-component random streams.
//! - [`telemetry`]: the in-band telemetry queues write into data packets (HPCC's INT).

pub mod cc;
pub mod config;
pub mod link;
pub mod packet;
pub mod params;
pub mod queue;
pub mod rng;
pub mod rtt;
pub mod telemetry;
pub mod transport;
pub mod units;

pub use packet::{Ecn, FlowId, Packet, PacketKind};
pub use units::{Bytes, Duration, Limit, Rate, Reciprocal, Time, UnitError};
