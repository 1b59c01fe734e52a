"""Pause Python's cyclic garbage collector while a grammar is built.

Building a schema's automaton allocates a hundred thousand small lists and tuples in a few
milliseconds, none of them garbage and none in a reference cycle. Every 700 allocations the
collector walks the young objects, every ten of those passes the older ones, and now and then
the whole heap: on JSONSchemaBench's largest schemas those passes were a third to half of the
compile's CPU time (20 to 55 ms a schema, measured with the collector on and off). Paused, the
objects that survive are walked once by the next collection after the build instead of at every
pass during it; garbage cycles made meanwhile are collected then.

The collector's switch is process-wide, so a pause belongs to the thread that switched it off
(its nested pauses extend it) and ends with that thread's outermost one, even if other threads
are still building: they ran with the collector off meanwhile, and their own pauses do nothing.
Builds that keep overlapping in several threads therefore never keep the collector off for
longer than one build. A pause never starts when the collector is already off (the host's
choice), and only the pause that switched it off switches it back on.
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
