"""A bounded host-memory cache of evaluated prompts' KV states, so that a prompt can start from
the longest one it shares, whichever sequence of the context evaluated it (why: docs/serving.md).

An entry is what a sequence held in whole :data:`~tooldec.backends.llamacpp.PROMPT_CHUNK` s from
position 0 (``llama_state_seq_get_data``), copied just before it takes a prompt that does not keep
it all. Generated tokens were not evaluated in chunks, so they are never stored: a restored prompt
gets the logits of a fresh evaluation, to the bit.

Only the thread that drives the context changes its cache (the server's worker): nothing in it is
locked. Other threads may read its counters (``/metrics`` does): integers, each read whole. An
entry belongs to the context it was copied from (its layout of sequences).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .llamacpp import chunked_prefix

__all__ = ["PromptCache"]


@dataclass(frozen=True)
class Entry:
    """A sequence's state holding ``tokens`` at positions 0 on (a whole number of chunks)."""

    tokens: np.ndarray
    state: np.ndarray

    def shared(self, ids: Sequence[int] | np.ndarray) -> int:
        """How many of ``ids`` (never the last) this entry can give: whole chunks only."""
        return chunked_prefix(self.tokens, ids)

    def starts(self, tokens: Sequence[int] | np.ndarray) -> bool:
        """Whether this entry's tokens begin with ``tokens`` (it gives every prompt at least as much)."""
        return len(tokens) <= len(self.tokens) and bool(np.array_equal(self.tokens[: len(tokens)], tokens))


class PromptCache:
    """Sequences' evaluated prompt prefixes, up to ``budget`` bytes of state, the least recently
    used evicted first. Counts ``hits`` (prompts that started from an entry), ``tokens_restored``
    (the prompt tokens they gave), ``saved`` and ``evicted`` (entries stored, dropped for room)."""

    def __init__(self, budget: int) -> None:
        if budget < 0:
            raise ValueError(f"the budget must be 0 or more bytes, got {budget}")
        import llama_cpp

        self._api = llama_cpp
        self.budget = budget
        self._entries: OrderedDict[int, Entry] = OrderedDict()  # least recently used first
        self._next = 0
        self.bytes = 0
        """Bytes of state held now."""
        self.hits = self.tokens_restored = self.saved = self.evicted = 0

    def __len__(self) -> int:
        return len(self._entries)

    def best(self, ids: Sequence[int]) -> tuple[int | None, int]:
        """The entry sharing the most whole chunks with ``ids`` (``None`` if none shares one), and how many tokens."""
        best: tuple[int | None, int] = (None, 0)
        tokens = np.asarray(ids, dtype=np.int64)  # once, not per entry
        for key, entry in self._entries.items():
            length = entry.shared(tokens)
            if length > best[1]:
                best = (key, length)
        return best

    def resume(self, ctx: Any, seq: int, held: Sequence[int] | np.ndarray, ids: Sequence[int]) -> list[int] | None:
        """Before sequence ``seq`` of ``ctx`` takes ``ids``: store what it ``held`` (whole chunks from
        position 0) unless ``ids`` keeps it all, then restore the entry sharing the most of ``ids``
        if that beats what it keeps. The tokens ``seq`` then holds (``[]``: llama.cpp refused the
        state, the sequence is empty), or ``None`` when it keeps what it ``held``."""
        own = chunked_prefix(held, ids)
        key, length = self.best(ids)
        if key is None or length <= own:
            key = None
        else:
            self._entries.move_to_end(key)
        if own < len(held):  # the rest of what it holds is about to go
            self.save(ctx, seq, held, keep=key)
        if key is None:
            return None
        tokens = self.restore(ctx, seq, key)
        if tokens:
            self.hits += 1
            self.tokens_restored += length
        return tokens

    def save(self, ctx: Any, seq: int, held: Sequence[int] | np.ndarray, *, keep: int | None = None) -> bool:
        """Store sequence ``seq``'s state for ``held``, the tokens at its first positions (what it
        holds past them is dropped first); whether an entry was stored. An entry already starting
        with ``held`` stays instead (used now); entries ``held`` starts with are dropped (it
        gives every prompt as much as they do). Entry ``keep`` (about to be restored) is never
        dropped for room: without room beside it, ``held`` is not stored."""
        api = self._api
        if len(held) == 0:
            return False
        tokens = np.array(held, dtype=np.int64)  # a copy: the caller's record is overwritten next
        for key, entry in self._entries.items():
            if entry.starts(tokens):
                self._entries.move_to_end(key)
                return False
        api.llama_memory_seq_rm(api.llama_get_memory(ctx), seq, len(tokens), -1)
        size = int(api.llama_state_seq_get_size(ctx, seq))
        kept = 0 if keep is None else self._entries[keep].state.size
        if size > self.budget - kept:
            return False
        for key, entry in list(self._entries.items()):
            if key != keep and len(entry.tokens) < len(tokens) and np.array_equal(tokens[: len(entry.tokens)],
                                                                                  entry.tokens):
                self._drop(key)
        while self.bytes + size > self.budget:
            self._drop(next(key for key in self._entries if key != keep))
            self.evicted += 1
        state = np.empty(size, dtype=np.uint8)
        if api.llama_state_seq_get_data(ctx, state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), size, seq) != size:
            return False
        self._entries[self._next] = Entry(tokens, state)
        self._next += 1
        self.bytes += size
        self.saved += 1
        return True

    def restore(self, ctx: Any, seq: int, key: int) -> list[int]:
        """Put entry ``key``'s state in sequence ``seq`` (what it held is dropped); its tokens, or
        ``[]`` if llama.cpp refused it (the entry is dropped, the sequence left empty)."""
        api = self._api
        entry = self._entries[key]
        pointer = entry.state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        if api.llama_state_seq_set_data(ctx, pointer, entry.state.size, seq) != entry.state.size:
            api.llama_memory_seq_rm(api.llama_get_memory(ctx), seq, -1, -1)
            self._drop(key)
            return []
        self._entries.move_to_end(key)
        return [int(token) for token in entry.tokens.tolist()]

    def _drop(self, key: int) -> None:
        self.bytes -= self._entries.pop(key).state.size
