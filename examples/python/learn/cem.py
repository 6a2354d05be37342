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
import csv
import math
import time
from pathlib import Path

import numpy as np

import acclab
import acclab.gym as agym

FEATURES = ("latency_gradient", "latency_ratio", "send_ratio")
HISTORY = 4


def make_env(duration_s: float = 4.0) -> agym.DumbbellEnv:
    """The training distribution: 10–50 Mb/s, 5–30 ms each way, 1–3 BDP of buffer."""
    return agym.DumbbellEnv(
        rate_mbps=(10.0, 50.0),
        delay_ms=(5.0, 30.0),
        buffer_bdp=(1.0, 3.0),
        duration_s=duration_s,
        features=FEATURES,
        history=HISTORY,
        action="rate-multiplier",
        reward="aurora",
    )


class Linear:
    """action = tanh(w · obs + b)."""

    def __init__(self, theta: np.ndarray):
        self.w, self.b = theta[:-1], theta[-1]

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.array([math.tanh(float(self.w @ obs) + self.b)], dtype=np.float32)


def episode(env: agym.DumbbellEnv, policy, seed: int) -> tuple[float, list[dict]]:
    """One episode: its total reward and each step's info."""
    obs, _ = env.reset(seed=seed)
    total, infos = 0.0, []
    while True:
        obs, r, _, trunc, info = env.step(policy(obs))
        total += r
        infos.append(info)
        if trunc:
            return total, infos


def score(env, policy, seeds) -> float:
    return float(np.mean([episode(env, policy, s)[0] for s in seeds]))


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


def random_policy(rng: np.random.Generator):
    return lambda obs: rng.uniform(-1, 1, size=1).astype(np.float32)


def hold(obs):
    """Keeps the starting rate (a fixed sending rate: what a fixed window does)."""
    return np.zeros(1, dtype=np.float32)


def evaluate(theta: np.ndarray, seeds, schemes=("reno", "cubic", "bbr", "monaco")) -> list[dict]:
    """The learned policy, a random one, a fixed rate, and the Rust schemes, on each held-out
    seed's network: mean throughput, mean RTT and the relative distance to the NUM optimum."""
    env = make_env()
    rows = []
    rng = np.random.default_rng(99)
    policies = {"learned (CEM)": Linear(theta), "random": random_policy(rng), "fixed rate": hold}
    for seed in seeds:
        env.reset(seed=seed)
        ep = env.episode
        target = env.num_targets(ep)[0][0]
        for name, policy in policies.items():
            _, infos = episode(env, policy, seed)
            late = [i for i in infos if i["time_s"] > 1.0] or infos
            thr = float(np.mean([i["throughput_bps"] for i in late]))
            rtt = float(np.mean([i["rtt_s"] for i in late]))
            rows.append(_row(seed, ep, name, thr, rtt, target))
        for kind in schemes:
            sc = acclab.parse(ep.scenario_text(f'kind = "{kind}"'), f"{kind}-{seed}")
            sc.set("output.window", ["1s", f"{ep.duration_s}s"])
            r = acclab.run(sc)
            f = r.summary[(r.summary["entity"] == "flow") & (r.summary["id"] == "agent")].iloc[0]
            rows.append(_row(seed, ep, kind, float(f["throughput_bps"]), float(f["mean_rtt_s"]), target))
    return rows


def _row(seed, ep, name, thr, rtt, target) -> dict:
    return {
        "seed": seed,
        "rate_mbps": ep.rate_mbps,
        "delay_ms": ep.delay_ms,
        "controller": name,
        "throughput_mbps": thr / 1e6,
        "mean_rtt_ms": rtt * 1e3,
        "num_distance": abs(thr - target) / target,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--quick", action="store_true", help="a few seconds of training")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    its, pop, eps = (4, 12, 1) if args.quick else (15, 24, 3)
    theta = train(its, pop, eps)
    trained = time.perf_counter() - t0
    rows = evaluate(theta, seeds=range(1000, 1003 if args.quick else 1010))
    with open(args.out / "table.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    names = list(dict.fromkeys(r["controller"] for r in rows))
    print(f"trained in {trained:.1f} s; held-out means:")
    print(f"{'controller':16} {'Mb/s':>8} {'RTT ms':>8} {'NUM dist':>9}")
    for n in names:
        rs = [r for r in rows if r["controller"] == n]
        print(
            f"{n:16} {np.mean([r['throughput_mbps'] for r in rs]):8.2f} "
            f"{np.mean([r['mean_rtt_ms'] for r in rs]):8.1f} {np.mean([r['num_distance'] for r in rs]):9.3f}"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(3.5, 2.6))
        for n, marker in zip(names, "o^sDvP<>"):
            rs = [r for r in rows if r["controller"] == n]
            ax.scatter([r["mean_rtt_ms"] for r in rs], [r["throughput_mbps"] for r in rs], label=n, marker=marker, s=14)
        ax.set_xlabel("mean RTT (ms)")
        ax.set_ylabel("throughput (Mb/s)")
        ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(args.out / "learned.png", dpi=200)
    except ImportError:
        print("matplotlib is not installed: no figure")
    print(f"results in {args.out}/ (table.csv, learned.png)")


if __name__ == "__main__":
    main()
