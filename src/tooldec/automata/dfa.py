"""A byte DFA determinised on demand from an NFA with counted regions; shareable across threads.

A tool's whole DFA mostly holds states no call visits, so a state's row is built the first time a walk needs it.
A DFA state is a set of NFA states plus, for every counted region it is inside of, the *class* of its counter:
the exact count while it matters (below ``low``, or within ``window`` of ``high``), else :data:`MID`. ``window``
is at least the most units one token can add (its byte length), so within one token a ``MID`` counter can neither
reach ``high`` nor fall under ``low``: masks from the abstract state are exact, and the cursor, which carries
exact counts, relabels the state when a count enters the window (:meth:`LazyDFA.reclass`). ``maxLength: 65535``
costs a handful of states, not 65,535 copies of a character.

State 0 is the dead sink. Every change (new states, rows, growth) happens under ``lock``; the arrays are replaced
together (``arrays``), so a reader that takes one snapshot sees consistent rows. Readers of single transitions
need no lock; vectorised walks hold ``lock`` for their duration.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from ..native import compiled
from .costs import MID, Costs, region_chains
from .gcpause import collector_paused
from .nfa import BLANK_RANGES, NFA, Frag, Guard, Stamp
from .sampling import sample
from .shortest import Classes, repeat_after, shortest_runs, spell

if TYPE_CHECKING:
    from ._dfa_expand import Tables

__all__ = ["MID", "NATIVE", "SINK", "Arrays", "BlankSpot", "LazyDFA", "StringSpot", "piece_automaton"]

SINK = 0


_native = compiled("tooldec.automata._dfa_expand")
NATIVE = _native is not None
"""Whether states are expanded by the compiled subset construction (``_dfa_expand.c``); without it
(or with ``TOOLDEC_NATIVE=0``) :meth:`LazyDFA.expand` runs the same construction in Python."""

_T = TypeVar("_T")



@dataclass
class Arrays:
    """Per-state arrays, replaced together when the DFA grows (take one snapshot per read)."""

    table: np.ndarray  # (capacity, 256) int32; row s valid once expanded[s]
    expanded: np.ndarray
    accepting: np.ndarray
    exits: np.ndarray  # accepting or marked: where a walk hands over
    dist: np.ndarray  # fewest bytes to acceptance (int64)

    @classmethod
    def empty(cls, capacity: int) -> Arrays:
        return cls(np.zeros((capacity, 256), dtype=np.int32), np.zeros(capacity, dtype=bool),
                   np.zeros(capacity, dtype=bool), np.zeros(capacity, dtype=bool), np.full(capacity, -1, dtype=np.int64))

    def grown(self) -> Arrays:
        n = self.table.shape[0]
        out = Arrays.empty(n * 2)
        for old, new in zip(self.parts(), out.parts(), strict=True):
            new[:n] = old
        return out

    def parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.table, self.expanded, self.accepting, self.exits, self.dist


@dataclass
class _Step:
    """What one byte does from one state, for a cursor that keeps exact counts."""

    incs: tuple[int, ...] = ()
    resets: tuple[int, ...] = ()
    tracked: bool = False
    """Whether a counter that can still matter changes (a bound above, or below ``low``)."""


@dataclass
class StringSpot:
    """A state that is exactly a string's content: a plain string's at a character boundary, or in a template's copy."""

    region: int  # the plain string's counted region (-1 in a template's copy)
    low: int
    high: int | None
    count_class: int  # the counter's class here (``MID`` or the exact count)
    after_quote: int  # the state after the closing quote (for a token whose characters reach ``low``)
    piece: LazyDFA | None = None
    """In a template's copy: the template's own automaton (:func:`piece_automaton`), shared."""
    content: int = -1  # in a template's copy: the state of ``piece`` this state is


@dataclass(frozen=True)
class BlankSpot:
    """A state inside a run of JSON whitespace (``NFA.blank_run``) where nothing else takes whitespace: a token's
    leading whitespace counts up the run (``room`` bytes left), its first other byte is read from ``after``."""

    region: int
    room: int | None  # ``None``: no upper bound
    after: int


_NO_STEPS: tuple[bytes, list[_Step]] = (b"", [])
"""What ``LazyDFA._steps`` keeps for a state none of whose bytes steps a counter."""

Key = tuple[frozenset[int], Classes]
"""What a DFA state is: its NFA states and the classes of the counters of the regions it is in."""


