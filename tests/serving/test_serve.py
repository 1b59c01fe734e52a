"""``tooldec serve`` on the embedded SmolLM2, over HTTP on 127.0.0.1, with the official openai client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from .helpers import ADD, TOOLS, WEATHER, assert_no_call_text, check_calls, http

MODEL = "SmolLM2-135M-Instruct.Q4_1"
WEATHER_Q = [{"role": "user", "content": "What is the weather like in Paris today?"}]
ADD_Q = [{"role": "user", "content": "What is 12 plus 30?"}]


@pytest.fixture(scope="module")
def client(serve_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{serve_url}/v1", api_key="unused", max_retries=0, timeout=300)


def ask(client: openai.OpenAI, messages: list[dict[str, Any]], **options: Any) -> Any:
    options.setdefault("max_tokens", 64)
    options.setdefault("temperature", 0)
    return client.chat.completions.create(model=MODEL, messages=messages, **options)  # type: ignore[arg-type]


def test_models_and_health(client: openai.OpenAI, serve_url: str) -> None:
    assert [m.id for m in client.models.list()] == [MODEL]
    status, health = http("GET", f"{serve_url}/health")
    assert status == 200 and health["status"] == "ok"


def test_required_returns_valid_tool_calls(client: openai.OpenAI) -> None:
    answer = ask(client, WEATHER_Q, tools=TOOLS, tool_choice="required")
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = check_calls(choice.message.tool_calls, TOOLS)
    assert calls
    assert_no_call_text(choice.message.content)
    assert answer.usage.completion_tokens > 0 and answer.usage.prompt_tokens > 0


def test_named_tool_is_called_first(client: openai.OpenAI) -> None:
    answer = ask(client, WEATHER_Q, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "add"}})
    calls = check_calls(answer.choices[0].message.tool_calls, TOOLS)
    assert calls and calls[0][0] == "add"


def test_auto_calls_are_tool_calls_never_content(client: openai.OpenAI) -> None:
    for messages in (WEATHER_Q, ADD_Q, [{"role": "user", "content": "Say hello."}]):
        message = ask(client, messages, tools=TOOLS, tool_choice="auto").choices[0].message
        check_calls(message.tool_calls, TOOLS)
        assert_no_call_text(message.content)


def test_parallel_calls_on_and_off(client: openai.OpenAI) -> None:
    question = [{"role": "user", "content": "What is the weather in Paris, in London and in Rome?"}]
    several = ask(client, question, tools=TOOLS, tool_choice="required", max_tokens=160)
    assert len(check_calls(several.choices[0].message.tool_calls, TOOLS)) >= 1
    one = ask(client, question, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=160)
    assert len(check_calls(one.choices[0].message.tool_calls, TOOLS)) == 1
    assert one.choices[0].finish_reason == "tool_calls" and one.usage.completion_tokens < 160  # ends with its call


def test_tool_choice_none_and_no_tools_give_text(client: openai.OpenAI) -> None:
    for options in ({"tools": TOOLS, "tool_choice": "none"}, {}):
        message = ask(client, WEATHER_Q, max_tokens=24, **options).choices[0].message
        assert not message.tool_calls
        assert message.content


def test_budget_never_cuts_a_call(client: openai.OpenAI) -> None:
    """A budget just above the shortest call: the model would write a long city name, the
    budget makes it close the call in time, so the call is complete and valid."""
    question = [{"role": "user", "content": "Weather in Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch?"}]
    answer = ask(client, question, tools=[WEATHER], tool_choice="required", max_tokens=30)
    assert len(check_calls(answer.choices[0].message.tool_calls, [WEATHER])) >= 1
    assert answer.usage.completion_tokens <= 30


def test_tool_result_round_trip(client: openai.OpenAI) -> None:
    first = ask(client, WEATHER_Q, tools=TOOLS, tool_choice="required").choices[0].message
    call = first.tool_calls[0]
    history = [*WEATHER_Q, first.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": 21})}]
    answer = ask(client, history, tools=TOOLS, tool_choice="none", max_tokens=32)
    assert answer.choices[0].message.content


def assemble(stream: Any) -> tuple[str, list[tuple[str, str]], str | None, list[dict[str, Any]]]:
    """Put a streamed answer together as a client does: content, calls by index, the finish."""
    content, calls, finish, raw = "", {}, None, []
    for chunk in stream:
        raw.append(chunk.model_dump())
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for part in delta.tool_calls or []:
            entry = calls.setdefault(part.index, {"id": None, "name": "", "arguments": ""})
            if part.id:
                entry["id"] = part.id
            if part.function and part.function.name:
                entry["name"] += part.function.name
            if part.function and part.function.arguments:
                entry["arguments"] += part.function.arguments
        finish = chunk.choices[0].finish_reason or finish
    assert all(entry["id"] for entry in calls.values())
    return content, [(c["name"], c["arguments"]) for _, c in sorted(calls.items())], finish, raw


@pytest.mark.parametrize("choice", ["required", "auto", "none"])
def test_stream_assembled_equals_non_stream(client: openai.OpenAI, choice: str) -> None:
    whole = ask(client, WEATHER_Q, tools=TOOLS, tool_choice=choice).choices[0]
    content, calls, finish, raw = assemble(ask(client, WEATHER_Q, tools=TOOLS, tool_choice=choice, stream=True))
    assert content == (whole.message.content or "")
    assert calls == [(c.function.name, c.function.arguments) for c in whole.message.tool_calls or []]
    assert finish == whole.finish_reason
    assert raw[0]["choices"][0]["delta"]["role"] == "assistant"
    if calls:  # OpenAI's shape: the call's id, type and name with empty arguments first
        first_call = next(c for c in raw if c["choices"] and c["choices"][0]["delta"].get("tool_calls"))
        part = first_call["choices"][0]["delta"]["tool_calls"][0]
        assert part["index"] == 0 and part["type"] == "function" and part["function"]["arguments"] == ""


def test_stream_usage_chunk(client: openai.OpenAI) -> None:
    chunks = list(ask(client, ADD_Q, tools=TOOLS, tool_choice="required", stream=True,
                      stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0


def post(serve_url: str, body: Any) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http("POST", f"{serve_url}/v1/chat/completions", data)


@pytest.mark.parametrize(("body", "status", "words"), [
    (b'{"model": "x", "messages": [', 400, "not valid JSON"),
    ({"model": "gpt-4o", "messages": WEATHER_Q}, 404, "does not exist"),
    ({"model": MODEL, "messages": WEATHER_Q, "max_tokens": 0}, 400, "max_tokens"),
    ({"model": MODEL, "messages": WEATHER_Q, "max_tokens": 5, "tools": TOOLS, "tool_choice": "required"},
     400, "the shortest call needs"),
    ({"model": MODEL, "messages": []}, 400, "messages"),
    ({"model": MODEL, "messages": WEATHER_Q, "n": 2}, 400, "not supported"),
    ({"model": MODEL, "messages": WEATHER_Q, "tools": [WEATHER, WEATHER]}, 400, "already in the set"),
    ({"model": MODEL, "messages": WEATHER_Q, "tools": TOOLS, "tool_choice": {
        "type": "function", "function": {"name": "nope"}}}, 400, "'nope'"),
    ({"model": MODEL, "messages": WEATHER_Q, "tools": [{"type": "function", "function": {
        "name": "bad", "parameters": {"type": "object", "properties": {"x": {"type": "strnig"}}}}}]},
     400, "'bad'"),
    ({"model": MODEL, "messages": WEATHER_Q, "tools": [{"type": "function", "function": {
        "name": "neg", "parameters": {"type": "object", "properties": {"x": {"type": "array", "contains": {"type": "string"}}}}}}]},
     400, "'contains'"),
])
def test_bad_requests_get_4xx_with_a_clear_message(serve_url: str, body: Any, status: int, words: str) -> None:
    got, answer = post(serve_url, body)
    assert got == status, answer
    error = answer["error"]
    assert words in error["message"], error
    assert error["type"] == "invalid_request_error"


def test_bad_schema_through_the_openai_client(client: openai.OpenAI) -> None:
    bad = {"type": "function", "function": {"name": "bad", "parameters": {"type": "object", "properties": {
        "x": {"type": "string", "minLength": -1}}}}}
    with pytest.raises(openai.BadRequestError, match="bad"):
        ask(client, WEATHER_Q, tools=[bad])


def test_unknown_route_and_method(serve_url: str) -> None:
    assert http("GET", f"{serve_url}/v1/nothing")[0] == 404
    assert http("GET", f"{serve_url}/v1/chat/completions")[0] == 405


def test_fifty_concurrent_requests_from_another_process(serve_url: str, tmp_path: Path) -> None:
    """A bounded load: 50 requests at once from a second process, with different tool lists."""
    out = tmp_path / "load.json"
    script = Path(__file__).with_name("load_client.py")
    subprocess.run([sys.executable, str(script), "--base-url", f"{serve_url}/v1", "--model", MODEL,
                    "--requests", "50", "--out", str(out)], check=True, timeout=1800)
    results = json.loads(out.read_text())
    assert len(results) == 50
    assert [r["index"] for r in sorted(results, key=lambda r: r["index"])] == list(range(50))
    for result in results:
        assert result["error"] is None, result
        tools = result["tools"]
        known = {t["function"]["name"] for t in tools}
        for name, _arguments in result["calls"]:
            assert name in known
        assert result["valid"], result
    assert sum(1 for r in results if r["calls"]) >= 25  # half of them were tool_choice=required
    assert http("GET", f"{serve_url}/health")[1]["status"] == "ok"
    assert ask(openai.OpenAI(base_url=f"{serve_url}/v1", api_key="unused"), ADD_Q, tools=[ADD],
               tool_choice="required").choices[0].message.tool_calls
