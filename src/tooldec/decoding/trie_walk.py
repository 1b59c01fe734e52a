"""The vocabulary walked from a DFA state by the compiled trie walk, when it is built.

``_trie_walk`` (C) walks a byte trie of the sorted vocabulary through the DFA, each prefix once
per state; its answer is the pure-Python :mod:`.vector_walk`'s, used where the extension is
absent or ``TOOLDEC_NATIVE=0`` (tests compare them). Walks run under the DFA's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

import numpy as np

from ..automata.dfa import LazyDFA
from ..native import compiled
from .masks import SPARSE_SHARE
from .token_index import TokenIndex

__all__ = ["NATIVE", "Trie", "TrieMask", "native_count", "native_mask", "native_names", "native_walk", "strings_trie", "trie",
           "walk_trie"]


_native = compiled("tooldec.decoding._trie_walk")
NATIVE = _native is not None
"""Whether masks use the compiled walk (decided once, at import)."""


@dataclass(frozen=True)
class Trie:
    """The vocabulary's byte trie in pre-order, as ``_trie_walk.c`` lays it out. Immutable."""

    labels: bytes
    ends: bytes
    los: bytes
    nends: bytes
    tables: bytes
    wide: bytes

    @property
    def arrays(self) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
        """The arrays in the order the walks take them."""
        return self.labels, self.ends, self.los, self.nends, self.tables, self.wide

    @property
    def nbytes(self) -> int:
        return sum(len(a) for a in self.arrays)


def _built(strings: Sequence[bytes]) -> Trie:
    """The trie of ``strings`` (non-empty, sorted by bytes, distinct)."""
    assert _native is not None
    lengths = np.fromiter((len(b) for b in strings), dtype=np.int64, count=len(strings))
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return Trie(*_native.build_trie(b"".join(strings), starts))


def strings_trie(strings: Sequence[bytes]) -> tuple[Trie, np.ndarray]:
    """The trie of distinct non-empty ``strings``, and each sorted position's index in ``strings``."""
    order = sorted(range(len(strings)), key=strings.__getitem__)
    return _built([strings[i] for i in order]), np.array(order, dtype=np.int64)


WalkArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Rows and end states of the tokens that end inside, rows, states and offsets of those at an exit."""


def walk_trie(t: Trie, rows: np.ndarray, dfa: LazyDFA, state: int, skip: np.ndarray | None = None) -> WalkArrays:
    """:func:`native_walk` over another trie, reporting ``rows`` for its sorted positions."""
    out = _walked(t.arrays, rows, dfa, state, skip)
    return (np.frombuffer(out[0], np.int64), np.frombuffer(out[1], np.int32), np.frombuffer(out[2], np.int64),
            np.frombuffer(out[3], np.int32), np.frombuffer(out[4], np.int64))


def trie(index: TokenIndex) -> Trie:
    """The trie of ``index``'s vocabulary, built once and kept with the index (needs the extension)."""
    assert _native is not None
    return index.extra("trie", lambda: _built(index.sorted_bytes))


def native_walk(index: TokenIndex, dfa: LazyDFA, state: int, skip: np.ndarray | None) -> WalkArrays:
    """``vector_walk.walk_state``'s walk from ``state`` (leaving out first bytes ``skip`` flags)."""
    skip_flags = None if skip is None else np.ascontiguousarray(skip, dtype=np.bool_)
    return walk_trie(trie(index), index.sorted_rows, dfa, state, skip_flags)


class TrieMask(NamedTuple):
    """:func:`native_mask`'s answer: the tokens that end inside as a mask, and those at an exit."""

    packed: np.ndarray | None  # uint8, the mask layout (see ``masks.Mask``); None when the ids are few (sparse)
    ended_ids: np.ndarray  # int32, sorted: the ids set in ``packed``
    end_states: bytes  # int32: the distinct states they end in
    max_dist: int  # the largest distance to acceptance among ``end_states`` (0 if none)
    exit_rows: np.ndarray
    exit_states: np.ndarray
    exit_offsets: np.ndarray


