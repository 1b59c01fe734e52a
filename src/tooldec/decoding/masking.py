"""Where every mask is computed: the allowed tokens at a position, exactly (DESIGN invariant 1;
"From a tool list to a mask", step 4, says what each kind of position allows).

Tokens that run past the end of the part they start in (a name into its tail, the end of a call
into text or the next call) are finished by :meth:`Grammar.walk`, one per distinct remainder.
Tail masks are cached by the tool's schema unless their tokens reach another tool's name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..automata.dfa import MID, SINK, LazyDFA
from ..automata.shortest import Runs, shortest_runs
from ..caches import BoundedCache
from ..dialects.base import NEXT_CALL
from .masks import Mask
from .openers import CommitKind, Committer
from .positions import Head, Name, Open, Position, Tail, Text, Think
from .trie_walk import NATIVE, native_mask, native_names, walk_trie
from .vector_walk import walk_rows, walk_state

if TYPE_CHECKING:
    from .grammar import CompiledTail, Grammar

__all__ = ["FAR", "goes_on_from", "known_mask", "mask_at", "shortest_in_tail"]

V = TypeVar("V")

FAR = 1 << 30
"""``max_after`` of tokens that lead into another call's name: counted exactly by the budget."""


def mask_at(grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool) -> Mask:
    """The allowed tokens at ``pos`` (cached)."""
    compiler = grammar.compiler
    if isinstance(pos, Tail):
        tail = grammar.tail(pos.tool, pos.form, pos.chained)
        shared = ("tail", tail.serial, pos.state, follow_ok)
        found = compiler.masks.get(shared)  # the hit, kept free of the miss's work
        return found if found is not None else _own_or_made(
            compiler.masks, shared, grammar, functools.partial(_made_tail_mask, grammar, pos, tail, follow_ok))
    key = _key(grammar, pos, start_ok, follow_ok)
    assert key is not None  # with walk, a state's tokens are listed
    return compiler.masks.get_or_make(key, lambda: _compute(grammar, pos, start_ok, follow_ok))


def known_mask(grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool) -> Mask | None:
    """:func:`mask_at`'s mask if it is cached, else ``None`` (nothing is computed)."""
    cache = grammar.compiler.masks
    if isinstance(pos, Tail):
        shared = ("tail", grammar.tail(pos.tool, pos.form, pos.chained).serial, pos.state, follow_ok)
        found = cache.get(shared)
        return cache.get((grammar.serial, shared)) if found is None and grammar.owns_values[0] else found
    key = _key(grammar, pos, start_ok, follow_ok, walk=False)
    return None if key is None else cache.get(key)


def _key(grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool, *, walk: bool = True) -> tuple[object, ...] | None:
    """The mask cache's key of a position other than a tail's (per compiler where no tool name
    decides the mask); without ``walk``, ``None`` where finding it would compute."""
    if isinstance(pos, Text):
        if not start_ok:
            return (grammar.openers_owner, "text-closed", pos.state)
        text_names = grammar.openers.text_names_matter(pos.state, walk=walk)
        if text_names is None:
            return None
        if not text_names:
            return (grammar.openers_owner, "text", pos, follow_ok)
    if isinstance(pos, Open):
        names_matter = grammar.openers.open_names_matter(pos.state, walk=walk)
        if names_matter is None:
            return None
        if not names_matter:
            return (grammar.openers_owner, "open", pos, follow_ok)
    return (grammar.serial, pos, start_ok, follow_ok)


def _compute(grammar: Grammar, pos: Position, start_ok: bool, follow_ok: bool) -> Mask:
    index = grammar.compiler.index
    if isinstance(pos, Text):
        return _text_mask(grammar, pos, start_ok, follow_ok)
    if isinstance(pos, Think):
        return _think_mask(grammar, pos, start_ok, follow_ok)
    if isinstance(pos, Open):
        return _open_mask(grammar, pos, follow_ok)
    if isinstance(pos, Head):
        return _head_mask(grammar, pos, follow_ok)
    assert isinstance(pos, Name)
    return Mask.from_ids(_name_ids(grammar, pos, follow_ok), index.words, FAR)


