//! The TCP keys every TCP scheme's parameters carry — declared once, in [`tcp_scheme_params!`]
//! — their checks, and the endpoints they build ([`TcpOptions`]).

use crate::cc::CongestionController;
use crate::params::FlowContext;
use crate::transport::Endpoint;
use crate::units::Bytes;
use crate::units::Duration;

use super::{TcpReceiver, TcpSender, TcpSettings};

/// Declares a TCP scheme's parameter struct: its own keys (each with its default), then the TCP
/// keys every TCP scheme shares (`size`, `min_rto`, `initial_window`, `delayed_ack`,
/// `receive_window`, `send_overhead`, `sack` — written here once, with their documentation and
/// defaults; `sack`'s default is the scheme's), then any keys of its own that follow them.
/// It derives serde (unknown keys refused) and the JSON Schema, implements `Default`, and gives
/// `tcp(ecn)`, the [`TcpOptions`] the endpoints are built from.
///
/// (serde's `flatten` would let a struct hold the shared keys as one field, but it cannot be
/// combined with `deny_unknown_fields`, and unknown keys must be errors: hence a macro.)
macro_rules! tcp_scheme_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident: $ty:ty = $default:expr, )*
        }
        sack = $sack:expr;
        $( then {
            $( $(#[$tmeta:meta])* pub $tfield:ident: $tty:ty = $tdefault:expr, )*
        } )?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// Bytes to transfer; absent = bulk (infinite backlog).
            pub size: Option<$crate::units::Bytes>,
            /// Lower bound of the retransmission timeout (RFC 6298 §2.4).
            pub min_rto: $crate::units::Duration,
            /// Initial window in segments.
            pub initial_window: u64,
            /// Delayed ACKs at the receiver: an ACK per two segments or after this delay (e.g.
            /// "40ms" as Linux, "200ms" as ns-3); absent = an ACK per segment.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub delayed_ack: Option<$crate::units::Duration>,
            /// The receiver's buffer ("6MB" as Linux's largest autotuned one; ns-3's default is
            /// "128KB"): at most this much past the cumulative ACK is sent; absent = unbounded.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub receive_window: Option<$crate::units::Bytes>,
            /// ns-2's random send overhead: each segment waits a uniform draw from [0, this]
            /// (e.g. "100us", about a packet's time at the bottleneck) against phase effects;
            /// absent = off.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub send_overhead: Option<$crate::units::Duration>,
            /// SACK-based loss recovery (RFC 2018, RFC 6675); off: NewReno's (RFC 6582). On by
            /// default for cubic, dctcp and bbr (as Linux runs them), off for reno and vegas
            /// (as ns-2's).
            pub sack: bool,
            $($( $(#[$tmeta])* pub $tfield: $tty, )*)?
        }

        impl Default for $name {
            fn default() -> Self {
                let d = $crate::transport::tcp::TcpSettings::default();
                $name {
                    $( $field: $default, )*
                    size: None,
                    min_rto: d.min_rto,
                    initial_window: d.initial_window,
                    delayed_ack: None,
                    receive_window: None,
                    send_overhead: None,
                    sack: $sack,
                    $($( $tfield: $tdefault, )*)?
                }
            }
        }

        impl $name {
            /// The transport settings these parameters give, sending ECN-capable packets and
            /// reacting to echoes if `ecn`.
            pub fn tcp(&self, ecn: bool) -> $crate::transport::tcp::TcpOptions {
                $crate::transport::tcp::TcpOptions {
                    size: self.size,
                    min_rto: self.min_rto,
                    initial_window: self.initial_window,
                    ecn,
                    delayed_ack: self.delayed_ack,
                    sack: self.sack,
                    receive_window: self.receive_window,
                    send_overhead: self.send_overhead,
                    l4s: false,
                }
            }
        }
    };
}
pub(crate) use tcp_scheme_params;

/// The transport settings of one TCP flow (its scheme's shared keys, and whether it uses ECN),
/// and the endpoints they build.
#[derive(Clone, Debug)]
pub struct TcpOptions {
    /// Bytes to transfer; `None` = bulk.
    pub size: Option<Bytes>,
    pub min_rto: Duration,
    pub initial_window: u64,
    pub ecn: bool,
    /// Delayed ACKs at the receiver; `None` = an ACK per segment.
    pub delayed_ack: Option<Duration>,
    /// SACK blocks from the receiver and RFC 6675 loss recovery at the sender.
    pub sack: bool,
    /// The receiver's buffer, bytes (its receive window); `None`: unbounded.
    pub receive_window: Option<Bytes>,
    /// ns-2's random send overhead: the largest delay drawn for each segment; `None`: off.
    pub send_overhead: Option<Duration>,
    /// L4S (with `ecn`): ECT(1) packets and Accurate ECN feedback (TCP Prague).
    pub l4s: bool,
}

/// The largest initial window a scenario may give, segments.
pub const MAX_INITIAL_WINDOW: u64 = 1_000_000;

impl TcpOptions {
    /// Checks the settings a scheme (`scheme`, named in the message) was given.
    pub fn validate(&self, scheme: &str) -> Result<(), crate::params::ParamError> {
        if !(1..=MAX_INITIAL_WINDOW).contains(&self.initial_window) {
            return Err(crate::params::ParamError::at(
                "initial_window",
                format!(
                    "{scheme} `initial_window` must be in [1, {MAX_INITIAL_WINDOW}] segments, not {}",
                    self.initial_window
                ),
            ));
        }
        check_delayed_ack(self.delayed_ack)?;
        check_receive_window(self.receive_window)?;
        check_send_overhead(self.send_overhead)
    }

    /// The sender of one scenario flow over controller `cc`.
    pub fn sender<C: CongestionController>(&self, ctx: &FlowContext, cc: C) -> TcpSender<C> {
        let cfg = TcpSettings {
            packet_size: ctx.packet_size,
            transfer_bytes: self.size.map(|b| b.0),
            initial_window: self.initial_window,
            min_rto: self.min_rto,
            ecn: self.ecn,
            l4s: self.l4s && self.ecn,
            sack: self.sack,
            receive_window: self
                .receive_window
                .map(|b| (b.0 / u64::from(ctx.packet_size.max(1))).max(1)),
            ..TcpSettings::default()
        };
        let tx = TcpSender::new(ctx.flow, cfg, cc);
        match self.send_overhead {
            Some(max) => tx.with_send_overhead(
                max,
                crate::rng::stream(ctx.seed, &format!("flow:{}:overhead", ctx.name)),
            ),
            None => tx,
        }
    }

    /// The receiver of one scenario flow.
    pub fn receiver(&self, ctx: &FlowContext) -> Box<dyn Endpoint> {
        let rx = TcpReceiver::with_options(ctx.flow, ctx.ack_size, self.delayed_ack, self.sack);
        Box::new(if self.l4s && self.ecn {
            rx.with_accecn()
        } else {
            rx
        })
    }

    /// Both endpoints of one scenario flow over controller `cc`.
    pub fn endpoints<C: CongestionController + 'static>(
        &self,
        ctx: &FlowContext,
        cc: C,
    ) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (Box::new(self.sender(ctx, cc)), self.receiver(ctx))
    }
}