def native_mask(index: TokenIndex, dfa: LazyDFA, state: int) -> TrieMask:
    """:func:`native_walk` from ``state``, the tokens that end inside set in a fresh packed mask by
    the walk itself unless they are few (``masks.SPARSE_SHARE``)."""
    trie_arrays, rows, mask = _walk_args(index)
    out = _walked(trie_arrays, rows, dfa, state, None, mask)
    packed = None if out[0] is None else np.frombuffer(out[0], np.uint8)
    if out[4]:
        return TrieMask(packed, np.frombuffer(out[1], np.int32), out[2], out[3],
                        np.frombuffer(out[4], np.int64), np.frombuffer(out[5], np.int32), np.frombuffer(out[6], np.int64))
    return TrieMask(packed, np.frombuffer(out[1], np.int32), out[2], out[3], *_NO_EXITS)


TrieArrays = tuple[bytes, bytes, bytes, bytes, bytes, bytes]
"""The trie's arrays as the compiled walks take them (:attr:`Trie.arrays`)."""

MaskArgs = tuple[np.ndarray, int, int]
"""The token id per row, the mask's words and the most ids a sparse mask lists."""


def _walk_args(index: TokenIndex) -> tuple[TrieArrays, np.ndarray, MaskArgs]:
    """The trie's arrays, the sorted rows and the mask's arguments (kept with the index)."""
    found: tuple[TrieArrays, np.ndarray, MaskArgs] | None = index.extras.get("walk-args")
    if found is None:
        t = trie(index)
        found = index.extra("walk-args", lambda: (t.arrays, index.sorted_rows,
                                                  (index.ids, index.words, index.words // SPARSE_SHARE)))
    return found


@overload
def _walked(trie_arrays: TrieArrays, rows: np.ndarray, dfa: LazyDFA, state: int, skip: np.ndarray | None
            ) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
@overload
def _walked(trie_arrays: TrieArrays, rows: np.ndarray, dfa: LazyDFA, state: int, skip: np.ndarray | None,
            mask: MaskArgs) -> tuple[bytearray | None, bytes, bytes, int, bytes, bytes, bytes]: ...
def _walked(trie_arrays: TrieArrays, rows: np.ndarray, dfa: LazyDFA, state: int, skip: np.ndarray | None,
            mask: MaskArgs | None = None) -> tuple[object, ...]:
    """The compiled walk under the DFA's lock, run again after the DFA expands a state it could not."""
    assert _native is not None
    with dfa.lock:
        while True:
            out: tuple[object, ...] | int = _native.walk(trie_arrays, rows, dfa.compiled_view(), state, skip, mask)
            if not isinstance(out, int):
                return out
            dfa.expand(out)


_NO_EXITS = (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64))
"""No token reached an exit (read only, shared)."""


def native_names(index: TokenIndex, names: Sequence[bytes], lo: int, hi: int, prefix_len: int,
                 literal: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The sorted ids allowed at a name position (``names[lo:hi]`` start with the ``prefix_len``
    bytes written, ``literal`` every tail), and as rows of (sorted position, name index, bytes
    before the rest) the tokens that run past the literal, for the caller to walk."""
    assert _native is not None
    t = trie(index)
    sorted_ids = index.extra("sorted-ids", lambda: np.ascontiguousarray(index.ids[index.sorted_rows], dtype=np.int32))
    ids, pending = _native.names_walk(t.arrays, sorted_ids, names, lo, hi, prefix_len, literal)
    return np.frombuffer(ids, np.int32), np.frombuffer(pending, np.int32).reshape(-1, 3)


def native_count(index: TokenIndex, data: bytes) -> int | None:
    """How many tokens the longest-match cut of ``data`` has (``None``: a byte begins no token)."""
    assert _native is not None
    found = _native.longest_count(trie(index).arrays, data)
    return None if found < 0 else found
