"""Types of the compiled cache key (``_value_key.c``; see :mod:`tooldec.tools.keys`)."""

from typing import Any

def dumps(value: Any, /) -> bytes | None: ...
