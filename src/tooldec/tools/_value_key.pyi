"""Types of the compiled cache key (``_value_key.c``; see :mod:`tooldec.tools.keys`)."""

from collections.abc import Callable, Sequence
from typing import Any

def dumps(value: Any, /) -> bytes | None: ...
def list_key(values: list[object], filed: Callable[[int, bytes], Sequence[bytes]] | None = None, /
             ) -> tuple[bytes, bytes, bytes, bytes] | None: ...
