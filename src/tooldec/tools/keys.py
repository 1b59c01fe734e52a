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
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, cast

from ..native import compiled

__all__ = ["NATIVE", "SAMPLE_STEP", "SAMPLE_WHOLE", "Filed", "ListKey", "dict_keys", "list_key", "value_key", "value_keys"]


Filed = Callable[[int, bytes], list[bytes]]
"""What a cache holds under a list key's length and sample (see :func:`list_key`)."""


_module = compiled("tooldec.tools._value_key")
_native: Callable[[Any], bytes | None] | None = _module.dumps if _module is not None else None
_native_list: Callable[[list[object]], tuple[object, bytes, bytes, bytes] | None] | None = (
    _module.list_key if _module is not None else None)
_native_join: Callable[[object, list[bytes] | tuple[()]], bytes] | None = _module.list_join if _module is not None else None
NATIVE = _module is not None
"""Whether keys come from the compiled writer (decided once, at import)."""
SAMPLE_WHOLE = 4096
"""A list key of at most this many bytes is its own sample (such keys all begin alike)."""
SAMPLE_STEP = 64
"""A longer key is sampled every this many bytes (as ``_value_key.c`` does)."""


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


def value_keys(values: Sequence[object]) -> list[bytes | None]:
    """``value_key`` of each of ``values`` (a new tool list's schemas: one extension call each,
    no Python call between; marshal only for what the extension leaves)."""
    native = _native
    if native is None:
        return [value_key(v) for v in values]
    found = [native(v) for v in values]
    if None in found:
        found = [key if key is not None else value_key(v) for key, v in zip(found, values)]
    return found


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


@dataclass(frozen=True)
class ListKey:
    """The key of a list of dicts whatever its order: their ``value_key`` bytes sorted and joined
    (marshal bytes are self-delimiting, so the join is unambiguous); for each sorted key, the
    item it is the key of (``order``) and where it ends in the join (``ends``), as int64 arrays
    (a list seen before needs no Python int per item); what a cache may file it by (``sample``:
    the join up to :data:`SAMPLE_WHOLE` bytes, else every :data:`SAMPLE_STEP`-th byte of it)."""

    data: bytes
    order: array[int]
    ends: array[int]
    sample: bytes

    def keys(self) -> list[bytes]:
        """Each item's key, in the list's order (what a list seen for the first time looks its
        dicts up by)."""
        out = [b""] * len(self.order)
        start = 0
        for i, end in zip(self.order, self.ends):
            out[i] = self.data[start:end]
            start = end
        return out


def list_key(values: Sequence[object], filed: Filed | None = None) -> ListKey | None:
    """The :class:`ListKey` of ``values``, ``None`` unless each is a dict ``value_key`` writes.

    The extension writes the dicts into one buffer and sorts them there (a request's tool list
    seen before costs this and one lookup: no bytes object per dict, no sort in Python); the
    same key, from ``dict_keys``, where it is absent or leaves a value to marshal. The
    extension keeps that buffer for the next call, up to 2 MB (the GIL guards it).

    ``filed(length, sample)`` gives the keys a cache holds under a key's length and sample, asked
    between the extension's two calls (neither runs Python code): a key of more than
    :data:`SAMPLE_WHOLE` bytes equal to one is that bytes object, compared where its pieces lie
    instead of written again (a cache then finds it by identity). Not called without the extension.
    """
    if _native_list is not None and _native_join is not None and type(values) is list:
        found = _native_list(values)
        if found is not None:
            data, packed_order, packed_ends, sample = found
            ends = array("q", packed_ends)  # the extension's native int64s: one copy, no int objects
            if type(data) is not bytes:  # a long key's sorted pieces, joined or found filed
                data = _native_join(data, filed(ends[-1], sample) if filed is not None else ())
            return ListKey(data, array("q", packed_order), ends, sample)
    if not all(type(v) is dict for v in values):
        return None
    keys = dict_keys(values)
    if None in keys:
        return None
    present = cast(list[bytes], keys)
    order = sorted(range(len(present)), key=present.__getitem__)
    data = b"".join(map(present.__getitem__, order))
    return ListKey(data, array("q", order), array("q", accumulate(len(present[i]) for i in order)),
                   data if len(data) <= SAMPLE_WHOLE else data[::SAMPLE_STEP])
