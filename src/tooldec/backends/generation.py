"""The :class:`Generator` protocol (``generate`` and what it returns), the loop of the backends
that evaluate token by token, and the choice of backend for a loaded model."""

from __future__ import annotations

import atexit
import gc
import importlib.util
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from ..decoding import Grammar, Machine, ToolChoice
from ..dialects.base import Dialect
from ..tokens import Vocabulary
from .step import Stepper

__all__ = ["Backend", "Generation", "Generator", "Request", "TokenGenerator", "generator_for", "load", "pick_backend",
           "settle"]


@dataclass(frozen=True)
class Generation:
    """The new tokens of one ``generate`` call and what it cost.

    Attributes:
        ids: Tokens after the prompt, up to and including the end-of-sequence token if one was
            generated (the padding after it is dropped).
        ended: The model emitted an end-of-sequence token.
        call_closed: Generation stopped because a call closed (``stop_after_call`` dialects).
        masking_seconds, masked_steps, overlapped_seconds, checked_steps: What masking cost,
            as :class:`~tooldec.backends.step.Stepper` counts it (0 when unconstrained).
        refusals: What the model tried to write that the format refuses, by name, and how often
            (``Stepper.refusals``).
    """

    ids: list[int]
    ended: bool
    call_closed: bool
    masking_seconds: float
    masked_steps: int
    overlapped_seconds: float = 0.0
    checked_steps: int = 0
    refusals: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """The arguments of one :meth:`Generator.generate`, as :meth:`Generator.run` receives them (a
    wrapping generator passes them on, changed with ``dataclasses.replace``)."""

    max_new_tokens: int
    temperature: float
    grammar: Grammar | None
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    max_calls: int | None
    stop_after_call: Dialect | None
    prefix: str

    def machine(self) -> Machine | None:
        """A fresh cursor for this request (``None`` without a grammar)."""
        if self.grammar is None:
            return None
        return Machine(self.grammar, tool_choice=self.tool_choice, parallel_tool_calls=self.parallel_tool_calls,
                       max_calls=self.max_calls)


class Generator(Protocol):
    """What the runtime, the benchmarks and the server run a model through: a generator
    implements :meth:`run` and inherits ``generate``, written here once, by naming this base. It
    has a ``vocab`` (padded to the logits), ``eos_ids`` and a ``tokenizer`` (or ``None``)."""

    vocab: Vocabulary
    eos_ids: list[int]
    tokenizer: Any

    def seed(self, seed: int) -> None:
        """Seed the sampler."""

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        """The next-token logits after ``ids`` (a copy), for backtracking and beams."""

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        """:meth:`generate`, its arguments in one record."""

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
        """Generate up to ``max_new_tokens`` tokens after ``prompt_ids`` (a batch of one).

        Args:
            prompt_ids: The prompt.
            max_new_tokens: The budget; with a grammar, a call is always closed within it.
            temperature: 0 for greedy decoding, else plain sampling at that temperature.
            grammar: Constrain the output to it; ``None`` for unconstrained generation.
            tool_choice, parallel_tool_calls, max_calls: See ``Machine`` (ignored without a grammar).
            stop_after_call: Stop as soon as a call of this dialect closes.
            prefix: Text at the end of the prompt that is part of the output (a forced call
                start); unconstrained, it is parsed with the new text to see a call close.

        Raises:
            BudgetError: A call must come first and cannot close within the budget.
        """
        return self.run(prompt_ids, Request(max_new_tokens, temperature, grammar, tool_choice, parallel_tool_calls,
                                            max_calls, stop_after_call, prefix))


