"""Byte-level NFAs built from small pieces, with counted regions instead of unrolled repetitions.

Every grammar in tooldec (arguments, call formats, regex patterns) is a Thompson-style NFA over bytes built here;
:mod:`tooldec.automata.dfa` determinises it lazily. A *counted region* stands for ``low..high`` repetitions of one
piece (string characters, array items), built once, with a counter carried by the cursor:

* ``entry`` --(reset the counter)--> ``decide``;
* ``decide`` --[count < high]--> ``unit`` (a fresh state holding the first-byte edges of the
  piece: taking one of them starts a unit and increments the counter);
* the piece's end --> ``loop``; ``loop`` --[count < high]--> separator --> ``unit``;
* ``decide`` and ``loop`` --[count >= low]--> ``exit``.

A *character region* (:meth:`NFA.counted_text`) marks every character of any piece as a unit and guards only the
exit. Each NFA state belongs to one *scope*: the innermost region it is inside of, or ``TOP``.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["BLANK_RANGES", "NFA", "TOP", "Frag", "Guard", "Region", "Stamp", "stamp_plan"]

Frag = tuple[int, int]
"""A piece of NFA: (entry state, exit state). Pieces are used once; build a new one to repeat."""

TOP = -1
"""The scope of states outside every counted region."""

BLANK_RANGES = ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20))
"""JSON's whitespace bytes: tab, newline, carriage return, space."""


class Guard(enum.IntEnum):
    """What a guarded epsilon edge does with its region's counter."""

    RESET = 0
    """Entering the region: the counter starts at 0."""
    BELOW_HIGH = 1
    """Passable only while count < high (another unit may start)."""
    AT_LEAST_LOW = 2
    """Passable only when count >= low (the region may end)."""


@dataclass(frozen=True)
class Stamp:
    """A piece copied from a template NFA (:meth:`NFA.stamp`), its states from ``base``, its regions from ``rbase``.
    Only its exit gets edges to the outside, so its distance tables are copied from the template's."""

    base: int
    rbase: int
    template: NFA
    frag: Frag


@dataclass
class Region:
    """One counted region (see the module docstring). ``high`` is ``None`` for no upper bound."""

    low: int
    high: int | None
    parent: int
    entry: int = -1
    decide: int = -1
    loop: int = -1
    exit: int = -1
    units: set[int] = field(default_factory=set)
    """States whose byte edges start a unit (increment the counter; allowed while count < high)."""
    separator: Frag | None = None
    separator_states: frozenset[int] = frozenset()
    text: bool = False
    """A character region (:meth:`NFA.counted_text`): units anywhere, only the exit guarded."""
    string_quote: int = -1
    """For a plain JSON string's content: the state whose only edge is the closing quote."""
    blank: bool = False
    """A run of JSON whitespace (:meth:`NFA.blank_run`): one whitespace byte per unit."""


