"""TCP Reno's window (RFC 5681) in Python: the same arithmetic as acclab's ``reno``
(crates/core/src/cc/reno.rs), so a flow of ``kind = "python"`` with
``controller = "acclab.examples.reno:Reno"`` runs exactly as ``kind = "reno"``."""

import math

from acclab.controller import Controller


class Reno(Controller):
    def __init__(self, flow, byte_counting=False):
        self.mss = flow.mss
        self.cwnd = float(max(flow.initial_window, 1) * flow.mss)
        self.ssthresh = math.inf
        self.byte_counting = byte_counting  # RFC 3465, L = 2 segments

    def on_ack(self, now, ack):
        if ack.in_recovery:
            return
        mss, acked = self.mss, ack.acked_bytes
        if int(self.cwnd) < self.ssthresh:  # slow start, RFC 5681 eq. (2)
            self.cwnd += min(2 * mss if self.byte_counting else mss, acked)
        elif self.byte_counting:
            self.cwnd += mss * acked / self.cwnd  # RFC 3465 §2.1
        else:
            self.cwnd += mss * mss / self.cwnd  # RFC 5681 eq. (3)

    def on_congestion(self, now, event):
        self.ssthresh = max(event.in_flight // 2, 2 * self.mss)  # RFC 5681 eq. (4)
        # A loss or an ECN echo: cwnd = ssthresh; a timeout: one segment (RFC 5681 §3.1).
        self.cwnd = float(self.mss if event.kind == "timeout" else self.ssthresh)
