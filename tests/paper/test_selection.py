"""Choosing the tool by its whole name (``tooldec.runtime.selection``) on the real SmolLM2 GGUF."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from tooldec.decoding import Grammar
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path
from tooldec.runtime.selection import NameSelector
from tooldec.tools import Tool, ToolSet

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

NAMES = ("subsidiaries", "discoverer_or_inventor", "sub_orbital_speed", "population")
PROMPT = ("<|im_start|>user\nWhere was 964 Subamara discovered? Call one tool.<|im_end|>\n"
          "<|im_start|>assistant\n")


def _tool(name: str) -> Tool:
    return Tool.from_dict({"name": name, "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                                                       "required": ["name"]}})


@functools.cache
def llama() -> tuple[Any, Any, Any]:
    from tooldec.backends import load

    model, tokenizer, vocab, _ = load(smollm2_gguf_path(), "llamacpp", threads=1)
    return model, tokenizer, vocab


def _select(names: tuple[str, ...], width: int) -> tuple[Any, NameSelector, Any]:
    from tooldec.backends import generator_for

    model, tokenizer, vocab = llama()
    tools = ToolSet([_tool(n) for n in names])
    selector = NameSelector(generator_for(model, tokenizer, vocab), width=width)
    grammar = Grammar(tools, vocab, Hermes())
    ids = list(tokenizer.encode(PROMPT, add_special_tokens=False))
    generation = selector.generate(ids, max_new_tokens=60, grammar=grammar, tool_choice="required",
                                   parallel_tool_calls=False, stop_after_call=Hermes())
    text = vocab.decode([t for t in generation.ids if t not in selector.eos_ids]).decode()
    return text, selector, tools


def test_a_wide_beam_picks_the_most_probable_whole_name() -> None:
    """With room for every name, the choice is the best of the names scored one at a time."""
    alone = {}
    for name in NAMES:
        _, selector, _ = _select((name,), 16)
        (selection,) = selector.selections
        assert selection.name == name
        alone[name] = selection.logprob
    text, selector, tools = _select(NAMES, 16)
    (selection,) = selector.selections
    assert selection.name == max(alone, key=alone.__getitem__)
    assert selection.logprob == pytest.approx(max(alone.values()), abs=1e-4)
    assert [c[0] for c in selection.candidates] == sorted(alone, key=lambda n: -alone[n])[: len(selection.candidates)]
    (call,) = Hermes().parse_calls(text)
    assert call.name == selection.name and tools[call.name].validate_arguments(call.arguments) == []


def test_every_width_writes_a_valid_call() -> None:
    for width in (1, 2):
        text, selector, tools = _select(NAMES, width)
        (call,) = Hermes().parse_calls(text)
        assert call.name == selector.selections[0].name
        assert tools[call.name].validate_arguments(call.arguments) == []
        assert selector.selections[0].evaluations >= 1


def test_width_must_be_positive() -> None:
    with pytest.raises(ValueError, match="width"):
        NameSelector(object(), width=0)
