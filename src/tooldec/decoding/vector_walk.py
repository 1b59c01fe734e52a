"""Pushing many tokens through a dense byte DFA at once, and the JSON-string shortcut.

Every token of the vocabulary is a row of one flat byte array (``TokenIndex``). A walk keeps
three arrays (row, DFA state, byte offset) and advances all rows one byte per pass, dropping the
rows that died or ended. Rows are bucketed by first byte, so a narrow state (a literal, a digit)
only ever touches the tokens that start right.

Most of the vocabulary is valid inside a JSON string, which makes string states the expensive
ones. Their behaviour does not depend on the tool: a state that is exactly an unbounded string's
content loop (``LazyDFA.string_exit``) reuses one per-vocabulary table of which tokens stay inside
the string, and only the few tokens that close the string are walked further.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..automata.json_schema import SchemaCompiler, Style, Syntax
from ..automata.lazy import LazyDFA
from ..automata.nfa import NFA, ByteDFA
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


DFA = ByteDFA | LazyDFA


WIDE = 48
"""A state with more live bytes than this is walked vectorised; fewer are split by bisection."""


def narrow_rows(index: TokenIndex, dfa: DFA, start: int) -> tuple[list[int], list[int], np.ndarray, np.ndarray, np.ndarray]:
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
    while stack:
        state, prefix, lo, hi = stack.pop()
        depth = len(prefix)
        exit_here = depth > 0 and bool(dfa.exits[state])
        while depth and not exit_here and lo < hi and len(tokens[lo]) == depth:
            ended_ids.append(sorted_ids[lo])
            ended_states.append(state)
            lo += 1
        if lo >= hi:
            continue
        live = None if exit_here else np.flatnonzero(dfa.row(state) >= 0)
        if live is None or live.size > WIDE:
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


def start_rows(index: TokenIndex, dfa: DFA, state: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose first byte is live from ``state``, with the state after that byte."""
    row = dfa.row(state)
    live = np.nonzero(row >= 0)[0]
    if live.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int32)
    parts = [index.rows_by_first[b] for b in live.tolist()]
    rows = np.concatenate(parts)
    states = np.repeat(row[live], [p.size for p in parts]).astype(np.int32)
    return rows, states


def walk_rows(index: TokenIndex, dfa: DFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray) -> Walk:
    """Advance ``rows`` (each at ``offsets`` bytes, in ``states``) to their ends or an exit state.

    ``dfa.exits`` flags states where the walk hands over to another part of the grammar; a row
    that reaches one stops there, whatever bytes it has left.
    """
    sink = dfa.sink
    flat = index.flat
    cursor = index.offsets[rows] + offsets  # absolute position of each row's next byte in ``flat``
    end = index.offsets[rows] + index.lengths[rows]
    done_rows: list[np.ndarray] = []
    done_states: list[np.ndarray] = []
    out_rows: list[np.ndarray] = []
    out_states: list[np.ndarray] = []
    out_offsets: list[np.ndarray] = []
    while rows.size:
        dead = states == sink
        hit = dfa.exits[states]
        ended = cursor >= end
        stop = dead | hit | ended
        if stop.any():
            if hit.any():
                out_rows.append(rows[hit])
                out_states.append(states[hit])
                out_offsets.append(cursor[hit] - index.offsets[rows[hit]])
            fin = ended & ~(dead | hit)
            if fin.any():
                done_rows.append(rows[fin])
                done_states.append(states[fin])
            keep = ~stop
            rows, states, cursor, end = rows[keep], states[keep], cursor[keep], end[keep]
            if not rows.size:
                break
        if rows.size <= FEW_ROWS:  # a handful left: per-token Python beats a numpy pass per byte
            _finish_few(index, dfa, rows, states, cursor - index.offsets[rows], done_rows, done_states, out_rows, out_states, out_offsets)
            break
        if not dfa.expanded[states].all():
            dfa.ensure(states)
        states = dfa.table[states, flat[cursor]]
        cursor += 1
    cat = lambda parts, dtype: np.concatenate(parts) if parts else np.empty(0, dtype)  # noqa: E731
    return Walk(
        cat(done_rows, np.int64),
        cat(done_states, np.int32),
        cat(out_rows, np.int64),
        cat(out_states, np.int32),
        cat(out_offsets, np.int64),
    )


FEW_ROWS = 24


