"""Hugging Face transformers backend: a logits processor and stopping criteria for
``model.generate``, a generator, model loading. Only this module and ``tokens/hf.py`` import torch
and transformers, so ``import tooldec`` stays light."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor, StoppingCriteria

from ..decoding import Grammar, Machine, ToolChoice, fill_bitmasks
from ..dialects.base import Dialect
from ..errors import ToolDecError
from ..tokens import Vocabulary
from ..tokens.hf import from_hf_tokenizer
from .generation import Generation, TokenGenerator
from .step import core_beside

__all__ = [
    "Generation",
    "HFGenerator",
    "StopOnCallClose",
    "StopOnParsedCall",
    "ToolDecLogitsProcessor",
    "load_model",
    "logits_width",
    "set_torch_threads",
    "vocabulary_for",
]


class ToolDecLogitsProcessor(LogitsProcessor):
    """Masks every token that would take a row's output out of the tool-call grammar.

    The tokens after the prompt feed one ``Machine`` per row; fresh machines start when the batch
    or the prompt changes, or after :meth:`reset`. Ids past the vocabulary (a padded embedding
    matrix) are always masked; rows whose machine ended are left alone (``generate`` pads them).
    ``max_new_tokens`` (``generate``'s) makes the tokens left each step's budget, so a call is
    never cut off by the length limit.

    Raises:
        ValueError: ``max_new_tokens`` is not positive.
        ToolNotFoundError: ``tool_choice`` names no tool of the grammar.

    Examples:
        >>> from tooldec.tokens import Vocabulary
        >>> from tooldec.tools import ToolSet
        >>> from tooldec.dialects.hermes import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<tool_call>", b"add"])
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> processor = ToolDecLogitsProcessor(Grammar(ToolSet([add]), vocab, Hermes()), tool_choice="required")
        >>> prompt = torch.tensor([[ord("Q"), ord(":")]])
        >>> scores = processor(prompt, torch.zeros(1, vocab.size))
        >>> [vocab.token_bytes[i] for i in torch.nonzero(scores[0] > -1).flatten().tolist()]  # a required call: the tag
        [b'<', b'<tool_call>']
    """

    supports_continuous_batching = False

    def __init__(
        self,
        grammar: Grammar,
        *,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_calls: int | None = None,
        max_new_tokens: int | None = None,
    ) -> None:
        if max_new_tokens is not None and max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1 or None, got {max_new_tokens}")
        self.grammar = grammar
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.max_calls = max_calls
        self.max_new_tokens = max_new_tokens
        self._new_machine()  # checks tool_choice and max_calls now, not in the middle of generate
        self.masking_seconds = 0.0  # feeding tokens, computing and applying masks, all calls
        self.steps = 0  # calls of __call__
        self.reset()

    def _new_machine(self) -> Machine:
        return Machine(self.grammar, tool_choice=self.tool_choice,
                       parallel_tool_calls=self.parallel_tool_calls, max_calls=self.max_calls)

    def reset(self) -> None:
        """Forget the current sequences; the next call starts fresh machines (timers are kept)."""
        self._machines: list[Machine] = []
        self._finished: list[bool] = []
        self._prompt: torch.Tensor | None = None
        self._fed = 0

    @property
    def machines(self) -> list[Machine]:
        """One machine per row of the current batch (empty before the first step)."""
        return list(self._machines)

    @property
    def tokens_fed(self) -> int:
        """Tokens after the prompt that the machines have consumed (per row)."""
        return self._fed

    def budget(self) -> int | None:
        """Tokens ``generate`` may still produce, the next one included (``None``: no limit)."""
        return None if self.max_new_tokens is None else max(self.max_new_tokens - self._fed, 1)

    def finish(self, row: int) -> None:
        """Stop following ``row``: ``generate`` stopped it and will only pad it from now on."""
        self._finished[row] = True

    def sync(self, input_ids: torch.Tensor) -> None:
        """Feed the machines the tokens of ``input_ids`` they have not seen (idempotent: the
        processor and :class:`StopOnCallClose` both call it).

        Raises:
            ToolDecError: A new token its machine refuses (something sampled outside the mask).
        """
        start = time.perf_counter()
        batch, length = input_ids.shape
        prompt = self._prompt
        same = (
            prompt is not None
            and batch == prompt.shape[0]
            and 0 <= length - prompt.shape[1] - self._fed <= 1
            and torch.equal(input_ids[:, : prompt.shape[1]], prompt)
        )
        if not same:
            self.reset()
            self._prompt = input_ids.detach().clone()
            self._machines = [self._new_machine() for _ in range(batch)]
            self._finished = [False] * batch
        elif prompt is not None and length == prompt.shape[1] + self._fed + 1:
            tokens = input_ids[:, -1].tolist()
            for row, (machine, token) in enumerate(zip(self._machines, tokens)):
                if self._finished[row]:
                    continue
                if not machine.advance(token):
                    raise ToolDecError(
                        f"row {row}: token {token} at step {self._fed} is not allowed by the grammar; was a "
                        "processor that changes which tokens are allowed run after ToolDecLogitsProcessor?")
                if machine.is_done():
                    self._finished[row] = True
            self._fed += 1
        self.masking_seconds += time.perf_counter() - start

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """``scores`` itself when nothing is masked (never written into, as transformers asks), else
        a copy with each live row's disallowed tokens at ``-inf``.

        Raises:
            ValueError: ``scores`` is narrower than the vocabulary (a different tokenizer?).
            ToolDecError: A row has no allowed token at all, or see :meth:`sync`.
        """
        self.sync(input_ids)
        start = time.perf_counter()
        self.steps += 1
        vocab_size = self.grammar.vocab.size
        batch, width = scores.shape
        if width < vocab_size:
            raise ValueError(
                f"scores have {width} columns but the vocabulary has {vocab_size} tokens: was the grammar "
                "built for this model's tokenizer?")
        words = (width + 31) // 32
        bitmask = np.zeros((batch, words), dtype=np.int32)
        live = [row for row in range(batch) if not self._finished[row]]
        machines = [None if self._finished[row] else self._machines[row] for row in range(batch)]
        forbids = fill_bitmasks(machines, bitmask, [self.budget()] * batch)
        masked = [row for row in live if forbids[row]]
        if width > vocab_size:  # padding ids past the tokenizer: bitmask bits are already 0 there
            masked = live
        if not masked:
            self.masking_seconds += time.perf_counter() - start
            return scores
        allowed = np.unpackbits(bitmask[masked].view(np.uint8), axis=1, bitorder="little")[:, :width]
        empty = np.flatnonzero(~allowed.any(axis=1))
        if empty.size:
            raise ToolDecError(
                f"row {masked[int(empty[0])]}: no token is allowed at step {self._fed} (text so far: "
                f"{self._machines[masked[int(empty[0])]].advanced.text[-80:]!r}); the constraint is unsatisfiable")
        disallowed = torch.zeros(scores.shape, dtype=torch.bool)
        disallowed[masked] = torch.from_numpy(allowed == 0)
        out = scores.masked_fill(disallowed.to(scores.device), float("-inf"))
        self.masking_seconds += time.perf_counter() - start
        return out


class StopOnCallClose(StoppingCriteria):
    """Stops a row once one of its calls closes, for dialects whose result follows the call in the
    text (``Dialect.stop_after_call``); shares the processor's machines: pass both to one ``generate``."""

    def __init__(self, processor: ToolDecLogitsProcessor) -> None:
        self.processor = processor

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        self.processor.sync(input_ids)
        stop = [bool(m.advanced.call_just_closed) for m in self.processor.machines]
        for row, closed in enumerate(stop):
            if closed:
                self.processor.finish(row)
        return torch.tensor(stop, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]


class StopOnParsedCall(StoppingCriteria):
    """Unconstrained twin of :class:`StopOnCallClose` (the baseline: no machine knows where a call
    ends): stops once ``prefix`` (a call start forced into the prompt) and the text after
    ``prompt_length`` parse as a call. Batch of one only."""

    def __init__(self, dialect: Dialect, vocab: Vocabulary, prompt_length: int, prefix: str = "") -> None:
        self.dialect = dialect
        self.vocab = vocab
        self.prompt_length = prompt_length
        self.prefix = prefix

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        stop = []
        for row in input_ids[:, self.prompt_length :].tolist():
            text = self.vocab.decode([t for t in row if t < self.vocab.size and self._known(t)])
            stop.append(bool(self.dialect.parse_calls(self.prefix + text.decode("utf-8", errors="replace"))))
        return torch.tensor(stop, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]

    def _known(self, token: int) -> bool:
        return self.vocab.token_bytes[token] is not None or token in self.vocab.special


class HFGenerator(TokenGenerator):
    """``generate`` with a transformers causal LM, one token at a time on its KV cache, tooldec's
    loop picking each; ``mask_worker``, ``check_first``, ``jump_forward`` as ``LlamaCppGenerator``'s."""

    def __init__(self, model: Any, tokenizer: Any, vocab: Vocabulary | None = None, *,
                 mask_worker: bool | None = None, check_first: bool = True, jump_forward: bool = True) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.vocab = vocab if vocab is not None else vocabulary_for(model, tokenizer)
        self.width = logits_width(model)
        eos = set(self.vocab.eos_ids)
        configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos.update([configured] if isinstance(configured, int) else list(configured or []))
        self.eos_ids = sorted(eos)
        self.rng = np.random.default_rng()
        self.mask_worker = core_beside(torch.get_num_threads()) if mask_worker is None else mask_worker
        self.check_first = check_first
        self.jump_forward = jump_forward
        self._cache: Any = None
        self._cache_name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    def start(self, prompt_ids: Sequence[int]) -> np.ndarray:
        self._cache = None
        last: np.ndarray = self._forward(list(prompt_ids))[-1]
        return last

    def push(self, token: int) -> np.ndarray:
        last: np.ndarray = self._forward([token])[-1]
        return last

    def push_all(self, tokens: Sequence[int]) -> list[np.ndarray]:
        return list(self._forward(list(tokens), rows=len(tokens)))

    def drop(self, count: int) -> None:
        self._cache.crop(-count)  # transformers 5: a negative count removes that many

    def _forward(self, ids: list[int], rows: int = 1) -> np.ndarray:
        """The logits of the last ``rows`` of ``ids`` evaluated after the cache, through the head
        alone as ``model.generate`` computes them (the cache's name changed in transformers 5)."""
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([ids], dtype=torch.long, device=self.model.device),
                             use_cache=True, logits_to_keep=rows, **{self._cache_name: self._cache})
            self._cache = out[self._cache_name]
            logits: np.ndarray = out.logits[0].float().cpu().numpy()
            return logits


