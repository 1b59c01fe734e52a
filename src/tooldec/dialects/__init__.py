"""Call formats: how a tool call is written, one class per format, looked up by name.

Each dialect gives the grammar pieces of a call (trigger, head, the tail after the name), parses
calls out of generated text, writes a call as text (``format_call``, for prompts and tests) and
writes a tool's result back in the format's own way.

Examples:
    >>> sorted(DIALECTS)
    ['hermes', 'llama3_json', 'mistral', 'pythonic', 'react', 'toolkengpt']
    >>> get_dialect("react")
    ReAct()
    >>> get_dialect("json")
    Traceback (most recent call last):
    ...
    tooldec.errors.UnknownDialectError: no dialect named 'json'; known: hermes, llama3_json, mistral, pythonic, react, toolkengpt
"""

from __future__ import annotations

from typing import Any

from ..errors import UnknownDialectError
from .base import NEXT_CALL, Dialect, ToolCall
from .hermes import Hermes
from .llama3 import Llama3Json
from .mistral import Mistral
from .pythonic import Pythonic
from .react import ReAct
from .toolkengpt import ToolkenGPT

__all__ = [
    "DIALECTS",
    "NEXT_CALL",
    "Dialect",
    "Hermes",
    "Llama3Json",
    "Mistral",
    "Pythonic",
    "ReAct",
    "ToolCall",
    "ToolkenGPT",
    "get_dialect",
]

DIALECTS: dict[str, type[Dialect]] = {cls.name: cls for cls in (Hermes, ToolkenGPT, ReAct, Llama3Json, Mistral, Pythonic)}
"""Every built-in dialect class by its ``name``."""


def get_dialect(name: str, **options: Any) -> Dialect:
    """The dialect called ``name``, made with ``options`` (e.g. ``tools=`` for ToolkenGPT).

    Raises:
        UnknownDialectError: No dialect has that name; the message lists the names there are.
    """
    cls = DIALECTS.get(name)
    if cls is None:
        raise UnknownDialectError(f"no dialect named {name!r}; known: {', '.join(sorted(DIALECTS))}")
    return cls(**options)
