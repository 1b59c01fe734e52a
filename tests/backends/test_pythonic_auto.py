"""Auto mode with the Pythonic ``call`` opener on the real SmolLM2-135M (llama.cpp, greedy).

SmolLM2 does not write a Pythonic call after text on its own (asked about the weather it
answers in prose), so the answer's first line and a ``[`` are fed as tokens, to the model and to
the machine alike, as a chat client's earlier text would be. From there the model writes: the
tool name and ``(`` are its own (free text: nothing forces them), the ``(`` commits, and the
rest is masked; a ``[`` that leads to prose stays prose.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pytest

from tooldec.backends import generator_for
from tooldec.decoding import Grammar, Machine, Mode
from tooldec.dialects import Pythonic
from tooldec.runtime import Conversation
from tooldec.tools import ToolSet


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Current weather in a city."""
    return {"city": city, "temperature": 21, "unit": unit}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TOOLS = ToolSet([get_weather, add])
DIALECT = Pythonic(openers=["call"])


def answer(question: str, forced: str, budget: int = 60) -> tuple[str, list[Mode], Machine]:
    """Greedy auto-mode decoding after ``forced`` (fed as tokens): the text, the mode after each
    generated token, and the machine."""
    pytest.importorskip("llama_cpp", reason="the llama extra is not installed")
    from .test_llamacpp import loaded

    model, tokenizer, vocab = loaded()
    generator = generator_for(model, tokenizer, vocab)
    prompt = Conversation(tokenizer, TOOLS, DIALECT, [{"role": "user", "content": question}]).prompt_text()
    ids = list(tokenizer.encode(prompt, add_special_tokens=False))
    machine = Machine(Grammar(TOOLS, vocab, DIALECT), tool_choice="auto")
    for tid in vocab.longest_match(forced.encode()):
        assert machine.advance(tid)
        ids.append(tid)
    assert machine.advanced.mode is Mode.TEXT
    generated: list[int] = []
    modes: list[Mode] = []
    while len(generated) < budget and not machine.is_done():
        logits = generator.next_logits(ids)[: vocab.size]
        allowed = machine.allowed_token_ids(budget=budget - len(generated))
        token = int(allowed[np.argmax(logits[allowed])])
        assert machine.advance(token)
        ids.append(token)
        generated.append(token)
        modes.append(machine.advanced.mode)
    text = vocab.decode([t for t in generated if t not in vocab.eos_ids]).decode("utf-8", errors="replace")
    return forced + text, modes, machine


def test_a_pythonic_call_after_text_is_constrained_parsed_and_valid() -> None:
    text, modes, machine = answer("What is the weather in Paris?", "Let me look that up.\n[")
    assert Mode.TOOL in modes and machine.advanced.calls_completed == 1, text  # the model's own name and ( opened it
    scan = DIALECT.scan(text)
    assert len(scan.calls) == 1 and scan.broken == [], text
    call = scan.calls[0]
    assert call.name in TOOLS and not TOOLS[call.name].validate_arguments(call.arguments), text


def test_a_bracket_that_becomes_prose_stays_free() -> None:
    text, modes, machine = answer("What is 1234 plus 5678?", "I will work it out.\n[")
    if machine.advanced.calls_completed:  # the model may call ``add``; then the call must be valid
        calls = DIALECT.parse_calls(text)
        assert calls and not any(TOOLS[c.name].validate_arguments(c.arguments) for c in calls), text
    else:
        assert Mode.TOOL not in modes and DIALECT.scan(text).broken == [], text
