"""``ToolDecLogitsProcessor`` on tiny tensors: the real SmolLM2 vocabulary, fake (zero) scores.

The reference is a ``Machine`` advanced alongside with the same tokens: at every step the
processor must leave finite exactly the ids ``allowed_token_ids(budget)`` returns, and never
touch its input tensor.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
import torch

from tooldec.backends.hf import StopOnCallClose, ToolDecLogitsProcessor
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.errors import ToolDecError, ToolNotFoundError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .smollm2 import longest_match_ids

PROMPT = torch.tensor([[1, 504, 2, 198]])  # a few real SmolLM2 ids; only their count matters
CALL = '<tool_call>\n{"name": "country_fact", "arguments": {"country": "Kenya", "fact": "capital"}}\n</tool_call>'


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def country_fact(country: Literal["France", "Kenya"], fact: Literal["capital", "currency"]) -> str:
    """Look up a fact about a country."""
    return {"France": "Paris", "Kenya": "Nairobi"}[country] if fact == "capital" else "?"


@pytest.fixture(scope="module")
def grammar(smollm2_vocab: Vocabulary) -> Grammar:
    return Grammar(ToolSet([add, country_fact]), smollm2_vocab, Hermes())


def finite_ids(scores: torch.Tensor, row: int = 0) -> np.ndarray:
    return torch.nonzero(torch.isfinite(scores[row])).flatten().numpy().astype(np.int32)


def step(processor: ToolDecLogitsProcessor, ids: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    scores = torch.zeros(ids.shape[0], width)
    return scores, processor(ids, scores)


@pytest.mark.parametrize("tool_choice", ["auto", "required", "country_fact"])
@pytest.mark.parametrize("max_new_tokens", [None, 40])
def test_masks_exactly_the_allowed_ids_at_every_step(grammar: Grammar, tool_choice: str, max_new_tokens: int | None) -> None:
    text = "Sure. " + CALL + " Done." if tool_choice == "auto" else CALL + " Done."
    tokens = longest_match_ids(grammar.vocab, text) + sorted(grammar.vocab.eos_ids)[:1]
    processor = ToolDecLogitsProcessor(grammar, tool_choice=tool_choice, max_new_tokens=max_new_tokens)
    reference = Machine(grammar, tool_choice=tool_choice)
    ids = PROMPT
    for fed, token in enumerate(tokens):
        scores, out = step(processor, ids, grammar.vocab.size)
        budget = None if max_new_tokens is None else max_new_tokens - fed
        expected = reference.allowed_token_ids(budget)
        assert np.array_equal(finite_ids(out), expected), f"step {fed}: {grammar.vocab.token_bytes[token]!r}"
        assert torch.count_nonzero(scores) == 0, "the input scores were modified"
        if token not in expected:  # a tight budget may forbid the rest of the scripted text
            assert max_new_tokens is not None
            break
        assert reference.advance(token)
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    assert processor.steps > 0 and processor.masking_seconds > 0


def test_padding_ids_past_the_vocabulary_are_always_masked(grammar: Grammar) -> None:
    size = grammar.vocab.size
    processor = ToolDecLogitsProcessor(grammar)
    _, out = step(processor, PROMPT, size + 64)
    assert out.shape == (1, size + 64)
    assert torch.isinf(out[0, size:]).all()
    assert np.array_equal(finite_ids(out), Machine(grammar).allowed_token_ids())


def test_scores_narrower_than_the_vocabulary_are_refused(grammar: Grammar) -> None:
    with pytest.raises(ValueError, match="columns but the vocabulary"):
        step(ToolDecLogitsProcessor(grammar), PROMPT, grammar.vocab.size - 1)


def test_rows_of_a_batch_follow_their_own_tokens(grammar: Grammar) -> None:
    vocab = grammar.vocab
    call_ids = longest_match_ids(vocab, CALL)
    text_ids = longest_match_ids(vocab, "Paris is the capital of France, as everyone knows.")
    n = min(len(call_ids), len(text_ids))
    processor = ToolDecLogitsProcessor(grammar)
    machines = [Machine(grammar), Machine(grammar)]
    ids = PROMPT.repeat(2, 1)
    for k in range(n):
        _, out = step(processor, ids, vocab.size)
        for row, machine in enumerate(machines):
            assert np.array_equal(finite_ids(out, row), machine.allowed_token_ids())
        for machine, token in zip(machines, (call_ids[k], text_ids[k])):
            assert machine.advance(token)
        ids = torch.cat([ids, torch.tensor([[call_ids[k]], [text_ids[k]]])], dim=1)
    assert [m.advanced.mode for m in processor.machines] == [m.advanced.mode for m in machines]


def test_a_new_prompt_starts_fresh_machines(grammar: Grammar) -> None:
    vocab = grammar.vocab
    opening = longest_match_ids(vocab, '<tool_call>\n{"name": "')
    processor = ToolDecLogitsProcessor(grammar)
    ids = PROMPT
    for token in opening:
        step(processor, ids, vocab.size)
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    _, inside = step(processor, ids, vocab.size)
    assert finite_ids(inside).size < vocab.size  # inside a call: names only
    # the same ids as a new prompt (a second ``generate``): back to text mode
    processor.reset()
    _, fresh = step(processor, ids, vocab.size)
    assert fresh.shape == inside.shape and torch.isfinite(fresh).all()
    # without reset, a different prompt of another length is detected too
    step(processor, ids, vocab.size)
    _, other = step(processor, PROMPT[:, :2], vocab.size)
    assert torch.isfinite(other).all() and processor.tokens_fed == 0


def test_a_finished_row_is_left_alone(grammar: Grammar) -> None:
    vocab = grammar.vocab
    eos = sorted(vocab.eos_ids)[0]
    processor = ToolDecLogitsProcessor(grammar, tool_choice="required")
    ids = PROMPT.repeat(2, 1)
    step(processor, ids, vocab.size)
    first = longest_match_ids(vocab, "<")[0]
    ids = torch.cat([ids, torch.tensor([[first], [first]])], dim=1)
    step(processor, ids, vocab.size)
    processor.finish(0)  # generate stopped row 0 (say, a stopping criterion); it is padded from now on
    ids = torch.cat([ids, torch.tensor([[eos], [longest_match_ids(vocab, "tool")[0]]])], dim=1)
    _, out = step(processor, ids, vocab.size)
    assert torch.isfinite(out[0]).all()
    assert finite_ids(out, 1).size < vocab.size


def test_a_token_outside_the_mask_is_an_error(grammar: Grammar) -> None:
    processor = ToolDecLogitsProcessor(grammar, tool_choice="required")
    step(processor, PROMPT, grammar.vocab.size)
    bad = longest_match_ids(grammar.vocab, "Hello")[0]
    with pytest.raises(ToolDecError, match="not allowed by the grammar"):
        step(processor, torch.cat([PROMPT, torch.tensor([[bad]])], dim=1), grammar.vocab.size)


def test_arguments_are_checked_when_the_processor_is_made(grammar: Grammar) -> None:
    with pytest.raises(ValueError, match="max_new_tokens"):
        ToolDecLogitsProcessor(grammar, max_new_tokens=0)
    with pytest.raises(ToolNotFoundError):
        ToolDecLogitsProcessor(grammar, tool_choice="multiply")


@pytest.mark.parametrize("parallel", [True, False])
def test_another_call_only_with_parallel_calls(grammar: Grammar, parallel: bool) -> None:
    vocab = grammar.vocab
    processor = ToolDecLogitsProcessor(grammar, parallel_tool_calls=parallel)
    ids = PROMPT
    for token in longest_match_ids(vocab, CALL + "\n<tool_call"):
        step(processor, ids, vocab.size)
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    _, out = step(processor, ids, vocab.size)
    closing = longest_match_ids(vocab, ">")[0]
    assert bool(torch.isfinite(out[0, closing])) is parallel
    assert processor.machines[0].advanced.calls_completed == 1


def test_stop_on_call_close_fires_on_the_closing_token(grammar: Grammar) -> None:
    vocab = grammar.vocab
    processor = ToolDecLogitsProcessor(grammar)
    stop = StopOnCallClose(processor)
    ids = PROMPT
    tokens = longest_match_ids(vocab, "Let me look. " + CALL + " ok")
    for n, token in enumerate(tokens, start=1):  # noqa: B007 - the count is read after the loop
        step(processor, ids, vocab.size)
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
        if stop(ids, None)[0]:
            break
    assert vocab.decode(tokens[:n]).endswith(b"</tool_call>")
