"""A sweep on a real Dask cluster — a scheduler and two workers started as separate processes on
loopback — gives the frame a local sweep gives."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import acclab
from test_api import GRID


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path: Path):
    from dask.distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    logs = [open(tmp_path / f"{n}.log", "w") for n in ("scheduler", "worker1", "worker2")]
    procs = [
        subprocess.Popen(
            [str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=logs[0], stderr=subprocess.STDOUT, env=env,
        )
    ]
    try:
        for log in logs[1:]:
            procs.append(
                subprocess.Popen(
                    [str(bindir / "dask"), "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--local-directory", str(tmp_path)],
                    stdout=log, stderr=subprocess.STDOUT, env=env,
                )
            )
        client = None
        deadline = time.monotonic() + 120
        while client is None:
            try:
                client = Client(address, timeout=5)
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
                time.sleep(0.2)
        client.wait_for_workers(2, timeout=120)
        yield client
        client.close()
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs[::-1]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def test_a_dask_cluster_gives_the_local_frame(small_file: Path, cluster):
    sc = acclab.load(small_file)
    from dask.distributed import get_task_stream

    local, local_agg = acclab.sweep(sc, grid=GRID, seeds=3, progress=False, aggregate=True)
    with get_task_stream(client=cluster) as stream:
        remote, remote_agg = acclab.sweep(sc, grid=GRID, seeds=3, client=cluster, progress=False, aggregate=True)
    pd.testing.assert_frame_equal(local, remote)
    pd.testing.assert_frame_equal(local_agg, remote_agg)
    # Both workers took part: the scheduler's record of where each of the 12 runs went.
    runs = [t for t in stream.data if str(t["key"]).startswith("acclab-run-")]
    assert len(runs) == 12, stream.data
    assert len({t["worker"] for t in runs}) == 2, [t["worker"] for t in runs]
    # A bad point fails before any task is sent.
    with pytest.raises(acclab.ScenarioError):
        acclab.sweep(sc, grid={"flow.a.params.initial_window": [0]}, client=cluster, progress=False)


def test_python_controllers_travel_to_the_dask_workers(cluster):
    # A sweep whose flows run a Python Reno: the class goes to the workers by pickling, and
    # the frame is the local sweep's (which runs it in processes).
    from acclab.examples.reno import Reno
    from test_controllers import scenario

    sc = scenario("python", '{ controller = "mine" }')
    grid = {'link."r1->r2".rate': ["10Mbps", "20Mbps"]}
    local = acclab.sweep(sc, grid=grid, controllers={"mine": Reno}, jobs=2, progress=False)
    remote = acclab.sweep(sc, grid=grid, controllers={"mine": Reno}, client=cluster, progress=False)
    pd.testing.assert_frame_equal(local, remote)
    assert local["throughput_bps"].notna().any()
