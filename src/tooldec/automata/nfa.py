"""Byte-level NFAs built from small pieces, and their determinisation into dense DFAs.

Every grammar in tooldec (JSON Schema arguments, call formats, regex patterns) is assembled
here as a Thompson-style NFA over bytes and turned into a :class:`ByteDFA`: a NumPy table
``trans[state, byte] -> state`` (``-1`` is dead). Masks are computed by pushing the whole
vocabulary through that table at once, which is why the table is dense.

After determinisation every live state can still reach an accepting state, so "not dead"
means "viable prefix": the exactness invariant rests on that pruning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["NFA", "Frag", "ByteDFA", "DEAD", "TooManyStatesError", "MAX_DFA_STATES"]

DEAD = -1
MAX_DFA_STATES = 200_000

Frag = tuple[int, int]
"""A piece of NFA: (entry state, exit state). Pieces are used once; build a new one to repeat."""


class TooManyStatesError(ValueError):
    """The determinised automaton would be too large to hold as a dense table."""


class NFA:
    """A growing NFA over bytes: edges carry inclusive byte ranges, plus epsilon edges."""

    def __init__(self) -> None:
        self.edges: list[list[tuple[int, int, int]]] = []
        self.eps: list[list[int]] = []
        self.marks: dict[int, str] = {}
        self.string_loops: set[int] = set()
        """States where an unbounded JSON string's content loops (any character, or the closing
        quote next): a DFA state made of exactly such a loop is canonical string content."""
        self._closures: dict[int, frozenset[int]] = {}

    def state(self) -> int:
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def edge(self, src: int, lo: int, hi: int, dst: int) -> None:
        self.edges[src].append((lo, hi, dst))

    def epsilon(self, src: int, dst: int) -> None:
        self.eps[src].append(dst)

    # -- pieces -----------------------------------------------------------------------------

    def literal(self, data: bytes) -> Frag:
        start = cur = self.state()
        for byte in data:
            nxt = self.state()
            self.edge(cur, byte, byte, nxt)
            cur = nxt
        return start, cur

    def byte_ranges(self, ranges: Iterable[tuple[int, int]]) -> Frag:
        """One byte out of the given inclusive ranges."""
        start, end = self.state(), self.state()
        for lo, hi in ranges:
            self.edge(start, lo, hi, end)
        return start, end

    def sequences(self, seqs: Iterable[Sequence[tuple[int, int]]]) -> Frag:
        """One of several byte-range sequences (e.g. the UTF-8 encodings of a character class)."""
        start, end = self.state(), self.state()
        for seq in seqs:
            cur = start
            for i, (lo, hi) in enumerate(seq):
                nxt = end if i == len(seq) - 1 else self.state()
                self.edge(cur, lo, hi, nxt)
                cur = nxt
        return start, end

    def empty(self) -> Frag:
        s = self.state()
        return s, s

    def never(self) -> Frag:
        """A piece that accepts nothing (an unsatisfiable branch)."""
        return self.state(), self.state()

    def seq(self, *frags: Frag) -> Frag:
        if not frags:
            return self.empty()
        for (_, end), (start, _) in zip(frags, frags[1:]):
            self.epsilon(end, start)
        return frags[0][0], frags[-1][1]

    def alt(self, *frags: Frag) -> Frag:
        start, end = self.state(), self.state()
        for s, e in frags:
            self.epsilon(start, s)
            self.epsilon(e, end)
        return start, end

    def optional(self, frag: Frag) -> Frag:
        start, end = self.state(), self.state()
        self.epsilon(start, frag[0])
        self.epsilon(frag[1], end)
        self.epsilon(start, end)
        return start, end

    def star(self, frag: Frag) -> Frag:
        start, end = self.state(), self.state()
        self.epsilon(start, frag[0])
        self.epsilon(frag[1], frag[0])
        self.epsilon(frag[1], end)
        self.epsilon(start, end)
        return start, end

    def repeat(self, make: Callable[[], Frag], low: int, high: int | None) -> Frag:
        """``low`` to ``high`` (``None``: unbounded) copies of the piece ``make()`` builds."""
        parts = [make() for _ in range(low)]
        if high is None:
            parts.append(self.star(make()))
        else:
            tail: Frag | None = None
            for _ in range(high - low):  # nested optionals: a(b(c)?)? keeps the NFA linear
                piece = make()
                tail = self.optional(piece if tail is None else self.seq(piece, tail))
            if tail is not None:
                parts.append(tail)
        return self.seq(*parts) if parts else self.empty()

    def separated(self, make: Callable[[], Frag], sep: Callable[[], Frag], low: int, high: int | None) -> Frag:
        """``low``..``high`` items joined by separators: ``item (sep item)*``, or nothing if low is 0."""
        if high == 0:
            return self.empty()
        rest = self.repeat(lambda: self.seq(sep(), make()), max(low - 1, 0), None if high is None else high - 1)
        some = self.seq(make(), rest)
        return some if low > 0 else self.optional(some)

    def stamp(self, template: tuple[NFA, Frag]) -> Frag:
        """A fresh copy of a piece built once in another NFA (much faster than building it again)."""
        other, (start, end) = template
        base = len(self.edges)
        self.edges.extend([(lo, hi, dst + base) for lo, hi, dst in edges] for edges in other.edges)
        self.eps.extend([dst + base for dst in eps] for eps in other.eps)
        for state, label in other.marks.items():
            self.marks[state + base] = label
        self.string_loops.update(state + base for state in other.string_loops)
        return start + base, end + base

    def mark(self, state: int, label: str) -> None:
        """Label a state; DFA states containing it report the label (used for jumps between parts)."""
        self.marks[state] = label

    # -- determinisation ----------------------------------------------------------------------

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        """The states reachable through epsilon edges (memoised per single state)."""
        memo = self._closures
        out: set[int] = set()
        for state in states:
            one = memo.get(state)
            if one is None:
                seen = {state}
                stack = [state]
                while stack:
                    for nxt in self.eps[stack.pop()]:
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
                one = memo[state] = frozenset(seen)
            out |= one
        return frozenset(out)

    def to_dfa(self, frag: Frag, *, max_states: int = MAX_DFA_STATES) -> ByteDFA:
        """The whole DFA at once: the lazy construction (``LazyDFA``) with every state expanded,
        as a dense table with state 0 the start."""
        from .lazy import SINK, LazyDFA  # lazy.py builds on this module

        lazy = LazyDFA(self, frag, max_states=max_states)
        if lazy.start == SINK:
            return ByteDFA(np.full((1, 256), DEAD, dtype=np.int32), np.zeros(1, dtype=bool), np.full(1, -1, dtype=np.int64))
        sid = lazy.start
        while sid < lazy.n_states:  # expanding may add states; walk until none is left
            lazy.expand(sid)
            sid += 1
        n = lazy.n_states
        return ByteDFA(
            lazy.table[1:n].astype(np.int32) - 1,  # lazy state i is state i - 1; the sink becomes DEAD
            lazy.accepting[1:n].copy(),
            lazy.dist[1:n].copy(),
            {s - 1: label for s, label in lazy.marks.items()},
        )


@dataclass(eq=False)
class ByteDFA:
    """A dense DFA over bytes. State 0 is the start; every live state can reach acceptance.

    Attributes:
        trans: ``(n_states, 256)`` int32; ``DEAD`` (-1) where a byte leaves the language.
        accepting: which states accept.
        dist: fewest bytes from each state to acceptance (the shortest completion).
        marks: labels of states that stand for a jump elsewhere (see ``NFA.mark``).
    """

    trans: np.ndarray
    accepting: np.ndarray
    dist: np.ndarray
    marks: dict[int, str] = field(default_factory=dict)

    @property
    def n_states(self) -> int:
        return int(self.trans.shape[0])

    @property
    def is_empty(self) -> bool:
        return bool(self.dist[0] < 0)

    # The interface vectorised walks use, shared with ``LazyDFA`` (there the sink is state 0).

    start = 0

    @property
    def sink(self) -> int:
        return self.n_states

    @property
    def table(self) -> np.ndarray:
        """``trans`` with a sink row appended and dead entries pointing to it."""
        table = self.__dict__.get("_table")
        if table is None:
            table = np.vstack([self.trans, np.full((1, 256), DEAD, dtype=np.int32)])
            table[table < 0] = self.sink
            self.__dict__["_table"] = table
        return table

    @property
    def exits(self) -> np.ndarray:
        """States where a walk hands over (accepting or marked), with the sink appended."""
        exits = self.__dict__.get("_exits")
        if exits is None:
            exits = self.__dict__["_exits"] = np.append(self.accepting, False)
            exits[list(self.marks)] = True
        return exits

    @property
    def expanded(self) -> np.ndarray:
        """Every row is built (read once per pass of a walk, so it is made once)."""
        expanded = self.__dict__.get("_expanded")
        if expanded is None:
            expanded = self.__dict__["_expanded"] = np.ones(self.n_states + 1, dtype=bool)
        return expanded

    def ensure(self, states: np.ndarray) -> None:
        """Nothing to do: every row is built."""

    def row(self, state: int) -> np.ndarray:
        return self.trans[state]

    def next(self, state: int, byte: int) -> int:
        """One step in the sink convention of ``table`` (the sink is ``n_states``)."""
        return int(self.table[state, byte])

    def step(self, state: int, data: bytes) -> int:
        """The state after ``data``, or ``DEAD``."""
        trans = self.trans
        for byte in data:
            state = int(trans[state, byte])
            if state < 0:
                return DEAD
        return state

    def accepts(self, data: bytes) -> bool:
        state = self.step(0, data)
        return state >= 0 and bool(self.accepting[state])
