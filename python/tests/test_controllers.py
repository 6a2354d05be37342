"""Controllers written in Python (acclab.controller): the reference ones give the Rust
controllers' runs byte for byte; errors in user code end the run cleanly, naming the callback,
the flow and the time."""

import csv
import json
import math
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import acclab
from acclab.controller import ControllerError

# Four flows on a 20 Mb/s bottleneck with a short buffer and random loss: slow start, fast
# recovery, timeouts and (with `queue`) ECN marks all happen within a few seconds.
DUMBBELL = """
name = "py-dumbbell"
duration = "4s"
seed = 3

[[link]]
between = ["r1", "r2"]
rate = "20Mbps"
delay = "5ms"
loss = 0.001
queue = {queue}

[[link]]
count = 4
between = ["s{{i}}", "r1"]
rate = "1Gbps"
delay = "1ms"

[[link]]
count = 4
between = ["r2", "d{{i}}"]
rate = "1Gbps"
delay = "1ms"

[[flow]]
count = 4
id = "f{{i}}"
kind = "{kind}"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "200ms"
params = {params}

[output]
window = ["1s", "4s"]
sample_interval = "20ms"
"""

DROPTAIL = '{ kind = "droptail", limit = "30pkt" }'
STEP_ECN = '{ kind = "step-ecn", limit = "60pkt", threshold = "10pkt" }'


def scenario(kind: str, params: str, queue: str = DROPTAIL) -> acclab.Scenario:
    return acclab.parse(DUMBBELL.format(kind=kind, params=params, queue=queue))


# The Rust controllers' own state columns of flows.csv, which a Python controller does not
# report (its sender reports ssthresh_bytes and pacing_rate_bps as any TCP sender's).
OWN_STATE = {"cubic": ["w_max_bytes"], "dctcp": ["alpha"]}


def same_files(rust: Path, python: Path, kind: str, what: str = "") -> None:
    """links.csv identical; flows.csv too, cell for cell, but for the Rust controller's own
    state columns, which it has (and fills) and the Python run has not."""
    assert (rust / "links.csv").read_bytes() == (python / "links.csv").read_bytes(), what
    rust_rows = list(csv.reader(open(rust / "flows.csv")))
    py_rows = list(csv.reader(open(python / "flows.csv")))
    own = OWN_STATE.get(kind, [])
    assert rust_rows[0] == py_rows[0] + own, what
    keep = len(py_rows[0])
    assert [r[:keep] for r in rust_rows] == py_rows, what
    assert not own or any(r[keep] for r in rust_rows[1:]), what


def same_runs(rust: acclab.Scenario, python: acclab.Scenario, tmp_path: Path, kind: str = "reno") -> None:
    """The two runs' flows.csv and links.csv are identical (but for the Rust controller's own
    state columns), and so is every per-flow number of their summaries but the scheme's name
    and the theory (the theory has no model of a Python controller)."""
    a = acclab.run(rust, out=tmp_path / "rust", progress=False)
    b = acclab.run(python, out=tmp_path / "python", progress=False)
    same_files(tmp_path / "rust", tmp_path / "python", kind)
    strip = lambda f: {k: v for k, v in f.items() if k not in ("kind", "theory", "model")}
    fa = [strip(f) for f in a.summary_json["flows"]]
    fb = [strip(f) for f in b.summary_json["flows"]]
    assert fa == fb
    # The runs did what the comparison needs: losses, and windows that moved.
    assert sum(f["lost_packets"] for f in fa) > 0
    assert a.flows["cwnd_bytes"].nunique() > 20


def test_reno_in_python_runs_as_the_rust_reno(tmp_path: Path):
    same_runs(
        scenario("reno", "{}"),
        scenario("python", '{ controller = "acclab.examples.reno:Reno" }'),
        tmp_path,
    )