def _text_base(grammar: Grammar, start_ok: bool) -> np.ndarray:
    """Packed: every byte token, every special but the opener specials unless a call may start."""
    compiler = grammar.compiler
    index = compiler.index

    def make() -> np.ndarray:
        flags = np.zeros(index.words * 32, dtype=bool)
        flags[index.ids] = True
        flags[index.special_ids] = True
        flags[list(compiler.openers.refused_specials)] = False
        if not start_ok:
            flags[list(compiler.openers.special_forms)] = False
        return np.packbits(flags, bitorder="little")

    return index.extra(("text-base", compiler.key, start_ok), make)


def _text_mask(grammar: Grammar, pos: Text, start_ok: bool, follow_ok: bool) -> Mask:
    openers = grammar.openers
    committers = openers.committers(pos.state)
    bad = [c.token for c in committers if not _text_commits(grammar, c, start_ok, follow_ok)]
    far = (start_ok and (bool(committers) or bool(openers.special_forms))) or any(
        openers.commits[c.commit].kind is CommitKind.REASONING for c in committers)
    return Mask(_text_base(grammar, start_ok), FAR if far else 0).without(np.array(bad, dtype=np.int64))  # a copy


def _text_commits(grammar: Grammar, committer: Committer, start_ok: bool, follow_ok: bool) -> bool:
    """Whether a token that completes a watched text in free text goes on into what may follow it."""
    kind = grammar.openers.commits[committer.commit].kind
    if kind is CommitKind.REFUSED:
        return False
    if kind is CommitKind.REASONING:
        return grammar.walk(grammar.thinking(False, None), committer.rest, start_ok, follow_ok)[0] is not None
    return start_ok and _commits(grammar, committer, None, follow_ok)


def _commits(grammar: Grammar, committer: Committer, only: str | None, follow_ok: bool) -> bool:
    """Whether a token that completes an opener carries on into a call that can still be written."""
    after = grammar.after_commit(committer.commit, only, follow_ok)
    return after is not None and grammar.walk(after, committer.rest, follow_ok, follow_ok)[0] is not None


def _think_mask(grammar: Grammar, pos: Think, start_ok: bool, follow_ok: bool) -> Mask:
    """Any token but the end of the output; of those that close the section, those whose rest can follow."""
    openers = grammar.openers
    after = grammar.after_think(pos)
    bad = [c.token for c in openers.closers(pos.state) if grammar.walk(after, c.rest, start_ok, follow_ok)[0] is None]
    bad += grammar.compiler.index.eos_ids.tolist()
    bad += openers.think_refused(pos.state)
    close = openers.think_close_bytes
    return Mask(_text_base(grammar, True), FAR if pos.forced else close).without(np.array(bad, dtype=np.int64))


def _open_mask(grammar: Grammar, pos: Open, follow_ok: bool) -> Mask:
    openers = grammar.openers
    index = grammar.compiler.index
    ids, ends, committers, _ = openers.open_committers(pos.state)
    allowed = [i for i, end in zip(ids, ends) if grammar.open_alive(end, pos.only)]
    allowed += [c.token for c in committers if _commits(grammar, c, pos.only, follow_ok)]
    if pos.state == openers.open.start:
        allowed += list(openers.open_special_forms)
    return Mask.from_ids(np.array(allowed, dtype=np.int64), index.words, FAR)


def _head_mask(grammar: Grammar, pos: Head, follow_ok: bool) -> Mask:
    index = grammar.compiler.index
    stay_ids, _, exits = grammar.openers.head_walk(pos.form, pos.state)
    allowed = list(stay_ids) + [token for token, _ in exits.get(-1, ())]
    name = Name(pos.form, b"", pos.only)
    firsts = grammar.name_index.children(b"") if pos.only is None else list(pos.only.encode()[:1])
    for first in firsts:  # only the tokens that start a name of this list can reach its tails
        for token, rest in exits.get(first, ()):
            if grammar.walk(name, rest, follow_ok, follow_ok)[0] is not None:
                allowed.append(token)
    return Mask.from_ids(np.array(allowed, dtype=np.int64), index.words, FAR)