def set_torch_threads(threads: int) -> None:
    """Use ``threads`` (>= 1, else ``ValueError``) CPU threads for torch: fewer are often faster on a busy machine."""
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    torch.set_num_threads(threads)


def logits_width(model: Any) -> int:
    """The number of logits the model produces per step (often more than the tokenizer has)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    weight = getattr(head, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    return int(model.config.vocab_size)


def vocabulary_for(model: Any, tokenizer: Any) -> Vocabulary:
    """The tokenizer's vocabulary padded to the model's logits width (``TokenizerError`` if it
    cannot be read or has more tokens than the model has logits)."""
    return from_hf_tokenizer(tokenizer, vocab_size=logits_width(model))


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_model(path_or_gguf: str | Path, *, progress: Callable[[str], None] | None = _stderr) -> tuple[Any, Any]:
    """A causal LM and its tokenizer from a model directory or a ``.gguf`` file (dequantised to
    float32 by transformers with ``accelerate``: slow); ``progress`` is told what is happening
    (default: stderr; ``None``: silence).

    Raises:
        FileNotFoundError: The path does not exist.
        ImportError: A GGUF file but ``accelerate`` is not installed.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    say = progress or (lambda message: None)
    path = Path(path_or_gguf)
    if not path.exists():
        raise FileNotFoundError(f"no model at {path}: give a model directory or a .gguf file")
    kwargs: dict[str, Any] = {}
    directory = path
    if path.is_file():
        if path.suffix != ".gguf":
            raise FileNotFoundError(f"{path} is a file but not a .gguf model; give a model directory or a .gguf file")
        if importlib.util.find_spec("accelerate") is None:
            raise ImportError("transformers needs 'accelerate' to load a GGUF file: pip install accelerate")
        directory, kwargs = path.parent, {"gguf_file": path.name}
    start = time.perf_counter()
    say(f"loading tokenizer from {path} ...")
    tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
    say(f"loading model from {path} (a GGUF file is dequantised first; this takes a while) ...")
    model: Any = AutoModelForCausalLM.from_pretrained(directory, **kwargs)
    model.eval()
    say(f"model loaded in {time.perf_counter() - start:.1f} s")
    return model, tokenizer