def test_reno_with_byte_counting_and_sack_and_delayed_acks(tmp_path: Path):
    tcp = 'sack = true, delayed_ack = "40ms", initial_window = 4'
    same_runs(
        scenario("reno", f"{{ byte_counting = true, {tcp} }}"),
        scenario(
            "python",
            f'{{ controller = "acclab.examples.reno:Reno", args = {{ byte_counting = true }}, {tcp} }}',
        ),
        tmp_path,
    )


def test_dctcp_in_python_runs_as_the_rust_dctcp(tmp_path: Path):
    rust = scenario("dctcp", "{ g = 0.125 }", STEP_ECN)
    python = scenario(
        "python",
        '{ controller = "acclab.examples.dctcp:Dctcp", args = { g = 0.125 }, ecn = true, sack = true }',
        STEP_ECN,
    )
    same_runs(rust, python, tmp_path, "dctcp")
    links = acclab.run(rust, progress=False).summary_json["links"]
    assert sum(l["marks"] for l in links) > 0


def test_a_controller_given_by_name_or_file(tmp_path: Path):
    code = tmp_path / "mine.py"
    code.write_text(
        "from acclab.examples.reno import Reno\n"
        "class Fixed(Reno):\n"
        "    def __init__(self, flow, packets):\n"
        "        super().__init__(flow)\n"
        "        self.cwnd = packets * flow.mss\n"
        "    def on_ack(self, now, ack):\n"
        "        pass\n"
        "    def on_congestion(self, now, event):\n"
        "        pass\n"
    )
    from_file = acclab.run(
        scenario("python", f'{{ controller = "{code}:Fixed", args = {{ packets = 3 }} }}'),
        progress=False,
    )
    assert set(from_file.flows["cwnd_bytes"].dropna()) == {3 * 1000}  # the default packet size, 1000 B

    class Five(acclab.Controller):
        def __init__(self, flow):
            self.cwnd = 5 * flow.mss

    by_name = acclab.run(
        scenario("python", '{ controller = "five" }'), progress=False, controllers={"five": Five}
    )
    assert set(by_name.flows["cwnd_bytes"].dropna()) == {5 * 1000}


class Failing(acclab.Controller):
    def __init__(self, flow, when=math.inf, value=None):
        self.cwnd = 10 * flow.mss
        self.when, self.value = when, value

    def on_ack(self, now, ack):
        if now >= self.when:
            if self.value is None:
                raise KeyError("boom")
            self.cwnd = self.value


@pytest.mark.parametrize(
    "args, cause",
    [
        ("when = 500_000_000", KeyError),
        ('when = 500_000_000, value = "many"', TypeError),
        ("when = 500_000_000, value = -1", ValueError),
        ("when = 500_000_000, value = nan", ValueError),
    ],
)
def test_errors_in_a_controller_name_the_callback_flow_and_time(args, cause, tmp_path):
    sc = scenario("python", f'{{ controller = "failing", args = {{ {args} }} }}')
    with pytest.raises(ControllerError) as e:
        acclab.run(sc, progress=False, out=tmp_path / "out", controllers={"failing": Failing})
    err = e.value
    assert err.callback == "on_ack" and err.controller == "failing"
    assert err.flow.startswith("f")
    assert 0.5 <= err.time_s < 0.6
    assert isinstance(err.__cause__, cause)
    assert "on_ack" in str(err) and err.flow in str(err)
    # Nothing half-written is left where the results were to go.
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_controller_that_cannot_be_made_is_an_error():
    with pytest.raises(ControllerError) as e:
        acclab.run(scenario("python", '{ controller = "nowhere:Nothing" }'), progress=False)
    assert e.value.callback == "__init__" and isinstance(e.value.__cause__, ImportError)
    with pytest.raises(ControllerError) as e:
        acclab.run(scenario("python", '{ controller = "unknown" }'), progress=False)
    assert "not one given to acclab.run" in str(e.value)
    with pytest.raises(acclab.ScenarioError, match="controller"):
        scenario("python", "{}")


