"""A lazy DFA's canonical shortest completion, with a counter's repeats as runs.

Below a region's ``low`` every count is its own DFA state, so spelling byte by byte costs in proportion to the
count (``minItems: 100000``). Once the walk is back at the same NFA states with only that counter higher, the bytes
in between are one item, repeating while the count stays safely below ``low`` (every guard decides as it did,
every distance drops alike): one run ``(item, times)``, so a completion costs its distinct parts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .costs import MID

if TYPE_CHECKING:
    from .dfa import LazyDFA

__all__ = ["Classes", "Runs", "repeat_after", "repeats", "shortest_runs", "spell"]

Runs = tuple[tuple[bytes, int], ...]
"""A text as pieces each written some times in a row: ``((b"[", 1), (b"0,", 99998), (b"0]", 1))``."""

Classes = tuple[tuple[int, int], ...]
"""(region, class) for every region a DFA state is inside of, sorted by region."""
_Seen = dict[tuple[frozenset[int], tuple[int, ...]], tuple[int, Classes]]
"""(NFA states, regions) -> (where the walk was, counter classes) when last there."""


def spell(runs: Runs) -> bytes:
    """The text of ``runs``."""
    return b"".join(piece * times for piece, times in runs)


def repeat_after(dfa: LazyDFA, sid: int, at: int, seen: _Seen) -> tuple[int, int, int] | None:
    """Where the walk, at ``sid`` after ``at`` bytes, is back at an earlier state's NFA states with one exact counter
    alone higher: ``(where that was, more repeats of the bytes since, the state after them)``; else None, sid noted."""
    classes = dfa.classes(sid)
    regions = dfa.nfa.regions
    if not any(c != MID and c < regions[r].low for r, c in classes):
        return None  # no counter below its floor: nothing can repeat here
    states = dfa.nfa_states(sid)
    key = (states, tuple(r for r, _ in classes))
    before = seen.get(key)
    seen[key] = (at, classes)
    if before is None:
        return None
    pos, old = before
    found = repeats(dfa, old, classes)
    return None if found is None else (pos, found[1], dfa.reclass(sid, {found[0]: found[2]}))


def repeats(dfa: LazyDFA, old: Classes, classes: Classes) -> tuple[int, int, int] | None:
    """If one exact counter alone rose, by ``d``, from ``old`` to ``classes``: the region, how many more times the
    steps repeat with its count below ``low - d`` (and ``high - d``), and the count after them; else ``None``."""
    changed = [(r, a, b) for (r, a), (_, b) in zip(old, classes) if a != b]
    if len(changed) != 1:
        return None
    rid, c0, c1 = changed[0]
    d = c1 - c0
    if c0 == MID or c1 == MID or d <= 0:
        return None
    region = dfa.nfa.regions[rid]
    times = (region.low - 1 - d - c1) // d
    if region.high is not None:
        times = min(times, (region.high - 1 - d - c1) // d)
    count = c1 + times * d
    if times < 1 or dfa.class_of(rid, count) != count:
        return None
    return rid, times, count


def shortest_runs(dfa: LazyDFA, sid: int) -> tuple[Runs, int]:
    """:meth:`LazyDFA.shortest_to` as runs, and the accepting state it ends in."""
    runs: list[tuple[bytes, int]] = []
    out = bytearray()
    seen: _Seen = {}
    while (step := dfa.shortest_step(sid)) is not None:
        out.append(step[0])
        sid = step[1]
        jump = repeat_after(dfa, sid, len(out), seen)
        if jump is not None:
            pos, times, sid = jump
            if pos:
                runs.append((bytes(out[:pos]), 1))
            runs.append((bytes(out[pos:]), times + 1))
            out.clear()
            seen.clear()
    if out:
        runs.append((bytes(out), 1))
    return tuple(runs), sid
