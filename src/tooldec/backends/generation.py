"""The :class:`Generator` protocol (``generate`` and what it returns) and the loop of the backends
that evaluate token by token (the choice of backend and loading are in :mod:`.loading`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..decoding import Grammar, Machine, ToolChoice
from ..dialects.base import Dialect
from ..tokens import Vocabulary
from .jump import encoder_of
from .step import Stepper

__all__ = ["JUMP_LIMIT", "Generation", "Generator", "Request", "TokenGenerator"]

JUMP_LIMIT = 64
"""The most tokens one jump-forward batch evaluates (a picked token and its draft): a call's
framing is far shorter; a longer forced span is taken in pieces."""


@dataclass(frozen=True)
class Generation:
    """The new tokens of one ``generate`` call and what it cost.

    Attributes:
        ids: Tokens after the prompt, an end-of-sequence token included (no padding).
        ended, call_closed: It ended on an end token; it stopped as a call closed (``stop_after_call``).
        masking_seconds, masked_steps, overlapped_seconds, checked_steps, refusals, forced_steps,
            jumps: As :class:`~tooldec.backends.step.Stepper` counts them (0 unconstrained): forward
            passes = ``len(ids) - forced_steps`` (the last token is never evaluated) plus the prompt's.
    """

    ids: list[int]
    ended: bool
    call_closed: bool
    masking_seconds: float
    masked_steps: int
    overlapped_seconds: float = 0.0
    checked_steps: int = 0
    refusals: Mapping[str, int] = field(default_factory=dict)
    forced_steps: int = 0
    jumps: int = 0


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
        """Up to ``max_new_tokens`` tokens after ``prompt_ids`` (a batch of one); with a ``grammar``
        a call always closes within them. ``stop_after_call``: stop as a call of this dialect
        closes; ``prefix``: prompt text that belongs to the output (a forced call start), parsed
        with the new text when unconstrained.

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
    jump_forward: bool = False
    """Evaluate the tokens the grammar forces in one batch (:mod:`.jump`), not a pass each."""
    rng: np.random.Generator

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def start(self, prompt_ids: Sequence[int]) -> np.ndarray:
        """Make the model's context ``prompt_ids``; the logits after it (valid until the next call)."""
        raise NotImplementedError

    def push(self, token: int) -> np.ndarray:
        """Evaluate one more token; the logits after it (valid until the next call)."""
        raise NotImplementedError

    def push_all(self, tokens: Sequence[int]) -> list[np.ndarray]:
        """Evaluate ``tokens`` (a picked token and the grammar's draft after it) in one batch; the
        logits after each, valid until the next call. A backend with batches overrides this."""
        return [self.push(token).copy() for token in tokens]

    def drop(self, count: int) -> None:
        """Forget the last ``count`` evaluated tokens (a draft the model did not confirm)."""
        raise NotImplementedError(f"{type(self).__name__} cannot forget evaluated tokens: turn jump_forward off")

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        return self.start(ids).copy()

    def stepper(self, machine: Machine | None, temperature: float = 0.0,
                rng: np.random.Generator | None = None) -> Stepper:
        """A stepper for one generation, with this generator's options."""
        encode = encoder_of(self.tokenizer) if machine is not None and self.jump_forward else None
        return Stepper(machine, self.width, temperature=temperature, rng=rng or self.rng,
                       check_first=self.check_first, mask_worker=self.mask_worker, encode=encode)

    def tokens(self, prompt_ids: Sequence[int], stepper: Stepper, budget: int) -> Iterator[int]:
        """Up to ``budget`` tokens after ``prompt_ids``, each evaluated when the next is asked for.
        With jump-forward a pick's draft (:meth:`Stepper.forced`) is evaluated with it in one batch
        and confirmed pick by pick; at the first pick that is not the draft's, the rest is dropped."""
        left = budget
        logits = self.start(prompt_ids)
        while left:
            token = stepper.step(logits, left)
            left -= 1
            while True:  # ``token`` is picked but not yet evaluated
                yield token
                if not left:
                    return
                draft = stepper.forced(left, JUMP_LIMIT - 1)
                stepper.ahead(left)  # the next mask is made while the model evaluates
                if not draft:
                    logits = self.push(token)
                    break
                rows = self.push_all([token, *draft])
                for place, expected in enumerate(draft):
                    token = stepper.confirm(rows[place], left, expected)
                    left -= 1
                    if token != expected:
                        self.drop(len(draft) - place)
                        break
                    yield token
                    if not left:
                        return
                else:
                    logits = rows[-1]
                    break

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
                    closed = stop is not None and machine.advanced.call_just_closed
                elif stop is not None:
                    text += self.vocab.token_bytes[token] or b""
                    closed = bool(stop.parse_calls(request.prefix + text.decode("utf-8", errors="replace")))
                if ended or closed:
                    break
        return Generation(ids, ended, closed, stepper.masking_seconds, stepper.steps, stepper.overlapped_seconds,
                          stepper.checked, stepper.refusals, stepper.forced_steps, stepper.jumps)
