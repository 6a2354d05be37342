"""CUBIC (RFC 9438) in Python: the arithmetic of acclab's ``cubic`` with its defaults
(crates/core/src/cc/cubic.rs: RFC 9438's, not Linux's; no HyStart++), so a flow of
``kind = "python"`` with ``controller = "acclab.examples.cubic:Cubic"`` and ``sack = true``
(cubic's default) runs exactly as ``kind = "cubic"``."""

import math

from acclab.controller import Controller


class Cubic(Controller):
    def __init__(self, flow, c=0.4, beta=0.7, fast_convergence=True, reno_friendly=True):
        self.mss = flow.mss
        self.c, self.beta = c, beta
        self.fast_convergence, self.reno_friendly = fast_convergence, reno_friendly
        self.cwnd = float(max(flow.initial_window, 1) * flow.mss)
        self.ssthresh = math.inf
        self.w_max = None  # segments; None before the first reduction and after a timeout
        self.cwnd_prior = 0.0  # segments, before the last reduction
        self.epoch = None  # (start of the congestion-avoidance stage, ns; K, s)
        self.w_est = 0.0  # the Reno-friendly window, segments (§4.3)
        self.srtt = None  # ns

    def w_cubic(self, t, k, w_max):
        d = t - k
        return self.c * (d * d * d) + w_max  # RFC 9438 eq. (1)

    def on_ack(self, now, ack):
        if ack.rtt is not None:  # RFC 6298 §2.3
            self.srtt = ack.rtt if self.srtt is None else (7 * self.srtt + ack.rtt) // 8
        if ack.in_recovery:
            return
        if int(self.cwnd) < self.ssthresh:  # slow start
            self.cwnd += min(self.mss, ack.acked_bytes)
            return
        cwnd = self.cwnd / self.mss
        if self.epoch is None:  # a stage begins (§4.3; W_max undefined: §4.8, §4.10)
            if self.w_max is None:
                self.w_max = cwnd
            self.epoch = (now, math.cbrt((self.w_max - cwnd) / self.c))  # eq. (2)
            self.w_est = cwnd
        start, k = self.epoch
        acked = ack.acked_bytes / self.mss
        t = (now - start) / 1e9
        rtt = 0.0 if self.srtt is None else self.srtt / 1e9
        # §4.3 eq. (4), α_cubic = 3(1 − β)/(1 + β) until W_est reaches cwnd_prior, then 1.
        alpha = 1.0 if self.w_est >= self.cwnd_prior else 3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        self.w_est += alpha * acked / cwnd
        if self.reno_friendly and self.w_cubic(t, k, self.w_max) < self.w_est:
            self.cwnd = self.w_est * self.mss  # §4.3: the Reno-friendly region
            return
        # §4.2: target W_cubic(t + RTT) within [cwnd, 1.5 cwnd]; §4.4/4.5 growth per ACK.
        target = min(max(self.w_cubic(t + rtt, k, self.w_max), cwnd), 1.5 * cwnd)
        self.cwnd += (target - cwnd) / cwnd * acked * self.mss

    def on_congestion(self, now, event):
        mss, cwnd = float(self.mss), self.cwnd / self.mss
        ssthresh = max(self.cwnd * self.beta, 2.0 * mss)  # §4.6
        self.ssthresh, self.epoch = int(ssthresh), None
        if event.kind == "timeout":  # §4.8: one segment, a fresh curve after
            self.w_max, self.cwnd_prior, self.cwnd = None, cwnd, mss
            return
        below = self.w_max is not None and cwnd < self.w_max
        # §4.7 fast convergence
        self.w_max = cwnd * (1.0 + self.beta) / 2.0 if self.fast_convergence and below else cwnd
        self.cwnd_prior = cwnd
        self.cwnd = ssthresh
