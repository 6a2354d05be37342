"""Issue 55 §5: no Rust panic crosses into Python, and Ctrl-C (or any exception raised while a
run calls back into Python) ends a run or a sweep promptly and leaves nothing half-written."""

import os
import signal
import threading
from pathlib import Path

import pytest

import acclab
from conftest import SMALL

# Tens of seconds of simulation on the 2-core machine (9 Gb/s of packets for 60 s): long
# enough that an interrupt 0.3 s in finds it running.
LONG = """
name = "long"
duration = "60s"
[[link]]
between = ["s", "d"]
rate = "10Gbps"
delay = "1ms"
[[flow]]
id = "a"
kind = "cbr"
from = "s"
to = "d"
params = { rate = "9Gbps" }
"""


def interrupt_in(seconds: float) -> threading.Timer:
    """Sends this process SIGINT (what Ctrl-C sends) after `seconds`."""
    t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_interrupts_a_run_and_leaves_no_results(tmp_path: Path):
    sc = acclab.parse(LONG)
    out = tmp_path / "out"
    timer = interrupt_in(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            acclab.run(sc, out=out, progress=False)
    finally:
        timer.cancel()
    # Interrupted, not finished and then interrupted: nothing was published, nothing is left
    # half-written beside it.
    assert not (out / "summary.json").exists()
    assert list(out.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_ctrl_c_stops_a_sweep(tmp_path: Path):
    sc = acclab.parse(LONG)
    timer = interrupt_in(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            acclab.sweep(sc, grid={"flow.a.params.rate": ["8Gbps", "9Gbps"]}, seeds=2, out=tmp_path / "sw", progress=False, jobs=1)
    finally:
        timer.cancel()
    # No run's record is half-written: any that exists is whole JSON.
    for record in (tmp_path / "sw").rglob("*.json"):
        import json

        json.loads(record.read_text())


def test_an_exception_in_a_progress_callback_ends_the_run(tmp_path: Path):
    sc = acclab.parse(LONG)

    class Stop(Exception):
        pass

    def tick(fraction: float) -> None:
        if fraction > 0.01:
            raise Stop()

    with pytest.raises(Stop):
        acclab._acclab.run(sc, None, os.fspath(tmp_path), tick)


def test_huge_seeds_and_steps_are_errors_not_panics(small_file: Path, tmp_path: Path):
    sc = acclab.load(small_file)
    with pytest.raises(acclab.ScenarioError) as e:
        acclab.sweep(sc, grid={"flow.a.params.initial_window": [2]}, seeds=[2**63], progress=False)
    assert "2^63 - 1" in str(e.value)
    with pytest.raises((ValueError, OverflowError)):
        acclab.run(sc, seed=2**63, progress=False)
    # A step that would run for hours: refused before anything is allocated (it aborted the
    # interpreter on a failed allocation).
    lossless = acclab.parse(SMALL.replace("loss = 0.0005\n", "").replace('"2s"', '"600s"'))
    with pytest.raises(ValueError) as e:
        acclab.model(lossless, out=tmp_path / "m", step="1ns", progress=False)
    assert "time:" in str(e.value) and "--step" in str(e.value), e.value
