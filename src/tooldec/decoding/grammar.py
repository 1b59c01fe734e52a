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

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..automata.nfa import DEAD, NFA, ByteDFA
from ..dialects.base import NEXT_CALL, Dialect
from ..tokens import Vocabulary
from ..tools import Tool, ToolSet
from ..tools.trie import ROOT, NameTrie
from .token_index import TokenIndex

__all__ = ["Grammar", "Mask", "Position"]

Position = tuple[Any, ...]
MAIN = ""  # trie key of the whole tool set; a tool's name keys a one-name trie (tool_choice)
_LEFT = -2  # tail walk result: the token left the call (it closed, or a next name began)
_ESTIMATE_NAMES = 16


@dataclass(eq=False)
class Mask:
    """Allowed token ids at one position, and what budgeting needs to know about them."""

    ids: np.ndarray  # sorted int32
    finals: np.ndarray | None = None  # tail positions: tail state after each token, _LEFT if it left
    _bits: np.ndarray | None = field(default=None, repr=False)

    def bits(self, words: int) -> np.ndarray:
        """The ids as an int32 bitmask of ``words`` words (bit i of word w is token 32*w+i)."""
        if self._bits is None or self._bits.shape[0] != words:
            flags = np.zeros(words * 32, dtype=bool)
            flags[self.ids] = True
            self._bits = np.packbits(flags, bitorder="little").view(np.int32)
        return self._bits


