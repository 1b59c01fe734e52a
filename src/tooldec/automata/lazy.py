"""A DFA determinised on demand: a state's row of transitions is built when a walk first needs it.

Building the whole DFA of a tool's arguments up front costs milliseconds per tool and mostly
computes states no call ever visits (optional parameters left out, long enums). Here the NFA is
analysed once (which states can still reach acceptance, and in how many bytes), and DFA states
are subsets of NFA states interned as they are reached.

State 0 is the dead sink (its row points to itself), so a table lookup never needs a special
case for death, and the table can grow without rewriting old rows.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .nfa import NFA, Frag, TooManyStatesError, MAX_DFA_STATES

__all__ = ["LazyDFA", "SINK"]

SINK = 0


class LazyDFA:
    """Byte DFA of an NFA fragment, expanded as needed.

    Attributes:
        table: ``(capacity, 256)`` int32; row ``s`` is valid once ``expanded[s]``.
        accepting, exits, dist: per state (``dist``: fewest bytes to acceptance).
        marks: labels of states that stand for a jump elsewhere.
        start: the initial state (``SINK`` if the language is empty).
    """

    def __init__(self, nfa: NFA, frag: Frag, *, max_states: int = MAX_DFA_STATES) -> None:
        self.nfa = nfa
        self.accept = frag[1]
        self.max_states = max_states
        self._nfa_dist = _distances_to(nfa, frag[1])
        capacity = 64
        self.table = np.zeros((capacity, 256), dtype=np.int32)
        self.expanded = np.zeros(capacity, dtype=bool)
        self.accepting = np.zeros(capacity, dtype=bool)
        self.exits = np.zeros(capacity, dtype=bool)
        self.dist = np.full(capacity, -1, dtype=np.int64)
        self.marks: dict[int, str] = {}
        self.expanded[SINK] = True
        self._rows: dict[int, np.ndarray] = {SINK: np.full(256, -1, dtype=np.int32)}
        self._sets: list[frozenset[int]] = [frozenset()]
        self._index: dict[frozenset[int], int] = {frozenset(): SINK}
        self._by_targets: dict[frozenset[int], int] = {}  # NFA targets of a byte -> DFA state
        self.start = self._intern(nfa.closure([frag[0]]))

    sink = SINK

    @property
    def n_states(self) -> int:
        return len(self._sets)

    @property
    def is_empty(self) -> bool:
        return self.start == SINK

    def _intern(self, states: frozenset[int]) -> int:
        nfa_dist = self._nfa_dist
        viable = frozenset(s for s in states if nfa_dist[s] >= 0)
        found = self._index.get(viable)
        if found is not None:
            return found
        sid = len(self._sets)
        if sid >= self.max_states:
            raise TooManyStatesError(f"more than {self.max_states} automaton states")
        if sid >= self.table.shape[0]:
            self._grow()
        self._sets.append(viable)
        self._index[viable] = sid
        self.accepting[sid] = self.accept in viable
        self.dist[sid] = min(nfa_dist[s] for s in viable)
        label = next((self.nfa.marks[s] for s in viable if s in self.nfa.marks), None)
        if label is not None:
            self.marks[sid] = label
        self.exits[sid] = self.accepting[sid] or label is not None
        return sid

    def _grow(self) -> None:
        size = self.table.shape[0] * 2
        self.table = np.concatenate([self.table, np.zeros_like(self.table)])
        for name in ("expanded", "accepting", "exits", "dist"):
            old = getattr(self, name)
            new = np.full(size, -1 if name == "dist" else 0, dtype=old.dtype)
            new[: old.size] = old
            setattr(self, name, new)

    def expand(self, sid: int) -> None:
        """Compute the row of ``sid`` (subset construction over byte intervals)."""
        if self.expanded[sid]:
            return
        nfa = self.nfa
        ranges = [r for s in self._sets[sid] for r in nfa.edges[s]]
        row = np.zeros(256, dtype=np.int32)
        if ranges:
            cuts = sorted({lo for lo, _, _ in ranges} | {hi + 1 for _, hi, _ in ranges})
            for lo, hi in zip(cuts, cuts[1:]):
                targets = frozenset(dst for a, b, dst in ranges if a <= lo <= b)
                if targets:
                    sid_next = self._by_targets.get(targets)
                    if sid_next is None:
                        sid_next = self._by_targets[targets] = self._intern(nfa.closure(targets))
                    row[lo:hi] = sid_next
        self.table[sid] = row
        self.expanded[sid] = True
        self._rows[sid] = np.where(row == SINK, -1, row)

    def string_exit(self, sid: int) -> int | None:
        """If ``sid`` is the content of an unbounded JSON string (nothing else possible), the
        state after its closing quote; found from the NFA, without expanding the content states."""
        members = self._sets[sid]
        loops = [s for s in members if s in self.nfa.string_loops]
        if len(loops) != 1:
            return None
        edges = self.nfa.edges  # states without byte edges only pass epsilon moves on: ignore them
        core = {s for s in members if edges[s] or s == self.accept}
        if core != {s for s in self.nfa.closure(loops) if (edges[s] or s == self.accept) and self._nfa_dist[s] >= 0}:
            return None
        targets = frozenset(dst for s in members for lo, hi, dst in self.nfa.edges[s] if lo <= 0x22 <= hi)
        sid_next = self._by_targets.get(targets)
        if sid_next is None:
            sid_next = self._by_targets[targets] = self._intern(self.nfa.closure(targets))
        return sid_next

    def ensure(self, states: np.ndarray) -> None:
        """Expand every state in ``states`` that is not yet expanded."""
        todo = states[~self.expanded[states]]
        for sid in np.unique(todo).tolist():
            self.expand(sid)

    def row(self, sid: int) -> np.ndarray:
        """The transitions of ``sid`` with dead entries as -1 (the ``ByteDFA`` convention)."""
        if not self.expanded[sid]:
            self.expand(sid)
        return self._rows[sid]

    def next(self, sid: int, byte: int) -> int:
        if not self.expanded[sid]:
            self.expand(sid)
        return int(self.table[sid, byte])

    def step(self, sid: int, data: bytes) -> int:
        for byte in data:
            sid = self.next(sid, byte)
            if sid == SINK:
                break
        return sid


def _distances_to(nfa: NFA, accept: int) -> list[int]:
    """Fewest bytes from each NFA state to ``accept`` (-1: unreachable); epsilon edges are free."""
    n = len(nfa.edges)
    reverse: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for src in range(n):
        for _, _, dst in nfa.edges[src]:
            reverse[dst].append((src, 1))
        for dst in nfa.eps[src]:
            reverse[dst].append((src, 0))
    dist = [-1] * n
    dist[accept] = 0
    queue = deque([accept])
    while queue:  # 0-1 breadth-first search
        node = queue.popleft()
        for src, weight in reverse[node]:
            cand = dist[node] + weight
            if dist[src] < 0 or cand < dist[src]:
                dist[src] = cand
                if weight:
                    queue.append(src)
                else:
                    queue.appendleft(src)
    return dist