def test_the_command_line_runs_python_controllers_through_python(acclab_bin: str, tmp_path: Path):
    # `acclab run SC --controller NAME=file.py:Class` hands the run to `python -m acclab run`
    # ($ACCLAB_PYTHON): the same files as the Rust scheme's command-line run, byte for byte.
    import os
    import sys

    reno = Path(acclab.__file__).parent / "examples" / "reno.py"
    py = tmp_path / "py.toml"
    py.write_text(DUMBBELL.format(kind="python", params='{ controller = "mine" }', queue=DROPTAIL))
    rust = tmp_path / "rust.toml"
    rust.write_text(DUMBBELL.format(kind="reno", params="{}", queue=DROPTAIL))
    env = {**os.environ, "ACCLAB_PYTHON": sys.executable}
    run = lambda *args: subprocess.run([acclab_bin, "run", *args], capture_output=True, text=True, env=env)
    p = run(str(py), "--out", str(tmp_path / "p"), "--seed", "5", "--controller", f"mine={reno}:Reno", "--quiet")
    assert p.returncode == 0, p.stderr
    r = run(str(rust), "--out", str(tmp_path / "r"), "--seed", "5", "--quiet")
    assert r.returncode == 0, r.stderr
    same_files(tmp_path / "r", tmp_path / "p", "reno")
    # An unknown module fails through Python's message; a binding on a scenario without
    # Python flows, and flags the Python run does not take, are refused up front.
    bad = tmp_path / "bad.toml"
    bad.write_text(DUMBBELL.format(kind="python", params='{ controller = "nosuchmodule:Y" }', queue=DROPTAIL))
    e = run(str(bad), "--out", str(tmp_path / "b"))
    assert e.returncode != 0 and "nosuchmodule" in e.stderr and "-m acclab run" in e.stderr, e.stderr
    e = run(str(rust), "--out", str(tmp_path / "c"), "--controller", f"mine={reno}:Reno")
    assert e.returncode != 0 and "has none" in e.stderr, e.stderr
    e = run(str(py), "--plots", "--controller", f"mine={reno}:Reno")
    assert e.returncode != 0 and "--plots is not available" in e.stderr, e.stderr
    e = run(str(py), "--out", str(tmp_path / "d"), "--controller", "mine")
    assert e.returncode != 0 and "NAME=file.py:Class" in e.stderr, e.stderr


def test_cubic_in_python_runs_as_the_rust_cubic(tmp_path: Path):
    same_runs(
        scenario("cubic", "{ beta = 0.75 }"),
        scenario(
            "python",
            '{ controller = "acclab.examples.cubic:Cubic", args = { beta = 0.75 }, sack = true }',
        ),
        tmp_path,
        "cubic",
    )


