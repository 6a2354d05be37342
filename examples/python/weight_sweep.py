"""A qos-fig5-style study from Python: flow 0's weight w against nine weight-1 Monaco loops on
one 100 Mb/s bottleneck (003 Fig. 5), without and with AVQ+VD, over several seeds.

The throughput ratio of flow 0 to the others' mean should follow w (weighted proportional
fairness; the theory's line), the FIFO queue growing with w, AVQ+VD keeping it near zero.
The runs are the 60 s quick scenario of qos-fig5: behind FIFO the w = 1000 flow's queue is
still building at 60 s (it takes minutes: `acclab reproduce qos-fig5` runs long enough), so its
ratio there is far below w — measured 281 (5 seeds) where AVQ+VD gives 958.

    python examples/python/weight_sweep.py [--quick] [--out DIR] [--seeds N]

Writes DIR/weight-sweep.csv (the tidy table of every run), DIR/ratio.csv (the ratio's mean and
95% confidence interval per weight and queue) and DIR/weight-sweep.png / .pdf.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

import acclab  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
AVD = {"kind": "avq", "mode": "delay", "limit": "100000pkt", "priority": True}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 s runs, weights 1 and 10, 2 seeds")
    ap.add_argument("--out", default="results/python-weight-sweep")
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    sc = acclab.load(ROOT / "scenarios/repro/qos-single.quick.toml")
    # Random start times, so that seeds differ.
    for f in sc.flows:
        sc.set(f"flow.{f}.start_jitter", "500ms")
    weights = "1..1000/4 log"  # 1, 10, 100, 1000
    seeds = a.seeds
    if a.quick:
        sc.update({"duration": "20s", "output.window": ["10s", "20s"]})
        weights, seeds = [1, 10], 2

    frames = []
    for name, queue in [("FIFO", None), ("AVQ+VD", AVD)]:
        s = sc.copy()
        if queue is not None:
            for link in ('link."r1->r2".queue', 'link."r2->r1".queue'):
                s.set(link, queue)
        df = acclab.sweep(s, grid={"flow.f0.params.weight": weights}, seeds=seeds)
        df["bottleneck"] = name
        frames.append(df)
    runs = pd.concat(frames, ignore_index=True)
    runs.to_csv(out / "weight-sweep.csv", index=False)

    # Flow 0's throughput over the mean of the others, per run; then mean and 95% CI per point.
    w = "flow.f0.params.weight"
    flows = runs[runs.entity == "flow"]
    f0 = flows[flows.id == "f0"].set_index(["bottleneck", w, "seed"]).throughput_bps
    others = flows[flows.id != "f0"].groupby(["bottleneck", w, "seed"]).throughput_bps.mean()
    ratio = (f0 / others).rename("ratio").reset_index()
    g = ratio.groupby(["bottleneck", w]).ratio
    table = g.agg(["count", "mean", "std"]).reset_index()
    half = stats.t.ppf(0.975, table["count"] - 1) * table["std"] / table["count"] ** 0.5
    table["ci95_low"], table["ci95_high"] = table["mean"] - half, table["mean"] + half
    table.to_csv(out / "ratio.csv", index=False)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, t in table.groupby("bottleneck"):
        err = [t["mean"] - t["ci95_low"], t["ci95_high"] - t["mean"]]
        ax.errorbar(t[w], t["mean"], yerr=err, marker="o", capsize=3, label=name)
    ws = sorted(table[w].unique())
    ax.plot(ws, ws, "k--", lw=1, label="theory: ratio = w")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("weight w of flow 0")
    ax.set_ylabel("throughput of flow 0 / mean of the others")
    ax.set_title(f"003 Fig. 5 style: mean of {seeds} seeds, 95% CI")
    ax.legend()
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(out / f"weight-sweep.{ext}", dpi=150)
    print(table.to_string(index=False))
    print(f"files in {out}/: weight-sweep.csv, ratio.csv, weight-sweep.png, weight-sweep.pdf")


if __name__ == "__main__":
    main()
