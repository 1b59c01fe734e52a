"""llama.cpp backend (llama-cpp-python): the model evaluates a GGUF file as quantised (several
times faster on a CPU than transformers), tooldec's loop picks each token. The KV cache is kept
between calls, from the last whole :data:`PROMPT_CHUNK` a prompt shares with it; tokenizer and chat
template come from transformers, so both backends see the same ids and prompts."""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ToolDecError
from ..tokens import Vocabulary
from ..tokens.hf import from_hf_tokenizer
from .generation import JUMP_LIMIT, Generation, Request, TokenGenerator
from .step import FEW, core_beside, pick_token

if TYPE_CHECKING:
    from .promptcache import PromptCache

__all__ = ["FEW", "PROMPT_CHUNK", "LlamaCppGenerator", "chunked_prefix", "decode_rows", "evaluate_prompt", "keep_prefix",
           "is_llama", "load_llama", "pick_token"]

DEFAULT_CONTEXT = 8192
"""Context window of a loaded model: the longest prompt of the paper's tables (KAMEL with 234
tool docs, about 4,400 tokens) plus the answer."""


PROMPT_CHUNK = 64
"""Prompts are evaluated in batches of this many tokens from position 0, and a cached prefix is
kept only to a multiple of it: llama.cpp's logits depend on the batch a token was evaluated in
(SmolLM2 answered 14 of 20 repeated BFCL questions otherwise), so identical greedy requests give
identical answers whatever the cache held. It costs up to 63 tokens evaluated again and 4-10%
slower prompts on a CPU (``benchmarks/repeatable.py``)."""

_chunked: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
"""Per llama.cpp context, how many leading cached positions :func:`evaluate_prompt` evaluated in
whole chunks (a context is driven by one thread at a time: the server's worker, a run's loop)."""


def is_llama(model: Any) -> bool:
    """Whether ``model`` is a ``llama_cpp.Llama`` (without importing llama_cpp when it is not)."""
    return type(model).__module__.startswith("llama_cpp")


