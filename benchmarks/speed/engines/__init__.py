"""One adapter per constrained-decoding engine, all behind :class:`~.base.Engine`.

Peers are optional (the ``bench`` extra), so adapters are imported by name only when a cell
runs them: a missing peer fails its own cells, not the whole benchmark.
"""

from __future__ import annotations

import importlib

from .base import Engine

__all__ = ["ENGINES", "Engine", "load_engine"]

ENGINES: dict[str, str] = {
    "tooldec": "tooldec:ToolDecEngine",
    "xgrammar": "xgrammar:XGrammarEngine",
    "llguidance": "llguidance:LLGuidanceEngine",
    "outlines-core": "outlines_core:OutlinesCoreEngine",
}


def load_engine(name: str) -> Engine:
    """A fresh adapter for ``name`` (a key of :data:`ENGINES`).

    Raises:
        KeyError: an unknown engine name.
        ImportError: the engine's package is not installed.
    """
    module_name, cls_name = ENGINES[name].split(":")
    module = importlib.import_module(f"{__name__}.{module_name}")
    engine: Engine = getattr(module, cls_name)()
    return engine
