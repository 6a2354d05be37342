"""DCTCP (RFC 8257) in Python: Reno's growth, and an ECN echo answered with
cwnd × (1 − α/2), α the marked fraction of a window's bytes — the arithmetic of acclab's
``dctcp`` (crates/core/src/cc/dctcp.rs). Run it with ``ecn = true`` (and ``sack = true``, as
``kind = "dctcp"`` has by default) to get that scheme's run."""

from acclab.examples.reno import Reno


class Dctcp(Reno):
    def __init__(self, flow, g=1 / 16, initial_alpha=1.0):
        super().__init__(flow)
        self.g, self.alpha = g, initial_alpha
        self.window_end = None  # §3.3: Window_End
        self.acked = self.marked = 0

    def on_ack(self, now, ack):
        self.acked += ack.acked_bytes  # §3.3 steps 2–3
        if ack.ecn_echo:
            self.marked += ack.acked_bytes
        if self.window_end is None:
            self.window_end = ack.highest_sent  # step 1
        elif ack.cumulative_ack > self.window_end:  # step 4
            m = self.marked / max(self.acked, 1)  # steps 5–6
            self.alpha = (1.0 - self.g) * self.alpha + self.g * m
            self.window_end = ack.highest_sent  # step 7
            self.acked = self.marked = 0
        super().on_ack(now, ack)

    def on_congestion(self, now, event):
        if event.kind != "ecn":  # §3.4: losses as Reno
            return super().on_congestion(now, event)
        # §3.3 step 8, ssthresh with it (Linux's dctcp_ssthresh), at least two segments.
        self.ssthresh = max(int(int(self.cwnd) * (1.0 - self.alpha / 2.0)), 2 * self.mss)
        self.cwnd = float(self.ssthresh)
