"""Environment steps per second (issue 52 §2's speed figure): one agent flow on a dumbbell
(10 ms each way, a one-BDP buffer), one monitor interval (the smoothed RTT, ~24 ms here) per
step, paced at 80% of the link (no queue, no loss: a lossy overload costs more per step, as
SACK recovery does more work per ACK).

    python examples/python/learn/bench.py            # prints a table; ~20 s

Rows: the native step alone (``GymSim.step``, what the simulation costs), the
``gymnasium.Env`` step (features, reward and the action in Python on top), and the vector
environment (``DumbbellVecEnv``: N copies in one call, Rust threads) on 1 thread, on every
core, and choosing by measurement (the default). Each figure is the median of three runs.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

import acclab.gym as agym


def env(rate_mbps: float) -> agym.DumbbellEnv:
    return agym.DumbbellEnv(rate_mbps=rate_mbps, delay_ms=10.0, buffer_bdp=1.0, duration_s=60.0, action="rate")


def native(rate_mbps: float) -> float:
    e = env(rate_mbps)
    e.reset(seed=1)
    sim, n, t0 = e._sim, 0, time.perf_counter()
    while not sim.done():
        sim.step([0.8 * rate_mbps * 1e6], 0.024)
        n += 1
    return n / (time.perf_counter() - t0)


def single(rate_mbps: float) -> float:
    e = env(rate_mbps)
    e.reset(seed=1)
    a, n, t0 = np.array([0.8 * rate_mbps], dtype=np.float32), 0, time.perf_counter()
    while True:
        n += 1
        if e.step(a)[3]:
            return n / (time.perf_counter() - t0)


def vector(rate_mbps: float, copies: int, threads: int | None) -> float:
    v = agym.DumbbellVecEnv(
        copies, threads=threads, rate_mbps=rate_mbps, delay_ms=10.0, buffer_bdp=1.0, duration_s=20.0, action="rate"
    )
    v.reset(seed=1)
    a, n, t0 = np.full((copies, 1), 0.8 * rate_mbps, dtype=np.float32), 0, time.perf_counter()
    for _ in range(600):
        v.step(a)
        n += copies
    return n / (time.perf_counter() - t0)


def median(f, *args) -> float:
    return statistics.median(f(*args) for _ in range(3))


def main() -> None:
    cores = os.cpu_count() or 1
    print(
        f"{'link':>9} {'native':>10} {'env':>10} {'vec 8, 1 thread':>16} "
        f"{'vec 8, ' + str(cores) + ' threads':>17} {'vec 8, auto':>12}"
    )
    for rate in (1.0, 10.0, 100.0):
        print(
            f"{rate:>5g} Mb/s {median(native, rate):>10,.0f} {median(single, rate):>10,.0f} "
            f"{median(vector, rate, 8, 1):>16,.0f} {median(vector, rate, 8, cores):>17,.0f} "
            f"{median(vector, rate, 8, None):>12,.0f}"
        )


if __name__ == "__main__":
    main()
