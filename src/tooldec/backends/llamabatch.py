"""Several sequences in one llama.cpp context, each in a slot of its own, evaluated as one batch.

Where decoding is bound by reading the weights (a GPU, a CPU with many cores), a batch of N next
tokens (one per slot) costs little more than one, so N requests stepped together give nearly N
times the tokens per second; where it is bound by arithmetic, much less: on 2 cores, 4 rows of
Qwen2.5-Coder-0.5B cost 2.7 times one, 1.5 times the tokens per second
(``benchmarks/batch_decode.py``), and the slots mostly keep one request from waiting for another
(``benchmarks/serve_load.py``). llama.cpp's cache is not unified across sequences: the context's
``n_ctx`` is split evenly, each slot holding ``n_ctx / slots`` positions (:attr:`SlotBatch.context`).

A slot keeps the KV cache of its last prompt; a new prompt keeps what it shares of it in whole
:data:`~tooldec.backends.llamacpp.PROMPT_CHUNK` s and evaluates the rest chunk by chunk, aligned to
position 0 on that slot alone as :func:`~tooldec.backends.llamacpp.evaluate_prompt` does, so what
the cache held does not decide a prompt's logits. With a
:class:`~tooldec.backends.promptcache.PromptCache`, a slot's whole chunks are copied to host memory
before a prompt that does not keep them overwrites them, and a prompt starts from the cache's entry
when it shares more with it than with its slot (copied in, the rest evaluated the same way).
:meth:`SlotBatch.step` evaluates one chunk of a prompt and then the next tokens of every running
slot (the token it took, and a jump-forward draft after it), so running answers keep coming while
a prompt is evaluated; a draft's tokens the model did not confirm leave with :meth:`SlotBatch.forget`.
llama.cpp evaluates a batch in passes (ubatches) of equal runs per sequence, each of consecutive
sequence ids: the rows go in slot order, and a slot with a longer draft than the others takes
passes of its own for the rest of it. A sequence's next-token logits may so differ in the last
bits with the batch it is stepped in (other rows change llama.cpp's matrix kernels):
``benchmarks/serve_load.py`` counts how often a greedy answer changes.

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
    """A llama.cpp context of ``slots`` sequences over the weights of a loaded ``llama_cpp.Llama``.

    Args:
        llm: The loaded model (its weights and context settings; its own context is not used).
        slots: Sequences stepped together (slot ``i`` is llama.cpp's sequence id ``i``).
        n_ctx: Positions of the whole context, split evenly between the slots.
        cache: Where slots' prompts are kept once overwritten, for any slot to start from (default: none).

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
        self.context = int(llama_cpp.llama_n_ctx_seq(self.ctx))
        """Positions each slot holds: its prompt and every generated token but the last."""
        self.width = int(llm.n_vocab())
        self._batch = llama_cpp.llama_batch_init(int(params.n_batch), 0, 1)
        self.capacity = int(params.n_batch)
        """The most tokens one :meth:`step` evaluates, all slots together."""
        self.held: list[list[int]] = [[] for _ in range(slots)]
        """Per slot, the tokens its cache holds, in order (prompt, then the generated tokens evaluated)."""
        self._chunked = [0] * slots  # leading positions evaluated in whole prompt chunks
        self._prompts: dict[int, list[int]] = {}  # per slot, its prompt's tokens not yet evaluated
        self.prompt_tokens_evaluated = 0
        """Prompt tokens evaluated, all slots (the rest came from their caches)."""
        self.decodes = 0
        """``llama_decode`` calls: prompt chunks and steps."""

    def shared(self, slot: int, ids: Sequence[int]) -> int:
        """How many of ``ids`` (never the last) the cache of ``slot`` can keep: whole chunks only."""
        return chunked_prefix(self.held[slot][: self._chunked[slot]], ids)

    def begin(self, slot: int, ids: Sequence[int]) -> None:
        """Make ``ids`` the prompt of ``slot``: the cache it shares kept (or the prompt cache's
        entry that shares more, copied in), the rest evaluated by the next :meth:`step` s, a chunk each.

        Raises:
            ValueError: ``ids`` empty, or as long as a slot's context.
        """
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
        """The next chunk of ``prompt``'s slot (:meth:`begin`), if given, then every ``(slot,
        token)`` in one batch, each after its slot's tokens (a slot may come several times: its
        tokens follow each other in the order given).

        Returns:
            Each token's next-token logits, in order (views valid until the next evaluation); and
            the logits after the prompt once this chunk ended it (a copy), else ``None``.
        """
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
        """Take the last ``count`` tokens of ``slot`` out of its cache (a draft's tokens the model
        did not confirm), as if never evaluated."""
        if count > 0:
            kept = len(self.held[slot]) - count
            self._api.llama_memory_seq_rm(self.memory, slot, kept, -1)
            del self.held[slot][kept:]

    def _prompt_chunk(self, slot: int) -> np.ndarray | None:
        """Evaluate the next chunk of ``slot``'s prompt in a batch of its own, as a fresh context
        would; the logits after the prompt once it ends. (llama.cpp splits a batch of several
        sequences in a cache that is not unified into equal runs per sequence, so a chunk in the
        running tokens' batch would share no pass with them, and greedy answers moved with it.)"""
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
