"""Gymnasium environments for learned congestion control, on acclab's packet simulator.

``import acclab.gym`` registers ``acclab/Dumbbell-v0``::

    import gymnasium as gym
    import acclab.gym
    env = gym.make("acclab/Dumbbell-v0")                 # defaults that work out of the box
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

One flow (the agent's) crosses a dumbbell drawn per episode from a distribution (bottleneck
rate, one-way delay, buffer in bandwidth-delay products, random loss, competing Reno/CUBIC
flows, optionally a cellular capacity trace), seeded by ``reset(seed)``. The agent acts once
per monitor interval (MI): one smoothed RTT (``mi="rtt"``, the default) or a fixed time
(``mi=0.05`` s). ``agents=k`` puts k agent-driven flows on it, stepped together. The whole
step — the action, the simulation with the GIL released, the features, history and reward —
runs in Rust (``acclab_core::cc::agent_env``, called through ``GymSim.env_step``); the vector
environment (:class:`DumbbellVecEnv`) steps its copies on threads.

**Observations** (``features``, stacked over the last ``history`` MIs, oldest first, each
normalised to a few units):

- ``latency_gradient``: the slope of the RTT over the MI, s/s (Aurora, Jay et al. ICML 2019);
- ``latency_ratio``: the MI's mean RTT over the minimum RTT seen (Aurora);
- ``send_ratio``: bytes sent over bytes acknowledged in the MI (Aurora), at most 10;
- ``loss_fraction`` and ``ecn_fraction``: retransmitted bytes over sent, echoed bytes over
  acknowledged;
- ``delivery_rate``: acknowledged bytes per second over the highest seen so far (Orca's
  normalised throughput);
- ``rtt``: the smoothed RTT over the minimum (Orca's delay signal);
- ``action``: the current rate (or window) over its value at the start of the episode, log2;
- ``cwnd`` (not in the defaults): the window the flow is held to over the BDP (Orca's agent
  sees its window beside its rate);
- ``queue`` (not in the defaults: a sender cannot see it): the bottleneck's backlog at the
  interval's end over its bandwidth-delay product in packets.

**Actions** (``action``): ``"rate-multiplier"`` (Aurora: a ∈ [-1, 1]·``action_scale``; the rate
becomes rate·(1 + αa) for a ≥ 0, rate/(1 − αa) below, α = 0.025), ``"cwnd"`` (a window in
segments, [1, ``max_cwnd``]), or ``"rate"`` (a pacing rate in Mb/s, [0.1, ``max_rate_mbps``]).
``discrete=k`` offers k evenly spaced values of the same range instead.

**Rewards** (``reward``):

- ``"aurora"``: 10·throughput − 1000·latency − 2000·loss (packets/s, s, fraction; Aurora §4),
  scaled by ``reward_scale`` (default 0.01);
- ``"alpha-fair"``: the α-fair utility of the MI's throughput in Mb/s (log for α = 1);
- ``"power"``: throughput (Mb/s) over the mean RTT (s), Kleinrock's power;
- ``"num"``: acclab's own — minus the relative distance between the MI's throughput and the
  agent's share in the network-utility-maximising allocation (proportional fairness) that
  acclab's theory computes for the episode's scenario (ACC's equilibrium, 000 §III): 0 at the
  optimum. Where the theory has no prediction (random loss, a trace), the fair share of the
  bottleneck's mean rate is the target, and ``info["num_target"]`` says which was used.

``info`` carries the MI's measurements (throughput, RTT, loss, the target rate for ``"num"``).
Episodes end (``truncated``) when the scenario's duration is simulated.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from gymnasium.vector import VectorEnv
    from gymnasium.vector.utils import batch_space
except ModuleNotFoundError as e:  # pragma: no cover - depends on the installation
    raise ModuleNotFoundError(
        f"acclab.gym needs {e.name}: pip install \"acclab[gym]\" (gymnasium and numpy)", name=e.name
    ) from e

from . import _acclab
from ._acclab import GymSim

__all__ = ["ALL_FEATURES", "DumbbellEnv", "DumbbellVecEnv", "Episode", "FEATURES"]

#: The default observation features, in order.
FEATURES = (
    "latency_gradient",
    "latency_ratio",
    "send_ratio",
    "loss_fraction",
    "ecn_fraction",
    "delivery_rate",
    "rtt",
    "action",
)
#: Every feature: the defaults, ``cwnd`` (the window the flow is held to over the BDP: the
#: agent's window, or with a rate the cap 2 × rate × sRTT) and ``queue`` (the bottleneck's
#: backlog over its BDP in packets, at the interval's end — information an end host does not
#: have; ask for it explicitly).
ALL_FEATURES = FEATURES + ("cwnd", "queue")



def _draw(rng: np.random.Generator, spec, integer: bool = False):
    """A value from ``spec``: a number (fixed) or a (low, high) range (uniform)."""
    if isinstance(spec, (tuple, list)):
        low, high = spec
        if integer:
            return int(rng.integers(int(low), int(high) + 1))
        return float(rng.uniform(low, high))
    return int(spec) if integer else float(spec)


@dataclass
class Episode:
    """One episode's network, as drawn: what ``reset`` built."""

    rate_mbps: float
    delay_ms: float
    buffer_bdp: float
    loss: float
    competitors: list[str]
    duration_s: float
    trace: str | None = None
    seed: int = 0
    agents: int = 1

    @property
    def agent_ids(self) -> list[str]:
        """The agents' flow ids: ``agent`` alone, else ``agent0``, ``agent1``, …"""
        return ["agent"] if self.agents == 1 else [f"agent{i}" for i in range(self.agents)]

    @property
    def base_rtt_s(self) -> float:
        # The bottleneck's delay both ways plus 1 ms on each of the four access links.
        return 2 * self.delay_ms / 1e3 + 4e-3

    def scenario_text(self, agent_kind: str = 'kind = "python"\nparams = { controller = "agent", sack = true }') -> str:
        """The episode's scenario as TOML: the agents' flows (:attr:`agent_ids`, from ``s0``,
        ``s1``, …), then each competitor ``c{i}`` (from the next sources), over the bottleneck
        ``r1 -> r2``."""
        k = self.agents
        n = k + len(self.competitors)
        bdp_pkts = self.rate_mbps * 1e6 * self.base_rtt_s / (8 * 1500)
        limit = max(2, int(round(self.buffer_bdp * bdp_pkts)))
        rate = f'{{ trace = "{self.trace}" }}' if self.trace else f'"{self.rate_mbps}Mbps"'
        lines = [
            'name = "acclab-gym-dumbbell"',
            f'duration = "{self.duration_s}s"',
            f"seed = {self.seed}",
            "[defaults]",
            'packet_size = "1500B"',
            "[[link]]",
            'from = "r1"',
            'to = "r2"',
            f"rate = {rate}",
            f'delay = "{self.delay_ms}ms"',
            f'queue = {{ kind = "droptail", limit = "{limit}pkt" }}',
        ]
        if self.loss > 0:
            lines.append(f"loss = {self.loss}")
        lines += [
            "[[link]]",
            'from = "r2"',
            'to = "r1"',
            f'rate = "{self.rate_mbps}Mbps"',
            f'delay = "{self.delay_ms}ms"',
            "[[link]]",
            f"count = {n}",
            'between = ["s{i}", "r1"]',
            'rate = "10Gbps"',
            'delay = "1ms"',
            "[[link]]",
            f"count = {n}",
            'between = ["r2", "d{i}"]',
            'rate = "10Gbps"',
            'delay = "1ms"',
        ]
        for i, name in enumerate(self.agent_ids):
            lines += ["[[flow]]", f'id = "{name}"', agent_kind, f'from = "s{i}"', f'to = "d{i}"']
        for i, kind in enumerate(self.competitors):
            lines += [
                "[[flow]]",
                f'id = "c{i}"',
                f'kind = "{kind}"',
                f'from = "s{k + i}"',
                f'to = "d{k + i}"',
            ]
        return "\n".join(lines) + "\n"


