"""Types of the compiled cache key (``_value_key.c``; see :mod:`tooldec.tools.keys`)."""

from typing import Any, final

@final
class Pieces:
    """A long list key's sorted pieces, not yet joined (a capsule)."""

def dumps(value: Any, /) -> bytes | None: ...
def list_key(values: list[object], /) -> tuple[bytes | Pieces, bytes, bytes, bytes] | None: ...
def list_join(pieces: Pieces, filed: list[bytes] | tuple[bytes, ...], /) -> bytes: ...
