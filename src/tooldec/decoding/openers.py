"""Where calls begin: the dialect's openers as automata over one vocabulary.

``search`` is free text ("any text, then an opener": an exit commits the call), ``open`` the
anchored openers of a call that must come first, ``heads`` a tag's head up to the name. Tags the
vocabulary holds as special tokens are matched by id. Built once per compiler (per snapshot for
named openers), immutable but for the per-state token walks, kept in bounded caches.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..automata.dfa import SINK, LazyDFA
from ..automata.nfa import NFA
from ..caches import BoundedCache
from ..dialects.base import Dialect
from ..dialects.watch import Commit, CommitKind, search_automaton
from .token_index import TokenIndex
from .vector_walk import blank_table, walk_rows, walk_state

__all__ = ["Commit", "CommitKind", "Committer", "OpenerTables"]


@dataclass(frozen=True)
class Committer:
    """A token that completes an opener from some text state, with its bytes after the opener."""

    token: int
    commit: int
    rest: bytes


OpenWalk = tuple[list[int], list[int], list[Committer], bool]
"""From one ``open`` state: the tokens that stay inside, their end states, those that complete an
opener, and whether one of those writes part of a name (then the names decide the mask)."""

HeadWalk = tuple[list[int], list[int], dict[int, list[tuple[int, bytes]]]]
"""From one head state: the tokens that stay inside, their end states, and those that reach the
name as ``(id, what they write of it)`` by that text's first byte (-1: nothing)."""


_LEAVES, _HEAD, _NAME = range(3)
""":meth:`OpenerTables._fate`'s answers."""