class DumbbellEnv(gymnasium.Env):
    """Agent-driven flows on a dumbbell drawn per episode (see the module's docstring).

    Each of ``rate_mbps``, ``delay_ms``, ``buffer_bdp``, ``loss``, ``competitors`` is a number
    (fixed) or a ``(low, high)`` range drawn uniformly per episode; ``competitor_kinds`` the
    schemes competitors are drawn from; ``traces`` a list of Mahimahi capacity-trace files one
    of which (with probability ``trace_probability``) replaces the bottleneck's fixed rate.

    ``agents`` flows (1 by default) are the agent's, all stepped together: with more than one,
    the observation is ``(agents, features × history)``, the action one value per agent (a
    ``MultiDiscrete`` when discrete), the reward the sum of the agents' (``info["rewards"]``
    has each), and the monitor interval the smallest smoothed RTT among them.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        *,
        rate_mbps=(10.0, 100.0),
        delay_ms=(5.0, 50.0),
        buffer_bdp=(0.5, 4.0),
        loss=0.0,
        competitors=0,
        competitor_kinds: Sequence[str] = ("cubic", "reno"),
        traces: Sequence[str] = (),
        trace_probability: float = 0.0,
        duration_s: float = 10.0,
        agents: int = 1,
        mi: str | float = "rtt",
        history: int = 10,
        features: Sequence[str] = FEATURES,
        action: str = "rate-multiplier",
        discrete: int | None = None,
        action_scale: float = 1.0,
        max_cwnd: int = 10_000,
        max_rate_mbps: float = 10_000.0,
        reward: str = "aurora",
        alpha: float = 1.0,
        reward_scale: float | None = None,
    ):
        unknown = [f for f in features if f not in ALL_FEATURES]
        if unknown or not features:
            raise ValueError(f"features {unknown or '(none)'}: choose from {ALL_FEATURES}")
        if action not in ("rate-multiplier", "cwnd", "rate"):
            raise ValueError(f'action {action!r}: "rate-multiplier", "cwnd" or "rate"')
        if reward not in ("aurora", "alpha-fair", "power", "num"):
            raise ValueError(f'reward {reward!r}: "aurora", "alpha-fair", "power" or "num"')
        if not (mi == "rtt" or (isinstance(mi, (int, float)) and mi > 0)):
            raise ValueError(f'mi {mi!r}: "rtt" or a positive number of seconds')
        if history < 1:
            raise ValueError(f"history {history}: at least 1")
        if discrete is not None and discrete < 2:
            raise ValueError(f"discrete {discrete}: at least 2 values")
        if not isinstance(agents, int) or agents < 1:
            raise ValueError(f"agents {agents!r}: a whole number, at least 1")
        if not 0.0 <= trace_probability <= 1.0 or (trace_probability > 0 and not traces):
            raise ValueError("trace_probability in [0, 1], and traces to draw from when above 0")
        self.rate_mbps, self.delay_ms, self.buffer_bdp = rate_mbps, delay_ms, buffer_bdp
        self.loss, self.competitors = loss, competitors
        self.competitor_kinds = tuple(competitor_kinds)
        self.traces = [os.path.abspath(t) for t in traces]
        self.trace_probability = trace_probability
        self.duration_s = float(duration_s)
        self.agents = agents
        self.mi = mi
        self.history = int(history)
        self.features = tuple(features)
        self.action_kind = action
        self.discrete = discrete
        self.action_scale = float(action_scale)
        self.max_cwnd = int(max_cwnd)
        self.max_rate_mbps = float(max_rate_mbps)
        self.reward_kind = reward
        self.alpha = float(alpha)
        self.reward_scale = (0.01 if reward == "aurora" else 1.0) if reward_scale is None else reward_scale

        n = len(self.features) * self.history
        shape = (n,) if agents == 1 else (agents, n)
        self.observation_space = spaces.Box(-10.0, 10.0, shape=shape, dtype=np.float32)
        low, high = self._action_range()
        if discrete:
            self.action_space = spaces.Discrete(discrete) if agents == 1 else spaces.MultiDiscrete([discrete] * agents)
        else:
            self.action_space = spaces.Box(low, high, shape=(agents,), dtype=np.float32)
        self._sim: GymSim | None = None
        self.episode: Episode | None = None

    # ---- the pieces ------------------------------------------------------------------------

    def _action_range(self) -> tuple[float, float]:
        if self.action_kind == "rate-multiplier":
            return -self.action_scale, self.action_scale
        if self.action_kind == "cwnd":
            return 1.0, float(self.max_cwnd)
        return 0.1, self.max_rate_mbps

    def _action_limit(self) -> float:
        return {"rate-multiplier": self.action_scale, "cwnd": float(self.max_cwnd)}.get(
            self.action_kind, self.max_rate_mbps
        )

    def _actions(self, action) -> list[float]:
        """The action as one number per agent (the native side checks and maps them)."""
        a = np.asarray(action, dtype=np.float64).reshape(-1)
        if a.size != self.agents:
            raise ValueError(f"action of {a.size} values for {self.agents} agents")
        return a.tolist()

    def draw(self, rng: np.random.Generator, seed: int) -> Episode:
        """An episode's network drawn with ``rng``."""
        n = _draw(rng, self.competitors, integer=True)
        kinds = [str(rng.choice(self.competitor_kinds)) for _ in range(n)] if n else []
        trace = None
        if self.traces and rng.uniform() < self.trace_probability:
            trace = str(self.traces[int(rng.integers(len(self.traces)))])
        return Episode(
            rate_mbps=round(_draw(rng, self.rate_mbps), 3),
            delay_ms=round(_draw(rng, self.delay_ms), 3),
            buffer_bdp=_draw(rng, self.buffer_bdp),
            loss=round(_draw(rng, self.loss), 6),
            competitors=kinds,
            duration_s=self.duration_s,
            trace=trace,
            seed=seed,
            agents=self.agents,
        )

    def num_targets(self, ep: Episode) -> tuple[list[float], str]:
        """Each agent's rate in the proportional-fair optimum (bit/s), and where it came from."""
        if ep.trace is None and ep.loss == 0:
            text = ep.scenario_text('kind = "monaco"')
            for k in set(ep.competitors):
                text = text.replace(f'kind = "{k}"', 'kind = "monaco"')
            pred = json.loads(_acclab.theory(_acclab.Scenario.parse(text, "num-target")))
            rates = {f["id"]: f.get("throughput_bps") for f in pred["flows"]}
            if all(rates.get(a) is not None for a in ep.agent_ids):
                return [float(rates[a]) for a in ep.agent_ids], "theory"
        share = ep.rate_mbps * 1e6 / (ep.agents + len(ep.competitors))
        return [share] * ep.agents, "fair share"

    def _finish(self, out: np.ndarray, stepped) -> tuple[np.ndarray, float, bool, dict[str, Any]]:
        """The step's observation, reward, truncation and info from what the native side
        returned."""
        done, now, rewards, thr, rtt, loss = stepped
        info: dict[str, Any] = {"time_s": now}
        if self.agents == 1:
            info.update(throughput_bps=thr[0], rtt_s=rtt[0], loss=loss[0])
        else:
            info.update(throughput_bps=np.array(thr), rtt_s=np.array(rtt), loss=np.array(loss))
            info["rewards"] = np.array(rewards)
        if self.reward_kind == "num":
            info["num_target_bps"] = self._target if self.agents == 1 else np.array(self._targets)
            info["num_target"] = self._target_source
        return out, float(sum(rewards)), bool(done), info

    def _new_observation(self) -> np.ndarray:
        return np.empty(self.observation_space.shape, dtype=np.float32)

    # ---- gymnasium.Env --------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        ep_seed = int(self.np_random.integers(2**31))
        self.episode = ep = self.draw(self.np_random, ep_seed)
        bw = (ep.rate_mbps * 1e6) / (ep.agents + len(ep.competitors))
        # Aurora starts its rate at random in [0.3, 1.5] × the link's rate; a window at the
        # same multiple of the BDP.
        starts = [float(self.np_random.uniform(0.3, 1.5)) * bw for _ in range(ep.agents)]
        if self.action_kind == "cwnd":
            starts = [max(1500.0, x / 8 * ep.base_rtt_s) for x in starts]
        self._targets, self._target_source = [0.0] * ep.agents, ""
        if self.reward_kind == "num":
            self._targets, self._target_source = self.num_targets(ep)
        self._target = self._targets[0]
        mode = "window" if self.action_kind == "cwnd" else "rate"
        self._bdp_pkts = max(1.0, ep.rate_mbps * 1e6 * ep.base_rtt_s / (8 * 1500))
        watch = "r1->r2" if "queue" in self.features else None
        sc = _acclab.Scenario.parse(ep.scenario_text(), "episode")
        self._sim = GymSim(sc, ep.agent_ids, mode, starts, watch)
        self._sim.configure(
            features=list(self.features),
            history=self.history,
            action=self.action_kind,
            action_limit=self._action_limit(),
            discrete=self.discrete,
            max_rate_bps=self.max_rate_mbps * 1e6,
            reward=self.reward_kind,
            alpha=self.alpha,
            reward_scale=self.reward_scale,
            mi=None if self.mi == "rtt" else float(self.mi),
            base_rtt=ep.base_rtt_s,
            bdp_pkts=self._bdp_pkts,
            targets=self._targets,
        )
        out = self._new_observation()
        self._sim.env_start(out)
        return out, {"episode": ep}

    def step(self, action):
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        out = self._new_observation()
        obs, reward, truncated, info = self._finish(out, self._sim.env_step(self._actions(action), out))
        return obs, reward, False, truncated, info


