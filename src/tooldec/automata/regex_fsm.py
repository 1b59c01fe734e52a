"""Character automata of regexes, built from ``interegular``'s parse tree in linear time.

``interegular``'s own ``Pattern.to_fsm`` combines the parts' automata with crawls that look states up in a list,
quadratic in states (the ``hostname`` format took 0.1 s). :func:`pattern_fsm` reads the same tree into a Thompson
NFA over ``interegular``'s alphabet and determinizes it with a dictionary of state sets, giving an
``interegular.FSM`` of the same language; :func:`intersect` and :func:`subtract` are ``&`` and ``-`` done alike.

A lookahead is read only where it is exact: leading a concatenation that spans the whole string (``(?!X)Y``: ``Y``
less the strings that start with ``X``), where ``regex.anchored`` puts them; any other lookaround raises
``Unsupported``. Trees with inline flags such as ``(?i)`` are built by ``interegular`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import interegular
from interegular.fsm import FSM, Alphabet
from interegular.patterns import REFlags, Unsupported, _CharGroup, _Concatenation, _NonCapturing, _Repeated

__all__ = ["MAX_PATTERN_UNITS", "intersect", "pattern_fsm", "subtract", "union", "unrolled_units"]

MAX_PATTERN_UNITS = 1_000
"""The most character pieces a ``pattern`` may unroll to (:func:`unrolled_units`): every one in the JSONSchemaBench
sets is under 600 (``ipv6``: 546), ``{1,20000}`` took 0.2 s to build; a longer string is a counted ``maxLength``."""


class _Unread(Exception):
    """A part of the tree :class:`_Thompson` leaves to ``interegular``."""


class _Thompson:
    """An epsilon NFA over one alphabet's transition keys (states are list indices)."""

    def __init__(self, alphabet: Alphabet) -> None:
        self.alphabet = alphabet
        self.symbols = frozenset(alphabet)  # characters and ``anything_else``
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[frozenset[int], int]]] = []
        self._groups: dict[int, frozenset[int]] = {}  # id of a class node -> its keys (a repeat builds it again)

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def build(self, node: object) -> tuple[int, int]:
        """``(start, end)`` of a piece accepting ``node``'s language."""
        if isinstance(node, interegular.Pattern):
            if node.added_flags or node.removed_flags:
                raise _Unread
            start, end = self.state(), self.state()
            for option in node.options:
                a, b = self.build(option)
                self.eps[start].append(a)
                self.eps[b].append(end)
            return start, end
        if isinstance(node, _Concatenation):
            start = end = self.state()
            for part in node.parts:
                a, b = self.build(part)  # a lookaround is no _BasePattern: _Unread below
                self.eps[end].append(a)
                end = b
            return start, end
        if isinstance(node, _Repeated):
            return self._repeat(node)
        if isinstance(node, _CharGroup):
            keys = self._groups.get(id(node))  # the node outlives the build: its id is not reused
            if keys is None:
                chars = self.symbols - node.chars if node.negated else node.chars
                keys = self._groups[id(node)] = frozenset(self.alphabet[c] for c in chars)
            return self._char(keys)
        if node is _DOT:
            return self._char(frozenset(self.alphabet[c] for c in self.symbols - {"\n"}))
        if node is _EMPTY:
            state = self.state()
            return state, state
        raise _Unread

    def whole(self, node: object) -> FSM:
        """The automaton of ``node`` matched against a whole string, leading lookaheads intersected with (or taken
        from) the rest as their strings followed by anything."""
        if isinstance(node, interegular.Pattern) and not (node.added_flags or node.removed_flags):
            fsms = [self.whole(option) for option in node.options]
            return fsms[0] if len(fsms) == 1 else union(*fsms)
        if isinstance(node, _Concatenation) and node.parts:
            first = node.parts[0]
            if len(node.parts) == 1 and isinstance(first, interegular.Pattern):
                return self.whole(first)
            if isinstance(first, _NonCapturing) and not first.backwards:
                rest = self.whole(_Concatenation(node.parts[1:]))
                prefixes = self.fsm(_Concatenation((first.inner, _ALL_STAR)))
                return subtract(rest, prefixes) if first.negate else intersect(rest, prefixes)
        return self.fsm(node)

    def fsm(self, node: object) -> FSM:
        """The automaton of ``node``; ``Unsupported`` where it holds a lookaround or an inline flag."""
        try:
            start, end = self.build(node)
        except _Unread:
            raise Unsupported("a lookaround is enforced only right after the ^ of a pattern's alternative,"
                              " and a lookahead only without inline flags") from None
        return self.determinize(start, end)

    def _char(self, keys: frozenset[int]) -> tuple[int, int]:
        start, end = self.state(), self.state()
        self.moves[start].append((keys, end))
        return start, end

    def _repeat(self, node: _Repeated) -> tuple[int, int]:
        start = end = self.state()
        for _ in range(node.min):
            a, b = self.build(node.base)
            self.eps[end].append(a)
            end = b
        if node.max is None:  # a loop through one more copy
            a, b = self.build(node.base)
            self.eps[end].append(a)
            self.eps[b].append(end)
            return start, end
        done = self.state()
        for _ in range(node.max - node.min):  # each further copy optional: skip to the end
            self.eps[end].append(done)
            a, b = self.build(node.base)
            self.eps[end].append(a)
            end = b
        self.eps[end].append(done)
        return start, done

    def determinize(self, start: int, end: int) -> FSM:
        """The subset construction over states with moves (and ``end``), looked up by set."""
        closure: dict[int, frozenset[int]] = {}

        def close(state: int) -> frozenset[int]:
            found = closure.get(state)
            if found is None:
                seen, stack = {state}, [state]
                while stack:
                    for nxt in self.eps[stack.pop()]:
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
                found = closure[state] = frozenset(s for s in seen if self.moves[s] or s == end)
            return found

        first = close(start)
        index = {first: 0}
        order = [first]
        table: dict[int, dict[int, int]] = {}
        finals = set()
        for i, current in enumerate(order):  # grows while it is read
            if end in current:
                finals.add(i)
            targets: dict[int, set[int]] = {}
            for state in current:
                for keys, target in self.moves[state]:
                    for key in keys:
                        targets.setdefault(key, set()).add(target)
            row = table[i] = {}
            for key, states in targets.items():
                subset = frozenset().union(*(close(s) for s in states))
                j = index.get(subset)
                if j is None:
                    j = index[subset] = len(order)
                    order.append(subset)
                row[key] = j
        return FSM(alphabet=self.alphabet, states=range(len(order)), initial=0, finals=finals, map=table)


