"""The bytes the grammar forces from a position, so a loop evaluates their tokens in one batch
(jump-forward). The position moves by :meth:`Grammar.walk`, so every check stays the walk's; the
span stops at a choice, a closed call, and where the automaton cannot say (reasoning, counters).
"""

from __future__ import annotations

import numpy as np

from ..automata.dfa import LazyDFA
from .grammar import Grammar
from .positions import Head, Name, Open, Position, Tail

__all__ = ["forced_bytes", "only_byte"]


def forced_bytes(grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool,
                 limit: int) -> tuple[bytes, Position]:
    """The bytes forced from ``pos`` (at most ``limit``) and the position after them."""
    out = bytearray()
    while len(out) < limit:
        byte = only_byte(grammar, pos, follow_ok)
        if byte is None:
            break
        new, closed = grammar.walk(pos, bytes((byte,)), start_ok, follow_ok)
        if new is None:
            break
        out.append(byte)
        pos = new
        if closed:  # a call closed: text (a choice) or the next call's name follows
            break
    return bytes(out), pos


def only_byte(grammar: Grammar, pos: Position, follow_ok: bool) -> int | None:
    """The one byte that may follow ``pos``, or ``None`` where there are more (or none)."""
    if isinstance(pos, Tail):
        return _single(grammar.tail(pos.tool, pos.form, pos.chained).dfa, pos.state)
    if isinstance(pos, Name):
        return _name_byte(grammar, pos, follow_ok)
    if isinstance(pos, Head):
        return _single(grammar.openers.heads[pos.form], pos.state)
    if isinstance(pos, Open):
        openers = grammar.openers
        if pos.state == openers.open.start and openers.open_special_forms:
            return None  # a special token may open the call as well: a choice of tokens
        return _single(openers.open, pos.state)
    return None  # free text and reasoning: the model writes them


def _name_byte(grammar: Grammar, pos: Name, follow_ok: bool) -> int | None:
    """The next byte of the only name that goes on from ``pos.prefix``, or the tail's first byte."""
    prefix = pos.prefix
    if pos.only is not None:
        name = pos.only.encode()
        if len(prefix) < len(name):
            return name[len(prefix)]
        terminal: str | None = pos.only
    else:
        names = grammar.name_index
        children = names.children(prefix)
        terminal = names.terminal(prefix)
        if children:
            return children[0] if len(children) == 1 and terminal is None else None
    if terminal is None:
        return None
    dfa = grammar.tail(terminal, pos.form, follow_ok).dfa
    return _single(dfa, dfa.start)


def _single(dfa: LazyDFA, state: int) -> int | None:
    """The one live byte out of ``state``, unless the state accepts (the automaton may end there)."""
    if dfa.arrays.accepting[state] or dfa.arrays.exits[state]:
        return None
    live = np.flatnonzero(dfa.row(state) >= 0)
    return int(live[0]) if live.size == 1 else None
