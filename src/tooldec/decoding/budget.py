"""Token budgets: which tokens still let the call close in time (DESIGN invariant 4, "always closes").

From any position the *canonical completion* is the smallest among the shortest byte strings
that finish the call; cut into the longest vocabulary tokens it gives ``need``, an achievable
count that drops by one after the cut's first token. A token is allowed under a budget of ``b``
iff the position after it needs at most ``b - 1`` (a name's need is the least over the tools
below it, found from :mod:`.name_bounds`' lower bounds). Needs are kept in the mask cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

import numpy as np

from ..automata.dfa import MID, SINK
from ..automata.shortest import Runs, spell
from ..errors import TokenizerError
from .grammar import CompiledTail, Grammar
from .masking import FAR, shortest_in_tail
from .masks import Mask
from .name_bounds import name_most, shortest_below
from .opener_bounds import open_paths, upper, upper_plan
from .positions import Head, Name, Open, Position, Tail, Text, Think
from .run_tokens import count_runs
from .trie_walk import NATIVE, native_count
from .vector_walk import StringWalk, walk_state

__all__ = ["NOT_AT_HAND", "Completion", "known_within", "need", "shortest", "within"]

Completion = tuple[int, bytes]
"""A canonical completion: special tokens it starts with, then bytes."""


def tokens_of(grammar: Grammar, data: bytes) -> int:
    """Tokens in the longest-match cut of ``data`` (bytes, if some byte has no token): by the
    compiled trie where it is built (a walk costs less than a cache lookup), else kept."""
    if not data:
        return 0
    if NATIVE:
        found = native_count(grammar.compiler.index, data)
        return len(data) if found is None else found

    def count() -> int:
        found = _cut(grammar, data)
        return len(data) if found is None else found

    return grammar.compiler.kept(("tokens", grammar.compiler.key, data), count)


def _cut(grammar: Grammar, data: bytes) -> int | None:
    """The longest-match cut's count of ``data``; ``None`` where some byte begins no token."""
    if NATIVE:
        return native_count(grammar.compiler.index, data)
    try:
        return len(grammar.vocab.longest_match(data))
    except TokenizerError:
        return None


LONG_TEXT = 4096
"""Bytes past which a completion's runs are counted by :func:`.run_tokens.count_runs`, not spelled."""


def tokens_of_runs(grammar: Grammar, runs: Runs) -> int:
    """:func:`tokens_of` of the text of ``runs``: the same count, whatever the repeats."""
    runs = tuple((piece, times) for piece, times in runs if piece and times)
    length = sum(len(piece) * times for piece, times in runs)
    if length <= LONG_TEXT:
        return tokens_of(grammar, spell(runs))

    def count() -> int:
        vocab = grammar.vocab
        found = count_runs(runs, vocab.longest_prefix, vocab.longest_token, lambda text: _cut(grammar, text))
        return length if found is None else found

    return grammar.compiler.kept(("run-tokens", grammar.compiler.key, runs), count)


class _Completion(tuple):  # type: ignore[type-arg]
    @property
    def nbytes(self) -> int:
        return len(self[1]) + 128


def need(grammar: Grammar, pos: Position, follow_ok: bool) -> int:
    """Tokens enough to finish the call from ``pos`` (0 in text); in a reasoning section, its
    close and then the call that must follow it, each cut on its own."""
    if isinstance(pos, Think):
        return grammar.compiler.kept(("think-need", grammar.serial, pos, follow_ok), lambda: tokens_of(
            grammar, _think_close(grammar, pos)) + need(grammar, grammar.after_think(pos), follow_ok))
    if isinstance(pos, Tail):
        return tokens_of_runs(grammar, tail_runs(grammar, pos.form, grammar.tail(pos.tool, pos.form, pos.chained),
                                                 pos.state, follow_ok))
    specials, data = shortest(grammar, pos, follow_ok)
    return specials + tokens_of(grammar, data)


def _think_close(grammar: Grammar, pos: Think) -> bytes:
    """The shortest text that closes the reasoning section from ``pos``."""
    think = grammar.openers.think
    assert think is not None
    return think.shortest(pos.state)