_TAIL_CACHE: dict[tuple[Any, ...], ByteDFA] = {}


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
        self._kmp = _kmp_table(self.trigger_bytes) if self.trigger_bytes else None
        self._completers: dict[int, list[tuple[int, bytes]]] | None = None
        self._tries: dict[str, NameTrie] = {}
        self._masks: dict[tuple[Any, ...], Mask] = {}
        self._name_distance: dict[tuple[Any, ...], int] = {}
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

    def tail(self, tool_name: str, next_call: bool) -> ByteDFA:
        """The tool's tail automaton, compiled on first use and shared by schema hash."""
        key = self._tail_key(tool_name, next_call)
        dfa = _TAIL_CACHE.get(key)
        if dfa is None:
            nfa = NFA()
            dfa = _TAIL_CACHE[key] = nfa.to_dfa(self.dialect.tail(nfa, self.tools[tool_name], next_call=next_call))
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
            elif kind == "start":  # without a text trigger only the special token can start the call
                if not self.trigger_bytes:
                    return None, closed
                pos = ("name", pos[1], self.trigger_bytes + self.dialect.head, ROOT)
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
                pos = ("tail", key, name, follow_ok, 0)
            else:  # tail
                _, key, name, nxt, state = pos
                dfa = self.tail(name, nxt)
                trans = dfa.trans
                while i < n:
                    state = int(trans[state, data[i]])
                    i += 1
                    if state < 0:
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
        if kind == "text":
            return Mask(self._text_ids(pos[1], start_ok, follow_ok))
        if kind == "start":
            ids = list(self.trigger_ids) if start_ok else []
            if self.trigger_bytes:
                full = ("name", pos[1], self.trigger_bytes + self.dialect.head, ROOT)
                ids += self._name_ids(full, follow_ok).tolist()
            return Mask(np.array(sorted(ids), dtype=np.int32))
        if kind == "name":
            return Mask(self._name_ids(pos, follow_ok))
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
                ids = np.setdiff1d(ids, np.array(bad, dtype=np.int32), assume_unique=False)
        return np.unique(ids).astype(np.int32)

    def completers(self) -> dict[int, list[tuple[int, bytes]]]:
        """For each trigger state, the tokens that complete the text trigger and the bytes after it."""
        if self._completers is None:
            trig = self.trigger_bytes or b""
            kmp = self._kmp or []
            out: dict[int, list[tuple[int, bytes]]] = {}
            last = trig[-1:]
            for tid, data in zip(self.index.sorted_ids, self.index.sorted_bytes):
                if last not in data:
                    continue
                for k in range(len(kmp)):
                    state = k
                    for j, byte in enumerate(data):
                        state = kmp[state][byte]
                        if state == len(kmp):
                            out.setdefault(k, []).append((tid, data[j + 1 :]))
                            break
            self._completers = out
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
                    start = ("tail", key, name, follow_ok, 0)
                    for b in np.nonzero(self.tail(name, follow_ok).trans[0] >= 0)[0].tolist():
                        a, z = _range(tokens, prefix + bytes([b]), lo, hi)
                        for j in range(a, z):
                            if self.walk(start, tokens[j][depth:], follow_ok, follow_ok) is not None:
                                allowed.append(ids[j])
            for b, rest, nxt in branches:
                a, z = _range(tokens, prefix + bytes([b]), lo, hi)
                if a < z:
                    stack.append((rest, nxt, prefix + bytes([b]), a, z))
        return np.array(sorted(allowed), dtype=np.int32)

    def _tail_mask(self, pos: Position, follow_ok: bool) -> Mask:
        """All tokens pushed through the tail's table at once, one byte column per step."""
        _, key, name, nxt, start = pos
        dfa = self.tail(name, nxt)
        trans = np.vstack([dfa.trans, np.full((1, 256), DEAD, dtype=np.int32)])
        sink = dfa.n_states
        trans[trans < 0] = sink
        exits = np.zeros(dfa.n_states + 1, dtype=bool)
        exits[list(dfa.marks)] = True
        exits[: dfa.n_states] |= dfa.accepting
        index = self.index
        rows = np.arange(index.longer_than[0], dtype=np.int64)
        states = np.full(rows.shape[0], start, dtype=np.int32)
        done_rows: list[np.ndarray] = []
        done_states: list[np.ndarray] = []
        escaped: list[tuple[int, Position]] = []
        k = 0
        while rows.size:
            states = trans[states, index.flat[index.offsets[rows] + k]]
            k += 1
            live = states != sink
            rows, states = rows[live], states[live]
            out = exits[states]
            if out.any():
                for r, s in zip(rows[out].tolist(), states[out].tolist()):
                    after = ("name", key, b"", ROOT) if s in dfa.marks else ("text", 0)
                    rest = bytes(index.flat[index.offsets[r] + k : index.offsets[r] + index.lengths[r]])
                    if self.walk(after, rest, follow_ok, follow_ok) is not None:
                        escaped.append((int(index.ids[r]), after))
                rows, states = rows[~out], states[~out]
            ended = index.lengths[rows] <= k
            if ended.any():
                done_rows.append(rows[ended])
                done_states.append(states[ended])
                rows, states = rows[~ended], states[~ended]
        tok = np.concatenate([index.ids[r] for r in done_rows] + [np.array([t for t, _ in escaped], dtype=np.int32)])
        fin = np.concatenate(done_states + [np.full(len(escaped), _LEFT, dtype=np.int32)])
        order = np.argsort(tok, kind="stable")
        return Mask(tok[order].astype(np.int32), fin[order].astype(np.int32))

    # -- budgets ------------------------------------------------------------------------------

    def distance(self, pos: Position, follow_ok: bool) -> int:
        """Bytes needed to finish the call from ``pos`` (an upper bound for names: a few are tried)."""
        kind = pos[0]
        if kind == "text":
            return 0
        if kind == "tail":
            return int(self.tail(pos[2], pos[3]).dist[pos[4]])
        if kind == "start":
            return len((self.trigger_bytes or b"") + self.dialect.head) + self.distance(("name", pos[1], b"", ROOT), follow_ok)
        _, key, lit, node = pos
        trie = self.trie(key)
        memo_key = (key, node, trie.version(node), follow_ok)
        best = self._name_distance.get(memo_key)
        if best is None:
            # an upper bound: the best over the names whose tails are compiled already, or the
            # shortest name if none is (any subset of the names bounds the true minimum)
            depth = trie.depth(node)
            names = list(trie.names_below(node))
            ready = [n for n in names if self._tail_key(n, follow_ok) in _TAIL_CACHE][:_ESTIMATE_NAMES]
            if not ready:
                ready = [min(names, key=len)]
            best = min(len(n.encode()) - depth + int(self.tail(n, follow_ok).dist[0]) for n in ready)
            self._name_distance[memo_key] = best
        return len(lit) + best

    def within_budget(self, pos: Position, mask: Mask, budget: int, start_ok: bool, follow_ok: bool) -> np.ndarray:
        """The ids of ``mask`` after which the call can still be finished in ``budget - 1`` tokens.

        Every single byte is a token in the vocabularies tooldec supports, so bytes bound tokens.
        When no token fits (the budget was already too small), the tokens that bring the end
        closest are returned, so the mask is never empty.
        """
        if pos[0] == "tail" and mask.finals is not None:
            dist = self.tail(pos[2], pos[3]).dist
            after = np.where(mask.finals == _LEFT, 0, dist[np.clip(mask.finals, 0, None)])
            ids = mask.ids
        else:
            found = []
            for tid in mask.ids.tolist():
                data = self.vocab.token_bytes[tid]
                nxt = self._after_special(pos, tid) if data is None else self.walk(pos, data, start_ok, follow_ok)
                if nxt is not None:
                    found.append((tid, self.distance(nxt, follow_ok)))
            ids = np.array([t for t, _ in found], dtype=np.int32)
            after = np.array([d for _, d in found], dtype=np.int64)
        if not ids.size:
            return ids
        room = budget - 1
        return ids[after <= max(room, int(after.min()))]

    def _after_special(self, pos: Position, tid: int) -> Position | None:
        if tid in self.trigger_ids:
            return self.call_start(pos[1] if pos[0] == "start" else MAIN)
        return pos if pos[0] == "text" else None


def _range(tokens: list[bytes], prefix: bytes, lo: int, hi: int) -> tuple[int, int]:
    """The range of sorted ``tokens[lo:hi]`` that start with ``prefix``."""
    a = bisect_left(tokens, prefix, lo, hi)
    last = prefix[-1]
    z = hi if last == 255 else bisect_left(tokens, prefix[:-1] + bytes([last + 1]), a, hi)
    return a, z


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
