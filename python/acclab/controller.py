"""Congestion controllers written in Python.

A flow of ``kind = "python"`` runs acclab's TCP transport (NewReno or SACK loss recovery, ECN,
pacing, delayed ACKs — the same code as every Rust scheme) with a controller that is a Python
class::

    [[flow]]
    id = "f0"
    kind = "python"
    params = { controller = "reno", args = { byte_counting = false }, size = "1MB" }

``controller`` is a name given to ``acclab.run(sc, controllers={"reno": MyReno})``, a
``module:Class`` (imported), or a ``path/to/file.py:Class`` (loaded from the file). The class is
made once per flow as ``Class(flow, **args)``; ``flow`` says what it may need to know
(:class:`Flow`). It then hears the transport's events, as Linux's ``tcp_congestion_ops`` and
quinn's ``Controller`` do:

``on_ack(now, ack)``
    new data was acknowledged (:class:`acclab._acclab.Ack`: ``acked_bytes``, ``rtt``,
    ``in_flight``, ``in_recovery``, ``ecn_echo``, ``ce_segments`` (the marked segments Accurate
    ECN newly reports, L4S flows only; else ``None``), ``one_way_delay`` (data sent → ACK sent,
    ns), ``highest_sent``, ``cumulative_ack``, and
    ``rate``, a delivery-rate sample, if the class sets ``wants_rate_samples = True``);
``on_congestion(now, event)``
    a congestion signal (:class:`acclab._acclab.CongestionEvent`: ``kind`` is ``"loss"`` — the
    transport enters fast recovery and retransmits —, ``"ecn"`` — an echo, at most once per
    RTT — or ``"timeout"``; ``in_flight`` is FlightSize, ``pipe`` RFC 6675's estimate);
``on_recovery_end(now)`` (optional)
    fast recovery ended;
``on_sent(now, sent)`` (optional)
    a segment left (``seq``, ``bytes``, ``in_flight``, ``retransmission``);
``on_timer(now)``
    the time the controller set in ``self.timer`` (ns; None: no timer) came. A timer must be
    later than the time it is set at; ``on_timer`` sets the next one or None.

After ``__init__`` and each callback the transport reads ``self.cwnd`` (the congestion window,
bytes; a float's fraction is dropped), ``self.ssthresh`` (bytes, ``math.inf`` before the first
reduction, or None; it says when the flow is in slow start, for the statistics) and
``self.pacing_rate`` (bit/s, or None for no pacing; a controller that paces sets it in
``__init__``) and ``self.timer``. During fast recovery the transport inflates the window itself (RFC 6582), as
for the Rust controllers. Times are integer nanoseconds, rates bit/s. An exception in a
callback, or a ``cwnd`` that is not a finite number ≥ 0, ends the run with a
:class:`ControllerError` naming the class, callback, flow and simulated time.

``acclab/examples/`` (``reno.py``, ``dctcp.py``, ``cubic.py``) holds the reference controllers,
which give the same runs, byte for byte, as the Rust ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

__all__ = ["Controller", "ControllerError", "Flow"]


@dataclass(frozen=True)
class Flow:
    """What a controller is told about its flow when it is made."""

    id: str
    #: Data packet size, bytes (headers included): the segment the window counts in.
    mss: int
    #: The flow's ``initial_window`` parameter, segments.
    initial_window: int
    #: Unloaded round-trip time (propagation both ways plus serialisation), ns.
    base_rtt: int
    #: The rate of the flow's first link, bit/s.
    line_rate: int
    #: Links on the forward path.
    hops: int
    #: The run's seed (for a controller that draws random numbers: seed its own generator).
    seed: int
    #: When the flow starts, ns (its ``start`` plus its drawn jitter). A timer due before it
    #: fires at the start.
    start: int


class Controller:
    """Base class of Python congestion controllers (see the module's documentation)."""

    #: Congestion window, bytes.
    cwnd: float = 0
    #: Slow-start threshold, bytes; ``math.inf`` until the first reduction; None: none.
    ssthresh: float | None = None
    #: Pacing rate, bit/s; None: not paced.
    pacing_rate: float | None = None
    #: Whether ``on_ack`` gets a delivery-rate sample (``ack.rate``).
    wants_rate_samples: bool = False
    #: When ``on_timer`` is due, ns; None: never.
    timer: int | None = None

    def on_ack(self, now: int, ack: Any) -> None:
        """New data was acknowledged."""

    def on_congestion(self, now: int, event: Any) -> None:
        """A loss, an ECN echo or a timeout."""

    def on_timer(self, now: int) -> None:
        """``self.timer`` came."""
        self.timer = None


class ControllerError(RuntimeError):
    """A Python controller failed: its exception (the ``__cause__``) or a bad value, in
    ``callback`` of the controller ``controller`` of flow ``flow`` at simulated time
    ``time_s`` (None: while it was made)."""

    def __init__(
        self, message: str, controller: str, flow: str, callback: str, time_s: float | None
    ):
        super().__init__(message)
        self.controller = controller
        self.flow = flow
        self.callback = callback
        self.time_s = time_s

    def __reduce__(self):
        return (
            ControllerError,
            (str(self), self.controller, self.flow, self.callback, self.time_s),
        )


def _load(name: str, given: Mapping[str, Any]) -> Callable[..., Any]:
    """The class ``name`` names: one of ``given``, ``module:Class`` or ``file.py:Class``."""
    if name in given:
        return given[name]
    where, sep, cls = name.rpartition(":")
    if not sep or not where or not cls:
        known = ", ".join(sorted(given)) or "none"
        raise ValueError(
            f"controller {name!r} is not one given to acclab.run (given: {known}), "
            "nor a `module:Class` or `file.py:Class`"
        )
    if where.endswith(".py"):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"controller {name!r}: no file {path}")
        spec = importlib.util.spec_from_file_location(
            f"acclab_controller_{abs(hash(path))}", path
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    try:
        return getattr(module, cls)
    except AttributeError:
        raise AttributeError(f"controller {name!r}: {where} has no {cls!r}") from None


def _factory(given: Mapping[str, Any] | None) -> Callable[[str, dict, dict], Any]:
    """What the native run calls for each ``python`` flow: ``make(controller, args, flow)``."""
    given = dict(given or {})
    classes: dict[str, Callable[..., Any]] = {}

    def make(name: str, args: dict, flow: dict) -> Any:
        if name not in classes:
            classes[name] = _load(name, given)
        return classes[name](Flow(**flow), **args)

    return make