def shortest(grammar: Grammar, pos: Position, follow_ok: bool) -> Completion:
    """The canonical completion from ``pos`` (see the module docstring)."""
    if isinstance(pos, Text):
        return 0, b""
    if isinstance(pos, Think):
        specials, data = shortest(grammar, grammar.after_think(pos), follow_ok)
        return specials, _think_close(grammar, pos) + data
    if isinstance(pos, Tail):
        return 0, tail_text(grammar, pos.form, grammar.tail(pos.tool, pos.form, pos.chained), pos.state, follow_ok)
    key = ("short", grammar.serial, pos, follow_ok)
    return grammar.compiler.kept(key, lambda: _Completion(_shortest(grammar, pos, follow_ok)))


def tail_text(grammar: Grammar, form: int, tail: CompiledTail, state: int, follow_ok: bool) -> bytes:
    """The canonical completion from a tail state, the shortest next call included after a separator."""
    return spell(tail_runs(grammar, form, tail, state, follow_ok))


def tail_runs(grammar: Grammar, form: int, tail: CompiledTail, state: int, follow_ok: bool) -> Runs:
    """:func:`tail_text` as runs (a counter's repeats not spelled: :mod:`tooldec.automata.shortest`)."""
    key = ("short-tail", tail.serial, state)  # the tail part: shared by every snapshot using the automaton
    found: _TailEnd = grammar.compiler.kept(key, lambda: _TailEnd(shortest_in_tail(tail.dfa, state)))
    runs: Runs = found[0]
    return (*runs, (shortest(grammar, Name(form, b"", None), follow_ok)[1], 1)) if found[1] else runs


class _TailEnd(tuple):  # type: ignore[type-arg]
    @property
    def nbytes(self) -> int:
        return sum(len(piece) for piece, _ in self[0]) + 128


def _best(options: list[Completion], grammar: Grammar) -> Completion:
    """Fewest tokens; among text routes the shortest, then smallest, bytes."""
    return min(options, key=lambda c: (c[0] + tokens_of(grammar, c[1]), c[0], len(c[1]), c[1]))


def _shortest(grammar: Grammar, pos: Position, follow_ok: bool) -> Completion:
    openers = grammar.openers
    if isinstance(pos, Name):
        return 0, shortest_below(grammar, pos.prefix, pos.form, follow_ok, pos.only)
    if isinstance(pos, Head):
        head = openers.heads[pos.form]
        return 0, head.shortest(pos.state) + shortest(grammar, Name(pos.form, b"", pos.only), follow_ok)[1]
    assert isinstance(pos, Open)
    options: list[Completion] = []
    if pos.state == openers.open.start:
        for form in sorted(set(openers.open_special_forms.values())):
            options.append((1, shortest(grammar, grammar.after_tag(form, pos.only), follow_ok)[1]))
    text: list[bytes] = []
    for commit, path in open_paths(grammar, pos.state).items():
        after = grammar.after_commit(commit, pos.only, follow_ok)
        if after is None:
            continue
        specials, data = shortest(grammar, after, follow_ok)
        text.append(path + data)
    if text:
        options.append((0, min(text, key=lambda t: (len(t), t))))
    if not options:
        raise ValueError("no opener can be completed from here")
    return _best(options, grammar)


def within(grammar: Grammar, pos: Position, mask: Mask, budget: int, start_ok: bool, follow_ok: bool) -> Mask | None:
    """The tokens of ``mask`` after which the call can still close within ``budget - 1`` tokens;
    ``None`` when every one can (no copy, no new bitmask row)."""
    known = known_within(grammar, pos, mask, budget, start_ok, follow_ok)
    if known is not NOT_AT_HAND:
        return cast("Mask | None", known)
    slack = budget - 1
    words = grammar.compiler.index.words
    if isinstance(pos, Name):
        bounds = grammar.compiler.kept(_key("name-needs", grammar, pos, start_ok, follow_ok),
                                       lambda: _name_needs(grammar, pos, mask, start_ok, follow_ok) or False)  # False: no bounds
        if isinstance(bounds, _NameNeeds):
            fitting = bounds.within(slack, lambda tid: _token_need(grammar, pos, tid, start_ok, follow_ok))
            return None if fitting is None else Mask.from_ids(fitting, words)
    if isinstance(pos, Tail):
        if _in_string(grammar, pos):
            return _string_within(grammar, pos, mask, slack, follow_ok)
        return _fitting(*token_needs(grammar, pos, mask, start_ok, follow_ok), slack, words)
    if isinstance(pos, Text):
        return _text_within(mask, *_kept_text_needs(grammar, pos, mask, start_ok, follow_ok), slack)
    if isinstance(pos, (Open, Head)) and slack >= grammar.compiler.kept(
            _key("most-upper", grammar, pos, start_ok, follow_ok), lambda: _most_upper(grammar, pos, mask, start_ok, follow_ok)):
        return None
    ids, needs = token_needs(grammar, pos, mask, start_ok, follow_ok, slack)
    grammar.compiler.kept(_key("most-need", grammar, pos, start_ok, follow_ok), lambda: int(needs.max()) if needs.size else 0)
    return _fitting(ids, needs, slack, words)


