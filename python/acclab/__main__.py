"""``python -m acclab run``: a run whose scenario has controllers written in Python.

The ``acclab`` command hands such a run here (``acclab run SC --controller NAME=file.py:Class``
execs ``python3 -m acclab run ...``, or ``$ACCLAB_PYTHON``), since only Python can run them::

    python -m acclab run SCENARIO.toml [--out DIR] [--seed N] [--set KEY=VALUE]...
                         [--controller NAME=file.py:Class | NAME=module:Class]... [--quiet]

``--set`` values are TOML values where they parse as one (``--set flow.f0.params.beta=0.7``),
strings otherwise (``--set 'link."r1->r2".rate=50Mbps'``). A flow's ``controller`` key names a
``--controller`` binding, or a ``file.py:Class`` / ``module:Class`` directly.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

import acclab


def _value(text: str):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _binding(text: str) -> tuple[str, str]:
    name, sep, spec = text.partition("=")
    if not sep or not name or ":" not in spec:
        raise argparse.ArgumentTypeError(
            f"--controller {text!r}: NAME=file.py:Class or NAME=module:Class"
        )
    return name, spec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m acclab", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="simulate a scenario with Python controllers")
    r.add_argument("scenario", type=Path)
    r.add_argument("--out", type=Path)
    r.add_argument("--seed", type=int)
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--controller", action="append", default=[], type=_binding, metavar="NAME=SPEC")
    r.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    try:
        sc = acclab.load(args.scenario)
        for kv in args.set:
            key, sep, value = kv.partition("=")
            if not sep:
                ap.error(f"--set {kv!r}: KEY=VALUE")
            sc.set(key, _value(value))
        out = args.out or Path("results") / sc.name
        controllers = {name: acclab.controller._load(spec, {}) for name, spec in args.controller}
        acclab.run(sc, seed=args.seed, out=out, progress=not args.quiet, controllers=controllers)
    except (acclab.ScenarioError, acclab.ControllerError, ValueError, OSError, AttributeError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"Results in {out}/: summary.json, flows.csv, links.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
