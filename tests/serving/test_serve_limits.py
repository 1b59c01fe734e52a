"""What ``tooldec serve`` takes from a client and how it refuses the rest: every fault of the
client's is a 4xx in OpenAI's error shape, never a 5xx; in-process, on the embedded SmolLM2."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .helpers import SERVED, TOOLS, assert_openai_error, served

pytest.importorskip("starlette", reason="the serve extra is not installed")

QUESTION = [{"role": "user", "content": "What is 12 plus 30?"}]
URL = "/v1/chat/completions"


@pytest.fixture(scope="module")
def client(smollm2_llama: tuple[Any, Any]) -> Any:
    with served(smollm2_llama, max_body_bytes=2**20) as client:
        yield client


def test_a_body_nested_100000_deep_is_a_400(client: Any) -> None:
    for body in ("[" * 100_000 + "]" * 100_000, '{"model": ' + '{"a":' * 100_000 + "1" + "}" * 100_001):
        assert_openai_error(client.post(URL, content=body), 400, "deeper than 64 levels")
    deep_schema = {"type": "object"}
    for _ in range(40):
        deep_schema = {"type": "object", "properties": {"x": deep_schema}}
    tool = {"type": "function", "function": {"name": "f", "parameters": deep_schema}}
    body = {"model": SERVED, "messages": QUESTION, "tools": [tool]}
    assert_openai_error(client.post(URL, json=body), 400, "deeper than 64 levels")


def test_an_oversized_body_is_a_413_before_it_is_parsed(client: Any) -> None:
    text = "x" * 2**20
    body = {"model": SERVED, "messages": [{"role": "user", "content": text}]}
    error = assert_openai_error(client.post(URL, json=body), 413, "over 1048576 bytes")
    assert error["code"] == "request_too_large"

    def chunks() -> Any:  # no content-length: counted as it arrives
        yield b'{"model": "' + b"y" * 600_000
        yield b"y" * 600_000 + b'"}'

    assert_openai_error(client.post(URL, content=chunks()), 413, "over 1048576 bytes")


@pytest.mark.parametrize(("body", "words"), [
    (b"\xff\xfe{}", "not valid JSON"),
    (b'{"model": ' + b"1" * 5000 + b"}", "not valid JSON"),
    (b"[]", "must be a JSON object"),
    (json.dumps({"model": SERVED, "messages": "hi"}).encode(), "messages must be a non-empty list"),
    (json.dumps({"model": SERVED, "messages": [{"role": 3}]}).encode(), "messages[0] must be an object"),
    (json.dumps({"model": SERVED, "messages": [{"role": "assistant", "tool_calls": 5}]}).encode(),
     "messages[0].tool_calls must be a list"),
    (json.dumps({"model": SERVED, "messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]}).encode(),
     "messages[0].tool_calls[0] must be an object"),
    (json.dumps({"model": SERVED, "messages": [{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "f", "arguments": 3}}]}]}).encode(), "function.arguments"),
    (json.dumps({"model": SERVED, "messages": [{"role": "tool", "tool_call_id": ["x"], "content": "1"}]}).encode(),
     "messages[0].tool_call_id must be a string"),
    (json.dumps({"model": SERVED, "messages": QUESTION, "tools": [5]}).encode(), "must be an object"),
    (json.dumps({"model": SERVED, "messages": QUESTION, "tools": TOOLS, "tool_choice": 7}).encode(), "tool_choice"),
    (json.dumps({"model": SERVED, "messages": QUESTION, "stream_options": 5}).encode(), "stream_options"),
    (json.dumps({"model": SERVED, "messages": QUESTION, "temperature": "hot"}).encode(), "temperature"),
])
def test_malformed_bodies_are_4xx_in_openai_shape(client: Any, body: bytes, words: str) -> None:
    assert_openai_error(client.post(URL, content=body), 400, words)


@pytest.mark.parametrize(("part", "kind"), [
    ({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}, "of type 'image_url'"),
    ({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}, "of type 'input_audio'"),
    ({"type": "file", "file": {"file_id": "file-1"}}, "of type 'file'"),
    ("just a string", "not a content part"),
])
def test_a_part_the_model_cannot_read_is_a_400_naming_it(client: Any, part: Any, kind: str) -> None:
    content = [{"type": "text", "text": "What is in this?"}, part]
    body = {"model": SERVED, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": content}]}
    error = assert_openai_error(client.post(URL, json=body), 400, f"messages[1].content[1] is {kind}")
    assert error["param"] == "messages[1].content[1]"


def test_text_parts_are_read(client: Any) -> None:
    content = [{"type": "text", "text": "What is 12 "}, {"type": "text", "text": "plus 30?"}]
    body = {"model": SERVED, "messages": [{"role": "user", "content": content}], "max_tokens": 4, "temperature": 0}
    answer = client.post(URL, json=body)
    assert answer.status_code == 200, answer.text
    as_text = client.post(URL, json={**body, "messages": QUESTION}).json()
    assert answer.json()["usage"] == as_text["usage"]
    assert answer.json()["choices"][0]["message"] == as_text["choices"][0]["message"]


def context_error(response: Any, *numbers: int) -> dict[str, Any]:
    error = assert_openai_error(response, 400, "maximum context length is 1024 tokens")
    assert error["code"] == "context_length_exceeded"
    for number in numbers:
        assert f" {number} " in error["message"] or f"({number} " in error["message"], (number, error)
    return error


def test_a_prompt_over_the_context_is_context_length_exceeded(client: Any) -> None:
    long = [{"role": "user", "content": "Count the sheep: " + "sheep " * 1500}]
    error = context_error(client.post(URL, json={"model": SERVED, "messages": long}))
    prompt = int(error["message"].split("resulted in ")[1].split()[0])
    assert prompt > 1024 and error["param"] == "messages"


def test_max_tokens_and_the_prompt_over_the_context(client: Any) -> None:
    body = {"model": SERVED, "messages": QUESTION, "temperature": 0}
    prompt = client.post(URL, json={**body, "max_tokens": 1}).json()["usage"]["prompt_tokens"]
    fits = client.post(URL, json={**body, "max_tokens": 1024 - prompt})  # prompt and budget fill the context
    assert fits.status_code == 200, fits.text
    error = context_error(client.post(URL, json={**body, "max_tokens": 1025 - prompt}), 1025, prompt, 1025 - prompt)
    assert error["param"] == "max_tokens"
    context_error(client.post(URL, json={**body, "max_completion_tokens": 5000}), prompt + 5000, prompt, 5000)


def test_a_tool_list_that_cannot_fit(client: Any) -> None:
    tools = [{"type": "function", "function": {
        "name": f"lookup_{k}", "description": f"Looks up record number {k} in the archive of the city library.",
        "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}}}} for k in range(60)]
    body = {"model": SERVED, "messages": QUESTION, "tools": tools}
    error = context_error(client.post(URL, json=body))
    assert "of them for the 60 tools" in error["message"] and "or tools" in error["message"]
    assert client.post(URL, json={**body, "tool_choice": "none", "max_tokens": 2}).status_code == 200  # not rendered
