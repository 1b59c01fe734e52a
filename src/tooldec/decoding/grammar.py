"""Where every mask is computed: the language of text with tool calls, over a real vocabulary.

A position in the output is a small tuple:

* ``("text", k)``: free text; ``k`` bytes of a text trigger are matched so far;
* ``("start", trie)``: nothing written yet and a call must come first;
* ``("name", trie, lit, node)``: ``lit`` (the rest of the trigger and head) is still to be
  written, then a name from ``node`` of the name trie;
* ``("tail", trie, tool, next_call, state)``: inside the tool's tail automaton (the bytes after
  its name, arguments included).

Masks are exact: a token is allowed iff all its bytes can be consumed from the position and what
remains can still be completed. They are cached per position (and per trie version for names).
Two flags from the machine take part: ``start_ok`` (a call may begin in text) and ``follow_ok``
(another call may follow the current one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..automata.lazy import SINK, LazyDFA
from ..automata.nfa import NFA
from ..dialects.base import Dialect
from ..tokens import Vocabulary
from ..tools import ToolSet
from ..tools.trie import ROOT, NameTrie
from .budget import Completions
from .token_index import TokenIndex
from .vector_walk import StringTable, StringWalk, narrow_rows, walk_rows

__all__ = ["Grammar", "Mask", "Position"]

Position = tuple[Any, ...]
MAIN = ""  # trie key of the whole tool set; a tool's name keys a one-name trie (tool_choice)
_ESTIMATE_NAMES = 16


@dataclass(eq=False)
class Mask:
    """The allowed tokens at one position, as packed bits over the vocabulary.

    Attributes:
        packed: uint8, little-endian bit order: bit ``i`` of byte ``i // 8`` is token ``i``
            (the layout of an int32 bitmask row, viewed as bytes).
        max_after: the most bytes any allowed token leaves to finish the call (budgets).
    """

    packed: np.ndarray
    max_after: int = 0
    _ids: np.ndarray | None = field(default=None, repr=False)
    _words: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _last_n: int = field(default=-1, repr=False)
    _count: int = field(default=-1, repr=False)
    _last: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_ids(cls, ids: np.ndarray, words: int, max_after: int = 0) -> Mask:
        """The mask of ``ids`` (any order, repeats allowed), its count known without unpacking."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size > words * 4:  # dense: set flags and pack them
            flags = np.zeros(words * 32, dtype=bool)
            flags[ids] = True
            return cls(np.packbits(flags, bitorder="little"), max_after, _count=int(np.count_nonzero(flags)))
        if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            ids = np.unique(ids)
        packed = np.zeros(words * 4, dtype=np.uint8)
        np.add.at(packed, ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))  # distinct ids: add is or
        return cls(packed, max_after, _ids=ids.astype(np.int32), _count=int(ids.size))

    @property
    def count(self) -> int:
        """How many tokens are allowed (cached)."""
        if self._count < 0:
            if hasattr(np, "bitwise_count"):  # NumPy >= 2
                self._count = int(np.bitwise_count(self.packed).sum(dtype=np.int64))
            else:
                self._count = int(np.count_nonzero(np.unpackbits(self.packed)))
        return self._count

    @property
    def ids(self) -> np.ndarray:
        """Sorted int32 ids."""
        if self._ids is None:
            self._ids = np.flatnonzero(np.unpackbits(self.packed, bitorder="little")).astype(np.int32)
        return self._ids

    def words(self, n: int) -> np.ndarray:
        """The mask as ``n`` int32 words (zero padded: ids past the vocabulary are masked)."""
        if n == self._last_n:
            return self._last
        row = self._words.get(n)
        if row is None:
            row = np.zeros(n, dtype=np.int32)
            own = self.packed.view(np.int32)
            row[: min(n, own.size)] = own[:n]
            self._words[n] = row
        self._last_n, self._last = n, row
        return row