NOT_AT_HAND = object()
""":func:`known_within`'s answer where :func:`within` would have to compute."""


def known_within(grammar: Grammar, pos: Position, mask: Mask, budget: int, start_ok: bool,
                 follow_ok: bool) -> Mask | None | object:
    """:func:`within`'s answer where what it reads is kept, else :data:`NOT_AT_HAND` (nothing is computed)."""
    if budget - 1 >= mask.max_after:
        return None
    cache = grammar.compiler.masks
    if isinstance(pos, Name):
        bounds = cache.get(_key("name-needs", grammar, pos, start_ok, follow_ok))
        if bounds is None:
            return NOT_AT_HAND
        if isinstance(bounds, _NameNeeds):
            return None if bounds.most <= budget - 1 else NOT_AT_HAND
    if isinstance(pos, Tail):
        return NOT_AT_HAND
    if isinstance(pos, Text):
        text_needs = cast("tuple[np.ndarray, np.ndarray] | None", cache.get(_key("text-needs", grammar, pos, start_ok, follow_ok)))
        return NOT_AT_HAND if text_needs is None else _text_within(mask, *text_needs, budget - 1)
    most = cast("int | None", cache.get(_key("most-need", grammar, pos, start_ok, follow_ok)))
    if most is not None and budget - 1 >= most:
        return None
    upper = cast("int | None", cache.get(_key("most-upper", grammar, pos, start_ok, follow_ok)))
    if upper is not None and budget - 1 >= upper:
        return None
    found = cast("tuple[np.ndarray, np.ndarray] | None", cache.get(_key("needs", grammar, pos, start_ok, follow_ok)))
    return NOT_AT_HAND if found is None else _fitting(found[0], found[1], budget - 1, grammar.compiler.index.words)


def _text_within(mask: Mask, ids: np.ndarray, needs: np.ndarray, slack: int) -> Mask | None:
    """A text mask less the opening tokens (``ids``, with their ``needs``) a budget refuses."""
    over = ids[needs > slack]
    return mask.without(over) if over.size else None


def _fitting(ids: np.ndarray, needs: np.ndarray, slack: int, words: int) -> Mask | None:
    """The mask of the ``ids`` whose need is within ``slack`` (``None``: all of them)."""
    fits = needs <= slack
    return None if fits.all() else Mask.from_ids(np.sort(ids[fits]), words)


def _key(kind: str, grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool) -> tuple[object, ...]:
    """The key of what is kept of ``kind`` at a position other than a tail's (per snapshot)."""
    return (kind, grammar.serial, pos, start_ok, follow_ok)


def _most_upper(grammar: Grammar, pos: Open | Head, mask: Mask, start_ok: bool, follow_ok: bool) -> int:
    """An upper bound of every allowed token's need at an opener or head position, from the tools'
    witnesses (:func:`.name_bounds.name_most`), so no argument automaton is built for a roomy budget."""

    def after_upper(after: Position) -> int:  # a token that writes a whole name and runs into its tail: that tool's own need
        return need(grammar, after, follow_ok) if isinstance(after, Tail) else upper(grammar, after, follow_ok)

    plan = upper_plan(grammar, pos, mask, start_ok, follow_ok)  # the tokens whose bound only the name bounds decide
    bounds = plan.bounds(grammar, pos.only, follow_ok)
    ids = mask.ids.tolist()
    slots = [plan.slots.get(tid) for tid in ids]
    most = max((bounds[slot] for slot in slots if slot is not None), default=-1)
    rest = [tid for tid, slot in zip(ids, slots) if slot is None]
    if rest:
        found = _by_end(grammar, pos, np.array(rest, dtype=np.int64), lambda inside: upper(grammar, inside, follow_ok),
                        after_upper, start_ok, follow_ok)
        most = max(most, int(found.max()))
    return min(most, FAR) if ids else 0