def _name_ids(grammar: Grammar, pos: Name, follow_ok: bool) -> np.ndarray:
    """Tokens that spell part of a name from ``pos`` (or a whole name and more)."""
    if NATIVE:
        return _native_name_ids(grammar, pos, follow_ok)
    index = grammar.compiler.index
    names = grammar.name_index
    tokens, ids = index.sorted_bytes, index.sorted_ids
    only = None if pos.only is None else pos.only.encode()
    allowed: list[int] = []
    stack: list[tuple[bytes, bytes, int, int]] = [(pos.prefix, b"", 0, len(tokens))]
    while stack:
        name_prefix, token_prefix, lo, hi = stack.pop()
        depth = len(token_prefix)
        while lo < hi and len(tokens[lo]) == depth:
            if depth:
                allowed.append(ids[lo])
            lo += 1
        if lo >= hi:
            continue
        if only is not None:
            children = [only[len(name_prefix)]] if len(only) > len(name_prefix) and only.startswith(name_prefix) else []
            terminal = only.decode() if only == name_prefix else None
        else:
            children = names.children(name_prefix)
            terminal = names.terminal(name_prefix)
        if terminal is not None:  # tokens that finish the name and run into its tail
            allowed += _crossing_ids(grammar, pos.form, terminal, token_prefix, lo, hi, follow_ok)
        for byte in children:
            a, z = index.prefix_range(token_prefix + bytes([byte]), lo, hi)
            if a < z:
                stack.append((name_prefix + bytes([byte]), token_prefix + bytes([byte]), a, z))
    return np.array(sorted(allowed), dtype=np.int32)


def _native_name_ids(grammar: Grammar, pos: Name, follow_ok: bool) -> np.ndarray:
    """:func:`_name_ids` by the compiled trie walk; only tokens past a name's fixed tail start are walked here."""
    index = grammar.compiler.index
    if pos.only is None:
        names = grammar.name_index
        lo, hi = names.span(pos.prefix)
        listed: Sequence[bytes] = names.sorted_names
    else:
        only = pos.only.encode()
        listed, lo, hi = (only,), 0, int(only.startswith(pos.prefix))
    ids, pending = native_names(index, listed, lo, hi, len(pos.prefix), grammar.dialect.form_tail_literal(pos.form))
    if not pending.size:
        return ids
    tokens, sorted_ids = index.sorted_bytes, index.sorted_ids
    extra = []
    for j, k, depth in pending.tolist():
        name = listed[k]
        if grammar.walk(Name(pos.form, name, name.decode()), tokens[j][depth:], follow_ok, follow_ok)[0] is not None:
            extra.append(sorted_ids[j])
    return np.unique(np.concatenate([ids, np.array(extra, dtype=np.int32)])) if extra else ids


def _crossing_ids(grammar: Grammar, form: int, name: str, prefix: bytes, lo: int, hi: int, follow_ok: bool) -> list[int]:
    """Tokens among ``sorted_bytes[lo:hi]`` (all ending the name ``prefix``) that carry on into its
    tail, whose automaton is built only for a token that runs past the fixed tail start."""
    index = grammar.compiler.index
    tokens, ids = index.sorted_bytes, index.sorted_ids
    depth, literal = len(prefix), grammar.dialect.form_tail_literal(form)
    out = []
    firsts = [literal[0]] if literal else range(256)
    for b in firsts:
        a, z = index.prefix_range(prefix + bytes([b]), lo, hi)
        for j in range(a, z):
            rest = tokens[j][depth:]
            if literal and len(rest) <= len(literal):
                if literal.startswith(rest):
                    out.append(ids[j])
                continue
            if literal and not rest.startswith(literal):
                continue
            if grammar.walk(Name(form, name.encode(), name), rest, follow_ok, follow_ok)[0] is not None:
                out.append(ids[j])
    return out