class _States(Protocol):
    """The DFA's states by number and by key: :class:`_StateIndex`, or the compiled tables."""

    def __len__(self) -> int: ...
    def __getitem__(self, sid: int) -> Key: ...
    def classes(self, sid: int) -> Classes: ...
    def find(self, key: Key) -> int: ...
    def add(self, key: Key) -> int: ...


class _StateIndex:
    """:class:`_States` in Python (where the compiled expansion is not built)."""

    def __init__(self) -> None:
        self._keys: list[Key] = [(frozenset(), ())]
        self._numbers: dict[Key, int] = {(frozenset(), ()): SINK}

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, sid: int) -> Key:
        return self._keys[sid]

    def classes(self, sid: int) -> Classes:
        return self._keys[sid][1]

    def find(self, key: Key) -> int:
        """The state's number, or -1."""
        return self._numbers.get(key, -1)

    def add(self, key: Key) -> int:
        """Number a new state (the caller holds the DFA's lock)."""
        sid = len(self._keys)
        self._keys.append(key)
        self._numbers[key] = sid
        return sid


class LazyDFA:
    """Byte DFA of an NFA piece (whose exit accepts; the NFA unchanged afterwards), expanded as needed. ``window``
    is at least the longest token in bytes of the vocabulary it is walked with; ``prune`` drops NFA states that
    cannot accept (``False`` for search automata, which never accept and hand over at their marks)."""

    sink = SINK
    arrays: Arrays
    """The per-state arrays (replaced, never resized, when the DFA grows: take one snapshot per read)."""

    def __init__(self, nfa: NFA, frag: Frag, *, window: int = 256, prune: bool = True) -> None:
        self.nfa = nfa
        self.prune = prune
        self.accept = frag[1]
        self.window = window
        self.lock = threading.RLock()
        self.marks: dict[int, str] = {}
        self._units = nfa.unit_of
        with collector_paused():  # the tables allocate one object or more per NFA state
            self._costs = Costs(nfa, frag[1], window)
            self._chains = region_chains(nfa)
        # the compiled expansion's tables (used under ``lock``) keep the states and label ``marks``
        self._tables: Tables | None = None
        if _native is not None:
            self._tables = _compiled_tables(nfa, self._costs, frag[1], prune, self.marks)
        self._states: _States = _StateIndex() if self._tables is None else self._tables
        arrays = Arrays.empty(64)
        arrays.expanded[SINK] = True
        self._publish(arrays)
        # (targets, counters stepped, classes) -> (state, regions reset), once per automaton
        self._moves: dict[tuple[frozenset[int], frozenset[int], Classes], tuple[int, tuple[int, ...]]] = {}
        self._steps: dict[int, tuple[np.ndarray | memoryview | bytes, list[_Step]]] = {}
        self._rows: dict[int, np.ndarray] = {}  # live rows (dead entries -1), made by row() when read
        self._strings: dict[int, StringSpot | None] = {}
        self._blanks: dict[int, BlankSpot | None] = {}
        self._spots: dict[int, tuple[StringSpot | None, BlankSpot | None]] = {}
        self._pieces: list[Stamp] | None = None  # the copies of quoted-string templates, found once
        self._short_steps: dict[int, tuple[int, int]] = {}
        self._short_ends: dict[int, int] = {}
        with self.lock:
            self.start = self._enter([frag[0]], {})

    # -- arrays (read a fresh snapshot each time) -------------------------------------------------

    def _publish(self, arrays: Arrays) -> None:
        """Make ``arrays`` the DFA's and the compiled tables' (under ``lock``, once written)."""
        if self._tables is not None:
            self._tables.use(*arrays.parts())
        self.arrays = arrays

    def _compiled(self, call: Callable[..., _T], *args: object) -> _T:
        """``call(*args)``, a compiled tables' method, under ``lock``; where the arrays are full (``NeedsRoom``)
        they grow and it runs again, finding the states it had made."""
        assert _native is not None
        with self.lock:
            while True:
                try:
                    return call(*args)
                except _native.NeedsRoom:
                    self._publish(self.arrays.grown())

    def compiled_view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Tables | None]:
        """What the compiled trie walk reads (under ``lock``): four arrays and the compiled tables."""
        arrays = self.arrays
        return arrays.table, arrays.expanded, arrays.exits, arrays.dist, self._tables

    @property
    def n_states(self) -> int:
        return len(self._states)

    @property
    def is_empty(self) -> bool:
        return self.start == SINK

    @property
    def nbytes(self) -> int:
        """Memory held by the tables (for cache accounting)."""
        arrays = self.arrays  # and about 4.5 KB a state beyond them (RSS over 100k states)
        return int(arrays.table.nbytes + arrays.dist.nbytes + 3 * arrays.expanded.nbytes) + 4500 * len(self._states)

    # -- counter classes ---------------------------------------------------------------------------

    def class_of(self, region: int, count: int) -> int:
        return self._costs.class_of(region, count)


    def _below_high(self, region: int, cls: int) -> bool:
        high = self.nfa.regions[region].high
        return cls == MID or high is None or cls < high


    # -- construction (under lock) -----------------------------------------------------------------

    def _closure(self, states: Iterable[int], classes: dict[int, int]) -> tuple[frozenset[int], Classes, tuple[int, ...]]:
        """Epsilon closure with guards; returns (viable states, classes of active regions, resets)."""
        nfa = self.nfa
        if not nfa.regions:  # no counters: the plain closure, pruned
            plain = nfa.closure(states)
            if not self.prune:
                return plain, (), ()
            reach = self._costs.reach
            return frozenset(s for s in plain if reach[s]), (), ()
        out: set[int] = set()
        resets: list[int] = []
        classes = dict(classes)
        stack = list(states)
        guarded = nfa.guarded
        while stack:
            for state in nfa.closure_one(stack.pop()):
                if state in out:
                    continue
                out.add(state)
                for dst, kind, region in guarded[state]:
                    if kind is Guard.RESET:
                        classes[region] = self.class_of(region, 0)
                        resets.append(region)
                        stack.append(dst)
                    elif kind is Guard.BELOW_HIGH:
                        if self._below_high(region, classes[region]):
                            stack.append(dst)
                    elif classes[region] == MID or classes[region] >= nfa.regions[region].low:  # AT_LEAST_LOW
                        stack.append(dst)
        viable = {state for state in out if not self.prune or self._costs.viable(state, classes)}
        active = {region for state in viable for region in self._chains[state]}
        kept = tuple(sorted((r, classes[r]) for r in active))
        return frozenset(viable), kept, tuple(sorted(set(resets)))

    def _enter(self, states: Iterable[int], classes: dict[int, int]) -> int:
        """The state of the closure of ``states`` with counters at ``classes`` (under ``lock``)."""
        found, kept, _ = self._closure(states, classes)
        return self._intern(found, kept)

    def _intern(self, states: frozenset[int], classes: Classes) -> int:
        if not states:
            return SINK
        key = (states, classes)
        found = self._states.find(key)
        if found >= 0:
            return found
        sid = len(self._states)
        arrays = self.arrays
        if sid >= arrays.table.shape[0]:
            arrays = arrays.grown()
        accepting = self.accept in states
        marks = self.nfa.marks  # few: the handovers of a call
        labels = [text for s, text in marks.items() if s in states] if marks else []
        label = min(labels, key=lambda text: (len(text), text)) if labels else None  # deterministic: the first declared
        arrays.accepting[sid] = accepting
        arrays.exits[sid] = accepting or label is not None
        arrays.dist[sid] = self._costs.of(states, dict(classes))
        if label is not None:
            self.marks[sid] = label
        self._states.add(key)
        if arrays is not self.arrays:
            self._publish(arrays)  # after the entries are written
        return sid

    def _moves_of(self, sid: int) -> Iterator[tuple[int, int, int, frozenset[int], tuple[int, ...]]]:
        """The moves of ``sid`` by byte interval, in byte order: ``(lo, hi, state, counters stepped, regions
        reset)`` for bytes ``lo`` to ``hi - 1``, dead ones skipped; each target interned when reached (under lock)."""
        nfa = self.nfa
        states, classes = self._states[sid]
        cls = dict(classes)
        moves: list[tuple[int, int, int, int]] = []
        for state in states:
            region = self._units.get(state, -1)
            if region >= 0 and not self._below_high(region, cls[region]):
                continue
            moves.extend((lo, hi, dst, region) for lo, hi, dst in nfa.edges[state])
        if not moves:
            return
        moves.sort()
        if all(a[1] < b[0] for a, b in zip(moves, moves[1:])):  # disjoint (a literal, a byte class): one target each
            for lo, hi, dst, region in moves:
                incs = frozenset((region,)) if region >= 0 else frozenset()
                found, resets = self._move(frozenset((dst,)), incs, classes, cls)
                yield lo, hi + 1, found, incs, resets
            return
        starts: dict[int, list[int]] = {}
        ends: dict[int, list[int]] = {}
        for k, (a, b, _, _) in enumerate(moves):
            starts.setdefault(a, []).append(k)
            ends.setdefault(b + 1, []).append(k)
        cuts = sorted(starts.keys() | ends.keys())
        live: set[int] = set()
        for lo, hi in zip(cuts, cuts[1:]):
            live.difference_update(ends.get(lo, ()))
            live.update(starts.get(lo, ()))
            if not live:
                continue
            hits = [(moves[k][2], moves[k][3]) for k in live]
            targets = frozenset(dst for dst, _ in hits)
            incs = frozenset(region for _, region in hits if region >= 0)
            found, resets = self._move(targets, incs, classes, cls)
            yield lo, hi, found, incs, resets

    def _move(self, targets: frozenset[int], incs: frozenset[int], classes: Classes,
              cls: dict[int, int]) -> tuple[int, tuple[int, ...]]:
        """Where a move to ``targets`` (counters ``incs`` stepped) leads, and the regions it resets (under ``lock``)."""
        move_key = (targets, incs, classes)
        move = self._moves.get(move_key)
        if move is None:
            after = dict(cls)
            for region in incs:
                after[region] = MID if after[region] == MID else self.class_of(region, after[region] + 1)
            new_states, new_classes, resets = self._closure(targets, after)
            move = self._moves[move_key] = (self._intern(new_states, new_classes), resets)
        return move

    def expand(self, sid: int) -> None:
        """Build the row of ``sid`` (subset construction over byte intervals), compiled where built."""
        with self.lock:
            if self.arrays.expanded[sid]:
                return
            if self._tables is not None:
                self._compiled(self._tables.expand, sid)
                return
            regions = self.nfa.regions
            row = np.zeros(256, dtype=np.int32)
            step_of = np.zeros(256, dtype=np.int16)
            steps: list[_Step] = [_Step()]
            for lo, hi, found, incs, resets in self._moves_of(sid):
                row[lo:hi] = found
                if incs or resets:
                    tracked = any(regions[r].high is not None or regions[r].low > 0 for r in (*incs, *resets))
                    step_of[lo:hi] = len(steps)
                    steps.append(_Step(tuple(sorted(incs)), resets, tracked))
            arrays = self.arrays
            arrays.table[sid] = row
            if len(steps) > 1:
                self._steps[sid] = (step_of, steps)
            arrays.expanded[sid] = True

    def ensure(self, states: np.ndarray) -> None:
        """Expand every state in ``states`` that is not expanded yet."""
        todo = states[~self.arrays.expanded[states]]
        for sid in np.unique(todo).tolist():
            self.expand(sid)

    def state_of(self, states: Iterable[int]) -> int:
        """The state made of ``states`` and everything their epsilon moves reach (counters at 0)."""
        with self.lock:
            return self._enter(states, {})

    def expand_all(self) -> LazyDFA:
        """Every reachable state expanded (small automata: formats, openers, the string table)."""
        sid = self.start
        while sid < self.n_states:
            self.expand(sid)
            sid += 1
        return self

    # -- reading ---------------------------------------------------------------------------------

    def row(self, sid: int) -> np.ndarray:
        """The transitions of ``sid`` with dead entries as -1 (read-only)."""
        found = self._rows.get(sid)
        if found is None:
            if not self.arrays.expanded[sid]:
                self.expand(sid)
            live = self.arrays.table[sid].copy()
            live[live == SINK] = -1
            found = self._rows.setdefault(sid, live)
        return found

    def next(self, sid: int, byte: int) -> int:
        arrays = self.arrays
        if not arrays.expanded[sid]:
            self.expand(sid)
            arrays = self.arrays
        return int(arrays.table[sid, byte])

    def step(self, sid: int, data: bytes) -> int:
        """The abstract state after ``data`` (counters as classes; for short, counter-free walks)."""
        for byte in data:
            sid = self.next(sid, byte)
            if sid == SINK:
                break
        return sid

    def actions(self, sid: int, byte: int) -> _Step | None:
        """The counters ``byte`` increments and resets from ``sid`` (``None``: none); ``sid`` expanded."""
        found = self._steps.get(sid)
        if found is None:
            if self._tables is None:
                return None
            raw = self._tables.steps(sid)  # kept in C until asked
            found = _NO_STEPS if raw is None else (memoryview(raw[0]).cast("h"),
                                                   [_Step(), *(_Step(*step) for step in raw[1])])
            self._steps[sid] = found
        if found is _NO_STEPS:
            return None
        index = int(found[0][byte])
        return found[1][index] if index else None

    def classes(self, sid: int) -> Classes:
        return self._states.classes(sid)

    def nfa_states(self, sid: int) -> frozenset[int]:
        return self._states[sid][0]

    def reclass(self, sid: int, counts: dict[int, int]) -> int:
        """The state whose counter classes match the exact ``counts`` (the same NFA states)."""
        states, classes = self._states[sid]
        fixed = tuple((r, self.class_of(r, counts[r]) if r in counts else c) for r, c in classes)
        if fixed == classes:
            return sid
        with self.lock:
            return self._intern(states, fixed)

    def spots(self, sid: int) -> tuple[StringSpot | None, BlankSpot | None]:
        """:meth:`string_spot`, and :meth:`blank_spot` where that is ``None``: what a mask asks first, in one lookup."""
        found = self._spots.get(sid)
        if found is None:
            if self._tables is not None:  # one compiled call
                with self.lock:
                    string, blank = self._compiled(self._tables.spots, sid)
                    spot = StringSpot(*string) if string is not None else None if blank is not None \
                        else self._piece_spot(sid)
                found = (spot, None if blank is None else BlankSpot(*blank))
            else:
                spot = self.string_spot(sid)
                found = (spot, None if spot is not None else self.blank_spot(sid))
            self._spots[sid] = found
        return found

    def string_spot(self, sid: int) -> StringSpot | None:
        """What a plain string allows where ``sid`` is exactly its content at a character boundary, else ``None``."""
        if sid not in self._strings:
            with self.lock:
                if self._tables is not None:
                    found = self._compiled(self._tables.string_spot, sid)
                    spot = None if found is None else StringSpot(*found)
                else:
                    spot = self._plain_string_spot(sid)
                self._strings[sid] = spot or self._piece_spot(sid)
        return self._strings[sid]

    def _plain_string_spot(self, sid: int) -> StringSpot | None:
        nfa = self.nfa
        classes = self.classes(sid)  # (most states are in no string: their NFA states are not read)
        live: set[int] | None = None
        for rid, cls in classes:
            region = nfa.regions[rid]
            if region.string_quote < 0:
                continue
            (unit,) = region.units
            if live is None:
                live = {s for s in self.nfa_states(sid) if nfa.edges[s]}
            if unit not in live or not live <= {unit, region.string_quote}:
                continue
            closed = nfa.edges[region.string_quote][0][2]  # after the quote, once the string may end
            after = self._enter([closed], {r: c for r, c in classes if r != rid})
            return StringSpot(rid, region.low, region.high, cls, after)
        return None

    def _piece_spot(self, sid: int) -> StringSpot | None:
        """The spot of a state inside a copy of a quoted-string template, or ``None``: tokens do what they do from
        the same state of the template's own automaton, up to the closing quote."""
        pieces = self._pieces
        if pieces is None:
            pieces = self._pieces = [p for p in self.nfa.stamps if p.template.quoted_string and not p.template.regions]
        if not pieces:
            return None
        states = self.nfa_states(sid)
        low = min(states)
        stamp = next((p for p in pieces if p.base <= low < p.base + p.template.size), None)
        if stamp is None or max(states) >= stamp.base + stamp.template.size:
            return None
        piece = piece_automaton(stamp.template, stamp.frag)
        content = piece._states.find((frozenset(s - stamp.base for s in states), ()))  # -1: no walk made it yet
        if content < 0:
            return None
        after = self._enter([stamp.frag[1] + stamp.base], dict(self.classes(sid)))
        return StringSpot(-1, 0, None, MID, after, piece, content)


    def blank_spot(self, sid: int) -> BlankSpot | None:
        """What a whitespace run allows where ``sid`` is inside one that alone takes whitespace, and neither it nor
        the state after the run is an exit, else ``None``: a token of ``j`` leading whitespace bytes is allowed
        exactly when ``j`` is within ``room`` and its rest walks from ``after`` (``j > 0``) or from ``sid``."""
        if sid not in self._blanks:
            with self.lock:
                self._blanks[sid] = self._blank_spot(sid)
        return self._blanks[sid]

    def _blank_spot(self, sid: int) -> BlankSpot | None:
        if self._tables is not None:
            found = self._compiled(self._tables.blank_spot, sid)
            return None if found is None else BlankSpot(*found)
        nfa = self.nfa
        if self.arrays.exits[sid]:
            return None
        classes = self.classes(sid)
        for rid, count in classes:
            region = nfa.regions[rid]
            if not region.blank or count == MID:
                continue
            (unit,) = region.units
            states = self.nfa_states(sid)
            if unit not in states or (region.high is not None and count >= region.high):
                continue
            for state in states:
                if state != unit and any(lo <= z and a <= hi for lo, hi, _ in nfa.edges[state] for a, z in BLANK_RANGES):
                    return None  # something else takes whitespace here too
            after_states, after_classes, _ = self._closure([region.exit], dict(classes))
            if any(r == rid for r, _ in after_classes):
                return None
            after = self._intern(after_states, after_classes)
            if after == SINK or self.arrays.exits[after]:
                return None
            return BlankSpot(rid, None if region.high is None else region.high - count, after)
        return None

    def shortest(self, sid: int) -> bytes:
        """The canonical shortest completion from ``sid``: at each step the smallest byte that keeps to a shortest
        path. It depends on the state alone: counts matter only near a bound, where the classes are exact."""
        return self.shortest_to(sid)[0]

    def shortest_to(self, sid: int) -> tuple[bytes, int]:
        """:meth:`shortest` and the accepting state it ends in (whose mark may say the text goes on)."""
        runs, end = shortest_runs(self, sid)
        return spell(runs), end

    def shortest_end(self, sid: int) -> int:
        """The state :meth:`shortest_to` ends in, without spelling the way (repeats jumped); kept along the way."""
        ends = self._short_ends
        path = []
        seen: dict[tuple[frozenset[int], tuple[int, ...]], tuple[int, tuple[tuple[int, int], ...]]] = {}
        while (end := ends.get(sid)) is None:
            step = self.shortest_step(sid)
            if step is None:
                end = sid
                break
            path.append(sid)
            sid = step[1]
            jump = repeat_after(self, sid, len(path), seen)
            if jump is not None:
                sid = jump[2]
                seen.clear()
        for state in path:  # plain ints: a thread that reads one half-kept finds the rest by the steps
            ends[state] = end
        return end

    def shortest_step(self, sid: int) -> tuple[int, int] | None:
        """The first byte of ``sid``'s shortest completion and the state after it (kept); ``None`` where it accepts."""
        step = self._short_steps.get(sid)
        if step is None:
            if self.arrays.accepting[sid]:
                return None
            step = self._short_steps[sid] = self._short_step(sid)
        return step

    def _short_step(self, sid: int) -> tuple[int, int]:
        """The smallest byte whose move keeps to a shortest path, and where it leads (moves made in byte order
        until one is found: the states along it are not expanded)."""
        with self.lock:
            if self._tables is not None:
                return self._compiled(self._tables.short_step, sid)
            want = int(self.arrays.dist[sid]) - 1
            for lo, _, found, _, _ in self._moves_of(sid):
                if found != SINK and int(self.arrays.dist[found]) == want:
                    return lo, found
        raise RuntimeError(f"no shortest step from state {sid}")  # pragma: no cover - distances are exact

    def walk(self, data: bytes, sid: int | None = None, counts: dict[int, int] | None = None) -> tuple[int, dict[int, int]]:
        """The state (and exact counters) after ``data`` from ``sid`` (default: the start)."""
        state = self.start if sid is None else sid
        have = dict(counts or {})
        for byte in data:
            state, have = self.advance_exact(state, byte, have)
            if state == SINK:
                break
        return state, have

    def accepts(self, data: bytes) -> bool:
        """Whether ``data`` is in the language (counters exact)."""
        state, _ = self.walk(data)
        return state != SINK and bool(self.arrays.accepting[state])

    def sample(self, rng: random.Random, soft_limit: int = 120) -> bytes:
        """A random string of the language, counters exact (see :func:`.sampling.sample`)."""
        return sample(self, rng, soft_limit)

    def walk_counted(self, sid: int, counts: dict[int, int], data: bytes, i: int) -> tuple[int, dict[int, int], int]:
        """``data[i:]`` from ``sid`` with exact counters up to its end, ``SINK`` or an exit state (after its byte):
        the state, the counts and where it stopped (in one compiled call while no counter has to be counted)."""
        if not counts and self._tables is not None:
            sid, i, status = self._compiled(self._tables.walk_plain, sid, data, i)
            if status != 3:  # the end, a dead end or an exit; 3: a counter to count from ``i`` on
                return sid, counts, i
        n = len(data)
        while i < n:
            sid, counts = self.advance_exact(sid, data[i], counts)
            i += 1
            if sid == SINK or self.arrays.exits[sid]:
                break
        return sid, counts, i

    def walk_inside(self, sid: int, data: bytes) -> int:
        """The state after ``data`` where the compiled tables read it all meeting no exit or counter (most tokens in
        arguments), ``SINK`` where it dies, else -1: the caller walks it exactly (:meth:`walk_counted`)."""
        if self._tables is None or not data:
            return -1
        sid, _, status = self._compiled(self._tables.walk_plain, sid, data, 0)
        return sid if status in (0, 2) else -1  # 0: all read, not on an exit; 2: dead (SINK)

    def walk_classes(self, sid: int, data: bytes) -> tuple[int, int, bool]:
        """``data`` from ``sid`` with counters as classes up to its end, ``SINK`` or an exit state (after its byte):
        the state, the bytes read and whether it is an exit (compiled, up to a counter step left to this loop)."""
        i, n = 0, len(data)
        if self._tables is not None and sid != SINK and n:
            sid, i, status = self._compiled(self._tables.walk_plain, sid, data, 0)
            if status != 3:  # 0: all read, not on an exit; 1: on an exit; 2: dead
                return sid, i, status == 1
        while i < n:
            sid = self.next(sid, data[i])
            i += 1
            if sid == SINK or self.arrays.exits[sid]:
                break
        return sid, i, sid != SINK and bool(self.arrays.exits[sid])

    def advance_exact(self, sid: int, byte: int, counts: dict[int, int]) -> tuple[int, dict[int, int]]:
        """One byte with exact counters: the next state (relabelled) and the new counts."""
        nxt = self.next(sid, byte)
        if nxt == SINK:
            return SINK, counts
        step = self.actions(sid, byte)
        if not counts and (step is None or not step.tracked):
            return nxt, counts
        new = dict(counts)
        if step is not None:
            before = dict(self._states[sid][1])
            for region in step.incs:
                if region in new:
                    new[region] += 1
                elif before.get(region, MID) != MID:
                    new[region] = before[region] + 1
                # else: unbounded above and past ``low``: its class stays MID, nothing to count
            for region in step.resets:
                new[region] = 0
        regions = self.nfa.regions
        classes = self._states[nxt][1]
        active = {r for r, _ in classes}
        new = {r: c for r, c in new.items() if r in active and (regions[r].high is not None or c < regions[r].low)}
        for r, cls in classes:  # a bounded region entered without a reset seen here: its class is exact
            if r not in new and cls != MID:
                new[r] = cls
        return self.reclass(nxt, new), new


def _compiled_tables(nfa: NFA, costs: Costs, accept: int, prune: bool, labels: dict[int, str]) -> Tables:
    """The compiled expansion's tables of ``nfa`` (``_dfa_expand.c`` reads lists and a tuple per region, no
    attribute); new states' labels go to ``labels``."""
    assert _native is not None
    regions = [(r.low, -1 if r.high is None else r.high, r.parent, r.decide, r.loop, r.exit, r.text, r.blank,
                r.string_quote, r.separator is not None, r.units, r.separator_states, info.band, info.unit_min,
                info.sep_min) for r, info in zip(nfa.regions, costs.info, strict=True)]
    tables: Tables = _native.tables((nfa.scope, nfa.edges, nfa.eps, nfa.guarded, nfa.marks), regions,
                                    (costs.reach, costs.chars, costs.local), accept, prune, labels)
    return tables


@functools.lru_cache(maxsize=64)
def piece_automaton(template: NFA, frag: Frag) -> LazyDFA:
    """A quoted-string template's whole automaton, built once and shared by its copies in every tool."""
    return LazyDFA(template, frag).expand_all()
