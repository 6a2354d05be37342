"""acclab: a laboratory for closed-loop congestion control, from Python.

Scenarios are read from TOML files (``acclab.load``), text (``acclab.parse``) or made with a
builder (``acclab.Builder``), and patched by key path (``sc.set("flow.f0.params.weight", 10)``)
with the same checks and messages as the command line. Runs and sweeps come back as pandas
DataFrames with the command line's column names::

    import acclab
    sc = acclab.load("scenarios/examples/parking-lot.toml")
    r = acclab.run(sc, seed=1)
    r.flows           # flows.csv: one row per flow and sample
    r.summary         # one row per flow and link (and the run): summary.json's metrics
    r.fct             # fct.csv: one row per finite flow (a workload's), with its slowdown
    m = acclab.model(sc)   # the model tier (fluid dynamics): the same frames and columns
    df = acclab.sweep(sc, grid={"flow.long.kind": ["reno", "monaco"]}, seeds=10)
    df, agg = acclab.sweep(sc, grid=…, seeds=10, aggregate=True)   # + mean, std, 95% CI

``acclab.sweep(..., client=dask.distributed.Client(...))`` runs the same sweep on a Dask
cluster; each task carries the scenario's text, the point's values and a seed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import _acclab
from . import controller as _controller
from ._acclab import Builder, Scenario
from .controller import Controller, ControllerError

__version__ = _acclab.__version__

__all__ = [
    "Builder",
    "Controller",
    "ControllerError",
    "Run",
    "Scenario",
    "ScenarioError",
    "load",
    "model",
    "parse",
    "run",
    "sweep",
    "theory",
]


class ScenarioError(ValueError):
    """A scenario that failed to load or a value that was refused: where, which key, and why.

    ``file`` names the file (or the scenario), ``line`` is the 1-based line when known (else
    None), ``key`` the key path (``flow[2].params.weight``, ``link."r1->r2".rate``).
    """

    def __init__(self, message: str, file: str, line: int | None, key: str):
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: key `{key}`: {message}")

    def __reduce__(self):
        return (ScenarioError, (self.message, self.file, self.line, self.key))


def load(path: str | os.PathLike[str]) -> Scenario:
    """Reads a scenario file (and its ``[sweep]`` table, if it has one)."""
    return Scenario.load(os.fspath(path))


def parse(text: str, file: str = "<string>") -> Scenario:
    """Reads scenario text; ``file`` names it in errors."""
    return Scenario.parse(text, file)


def _bar(total: float, desc: str, enabled: bool, unit: str):
    """A tqdm progress bar (in a terminal or a notebook), or None."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    # disable=None: shown on a terminal or in Jupyter, silent when output is redirected.
    return tqdm(total=total, desc=desc, unit=unit, disable=None, leave=False)


def _read_csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


