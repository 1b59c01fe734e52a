"""Upper bounds of what finishing a call needs from an opener or head position.

A budget that clears such a bound lets a whole opener or head mask through. A bound is the least
over the ways on of ``bytes + the name bound of the form`` they reach; the bytes come from the
opener tables alone, so a new tool list adds only its name bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grammar import Grammar
from .masking import FAR
from .masks import Mask
from .name_bounds import name_most
from .positions import Head, Name, Open, Position, Think

__all__ = ["UpperPlan", "open_paths", "upper", "upper_plan"]

Way = tuple[int, int]
"""One way on: its bytes, and the form whose name bound comes after them (``-1``: none)."""


def open_paths(grammar: Grammar, state: int) -> dict[int, bytes]:
    """For each commit reachable in the ``open`` automaton, the shortest, smallest path to it (kept; read only)."""
    return grammar.compiler.kept(("open-paths", grammar.openers_owner, state), lambda: _open_paths_of(grammar, state))


def _open_paths_of(grammar: Grammar, state: int) -> dict[int, bytes]:
    openers = grammar.openers
    dfa = openers.open
    paths: dict[int, bytes] = {}
    frontier = {state: b""}
    seen = {state}
    while frontier:
        nxt: dict[int, bytes] = {}
        for s, path in sorted(frontier.items(), key=lambda kv: kv[1]):
            row = dfa.row(s)
            for byte in np.flatnonzero(row >= 0).tolist():
                t = int(row[byte])
                if dfa.arrays.exits[t]:
                    commit = openers.commit_of(dfa, t)
                    paths.setdefault(commit, path + bytes([byte]))
                elif t not in seen:
                    seen.add(t)
                    nxt.setdefault(t, path + bytes([byte]))
        frontier = nxt
    return paths


def upper(grammar: Grammar, pos: Position, follow_ok: bool) -> int:
    """An upper bound of ``need(pos)`` before a call's arguments: specials plus bytes of one way to
    finish it (a longest-match cut has at most a token per byte); ``FAR`` elsewhere."""
    if isinstance(pos, (Open, Head)):  # its ways come from the opener tables: kept by their owner
        ways = grammar.compiler.kept(("ways", grammar.openers_owner, pos, follow_ok),
                                     lambda: _ways(grammar, pos, follow_ok))
        assert ways is not None  # an opener's or head's ways are always known
        return _least(grammar, ways, pos.only, follow_ok, {})
    if not isinstance(pos, Name):
        return FAR
    most = name_most(grammar, pos.form, follow_ok)
    if most is None:
        return FAR
    names = grammar.name_index
    if pos.only is not None:
        only = pos.only.encode()
        return int(most[names.span(only)[0]]) - len(pos.prefix) if only.startswith(pos.prefix) else FAR
    a, z = names.span(pos.prefix)
    return int(most[a:z].min()) - len(pos.prefix) if a < z else FAR


def _ways(grammar: Grammar, pos: Position, follow_ok: bool) -> tuple[Way, ...] | None:
    """:func:`upper` of an opener, head or empty name position as the ways it takes the least of;
    ``None`` for other positions (the tool list decides them)."""
    if isinstance(pos, Name):
        return ((0, pos.form),) if not pos.prefix else None
    openers = grammar.openers
    if isinstance(pos, Head):
        return ((len(openers.heads[pos.form].shortest(pos.state)), pos.form),)
    if not isinstance(pos, Open):
        return None
    ways: list[Way] = [(FAR, -1)]
    starts: list[tuple[int, Position]] = []
    if pos.state == openers.open.start:
        starts += [(1, grammar.after_tag(form, pos.only)) for form in set(openers.open_special_forms.values())]
    for commit, path in open_paths(grammar, pos.state).items():
        after = grammar.after_commit(commit, pos.only, follow_ok)
        if after is None or isinstance(after, Think):  # a bound needs one way: reasoning first is never the shorter
            continue
        if openers.commits[commit].tool is not None:
            ways.append((len(path) + upper(grammar, after, follow_ok), -1))
        else:
            starts.append((len(path), after))
    for length, after in starts:
        later = _ways(grammar, after, follow_ok)
        assert later is not None  # an opener without a name goes on to a head or the name's start
        ways += [(length + n, form) for n, form in later]
    return tuple(sorted(set(ways)))


def _least(grammar: Grammar, ways: tuple[Way, ...], only: str | None, follow_ok: bool, names: dict[int, int]) -> int:
    """The least of ``ways`` with ``grammar``'s name bounds (kept in ``names`` by form)."""
    totals = []
    for n, form in ways:
        if form >= 0:
            bound = names.get(form)
            if bound is None:
                bound = names[form] = _name_start(grammar, form, only, follow_ok)
            n += bound
        totals.append(n)
    return min(totals)


def _name_start(grammar: Grammar, form: int, only: str | None, follow_ok: bool) -> int:
    """:func:`upper` at the form's empty name: kept per snapshot, since every opener check asks it."""
    return grammar.compiler.kept(("name-start", grammar.serial, form, only, follow_ok),
                                 lambda: upper(grammar, Name(form, b"", only), follow_ok))


@dataclass(frozen=True)
class UpperPlan:
    """At one opener or head position: the tokens whose bound only the name bounds decide
    (``slots``: token -> index into ``ways``). Immutable, shared by every tool list of a compiler."""

    slots: dict[int, int]
    ways: tuple[tuple[Way, ...], ...]
    nbytes: int = 0

    def bounds(self, grammar: Grammar, only: str | None, follow_ok: bool) -> list[int]:
        """Each outcome's bound for ``grammar``'s tool list."""
        names: dict[int, int] = {}
        return [_least(grammar, ways, only, follow_ok, names) for ways in self.ways]


def upper_plan(grammar: Grammar, pos: Open | Head, mask: Mask, start_ok: bool, follow_ok: bool) -> UpperPlan:
    """The plan of ``pos`` (kept per compiler); tokens it leaves out are for the caller to bound."""
    key = ("upper-plan", grammar.openers_owner, pos, start_ok, follow_ok)
    return grammar.compiler.kept(key, lambda: _made_plan(grammar, pos, mask, start_ok, follow_ok))


def _made_plan(grammar: Grammar, pos: Open | Head, mask: Mask, start_ok: bool, follow_ok: bool) -> UpperPlan:
    openers = grammar.openers
    walk = openers.open_committers(pos.state) if isinstance(pos, Open) else openers.head_walk(pos.form, pos.state)
    end_of = dict(zip(walk[0], walk[1]))  # the tokens that stay inside, and their end states
    token_bytes = grammar.vocab.token_bytes
    slots: dict[int, int] = {}
    index: dict[tuple[Way, ...], int] = {}
    for tid in mask.ids.tolist():
        end = end_of.get(tid)
        after: Position | None
        if end is not None:
            after = Open(end, pos.only) if isinstance(pos, Open) else Head(pos.form, end, pos.only)
        else:
            data = token_bytes[tid]
            if data is None:
                after = grammar.after_special(pos, tid, start_ok)
            else:
                after, closed = grammar.walk(pos, data, start_ok, follow_ok)
                after = after if closed == 0 else None
        ways = None if after is None else _ways(grammar, after, follow_ok)
        if ways is not None:
            slots[tid] = index.setdefault(ways, len(index))
    return UpperPlan(slots, tuple(index), 96 * len(slots) + 64 * sum(len(w) for w in index) + 200)