class _NameNeeds:
    """At one name position: each allowed token's need, or an upper bound of it until a budget
    does not clear the bound. Thread-safe (a lock)."""

    def __init__(self, ids: np.ndarray, upper: np.ndarray, exact: np.ndarray) -> None:
        self.ids, self.upper, self.exact = ids, upper, exact
        self.most = int(upper.max()) if upper.size else 0
        self.lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.upper.nbytes + self.exact.nbytes) + 96

    def within(self, slack: int, exact_need: Callable[[int], int]) -> np.ndarray | None:
        """The ids whose need is at most ``slack`` (``None``: all of them)."""
        if self.most <= slack:
            return None
        with self.lock:
            for i in np.flatnonzero((self.upper > slack) & ~self.exact).tolist():
                self.upper[i] = exact_need(int(self.ids[i]))
                self.exact[i] = True
            fits = self.upper <= slack
            self.most = int(self.upper.max())
        return None if bool(fits.all()) else self.ids[fits]


def _name_needs(grammar: Grammar, pos: Name, mask: Mask, start_ok: bool, follow_ok: bool) -> _NameNeeds | None:
    """The bounds of a name mask's tokens (``None`` for dialects without name bounds)."""
    most = name_most(grammar, pos.form, follow_ok)
    if most is None:
        return None
    index = grammar.name_index
    only = None if pos.only is None else pos.only.encode()
    ids = mask.ids
    upper = np.zeros(ids.size, dtype=np.int64)
    exact = np.zeros(ids.size, dtype=bool)
    token_bytes = grammar.vocab.token_bytes
    for i, tid in enumerate(ids.tolist()):
        data = token_bytes[tid]
        written = None if data is None else pos.prefix + data
        if written is not None and (only.startswith(written) if only is not None else index.has_prefix(written)):
            if only is not None:  # the one tool allowed: its own bound
                least = int(most[index.span(only)[0]])
            else:
                a, z = index.span(written)
                least = int(most[a:z].min())
            upper[i] = least - len(written)
            continue
        upper[i] = _token_need(grammar, pos, tid, start_ok, follow_ok)
        exact[i] = True
    return _NameNeeds(ids, upper, exact)


def _token_need(grammar: Grammar, pos: Position, tid: int, start_ok: bool, follow_ok: bool) -> int:
    """Tokens left to finish the call after token ``tid`` (``FAR`` if it is not allowed)."""
    after = _after(grammar, pos, tid, start_ok, follow_ok)
    return FAR if after is None else need(grammar, after, follow_ok)


def _after(grammar: Grammar, pos: Position, tid: int, start_ok: bool, follow_ok: bool) -> Position | None:
    """The position after token ``tid`` (``None`` if it is not allowed)."""
    data = grammar.vocab.token_bytes[tid]
    return grammar.after_special(pos, tid, start_ok) if data is None else grammar.walk(pos, data, start_ok, follow_ok)[0]


def _opening(grammar: Grammar, pos: Text) -> np.ndarray:
    """The tokens that complete an opener from a text position, and the opener specials (sorted)."""
    openers = grammar.openers
    return np.array(sorted({c.token for c in openers.committers(pos.state)} | set(openers.special_forms)), dtype=np.int64)


