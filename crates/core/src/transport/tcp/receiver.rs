//! The TCP receiver: in-order delivery with an out-of-order buffer, cumulative (optionally
//! delayed) ACKs with SACK blocks, and the ECN echo (see the module header in mod.rs).

use crate::packet::{FlowId, Packet, PacketKind, Payload, Sack};
use crate::transport::sack::RangeSet;
use crate::transport::{Endpoint, EndpointStats, Outbox};
use crate::units::{Duration, Time};
use std::collections::VecDeque;

/// An Accurate ECN receiver's counter of CE-marked packets (RFC 9768 §3.2.2), and the CE
/// marks not yet fed back.
struct AccEcnCounter {
    r_cep: u64,
    since_ack: u32,
}

/// The receiving side: cumulative ACKs and in-order delivery.
pub struct TcpReceiver {
    flow: FlowId,
    ack_size: u32,
    /// Delayed ACKs: the longest an ACK waits for a second segment (`None`: an ACK per segment).
    delayed_ack: Option<Duration>,
    /// The ACK being delayed: when it must go, the timestamp it will echo (the earliest
    /// unacknowledged segment's, RFC 7323 §4.3) and the connection.
    pending: Option<(Time, Time, u32)>,
    /// The CE state: the last data segment received was CE-marked (RFC 8257 §3.2).
    ce: bool,
    /// Accurate ECN feedback instead of RFC 3168's echo (an L4S flow's receiver).
    accecn: Option<AccEcnCounter>,
    rcv_nxt: u64,
    /// Segments received above `rcv_nxt`, sorted, with their sizes. A deque: the segments a
    /// repair releases leave from the front, and with a window of tens of thousands of
    /// segments (10 Gb/s) shifting a vector's remainder per repair was most of a run.
    out_of_order: VecDeque<(u64, u32)>,
    /// With SACK: the same segments as ranges, for the ACKs' SACK block (RFC 2018).
    sack: Option<Box<RangeSet>>,
    acks: Outbox,
    /// Bytes delivered in order (the only counter a receiver keeps besides its outbox's).
    delivered_bytes: u64,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, ack_size: u32) -> TcpReceiver {
        TcpReceiver::with_delayed_ack(flow, ack_size, None)
    }

    /// A receiver that delays ACKs by up to `delay` (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
    pub fn with_delayed_ack(flow: FlowId, ack_size: u32, delay: Option<Duration>) -> TcpReceiver {
        TcpReceiver::with_options(flow, ack_size, delay, false)
    }

    /// A receiver with delayed ACKs (or not) that reports a SACK block (or not).
    pub fn with_options(
        flow: FlowId,
        ack_size: u32,
        delay: Option<Duration>,
        sack: bool,
    ) -> TcpReceiver {
        TcpReceiver {
            sack: sack.then(Box::default),
            flow,
            ack_size,
            delayed_ack: delay,
            pending: None,
            ce: false,
            accecn: None,
            rcv_nxt: 0,
            out_of_order: VecDeque::new(),
            acks: Outbox::default(),
            delivered_bytes: 0,
        }
    }

    /// Feeds back Accurate ECN (RFC 9768) instead of RFC 3168's echo.
    pub fn with_accecn(mut self) -> TcpReceiver {
        self.accecn = Some(AccEcnCounter {
            // RFC 9768 §3.2.2.2: "the Data Receiver MUST initialize r.cep to 5".
            r_cep: 5,
            since_ack: 0,
        });
        self
    }

    fn accept(&mut self, seq: u64, size: u32) {
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.delivered_bytes += size as u64;
            // Pull in what was waiting behind the hole.
            while let Some(&(s, sz)) = self.out_of_order.front() {
                if s != self.rcv_nxt {
                    break;
                }
                self.out_of_order.pop_front();
                self.rcv_nxt += 1;
                self.delivered_bytes += sz as u64;
            }
            if let Some(r) = &mut self.sack {
                r.remove_below(self.rcv_nxt);
            }
        } else if seq > self.rcv_nxt {
            // Mostly the next segment above the hole: it goes at the back, without a search.
            let at = match self.out_of_order.back() {
                Some(&(last, _)) if last >= seq => {
                    self.out_of_order.binary_search_by_key(&seq, |e| e.0)
                }
                _ => Err(self.out_of_order.len()),
            };
            if let Err(i) = at {
                // A push, not an insert at the back: VecDeque::insert's general path cost 1%
                // of the instructions of 10 flows on 10 Gb/s.
                if i == self.out_of_order.len() {
                    self.out_of_order.push_back((seq, size));
                } else {
                    self.out_of_order.insert(i, (seq, size));
                }
                if let Some(r) = &mut self.sack {
                    r.insert(seq, seq + 1);
                }
            }
        }
    }
}

