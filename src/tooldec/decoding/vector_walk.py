"""Pushing many tokens through a byte DFA at once, and the JSON-string shortcut.

Every token of the vocabulary is a row of one flat byte array (``TokenIndex``). A walk keeps
three arrays (row, DFA state, byte offset) and advances all rows one byte per pass, dropping the
rows that died or ended. Rows are bucketed by first byte, so a narrow state (a literal, a digit)
only ever touches the tokens that start right.

Most of the vocabulary is valid inside a JSON string, which makes string states the expensive
ones. Their behaviour does not depend on the tool: a state that is exactly a plain string's
content (``LazyDFA.string_spot``) reuses one per-vocabulary table of which tokens stay inside
the string and how many characters they write, and only the few tokens that close the string
are walked further.

Walks hold the DFA's lock (it may grow while they run).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..automata.dfa import LazyDFA
from ..automata.json_schema import SchemaCompiler, Style, Syntax
from ..automata.nfa import NFA
from .token_index import TokenIndex

__all__ = ["StringTable", "StringWalk", "Walk", "narrow_rows", "start_rows", "walk_rows"]


@dataclass
class Walk:
    """Outcome of a walk: rows that ended inside (with their state) and rows that reached an exit."""

    rows: np.ndarray
    finals: np.ndarray
    exit_rows: np.ndarray
    exit_states: np.ndarray
    exit_offsets: np.ndarray  # bytes of the token consumed when the exit was reached
    counts: np.ndarray | None = None  # per row of ``rows``: increments seen (when counting)
    exit_counts: np.ndarray | None = None


WIDE = 48
"""A state with more live bytes than this is walked vectorised; fewer are split by bisection."""
SPLIT_ROWS_PER_BYTE = 4
"""A range with no more tokens than this per live byte is walked too: splitting it would cost a
bisection per token (a digit state over Llama-3's 1,000 three-digit tokens: 1,110 bisections)."""
FEW_ROWS = 24


def narrow_rows(index: TokenIndex, dfa: LazyDFA, start: int) -> tuple[list[int], list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Split the sorted vocabulary along the DFA while it is narrow (a literal, a digit).

    Tokens sharing a prefix are one range of ``sorted_bytes``, so following the few live bytes
    of a state costs two bisections each, whatever the vocabulary size. Where the DFA widens
    (or at an exit), the remaining range is handed to :func:`walk_rows`.

    Returns:
        Ids and end states of the tokens that ended inside the narrow part, then the rows,
        states and offsets still to walk.
    """
    tokens, sorted_ids, sorted_rows = index.sorted_bytes, index.sorted_ids, index.sorted_rows
    ended_ids: list[int] = []
    ended_states: list[int] = []
    rows: list[np.ndarray] = []
    states: list[int] = []
    offsets: list[int] = []
    sizes: list[int] = []
    stack = [(start, b"", 0, len(tokens))]
    with dfa.lock:
        while stack:
            state, prefix, lo, hi = stack.pop()
            depth = len(prefix)
            exit_here = depth > 0 and bool(dfa.arrays.exits[state])
            while depth and not exit_here and lo < hi and len(tokens[lo]) == depth:
                ended_ids.append(sorted_ids[lo])
                ended_states.append(state)
                lo += 1
            if lo >= hi:
                continue
            live = None if exit_here else np.flatnonzero(dfa.row(state) >= 0)
            if live is None or live.size > WIDE or hi - lo <= SPLIT_ROWS_PER_BYTE * live.size:
                rows.append(sorted_rows[lo:hi])
                states.append(state)
                offsets.append(depth)
                sizes.append(hi - lo)
                continue
            for byte in live.tolist():
                nxt = prefix + bytes([byte])
                a, z = index.prefix_range(nxt, lo, hi)
                if a < z:
                    stack.append((dfa.next(state, byte), nxt, a, z))
    if not rows:
        return ended_ids, ended_states, np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int64)
    return (
        ended_ids,
        ended_states,
        np.concatenate(rows),
        np.repeat(np.array(states, dtype=np.int32), sizes),
        np.repeat(np.array(offsets, dtype=np.int64), sizes),
    )


def start_rows(index: TokenIndex, dfa: LazyDFA, state: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose first byte is live from ``state``, with the state after that byte."""
    row = dfa.row(state)
    live = np.nonzero(row >= 0)[0]
    if live.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int32)
    parts = [index.rows_by_first[b] for b in live.tolist()]
    rows = np.concatenate(parts)
    states = np.repeat(row[live], [p.size for p in parts]).astype(np.int32)
    return rows, states


def walk_rows(index: TokenIndex, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray,
              *, counter: np.ndarray | None = None, start_counts: np.ndarray | None = None) -> Walk:
    """Advance ``rows`` (each at ``offsets`` bytes, in ``states``) to their ends or an exit state.

    ``dfa.exits`` flags states where the walk hands over to another part of the grammar; a row
    that reaches one stops there, whatever bytes it has left. With ``counter`` (an
    ``(n_states, 256)`` table of 0/1), the increments along each row are summed too.
    """
    with dfa.lock:
        return _walk(index, dfa, rows, states, offsets, counter, start_counts)


def _walk(index: TokenIndex, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray,
          counter: np.ndarray | None, start_counts: np.ndarray | None) -> Walk:
    sink = dfa.sink
    flat = index.flat
    cursor = index.offsets[rows] + offsets  # absolute position of each row's next byte in ``flat``
    end = index.offsets[rows] + index.lengths[rows]
    counts = None if counter is None else (np.zeros(rows.size, np.int64) if start_counts is None else start_counts.copy())
    done: list[tuple[np.ndarray, ...]] = []
    out: list[tuple[np.ndarray, ...]] = []
    while rows.size:
        exits = dfa.arrays.exits
        dead = states == sink
        hit = exits[states]
        ended = cursor >= end
        stop = dead | hit | ended
        if stop.any():
            if hit.any():
                out.append((rows[hit], states[hit], cursor[hit] - index.offsets[rows[hit]],
                            np.zeros(0) if counts is None else counts[hit]))
            fin = ended & ~(dead | hit)
            if fin.any():
                done.append((rows[fin], states[fin], np.zeros(0) if counts is None else counts[fin]))
            keep = ~stop
            rows, states, cursor, end = rows[keep], states[keep], cursor[keep], end[keep]
            if counts is not None:
                counts = counts[keep]
            if not rows.size:
                break
        if rows.size <= FEW_ROWS and counter is None:  # a handful left: per-token Python beats a pass per byte
            _finish_few(index, dfa, rows, states, cursor - index.offsets[rows], done, out)
            break
        if not dfa.arrays.expanded[states].all():
            dfa.ensure(states)
        byte = flat[cursor]
        if counts is not None and counter is not None:
            counts += counter[states, byte]
        states = dfa.arrays.table[states, byte]
        cursor += 1

    def cat(k: int, dtype: type) -> np.ndarray:
        return np.concatenate([p[k] for p in done]).astype(dtype) if done else np.empty(0, dtype)

    def cat_out(k: int, dtype: type) -> np.ndarray:
        return np.concatenate([p[k] for p in out]).astype(dtype) if out else np.empty(0, dtype)

    return Walk(
        cat(0, np.int64), cat(1, np.int32), cat_out(0, np.int64), cat_out(1, np.int32), cat_out(2, np.int64),
        None if counter is None else cat(2, np.int64), None if counter is None else cat_out(3, np.int64),
    )


def _finish_few(index: TokenIndex, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray,
                done: list[tuple[np.ndarray, ...]], out: list[tuple[np.ndarray, ...]]) -> None:
    """The tail of ``walk_rows`` for a few rows, byte by byte, with the same outcomes."""
    token_bytes, ids, sink = index.token_bytes, index.ids, dfa.sink
    ended_r, ended_s, exit_r, exit_s, exit_o = [], [], [], [], []
    for r, s, off in zip(rows.tolist(), states.tolist(), offsets.tolist()):
        data = token_bytes[ids[r]] or b""
        while off < len(data):
            s = dfa.next(s, data[off])
            off += 1
            if s == sink:
                break
            if dfa.arrays.exits[s]:
                exit_r.append(r)
                exit_s.append(s)
                exit_o.append(off)
                s = sink
                break
        else:
            ended_r.append(r)
            ended_s.append(s)
    done.append((np.array(ended_r, dtype=np.int64), np.array(ended_s, dtype=np.int32), np.zeros(0)))
    out.append((np.array(exit_r, dtype=np.int64), np.array(exit_s, dtype=np.int32), np.array(exit_o, dtype=np.int64),
                np.zeros(0)))


@dataclass
class StringWalk:
    """Tokens from one canonical string state: those that stay inside, those that close it."""

    packed: np.ndarray  # bits of the tokens that stay inside
    inside_rows: np.ndarray
    inside_finals: np.ndarray  # canonical state each of them ends in
    inside_chars: np.ndarray  # characters each of them starts
    final_set: np.ndarray  # the distinct values of inside_finals
    final_index: np.ndarray  # for each inside token, where its final state is in final_set
    closing_rows: np.ndarray
    closing_offsets: np.ndarray  # bytes consumed up to and including the closing quote
    closing_chars: np.ndarray  # characters before the quote
    rest_first: np.ndarray  # for each distinct remainder after the quote, one closing token
    rest_of: np.ndarray  # for each closing token, which distinct remainder it has
    max_inside_chars: int
    index_ids: np.ndarray  # token id of each inside row

    def inside_packed(self, limit: int | None, words: int) -> np.ndarray:
        """The inside tokens starting at most ``limit`` characters (``None``: all), packed."""
        if limit is None or limit >= self.max_inside_chars:
            return self.packed
        return _pack(self.index_ids[self.inside_chars <= limit], words)


def _pack(ids: np.ndarray, words: int) -> np.ndarray:
    flags = np.zeros(words * 32, dtype=bool)
    flags[ids] = True
    return np.packbits(flags, bitorder="little")


class StringTable:
    """Per vocabulary and string syntax: what each token does inside a JSON string.

    The canonical automaton is ``char* "`` (string content, then the closing quote). For each of
    its content states the table keeps the tokens that stay inside (as packed bits, with the
    state they end in and the characters they start) and the tokens that reach the closing quote
    (with the offset after it and the characters before it). Thread-safe: walks are computed
    outside any lock and stored once.
    """

    def __init__(self, index: TokenIndex, syntax: Syntax) -> None:
        nfa = NFA()
        chars = SchemaCompiler(nfa, {}, Style(syntax=syntax))
        frag = nfa.seq(nfa.counted(chars.any_char, 0, None), nfa.literal(b'"'))
        self.dfa = LazyDFA(nfa, frag, window=index.longest).expand_all()
        self.start_state = self.dfa.start
        self.index = index
        counter = np.zeros((self.dfa.n_states + 1, 256), dtype=np.int8)
        for sid in range(1, self.dfa.n_states):
            for byte in range(256):
                step = self.dfa.actions(sid, byte)
                if step is not None and step.incs:
                    counter[sid, byte] = 1
        self.counter = counter
        self._walks: dict[int, StringWalk] = {}
        self._shortest: dict[int, bytes] = {}

    @property
    def nbytes(self) -> int:
        return sum(int(w.packed.nbytes + w.inside_rows.nbytes * 3 + w.final_index.nbytes) for w in self._walks.values()) \
            + int(self.counter.nbytes)

    def walk(self, q: int) -> StringWalk:
        """What the vocabulary does from canonical content state ``q`` (computed once)."""
        got = self._walks.get(q)
        if got is not None:
            return got
        index = self.index
        rows, states = start_rows(index, self.dfa, q)
        first = self.counter[q][index.flat[index.offsets[rows]]].astype(np.int64)
        walk = walk_rows(index, self.dfa, rows, states, np.ones(rows.size, np.int64), counter=self.counter,
                         start_counts=first)
        assert walk.counts is not None and walk.exit_counts is not None
        packed = _pack(index.ids[walk.rows], index.words)
        rests: dict[bytes, int] = {}
        firsts: list[int] = []
        rest_of = np.empty(walk.exit_rows.size, dtype=np.int64)
        for i, (r, off) in enumerate(zip(walk.exit_rows.tolist(), walk.exit_offsets.tolist())):
            rest = bytes(index.flat[index.offsets[r] + off : index.offsets[r] + index.lengths[r]])
            k = rests.setdefault(rest, len(rests))
            if k == len(firsts):
                firsts.append(i)
            rest_of[i] = k
        final_set = np.unique(walk.finals)
        got = StringWalk(
            packed, walk.rows, walk.finals, walk.counts, final_set, np.searchsorted(final_set, walk.finals),
            walk.exit_rows, walk.exit_offsets,
            walk.exit_counts, np.array(firsts, dtype=np.int64), rest_of,
            int(walk.counts.max()) if walk.counts.size else 0, index.ids[walk.rows],
        )
        return self._walks.setdefault(q, got)

    def shortest(self, q: int) -> bytes:
        """The shortest bytes that close the string from canonical state ``q`` (quote included)."""
        found = self._shortest.get(q)
        if found is None:
            found = self._shortest[q] = self.dfa.shortest(q)
        return found
