"""Random strings of a lazy DFA's language, for tests and benchmarks: exact (checked against the schema as
written), every byte taken with :meth:`LazyDFA.advance_exact`, which carries the counts states only classify."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np

from .shortest import repeats

if TYPE_CHECKING:
    from .dfa import LazyDFA

__all__ = ["sample"]

_Seen = dict[tuple[frozenset[int], tuple[int, ...]], tuple[int, tuple[tuple[int, int], ...], dict[int, int]]]
"""(NFA states, regions) -> (position in the output, counter classes, exact counts) when last there."""


def sample(dfa: LazyDFA, rng: random.Random, soft_limit: int = 120) -> bytes:
    """A random string of the language (``ValueError`` if empty): random live bytes, then, past ``soft_limit``, a
    shortest way to the end, skipping a counter's repeats (``minItems: 600`` would walk 600 copies of the item)."""
    state, out = dfa.start, bytearray()
    counts: dict[int, int] = {}
    if state == dfa.sink:
        raise ValueError("the language is empty")
    seen: _Seen = {}
    while True:
        row = dfa.row(state)
        live = np.flatnonzero(row >= 0)
        if dfa.arrays.accepting[state] and (not len(live) or rng.random() < 0.25 or len(out) > soft_limit):
            return bytes(out)
        if len(out) > soft_limit:
            dist = dfa.arrays.dist
            byte = int(live[np.argmin(dist[row[live]])])  # the first byte on a shortest way
        else:
            byte = rng.choice(live.tolist())
        out.append(byte)
        state, counts = dfa.advance_exact(state, byte, counts)
        if len(out) > soft_limit and state != dfa.sink:
            state, counts = _skip(dfa, state, counts, out, seen)


def _skip(dfa: LazyDFA, sid: int, counts: dict[int, int], out: bytearray, seen: _Seen) -> tuple[int, dict[int, int]]:
    """Where ``sid`` repeats an earlier state with one counter higher alone (:func:`.shortest.repeats`), the bytes
    since then written again as often as is safe, and the state with that count; else ``sid``, noted."""
    states, classes = dfa.nfa_states(sid), dfa.classes(sid)
    key = (states, tuple(r for r, _ in classes))
    before = seen.get(key)
    seen[key] = (len(out), classes, dict(counts))
    if before is None:
        return sid, counts
    pos, old_classes, old_counts = before
    found = repeats(dfa, old_classes, classes)
    if found is None:
        return sid, counts
    rid, times, count = found
    if counts.get(rid) != dict(classes)[rid] or any(old_counts.get(r) != c for r, c in counts.items() if r != rid):
        return sid, counts
    out.extend(bytes(out[pos:]) * times)
    nxt = dfa.reclass(sid, {rid: count})  # the same NFA states, that count's (exact) class
    seen.clear()
    return nxt, {**counts, rid: count}
