"""Held-out evaluation shared by the learning examples (cem.py, ppo.py): learned policies beside
a random one, a fixed rate and Reno, CUBIC, BBR and Monaco run by ``acclab.run`` on the very
same networks — mean throughput, mean RTT, and the relative distance to the network-utility
optimum acclab's theory computes — written as ``table.csv`` and a throughput–delay figure."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

import acclab
import acclab.gym as agym

SCHEMES = ("reno", "cubic", "bbr", "monaco")
#: Aurora's observation (Jay et al., ICML 2019 §4.1).
AURORA_FEATURES = ("latency_gradient", "latency_ratio", "send_ratio")


def training_env(history: int, duration_s: float = 4.0) -> agym.DumbbellEnv:
    """The examples' training distribution: 10–50 Mb/s, 5–30 ms each way, 1–3 BDP of buffer,
    Aurora's features over `history` intervals, its rate multiplier and its reward."""
    return agym.DumbbellEnv(
        rate_mbps=(10.0, 50.0),
        delay_ms=(5.0, 30.0),
        buffer_bdp=(1.0, 3.0),
        duration_s=duration_s,
        features=AURORA_FEATURES,
        history=history,
        action="rate-multiplier",
        reward="aurora",
    )


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
    """The mean episode reward over ``seeds``."""
    return float(np.mean([episode(env, policy, s)[0] for s in seeds]))


def random_policy(rng: np.random.Generator):
    return lambda obs: rng.uniform(-1, 1, size=1).astype(np.float32)


def hold(obs):
    """Keeps the starting rate (a fixed sending rate: what a fixed window does)."""
    return np.zeros(1, dtype=np.float32)


def evaluate(env: agym.DumbbellEnv, policies: dict, seeds, schemes=SCHEMES) -> list[dict]:
    """Each policy (name → obs → action) and each Rust scheme on each held-out seed's network:
    mean throughput and RTT from 1 s on, and the relative distance to the NUM optimum."""
    rows = []
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


def report(rows: list[dict], out: Path, figure: str = "learned.png") -> None:
    """Writes ``table.csv`` and the figure into ``out`` and prints each controller's means."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "table.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    names = list(dict.fromkeys(r["controller"] for r in rows))
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
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    fig, ax = plt.subplots(figsize=(3.5, 2.6))
    for n, marker in zip(names, "o^sDvP<>"):
        rs = [r for r in rows if r["controller"] == n]
        ax.scatter([r["mean_rtt_ms"] for r in rs], [r["throughput_mbps"] for r in rs], label=n, marker=marker, s=14)
    ax.set_xlabel("mean RTT (ms)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / figure, dpi=200)
    plt.close(fig)
    print(f"results in {out}/ (table.csv, {figure})")