class LlamaCppGenerator(TokenGenerator):
    """``generate`` with a ``llama_cpp.Llama`` (:func:`load_llama`), with or without tooldec's constraint.

    Args:
        vocab: The tokenizer's vocabulary padded to ``llm.n_vocab()`` (default: built here).
        mask_worker, check_first: The :class:`~tooldec.backends.step.Stepper`'s; the worker by
            default only where a core is free beside llama.cpp's threads.
        jump_forward: Evaluate the tokens the grammar forces in one batch, each confirmed by the
            model's pick (:mod:`.jump`; ``benchmarks/jump_forward.py``); a batch's logits differ
            from one pass's in the last bits, so a near tie can go the other way.
        prompt_cache: Keeps the context's prompt when another overwrites it, for later prompts
            that share more with it (``tooldec serve`` gives one).
    """

    def __init__(self, llm: Any, tokenizer: Any, vocab: Vocabulary | None = None, *,
                 mask_worker: bool | None = None, check_first: bool = True, jump_forward: bool = True,
                 prompt_cache: PromptCache | None = None) -> None:
        import llama_cpp

        self.model = llm
        self.tokenizer = tokenizer
        self.width = int(llm.n_vocab())
        self._logits_of = llama_cpp.llama_get_logits_ith
        self.vocab = vocab if vocab is not None else vocabulary_for_llama(llm, tokenizer)
        if self.width < self.vocab.size:
            raise ValueError(f"the model has {self.width} logits but the vocabulary {self.vocab.size} tokens")
        eos = set(self.vocab.eos_ids)
        if llm.token_eos() >= 0:
            eos.add(int(llm.token_eos()))
        self.eos_ids = sorted(eos)
        self.rng = np.random.default_rng()
        self.mask_worker = core_beside(int(getattr(llm, "n_threads", 1) or 1)) if mask_worker is None else mask_worker
        self.check_first = check_first
        self.jump_forward = jump_forward
        self.prompt_cache = prompt_cache
        self._api = llama_cpp
        self._draft_batch = llama_cpp.llama_batch_init(JUMP_LIMIT, 0, 1)
        weakref.finalize(self, llama_cpp.llama_batch_free, self._draft_batch)
        self.prompt_tokens_evaluated = 0  # all calls; the rest came from the KV cache
        self.decodes = 0  # llama_decode calls: prompt chunks, tokens and drafts

    def start(self, prompt_ids: Sequence[int]) -> np.ndarray:
        """Evaluate what the KV cache does not hold of ``prompt_ids``; the logits after it: a view
        into llama.cpp's buffer, valid until the next eval."""
        same = keep_prefix(self.model, prompt_ids, self.prompt_cache)
        self.prompt_tokens_evaluated += len(prompt_ids) - same
        self.decodes += -(-(len(prompt_ids) - same) // PROMPT_CHUNK)
        evaluate_prompt(self.model, prompt_ids, same)
        return self._logits()

    def push(self, token: int) -> np.ndarray:
        self.model.eval([token])
        self.decodes += 1
        return self._logits()

    def push_all(self, tokens: Sequence[int]) -> list[np.ndarray]:
        """One ``llama_decode`` of ``tokens`` with the logits of every row (``Llama.eval`` keeps
        only the last's); llama-cpp-python's record of the context follows, as ``eval`` keeps it."""
        llm, api = self.model, self._api
        past = int(llm.n_tokens)
        api.llama_memory_seq_rm(api.llama_get_memory(llm.ctx), -1, past, -1)  # what a dropped draft left
        decode_rows(llm.ctx, self._draft_batch, JUMP_LIMIT, [(0, past + row, token) for row, token in enumerate(tokens)],
                    outputs=True)
        self.decodes += 1
        llm.input_ids[past:past + len(tokens)] = tokens
        llm.n_tokens = past + len(tokens)
        return [np.ctypeslib.as_array(self._logits_of(llm.ctx, row), shape=(self.width,)) for row in range(len(tokens))]

    def drop(self, count: int) -> None:
        """Forget the last ``count`` tokens: the next evaluation writes over them."""
        self.model.n_tokens -= count

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        """The budget cut to the context window left after the prompt (a call closes inside it)."""
        held = min(int(self.model.n_ctx()), len(self.model.input_ids))  # n_ctx() is padded past what input_ids holds
        room = min(request.max_new_tokens, held - len(prompt_ids))
        return super().run(prompt_ids, replace(request, max_new_tokens=room))

    def _logits(self) -> np.ndarray:
        return np.ctypeslib.as_array(self._logits_of(self.model.ctx, -1), shape=(self.width,))


def decode_rows(ctx: Any, batch: Any, capacity: int, rows: Sequence[tuple[int, int, int]], *, outputs: bool) -> None:
    """One ``llama_decode`` on ``ctx`` of ``rows`` (sequence id, position, token) through ``batch``
    (a ``llama_batch`` of ``capacity`` tokens); logits for every row (``outputs``) or the last only.
    ``ValueError`` for no rows or over ``capacity``, ``RuntimeError`` when llama.cpp refuses them."""
    import llama_cpp

    if not 0 < len(rows) <= capacity:
        raise ValueError(f"a batch takes 1 to {capacity} tokens, got {len(rows)}")
    for row, (sequence, position, token) in enumerate(rows):
        batch.token[row] = token
        batch.pos[row] = position
        batch.n_seq_id[row] = 1
        batch.seq_id[row][0] = sequence
        batch.logits[row] = outputs or row == len(rows) - 1
    batch.n_tokens = len(rows)
    status = llama_cpp.llama_decode(ctx, batch)
    if status != 0:
        raise RuntimeError(f"llama_decode failed with status {status} (a batch of {len(rows)} tokens)")


def keep_prefix(llm: Any, ids: Sequence[int], cache: PromptCache | None = None) -> int:
    """Keep what the KV cache of ``llm`` holds of ``ids`` in whole :data:`PROMPT_CHUNK` s (never the
    last id, evaluated again for fresh logits), drop the rest; how many are kept. A ``cache`` first
    stores what is dropped and gives its entry if that shares more. Refuses ``ids`` empty or too long."""
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    if len(ids) >= llm.n_ctx():
        raise ToolDecError(f"the prompt has {len(ids)} tokens but the model's context holds {llm.n_ctx()}; "
                           "load it with a larger n_ctx")
    held = llm.input_ids[: min(llm.n_tokens, _chunked.get(llm, 0))]
    if cache is not None:
        restored = cache.resume(llm.ctx, 0, held, ids)
        if restored is not None:
            llm.input_ids[: len(restored)] = restored
            llm.n_tokens = _chunked[llm] = len(restored)
            held = llm.input_ids[: len(restored)]
    same = chunked_prefix(held, ids)
    llm.n_tokens = same  # eval drops the cache past n_tokens
    return same


def chunked_prefix(held: Sequence[int] | np.ndarray, ids: Sequence[int] | np.ndarray) -> int:
    """How many of ``ids`` (never the last) a cache holding ``held``, evaluated in whole chunks,
    can keep: their common prefix, cut to a multiple of :data:`PROMPT_CHUNK`."""
    limit = min(len(held), len(ids) - 1)
    same = 0
    if limit > 0:
        diff = np.flatnonzero(np.asarray(held[:limit], dtype=np.int64) != np.asarray(ids[:limit], dtype=np.int64))
        same = int(diff[0]) if diff.size else limit
    return same - same % PROMPT_CHUNK


def evaluate_prompt(llm: Any, ids: Sequence[int], kept: int) -> None:
    """Evaluate ``ids`` after the ``kept`` that :func:`keep_prefix` kept, one
    :data:`PROMPT_CHUNK` per batch, aligned to position 0 as a fresh context would be."""
    for start in range(kept, len(ids), PROMPT_CHUNK):
        llm.eval(list(ids[start:start + PROMPT_CHUNK]))
    _chunked[llm] = len(ids) - len(ids) % PROMPT_CHUNK


def vocabulary_for_llama(llm: Any, tokenizer: Any) -> Vocabulary:
    """The tokenizer's vocabulary padded to the model's logits width."""
    return from_hf_tokenizer(tokenizer, vocab_size=int(llm.n_vocab()))


def load_llama(path: str | Path, *, n_ctx: int = DEFAULT_CONTEXT, threads: int | None = None,
               progress: Callable[[str], None] | None = None) -> tuple[Any, Any]:
    """A GGUF file loaded with llama.cpp (``threads``: default ``TOOLDEC_THREADS`` or every core)
    and its tokenizer with transformers; ``progress`` is told what loads and how long it took.
    ``FileNotFoundError`` without a ``.gguf`` file, ``ImportError`` without llama-cpp-python."""
    say = progress or (lambda message: None)
    path = Path(path)
    if not path.is_file() or path.suffix != ".gguf":
        raise FileNotFoundError(f"no GGUF file at {path}: llama.cpp runs .gguf files only")
    try:
        from llama_cpp import Llama
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError("the llama.cpp backend needs llama-cpp-python: pip install 'tooldec[llama]'") from error
    from transformers import AutoTokenizer

    threads = threads or int(os.environ.get("TOOLDEC_THREADS", "0")) or os.cpu_count() or 1
    start = time.perf_counter()
    say(f"loading tokenizer from {path} ...")
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    say(f"loading {path.name} with llama.cpp ({threads} threads, context {n_ctx}) ...")
    llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
    say(f"model loaded in {time.perf_counter() - start:.1f} s")
    return llm, tokenizer
