"""vLLM's ``tooldec`` tool parser on its own (no server): a dialect with a named opener (Pythonic's
``[name(`` at a line start) finds calls after text by the request's tool names, streaming and not,
as the logits processor constrains them (run in .venv-vllm: ``make test-vllm``)."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest, ChatCompletionToolsParam

from tooldec.serving.vllm.args import KEY, ToolDecArgs
from tooldec.serving.vllm.tool_parser import ToolDecToolParser

from .helpers import WEATHER, vllm_model

pytestmark = pytest.mark.vllm
TEXT = 'See [1] and:\n[len(x)]\n[get_weather(city="Paris")]'
BEFORE = "See [1] and:\n[len(x)]\n"  # [len( is at a line start too, but len is no tool of the request


@pytest.fixture()
def parser(monkeypatch: pytest.MonkeyPatch) -> ToolDecToolParser:
    monkeypatch.setenv("TOOLDEC_DIALECT", "pythonic")
    monkeypatch.setenv("TOOLDEC_OPENERS", "start,call")
    tokenizer = AutoTokenizer.from_pretrained(vllm_model())
    return ToolDecToolParser(tokenizer, [ChatCompletionToolsParam(**WEATHER)])


def request() -> ChatCompletionRequest:
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER])


def test_the_request_carries_the_dialect_and_its_openers(parser: ToolDecToolParser) -> None:
    args = ToolDecArgs.parse(parser.adjust_request(request()).vllm_xargs[KEY])
    assert (args.dialect, args.openers) == ("pythonic", ("start", "call"))
    assert args.make_dialect().named_openers


def test_a_named_call_after_text_is_a_tool_call(parser: ToolDecToolParser) -> None:
    found = parser.extract_tool_calls(TEXT, request())
    assert found.tools_called
    assert [(c.function.name, c.function.arguments) for c in found.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    assert found.content == BEFORE


def test_streamed_the_call_bytes_never_reach_the_content(parser: ToolDecToolParser) -> None:
    content, calls, previous = "", [], ""
    for end in range(1, len(TEXT) + 1):
        current = TEXT[:end]
        delta = parser.extract_tool_calls_streaming(previous, current, current[len(previous):], [], [], [], request())
        previous = current
        if delta is not None:
            content += delta.content or ""
            calls += [(c.function.name, c.function.arguments) for c in delta.tool_calls]
    assert content == BEFORE
    assert calls == [("get_weather", '{"city": "Paris"}')]