class OpenerTables:
    """The opener automata of one dialect over one vocabulary; ``names``: those named openers commit on."""

    def __init__(self, index: TokenIndex, dialect: Dialect, names: Collection[str] = ()) -> None:
        self.index = index
        specials = {text: tid for tid, text in sorted(index.special.items(), reverse=True)}
        auto = search_automaton(dialect, specials, window=index.longest, names=names)
        self.automaton = auto
        self.special_forms: dict[int, int] = {specials[tag]: form for tag, form in auto.special_tags.items()}
        self.open_special_forms: dict[int, int] = {specials[tag]: form for tag, form in auto.open_special_tags.items()}
        """The special tags a call that must come first may open with (``Dialect.forced_openers``)."""
        self.refused_specials = {specials[tag]: name for tag, name in auto.refused_tags}
        """Special tokens free text refuses (a format's result markers), with their refusal's name."""
        self.commits: list[Commit] = auto.commits
        self.refuses = bool(self.refused_specials) or any(c.kind is CommitKind.REFUSED for c in self.commits)
        """Whether free text refuses anything (``Dialect.refusals``): else no pick is ever refused text."""
        self.commit_bytes = auto.commit_bytes
        self.search = auto.search
        self.search_start = auto.search.start
        self.after_call = auto.after_call
        """The search state after a call closes (mid-line: line openers need a newline first)."""
        self.open = auto.open
        self.think = auto.think
        """The reasoning section's automaton (any text, then its close: an exit), or ``None``."""
        close = dialect.spelled(dialect.reasoning.close) if dialect.reasoning is not None else b""
        self._close_byte = close[-1] if close else -1
        self.think_close_bytes = len(close)
        """The length of the reasoning section's close (spelled): the most bytes it leaves to write."""
        self.after_think = auto.after_think
        """The search state right after a reasoning section."""
        self.open_after_think = auto.open_after_think
        """The ``open`` state right after a reasoning section that a call must follow."""
        self.heads: list[LazyDFA] = []
        for form in range(dialect.forms):
            head_nfa = NFA()
            self.heads.append(LazyDFA(head_nfa, dialect.head_piece(head_nfa, form), window=index.longest).expand_all())
        # per state, what its tokens do (bounded: named openers make a state per name byte)
        self._committers: BoundedCache[int, list[Committer]] = BoundedCache(
            4 << 20, sizer=lambda found: 80 * len(found) + 200)
        self._open_walks: BoundedCache[int, OpenWalk] = BoundedCache(
            4 << 20, sizer=lambda walk: 80 * (len(walk[0]) + len(walk[2])) + 200)
        # per search state (at most one entry each): whether the names decide its text mask
        self._text_names: dict[int, bool] = {}
        self._head_walks: BoundedCache[tuple[int, int], HeadWalk] = BoundedCache(
            1 << 20, sizer=lambda walk: 60 * len(walk[0]) + 90 * sum(map(len, walk[2].values())) + 200)
        self._closers: BoundedCache[int, list[Committer]] = BoundedCache(1 << 20, sizer=lambda found: 80 * len(found) + 200)
        self._think_refuses = dialect.reasoning is not None and bool(dialect.reasoning.refused_inside)
        self._think_refused: BoundedCache[int, list[int]] = BoundedCache(1 << 22, sizer=lambda found: 8 * len(found) + 100)

    def commit_of(self, dfa: LazyDFA, state: int) -> int:
        """The index into ``commits`` of the opener ``state`` (an exit of ``dfa``) completes."""
        return self.automaton.commit_of(dfa, state)

    def committers(self, state: int) -> list[Committer]:
        """Tokens that complete an opener from search state ``state``, and what they have left (kept; read only)."""
        found = self._committers.get(state)
        if found is not None:
            return found
        index = self.index
        out: list[Committer] = []
        if self.commits:  # else every opener is a special token (or there is none)
            rows = np.unique(np.concatenate([index.rows_containing(b) for b in self.commit_bytes]))
            if rows.size:
                walk = walk_rows(index, self.search, rows, np.full(rows.size, state, dtype=np.int32),
                                 np.zeros(rows.size, np.int64))
                out = self._exits(self.search, walk.exit_rows, walk.exit_states, walk.exit_offsets)
        return self._committers.put(state, out)

    def open_committers(self, state: int) -> OpenWalk:
        """From an ``open`` state: see :data:`OpenWalk`, less the committers that leave the form's
        head (:meth:`_fate`). Kept; read only."""
        found = self._open_walks.get(state)
        if found is not None:
            return found
        walk = walk_state(self.index, self.open, state)
        ids = self.index.ids[walk.rows].tolist()
        ends = walk.finals.tolist()
        fates = [(c, self._fate(c)) for c in self._exits(self.open, walk.exit_rows, walk.exit_states, walk.exit_offsets)]
        going_on = [c for c, fate in fates if fate != _LEAVES]
        return self._open_walks.put(state, (ids, ends, going_on, any(fate == _NAME for _, fate in fates)))

    def open_names_matter(self, state: int, *, walk: bool = True) -> bool | None:
        """Whether the tool names decide the ``open`` mask at ``state``; without ``walk`` nothing is
        computed (``None``: the state's tokens are not listed yet)."""
        found = self.open_committers(state) if walk else self._open_walks.get(state)
        return None if found is None else found[3]

    def text_names_matter(self, state: int, *, walk: bool = True) -> bool | None:
        """:meth:`open_names_matter` for the tokens that complete an opener in free text."""
        found = self._text_names.get(state)
        if found is None:
            if not walk and self._committers.get(state) is None:
                return None
            found = self._text_names[state] = any(self._fate(c) == _NAME for c in self.committers(state))
        return found

    def _fate(self, committer: Committer) -> int:
        """Whether ``committer`` leaves the form's head after its opener (refused whatever the tools:
        264 of Qwen's 266 tokens that close Hermes' ``<tool_call``), stays on it, or writes a name."""
        info = self.commits[committer.commit]
        if info.kind is CommitKind.REFUSED:
            return _LEAVES
        if info.kind is CommitKind.REASONING:  # free text until the close; past it, a tool list may decide
            assert self.think is not None
            return _HEAD if not self.think.walk_classes(self.think.start, committer.rest)[2] else _NAME
        if info.tool is not None:  # a named opener: the name is written, and a tool list decides
            return _NAME
        head = self.heads[info.form] if info.head else None
        state = -1 if head is None else head.start
        for byte in committer.rest:
            if head is None or head.arrays.accepting[state]:  # the name starts here
                return _NAME
            state = head.next(state, byte)
            if state == SINK:
                return _LEAVES
        return _HEAD

    def head_walk(self, form: int, state: int) -> HeadWalk:
        """From a state of ``form``'s head: see :data:`HeadWalk` (kept; read only)."""
        key = (form, state)
        found = self._head_walks.get(key)
        if found is not None:
            return found
        index = self.index
        walk = walk_state(index, self.heads[form], state, blank_table(index))
        exits: dict[int, list[tuple[int, bytes]]] = {}
        for r, off in zip(walk.exit_rows.tolist(), walk.exit_offsets.tolist()):
            start = int(index.offsets[r]) + off
            rest = bytes(index.flat[start : int(index.offsets[r]) + int(index.lengths[r])])
            exits.setdefault(rest[0] if rest else -1, []).append((int(index.ids[r]), rest))
        return self._head_walks.put(key, (index.ids[walk.rows].tolist(), walk.finals.tolist(), exits))

    def _exits(self, dfa: LazyDFA, rows: np.ndarray, states: np.ndarray, offsets: np.ndarray,
               commits: bool = True) -> list[Committer]:
        """The tokens at ``dfa``'s exits, with their commit (-1 without ``commits``) and what is left."""
        index = self.index
        out = []
        for r, s, off in zip(rows.tolist(), states.tolist(), offsets.tolist()):
            rest = bytes(index.flat[index.offsets[r] + off : index.offsets[r] + index.lengths[r]])
            out.append(Committer(int(index.ids[r]), self.commit_of(dfa, s) if commits else -1, rest))
        return out

    def walk_text(self, state: int, data: bytes) -> tuple[int, int, int]:
        """Follow free text: ``(state, bytes consumed, commit index or -1)``; stops at a commit."""
        return self._walk(self.search, state, data)

    def walk_think(self, state: int, data: bytes) -> tuple[int, int, bool]:
        """Follow reasoning text up to its close: ``(state, bytes consumed, whether it closed)``."""
        assert self.think is not None
        return self.think.walk_classes(state, data)

    def closers(self, state: int) -> list[Committer]:
        """Tokens that close the reasoning section from ``state``, and what they have left (kept; read only)."""
        found = self._closers.get(state)
        if found is not None:
            return found
        think = self.think
        assert think is not None
        rows = self.index.rows_containing(self._close_byte)  # the close ends in this byte
        if not rows.size:
            return self._closers.put(state, [])
        walk = walk_rows(self.index, think, rows, np.full(rows.size, state, dtype=np.int32), np.zeros(rows.size, np.int64))
        return self._closers.put(state, self._exits(think, walk.exit_rows, walk.exit_states, walk.exit_offsets, False))

    def think_refused(self, state: int) -> list[int]:
        """Tokens that cannot follow ``state`` where the section refuses markers
        (``Reasoning.refused_inside``): those, and inside its close all that does not go on with it."""
        if not self._think_refuses:
            return []
        found = self._think_refused.get(state)
        if found is not None:
            return found
        assert self.think is not None
        walk = walk_state(self.index, self.think, state)  # inside a close only its next bytes are left
        dead = np.setdiff1d(np.arange(self.index.ids.size), np.concatenate([walk.rows, walk.exit_rows]))
        out = self.index.ids[dead].astype(np.int64).tolist()
        if not self.think_is_free(state):  # nor a token without bytes
            out += self.index.special_ids.astype(np.int64).tolist()
        return self._think_refused.put(state, out)

    def think_is_free(self, state: int) -> bool:
        """Whether reasoning text may go on freely from ``state``: all but inside a refusing section's close."""
        if not self._think_refuses:
            return True
        assert self.think is not None
        return self.automaton.think_text in self.think.nfa_states(state)

    def walk_open(self, state: int, data: bytes) -> tuple[int, int, int]:
        """Like :meth:`walk_text` in the anchored ``open`` automaton (``SINK`` if off every opener)."""
        return self._walk(self.open, state, data)

    def _walk(self, dfa: LazyDFA, state: int, data: bytes) -> tuple[int, int, int]:
        """``data`` from ``state`` up to its end, a dead end or a commit: ``(state, used, commit or -1)``."""
        state, used, exited = dfa.walk_classes(state, data)
        if exited:
            return state, used, self.commit_of(dfa, state)
        return state, used, -1