class DumbbellVecEnv(VectorEnv):
    """``num_envs`` copies of :class:`DumbbellEnv` stepped together in Rust threads with the GIL
    released. Each copy is seeded ``seed + i`` and resets itself when its episode ends (the next
    step's observation is the new episode's first, as gymnasium's autoreset "next step" mode).
    Results equal stepping the copies one by one, whatever the threads.

    ``threads``: a number, or ``None`` (the default) to choose by measurement: handing steps to
    threads pays only when a step simulates enough (on 2 cores, from about 100 Mb/s links with
    RTT-long intervals), so every 2,000 steps it times 20 steps on one thread and 20 on every
    core (after 10 that wake the threads up) and keeps the faster."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, threads: int | None = None, **kwargs):
        self.envs = [DumbbellEnv(**kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.threads = threads
        self._cores = os.cpu_count() or 1
        self._tuning: dict[int, float] = {}
        self._steps = 0
        self._chosen = 1
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._done = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        seeds = [None] * self.num_envs if seed is None else (
            [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed)
        )
        obs, infos = zip(*(e.reset(seed=s) for e, s in zip(self.envs, seeds)))
        self._done[:] = False
        return np.stack(obs), {"episode": [i["episode"] for i in infos]}

    def step(self, actions):
        obs = np.zeros((self.num_envs,) + self.single_observation_space.shape, dtype=np.float32)
        rewards = np.zeros(self.num_envs)
        truncated = np.zeros(self.num_envs, dtype=bool)
        stepping, sims, acts = [], [], []
        for i, e in enumerate(self.envs):
            if self._done[i]:
                obs[i], _ = e.reset()
                continue
            stepping.append(i)
            sims.append(e._sim)
            acts.append(e._actions(actions[i]))
        threads = self._threads()
        t0 = time.perf_counter()
        results = _acclab.env_step_all(sims, acts, obs, stepping, threads) if sims else []
        if self.threads is None and threads in self._tuning:
            self._tuning[threads] += time.perf_counter() - t0
        infos: dict[str, Any] = {"throughput_bps": np.zeros(self.num_envs)}
        for i, (done, _now, r, thr, _rtt, _loss) in zip(stepping, results):
            rewards[i] = sum(r)
            infos["throughput_bps"][i] = sum(thr)
            truncated[i] = done
        self._done = truncated.copy()
        return obs, rewards, np.zeros(self.num_envs, dtype=bool), truncated, infos

    def _threads(self) -> int:
        """The threads for this step: the given number, or the tuner's choice."""
        if self.threads is not None or self._cores == 1:
            return self.threads or 1
        # Every 2,000 steps: 10 untimed on every core (the pool wakes up), 20 timed on one
        # thread, 20 timed on every core, then the faster.
        phase = self._steps % 2000
        self._steps += 1
        if phase == 0:
            self._tuning = {}
        if phase < 10:
            return self._cores
        if phase < 50:
            threads = 1 if phase < 30 else self._cores
            self._tuning.setdefault(threads, 0.0)
            return threads
        if phase == 50:
            self._chosen = min(self._tuning, key=self._tuning.get)
        return self._chosen


gymnasium.register(id="acclab/Dumbbell-v0", entry_point="acclab.gym:DumbbellEnv")
