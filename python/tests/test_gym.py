"""acclab.gym: the Gymnasium environments (issue 52 §2) — the checker's contract, determinism
per seed, the vector environment equal to the single one, the GIL released while stepping,
measurements that match what the network does, and clean errors for bad actions."""

import json
import threading
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import acclab
import acclab.gym as agym
from acclab._acclab import GymSim


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"discrete": 5},
        {"action": "cwnd", "reward": "power"},
        {"action": "rate", "discrete": 11, "reward": "alpha-fair"},
        {"reward": "num", "competitors": (0, 2), "mi": 0.02, "history": 3},
        {"features": agym.ALL_FEATURES, "buffer_bdp": 2.0},
        {"agents": 3, "reward": "num", "competitors": (0, 1)},
        {"agents": 2, "discrete": 5, "action": "cwnd"},
    ],
)
def test_every_variant_passes_the_gymnasium_checker(kwargs):
    env = agym.DumbbellEnv(duration_s=2.0, **kwargs)
    check_env(env, skip_render_check=True)


def test_the_registered_id_makes_the_default_environment():
    env = gym.make("acclab/Dumbbell-v0")
    obs, info = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape
    assert isinstance(info["episode"], agym.Episode)


def _episode(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append(np.append(obs, r))
        if trunc:
            break
    return np.concatenate(out)


def test_an_episode_is_the_same_for_the_same_seed_and_differs_for_another():
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, size=1).astype(np.float32) for _ in range(150)]
    env = agym.DumbbellEnv(duration_s=3.0, competitors=(0, 2), loss=(0.0, 0.01))
    a = _episode(env, 11, actions)
    b = _episode(agym.DumbbellEnv(duration_s=3.0, competitors=(0, 2), loss=(0.0, 0.01)), 11, actions)
    c = _episode(env, 12, actions)
    assert np.array_equal(a, b)
    assert not (a.shape == c.shape and np.array_equal(a, c))


def _vector_equals_singles(kwargs, copies, threads, seed, steps, action_shape) -> int:
    """Steps a vector environment and `copies` single ones with the same random actions,
    checking each step's observations, rewards and truncations are equal (the vector one
    resets a finished copy on the next step, "next step" mode); returns how many episodes
    ended."""
    vec = agym.DumbbellVecEnv(copies, threads=threads, **kwargs)
    singles = [agym.DumbbellEnv(**kwargs) for _ in range(copies)]
    vobs, _ = vec.reset(seed=seed)
    assert np.array_equal(vobs, np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(singles)]))
    rng = np.random.default_rng(seed)
    done, ends = [False] * copies, 0
    for _ in range(steps):
        acts = rng.uniform(-1, 1, size=(copies,) + action_shape).astype(np.float32)
        vo, vr, _, vt, _ = vec.step(acts)
        for i, e in enumerate(singles):
            if done[i]:
                o, r, t = e.reset()[0], 0.0, False
            else:
                o, r, _, t, _ = e.step(acts[i])
            assert np.array_equal(vo[i], o) and vr[i] == r and vt[i] == t
            done[i] = t
            ends += t
    return ends


@pytest.mark.parametrize("threads", [1, 2, None])
def test_the_vector_environment_equals_stepping_each_copy_alone(threads):
    ends = _vector_equals_singles({"duration_s": 2.0, "competitors": (0, 1)}, 3, threads, 5, 250, (1,))
    assert ends >= 3, "every copy finished an episode and started another"