@dataclass
class Crossing:
    """Tokens that reached an exit of the tail automaton, aligned with the rows given to
    :func:`_cross`. Kept in a bounded cache: read only."""

    ok: np.ndarray  # bool: the token is allowed
    after: np.ndarray  # bytes left to finish (FAR when it leads into another call)
    depends: bool  # whether any of them reached the names (the mask depends on the inventory)
    key_bytes: int = 0  # the size of its cache key

    @property
    def nbytes(self) -> int:
        return int(self.ok.nbytes + self.after.nbytes) + self.key_bytes + 200


_NO_CROSSING = Crossing(np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), False)
"""What :func:`_cross` answers for no tokens (read only, shared)."""


def _cross(grammar: Grammar, pos: Tail, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray,
           follow_ok: bool) -> Crossing:
    """Finish the tokens that reached an exit, one per distinct (kind of exit, remainder). The
    same exits recur in many states and tools (Llama-3 has 266 tokens that start with ``}``), so
    the answer is kept in the compiler by rows, offsets and kinds of exit."""
    if not rows.size:
        return _NO_CROSSING
    marks = dfa.marks
    kinds = bytes(marks.get(s) == NEXT_CALL for s in states.tolist()) if marks else bytes(rows.size)
    rows_key, offsets_key = rows.astype(np.int64).tobytes(), offsets.astype(np.int64).tobytes()
    shared = (grammar.openers_owner, pos.form, follow_ok, rows_key, offsets_key, kinds)
    found = grammar.compiler.crossings.get(shared)
    return found if found is not None else _own_or_made(grammar.compiler.crossings, shared, grammar, functools.partial(
        _judge_crossing, grammar, pos.form, rows, offsets, kinds, follow_ok, len(rows_key) * 2 + len(kinds)))


def _judge_crossing(grammar: Grammar, form: int, rows: np.ndarray, offsets: np.ndarray, kinds: bytes, follow_ok: bool,
                    key_bytes: int) -> tuple[Crossing, bool]:
    """:func:`_cross`, computed, and whether it depends on the names (for the cache)."""
    index = grammar.compiler.index
    token_bytes = index.token_bytes
    ok = np.zeros(rows.size, dtype=bool)
    after_bytes = np.zeros(rows.size, dtype=np.int64)
    depends = False
    seen: dict[tuple[bool, bytes], tuple[bool, int, bool]] = {}
    for i, (token, off, kind) in enumerate(zip(index.ids[rows].tolist(), offsets.tolist(), kinds)):
        key = (bool(kind), (token_bytes[token] or b"")[off:])
        verdict = seen.get(key)
        if verdict is None:
            verdict = seen[key] = _exit_verdict(grammar, key[0], form, key[1], follow_ok)
        ok[i], after_bytes[i] = verdict[0], verdict[1]
        depends = depends or verdict[2]
    return Crossing(ok, after_bytes, depends, key_bytes), depends


def _exit_verdict(grammar: Grammar, next_call: bool, form: int, rest: bytes, follow_ok: bool) -> tuple[bool, int, bool]:
    """For a token that reached the end of a call (``next_call``: the separator before another)
    with ``rest`` left: whether it is allowed, the bytes it leaves (``FAR``: into another call) and
    whether that depends on the names. Cached in the compiler, as it does not depend on the tool."""
    exits = grammar.compiler.exits
    shared = (grammar.openers_owner, next_call, form if next_call else -1, rest, follow_ok)
    found = exits.get(shared)
    return found if found is not None else _own_or_made(exits, shared, grammar, functools.partial(
        _judge_exit, grammar, next_call, form, rest, follow_ok))


def _own_or_made(cache: BoundedCache[tuple[Any, ...], V], shared: tuple[Any, ...], grammar: Grammar,
                 make: Callable[[], tuple[V, bool]]) -> V:
    """After a miss under ``shared``: the snapshot's own value under ``(serial, shared)``, else
    ``make()``'s, kept under the one or the other as it says whether it depends on the names."""
    owns = grammar.owns_values
    found = cache.get((grammar.serial, shared)) if owns[0] else None
    if found is None:
        value, depends = make()
        if depends and not owns[0]:
            owns[0] = True  # (a benign race: a miss only makes the value again)
        found = cache.put((grammar.serial, shared) if depends else shared, value)
    return found


