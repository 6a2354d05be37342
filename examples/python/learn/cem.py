"""A learned congestion controller, end to end, with nothing but numpy (issue 52 §3).

Trains a linear policy on acclab's Gymnasium environment (``acclab/Dumbbell-v0``'s class, with
a distribution of dumbbells) by the cross-entropy method, then evaluates it on held-out
scenarios beside Reno, CUBIC, BBR and Monaco run by ``acclab.run`` on the very same networks:
throughput, mean RTT, and the distance to the network-utility optimum acclab's theory computes.
Writes ``table.csv`` and ``learned.png`` into ``--out``::

    python examples/python/learn/cem.py --out results/learn            # ~1 min on one core
    python examples/python/learn/cem.py --quick --out /tmp/learn       # a few seconds

The policy: action = tanh(w · observation + b) (Aurora's rate multiplier, in [-1, 1]); the
observation is Aurora's latency gradient, latency ratio and send ratio over the last 4 monitor
intervals. The cross-entropy method samples weights from a Gaussian, keeps the best quarter by
mean episode reward (Aurora's: 10·throughput − 1000·latency − 2000·loss), refits the Gaussian
to them, and repeats.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

import acclab.gym as agym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import AURORA_FEATURES as FEATURES  # noqa: E402
from evaluate import episode, evaluate, hold, random_policy, report, score, training_env  # noqa: E402

HISTORY = 4


def make_env(duration_s: float = 4.0) -> agym.DumbbellEnv:
    """The training distribution (evaluate.training_env) with a history of 4 intervals."""
    return training_env(HISTORY, duration_s)


class Linear:
    """action = tanh(w · obs + b)."""

    def __init__(self, theta: np.ndarray):
        self.w, self.b = theta[:-1], theta[-1]

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.array([math.tanh(float(self.w @ obs) + self.b)], dtype=np.float32)


def train(iterations: int, population: int, episodes: int, seed: int = 0, log=print) -> np.ndarray:
    """The cross-entropy method: the mean of the final Gaussian."""
    env = make_env()
    rng = np.random.default_rng(seed)
    n = len(FEATURES) * HISTORY + 1
    mean, std = np.zeros(n), np.full(n, 0.5)
    elite = max(2, population // 4)
    for it in range(iterations):
        thetas = mean + std * rng.standard_normal((population, n))
        seeds = [int(s) for s in rng.integers(1 << 30, size=episodes)]
        scores = np.array([score(env, Linear(t), seeds) for t in thetas])
        best = thetas[np.argsort(scores)[-elite:]]
        mean, std = best.mean(axis=0), best.std(axis=0) + 0.02
        log(f"iteration {it + 1}/{iterations}: best {scores.max():.1f}, mean {scores.mean():.1f}")
    return mean


def evaluate_cem(theta: np.ndarray, seeds) -> list[dict]:
    """The learned policy beside a random one, a fixed rate and the Rust schemes."""
    rng = np.random.default_rng(99)
    policies = {"learned (CEM)": Linear(theta), "random": random_policy(rng), "fixed rate": hold}
    return evaluate(make_env(), policies, seeds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--quick", action="store_true", help="a few seconds of training")
    args = ap.parse_args()
    t0 = time.perf_counter()
    its, pop, eps = (4, 12, 1) if args.quick else (15, 24, 3)
    theta = train(its, pop, eps)
    trained = time.perf_counter() - t0
    rows = evaluate_cem(theta, seeds=range(1000, 1003 if args.quick else 1010))
    print(f"trained in {trained:.1f} s; held-out means:")
    report(rows, args.out)


if __name__ == "__main__":
    main()