/// A receive window must hold at least two segments' worth of bytes.
pub fn check_receive_window(w: Option<Bytes>) -> Result<(), crate::params::ParamError> {
    match w {
        Some(b) if b.0 < 3_000 => Err(crate::params::ParamError::at(
            "receive_window",
            format!(
                "`receive_window` must be at least 3000 bytes (two full segments), not {} bytes",
                b.0
            ),
        )),
        _ => Ok(()),
    }
}

/// Checks a `delayed_ack` parameter: RFC 1122 §4.2.3.2, "the delay MUST be less than 0.5
/// seconds".
pub fn check_delayed_ack(delay: Option<Duration>) -> Result<(), crate::params::ParamError> {
    match delay {
        Some(d) if d.0 == 0 || d >= Duration::from_millis(500) => {
            Err(crate::params::ParamError::at(
                "delayed_ack",
                format!("`delayed_ack` must be above 0 and below 500ms (RFC 1122), not {d}"),
            ))
        }
        _ => Ok(()),
    }
}

/// The largest `send_overhead`: a processing time, not a pause (ns-2 uses a fraction of a
/// packet's transmission time at the bottleneck).
pub const MAX_SEND_OVERHEAD: Duration = Duration::from_millis(100);

/// Checks a `send_overhead` parameter: above 0 and at most [`MAX_SEND_OVERHEAD`].
pub fn check_send_overhead(max: Option<Duration>) -> Result<(), crate::params::ParamError> {
    match max {
        Some(d) if d.0 == 0 || d > MAX_SEND_OVERHEAD => Err(crate::params::ParamError::at(
            "send_overhead",
            format!("`send_overhead` must be above 0 and at most {MAX_SEND_OVERHEAD}, not {d}"),
        )),
        _ => Ok(()),
    }
}
