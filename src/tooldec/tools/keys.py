"""Cache keys of plain values (tool dicts, schemas): their ``marshal`` bytes, format 2.

Equal bytes decode to equal values of the same types (``True``, ``1`` and ``1.0`` differ; dict
keys in their order); equal values written apart (another key order) only miss. Format 2 has no
back-references, so the bytes do not depend on which strings happen to be one object. Several
times quicker to make than a JSON encoding.

``_value_key`` (C, built by ``make setup`` through setup.py) writes marshal's bytes for JSON
values without marshal's UTF-8 codec call per string (most of the cost of keying a thousand tool
dicts); anything else it leaves to marshal, which is also used where the extension is absent or
``TOOLDEC_NATIVE=0`` is set. The bytes are the same either way (tests/tools/test_value_key.py).
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["NATIVE", "dict_keys", "value_key"]


def _load() -> Callable[[Any], bytes | None] | None:
    if os.environ.get("TOOLDEC_NATIVE", "1") == "0":
        return None
    try:
        from ._value_key import dumps
    except ImportError:
        return None
    return dumps


_native = _load()
NATIVE = _native is not None
"""Whether keys come from the compiled writer (decided once, at import)."""


def value_key(value: Any) -> bytes | None:
    """``marshal.dumps(value, 2)``, or ``None`` for what marshal cannot write (objects,
    subclasses, cycles)."""
    if _native is not None:
        found = _native(value)
        if found is not None:
            return found
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None


def dict_keys(values: Sequence[object]) -> list[bytes | None]:
    """``value_key`` of each exact dict in ``values``, ``None`` for anything else (a tool list's
    keys in one pass: one extension call per dict, marshal only for what it leaves)."""
    native = _native
    if native is None:
        return [value_key(v) if type(v) is dict else None for v in values]
    found = [native(v) if type(v) is dict else None for v in values]
    if None in found:
        found = [key if key is not None or type(v) is not dict else value_key(v) for key, v in zip(found, values)]
    return found
