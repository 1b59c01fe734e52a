"""Choosing the call format from a model's own tokens and chat template (``dialect_for``)."""

from __future__ import annotations

import pytest

from tooldec.dialects import dialect_for
from tooldec.errors import UnknownDialectError
from tooldec.models import smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import Vocabulary


def vocab_of(*tokens: str, special: tuple[str, ...] = ()) -> Vocabulary:
    texts = ["a", "b", *tokens]
    return Vocabulary.from_tokens([*texts, *special], special={len(texts) + i: t for i, t in enumerate(special)})


@pytest.mark.parametrize(("tokens", "special", "template", "expected"), [
    ((), ("<|channel|>", "<|constrain|>", "<|call|>", "<|message|>"), "", "gpt_oss"),
    ((), ("<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>"), "", "deepseek_v31"),
    ((), ("<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"), "", "kimi_k2"),
    ((), ("<tool_call>", "<arg_key>", "<arg_value>"), "", "glm45"),
    ((), ("<minimax:tool_call>",), "", "minimax_m2"),
    ((), ("[TOOL_CALLS]", "[ARGS]"), "", "mistral_tekken"),
    ((), ("[TOOL_CALLS]",), "", "mistral"),
    (("<tool_call>", "<think>"), (), "{{ '<tool_call>\\n<function=' }}<parameter=", "qwen3_coder"),
    (("<tool_call>", "<think>"), (), "", "qwen3"),
    (("<tool_call>",), (), "", "hermes"),
    ((), ("<|python_start|>",), "", "pythonic"),
    ((), ("<|python_tag|>",), "", "llama3_json"),
    ((), ("<start_of_turn>",), "", "pythonic"),
])
def test_each_family_is_recognised(tokens: tuple[str, ...], special: tuple[str, ...], template: str, expected: str) -> None:
    assert dialect_for(vocab_of(*tokens, special=special), template=template).name == expected


def test_real_models_and_tokenizers() -> None:
    assert dialect_for(smollm2_gguf_path()).name == "hermes"  # ChatML: tooldec's prompts write Hermes
    assert dialect_for(tokenizer_json_path("qwen3")).name == "qwen3"
    assert dialect_for(tokenizer_json_path("llama3")).name == "llama3_json"


def test_an_unknown_family_is_a_clear_error() -> None:
    with pytest.raises(UnknownDialectError, match="name one .* among: deepseek_v31, glm45, gpt_oss, hermes"):
        dialect_for(vocab_of("<bos>"))