def test_several_agents_step_together_and_earn_their_num_shares():
    # Two agent flows and one Reno on 30 Mb/s, equal RTTs: the proportionally fair optimum
    # gives each 10 Mb/s. Agents pacing at 8 and 12 Mb/s get what they pace at, and each MI
    # earns each -|x - 10 Mb/s| / 10 Mb/s for its own x, summed in the reward and told apart
    # in info.
    env = agym.DumbbellEnv(
        agents=2, rate_mbps=30.0, delay_ms=10.0, competitors=1, competitor_kinds=("reno",),
        reward="num", action="rate", duration_s=4.0, buffer_bdp=2.0,
    )
    obs, info = env.reset(seed=4)
    assert obs.shape == (2, len(agym.FEATURES) * 10)
    assert info["episode"].agent_ids == ["agent0", "agent1"]
    assert env._target_source == "theory"
    assert np.allclose(env._targets, [10e6, 10e6], rtol=1e-4), env._targets
    late = []
    while True:
        obs, r, _, trunc, info = env.step(np.array([8.0, 12.0], dtype=np.float32))
        assert r == pytest.approx(info["rewards"].sum())
        assert np.allclose(info["rewards"], -abs(info["throughput_bps"] - 10e6) / 10e6)
        if info["time_s"] > 2.0:
            late.append(info["throughput_bps"])
        if trunc:
            break
    # Reno takes the rest; each agent gets what it paces at less what it loses at the tail-drop
    # queue Reno keeps full: within 6%, and never more. (Measured: 3.5% and 4.7% below since
    # arrivals have keys of their own, 2026-11-28; within 3% before — which paced packets
    # meet a full queue is a phase effect of tail drop that the order of equal-time events
    # moves.)
    thr = np.mean(late, axis=0)
    assert np.allclose(thr, [8e6, 12e6], rtol=0.06), thr
    assert np.all(thr <= np.array([8e6, 12e6]) * 1.01), thr
    # One value per agent, always.
    with pytest.raises(ValueError, match="2 agents"):
        env.step(np.array([8.0], dtype=np.float32))


def test_the_vector_environment_steps_several_agents_as_the_single_one_does():
    kwargs = {"duration_s": 1.0, "agents": 2, "competitors": (0, 1)}
    assert agym.DumbbellVecEnv(2, **kwargs).observation_space.shape == (2, 2, len(agym.FEATURES) * 10)
    ends = _vector_equals_singles(kwargs, 2, 2, 8, 80, (2,))
    assert ends >= 2, "each copy finished an episode and started another"


def test_the_gil_is_released_while_the_simulation_steps():
    env = agym.DumbbellEnv(rate_mbps=200.0, delay_ms=10.0, duration_s=30.0)
    env.reset(seed=1)
    count = 0
    stop = False

    def spin():
        nonlocal count
        while not stop:
            count += 1

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)
    before = count
    t0 = time.perf_counter()
    env._sim.step([150e6], 25.0)  # 25 s of a 150 Mb/s flow: a long native step
    took = time.perf_counter() - t0
    during = count - before
    stop = True
    t.join()
    assert took > 0.05, f"the step took {took} s: too short to tell"
    assert during > 1000, f"the Python thread ran {during} times in {took:.2f} s"


def test_a_steady_rate_below_the_link_is_delivered_and_measured():
    # 10 Mb/s bottleneck, 10 ms each way: the agent paces at 8 Mb/s, so every MI delivers
    # 8 Mb/s with no queue (RTT = base RTT 24 ms) and no loss.
    env = agym.DumbbellEnv(rate_mbps=10.0, delay_ms=10.0, buffer_bdp=2.0, duration_s=5.0, action="rate")
    env.reset(seed=1)
    thr, rtts = [], []
    while True:
        _, _, _, trunc, info = env.step(np.array([8.0], dtype=np.float32))
        if info["time_s"] > 1.0:
            thr.append(info["throughput_bps"])
            rtts.append(info["rtt_s"])
        if trunc:
            break
    assert abs(np.mean(thr) - 8e6) < 0.02 * 8e6, np.mean(thr)
    assert abs(np.mean(rtts) - 0.024) < 0.0015, np.mean(rtts)


def test_the_queue_feature_sees_the_bottleneck_fill_when_the_rate_exceeds_it():
    # 12 Mb/s into a 10 Mb/s bottleneck with a 2-BDP buffer (40 packets): the backlog grows
    # 2 Mb/s ≈ 167 packets/s until the buffer is full, then stays near it (retransmission
    # bursts after losses let it dip a few packets), never above it.
    env = agym.DumbbellEnv(rate_mbps=10.0, delay_ms=10.0, buffer_bdp=2.0, duration_s=3.0, action="rate", features=("queue",), history=1)
    env.reset(seed=1)
    qs = []
    while True:
        obs, _, _, trunc, info = env.step(np.array([12.0], dtype=np.float32))
        qs.append((info["time_s"], float(obs[0]) * env._bdp_pkts))
        if trunc:
            break
    late = [q for t, q in qs if t > 1.5]
    assert min(late) >= 30 and max(late) <= 40 and np.mean(late) > 36, late


