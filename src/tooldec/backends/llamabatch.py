"""Several sequences in one llama.cpp context, each in a slot of its own, evaluated as one batch.

On a CPU, decoding is bound by reading the weights: a batch of N next tokens (one per slot) costs
little more than one, so N requests stepped together give nearly N times the tokens per second
(``benchmarks/serve_load.py``). llama.cpp's cache is not unified across sequences: the context's
``n_ctx`` is split evenly, each slot holding ``n_ctx / slots`` positions (:attr:`SlotBatch.context`).

A slot keeps the KV cache of its last prompt; a new prompt keeps what it shares of it in whole
:data:`~tooldec.backends.llamacpp.PROMPT_CHUNK` s and evaluates the rest chunk by chunk from
position 0 on that slot alone, as :func:`~tooldec.backends.llamacpp.evaluate_prompt` does, so a
prompt's logits do not depend on what the cache held. A sequence's next-token logits may still
differ in the last bits with the batch it is stepped in (other rows change llama.cpp's matrix
kernels): ``benchmarks/serve_load.py --compare`` counts how often a greedy answer changes.

One thread drives a :class:`SlotBatch` (the server's worker): nothing in it is locked.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from .llamacpp import PROMPT_CHUNK, chunked_prefix, decode_rows

__all__ = ["SlotBatch"]


class SlotBatch:
    """A llama.cpp context of ``slots`` sequences over the weights of a loaded ``llama_cpp.Llama``.

    Args:
        llm: The loaded model (its weights and context settings; its own context is not used).
        slots: Sequences stepped together (slot ``i`` is llama.cpp's sequence id ``i``).
        n_ctx: Positions of the whole context, split evenly between the slots.

    Raises:
        ValueError: Fewer than one slot, or fewer than :data:`PROMPT_CHUNK` positions per slot.
        RuntimeError: llama.cpp could not make the context.
    """

    def __init__(self, llm: Any, slots: int, n_ctx: int) -> None:
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
        self.context = int(llama_cpp.llama_n_ctx_seq(self.ctx))
        """Positions each slot holds: its prompt and every generated token but the last."""
        self.width = int(llm.n_vocab())
        self._batch = llama_cpp.llama_batch_init(int(params.n_batch), 0, 1)
        self._capacity = int(params.n_batch)
        self.held: list[list[int]] = [[] for _ in range(slots)]
        """Per slot, the tokens its cache holds, in order (prompt, then the generated tokens evaluated)."""
        self._chunked = [0] * slots  # leading positions evaluated in whole prompt chunks
        self.prompt_tokens_evaluated = 0
        """Prompt tokens evaluated, all slots (the rest came from their caches)."""

    def shared(self, slot: int, ids: Sequence[int]) -> int:
        """How many of ``ids`` (never the last) the cache of ``slot`` can keep: whole chunks only."""
        return chunked_prefix(self.held[slot][: self._chunked[slot]], ids)

    def start(self, slot: int, ids: Sequence[int]) -> np.ndarray:
        """Make ``ids`` the context of ``slot`` (the cache it shares kept, the rest evaluated in
        chunks from position 0); the logits after it, a view valid until the next evaluation.

        Raises:
            ValueError: ``ids`` empty, or as long as a slot's context.
        """
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        if len(ids) >= self.context:
            raise ValueError(f"the prompt has {len(ids)} tokens but a slot's context holds {self.context}")
        kept = self.shared(slot, ids)
        self._api.llama_memory_seq_rm(self.memory, slot, kept, -1)
        del self.held[slot][kept:]
        self._chunked[slot] = kept  # until the rest is evaluated
        for start in range(kept, len(ids), PROMPT_CHUNK):
            chunk = ids[start:start + PROMPT_CHUNK]
            self._decode([(slot, token) for token in chunk], outputs=False)
        self.prompt_tokens_evaluated += len(ids) - kept
        self._chunked[slot] = len(ids) - len(ids) % PROMPT_CHUNK
        return self._logits(-1)

    def step(self, tokens: Sequence[tuple[int, int]]) -> list[np.ndarray]:
        """Evaluate one more token for each ``(slot, token)``, all in one batch; each one's
        next-token logits, in order (views valid until the next evaluation)."""
        self._decode(tokens, outputs=True)
        return [self._logits(row) for row in range(len(tokens))]

    def _decode(self, tokens: Sequence[tuple[int, int]], *, outputs: bool) -> None:
        """One ``llama_decode`` of ``tokens`` at the next position of their slots; logits for
        every row (``outputs``) or only for the last."""
        ends: dict[int, int] = {}  # a slot's tokens in one batch take its next positions in turn
        rows = []
        for slot, token in tokens:
            position = ends.get(slot, len(self.held[slot]))
            ends[slot] = position + 1
            rows.append((slot, position, token))
        decode_rows(self.ctx, self._batch, self._capacity, rows, outputs=outputs)
        for slot, token in tokens:
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
