//! A TCP-like reliable transport: NewReno loss recovery around a pluggable congestion controller.
//!
//! Sender (RFC 5681, RFC 6582, RFC 6298): cumulative ACKs, fast retransmit on the third duplicate
//! ACK (which restarts the retransmission timer, as ns-2 and Linux do), NewReno fast recovery
//! with partial ACKs (each partial ACK retransmits the next hole; only
//! the first one re-arms the timer — the "Impatient" variant RFC 6582 §3.2 step 5 specifies, so a
//! window with many losses ends in a timeout instead of one RTT per hole), the RFC 6298
//! retransmission timer with exponential backoff, and go-back-N after a timeout. The congestion window itself
//! belongs to the [`CongestionController`]; this file only adds the temporary window inflation
//! of fast recovery (RFC 6582 §3.2 steps 3–5).
//!
//! Receiver: in-order delivery with an out-of-order buffer, one cumulative ACK per data packet
//! (delayed ACK off, SPEC §5; optionally one per two segments), echoing the data packet's
//! timestamp and its ECN mark: every ACK's ECE says whether the segments it acknowledges were
//! CE-marked (DCTCP's receiver, RFC 8257 §3.2, which an RFC 3168 sender reads as well).
//!
//! Departures, all deliberate:
//! - Sequence numbers count segments, not bytes; every segment is `packet_size` bytes on the wire
//!   (headers included, SPEC §2) except possibly the last of a finite transfer.
//! - No window scaling; the receive window is a fixed buffer whose application reads at once
//!   (`receive_window`, off by default: then the receiver buffers everything): the sender keeps
//!   new data below SND.UNA + the buffer (RFC 9293 §3.8.6.2.1), and ACKs do not carry it.
//!   (SACK is an option: crates/core/src/transport/sack.rs.)
//! - Fast retransmit is suppressed while the cumulative ACK is below the `recover` point of the
//!   previous recovery or timeout (RFC 6582 §3.2 step 1, the "careful" variant, using
//!   ACK ≥ recover + 1 so that a loss of the first segment after a recovery is still repaired
//!   without a timeout).
//! - ECN: with `ecn` on, data are sent ECN-capable and an echo reduces the window at most once per
//!   window of data (RFC 3168 §6.1.2); the receiver echoes every marked packet.
//! - Send overhead (`send_overhead`, off by default): ns-2's `overhead_` (tcp.cc `send_much`),
//!   the random processing time Floyd and Jacobson (1992) add at the sources to break the phase
//!   effects of a deterministic simulation. Each segment the window lets out waits a delay drawn
//!   uniformly from [0, overhead] after it could have left, one segment at a time; repairs
//!   (fast retransmit, partial ACKs, SACK's NextSeg) leave at once, as ns-2's do.
//!
//! Files: [`sender`] (segments, loss recovery, the RTO, over the controller), [`receiver`]
//! (in-order delivery, cumulative ACKs, SACK blocks, ECN echo), [`options`] (the TCP keys every
//! TCP scheme's parameters carry, declared once, and the endpoints they build).

mod options;
mod receiver;
mod sender;
#[cfg(test)]
mod tests;

pub(crate) use options::tcp_scheme_params;
pub use options::{
    check_delayed_ack, check_receive_window, check_send_overhead, TcpOptions, MAX_INITIAL_WINDOW,
    MAX_SEND_OVERHEAD,
};
pub use receiver::TcpReceiver;
pub use sender::{TcpSender, TcpSettings, TCP_STATE};