class NFA:
    """A growing NFA over bytes: byte-range edges, plain and guarded epsilon edges, regions."""

    def __init__(self) -> None:
        self.edges: list[Sequence[tuple[int, int, int]]] = []
        self.eps: list[Sequence[int]] = []
        self.guarded: list[Sequence[tuple[int, Guard, int]]] = []
        """Per state: (target, guard, region) epsilon edges. A state's cells are tuples until an edge is added:
        far fewer objects for the garbage collector to walk."""
        self.scope: list[int] = []
        self.marks: dict[int, str] = {}
        self.regions: list[Region] = []
        self._scope_stack: list[int] = [TOP]
        self._closures: dict[int, frozenset[int]] = {}
        self.stamps: list[Stamp] = []
        self.quoted_string = False
        """Whether this NFA is a template of one quoted string, without counted regions, ending at its closing
        quote: each copy's content is masked from a per-vocabulary table (``LazyDFA.string_spot``)."""

    def state(self) -> int:
        self.edges.append(())  # a list once the state gets its first edge (most never get all three)
        self.eps.append(())
        self.guarded.append(())
        self.scope.append(self._scope_stack[-1])
        return len(self.edges) - 1

    @property
    def size(self) -> int:
        return len(self.edges)

    def edge(self, src: int, lo: int, hi: int, dst: int) -> None:
        cell = self.edges[src]
        if not isinstance(cell, list):
            cell = self.edges[src] = list(cell)
        cell.append((lo, hi, dst))

    def epsilon(self, src: int, dst: int) -> None:
        cell = self.eps[src]
        if not isinstance(cell, list):
            cell = self.eps[src] = list(cell)
        cell.append(dst)

    def guard(self, src: int, dst: int, kind: Guard, region: int) -> None:
        cell = self.guarded[src]
        if not isinstance(cell, list):
            cell = self.guarded[src] = list(cell)
        cell.append((dst, kind, region))

    def mark(self, state: int, label: str) -> None:
        """Label a state; DFA states containing it report the label (used for jumps between parts)."""
        self.marks[state] = label

    # -- pieces -----------------------------------------------------------------------------

    def literal(self, data: bytes) -> Frag:
        """A chain of ``len(data) + 1`` states, added at once."""
        base, n = len(self.edges), len(data)
        self.edges += [((byte, byte, base + i + 1),) for i, byte in enumerate(data)]
        self.edges.append(())
        self.eps += [()] * (n + 1)
        self.guarded += [()] * (n + 1)
        self.scope += [self._scope_stack[-1]] * (n + 1)
        return base, base + n

    def byte_ranges(self, ranges: Iterable[tuple[int, int]]) -> Frag:
        """One byte out of the given inclusive ranges."""
        start, end = self.state(), self.state()
        for lo, hi in ranges:
            self.edge(start, lo, hi, end)
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
        """``low`` to ``high`` (``None``: unbounded) copies of ``make()``, unrolled: for short fixed counts only."""
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
        """``low``..``high`` items joined by separators, unrolled."""
        if high == 0:
            return self.empty()
        rest = self.repeat(lambda: self.seq(sep(), make()), max(low - 1, 0), None if high is None else high - 1)
        some = self.seq(make(), rest)
        return some if low > 0 else self.optional(some)

    def stamp(self, template: tuple[NFA, Frag]) -> Frag:
        """A fresh copy of a piece built once in another NFA, regions included: a few list extensions, where
        building an any-value piece calls thousands of constructors. The template holds only that piece, unchanging."""
        other, (start, end) = template
        base = len(self.edges)
        rbase = len(self.regions)
        scope = self._scope_stack[-1]

        def shift(state: int) -> int:
            return state + base if state >= 0 else state

        plan = stamp_plan(other)
        size = other.size
        edges: list[Sequence[tuple[int, int, int]]] = [()] * size  # only the cells with edges are rebuilt
        for state, cell in plan.edges:
            edges[state] = tuple([(lo, hi, dst + base) for lo, hi, dst in cell])
        eps: list[Sequence[int]] = [()] * size
        for state, targets in plan.eps:
            eps[state] = tuple([dst + base for dst in targets])
        guarded: list[Sequence[tuple[int, Guard, int]]] = [()] * size
        for state, guards in plan.guarded:
            guarded[state] = tuple([(dst + base, kind, region + rbase) for dst, kind, region in guards])
        scopes = [inner + rbase for inner in other.scope]
        for state in plan.top:
            scopes[state] = scope
        self.edges += edges
        self.eps += eps
        self.guarded += guarded
        self.scope += scopes
        for reg in other.regions:
            self.regions.append(Region(
                reg.low, reg.high, scope if reg.parent == TOP else reg.parent + rbase,
                entry=shift(reg.entry), decide=shift(reg.decide), loop=shift(reg.loop), exit=shift(reg.exit),
                units={u + base for u in reg.units},
                separator=None if reg.separator is None else (reg.separator[0] + base, reg.separator[1] + base),
                separator_states=frozenset(s + base for s in reg.separator_states),
                text=reg.text, string_quote=shift(reg.string_quote), blank=reg.blank))
        for state, label in other.marks.items():
            self.marks[state + base] = label
        self.stamps.append(Stamp(base, rbase, other, (start, end)))
        return start + base, end + base

    # -- counted regions ------------------------------------------------------------------------

    @contextmanager
    def _inside(self, region: int) -> Iterator[None]:
        self._scope_stack.append(region)
        try:
            yield
        finally:
            self._scope_stack.pop()

    def _unit(self, region: int, frag: Frag) -> Frag:
        """A copy of ``frag``'s entry holding its first-byte edges, marked as a unit start."""
        first = self.state()
        for state in self.closure([frag[0]]):
            if self.guarded[state]:
                raise ValueError("a counted unit must begin with a byte, not with another counted region")
            for lo, hi, dst in self.edges[state]:
                self.edge(first, lo, hi, dst)
        if frag[1] in self.closure([frag[0]]):
            raise ValueError("a counted unit must consume at least one byte")
        self.regions[region].units.add(first)
        return first, frag[1]

    def counted(self, make: Callable[[], Frag], low: int, high: int | None, *,
                sep: Callable[[], Frag] | None = None) -> Frag:
        """``low``..``high`` repetitions of ``make()`` (joined by ``sep()``), counted, not unrolled;
        each must consume at least one byte and begin with a byte of its own."""
        if low < 0 or (high is not None and high < low):
            raise ValueError(f"bad repetition bounds {low}..{high}")
        rid = len(self.regions)
        region = Region(low, high, self._scope_stack[-1])
        self.regions.append(region)
        region.entry, region.exit = self.state(), self.state()
        with self._inside(rid):
            region.decide, region.loop = self.state(), self.state()
            unit_start, unit_end = self._unit(rid, make())
            first = self.size
            region.separator = sep() if sep is not None else None
            region.separator_states = frozenset(range(first, self.size))
        self.guard(region.entry, region.decide, Guard.RESET, rid)
        self.guard(region.decide, unit_start, Guard.BELOW_HIGH, rid)
        self.guard(region.decide, region.exit, Guard.AT_LEAST_LOW, rid)
        self.epsilon(unit_end, region.loop)
        if region.separator is None:
            self.guard(region.loop, unit_start, Guard.BELOW_HIGH, rid)
        else:
            self.guard(region.loop, region.separator[0], Guard.BELOW_HIGH, rid)
            self.epsilon(region.separator[1], unit_start)
        self.guard(region.loop, region.exit, Guard.AT_LEAST_LOW, rid)
        return region.entry, region.exit

    def blank_run(self, high: int | None) -> Frag:
        """Up to ``high`` bytes of JSON whitespace, counted; masks read tokens' leading whitespace from a table."""
        rid = len(self.regions)
        frag = self.counted(lambda: self.byte_ranges(list(BLANK_RANGES)), 0, high)
        self.regions[rid].blank = True
        return frag

    def counted_string(self, make_char: Callable[[], Frag], low: int, high: int | None) -> Frag:
        """A JSON string of ``low``..``high`` ``make_char()`` characters, masked from a per-vocabulary table."""
        opening = self.literal(b'"')
        rid = len(self.regions)
        body = self.counted(make_char, low, high)
        quote = self.state()
        closed = self.state()
        self.edge(quote, 0x22, 0x22, closed)
        self.regions[rid].string_quote = quote
        return self.seq(opening, body, (quote, closed))

    def counted_text(self, build: Callable[[Callable[[Frag], Frag]], Frag], high: int) -> Frag:
        """At most ``high`` characters of the piece ``build(unit)`` makes, wrapping each one-character piece ``p``
        as ``unit(p)`` (a regex string with ``maxLength``; a lower bound is intersected into the regex)."""
        if high < 0:
            raise ValueError(f"bad character bound {high}")
        rid = len(self.regions)
        region = Region(0, high, self._scope_stack[-1], text=True)
        self.regions.append(region)
        region.entry, region.exit = self.state(), self.state()
        with self._inside(rid):
            region.decide = self.state()
            start, end = build(lambda piece: self._unit(rid, piece))
            region.loop = end
        self.guard(region.entry, region.decide, Guard.RESET, rid)
        self.epsilon(region.decide, start)
        self.guard(end, region.exit, Guard.AT_LEAST_LOW, rid)
        return region.entry, region.exit

    # -- determinisation support ---------------------------------------------------------------

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        """The states reachable through plain epsilon edges (memoised per single state)."""
        out: set[int] = set()
        for state in states:
            out |= self.closure_one(state)
        return frozenset(out)

    def closure_one(self, state: int) -> frozenset[int]:
        """:meth:`closure` of one state (the memoised set itself, not a copy)."""
        one = self._closures.get(state)
        if one is None:
            seen = {state}
            stack = [state]
            while stack:
                for nxt in self.eps[stack.pop()]:
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
            one = self._closures[state] = frozenset(seen)
        return one

    @property
    def unit_of(self) -> dict[int, int]:
        """Unit-start state -> its region."""
        return {state: rid for rid, region in enumerate(self.regions) for state in region.units}


@dataclass(frozen=True)
class _StampPlan:
    """A template's non-empty cells and top-level states, listed once (see :meth:`NFA.stamp`)."""

    edges: tuple[tuple[int, Sequence[tuple[int, int, int]]], ...]
    eps: tuple[tuple[int, Sequence[int]], ...]
    guarded: tuple[tuple[int, Sequence[tuple[int, Guard, int]]], ...]
    top: tuple[int, ...]


@functools.lru_cache(maxsize=64)
def stamp_plan(template: NFA) -> _StampPlan:
    """What :meth:`NFA.stamp` copies from an (unchanging) ``template``: half of an any-value piece's cells are empty."""
    return _StampPlan(
        tuple((s, cell) for s, cell in enumerate(template.edges) if cell),
        tuple((s, cell) for s, cell in enumerate(template.eps) if cell),
        tuple((s, cell) for s, cell in enumerate(template.guarded) if cell),
        tuple(s for s, inner in enumerate(template.scope) if inner == TOP))
