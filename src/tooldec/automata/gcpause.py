"""Pause Python's cyclic garbage collector while a grammar is built.

A build allocates a hundred thousand small objects, none garbage; the collector's passes over them were a third to
half of the compile time of JSONSchemaBench's largest schemas. The switch is process-wide, so a pause belongs to
the thread that switched the collector off and ends with that thread's outermost one (overlapping builds never
keep it off longer than one build); none starts when the collector is already off (the host's choice).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_owner: int | None = None
"""The thread whose pause switched the collector off, if one did."""
_depth = 0
"""Nesting depth of the owner's pauses."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with the cyclic collector off (see the module docstring)."""
    global _owner, _depth
    me = threading.get_ident()
    with _lock:
        if _owner is None and gc.isenabled():
            gc.disable()
            _owner = me
        owned = _owner == me
        if owned:
            _depth += 1
    try:
        yield
    finally:
        if owned:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    _owner = None
                    gc.enable()
