"""Type stubs of the native module (python/src/lib.rs)."""

from typing import Any, Callable, Mapping, Sequence

__version__: str

class Scenario:
    """A scenario: read from a file or text, made by a Builder, patched by key path."""

    @staticmethod
    def load(path: str) -> Scenario: ...
    @staticmethod
    def parse(text: str, file: str = "<string>") -> Scenario: ...
    def set(self, key: str, value: Any) -> None:
        """Sets the value at a key path, checked as the file would be (ScenarioError if not)."""
    def update(self, values: Mapping[str, Any]) -> None:
        """Sets several key paths at once, then checks the scenario."""
    def to_toml(self) -> str: ...
    def check(self) -> None: ...
    def cost(self) -> str: ...
    def copy(self) -> Scenario: ...
    @property
    def name(self) -> str: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def flows(self) -> list[str]: ...
    @property
    def links(self) -> list[str]: ...
    @property
    def has_sweep(self) -> bool: ...

class Builder:
    """The typed builder; every method returns the builder."""

    def __init__(self, name: str, duration_: str) -> None: ...
    def seed(self, seed: int) -> Builder: ...
    def default_queue(self, queue_: Mapping[str, Any]) -> Builder: ...
    def link(
        self,
        src: str,
        dst: str,
        rate_: str,
        delay: str,
        queue_: Mapping[str, Any] | None = None,
        loss: float | None = None,
    ) -> Builder: ...
    def duplex(
        self,
        a: str,
        b: str,
        rate_: str,
        delay: str,
        queue_: Mapping[str, Any] | None = None,
        loss: float | None = None,
    ) -> Builder: ...
    def flow(
        self,
        id: str,
        kind: str,
        src: str,
        dst: str,
        params: Mapping[str, Any] | None = None,
        start: str | None = None,
        stop: str | None = None,
        start_jitter: str | None = None,
        class_: str | None = None,
        path: Sequence[str] | None = None,
    ) -> Builder: ...
    def topology(
        self,
        kind: str,
        rate_: str,
        delay: str,
        queue_: Mapping[str, Any] | None = None,
        k: int | None = None,
        oversubscription: int | None = None,
        leaves: int | None = None,
        spines: int | None = None,
        hosts_per_leaf: int | None = None,
        tiers: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Builder: ...
    def workload(self, table: Mapping[str, Any]) -> Builder: ...
    def shared_buffer(self, nodes: Sequence[str], size: str, alpha: float = 1.0) -> Builder: ...
    def ecmp(self, mode: str) -> Builder: ...
    def window(self, start: str, end: str) -> Builder: ...
    def sample_interval(self, every: str) -> Builder: ...
    def set_rate(self, at: str, link: str, rate_: str) -> Builder: ...
    def set_delay(self, at: str, link: str, delay: str) -> Builder: ...
    def build(self) -> Scenario: ...

class SweepPlan:
    def __init__(
        self,
        scenario: Scenario,
        grid: Mapping[str, Any] | None = None,
        seeds: int | Sequence[int] | None = None,
        zip: Sequence[Sequence[str]] | None = None,
        metrics: Sequence[str] | None = None,
    ) -> None: ...
    def runs(self) -> list[tuple[int, str, int, list[tuple[str, str]]]]: ...
    @property
    def python(self) -> bool:
        """Whether the scenario has flows with controllers written in Python."""
    @property
    def text(self) -> str: ...
    @property
    def keys(self) -> list[str]: ...
    def to_json(self) -> str: ...
    def table(self, summaries: list[str]) -> tuple[str, str]: ...
    def run_local(
        self,
        out: str,
        jobs: int | None = None,
        keep_runs: bool = False,
        progress: Callable[[int, int], None] | None = None,
        threads: int | str | None = None,
    ) -> tuple[str, str]: ...
    def __len__(self) -> int: ...

def run(
    scenario: Scenario,
    seed: int | None = None,
    out: str | None = None,
    progress: Callable[[float], None] | None = None,
    controllers: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None,
    threads: int | str | None = None,
) -> tuple[str, str | None]: ...

class RateSample:
    """A delivery-rate sample: bytes ``delivered`` over ``interval`` ns, ``delivery_rate``
    bit/s, ``is_app_limited``, ``total_delivered`` bytes."""

    delivered: int
    interval: int
    delivery_rate: int
    is_app_limited: bool
    total_delivered: int

class Ack:
    """An ACK of new data, as ``Controller.on_ack`` sees it (times in ns)."""

    acked_bytes: int
    rtt: int | None
    in_flight: int
    in_recovery: bool
    highest_sent: int
    cumulative_ack: int
    ecn_echo: bool
    ce_segments: int | None
    one_way_delay: int | None
    rate: RateSample | None

class CongestionEvent:
    """``kind``: "loss", "ecn" or "timeout"; ``in_flight`` (FlightSize) and ``pipe``, bytes."""

    kind: str
    in_flight: int
    pipe: int

class Sent:
    """A segment just sent, as ``Controller.on_sent`` sees it."""

    seq: int
    bytes: int
    in_flight: int
    retransmission: bool
def model(
    scenario: Scenario,
    out: str,
    step: str | None = None,
    grouping: str = "homogeneous",
    progress: Callable[[float], None] | None = None,
) -> tuple[str, str | None]: ...
def theory(scenario: Scenario) -> str: ...
def summary_table(summary_json: str) -> str: ...
def run_point(
    text: str,
    patches: list[tuple[str, str]],
    seed: int,
    controllers: Callable[[str, dict, dict], Any] | None = None,
    threads: int | str | None = None,
) -> str: ...

class GymSim:
    """A run stepped one monitor interval at a time (acclab.gym): the flows named in
    ``agents`` are ``kind = "python"`` flows with ``controller = "agent"``; ``mode`` "window"
    (actions in bytes) or "rate" (bit/s); ``initial`` each agent's first action; ``watch`` a
    link whose queue (packets) each step reports as ``queue_pkts``."""

    def __init__(
        self, scenario: Scenario, agents: list[str], mode: str, initial: list[float], watch: str | None = None
    ) -> None: ...
    @staticmethod
    def fields() -> list[str]: ...
    def step(self, actions: list[float], interval_s: float) -> list[list[float]]: ...
    def configure(
        self,
        *,
        features: list[str],
        history: int,
        action: str,
        action_limit: float,
        discrete: int | None,
        max_rate_bps: float,
        reward: str,
        alpha: float,
        reward_scale: float,
        mi: float | None,
        base_rtt: float,
        bdp_pkts: float,
        targets: list[float],
        packet_bytes: float = 1500.0,
    ) -> int:
        """The environment's per-step work in Rust (features, history, action, reward); returns
        the observation's length per agent."""
    def env_start(self, out: Any) -> EnvStep:
        """The first interval at the initial settings; the observation into ``out`` (float32)."""
    def env_step(self, actions: list[float], out: Any) -> EnvStep:
        """One environment step; the observation into ``out`` (float32, agents × length)."""
    def now(self) -> float: ...
    def end(self) -> float: ...
    def done(self) -> bool: ...

def step_all(
    sims: list[GymSim], actions: list[list[float]], intervals: list[float], threads: int
) -> list[list[list[float]]]: ...

#: (done, time s, rewards, throughputs bit/s, RTTs s, loss fractions), one entry per agent.
EnvStep = tuple[bool, float, list[float], list[float], list[float], list[float]]

def env_step_all(
    sims: list[GymSim], actions: list[list[float]], out: Any, rows: list[int], threads: int
) -> list[EnvStep]: ...