def _made_tail_mask(grammar: Grammar, pos: Tail, tail: CompiledTail, follow_ok: bool) -> tuple[Mask, bool]:
    """:func:`_tail_mask`, recounting the tail's size once its DFA grew by an eighth (and 16 states)."""
    made = _tail_mask(grammar, pos, tail, follow_ok)
    states, counted = tail.dfa.n_states, tail.counted_states
    if states >= counted + max(16, counted >> 3):
        tail.counted_states = states
        grammar.compiler.tails.resize(tail.key)
    return made


def _judge_exit(grammar: Grammar, next_call: bool, form: int, rest: bytes,
                follow_ok: bool) -> tuple[tuple[bool, int, bool], bool]:
    """:func:`_exit_verdict`, computed, and whether it depends on the names (for the cache)."""
    openers = grammar.openers
    after: Position
    if next_call:
        depends = bool(rest)
        after = Name(form, b"", None)
    else:
        after = Text(openers.after_call)
        depends = bool(rest) and openers.walk_text(openers.after_call, rest)[2] >= 0
    if rest and not next_call and grammar.dialect.stop_after_call:
        new = None  # the result goes right after the call: its end ends the token (Grammar.walk)
    else:
        new, _ = grammar.walk(after, rest, follow_ok, follow_ok)
    far = isinstance(new, (Name, Head, Tail, Open))
    return (new is not None, FAR if far else 0, depends), depends


def shortest_in_tail(dfa: LazyDFA, state: int) -> tuple[Runs, bool]:
    """A tail state's shortest completion as runs, and whether it ends in a list's separator."""
    runs, end = shortest_runs(dfa, state)
    return runs, dfa.marks.get(end) == NEXT_CALL


def _bytes_after(dfa: LazyDFA, states: np.ndarray) -> np.ndarray:
    """Bytes left to finish from each tail state, ``FAR`` where the shortest way goes into another call."""
    after: np.ndarray = dfa.arrays.dist[states].astype(np.int64)
    if states.size and NEXT_CALL in dfa.nfa.marks.values():
        for state in np.unique(states).tolist():
            if goes_on_from(dfa, state):
                after[states == state] = FAR
    return after


def goes_on_from(dfa: LazyDFA, state: int) -> bool:
    """:func:`shortest_in_tail`'s flag for a tail state, with no text spelled."""
    return dfa.marks.get(dfa.shortest_end(state)) == NEXT_CALL


def _native_tail_mask(grammar: Grammar, pos: Tail, tail: CompiledTail, follow_ok: bool) -> tuple[Mask, bool]:
    """:func:`_tail_mask` outside strings and whitespace runs, by the compiled walk."""
    index = grammar.compiler.index
    dfa = tail.dfa
    got = native_mask(index, dfa, pos.state)
    ids = got.ended_ids  # sorted
    max_after = got.max_dist
    if tail.next_call and got.end_states:  # some may owe the next call (FAR)
        max_after = int(_bytes_after(dfa, np.frombuffer(got.end_states, np.int32).astype(np.int64)).max())
    if not got.exit_rows.size:
        return Mask.from_sorted(ids, index.words, max_after, got.packed), False
    crossing = _cross(grammar, pos, dfa, got.exit_rows, got.exit_states, got.exit_offsets, follow_ok)
    packed = got.packed
    if crossing.ok.any():
        extra = index.ids[got.exit_rows[crossing.ok]].astype(np.int64)
        if packed is not None:
            np.bitwise_or.at(packed, extra >> 3, np.left_shift(1, extra & 7).astype(np.uint8))
        ids = np.sort(np.concatenate([ids, extra.astype(np.int32)]))
        max_after = max(max_after, int(crossing.after[crossing.ok].max()))
    return Mask.from_sorted(ids, index.words, max_after, packed), crossing.depends


