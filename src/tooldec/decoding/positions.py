"""Where a sequence is in the language of text with tool calls: one small frozen record per kind,
hashable (they key the mask caches) and never changed in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

__all__ = ["Head", "Name", "Open", "Position", "Tail", "Text", "Think"]

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, eq_default=True)
def _position(cls: type[_T]) -> type[_T]:
    """A record frozen as ``mypy --strict`` checks it, made without frozen's per-field
    ``object.__setattr__``: with cold CPU caches a frozen one cost over twice as much per token."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


@_position
class Text:
    """Free text; ``state`` is the state of the dialect's opener-search automaton."""

    state: int


@_position
class Think:
    """Inside a reasoning section: free text in which no call opens, watched for the close."""

    state: int
    forced: bool = False
    """Whether a call must follow the section (``tool_choice`` required or a named tool)."""
    only: str | None = None
    """The tool ``tool_choice`` names, when ``forced``."""


@_position
class Open:
    """A call must come first (``required`` or a named tool): inside the anchored opener automaton."""

    state: int
    only: str | None = None
    """The tool ``tool_choice`` names, or ``None`` for any tool."""


@_position
class Head:
    """After an opener that is a special token or a tag: the bytes before the name (``\\n{"name": "``)."""

    form: int
    state: int
    only: str | None = None


@_position
class Name:
    """Spelling a tool name; ``prefix`` is what is written of it so far."""

    form: int
    prefix: bytes
    only: str | None = None


@_position
class Tail:
    """Inside a tool's tail automaton (the bytes after its name); ``counts`` holds the exact value
    of each active counter, whose class is all the state knows (``tooldec.automata.dfa``)."""

    form: int
    tool: str
    chained: bool
    """Whether another call may follow inside the same block (``[a(), b()]``)."""
    state: int
    counts: tuple[tuple[int, int], ...] = ()


Position = Text | Think | Open | Head | Name | Tail
