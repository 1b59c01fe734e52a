"""The ``Stepper`` alone, on a byte-level vocabulary and random logits (no model).

The three ways it makes masks (the model's pick checked first, masks after the forward pass,
masks on the worker thread) must take the same greedy tokens; every token, greedy or sampled,
must be one the budgeted mask of its step allows; and the call must close within the budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tooldec.backends.step import Stepper
from tooldec.decoding import Compiler, Machine
from tooldec.dialects import Hermes
from tooldec.errors import ToolDecError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

VOCAB = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<tool_call>", b"</tool_call>", b'{"name": "',
                                                                     b'"arguments": ', b"<eos>"],
                               special={260: "<eos>"}, eos_ids=[260])


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def weather(city: str) -> str:
    """Today's weather in a city."""
    return city


TOOLS = ToolSet([add, weather])
WAYS: list[dict[str, Any]] = [{"check_first": True}, {"check_first": False}, {"mask_worker": True}]


def decode(logits: np.ndarray, budget: int, temperature: float = 0.0, **way: Any) -> tuple[list[int], Machine, Stepper]:
    """Step through ``logits`` rows as a generation loop does, a fresh compiler each time (no mask cached)."""
    machine = Machine(Compiler(VOCAB, Hermes()).compile(TOOLS), tool_choice="required", parallel_tool_calls=False)
    tokens: list[int] = []
    with Stepper(machine, VOCAB.size, temperature=temperature, rng=np.random.default_rng(0), **way) as stepper:
        stepper.ahead(budget)
        for left in range(budget, 0, -1):
            token = stepper.step(logits[budget - left], left)
            tokens.append(token)
            if token == 260 or machine.advanced.turn_over:
                break
            stepper.ahead(left - 1)
    return tokens, machine, stepper


def allowed_each_step(tokens: list[int], budget: int) -> bool:
    replay = Machine(Compiler(VOCAB, Hermes()).compile(TOOLS), tool_choice="required", parallel_tool_calls=False)
    return all(token in replay.allowed_token_ids(budget - i).tolist() and replay.advance(token)
               for i, token in enumerate(tokens))


@pytest.mark.parametrize("seed", range(4))
def test_the_ways_of_masking_take_the_same_greedy_tokens_and_the_call_closes(seed: int) -> None:
    fewest = Machine(Compiler(VOCAB, Hermes()).compile(TOOLS), tool_choice="required",
                     parallel_tool_calls=False).min_tokens()
    for budget in (fewest, fewest + 3, 40):
        logits = np.random.default_rng(seed).standard_normal((budget, VOCAB.size)).astype(np.float32)
        answers = []
        for way in WAYS:
            tokens, machine, stepper = decode(logits, budget, **way)
            assert allowed_each_step(tokens, budget), (way, budget)
            assert machine.advanced.calls_completed == 1, (way, budget, VOCAB.decode(tokens))
            assert stepper.steps == len(tokens)
            assert (stepper.overlapped_seconds > 0) == ("mask_worker" in way)
            answers.append(tokens)
        assert answers[0] == answers[1] == answers[2], budget


@pytest.mark.parametrize("way", WAYS)
def test_sampled_tokens_are_allowed(way: dict[str, Any]) -> None:
    logits = np.random.default_rng(7).standard_normal((40, VOCAB.size)).astype(np.float32)
    tokens, machine, _ = decode(logits, 40, temperature=1.0, **way)
    assert allowed_each_step(tokens, 40) and machine.advanced.calls_completed == 1


def test_an_unsatisfiable_step_is_a_clear_error() -> None:
    machine = Machine(Compiler(VOCAB, Hermes()).compile(TOOLS), tool_choice="required")
    with Stepper(machine, VOCAB.size) as stepper, pytest.raises(ToolDecError, match="no token is allowed"):
        stepper.step(np.zeros(VOCAB.size, dtype=np.float32), 1)  # no call closes in one token


@pytest.mark.parametrize("way", WAYS, ids=["check-first", "after", "worker"])
def test_a_result_the_model_tries_to_write_is_refused_and_counted(way: dict[str, Any]) -> None:
    """In text the model prefers ``<tool_response>`` (a special token here): each way takes the
    next best token instead and counts the attempt under the refusal's name."""
    vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<tool_call>", b"</tool_call>", b"<eos>",
                                                                         b"<tool_response>"],
                                   special={258: "<eos>", 259: "<tool_response>"}, eos_ids=[258])
    machine = Machine(Compiler(vocab, Hermes()).compile(TOOLS), tool_choice="auto")
    rows = np.zeros((3, vocab.size), dtype=np.float32)
    rows[0, 259], rows[0, ord("O")] = 9.0, 5.0
    rows[1, 259], rows[1, ord("K")] = 9.0, 5.0
    rows[2, 258] = 9.0
    tokens = []
    with Stepper(machine, vocab.size, rng=np.random.default_rng(0), **way) as stepper:
        for left, row in zip((3, 2, 1), rows):
            stepper.ahead(left)
            tokens.append(stepper.step(row, left))
    assert tokens == [ord("O"), ord("K"), 258]
    assert stepper.refusals == {"result": 2}