def _tail_mask(grammar: Grammar, pos: Tail, tail: CompiledTail, follow_ok: bool) -> tuple[Mask, bool]:
    """The mask at a tail position and whether it depends on the inventory's names."""
    compiler = grammar.compiler
    index = compiler.index
    dfa = tail.dfa
    spot, blank = dfa.spots(pos.state)
    if spot is None and NATIVE and blank is None:
        return _native_tail_mask(grammar, pos, tail, follow_ok)
    if spot is None:
        walk = walk_state(index, dfa, pos.state, compiler.blank_table)
        crossing = _cross(grammar, pos, dfa, walk.exit_rows, walk.exit_states, walk.exit_offsets, follow_ok)
        ids = np.concatenate([index.ids[walk.rows].astype(np.int64), index.ids[walk.exit_rows[crossing.ok]].astype(np.int64)])
        after = np.concatenate([_bytes_after(dfa, walk.finals.astype(np.int64)), crossing.after[crossing.ok]])
        return Mask.from_ids(ids, index.words, int(after.max()) if after.size else 0), crossing.depends
    table, content = compiler.string_place(grammar.dialect.form_style(pos.form), spot)
    string = table.walk(content)
    count, high = spot.count_class, spot.high
    inside = string.inside_packed(None if high is None or count == MID else high - count, index.words)
    # tokens that close the string: characters before the quote must fit the bounds
    chars = string.closing_chars
    fits = np.ones(chars.size, dtype=bool)
    if count != MID:
        fits &= count + chars >= spot.low
        if high is not None:
            fits &= count + chars <= high
    reps = string.closing_rows[string.rest_first]
    rep_offsets = string.closing_offsets[string.rest_first]
    ok_rep = np.zeros(reps.size, dtype=bool)
    after_rep = np.zeros(reps.size, dtype=np.int64)
    depends = False
    quote = spot.after_quote
    if NATIVE and quote != SINK and reps.size and string.rest_trie is not None and not dfa.arrays.exits[quote]:
        # the distinct remainders after the quote, as one walk of their trie (each reported as its number)
        ended, finals, exit_k, exit_states, exit_offsets = walk_trie(*string.rest_trie, dfa, quote)
        ok_rep[ended] = True
        after_rep[ended] = _bytes_after(dfa, finals.astype(np.int64))
        if string.empty_rest >= 0:  # a token that ends at the quote ends in the state after it
            ok_rep[string.empty_rest] = True
            after_rep[string.empty_rest] = _bytes_after(dfa, np.array([quote], dtype=np.int64))[0]
        crossing = _cross(grammar, pos, dfa, reps[exit_k], exit_states, rep_offsets[exit_k] + exit_offsets, follow_ok)
        ok_rep[exit_k[crossing.ok]] = True
        after_rep[exit_k[crossing.ok]] = crossing.after[crossing.ok]
        depends = crossing.depends
    elif quote != SINK and reps.size:
        walk = walk_rows(index, dfa, reps, np.full(reps.size, quote, dtype=np.int32), rep_offsets)
        where = {r: i for i, r in enumerate(reps.tolist())}
        for r, a in zip(walk.rows.tolist(), _bytes_after(dfa, walk.finals.astype(np.int64)).tolist()):
            ok_rep[where[r]] = True
            after_rep[where[r]] = a
        crossing = _cross(grammar, pos, dfa, walk.exit_rows, walk.exit_states, walk.exit_offsets, follow_ok)
        for r, good, a in zip(walk.exit_rows.tolist(), crossing.ok.tolist(), crossing.after.tolist()):
            if good:
                ok_rep[where[r]] = True
                after_rep[where[r]] = a
        depends = crossing.depends
    closing_ok = fits & ok_rep[string.rest_of]
    closing_ids = index.ids[string.closing_rows[closing_ok]]
    packed = inside.copy()
    if closing_ids.size:
        packed |= Mask.from_ids(closing_ids, index.words, unique=False).packed
    inside_after = 0
    if string.final_set.size:
        owed = 0 if count == MID else max(0, spot.low - count)
        quote_after = int(dfa.arrays.dist[spot.after_quote]) if spot.after_quote != SINK else 0
        inside_after = int(table.dfa.arrays.dist[string.final_set].max()) + owed + quote_after
    closing_after = int(after_rep[string.rest_of][closing_ok].max()) if closing_ok.any() else 0
    return Mask(packed, max(inside_after, closing_after)), depends
