"""``next_logits`` on both backends and the backtrace baseline built on it, with the real SmolLM2.

``next_logits`` is what ToolkenGPT's backtrace (the ``repair`` baseline) uses to take the next
most probable token where a failed call began; its argmax must be the token greedy decoding
takes, on transformers and on llama.cpp.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from benchmarks.paper.experiments.repair import BacktraceGenerator, first_failed_call
from tooldec.backends import generator_for
from tooldec.dialects import ToolkenGPT
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

PROMPT = "Question: What is 12 plus 30?\nAnswer: 12+30="


def _generator(backend: str, smollm2_model: tuple[Any, Any, Vocabulary]) -> Any:
    if backend == "transformers":
        return generator_for(*smollm2_model)
    pytest.importorskip("llama_cpp", reason="the llama extra is not installed")
    from .test_llamacpp import loaded

    return generator_for(*loaded())


@pytest.mark.parametrize("backend", ["transformers", "llamacpp"])
def test_the_argmax_of_next_logits_is_the_greedy_token(backend: str, smollm2_model: tuple[Any, Any, Vocabulary]) -> None:
    generator = _generator(backend, smollm2_model)
    ids = list(generator.tokenizer.encode(PROMPT, add_special_tokens=False))
    logits = generator.next_logits(ids)
    assert logits.ndim == 1 and logits.shape[0] >= generator.vocab.size
    assert int(np.argmax(logits[: generator.vocab.size])) == generator.generate(ids, max_new_tokens=1).ids[0]


def test_backtrace_takes_back_a_call_to_a_missing_tool(smollm2_model: tuple[Any, Any, Vocabulary]) -> None:
    """With only ``multiply`` known, SmolLM2's ``<add>(...)`` (or whatever call it writes first
    that fails) is taken back: the token that began it is banned there and generation goes on."""

    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    tools = ToolSet([multiply])
    dialect = ToolkenGPT(tools)
    inner = _generator("llamacpp", smollm2_model)
    prompt = "".join(f"Question: What is {a} plus {b}?\nAnswer: {a}+{b}=<add>({a}, {b})={a + b}\n"
                     for a, b in ((2, 3), (7, 8), (4, 9))) + "Question: What is 12 plus 30?\nAnswer: 12+30="
    ids = list(inner.tokenizer.encode(prompt, add_special_tokens=False))
    plain = inner.generate(ids, max_new_tokens=24)
    plain_text = inner.vocab.decode(plain.ids).decode("utf-8", errors="replace")
    assert first_failed_call(plain_text, dialect, tools) is not None, plain_text  # the premise: a call fails
    backtrace = BacktraceGenerator(inner, tools, dialect)
    repaired = backtrace.generate(ids, max_new_tokens=24)
    assert backtrace.backtracks >= 1
    assert repaired.ids != plain.ids
