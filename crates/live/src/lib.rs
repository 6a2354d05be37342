//! acclab-live: the same core endpoints and queue disciplines the simulator drives, over real UDP
//! sockets and the wall clock (SPEC §11).
//!
//! - [`wire`]: the versioned binary encoding of a packet in a datagram, and its checked decoder.
//! - [`auth`]: every datagram authenticated under the run's key; forged and replayed ones refused.
//! - [`clock`]: wall clock → scenario time, with a time scale.
//! - [`drops`]: datagrams the kernel dropped at a socket (its receive buffer full).
//! - [`driver`]: one core endpoint on one socket.
//! - [`router`]: the router emulator — the simulator's network in real time, forwarding datagrams
//!   between the endpoints a scenario names and dropping (and counting) everything else.
//! - [`run`]: `acclab live run`, router and endpoints in one process.
//! - [`priority`]: real-time scheduling for the threads of a live run, where allowed.
//! - [`netns`]: a testbed of network namespaces for it (`--netns`).
//! - [`tun`], [`ip`]: real stacks' IP packets through the emulated network (`kernel-tcp` and
//!   `command` flows, with `--netns`).

pub mod auth;
pub mod clock;
pub mod driver;
pub mod drops;
pub mod ip;
pub mod ipflows;
pub mod kernel;
pub mod liveness;
pub mod netns;
pub mod priority;
pub mod router;
pub mod run;
pub mod stacks;
pub mod tun;
pub mod wire;

pub use clock::LiveClock;
pub use run::{run, run_with_router, LiveError, LiveOptions, Network};