_TAIL_CACHE: dict[tuple[Any, ...], LazyDFA] = {}


class Grammar:
    """The call language of one tool set, dialect and vocabulary, with its mask caches.

    Cheap to create: only the names are used up front; a tool's tail automaton is compiled the
    first time a mask or a step needs it, and shared between grammars by schema hash.
    """

    def __init__(self, tools: ToolSet, vocab: Vocabulary, dialect: Dialect) -> None:
        self.tools = tools
        self.vocab = vocab
        self.dialect = dialect
        self.index = TokenIndex.of(vocab)
        for tool in tools:
            dialect.check_tool(tool)
        self.trigger_bytes = dialect.trigger_bytes
        self.trigger_ids = np.array(
            [i for i, text in vocab.special.items() if dialect.trigger is not None and text == dialect.trigger], dtype=np.int32
        )
        # a trigger that is a special token of this vocabulary is matched by id; otherwise it is
        # text, matched in the byte stream (even split across tokens)
        self.trigger_is_text = bool(self.trigger_bytes) and not self.trigger_ids.size
        self._kmp = _kmp_table(self.trigger_bytes) if self.trigger_is_text and self.trigger_bytes else None
        self._completers: dict[int, list[tuple[int, bytes]]] | None = None
        self._tries: dict[str, NameTrie] = {}
        self._masks: dict[tuple[Any, ...], Mask] = {}
        self._name_distance: dict[tuple[Any, ...], tuple[int, str]] = {}
        self._strings: dict[Any, StringTable] = {}
        self.completions = Completions(self)
        self._byte_ids = np.sort(self.index.ids)
        self._other_special = np.setdiff1d(self.index.special_ids, np.concatenate([self.trigger_ids, self.index.eos_ids]))

    # -- positions ----------------------------------------------------------------------------

    def trie(self, key: str) -> NameTrie:
        if key == MAIN:
            return self.tools.trie
        trie = self._tries.get(key)
        if trie is None:
            trie = self._tries[key] = NameTrie()
            trie.add(self.tools[key].name)
        return trie

    def call_start(self, key: str) -> Position:
        """The position right after a trigger."""
        return ("name", key, self.dialect.head, ROOT)

    def _tail_key(self, tool_name: str, next_call: bool) -> tuple[Any, ...]:
        return (type(self.dialect), self.dialect.style, self.tools[tool_name].schema_hash, next_call)

    def _start_literal(self) -> bytes | None:
        """What a call that must come first is spelled with before its name, if text can spell it.

        A dialect without a trigger opens with its head; one whose trigger is a special token
        without bytes (Mistral's ``[TOOL_CALLS]`` as a control token) can only start with it.
        """
        if self.dialect.trigger is None:
            return self.dialect.head
        if self.trigger_is_text and self.trigger_bytes:
            return self.trigger_bytes + self.dialect.head
        return None

    def tail(self, tool_name: str, next_call: bool) -> LazyDFA:
        """The tool's tail automaton, built on first use (its states on demand), shared by schema hash."""
        key = self._tail_key(tool_name, next_call)
        dfa = _TAIL_CACHE.get(key)
        if dfa is None:
            nfa = NFA()
            dfa = _TAIL_CACHE[key] = LazyDFA(nfa, self.dialect.tail(nfa, self.tools[tool_name], next_call=next_call))
        return dfa

    def is_accepting(self, pos: Position) -> bool:
        return pos[0] == "text"

    # -- walking bytes ------------------------------------------------------------------------

    def walk(self, pos: Position, data: bytes, start_ok: bool, follow_ok: bool) -> Position | None:
        """The position after ``data``, or ``None`` if ``data`` leaves the language."""
        return self.walk_counting(pos, data, start_ok, follow_ok)[0]

    def walk_counting(self, pos: Position, data: bytes, start_ok: bool, follow_ok: bool) -> tuple[Position | None, int]:
        """Like ``walk``, also counting the calls that closed on the way."""
        i, n, closed = 0, len(data), 0
        while i < n:
            kind = pos[0]
            if kind == "text":
                kmp = self._kmp
                if kmp is None:
                    return pos, closed
                k = pos[1]
                while i < n:
                    k = kmp[k][data[i]]
                    i += 1
                    if k == len(kmp):
                        break
                else:
                    return ("text", k), closed
                if not start_ok:
                    return None, closed
                pos, start_ok = self.call_start(MAIN), follow_ok
            elif kind == "start":
                pos = ("name", pos[1], self._start_literal(), ROOT)
                if pos[2] is None:  # only the trigger's special token can start this call
                    return None, closed
            elif kind == "name":
                _, key, lit, node = pos
                if lit:
                    m = min(len(lit), n - i)
                    if data[i : i + m] != lit[:m]:
                        return None, closed
                    i += m
                    pos = ("name", key, lit[m:], node)
                    continue
                trie = self.trie(key)
                child = trie.child(node, data[i])
                if child is not None:
                    pos = ("name", key, b"", child)
                    i += 1
                    continue
                name = trie.terminal(node)
                if name is None:
                    return None, closed
                pos = ("tail", key, name, follow_ok, self.tail(name, follow_ok).start)
            else:  # tail
                _, key, name, nxt, state = pos
                dfa = self.tail(name, nxt)
                while i < n:
                    state = dfa.next(state, data[i])
                    i += 1
                    if state == SINK:
                        return None, closed
                    if state in dfa.marks:
                        pos = ("name", key, b"", ROOT)
                        closed += 1
                        break
                    if dfa.accepting[state]:
                        pos = ("text", 0)
                        start_ok = follow_ok
                        closed += 1
                        break
                else:
                    return ("tail", key, name, nxt, state), closed
        return pos, closed

    # -- masks --------------------------------------------------------------------------------

    def mask(self, pos: Position, start_ok: bool, follow_ok: bool) -> Mask:
        kind = pos[0]
        if kind == "name":
            key: tuple[Any, ...] = (pos, self.trie(pos[1]).version(pos[3]), follow_ok)
        elif kind == "tail":
            key = (pos, follow_ok, self.tools.trie.version(ROOT) if pos[3] else 0)
        else:
            key = (pos, start_ok, follow_ok, self.tools.trie.version(ROOT))
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = self._compute(pos, start_ok, follow_ok)
        return mask

    def _compute(self, pos: Position, start_ok: bool, follow_ok: bool) -> Mask:
        kind = pos[0]
        words = self.index.words
        if kind == "text":
            return Mask.from_ids(self._text_ids(pos[1], start_ok, follow_ok), words)
        if kind == "start":
            ids = list(self.trigger_ids) if start_ok else []
            literal = self._start_literal()
            if literal is not None:
                ids += self._name_ids(("name", pos[1], literal, ROOT), follow_ok).tolist()
            return Mask.from_ids(np.array(ids, dtype=np.int32), words)
        if kind == "name":
            return Mask.from_ids(self._name_ids(pos, follow_ok), words)
        return self._tail_mask(pos, follow_ok)

    def _text_ids(self, k: int, start_ok: bool, follow_ok: bool) -> np.ndarray:
        parts = [self._byte_ids, self._other_special, self.index.eos_ids]
        if start_ok:
            parts.append(self.trigger_ids)
        ids = np.concatenate(parts)
        if self._kmp is not None:
            bad = [
                tid
                for tid, rest in self.completers().get(k, [])
                if not start_ok or self.walk(self.call_start(MAIN), rest, follow_ok, follow_ok) is None
            ]
            if bad:
                ids = np.setdiff1d(ids, np.array(bad, dtype=np.int32))
        return ids.astype(np.int32)

    def completers(self) -> dict[int, list[tuple[int, bytes]]]:
        """For each trigger state, the tokens that complete the text trigger and the bytes after it."""
        if self._completers is None:
            self._completers = _completers(self.index, self.trigger_bytes or b"", self._kmp or [])
        return self._completers

    def _name_ids(self, pos: Position, follow_ok: bool) -> np.ndarray:
        """Tokens that spell the rest of the head, then part of a name (or a name and more)."""
        _, key, lit0, node0 = pos
        trie = self.trie(key)
        tokens, ids = self.index.sorted_bytes, self.index.sorted_ids
        allowed: list[int] = []
        stack: list[tuple[bytes, int, bytes, int, int]] = [(lit0, node0, b"", 0, len(tokens))]
        while stack:
            lit, node, prefix, lo, hi = stack.pop()
            depth = len(prefix)
            while lo < hi and len(tokens[lo]) == depth:
                if depth:
                    allowed.append(ids[lo])
                lo += 1
            if lo >= hi:
                continue
            if lit:
                branches = [(lit[0], lit[1:], node)]
            else:
                branches = [(b, b"", child) for b, child in trie.children(node).items()]
                name = trie.terminal(node)
                if name is not None:  # tokens that finish the name and run into its tail
                    allowed += self._crossing_ids(key, name, prefix, lo, hi, follow_ok)
            for b, rest, nxt in branches:
                a, z = self.index.prefix_range(prefix + bytes([b]), lo, hi)
                if a < z:
                    stack.append((rest, nxt, prefix + bytes([b]), a, z))
        return np.array(sorted(allowed), dtype=np.int32)

    def _string_table(self) -> StringTable:
        syntax = self.dialect.style.syntax
        table = self._strings.get(syntax)
        if table is None:
            table = self._strings[syntax] = _string_table(self.index, syntax)
        return table

    def _tail_outcomes(
        self, pos: Position, follow_ok: bool, *, tokens: bool = False
    ) -> tuple[tuple[StringWalk, int] | None, np.ndarray, np.ndarray]:
        """Where every token goes from a tail position, in two parts.

        Returns:
            ``base``: for string content, the per-vocabulary walk of the tokens that stay inside
            the string and the tail state after its closing quote, else ``None``; then the ids
            and remaining distances of all other allowed tokens.
        """
        _, key, name, nxt, start = pos
        dfa = self.tail(name, nxt)
        index = self.index
        table = self._string_table()
        exit_state = dfa.string_exit(start)
        match = None if exit_state is None else (table.start_state, exit_state)
        if match is None:
            ended_ids, ended_states, rows, states, offsets = narrow_rows(index, dfa, start)
            rows, dist = self._walk_on(pos, dfa, rows, states, offsets, follow_ok, tokens)
            ids = np.concatenate([index.ids[rows], np.array(ended_ids, dtype=np.int32)])
            return None, ids, np.concatenate([dist, self._state_dist(pos, np.array(ended_states, dtype=np.int64), follow_ok, tokens)])
        q, exit_state = match
        string = table.walk(q)
        # tokens that close the string: walk one per distinct remainder after the quote
        reps = string.closing_rows[string.rest_first]
        ok_rows, ok_dist = self._walk_on(
            pos, dfa, reps, np.full(reps.size, exit_state, dtype=np.int32), string.closing_offsets[string.rest_first], follow_ok, tokens
        )
        rep_dist = np.full(reps.size, -1, dtype=np.int64)
        where = {int(r): i for i, r in enumerate(reps.tolist())}
        for r, d in zip(ok_rows.tolist(), ok_dist.tolist()):
            rep_dist[where[r]] = d
        per_crosser = rep_dist[string.rest_of]
        keep = per_crosser >= 0
        return (string, exit_state), index.ids[string.closing_rows[keep]], per_crosser[keep]

    def _walk_on(
        self, pos: Position, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray, follow_ok: bool,
        tokens: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows that survive the rest of their bytes from the given states (crossing the end of
        the call where they do), with the bytes each leaves to finish the call."""
        index, key = self.index, pos[1]
        walk = walk_rows(index, dfa, rows, states, offsets)
        left_rows, left_dist = [], []
        for r, s, off in zip(walk.exit_rows.tolist(), walk.exit_states.tolist(), walk.exit_offsets.tolist()):
            after: Position | None = ("name", key, b"", ROOT) if s in dfa.marks else ("text", 0)
            rest = bytes(index.flat[index.offsets[r] + off : index.offsets[r] + index.lengths[r]])
            after = self.walk(after, rest, follow_ok, follow_ok)
            if after is not None:
                left_rows.append(r)
                left_dist.append(self.completions.tokens(after, follow_ok) if tokens else self.distance(after, follow_ok))
        out_rows = np.concatenate([walk.rows, np.array(left_rows, dtype=np.int64)])
        return out_rows, np.concatenate([self._state_dist(pos, walk.finals, follow_ok, tokens), np.array(left_dist, dtype=np.int64)])

    def _state_dist(self, pos: Position, states: np.ndarray, follow_ok: bool, tokens: bool) -> np.ndarray:
        """What is left to finish the call from each tail state: bytes, or tokens (per distinct state)."""
        dfa = self.tail(pos[2], pos[3])
        if not tokens or not states.size:
            return dfa.dist[states]
        distinct, inverse = np.unique(states, return_inverse=True)
        counts = [self.completions.tokens(("tail", pos[1], pos[2], pos[3], int(s)), follow_ok) for s in distinct.tolist()]
        return np.array(counts, dtype=np.int64)[inverse]

    def _crossing_ids(self, key: str, name: str, prefix: bytes, lo: int, hi: int, follow_ok: bool) -> list[int]:
        """Tokens among ``sorted_bytes[lo:hi]`` (all starting with ``prefix``, a complete name)
        that carry on into the tool's tail. The dialect's fixed tail start is compared first,
        so the tool's automaton is only built if a token runs past it."""
        tokens, ids = self.index.sorted_bytes, self.index.sorted_ids
        depth, literal = len(prefix), self.dialect.tail_literal
        out = []
        firsts = [literal[0]] if literal else range(256)
        for b in firsts:
            a, z = self.index.prefix_range(prefix + bytes([b]), lo, hi)
            for j in range(a, z):
                rest = tokens[j][depth:]
                if literal and len(rest) <= len(literal):
                    if literal.startswith(rest):
                        out.append(ids[j])
                    continue
                if literal and not rest.startswith(literal):
                    continue
                dfa = self.tail(name, follow_ok)
                if self.walk(("tail", key, name, follow_ok, dfa.start), rest, follow_ok, follow_ok) is not None:
                    out.append(ids[j])
        return out

    def _tail_mask(self, pos: Position, follow_ok: bool) -> Mask:
        base, ids, dist = self._tail_outcomes(pos, follow_ok)
        mask = Mask.from_ids(ids, self.index.words, int(dist.max()) if dist.size else 0)
        if base is not None:
            string, exit_state = base
            mask.packed |= string.packed
            mask._count, mask._ids = -1, None  # the string part was added: recount
            if string.final_set.size:  # inside the string: the canonical bytes to the quote, then the rest
                closing = self._string_table().dfa.dist[string.final_set].max()
                mask.max_after = max(mask.max_after, int(closing + self.tail(pos[2], pos[3]).dist[exit_state]))
        return mask

    # -- budgets ------------------------------------------------------------------------------

    def distance(self, pos: Position, follow_ok: bool) -> int:
        """Bytes needed to finish the call from ``pos`` (an upper bound for names: a few are tried)."""
        kind = pos[0]
        if kind == "text":
            return 0
        if kind == "tail":
            return int(self.tail(pos[2], pos[3]).dist[pos[4]])
        if kind == "start":
            return len(self._start_literal() or b"") + self.distance(("name", pos[1], b"", ROOT), follow_ok)
        return len(pos[2]) + self.best_name(pos, follow_ok)[0]

    def best_name(self, pos: Position, follow_ok: bool) -> tuple[int, str]:
        """(bytes to finish, name) for the cheapest known way to finish from a name position.

        An upper bound: the best over the names whose tails are built already, or the shortest
        name if none is (any subset of the names bounds the true minimum).
        """
        _, key, _, node = pos
        trie = self.trie(key)
        memo_key = (key, node, trie.version(node), follow_ok)
        best = self._name_distance.get(memo_key)
        if best is None:
            depth = trie.depth(node)
            names = list(trie.names_below(node))
            ready = [n for n in names if self._tail_key(n, follow_ok) in _TAIL_CACHE][:_ESTIMATE_NAMES]
            if not ready:
                ready = [min(names, key=len)]
            best = min((len(n.encode()) - depth + int(self.tail(n, follow_ok).dist[self.tail(n, follow_ok).start]), n) for n in ready)
            self._name_distance[memo_key] = best
        return best

    def _after_special(self, pos: Position, tid: int) -> Position | None:
        if tid in self.trigger_ids:
            return self.call_start(pos[1] if pos[0] == "start" else MAIN)
        return pos if pos[0] == "text" else None


def prepare(vocab: Vocabulary) -> None:
    """Build the per-vocabulary structures now (token index, JSON string tables) rather than at
    the first grammar or mask: tokenizer set-up, done once per tokenizer and shared."""
    index = TokenIndex.of(vocab)
    from ..automata.json_schema import Syntax

    for syntax in Syntax:
        _string_table(index, syntax).walk(_string_table(index, syntax).start_state)


_STRING_TABLES: dict[tuple[int, Any], StringTable] = {}
_COMPLETERS: dict[tuple[int, bytes], tuple[TokenIndex, dict[int, list[tuple[int, bytes]]]]] = {}


def _completers(index: TokenIndex, trigger: bytes, kmp: list[list[int]]) -> dict[int, list[tuple[int, bytes]]]:
    """Per vocabulary index and text trigger, shared by every grammar (a scan of the whole
    vocabulary: tens of ms at 151k tokens, once, not once per tool list)."""
    key = (id(index), trigger)
    found = _COMPLETERS.get(key)
    if found is not None and found[0] is index:
        return found[1]
    out: dict[int, list[tuple[int, bytes]]] = {}
    last = trigger[-1:]
    for tid, data in zip(index.sorted_ids, index.sorted_bytes):
        if last not in data:
            continue
        for k in range(len(kmp)):
            state = k
            for j, byte in enumerate(data):
                state = kmp[state][byte]
                if state == len(kmp):
                    out.setdefault(k, []).append((tid, data[j + 1 :]))
                    break
    _COMPLETERS[key] = (index, out)
    return out


def _string_table(index: TokenIndex, syntax: Any) -> StringTable:
    """One table per vocabulary index and string syntax, shared by every grammar."""
    key = (id(index), syntax)
    table = _STRING_TABLES.get(key)
    if table is None or table.index is not index:
        table = _STRING_TABLES[key] = StringTable(index, syntax)
    return table


def _kmp_table(pattern: bytes) -> list[list[int]]:
    """table[k][b]: matched length after byte b when k bytes of ``pattern`` were matched."""
    fail = [0] * len(pattern)
    j = 0
    for i in range(1, len(pattern)):
        while j and pattern[i] != pattern[j]:
            j = fail[j - 1]
        if pattern[i] == pattern[j]:
            j += 1
        fail[i] = j
    table = []
    for k in range(len(pattern)):
        row = []
        for b in range(256):
            m = k
            while m and pattern[m] != b:
                m = fail[m - 1]
            row.append(m + 1 if pattern[m] == b else 0)
        table.append(row)
    return table