class TokenGenerator(Generator):
    """A generator whose loop is tooldec's: the model evaluates tokens (:meth:`start`,
    :meth:`push`), a :class:`~tooldec.backends.step.Stepper` takes each one from the logits.
    Subclasses set ``vocab``, ``eos_ids``, ``tokenizer``, the stepper's options and ``rng``, the
    sampler's source (:meth:`seed`), and ``width``, the logits per step."""

    width: int
    mask_worker: bool
    check_first: bool
    rng: np.random.Generator

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def start(self, prompt_ids: Sequence[int]) -> np.ndarray:
        """Make the model's context ``prompt_ids``; the logits after it (valid until the next call)."""
        raise NotImplementedError

    def push(self, token: int) -> np.ndarray:
        """Evaluate one more token; the logits after it (valid until the next call)."""
        raise NotImplementedError

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        return self.start(ids).copy()

    def stepper(self, machine: Machine | None, temperature: float = 0.0,
                rng: np.random.Generator | None = None) -> Stepper:
        """A stepper for one generation, with this generator's options."""
        return Stepper(machine, self.width, temperature=temperature, rng=rng or self.rng,
                       check_first=self.check_first, mask_worker=self.mask_worker)

    def tokens(self, prompt_ids: Sequence[int], stepper: Stepper, budget: int) -> Iterator[int]:
        """Up to ``budget`` tokens after ``prompt_ids``, each evaluated when the next is asked for."""
        stepper.ahead(budget)  # the first mask overlaps the prompt
        logits = self.start(prompt_ids)
        for left in range(budget, 0, -1):
            token = stepper.step(logits, left)
            yield token
            if left > 1:
                stepper.ahead(left - 1)  # the next mask is made while the model evaluates the token
                logits = self.push(token)

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        budget = request.max_new_tokens
        machine = request.machine()
        if machine is not None:
            machine.check_budget(budget)  # refused before any decoding
        eos, stop = set(self.eos_ids), request.stop_after_call
        ids: list[int] = []
        ended = closed = False
        text = bytearray()
        with self.stepper(machine, request.temperature) as stepper:
            for token in self.tokens(prompt_ids, stepper, budget):  # a cursor is done only at an end token
                ids.append(token)
                if token in eos:
                    ended = True
                elif machine is not None:
                    closed = stop is not None and machine.call_just_closed
                elif stop is not None:
                    text += self.vocab.token_bytes[token] or b""
                    closed = bool(stop.parse_calls(request.prefix + text.decode("utf-8", errors="replace")))
                if ended or closed:
                    break
        return Generation(ids, ended, closed, stepper.masking_seconds, stepper.steps, stepper.overlapped_seconds,
                          stepper.checked, stepper.refusals)


def generator_for(model: Any, tokenizer: Any, vocab: Vocabulary | None = None) -> TokenGenerator:
    """The generator that runs ``model``: llama.cpp for a ``llama_cpp.Llama``, else transformers.

    Imports the backend only then, so torch is loaded only for a transformers model.
    """
    from .llamacpp import LlamaCppGenerator, is_llama

    if is_llama(model):
        return LlamaCppGenerator(model, tokenizer, vocab)
    from .hf import HFGenerator

    return HFGenerator(model, tokenizer, vocab)


Backend = Literal["auto", "llamacpp", "transformers"]


def pick_backend(path: Path, backend: Backend = "auto") -> Literal["llamacpp", "transformers"]:
    """``auto``: llama.cpp for a GGUF file when llama-cpp-python is installed, else transformers.

    Examples:
        >>> pick_backend(Path("model-dir"))
        'transformers'
    """
    if backend != "auto":
        return backend
    if path.suffix == ".gguf" and importlib.util.find_spec("llama_cpp") is not None:
        return "llamacpp"
    return "transformers"


def load(path: str | Path, backend: Backend = "auto", *, threads: int | None = None,
         progress: Callable[[str], None] | None = None, context: int | None = None) -> tuple[Any, Any, Any, str]:
    """Load a model and its tokenizer with the backend ``backend`` (see :func:`pick_backend`).

    Args:
        path: A ``.gguf`` file or a transformers model folder.
        backend: ``llamacpp``, ``transformers`` or ``auto``.
        threads: CPU threads (default: the backend's choice).
        progress: Told what is loading.
        context: llama.cpp's context window in tokens (default: ``llamacpp.DEFAULT_CONTEXT``);
            a transformers model's window is fixed by the model.

    Returns:
        ``(model, tokenizer, vocabulary padded to the logits, backend name)``.
    """
    path = Path(path)
    if pick_backend(path, backend) == "llamacpp":
        from .llamacpp import DEFAULT_CONTEXT, load_llama, vocabulary_for_llama

        llm, tokenizer = load_llama(path, threads=threads, progress=progress, n_ctx=context or DEFAULT_CONTEXT)
        loaded = llm, tokenizer, vocabulary_for_llama(llm, tokenizer), "llamacpp"
    else:
        from .hf import load_model, set_torch_threads, vocabulary_for

        if threads is not None:
            set_torch_threads(threads)
        model, tokenizer = load_model(path, progress=progress)
        loaded = model, tokenizer, vocabulary_for(model, tokenizer), "transformers"
    settle()
    return loaded


def settle() -> None:
    """Take what is alive now (the model, its tokenizer, the libraries behind them: hundreds of
    thousands of objects) out of the garbage collector's generations, after one collection.

    A full collection traverses every tracked object; with these in it, one took ~200 ms inside
    a generation loop (SmolLM2 on llama.cpp, ``python benchmarks/end_to_end.py --model smollm2``). Frozen, they are never
    traversed again, nor freed before exit: call this once what is loaded lives as long as the
    process, as a loader or a server's start-up does. Process-wide, like the collector itself.
    """
    gc.collect()
    gc.freeze()
    atexit.unregister(gc.unfreeze)  # once: at exit the frozen objects are collected again, so
    atexit.register(gc.unfreeze)  # extensions that check for leaks (triton's nanobind) find none
