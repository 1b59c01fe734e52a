"""llama.cpp backend (llama-cpp-python): generation token by token with tooldec's mask.

llama.cpp runs a GGUF file as it is quantised, several times faster on a CPU than transformers,
which dequantises it to float32. The loop is ours, not llama.cpp's sampler: after each
``eval`` the last logits are read, the ``Machine`` masks them, the next token is taken (greedy
or sampled with NumPy) and fed back. The KV cache is kept between calls: a prompt that begins
with what is already evaluated (the next round of a tool loop, the shared few-shot prompt of a
benchmark) only evaluates its new tokens.

The tokenizer and chat template come from transformers (``AutoTokenizer`` reads them from the
GGUF file), so both backends see the same token ids and the same prompts.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..decoding import Grammar, Machine, ToolChoice
from ..decoding.machine import Lists
from ..dialects.base import Dialect
from ..errors import ToolDecError
from ..tokens import Vocabulary
from ..tokens.hf import from_hf_tokenizer
from .generation import Generation

__all__ = ["LlamaCppGenerator", "is_llama", "load_llama", "pick_token"]

DEFAULT_CONTEXT = 8192
"""Context window of a loaded model: the longest prompt of the paper's tables (KAMEL with 234
tool docs, about 4,400 tokens) plus the answer."""


FEW = 16
"""Allowed lists this short are picked from in Python (most masks inside a call): with the CPU
caches cold after a forward pass, a pick then costs about a third less than NumPy's gather and argmax
(``python benchmarks/cold_replay.py --sweep-mb 64 --phases``)."""


def is_llama(model: Any) -> bool:
    """Whether ``model`` is a ``llama_cpp.Llama`` (without importing llama_cpp when it is not)."""
    return type(model).__module__.startswith("llama_cpp")


def pick_token(logits: np.ndarray, allowed: np.ndarray | None, temperature: float,
               rng: np.random.Generator, refused: np.ndarray | None = None) -> int:
    """The next token: the most probable allowed one, or a sample at ``temperature``.

    Args:
        logits: One row of next-token logits (float32).
        allowed: Sorted ids of the allowed tokens, ``None`` when every token is allowed.
        temperature: 0 for greedy.
        rng: Source of the sample.
        refused: With ``allowed`` ``None``, sorted ids that are not allowed (``Mask.pick_lists``:
            the shorter list of the two).

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> logits = np.array([3.0, 1.0, 2.0], dtype=np.float32)
        >>> pick_token(logits, None, 0.0, rng), pick_token(logits, np.array([1, 2]), 0.0, rng)
        (0, 2)
        >>> pick_token(logits, np.array([1]), 1.0, rng), pick_token(logits, None, 0.0, rng, refused=np.array([0]))
        (1, 2)
        >>> pick_token(logits, None, 0.0, rng, refused=np.array([1]))
        0
    """
    if refused is not None and allowed is None:
        if temperature <= 0:  # the best token is rarely refused: check it before copying the row
            best = int(np.argmax(logits))
            at = int(np.searchsorted(refused, best))
            if at == refused.size or int(refused[at]) != best:
                return best
        logits = logits.copy()
        logits[refused] = -np.inf
    if allowed is not None:  # only the allowed logits are read: a few in a call, the vocabulary in text
        if temperature <= 0 and allowed.size <= FEW:  # the first of the best, as argmax takes it
            return max(allowed.tolist(), key=logits.item)  # type: ignore[no-any-return]
        chosen = logits[allowed]
        if temperature <= 0:
            return int(allowed[int(np.argmax(chosen))])
        return int(allowed[_sample(chosen, temperature, rng)])
    if temperature <= 0:
        return int(np.argmax(logits))
    return _sample(logits, temperature, rng)


def _sample(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    weights = np.exp(((logits - logits.max()) / temperature).astype(np.float64))
    return int(rng.choice(weights.size, p=weights / weights.sum()))


class LlamaCppGenerator:
    """``generate`` on token ids with a ``llama_cpp.Llama``, with or without tooldec's constraint.

    The same interface as :class:`~tooldec.backends.hf.HFGenerator`, so the runtime and the
    benchmarks run on either.

    Args:
        llm: A ``llama_cpp.Llama`` (see :func:`load_llama`).
        tokenizer: The model's transformers tokenizer (for the vocabulary and eos ids).
        vocab: Its vocabulary padded to ``llm.n_vocab()`` (default: built from ``tokenizer``).
        mask_worker: Compute a mask that is not cached on a worker thread while llama.cpp
            evaluates the token (``True``), or after the evaluation on the loop's own thread
            (``False``). Default: the worker only where the process has a core beside
            llama.cpp's threads. Without one, the worker's time comes out of those threads (about
            the same cost either way: ``benchmarks/end_to_end.py --mask-worker on|off``), so the mask is
            made after the evaluation: no hand-off, nothing running beside it.
        check_first: Where masks are made after the evaluation (no worker), take the model's own
            pick if the grammar allows it under the budget (:meth:`Machine.advance_within`), and
            make or look up the mask only when it does not. Exact: greedily, the best token
            overall is the best allowed one when it is allowed; sampled, a pick from the whole
            distribution kept when allowed, else a pick from the allowed part, is distributed as
            a pick from the allowed part (llama.cpp's own sampler checks its pick against a
            grammar first too). Default on.
    """

    def __init__(self, llm: Any, tokenizer: Any, vocab: Vocabulary | None = None, *,
                 mask_worker: bool | None = None, check_first: bool = True) -> None:
        import llama_cpp

        self.model = llm
        self.tokenizer = tokenizer
        self.width = int(llm.n_vocab())
        """Logits per step (the model's vocabulary, often wider than the tokenizer)."""
        self._logits_of = llama_cpp.llama_get_logits_ith
        self.vocab = vocab if vocab is not None else vocabulary_for_llama(llm, tokenizer)
        if self.width < self.vocab.size:
            raise ValueError(f"the model has {self.width} logits but the vocabulary {self.vocab.size} tokens")
        eos = set(self.vocab.eos_ids)
        if llm.token_eos() >= 0:
            eos.add(int(llm.token_eos()))
        self.eos_ids = sorted(eos)
        self._rng = np.random.default_rng()
        self._pool: ThreadPoolExecutor | None = None
        self.mask_worker = _core_beside(int(getattr(llm, "n_threads", 1) or 1)) if mask_worker is None else mask_worker
        """Whether masks that are not cached are computed on the worker thread (see the class)."""
        self.check_first = check_first
        """Whether the model's own pick is tried before a mask is made after the evaluation."""
        self.prompt_tokens_evaluated = 0
        """Prompt tokens actually evaluated, all calls (the rest came from the KV cache)."""

    def seed(self, seed: int) -> None:
        """Seed the sampler."""
        self._rng = np.random.default_rng(seed)

    def _feed(self, ids: Sequence[int]) -> None:
        """Make the context hold exactly ``ids``, evaluating only what the cache does not hold."""
        llm = self.model
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        if len(ids) >= llm.n_ctx():
            raise ToolDecError(f"the prompt has {len(ids)} tokens but the model's context holds {llm.n_ctx()}; "
                               "load it with a larger n_ctx")
        held = llm.input_ids[: llm.n_tokens]
        same = 0
        limit = min(len(held), len(ids) - 1)  # evaluate at least one token, for fresh logits
        if limit > 0:
            diff = np.flatnonzero(held[:limit] != np.asarray(ids[:limit], dtype=held.dtype))
            same = int(diff[0]) if diff.size else limit
        llm.n_tokens = same  # eval drops the cache past n_tokens
        self.prompt_tokens_evaluated += len(ids) - same
        llm.eval(list(ids[same:]))

    def _logits(self) -> np.ndarray:
        """The last evaluated token's logits: a view into llama.cpp's buffer, valid until the next eval."""
        return np.ctypeslib.as_array(self._logits_of(self.model.ctx, -1), shape=(self.width,))

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        """The next-token logits after ``ids`` (a copy), for backtracking baselines."""
        self._feed(ids)
        return self._logits().copy()

    def generate(
        self,
        prompt_ids: Sequence[int],
        *,
        max_new_tokens: int,
        temperature: float = 0.0,
        grammar: Grammar | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_calls: int | None = None,
        stop_after_call: Dialect | None = None,
        prefix: str = "",
    ) -> Generation:
        """Generate up to ``max_new_tokens`` tokens after ``prompt_ids``; see ``HFGenerator.generate``.

        The budget shrinks to what the context window has left after the prompt, so a call
        still closes inside the window.
        """
        max_new_tokens = min(max_new_tokens, self.model.n_ctx() - len(prompt_ids))
        machine = None
        pending: Future[Lists] | _Ready | _Later | None = None
        overlapped = [0.0]  # written by the worker, read after a result(): no race

        def make(budget: int) -> Lists:
            assert machine is not None
            return machine.lists(budget, self.width)

        def timed(budget: int) -> Lists:
            start = time.perf_counter()
            try:
                return make(budget)
            finally:
                overlapped[0] += time.perf_counter() - start

        def next_mask(budget: int) -> Future[Lists] | _Ready | _Later:
            """The next mask: at once when it is cached (a lookup on this thread: handing it to the
            worker cost more than the lookup), else from the worker while llama.cpp evaluates the
            token, or after the evaluation where no core is free for a worker."""
            assert machine is not None
            known = machine.known_lists(budget, self.width)
            if known is not None:
                return _Ready(known)
            return self._masker().submit(timed, budget) if self.mask_worker else _Later(functools.partial(make, budget))

        # the model's pick tried first, a mask made (or looked up) only if it is refused: no mask is
        # asked for ahead, so nothing is pending between steps
        checking = self.check_first and not self.mask_worker
        if grammar is not None:
            machine = Machine(grammar, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
                              max_calls=max_calls)
            machine.check_budget(max_new_tokens)
            if not checking:
                pending = next_mask(max_new_tokens)  # overlaps the prompt
        eos = set(self.eos_ids)
        self._feed(prompt_ids)
        ids: list[int] = []
        masking = 0.0
        steps = checked = 0
        ended = closed = False
        text = bytearray()
        while len(ids) < max_new_tokens:
            logits = self._logits()
            if machine is not None:
                steps += 1
                lists: Lists | None = None
                if checking:  # the model's own pick (what any loop does: not counted), if allowed
                    token = pick_token(logits, None, temperature, self._rng)
                    start = time.perf_counter()
                    budget = max_new_tokens - len(ids)
                    if machine.advance_within(token, budget):
                        checked += 1
                    else:
                        lists = make(budget)
                else:
                    start = time.perf_counter()
                    assert pending is not None  # submitted before the prompt and after every token
                    lists = pending.result()
                if lists is not None:
                    allowed, refused = lists
                    if allowed is not None and not allowed.size:
                        raise ToolDecError(f"no token is allowed at step {len(ids)} (text so far: "
                                           f"{machine.text[-80:]!r}); the constraint is unsatisfiable")
                    token = pick_token(logits, allowed, temperature, self._rng, refused)
                    if not machine.advance(token):
                        raise ToolDecError(f"token {token} was picked from the mask but the machine refuses it")
                pending = None
                masking += time.perf_counter() - start
            else:
                token = pick_token(logits, None, temperature, self._rng)
            ids.append(token)
            if token in eos:
                ended = True
                break
            if machine is not None:
                if machine.is_done():
                    break
                if stop_after_call is not None and machine.call_just_closed:
                    closed = True
                    break
            elif stop_after_call is not None:
                text += self.vocab.token_bytes[token] or b""
                if stop_after_call.parse_calls(prefix + text.decode("utf-8", errors="replace")):
                    closed = True
                    break
            if len(ids) < max_new_tokens:
                if machine is not None and not checking:  # the next mask is computed while llama.cpp evaluates the token
                    start = time.perf_counter()
                    pending = next_mask(max_new_tokens - len(ids))
                    masking += time.perf_counter() - start
                self.model.eval([token])
        if isinstance(pending, Future):  # the worker is done with the machine before it goes
            pending.result()
        return Generation(ids, ended, closed, masking, steps, overlapped[0], checked)

    def _masker(self) -> ThreadPoolExecutor:
        """One worker thread for this generator's masks (llama.cpp's eval releases the GIL). It
        hides the masks' time where a core is free beside llama.cpp's threads; where none is, the
        time comes out of theirs (``benchmarks/end_to_end.py --mask-worker on|off``)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tooldec-mask")
        return self._pool


class _Ready:
    """A mask at hand, shaped like the worker's Future (``result()``)."""

    __slots__ = ("value",)

    def __init__(self, value: Lists) -> None:
        self.value = value

    def result(self) -> Lists:
        return self.value


def vocabulary_for_llama(llm: Any, tokenizer: Any) -> Vocabulary:
    """The tokenizer's vocabulary padded to the model's logits width."""
    return from_hf_tokenizer(tokenizer, vocab_size=int(llm.n_vocab()))


def load_llama(path: str | Path, *, n_ctx: int = DEFAULT_CONTEXT, threads: int | None = None,
               progress: Callable[[str], None] | None = None) -> tuple[Any, Any]:
    """Load a GGUF file with llama.cpp, and its tokenizer with transformers.

    Args:
        path: The ``.gguf`` file.
        n_ctx: Context window in tokens.
        threads: CPU threads (default: ``TOOLDEC_THREADS`` or every core).
        progress: Told what is loading and how long it took.

    Returns:
        ``(llm, tokenizer)``.

    Raises:
        FileNotFoundError: No ``.gguf`` file at ``path``.
        ImportError: llama-cpp-python is not installed.
    """
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


class _Later:
    """A mask computed when it is asked for (``result()``), on the asking thread: after
    llama.cpp's evaluation rather than beside it."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Lists]) -> None:
        self.make = make

    def result(self) -> Lists:
        return self.make()


def _core_beside(threads: int) -> bool:
    """Whether this process may run on more cores than ``threads`` (llama.cpp's)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores > threads