def _finish_few(
    index: TokenIndex,
    dfa: DFA,
    rows: np.ndarray,
    states: np.ndarray,
    offsets: np.ndarray,
    done_rows: list[np.ndarray],
    done_states: list[np.ndarray],
    out_rows: list[np.ndarray],
    out_states: list[np.ndarray],
    out_offsets: list[np.ndarray],
) -> None:
    """The tail of ``walk_rows`` for a few rows, byte by byte, with the same outcomes."""
    token_bytes, ids, sink = index.vocab.token_bytes, index.ids, dfa.sink
    ended_r, ended_s, exit_r, exit_s, exit_o = [], [], [], [], []
    for r, s, off in zip(rows.tolist(), states.tolist(), offsets.tolist()):
        data = token_bytes[ids[r]] or b""
        while off < len(data):
            s = dfa.next(s, data[off])
            off += 1
            if s == sink:
                break
            if dfa.exits[s]:  # read each time: a lazy DFA grows its arrays as it expands
                exit_r.append(r)
                exit_s.append(s)
                exit_o.append(off)
                s = sink
                break
        else:
            ended_r.append(r)
            ended_s.append(s)
    done_rows.append(np.array(ended_r, dtype=np.int64))
    done_states.append(np.array(ended_s, dtype=np.int32))
    out_rows.append(np.array(exit_r, dtype=np.int64))
    out_states.append(np.array(exit_s, dtype=np.int32))
    out_offsets.append(np.array(exit_o, dtype=np.int64))


@dataclass
class StringWalk:
    """Tokens from one canonical string state: those that stay inside, those that close it."""

    packed: np.ndarray  # bits of the tokens that stay inside
    inside_rows: np.ndarray
    inside_finals: np.ndarray  # canonical state each of them ends in
    final_set: np.ndarray  # the distinct values of inside_finals
    closing_rows: np.ndarray
    closing_offsets: np.ndarray  # bytes consumed up to and including the closing quote
    rest_first: np.ndarray  # for each distinct remainder after the quote, one closing token
    rest_of: np.ndarray  # for each closing token, which distinct remainder it has


class StringTable:
    """Per vocabulary and string syntax: what each token does inside a JSON string.

    The canonical automaton is ``char* "`` (string content, then the closing quote). For each of
    its content states the table keeps the tokens that stay inside (as packed bits, with the
    state they end in) and the tokens that reach the closing quote (with the offset after it).
    """

    def __init__(self, index: TokenIndex, syntax: Syntax) -> None:
        nfa = NFA()
        compiler = SchemaCompiler(nfa, {}, Style(syntax=syntax))
        self.dfa = nfa.to_dfa(nfa.seq(nfa.star(compiler.any_char()), nfa.literal(b'"')))
        self.start_state = 0  # content, right after an opening quote
        self.index = index
        self._walks: dict[int, StringWalk] = {}

    def walk(self, q: int) -> StringWalk:
        """What the vocabulary does from canonical content state ``q`` (computed once)."""
        got = self._walks.get(q)
        if got is None:
            rows, states = start_rows(self.index, self.dfa, q)
            walk = walk_rows(self.index, self.dfa, rows, states, np.ones(rows.size, np.int64))
            flags = np.zeros(self.index.words * 32, dtype=bool)
            flags[self.index.ids[walk.rows]] = True
            packed = np.packbits(flags, bitorder="little")
            index = self.index
            rests: dict[bytes, int] = {}
            first: list[int] = []
            rest_of = np.empty(walk.exit_rows.size, dtype=np.int64)
            for i, (r, off) in enumerate(zip(walk.exit_rows.tolist(), walk.exit_offsets.tolist())):
                rest = bytes(index.flat[index.offsets[r] + off : index.offsets[r] + index.lengths[r]])
                k = rests.setdefault(rest, len(rests))
                if k == len(first):
                    first.append(i)
                rest_of[i] = k
            got = self._walks[q] = StringWalk(
                packed, walk.rows, walk.finals, np.unique(walk.finals), walk.exit_rows, walk.exit_offsets,
                np.array(first, dtype=np.int64), rest_of,
            )
        return got

    def shortest(self, q: int) -> bytes:
        """The shortest bytes that close the string from canonical state ``q`` (quote included)."""
        dfa, out = self.dfa, bytearray()
        while not dfa.accepting[q]:
            row = dfa.trans[q]
            byte = next(b for b in np.flatnonzero(row >= 0).tolist() if dfa.dist[row[b]] == dfa.dist[q] - 1)
            out.append(byte)
            q = int(row[byte])
        return bytes(out)