impl TcpReceiver {
    /// Acknowledges everything received so far, echoing `echo`; with SACK, the block holding
    /// segment `trigger` (the arrival that caused this ACK, RFC 2018 §4), or else the lowest.
    fn send_ack(&mut self, echo: Time, conn: u32, ecn_echo: bool, trigger: Option<u64>) {
        let mut ack = Packet::ack(self.flow, self.ack_size, self.rcv_nxt, echo);
        if let (Some(r), Payload::Ack { next, sack, .. }) = (&self.sack, &mut ack.payload) {
            let block = trigger.and_then(|t| r.range_of(t)).or_else(|| r.first());
            if let Some((start, end)) = block {
                *sack = Sack::new(*next, start, end);
            }
        }
        ack.conn = conn;
        match &mut self.accecn {
            // RFC 9768 §3.2.2.1: every ACK carries r.cep modulo 8 in its ACE field.
            Some(a) => {
                ack.ecn.set_ace(a.r_cep);
                a.since_ack = 0;
            }
            None if ecn_echo => ack.ecn.set_echo(),
            None => {}
        }
        self.acks.push(ack);
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.kind != PacketKind::Data {
            return;
        }
        let marked = pkt.ecn.is_marked();
        let mut ack_now = false;
        if let Some(a) = &mut self.accecn {
            if marked {
                a.r_cep += 1;
                a.since_ack += 1;
                // RFC 9768 §3.2.2.5.1: a change-triggered ACK when a CE packet follows one
                // that was not, and an increment-triggered one when n = 2 CE marks have
                // arrived since the last ACK (new data to acknowledge).
                ack_now = !self.ce || a.since_ack >= 2;
            }
            self.ce = marked;
        } else if marked != self.ce {
            // RFC 8257 §3.2: when the CE state changes, the delayed ACK of the segments
            // before goes at once with their state, so that every ACK's ECE tells exactly
            // whether the segments it acknowledges were marked.
            if let Some((_, echo, conn)) = self.pending.take() {
                self.send_ack(echo, conn, self.ce, None);
            }
            self.ce = marked;
        }
        let in_order = pkt.seq == self.rcv_nxt && self.out_of_order.is_empty();
        self.accept(pkt.seq, pkt.size);
        match self.delayed_ack {
            // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: an in-order segment may wait for a second
            // one (at most `delay`); an out-of-order or duplicate segment, or one that fills
            // a hole, is acknowledged at once.
            Some(delay) if in_order && self.pending.is_none() && !ack_now => {
                self.pending = Some((now + delay, pkt.sent_at, pkt.conn));
            }
            _ => {
                let echo = self.pending.take().map_or(pkt.sent_at, |(_, e, _)| e);
                self.send_ack(echo, pkt.conn, marked, Some(pkt.seq));
            }
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if let Some((at, echo, conn)) = self.pending {
            if at <= now {
                self.pending = None;
                self.send_ack(echo, conn, self.ce, None);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.pending.map(|(at, _, _)| at)
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.acks.pop(now)
    }

    fn stats(&self) -> EndpointStats {
        self.acks.sent_in(EndpointStats {
            delivered_bytes: self.delivered_bytes,
            ..EndpointStats::default()
        })
    }
}