_DOT = interegular.patterns._DOT  # the parser's shared '.' and empty nodes
_EMPTY = interegular.patterns._EMPTY
_ALL_STAR = interegular.patterns._ALL_STAR  # any text


def _lookarounds(node: object) -> bool:
    """Whether ``node`` holds a lookahead or lookbehind anywhere."""
    if isinstance(node, _NonCapturing):
        return True
    if isinstance(node, interegular.Pattern):
        return any(_lookarounds(option) for option in node.options)
    if isinstance(node, _Concatenation):
        return any(_lookarounds(part) for part in node.parts)
    if isinstance(node, _Repeated):
        return _lookarounds(node.base)
    return False


def unrolled_units(regex: str) -> int:
    """How many character pieces the automaton of ``regex`` holds, bounded repeats unrolled (``[a-z]{1,20000}``:
    20,000), read from the parse tree before anything is built (raising as ``interegular.parse_pattern`` does)."""
    return _units(interegular.parse_pattern(regex))


def _units(node: object) -> int:
    if isinstance(node, interegular.Pattern):
        return sum(_units(option) for option in node.options)
    if isinstance(node, _Concatenation):
        return sum(_units(part) for part in node.parts)
    if isinstance(node, _Repeated):
        return _units(node.base) * max(node.max if node.max is not None else node.min + 1, 1)
    if isinstance(node, _NonCapturing):  # a lookaround: its inner pattern is built too
        return _units(node.inner)
    return 0 if node is _EMPTY else 1


def pattern_fsm(regex: str) -> FSM:
    """The automaton of the strings fully matching ``regex`` as ``interegular`` reads it (exact lookaheads only)."""
    pattern = interegular.parse_pattern(regex)
    builder = _Thompson(pattern.get_alphabet(REFlags(0)))
    if _lookarounds(pattern):
        return builder.whole(pattern)
    try:
        start, end = builder.build(pattern)
    except _Unread:
        return pattern.to_fsm()
    return builder.determinize(start, end)


def _product(fsms: Sequence[FSM], accepts: Callable[[list[bool | None]], bool], needed: int) -> FSM:
    """The reachable product of ``fsms`` over their united alphabet; a component that leaves its automaton is
    ``None``, which ends the walk for the first ``needed``."""
    alphabet, to_old = Alphabet.union(*(f.alphabet for f in fsms))
    keys = list(alphabet.by_transition)
    olds = [[old[key] for key in keys] for old in to_old]
    dead: tuple[None, ...] = (None,) * len(keys)
    rows: list[dict[Any, tuple[Any, ...]]] = [{} for _ in fsms]

    def row_of(c: int, state: Any) -> tuple[Any, ...]:
        found = rows[c].get(state)
        if found is None:
            moves = fsms[c].map.get(state, {})
            found = rows[c][state] = tuple([moves.get(o) for o in olds[c]])
        return found

    first: tuple[Any, ...] = tuple(f.initial for f in fsms)
    nowhere = (None,) * len(fsms)
    index = {first: 0}
    order = [first]
    table: dict[int, dict[int, int]] = {}
    finals = set()
    for i, current in enumerate(order):  # grows while it is read
        if accepts([None if s is None else s in f.finals for f, s in zip(fsms, current)]):
            finals.add(i)
        row = table[i] = {}
        columns = [dead if s is None else row_of(c, s) for c, s in enumerate(current)]
        for key, nxt in zip(keys, zip(*columns)):
            if None in nxt[:needed] or nxt == nowhere:
                continue
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(order)
                order.append(nxt)
            row[key] = j
    return FSM(alphabet=alphabet, states=range(len(order)), initial=0, finals=finals, map=table)


def intersect(*fsms: FSM) -> FSM:
    """Strings every one of ``fsms`` accepts (``a & b`` in ``interegular``)."""
    return _product(fsms, lambda finals: all(finals), len(fsms))


def union(*fsms: FSM) -> FSM:
    """Strings any one of ``fsms`` accepts (``a | b`` in ``interegular``)."""
    return _product(fsms, lambda finals: any(finals), 0)


def subtract(fsm: FSM, *others: FSM) -> FSM:
    """Strings ``fsm`` accepts and none of ``others`` does (``a - b`` in ``interegular``)."""
    return _product((fsm, *others), lambda finals: bool(finals[0]) and not any(finals[1:]), 1)
