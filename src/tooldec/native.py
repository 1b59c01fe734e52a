"""tooldec's optional C extensions: without a compiler, the install goes on and tooldec runs the
same algorithms in Python (``TOOLDEC_NATIVE=0`` too: the tests run both ways and compare)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["compiled"]


def compiled(name: str) -> ModuleType | None:
    """The compiled module ``name`` (e.g. ``tooldec.decoding._trie_walk``), or ``None`` if it is not
    built or ``TOOLDEC_NATIVE=0`` is set."""
    if os.environ.get("TOOLDEC_NATIVE", "1") == "0":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