def _kept_text_needs(grammar: Grammar, pos: Text, mask: Mask, start_ok: bool, follow_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """The opening tokens ``mask`` allows at a text position, with their needs (kept): the other
    tokens need nothing, so a budget reads a few numbers, not vocabulary-long arrays."""

    def make() -> _Needs:
        risky = _opening(grammar, pos)
        risky = risky[mask.has(risky)] if risky.size else risky
        needs = [_token_need(grammar, pos, tid, start_ok, follow_ok) for tid in risky.tolist()]
        return _Needs((risky, np.array(needs, dtype=np.int64)))

    found: _Needs = grammar.compiler.kept(_key("text-needs", grammar, pos, start_ok, follow_ok), make)
    return found[0], found[1]


def token_needs(grammar: Grammar, pos: Position, mask: Mask, start_ok: bool, follow_ok: bool,
                slack: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every allowed token of ``mask`` with the tokens it leaves to finish the call; with ``slack``,
    an opener's needs are kept only if it filters them (they cover the vocabulary: 200 KB on Qwen3)."""
    if isinstance(pos, Tail):
        if _in_string(grammar, pos):
            parts = _kept_string_parts(grammar, pos, mask, follow_ok)
            return _allowed_only(mask, np.concatenate([parts.string.index_ids.astype(np.int64), parts.closing_ids]),
                                 np.concatenate([parts.per_key[parts.slots], parts.closing_needs]))
        return grammar.compiler.kept(("tail-needs", grammar.serial, pos, follow_ok),
                                     lambda: _Needs(_tail_needs(grammar, pos, mask, follow_ok)),
                                     keep=lambda made: bool(made[0].size <= KEPT_TAIL_NEEDS))
    key = _key("needs", grammar, pos, start_ok, follow_ok)

    if isinstance(pos, Text):  # every other token of the text mask needs nothing
        ids = mask.ids
        opening, needs = _kept_text_needs(grammar, pos, mask, start_ok, follow_ok)
        out = np.zeros(ids.size, dtype=np.int64)
        out[np.searchsorted(ids, opening)] = needs
        return ids, out

    def keep(made: _Needs) -> bool:
        return slack is None or bool((made[1] > slack).any())

    if isinstance(pos, (Open, Head)):
        return grammar.compiler.kept(key, lambda: _Needs(_stay_needs(grammar, pos, mask, start_ok, follow_ok)), keep)
    if isinstance(pos, Think):
        return grammar.compiler.kept(key, lambda: _Needs(_think_needs(grammar, pos, mask, start_ok, follow_ok)), keep)
    return grammar.compiler.kept(key, lambda: _Needs(_per_token_needs(grammar, pos, mask, start_ok, follow_ok)), keep)


def _in_string(grammar: Grammar, pos: Tail) -> bool:
    """Whether ``pos`` is inside a string's content (its needs are :class:`_StringParts`)."""
    return grammar.tail(pos.tool, pos.form, pos.chained).dfa.string_spot(pos.state) is not None


def _allowed_only(mask: Mask, ids: np.ndarray, needs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids of ``mask`` among ``ids``, with their needs."""
    keep = mask.has(ids)
    return ids[keep], needs[keep]


KEPT_TAIL_NEEDS = 4096
"""The needs of an argument position are kept (per snapshot) when it allows at most this many tokens."""


class _Needs(tuple):  # type: ignore[type-arg]
    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self)) + 64


def _per_token_needs(grammar: Grammar, pos: Position, mask: Mask, start_ok: bool, follow_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """Walk each allowed token."""
    ids = mask.ids
    return ids, np.array([_token_need(grammar, pos, tid, start_ok, follow_ok) for tid in ids.tolist()], dtype=np.int64)


def _stay_needs(grammar: Grammar, pos: Open | Head, mask: Mask, start_ok: bool, follow_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """At an opener or its head: a token that stays inside needs what its end state needs (one
    search per distinct end); the others are walked one by one."""

    def end_need(inside: Position) -> int:
        alive = not isinstance(inside, Open) or grammar.open_alive(inside.state, inside.only)
        return need(grammar, inside, follow_ok) if alive else FAR

    return mask.ids, _by_end(grammar, pos, mask.ids, end_need, lambda after: need(grammar, after, follow_ok), start_ok, follow_ok)


def _by_end(grammar: Grammar, pos: Open | Head, ids: np.ndarray, of_end: Callable[[Position], int],
            of_after: Callable[[Position], int], start_ok: bool, follow_ok: bool) -> np.ndarray:
    """Per token at an opener or head: ``of_end`` of its end state (once per state) if it stays
    inside, else ``of_after`` of the position after it (``FAR`` where it is not allowed)."""
    openers = grammar.openers
    walk = openers.open_committers(pos.state) if isinstance(pos, Open) else openers.head_walk(pos.form, pos.state)
    end_of = dict(zip(walk[0], walk[1]))  # the tokens that stay inside, and their end states
    out = np.empty(ids.size, dtype=np.int64)
    per_end: dict[int, int] = {}
    for i, tid in enumerate(ids.tolist()):
        end = end_of.get(tid)
        if end is None:
            after = _after(grammar, pos, tid, start_ok, follow_ok)
            out[i] = FAR if after is None else of_after(after)
            continue
        found = per_end.get(end)
        if found is None:
            inside: Position = Open(end, pos.only) if isinstance(pos, Open) else Head(pos.form, end, pos.only)
            found = per_end[end] = of_end(inside)
        out[i] = found
    return out


class _StringParts:
    """The needs at a string-content position: an inside token's is its (final state, characters
    owed) key's, a closing token's that of the bytes after its quote, so a budget that bites
    through a long string compares a few numbers per step. Immutable."""

    def __init__(self, string: StringWalk, per_key: np.ndarray, used: np.ndarray, slots: np.ndarray,
                 closing_ids: np.ndarray, closing_needs: np.ndarray) -> None:
        self.string, self.per_key, self.used, self.slots = string, per_key, used, slots  # used: entries some token has
        self.closing_ids, self.closing_needs = closing_ids, closing_needs

    @property
    def nbytes(self) -> int:  # ``slots`` is the string table's own array when kept
        return int(self.per_key.nbytes + self.used.nbytes + self.closing_ids.nbytes + self.closing_needs.nbytes) + 160


def _string_parts(grammar: Grammar, pos: Tail, mask: Mask, follow_ok: bool) -> _StringParts:
    compiler = grammar.compiler
    index = compiler.index
    compiled = grammar.tail(pos.tool, pos.form, pos.chained)
    dfa = compiled.dfa
    spot = dfa.string_spot(pos.state)
    assert spot is not None
    table, content = compiler.string_place(grammar.dialect.form_style(pos.form), spot)
    string = table.walk(content)
    count = spot.count_class
    after_quote = tail_runs(grammar, pos.form, compiled, spot.after_quote, follow_ok) if spot.after_quote != SINK else ()
    # an inside token's need depends on (its final state, the characters still owed): one
    # need per distinct pair, the pair read as one integer key
    owed = None if count == MID else np.maximum(0, spot.low - count - string.inside_chars)
    width = 1 if owed is None else int(owed.max(initial=0)) + 1
    keys = string.final_index if owed is None else string.final_index * width + owed
    distinct: np.ndarray  # the keys met; slots[i]: where token i's need is in per_key
    if string.final_set.size * width <= max(keys.size, 1 << 16):  # few keys: a table, no sort
        distinct = np.flatnonzero(np.bincount(keys, minlength=string.final_set.size * width))
        per_key = np.zeros(string.final_set.size * width, dtype=np.int64)
        places, slots = distinct, keys
    else:
        unique = np.unique(keys, return_inverse=True)
        distinct, slots = unique[0], unique[1].reshape(-1)
        per_key = np.zeros(distinct.size, dtype=np.int64)
        places = np.arange(distinct.size)
    for slot, key in zip(places.tolist(), distinct.tolist()):
        finish = table.shortest(int(string.final_set[key // width]))
        k = key % width
        # k owed characters as blanks before the quote: a run, so minLength 100000 costs as 10
        text: Runs = ((finish[:-1], 1), (b" ", k), (b'"', 1)) if k else ((finish, 1),)
        per_key[slot] = tokens_of_runs(grammar, (*text, *after_quote))
    closing_ids = index.ids[string.closing_rows].astype(np.int64)
    open_rows = mask.has(closing_ids)
    rest_need = np.full(string.rest_first.size, FAR, dtype=np.int64)
    at = Tail(pos.form, pos.tool, pos.chained, spot.after_quote,
              tuple(sorted((r, c) for r, c in dfa.classes(spot.after_quote) if c != MID)))
    for rest_id in np.unique(string.rest_of[open_rows]).tolist():  # one walk per distinct remainder
        first = int(string.rest_first[rest_id])
        rep, off = int(string.closing_rows[first]), int(string.closing_offsets[first])
        rest = bytes(index.flat[index.offsets[rep] + off : index.offsets[rep] + index.lengths[rep]])
        after, _ = grammar.walk(at, rest, follow_ok, follow_ok)
        rest_need[rest_id] = FAR if after is None else need(grammar, after, follow_ok)
    closing_needs = np.where(open_rows, rest_need[string.rest_of], FAR)
    return _StringParts(string, per_key, np.asarray(places), slots, closing_ids, closing_needs)


def _kept_string_parts(grammar: Grammar, pos: Tail, mask: Mask, follow_ok: bool) -> _StringParts:
    """:func:`_string_parts`, kept unless characters are owed (it then holds a key per token)."""
    return grammar.compiler.kept(("string-needs", grammar.serial, pos, follow_ok),
                                 lambda: _string_parts(grammar, pos, mask, follow_ok),
                                 keep=lambda made: made.slots is made.string.final_index)


def _string_within(grammar: Grammar, pos: Tail, mask: Mask, slack: int, follow_ok: bool) -> Mask | None:
    """:func:`within` at string content, from the kept :class:`_StringParts`."""
    parts = _kept_string_parts(grammar, pos, mask, follow_ok)
    string = parts.string
    fits = parts.per_key <= slack
    met = fits[parts.used]
    if bool(met.all()):
        packed = string.packed.copy()
    elif not bool(met.any()):
        packed = np.zeros_like(string.packed)
    else:
        packed = Mask.from_ids(string.index_ids[fits[parts.slots]], string.packed.size // 4).packed
    closing = parts.closing_ids[parts.closing_needs <= slack]
    np.bitwise_or.at(packed, closing >> 3, np.left_shift(1, closing & 7).astype(np.uint8))
    packed &= mask.packed  # both over the compiler's index words
    kept = int(np.bitwise_count(packed).sum(dtype=np.int64))
    return None if kept == mask.count else Mask(packed, known_count=kept)


def _think_needs(grammar: Grammar, pos: Think, mask: Mask, start_ok: bool,
                 follow_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """In a reasoning section: a token that stays inside needs what its end state needs, one that
    closes it what its rest leaves; a special stays where it is."""
    think = grammar.openers.think
    assert think is not None
    index = grammar.compiler.index
    walk = walk_state(index, think, pos.state)
    ends, where = np.unique(walk.finals, return_inverse=True)
    per_end = [need(grammar, Think(int(end), pos.forced, pos.only), follow_ok) for end in ends.tolist()]
    closing = index.ids[walk.exit_rows].astype(np.int64)
    after = grammar.after_think(pos)
    closing_needs = []
    for r, off in zip(walk.exit_rows.tolist(), walk.exit_offsets.tolist()):
        rest = bytes(index.flat[index.offsets[r] + off : index.offsets[r] + index.lengths[r]])
        found, _ = grammar.walk(after, rest, start_ok, follow_ok)
        closing_needs.append(FAR if found is None else need(grammar, found, follow_ok))
    specials = index.special_ids.astype(np.int64)
    ids = np.concatenate([index.ids[walk.rows].astype(np.int64), closing, specials])
    needs = np.concatenate([np.array(per_end, dtype=np.int64)[where], np.array(closing_needs, dtype=np.int64),
                            np.full(specials.size, need(grammar, pos, follow_ok), dtype=np.int64)])
    return _allowed_only(mask, ids, needs)


def _tail_needs(grammar: Grammar, pos: Tail, mask: Mask, follow_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised for tails: the need of each token depends only on where it ends."""
    compiler = grammar.compiler
    index = compiler.index
    compiled = grammar.tail(pos.tool, pos.form, pos.chained)
    dfa = compiled.dfa
    at = Tail(pos.form, pos.tool, pos.chained, pos.state, tuple(sorted(pos.counts)))  # where crossing tokens start

    def state_need(state: int) -> int:
        return tokens_of_runs(grammar, tail_runs(grammar, pos.form, compiled, state, follow_ok))

    walk = walk_state(index, dfa, pos.state, compiler.blank_table)
    ends, where = np.unique(walk.finals, return_inverse=True)
    inside = np.array([state_need(s) for s in ends.tolist()], dtype=np.int64)[where]
    crossing_ids = index.ids[walk.exit_rows].astype(np.int64)
    crossing = np.empty(crossing_ids.size, dtype=np.int64)
    for i, tid in enumerate(crossing_ids.tolist()):
        after, _ = grammar.walk(at, grammar.vocab.token_bytes[tid] or b"", follow_ok, follow_ok)
        crossing[i] = FAR if after is None else need(grammar, after, follow_ok)
    return _allowed_only(mask, np.concatenate([index.ids[walk.rows].astype(np.int64), crossing_ids]),
                         np.concatenate([inside, crossing]))
