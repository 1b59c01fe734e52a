"""Where a sequence is in the language of text with tool calls: one small frozen record per kind.

Positions are values: hashable (they key the mask caches), comparable, cheap to copy, and never
changed in place, so a cursor can keep its history as a list of them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Head", "Name", "Open", "Position", "Tail", "Text"]


@dataclass(frozen=True, slots=True)
class Text:
    """Free text; ``state`` is the state of the dialect's opener-search automaton."""

    state: int


@dataclass(frozen=True, slots=True)
class Open:
    """A call must come first (``required`` or a named tool): inside the anchored opener automaton."""

    state: int
    only: str | None = None
    """The tool ``tool_choice`` names, or ``None`` for any tool."""


@dataclass(frozen=True, slots=True)
class Head:
    """After an opener that is a special token or a tag: the bytes before the name (``\\n{"name": "``)."""

    form: int
    state: int
    only: str | None = None


@dataclass(frozen=True, slots=True)
class Name:
    """Spelling a tool name; ``prefix`` is what is written of it so far."""

    form: int
    prefix: bytes
    only: str | None = None


@dataclass(frozen=True, slots=True)
class Tail:
    """Inside a tool's tail automaton (the bytes after its name, arguments included).

    ``counts`` holds the exact value of every counter of the active counted regions (the
    automaton state only knows their class; see ``tooldec.automata.dfa``).
    """

    form: int
    tool: str
    chained: bool
    """Whether another call may follow inside the same block (``[a(), b()]``)."""
    state: int
    counts: tuple[tuple[int, int], ...] = ()


Position = Text | Open | Head | Name | Tail
