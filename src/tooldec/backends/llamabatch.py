"""Several sequences in one llama.cpp context, each in a slot of its own, evaluated as one batch
(``tooldec serve --parallel N``: docs/serving.md). N rows cost little more than one where decoding
reads the weights; on 2 cores, bound by arithmetic, 4 rows of Qwen2.5-Coder-0.5B cost 2.7 times
one (``benchmarks/batch_decode.py``). The cache is not unified: each slot holds ``n_ctx / slots``.

A new prompt keeps what its slot shares of it in whole
:data:`~tooldec.backends.llamacpp.PROMPT_CHUNK` s and evaluates the rest chunk by chunk, aligned to
position 0 on that slot alone, as :func:`~tooldec.backends.llamacpp.evaluate_prompt` does, so what
the cache held does not decide a prompt's logits. llama.cpp evaluates a batch in passes of equal
runs per sequence, each of consecutive sequence ids: rows go in slot order, and a slot's longer
draft takes passes of its own. A row's logits may so differ in the last bits with its batch
(``benchmarks/serve_load.py`` counts how often a greedy answer changes).

One thread drives a :class:`SlotBatch` (the server's worker): nothing in it is locked.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from .llamacpp import PROMPT_CHUNK, chunked_prefix, decode_rows
from .promptcache import PromptCache

__all__ = ["SlotBatch"]


class SlotBatch:
    """A llama.cpp context of ``slots`` sequences (slot ``i`` is sequence id ``i``), ``n_ctx``
    positions split evenly, over the weights of ``llm``; ``cache`` keeps overwritten prompts.

    Raises:
        ValueError: Fewer than one slot, or fewer than :data:`PROMPT_CHUNK` positions per slot.
        RuntimeError: llama.cpp could not make the context.
    """

    def __init__(self, llm: Any, slots: int, n_ctx: int, cache: PromptCache | None = None) -> None:
        import llama_cpp

        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        if n_ctx // slots < PROMPT_CHUNK:
            raise ValueError(f"a context of {n_ctx} positions leaves {n_ctx // slots} per slot for {slots} slots; "
                             f"give at least {PROMPT_CHUNK * slots}")
        self._api = llama_cpp
        params = type(llm.context_params).from_buffer_copy(llm.context_params)
        params.n_ctx = n_ctx
        params.n_seq_max = slots
        params.kv_unified = False
        params.n_batch = params.n_ubatch = max(PROMPT_CHUNK, slots, int(params.n_ubatch))
        self.ctx = llama_cpp.llama_init_from_model(llm.model, params)
        if not self.ctx:
            raise RuntimeError(f"llama.cpp could not make a context of {n_ctx} positions for {slots} slots")
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.slots = slots
        self.cache = cache
        self.context = int(llama_cpp.llama_n_ctx_seq(self.ctx))  # positions per slot
        self.width = int(llm.n_vocab())
        self._batch = llama_cpp.llama_batch_init(int(params.n_batch), 0, 1)
        self.capacity = int(params.n_batch)  # the most tokens one step evaluates, all slots together
        self.held: list[list[int]] = [[] for _ in range(slots)]  # per slot, the tokens its cache holds
        self._chunked = [0] * slots  # leading positions evaluated in whole prompt chunks
        self._prompts: dict[int, list[int]] = {}  # per slot, its prompt's tokens not yet evaluated
        self.prompt_tokens_evaluated = 0  # all slots; the rest came from their caches
        self.decodes = 0  # llama_decode calls: prompt chunks and steps

    def shared(self, slot: int, ids: Sequence[int]) -> int:
        """How many of ``ids`` (never the last) the cache of ``slot`` can keep: whole chunks only."""
        return chunked_prefix(self.held[slot][: self._chunked[slot]], ids)

    def begin(self, slot: int, ids: Sequence[int]) -> None:
        """Make ``ids`` the prompt of ``slot``: what its cache (or a prompt cache entry sharing more)
        holds kept, the rest evaluated by the next :meth:`step` s (``ValueError``: empty or too long)."""
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        if len(ids) >= self.context:
            raise ValueError(f"the prompt has {len(ids)} tokens but a slot's context holds {self.context}")
        if self.cache is not None:
            restored = self.cache.resume(self.ctx, slot, self.held[slot][: self._chunked[slot]], ids)
            if restored is not None:
                self.held[slot] = restored
                self._chunked[slot] = len(restored)
        kept = self.shared(slot, ids)
        self._api.llama_memory_seq_rm(self.memory, slot, kept, -1)
        del self.held[slot][kept:]
        self._chunked[slot] = kept  # until the rest is evaluated
        self._prompts[slot] = list(ids[kept:])
        self.prompt_tokens_evaluated += len(ids) - kept

    def step(self, tokens: Sequence[tuple[int, int]], prompt: int | None = None) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Evaluate the next chunk of ``prompt``'s slot, if given, then every ``(slot, token)`` in one
        batch, each after its slot's earlier ones. Each token's logits (views valid until the next
        evaluation), and the logits after the prompt if this chunk ended it (a copy), else ``None``."""
        first = None if prompt is None else self._prompt_chunk(prompt)
        if not tokens:
            return [], first
        order = sorted(range(len(tokens)), key=lambda index: tokens[index][0])  # consecutive slots share passes
        rows: list[tuple[int, int, int]] = []
        for index in order:
            slot, token = tokens[index]
            rows.append((slot, rows[-1][1] + 1 if rows and rows[-1][0] == slot else len(self.held[slot]), token))
        self._decode(rows, outputs=True)
        return [self._logits(int(row)) for row in np.argsort(order)], first  # each token's row in the batch

    def forget(self, slot: int, count: int) -> None:
        """Take the last ``count`` tokens of ``slot`` out of its cache (a draft's unconfirmed tokens)."""
        if count > 0:
            kept = len(self.held[slot]) - count
            self._api.llama_memory_seq_rm(self.memory, slot, kept, -1)
            del self.held[slot][kept:]

    def _prompt_chunk(self, slot: int) -> np.ndarray | None:
        """Evaluate the next chunk of ``slot``'s prompt in a batch of its own, as a fresh context
        would (in the running tokens' batch it would share no pass with them, and greedy answers
        moved with it); the logits after the prompt once it ends."""
        rest, position = self._prompts[slot], len(self.held[slot])
        chunk = rest[: PROMPT_CHUNK - position % PROMPT_CHUNK]
        self._decode([(slot, position + k, token) for k, token in enumerate(chunk)], outputs=False)
        del rest[: len(chunk)]
        if rest:
            return None
        del self._prompts[slot]
        length = len(self.held[slot])  # the slot holds its prompt alone
        self._chunked[slot] = length - length % PROMPT_CHUNK
        return self._logits(len(chunk) - 1).copy()

    def drop(self, slot: int) -> None:
        """Forget the rest of ``slot``'s prompt (its request ended before it was evaluated)."""
        self._prompts.pop(slot, None)

    def _decode(self, rows: Sequence[tuple[int, int, int]], *, outputs: bool) -> None:
        """One ``llama_decode`` of ``rows`` (slot, position, token); each slot then holds its tokens."""
        decode_rows(self.ctx, self._batch, self.capacity, rows, outputs=outputs)
        self.decodes += 1
        for slot, _, token in rows:
            self.held[slot].append(token)

    def _logits(self, row: int) -> np.ndarray:
        pointer = self._api.llama_get_logits_ith(self.ctx, row)
        return np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(self.width,))

    def close(self) -> None:
        """Free the context and the batch (the model's weights stay with ``llm``)."""
        if self.ctx:
            self._api.llama_batch_free(self._batch)
            self._api.llama_free(self.ctx)
            self.ctx = None
