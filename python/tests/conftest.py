"""Shared fixtures: the repository, the acclab binary, a small scenario."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def acclab_bin() -> str:
    """The command-line binary to compare with: $ACCLAB_BIN, or target/release/acclab (built
    here if it is not there yet)."""
    path = os.environ.get("ACCLAB_BIN") or str(ROOT / "target/release/acclab")
    if not Path(path).is_file():
        subprocess.run(
            ["cargo", "build", "--release", "-p", "acclab-cli", "--quiet"], cwd=ROOT, check=True
        )
    return path


SMALL = """
name = "small"
duration = "2s"
seed = 7

[[link]]
between = ["s", "r"]
rate = "100Mbps"
delay = "1ms"

[[link]]
between = ["r", "d"]
rate = "20Mbps"
delay = "10ms"
loss = 0.0005
queue = { kind = "droptail", limit = "50pkt" }

[[flow]]
id = "a"
kind = "reno"
from = "s"
to = "d"
start_jitter = "200ms"

[[flow]]
id = "b"
kind = "reno"
from = "s"
to = "d"
start_jitter = "200ms"

[output]
window = ["0.5s", "2s"]
"""


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
