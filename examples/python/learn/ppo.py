"""Aurora's recipe with Stable-Baselines3's PPO on acclab's Gymnasium environment (issue 52 §3).

Needs the ``learn`` extra (``pip install "./python[learn]"``: Stable-Baselines3 and PyTorch;
a CPU is enough). Trains a PPO policy on a distribution of dumbbells — Aurora's observation
(latency gradient, latency ratio and send ratio over the last 10 monitor intervals), its rate
multiplier action and its reward (Jay et al., ICML 2019 §4: a 32-16 tanh network, γ = 0.99)
— then evaluates it on held-out networks beside a random policy, a fixed rate, and Reno,
CUBIC, BBR and Monaco run by ``acclab.run`` on the very same scenarios (``table.csv``,
``ppo.png``)::

    python examples/python/learn/ppo.py --out results/ppo                 # 300 k steps
    python examples/python/learn/ppo.py --steps 20000 --out /tmp/ppo      # a quick look

Rewards are normalised by a running estimate (SB3's VecNormalize; Aurora's reward is in the
thousands per interval), observations are not (acclab's features are already a few units).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize
except ModuleNotFoundError as e:  # pragma: no cover - an optional extra
    sys.exit(f"ppo.py needs {e.name}: pip install \"./python[learn]\" (Stable-Baselines3 and PyTorch)")

import acclab.gym as agym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import evaluate, hold, random_policy, report, score, training_env  # noqa: E402

def make_env() -> agym.DumbbellEnv:
    """The training distribution (cem.py's, evaluate.training_env) with Aurora's history of 10."""
    return training_env(10)


def train(steps: int, seed: int = 0, envs: int = 8) -> PPO:
    torch.set_num_threads(1)
    venv = VecNormalize(make_vec_env(make_env, n_envs=envs, seed=seed), norm_obs=False, norm_reward=True)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=512,
        batch_size=256,
        gamma=0.99,
        learning_rate=3e-4,
        policy_kwargs={"net_arch": [32, 16], "activation_fn": torch.nn.Tanh},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=steps, progress_bar=False)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=300_000, help="environment steps of training")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    model = train(args.steps, args.seed)
    trained = time.perf_counter() - t0

    def learned(obs):
        return model.predict(obs, deterministic=True)[0]

    rng = np.random.default_rng(99)
    policies = {"learned (PPO)": learned, "random": random_policy(rng), "fixed rate": hold}
    held_out = range(1000, 1010)
    rows = evaluate(make_env(), policies, seeds=held_out)
    print(f"trained {args.steps} steps in {trained:.0f} s; held-out mean episode reward (Aurora's):")
    for name, policy in policies.items():
        print(f"  {name:16} {score(make_env(), policy, held_out):10.1f}")
    report(rows, args.out, figure="ppo.png")


if __name__ == "__main__":
    main()
