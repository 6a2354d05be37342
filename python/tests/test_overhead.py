"""A sweep of 20 short runs through Python costs no more than 10% over the command line's.

Python's `sweep` hands the whole sweep to the Rust code `acclab sweep` runs — the plan's
`run_local` calls acclab_study's `pending`, `execute` and `collect`, as the command line does —
so what Python adds is what it does outside that call: building the plan, the progress bar,
reading the tables into frames. The test measures exactly that, in CPU time (user + system of
this process, one sweep thread): the whole `sweep` call, and the `run_local` call inside it (a
profile hook marks its start and end, then removes itself so it slows nothing after). Both are
taken in the same call, so the machine's load moves them together and cannot decide the outcome;
and the command line's cost is at least that of the shared part (it runs the same functions and
more: its own start-up, its charts), so Python's overhead over the shared part bounds its
overhead over the command line.

(It used to compare the best of seven separate Python and command-line sweeps: on this project's
2-core VMs the same sweep's CPU time varies by up to 15% from one try to the next — the
hypervisor takes 30–40% of the CPUs while they are busy — and the check failed in CI with the
true overhead about 1%. The command line's time is still measured and printed beside it.)"""

import resource
import subprocess
import sys
from pathlib import Path

import acclab


def cpu(who) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def test_python_sweep_overhead_is_within_ten_percent(small_file: Path, tmp_path: Path, acclab_bin: str):
    text = small_file.read_text().replace('duration = "2s"', 'duration = "40s"')
    small_file.write_text(text)
    sc = acclab.load(small_file)
    grid = {"flow.a.params.initial_window": [2, 10]}

    marks: dict[str, float] = {}

    def mark(frame, event, arg):
        if event in ("c_call", "c_return") and getattr(arg, "__name__", "") == "run_local":
            marks[event] = cpu(resource.RUSAGE_SELF)
            if event == "c_return":
                sys.setprofile(None)

    t0 = cpu(resource.RUSAGE_SELF)
    sys.setprofile(mark)
    try:
        frame = acclab.sweep(sc, grid=grid, seeds=10, jobs=1, progress=False)
    finally:
        sys.setprofile(None)
    total = cpu(resource.RUSAGE_SELF) - t0
    assert set(marks) == {"c_call", "c_return"}, f"run_local was not seen: {marks}"
    shared = marks["c_return"] - marks["c_call"]
    overhead = total - shared
    assert len(frame["run"].unique()) == 20

    c0 = cpu(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [acclab_bin, "sweep", str(small_file), "--set", "flow.a.params.initial_window=2,10", "--seeds", "10", "--jobs", "1", "--out", str(tmp_path / "cli"), "--quiet"],
        check=True,
    )
    cli = cpu(resource.RUSAGE_CHILDREN) - c0
    print(f"CPU s: python sweep {total:.3f}, of it the shared Rust sweep {shared:.3f} (overhead {overhead:.3f}); command line {cli:.3f}")
    assert shared > 0.2, f"runs too short to compare: {shared} s"
    assert overhead <= 0.10 * shared, f"Python adds {overhead:.3f} s of CPU to a {shared:.3f} s sweep"