@dataclass
class Run:
    """A finished run.

    ``flows`` and ``links`` are flows.csv and links.csv (a row per sample); ``summary`` has a
    row per entity (``entity`` = run, flow or link; ``id``; ``kind``) and summary.json's
    metrics as columns (nested ones joined with ``_``: ``theory_throughput_bps``);
    ``summary_json`` is summary.json itself; ``theory`` what the theory predicted for the
    scenario (or None, with ``no_theory`` saying why); ``dir`` where the files are, if kept;
    ``fct`` is fct.csv (a row per finite flow: size, start, completion time, ideal completion
    time, slowdown, the sender's retransmits and timeouts; empty ``fct_s`` for flows unfinished
    at the end), None for runs without finite flows. A ``[[workload]]``'s flows are in ``fct``
    and counted by ``summary_json["unlisted_flows"]``, not listed in summary.json, unless the
    scenario sets ``[output] flow_summaries = true``.
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    summary: pd.DataFrame
    summary_json: dict[str, Any]
    theory: dict[str, Any] | None
    no_theory: str | None = None
    dir: Path | None = None
    fct: pd.DataFrame | None = None

    def flow(self, id: str) -> pd.DataFrame:
        """The samples of one flow."""
        return self.flows[self.flows["flow"] == id]


def _collect(scenario: Scenario, out, progress: bool, what: str, call) -> Run:
    """Runs ``call(dir, tick)`` (a native run writing flows.csv, links.csv and summary.json
    into ``dir``, returning summary.json's text and why the theory has no prediction) with a
    progress bar, and reads its files into a ``Run``; the directory is ``out`` or a temporary
    one, removed after."""
    keep = out is not None
    if keep:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        if (d / "summary.json").exists():
            raise FileExistsError(f"{d} already holds a run's results; choose another directory")
        # Written beside ``out`` and moved in only when whole: a run that fails or is
        # interrupted (Ctrl-C) leaves nothing half-written there.
        work = Path(tempfile.mkdtemp(prefix=f".{d.name}.partial-", dir=d.parent))
    else:
        d = work = Path(tempfile.mkdtemp(prefix=f"acclab-{what}-"))
    bar = _bar(100, scenario.name, progress, "%")
    try:

        def tick(fraction: float) -> None:
            if bar is not None:
                bar.n = round(100 * fraction)
                bar.refresh()

        text, no_theory = call(os.fspath(work), tick)
        flows = pd.read_csv(work / "flows.csv")
        links = pd.read_csv(work / "links.csv")
        fct = pd.read_csv(work / "fct.csv") if (work / "fct.csv").exists() else None
        if keep:
            # summary.json last: its presence says the rest is there.
            names = sorted(p.name for p in work.iterdir())
            for name in sorted(names, key=lambda n: n == "summary.json"):
                os.replace(work / name, d / name)
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(work, ignore_errors=True)
    summary_json = json.loads(text)
    eq = None
    if no_theory is None:
        eq = json.loads(_acclab.theory(scenario))
    return Run(
        flows=flows,
        links=links,
        summary=_read_csv(_acclab.summary_table(text)),
        summary_json=summary_json,
        theory=eq,
        no_theory=no_theory,
        dir=d if keep else None,
        fct=fct,
    )


def run(
    scenario: Scenario,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    controllers: Mapping[str, Any] | None = None,
    threads: int | str | None = None,
) -> Run:
    """Simulates ``scenario`` (with ``seed`` instead of its own, if given).

    ``threads`` (``"auto"`` or 1–256; default ``$ACCLAB_THREADS``, or ``"auto"``) runs it on the
    parallel engine, with the serial run's results, when it can be parallel (``acclab run
    --threads``); ``"auto"`` takes as many of the machine's cores as the network is estimated to
    gain from (a fabric of k = 8 and up; a dumbbell stays serial).

    The samples are read into DataFrames; with ``out`` the run's files (summary.json,
    flows.csv, links.csv) stay there, otherwise they are removed. A progress bar shows on a
    terminal and in Jupyter. The GIL is released while simulating, unless the scenario has
    flows of ``kind = "python"``: their controllers (``acclab.controller``) are the classes
    named in ``controllers`` (``{"name": Class}``), or ``module:Class`` / ``file.py:Class``.
    """
    make = _controller._factory(controllers)
    return _collect(
        scenario,
        out,
        progress,
        "run",
        lambda d, tick: _acclab.run(scenario, seed, d, tick, make, threads),
    )


def model(
    scenario: Scenario,
    out: str | os.PathLike[str] | None = None,
    step: str | None = None,
    grouping: str = "homogeneous",
    progress: bool = True,
) -> Run:
    """Integrates the model tier on ``scenario`` (what ``acclab model`` does): the papers'
    fluid and discrete-time dynamics on its topology, as a ``Run`` with the simulator's frames
    and columns (``summary_json["mode"] == "model"``; ``events`` counts integration steps).

    ``step`` is the integration step (``"500us"``; default: the shortest round-trip
    propagation delay / 16), ``grouping`` which flows are integrated as one (``each``,
    ``identical`` or ``homogeneous``). A scenario outside the model's domain raises
    ValueError naming each part and why. Files and progress as ``run``'s.
    """
    return _collect(
        scenario,
        out,
        progress,
        "model",
        lambda d, tick: _acclab.model(scenario, d, step, grouping, tick),
    )


def theory(scenario: Scenario) -> dict[str, Any]:
    """The equilibrium the theory predicts (what ``acclab theory --json`` prints)."""
    return json.loads(_acclab.theory(scenario))


def _run_point(
    text: str,
    patches: list[tuple[str, str]],
    seed: int,
    controllers: Mapping[str, Any] | None = None,
    threads: int | str | None = None,
) -> str:
    """One run of a sweep on a Dask worker or in a process of a Python-controller sweep: plain
    data in (scenario text, the point's values as TOML text, a seed, the controllers as
    ``run`` takes them, the run's threads), summary.json's text out."""
    make = _controller._factory(controllers) if controllers is not None else None
    return _acclab.run_point(text, patches, seed, make, threads)


def _python_sweep(plan, controllers, jobs: int | None, bar) -> list[str]:
    """Every run of a sweep whose flows have Python controllers: they hold the GIL, so the
    runs go to ``jobs`` processes (default: every core; 1 runs them here), each a whole run."""
    runs = plan.runs()
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(runs)))
    args = [(plan.text, patches, seed, controllers) for (_, _, seed, patches) in runs]
    if jobs == 1:
        out = []
        for a in args:
            out.append(_run_point(*a))
            if bar is not None:
                bar.update(1)
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Spawned, not forked: this process may have Rust threads (a fork copies their locks).
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_run_point, *a) for a in args]
        for f in futures:
            f.result()
            if bar is not None:
                bar.update(1)
        return [f.result() for f in futures]


def sweep(
    scenario: Scenario,
    grid: Mapping[str, Any] | None = None,
    seeds: int | Sequence[int] | None = None,
    zip: Iterable[Sequence[str]] | None = None,
    metrics: Sequence[str] | None = None,
    client: Any = None,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    keep_runs: bool = False,
    progress: bool = True,
    aggregate: bool = False,
    controllers: Mapping[str, Any] | None = None,
    threads: int | str | None = None,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Runs ``scenario`` at every point of ``grid`` with every seed; returns the tidy table.

    ``grid`` maps key paths to values: a list (``[1, 10, 100]``; a string in it may be a
    range), or a string as on the command line (``"10Mbps..100Mbps/10"``, ``"1..1000/4 log"``,
    ``"droptail,avq"``). Keys are crossed unless ``zip`` groups them. ``seeds`` is a count
    (the scenario's seed and those after it) or a list. A ``[sweep]`` table in the scenario's
    file is the starting point.

    The frame has a row per run and entity — the columns of ``acclab sweep``'s runs.csv: run,
    point, seed, the swept keys, entity, id, kind, then every metric. With ``aggregate=True``
    the result is ``(runs, aggregate)``, the second aggregate.csv's frame: per point, entity
    and metric over the seeds, n, mean, std and the 95% confidence interval of the mean.

    With ``client=None`` the runs go on ``jobs`` threads (default: every core) into the sweep
    directory ``out`` (resumable, with the charts, as the command line's; a temporary one when
    None). With a ``dask.distributed.Client`` each run is a task on that cluster and the frame
    is the same.

    ``threads`` is each run's (``acclab sweep --threads``): ``"auto"`` (the default locally, or
    ``$ACCLAB_THREADS``) gives a run the cores the runs at once leave — one each when there are
    more runs than cores; a count runs every run on that many (the parallel engine, the serial
    run's results). A Dask task runs on ``threads`` of its worker (default ``$ACCLAB_THREADS``
    there, or 1). Runs with Python controllers are serial.

    Flows of ``kind = "python"`` take their controllers from ``controllers`` as ``run`` does
    (classes, or ``module:Class`` / ``file.py:Class`` names; on Dask the classes travel to the
    workers by pickling). Their runs hold the GIL, so locally they go to ``jobs`` processes;
    ``out`` then receives runs.csv and aggregate.csv only (no resumable run records, no
    charts), and ``keep_runs`` is refused.
    """
    plan = _acclab.SweepPlan(
        scenario,
        dict(grid) if grid is not None else None,
        seeds,
        [list(g) for g in zip] if zip is not None else None,
        list(metrics) if metrics is not None else None,
    )
    runs = plan.runs()
    if plan.python and client is None:
        if keep_runs:
            raise ValueError("keep_runs: a sweep with Python controllers keeps no run records")
        bar = _bar(len(runs), f"sweep {scenario.name}", progress, "run")
        try:
            summaries = _python_sweep(plan, controllers, jobs, bar)
        finally:
            if bar is not None:
                bar.close()
        runs_csv, agg_csv = plan.table(summaries)
        if out is not None:
            d = Path(out)
            d.mkdir(parents=True, exist_ok=True)
            for name, text in (("runs.csv", runs_csv), ("aggregate.csv", agg_csv)):
                tmp_file = d / f".{name}.partial"
                tmp_file.write_text(text)
                tmp_file.replace(d / name)
    elif client is None:
        tmp = None
        if out is None:
            tmp = tempfile.mkdtemp(prefix="acclab-sweep-")
            d = Path(tmp) / "sweep"
        else:
            d = Path(out)
        bar = _bar(len(runs), f"sweep {scenario.name}", progress, "run")
        try:

            def tick(done: int, total: int) -> None:
                if bar is not None:
                    bar.total = total
                    bar.n = done
                    bar.refresh()

            runs_csv, agg_csv = plan.run_local(os.fspath(d), jobs, keep_runs, tick, threads)
        finally:
            if bar is not None:
                bar.close()
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
    else:
        text = plan.text
        ctl = controllers if plan.python else None
        futures = [
            client.submit(_run_point, text, patches, seed, ctl, threads, key=f"acclab-run-{run_id}", pure=False)
            for (_, run_id, seed, patches) in runs
        ]
        bar = _bar(len(futures), f"sweep {scenario.name} (dask)", progress, "run")
        try:
            if bar is not None:
                from dask.distributed import as_completed

                for _ in as_completed(futures):
                    bar.update(1)
            summaries = client.gather(futures)
        finally:
            if bar is not None:
                bar.close()
        runs_csv, agg_csv = plan.table(list(summaries))
    df = _read_csv(runs_csv)
    if aggregate:
        return df, _read_csv(agg_csv)
    return df