class Stepped(acclab.Controller):
    """A window of 2, 3, 4, … segments, one more every 100 ms, from its own timer."""

    def __init__(self, flow):
        assert 0 < flow.start < 200_000_000  # the scenario's start_jitter
        self.mss, self.start = flow.mss, flow.start
        self.cwnd, self.timer = 2 * flow.mss, 100_000_000

    def on_timer(self, now):
        # On time, or, due before the flow started, at its start.
        assert now == self.timer or self.timer < self.start == now
        self.cwnd += self.mss
        self.timer = (now // 100_000_000 + 1) * 100_000_000


def test_a_controller_sets_its_own_timer():
    sc = scenario("python", '{ controller = "stepped" }').copy()
    r = acclab.run(sc, progress=False, controllers={"stepped": Stepped})
    f0 = r.flows[r.flows["flow"] == "f0"].set_index("time_s")["cwnd_bytes"]
    # Samples every 20 ms; the window at t is 2 + ⌊t / 100 ms⌋ segments.
    for t in [0.52, 1.02, 2.54, 3.98]:
        assert f0[t] == (2 + int(round(t * 1000)) // 100) * 1000, t


class Stuck(acclab.Controller):
    def __init__(self, flow):
        self.cwnd, self.timer = 2 * flow.mss, 300_000_000

    def on_timer(self, now):
        pass  # leaves the timer where it was: it would fire forever


def test_a_timer_that_does_not_move_on_is_an_error():
    with pytest.raises(ControllerError, match="`timer` must be later than now") as e:
        acclab.run(scenario("python", '{ controller = "stuck" }'), progress=False,
                   controllers={"stuck": Stuck})
    assert e.value.callback == "on_timer" and e.value.time_s == 0.3


@pytest.mark.parametrize("seed", range(6))
def test_random_scenarios_run_the_same_with_the_python_controllers(seed, tmp_path: Path):
    """Random dumbbells (rate, delay, buffer, loss, TCP options, scheme): each Rust scheme and
    its Python twin give the same files — the adapter hands every callback the same arguments
    in the same order, whatever the transport does."""
    import random

    r = random.Random(seed)
    kind, cls, queue = r.choice(
        [
            ("reno", "reno:Reno", DROPTAIL),
            ("cubic", "cubic:Cubic", DROPTAIL),
            ("dctcp", "dctcp:Dctcp", STEP_ECN),
        ]
    )
    rate, delay = r.choice(["5Mbps", "20Mbps", "80Mbps"]), r.choice(["1ms", "5ms", "20ms"])
    loss = r.choice([0.0, 0.0005, 0.005])
    limit = r.choice([8, 30, 200])
    queue = queue.replace("limit = \"30pkt\"", f'limit = "{limit}pkt"')
    tcp = [f"sack = {str(r.random() < 0.5).lower()}"]
    if r.random() < 0.5:
        tcp.append(f'delayed_ack = "{r.choice(["1ms", "40ms"])}"')
    if r.random() < 0.5:
        tcp.append(f"initial_window = {r.randint(1, 10)}")

    def text(kind: str, params: list[str]) -> str:
        t = DUMBBELL.format(kind=kind, params="{ " + ", ".join(params) + " }", queue=queue)
        t = t.replace('rate = "20Mbps"', f'rate = "{rate}"', 1)
        t = t.replace('delay = "5ms"', f'delay = "{delay}"', 1)
        return t.replace("loss = 0.001", f"loss = {loss}", 1)

    ecn = ["ecn = true"] if kind == "dctcp" else []
    rust = acclab.parse(text(kind, tcp))
    python = acclab.parse(text("python", [f'controller = "acclab.examples.{cls}"'] + tcp + ecn))
    a = acclab.run(rust, out=tmp_path / "rust", progress=False)
    acclab.run(python, out=tmp_path / "python", progress=False)
    same_files(tmp_path / "rust", tmp_path / "python", kind, text(kind, tcp))
    assert a.summary_json["events"] > 10_000


def _sweep_frame(sc: acclab.Scenario, **kwargs):
    df = acclab.sweep(sc, grid={'link."r1->r2".rate': ["10Mbps", "20Mbps"]}, seeds=2, progress=False, **kwargs)
    # The run ids hash the scenario (which names the scheme), so they differ too.
    return df.drop(columns=[c for c in df.columns if c in ("run", "kind") or c.startswith("theory")])


def test_a_sweep_of_python_controllers_runs_in_processes_and_matches_rust(tmp_path: Path):
    # Python controllers hold the GIL, so a local sweep runs them in processes (2 here, and 1
    # in this one); either way the table is the Rust Reno sweep's but for the scheme's name.
    from acclab.examples.reno import Reno

    rust = _sweep_frame(scenario("reno", "{}"))
    python = scenario("python", '{ controller = "mine" }')
    two = _sweep_frame(python, controllers={"mine": Reno}, jobs=2, out=tmp_path / "sweep")
    one = _sweep_frame(python, controllers={"mine": Reno}, jobs=1)
    assert (rust["entity"] == "flow").sum() == 16  # 2 points × 2 seeds × 4 flows
    pd.testing.assert_frame_equal(rust, two)
    pd.testing.assert_frame_equal(rust, one)
    written = pd.read_csv(tmp_path / "sweep" / "runs.csv")
    assert len(written) == len(rust) and (tmp_path / "sweep" / "aggregate.csv").exists()
    with pytest.raises(ValueError, match="keep_runs"):
        acclab.sweep(python, controllers={"mine": Reno}, keep_runs=True, progress=False)
