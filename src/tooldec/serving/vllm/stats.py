"""Per-step timings of the vLLM processor, opt-in with ``TOOLDEC_VLLM_STATS=<path>``: what ``apply``
costs the engine's thread (and how much of it waited for masks), and the worker's time, which on a
CPU competes with the forward for cores (``benchmarks/serving.py`` reports them). One JSON line per
constrained step: ``t`` (epoch seconds), ``rows``, ``interval`` (the previous step's length),
``apply``, ``wait``, ``work``; line-buffered, so a terminated server loses nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TextIO

__all__ = ["ENV", "StepLog"]

ENV = "TOOLDEC_VLLM_STATS"


class StepLog:
    """Appends one line per constrained step to a file. ``add_work`` may be called from the
    worker thread; the other methods from the engine's thread only."""

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self._lock = threading.Lock()
        self._began: float | None = None
        self._interval: float | None = None
        self._work = 0.0

    @classmethod
    def from_env(cls) -> StepLog | None:
        """The log the environment asks for, or ``None``."""
        path = os.environ.get(ENV)
        return cls(open(path, "a", buffering=1, encoding="utf-8")) if path else None  # kept open for the engine's life

    def step_began(self) -> None:
        """Called by ``update_state``: a new step starts now."""
        now = time.perf_counter()
        self._interval = None if self._began is None else now - self._began
        self._began = now

    def add_work(self, seconds: float) -> None:
        """Time the worker spent on masks for the current step."""
        with self._lock:
            self._work += seconds

    def applied(self, rows: int, seconds: float, waited: float) -> None:
        """Called at the end of ``apply``: log this step."""
        with self._lock:
            work, self._work = self._work, 0.0
        record = {"t": time.time(), "rows": rows, "interval": self._interval, "apply": seconds, "wait": waited,
                  "work": work}
        self._handle.write(json.dumps(record) + "\n")
