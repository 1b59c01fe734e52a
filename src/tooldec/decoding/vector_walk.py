"""Pushing many tokens through a byte DFA at once, and the JSON-string shortcut.

A walk advances every row of the flat token array one byte per pass; a narrow state (a literal,
a digit) splits the sorted vocabulary instead. What a token does inside a JSON string does not
depend on the tool, so a string's content state reuses a per-vocabulary :class:`StringTable`;
inside a whitespace run, leading whitespace is read from a :class:`BlankTable`. Walks hold the
DFA's lock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..automata.dfa import BlankSpot, LazyDFA
from ..automata.json_schema import SchemaCompiler, Style, Syntax
from ..automata.nfa import BLANK_RANGES, NFA
from ..caches import BoundedCache
from .token_index import TokenIndex
from .trie_walk import NATIVE, Trie, native_walk, strings_trie

__all__ = ["BlankTable", "StringTable", "StringWalk", "Walk", "narrow_rows", "start_rows", "blank_table", "walk_rows", "walk_state"]


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

    @classmethod
    def ended(cls, rows: np.ndarray | list[int], states: np.ndarray | list[int]) -> Walk:
        """Rows that ended inside, in ``states``, and none at an exit."""
        return cls(np.asarray(rows, dtype=np.int64), np.asarray(states, dtype=np.int32), np.empty(0, np.int64),
                   np.empty(0, np.int32), np.empty(0, np.int64))

    @classmethod
    def joined(cls, parts: list[Walk]) -> Walk:
        """The walks of disjoint sets of rows as one (without counts)."""
        return cls(*(np.concatenate([getattr(p, name) for p in parts])
                     for name in ("rows", "finals", "exit_rows", "exit_states", "exit_offsets")))


WIDE = 48
"""A state with more live bytes than this is walked vectorised; fewer are split by bisection."""
SPLIT_ROWS_PER_BYTE = 4
"""A range with no more tokens than this per live byte is walked too: splitting it would cost a
bisection per token (a digit state over Llama-3's 1,000 three-digit tokens: 1,110 bisections)."""
FEW_ROWS = 24


def narrow_rows(index: TokenIndex, dfa: LazyDFA, start: int,
                skip: np.ndarray | None = None) -> tuple[list[int], list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Split the sorted vocabulary along the DFA while it is narrow (two bisections per live byte,
    whatever the vocabulary size), leaving out tokens whose first byte ``skip`` flags: the rows and
    end states that ended inside, then the rows, states and offsets :func:`walk_rows` walks on."""
    tokens, sorted_rows = index.sorted_bytes, index.sorted_rows
    ended_rows: list[int] = []
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
                ended_rows.append(int(sorted_rows[lo]))
                ended_states.append(state)
                lo += 1
            if lo >= hi:
                continue
            live = None if exit_here else np.flatnonzero(dfa.row(state) >= 0)
            if live is None or live.size > WIDE or hi - lo <= SPLIT_ROWS_PER_BYTE * live.size:
                part = sorted_rows[lo:hi]
                if skip is not None and not depth:
                    part = part[~skip[index.flat[index.offsets[part]]]]
                rows.append(part)
                states.append(state)
                offsets.append(depth)
                sizes.append(part.size)
                continue
            if skip is not None and not depth:
                live = live[~skip[live]]
            for byte in live.tolist():
                nxt = prefix + bytes([byte])
                a, z = index.prefix_range(nxt, lo, hi)
                if a < z:
                    stack.append((dfa.next(state, byte), nxt, a, z))
    if not rows:
        return ended_rows, ended_states, np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int64)
    return (ended_rows, ended_states, np.concatenate(rows), np.repeat(np.array(states, dtype=np.int32), sizes),
            np.repeat(np.array(offsets, dtype=np.int64), sizes))


def walk_state(index: TokenIndex, dfa: LazyDFA, state: int, blanks: BlankTable | None = None) -> Walk:
    """Every token from ``state``: the rows that end inside the DFA with their end states, and the
    rows that reach an exit (in no particular order). With ``blanks``, inside a whitespace run a
    whitespace-only token ends in the state after the run (whitespace is never part of a shortest
    completion), and the rest of a token after its whitespace is walked from there."""
    spot = None if blanks is None else dfa.blank_spot(state)
    skip = None if spot is None else BLANK
    if NATIVE:
        parts = [Walk(*native_walk(index, dfa, state, skip))]
    else:
        ended_rows, ended_states, rows, states, offsets = narrow_rows(index, dfa, state, skip)
        parts = [Walk.ended(ended_rows, ended_states), walk_rows(index, dfa, rows, states, offsets)]
    if spot is not None and blanks is not None:
        parts += blanks.after_run(index, dfa, spot)
    return parts[0] if len(parts) == 1 else Walk.joined(parts)


def _byte_flags(ranges: tuple[tuple[int, int], ...]) -> np.ndarray:
    flags = np.zeros(256, dtype=bool)
    for lo, hi in ranges:
        flags[lo : hi + 1] = True
    flags.flags.writeable = False
    return flags


BLANK = _byte_flags(BLANK_RANGES)
"""Per byte: whether it is JSON whitespace (read-only)."""


class BlankTable:
    """Per vocabulary: each token's leading run of JSON whitespace, for masks inside a whitespace
    run (see :func:`walk_state`). Immutable once built: shareable across threads."""

    def __init__(self, index: TokenIndex) -> None:
        others = np.append(np.flatnonzero(~BLANK[index.flat]), index.flat.size)
        first = others[np.searchsorted(others, index.offsets)]  # first non-blank byte from each token's start
        self.lead = np.minimum(first - index.offsets, index.lengths).astype(np.int64)
        pure = np.flatnonzero(self.lead == index.lengths)
        order = np.argsort(self.lead[pure], kind="stable")
        self.pure_rows = pure[order].astype(np.int64)  # whitespace-only tokens, shortest first
        self.pure_leads = self.lead[self.pure_rows]
        mixed = np.flatnonzero((self.lead > 0) & (self.lead < index.lengths))
        after = index.flat[index.offsets[mixed] + self.lead[mixed]]
        by = np.argsort(after, kind="stable")
        bounds = np.searchsorted(after[by], np.arange(257))
        self.mixed_by_first = [mixed[by[bounds[b] : bounds[b + 1]]].astype(np.int64) for b in range(256)]
        """Per byte: the tokens of leading whitespace and more, whose first other byte it is."""

    @property
    def nbytes(self) -> int:
        return int(self.lead.nbytes + self.pure_rows.nbytes * 2 + sum(a.nbytes for a in self.mixed_by_first))

    def after_run(self, index: TokenIndex, dfa: LazyDFA, spot: BlankSpot) -> list[Walk]:
        """The tokens that start with whitespace at ``spot``: the whitespace-only ones ended in
        ``spot.after``, and the walk of the others' rest from there."""
        room = index.longest if spot.room is None else spot.room
        pure = self.pure_rows[: int(np.searchsorted(self.pure_leads, room, side="right"))]
        row = dfa.row(spot.after)
        live = np.flatnonzero(row >= 0).tolist()
        mixed = np.concatenate([self.mixed_by_first[b] for b in live]) if live else np.empty(0, np.int64)
        mixed = mixed[self.lead[mixed] <= room]
        lead = self.lead[mixed]
        states = row[index.flat[index.offsets[mixed] + lead]].astype(np.int32)
        return [Walk.ended(pure, np.full(pure.size, spot.after, dtype=np.int32)),
                walk_rows(index, dfa, mixed, states, lead + 1)]


def blank_table(index: TokenIndex) -> BlankTable:
    """The vocabulary's :class:`BlankTable`, built once and kept with the index."""
    return index.extra("blanks", lambda: BlankTable(index))


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
    """Advance ``rows`` (at ``offsets``, in ``states``) to their ends or an exit state, summing the
    ``counter`` table's increments along each row if given. Holds the DFA's lock."""
    sink = dfa.sink
    flat = index.flat
    cursor = index.offsets[rows] + offsets  # absolute position of each row's next byte in ``flat``
    end = index.offsets[rows] + index.lengths[rows]
    counts = None if counter is None else (np.zeros(rows.size, np.int64) if start_counts is None else start_counts.copy())
    done: list[tuple[np.ndarray, ...]] = []
    out: list[tuple[np.ndarray, ...]] = []
    with dfa.lock:
        while rows.size:
            dead = states == sink
            hit = dfa.arrays.exits[states]
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

    def cat(parts: list[tuple[np.ndarray, ...]], k: int, dtype: type) -> np.ndarray:
        return np.concatenate([p[k] for p in parts]).astype(dtype) if parts else np.empty(0, dtype)

    return Walk(
        cat(done, 0, np.int64), cat(done, 1, np.int32), cat(out, 0, np.int64), cat(out, 1, np.int32),
        cat(out, 2, np.int64), None if counter is None else cat(done, 2, np.int64),
        None if counter is None else cat(out, 3, np.int64),
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
    rest_trie: tuple[Trie, np.ndarray] | None = None
    """The distinct non-empty remainders as a trie, for the compiled walk to take in one call."""
    empty_rest: int = -1  # which remainder is empty, if one is

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (
            self.packed, self.inside_rows, self.inside_finals, self.inside_chars, self.final_set, self.final_index,
            self.closing_rows, self.closing_offsets, self.closing_chars, self.rest_first, self.rest_of, self.index_ids))

    def inside_packed(self, limit: int | None, words: int) -> np.ndarray:
        """The inside tokens starting at most ``limit`` characters (``None``: all), packed."""
        if limit is None or limit >= self.max_inside_chars:
            return self.packed
        return _pack(self.index_ids[self.inside_chars <= limit], words)


def _pack(ids: np.ndarray, words: int) -> np.ndarray:
    flags = np.zeros(words * 32, dtype=bool)
    flags[ids] = True
    return np.packbits(flags, bitorder="little")


def _rests_trie(some: list[bytes], rests: dict[bytes, int]) -> tuple[Trie, np.ndarray]:
    """The trie of the non-empty remainders, reporting each as its number in ``rests``."""
    built, order = strings_trie(some)
    return built, np.array([rests[some[i]] for i in order.tolist()], dtype=np.int64)


class StringTable:
    """Per vocabulary and string automaton (:meth:`plain`, or a quoted-string template's): per
    content state, the tokens that stay inside the string and those that close it, kept in a
    cache bounded by ``max_bytes``. Thread-safe.
    """

    def __init__(self, index: TokenIndex, dfa: LazyDFA, *, max_bytes: int | None = None) -> None:
        self.dfa = dfa.expand_all()
        self.start_state = self.dfa.start
        self.index = index
        counter = np.zeros((self.dfa.n_states + 1, 256), dtype=np.int8)
        for sid in range(1, self.dfa.n_states if dfa.nfa.regions else 0):
            for byte in range(256):
                step = self.dfa.actions(sid, byte)
                if step is not None and step.incs:
                    counter[sid, byte] = 1
        self.counter = counter
        self._walks = BoundedCache[int, StringWalk](max_bytes if max_bytes is not None else 1 << 62)
        self._shortest: dict[int, bytes] = {}

    @classmethod
    def plain(cls, index: TokenIndex, syntax: Syntax) -> StringTable:
        """The table of a plain string of ``syntax`` (one walk, from its content state)."""
        nfa = NFA()
        chars = SchemaCompiler(nfa, {}, Style(syntax=syntax))
        frag = nfa.seq(nfa.counted(chars.any_char, 0, None), nfa.literal(b'"'))
        return cls(index, LazyDFA(nfa, frag, window=index.longest))

    @property
    def nbytes(self) -> int:
        return self._walks.nbytes + int(self.counter.nbytes)

    def walk(self, q: int) -> StringWalk:
        """What the vocabulary does from canonical content state ``q`` (computed once)."""
        return self._walks.get_or_make(q, lambda: self._walk(q))

    def _walk(self, q: int) -> StringWalk:
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
        some = [rest for rest in rests if rest]
        return StringWalk(
            packed, walk.rows, walk.finals, walk.counts, final_set, np.searchsorted(final_set, walk.finals),
            walk.exit_rows, walk.exit_offsets,
            walk.exit_counts, np.array(firsts, dtype=np.int64), rest_of,
            int(walk.counts.max()) if walk.counts.size else 0, index.ids[walk.rows],
            None if not NATIVE or not some else _rests_trie(some, rests), rests.get(b"", -1),
        )

    def shortest(self, q: int) -> bytes:
        """The shortest bytes that close the string from canonical state ``q`` (quote included)."""
        found = self._shortest.get(q)
        if found is None:
            found = self._shortest[q] = self.dfa.shortest(q)
        return found