def test_the_cwnd_feature_is_the_window_over_the_bdp():
    env = agym.DumbbellEnv(rate_mbps=10.0, delay_ms=10.0, duration_s=1.0, action="cwnd", features=("cwnd", "action"), history=1)
    env.reset(seed=1)
    obs, *_ = env.step(np.array([20.0], dtype=np.float32))
    assert obs[0] == pytest.approx(20 / env._bdp_pkts, rel=1e-6)


def test_the_num_reward_targets_the_theorys_proportionally_fair_share():
    env = agym.DumbbellEnv(rate_mbps=20.0, delay_ms=10.0, competitors=1, competitor_kinds=("reno",), reward="num", duration_s=2.0)
    env.reset(seed=2)
    # Two flows of equal RTT on 20 Mb/s: the proportionally fair share is 10 Mb/s each.
    assert env._target_source == "theory"
    assert abs(env._target - 10e6) < 1e3, env._target
    _, r, _, _, info = env.step(np.array([0.0], dtype=np.float32))
    assert r == pytest.approx(-abs(info["throughput_bps"] - 10e6) / 10e6)


def test_bad_actions_and_settings_are_refused_with_what_was_wrong():
    env = agym.DumbbellEnv(duration_s=1.0)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="not a finite number"):
        env.step(np.array([np.nan], dtype=np.float32))
    denv = agym.DumbbellEnv(duration_s=1.0, discrete=4)
    denv.reset(seed=1)
    with pytest.raises(ValueError, match=r"an index in \[0, 4\)"):
        denv.step(7)
    with pytest.raises(ValueError, match="features"):
        agym.DumbbellEnv(features=("throughput?",))
    with pytest.raises(ValueError, match="positive finite"):
        env._sim.step([-1.0], 0.01)
    with pytest.raises(ValueError, match="monitor interval"):
        env._sim.step([1e6], 0.0)
    sc = acclab.parse(agym.Episode(10, 10, 1, 0, [], 1.0).scenario_text())
    with pytest.raises(ValueError, match="agent"):
        GymSim(sc, ["nobody"], "rate", [1e6])


def test_a_policy_learned_by_the_cross_entropy_method_beats_random_and_fixed_rates():
    # Issue 52 §3's cheap learner (examples/python/learn/cem.py): a few seconds of training on
    # a distribution of dumbbells; on held-out networks its mean episode reward (Aurora's)
    # beats a random policy's and a fixed rate's (measured, training seeds 0-2: 18.6-25.4 k
    # against 16.3 k and 16.0 k).
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples/python/learn"))
    import cem

    theta = cem.train(6, 12, 2, seed=0, log=lambda *_: None)
    env = cem.make_env()
    held_out = range(5000, 5006)
    learned = cem.score(env, cem.Linear(theta), held_out)
    rand = cem.score(env, cem.random_policy(np.random.default_rng(7)), held_out)
    fixed = cem.score(env, cem.hold, held_out)
    assert learned > 1.05 * rand and learned > 1.05 * fixed, (learned, rand, fixed)


def test_the_learning_example_evaluates_beside_the_rust_schemes(tmp_path):
    import csv
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples/python/learn/cem.py"
    subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)], check=True, capture_output=True)
    rows = list(csv.DictReader(open(tmp_path / "table.csv")))
    names = {r["controller"] for r in rows}
    assert names == {"learned (CEM)", "random", "fixed rate", "reno", "cubic", "bbr", "monaco"}
    assert all(float(r["throughput_mbps"]) > 0 and float(r["mean_rtt_ms"]) > 0 for r in rows)
    assert (tmp_path / "learned.png").stat().st_size > 1000


def test_without_gymnasium_the_import_says_what_to_install():
    import subprocess
    import sys

    code = "import sys; sys.modules['gymnasium'] = None; import acclab.gym"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode != 0
    assert 'pip install "acclab[gym]"' in r.stderr, r.stderr
