"""The processor inside a real ``model.generate``: SmolLM2-135M sampling at temperature 1.

Sampling at temperature 1 with no top-k is the hardest case for validity: any token with a
non-zero probability can come. With tooldec every sampled call must parse, name a known tool
and satisfy its schema; the same prompts unconstrained are printed for comparison (``-s``), not
asserted, since what an unconstrained model writes is not tooldec's to guarantee.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
import torch

from tooldec.backends.hf import StopOnCallClose, StopOnParsedCall, ToolDecLogitsProcessor
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.runtime import tool_instructions
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

QUESTIONS = [
    "What is 1234 plus 5678?",
    "What is the capital of Kenya?",
    "Repeat after me: tooldec works.",
    "What is the currency of France?",
]
SAMPLES_PER_QUESTION = 2


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def country_fact(country: Literal["France", "Japan", "Kenya"], fact: Literal["capital", "currency"]) -> str:
    """Look up the capital or currency of a country."""
    return f"{fact} of {country}"


def echo(text: str) -> str:
    """Repeat a text."""
    return text


TOOLS = ToolSet([add, country_fact, echo])


@pytest.fixture(scope="module")
def grammar(smollm2_model: tuple[Any, Any, Vocabulary]) -> Grammar:
    return Grammar(TOOLS, smollm2_model[2], Hermes())


def batch(tokenizer: Any, questions: list[str], forced: str = "") -> dict[str, torch.Tensor]:
    """Chat prompts with the tools in the system prompt, left-padded into one batch."""
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "system", "content": tool_instructions(TOOLS, Hermes())}, {"role": "user", "content": q}],
            add_generation_prompt=True, tokenize=False) + forced
        for q in questions for _ in range(SAMPLES_PER_QUESTION)]
    tokenizer.padding_side = "left"
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}


def sample(model: Any, vocab: Vocabulary, inputs: dict[str, torch.Tensor], max_new_tokens: int,
           processors: list[Any], criteria: list[Any], seed: int) -> list[str]:
    """Sample at temperature 1 (no top-k, no top-p); each row's text up to its end-of-sequence token."""
    torch.manual_seed(seed)
    eos = sorted(vocab.eos_ids)
    with torch.inference_mode():
        output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=True, temperature=1.0, top_k=0,
                                top_p=1.0, logits_processor=processors, stopping_criteria=criteria,
                                eos_token_id=eos, pad_token_id=eos[0])
    texts = []
    for row in output[:, inputs["input_ids"].shape[1]:].tolist():
        end = next((i for i, t in enumerate(row) if t in vocab.eos_ids), len(row))
        texts.append(vocab.decode(row[:end]).decode("utf-8", errors="replace"))
    return texts


def problems(text: str) -> list[str]:
    """Why the calls in ``text`` are not all valid (empty when they are)."""
    scan = Hermes().scan(text)  # every form Hermes models write; call-like text that did not parse
    calls = scan.calls
    found = [f"does not parse as a call: {snippet[:60]!r}" for snippet in scan.broken]
    for call in calls:
        if call.name not in TOOLS:
            found.append(f"unknown tool {call.name!r}")
        else:
            found += TOOLS[call.name].validate_arguments(call.arguments)
    return found


def test_sampled_calls_are_all_valid(smollm2_model: tuple[Any, Any, Vocabulary], grammar: Grammar) -> None:
    model, tokenizer, vocab = smollm2_model
    processor = ToolDecLogitsProcessor(grammar, tool_choice="required", parallel_tool_calls=False, max_new_tokens=64)
    texts = sample(model, vocab, batch(tokenizer, QUESTIONS), 64, [processor], [StopOnCallClose(processor)], seed=1)
    for text in texts:
        print(f"tooldec: {text!r}")
    assert len(texts) == len(QUESTIONS) * SAMPLES_PER_QUESTION
    for text in texts:
        scan = Hermes().scan(text)
        assert scan.calls and not scan.broken, text
        assert text.lstrip()[:1] in ("<", "`", "{"), text  # required: the call comes first (tag, fence or object)
        assert len(Hermes().parse_calls(text)) == 1, text  # parallel calls off
        assert problems(text) == [], text
    assert processor.masking_seconds > 0


def test_sampled_calls_unconstrained_are_reported(smollm2_model: tuple[Any, Any, Vocabulary]) -> None:
    """The baseline: the same prompts, the call start forced by the prompt; counted, not asserted."""
    model, tokenizer, vocab = smollm2_model
    forced = '<tool_call>\n{"name": "'
    inputs = batch(tokenizer, QUESTIONS, forced)
    texts = sample(model, vocab, inputs, 64, [], [StopOnParsedCall(Hermes(), vocab, inputs["input_ids"].shape[1], forced)],
                   seed=1)
    invalid = [problems(forced + text) for text in texts]
    for text, found in zip(texts, invalid):
        print(f"unconstrained: {forced + text!r} -> {found or 'valid'}")
    print(f"unconstrained: {sum(bool(p) for p in invalid)} of {len(texts)} sampled calls invalid")


@pytest.mark.parametrize("tool_choice", ["echo", "auto"])
def test_a_tight_budget_still_ends_with_a_complete_call(smollm2_model: tuple[Any, Any, Vocabulary], grammar: Grammar,
                                                        tool_choice: str) -> None:
    """The budget is the fewest tokens a call can take: the call must still close, and be valid.

    ``echo`` takes a free string, which a model sampling at temperature 1 happily makes long;
    with ``auto`` a call may only be started when it can still be finished.
    """
    model, tokenizer, vocab = smollm2_model
    budget = Machine(grammar, tool_choice="echo").advanced.shortest_completion()
    processor = ToolDecLogitsProcessor(grammar, tool_choice=tool_choice, max_new_tokens=budget)
    texts = sample(model, vocab, batch(tokenizer, ["Repeat after me: the budget is tight but the call closes."]), budget,
                   [processor], [StopOnCallClose(processor)], seed=2)
    for text in texts:
        print(f"budget {budget}, {tool_choice}: {text!r}")
        assert problems(text) == [], text
        if tool_choice == "echo":
            assert [c.name for c in Hermes().parse_calls(text)] == ["echo"], text
    assert processor.tokens_fed <= budget
