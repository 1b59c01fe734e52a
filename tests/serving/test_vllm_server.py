"""vLLM's OpenAI server with tooldec (logits processor + tool parser) on SmolLM2, driven by the
official openai client on 127.0.0.1 (run in .venv-vllm: ``make test-vllm``)."""

from __future__ import annotations

import concurrent.futures
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tooldec.serving.vllm import chat_template_path, extra_body
from tooldec.serving.vllm.stats import ENV as STEPS_ENV

from .helpers import (
    ADD,
    TOOLS,
    WEATHER,
    assert_no_call_text,
    check_calls,
    distinct_tools,
    free_port,
    http,
    start_process,
    stop_process,
    vllm_model,
    wait_healthy,
)
from .test_serve import assemble

pytestmark = pytest.mark.vllm
MODEL = "smollm2"
WEATHER_Q = [{"role": "user", "content": "What is the weather like in Paris today?"}]


@pytest.fixture(scope="module")
def vllm_steps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the server's processor logs its per-step timings (``TOOLDEC_VLLM_STATS``)."""
    return tmp_path_factory.mktemp("vllm-steps") / "steps.jsonl"


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory, vllm_steps: Path) -> Iterator[str]:
    """``vllm.entrypoints.openai.api_server`` with tooldec, named explicitly (--logits-processors)."""
    port = free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    process = start_process([
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(vllm_model()),
        "--served-model-name", MODEL, "--host", "127.0.0.1", "--port", str(port),
        "--max-model-len", "4096", "--max-num-seqs", "16", "--enforce-eager", "--kv-cache-memory-bytes", str(1 << 30),
        "--chat-template", str(chat_template_path()),
        "--logits-processors", "tooldec.serving.vllm.processor:ToolDecLogitsProcessor",
        "--enable-auto-tool-choice", "--tool-parser-plugin", "tooldec.serving.vllm.tool_parser",
        "--tool-call-parser", "tooldec"], log, env={STEPS_ENV: str(vllm_steps)})
    try:
        wait_healthy(f"http://127.0.0.1:{port}/health", process, log, timeout=900)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def client(vllm_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{vllm_url}/v1", api_key="unused", max_retries=0, timeout=600)


def ask(client: openai.OpenAI, messages: list[dict[str, Any]], **options: Any) -> Any:
    options.setdefault("max_tokens", 64)
    options.setdefault("temperature", 0)
    return client.chat.completions.create(model=MODEL, messages=messages, **options)  # type: ignore[arg-type]


def test_required_named_auto_come_back_as_tool_calls(client: openai.OpenAI) -> None:
    required = ask(client, WEATHER_Q, tools=TOOLS, tool_choice="required").choices[0]
    assert required.finish_reason in ("tool_calls", "length")  # the model may go on calling until max_tokens
    assert check_calls(required.message.tool_calls, TOOLS)
    assert_no_call_text(required.message.content)
    named = ask(client, WEATHER_Q, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "add"}})
    calls = check_calls(named.choices[0].message.tool_calls, TOOLS)
    assert calls and calls[0][0] == "add"
    for question in (WEATHER_Q, [{"role": "user", "content": "Say hello."}]):
        message = ask(client, question, tools=TOOLS, tool_choice="auto").choices[0].message
        check_calls(message.tool_calls, TOOLS)
        assert_no_call_text(message.content)


def test_parallel_calls_on_and_off(client: openai.OpenAI) -> None:
    question = [{"role": "user", "content": "What is the weather in Paris, in London and in Rome?"}]
    several = ask(client, question, tools=TOOLS, tool_choice="required", max_tokens=160)
    assert len(check_calls(several.choices[0].message.tool_calls, TOOLS)) >= 1
    one = ask(client, question, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=160)
    assert len(check_calls(one.choices[0].message.tool_calls, TOOLS)) == 1


@pytest.mark.parametrize("choice", ["required", "auto"])
def test_stream_assembled_equals_non_stream(client: openai.OpenAI, choice: str) -> None:
    whole = ask(client, WEATHER_Q, tools=TOOLS, tool_choice=choice).choices[0]
    content, calls, finish, _ = assemble(ask(client, WEATHER_Q, tools=TOOLS, tool_choice=choice, stream=True))
    assert content == (whole.message.content or "")
    assert [(n, json.loads(a)) for n, a in calls] == [
        (c.function.name, json.loads(c.function.arguments)) for c in whole.message.tool_calls or []]
    assert finish == whole.finish_reason


def test_sixteen_concurrent_requests_with_their_own_tools(client: openai.OpenAI) -> None:
    def one(index: int) -> tuple[list[dict[str, Any]], Any]:
        tools = distinct_tools(index)
        question = [{"role": "user", "content": f"What is {index} plus {2 * index}?"}]
        return tools, ask(client, question, tools=tools, tool_choice="required", max_tokens=48)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(16)))
    for tools, answer in answers:
        assert check_calls(answer.choices[0].message.tool_calls, tools)  # names only from its own list


def test_tools_in_vllm_xargs_from_the_helper(client: openai.OpenAI) -> None:
    """A client's own ``vllm_xargs["tooldec"]`` wins over the parser's copy (here: required)."""
    answer = ask(client, WEATHER_Q, tools=[ADD], tool_choice="auto", extra_body=extra_body([ADD], "required"))
    assert check_calls(answer.choices[0].message.tool_calls, [ADD])


def test_without_tools_the_request_is_untouched(client: openai.OpenAI) -> None:
    message = ask(client, [{"role": "user", "content": "Say hello."}], max_tokens=24).choices[0].message
    assert message.content and not message.tool_calls


def test_a_bad_tool_schema_is_a_400(vllm_url: str) -> None:
    bad = {"type": "function", "function": {"name": "bad", "parameters": {"type": "object", "properties": {
        "x": {"type": "array", "contains": {"type": "string"}}}}}}
    body = {"model": MODEL, "messages": WEATHER_Q, "tools": [bad], "tool_choice": "required"}
    status, answer = http("POST", f"{vllm_url}/v1/chat/completions", json.dumps(body).encode())
    assert status == 400, answer
    assert "'bad'" in json.dumps(answer) and "'contains'" in json.dumps(answer)
    assert http("GET", f"{vllm_url}/health")[0] == 200


def test_budget_closes_the_call(client: openai.OpenAI) -> None:
    question = [{"role": "user", "content": "Weather in Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch?"}]
    answer = ask(client, question, tools=[WEATHER], tool_choice="required", max_tokens=30)
    assert len(check_calls(answer.choices[0].message.tool_calls, [WEATHER])) == 1


def test_the_step_log_times_each_constrained_step(client: openai.OpenAI, vllm_steps: Path) -> None:
    before = len(vllm_steps.read_text().splitlines()) if vllm_steps.exists() else 0
    answer = ask(client, WEATHER_Q, tools=TOOLS, tool_choice="required", max_tokens=48)
    assert check_calls(answer.choices[0].message.tool_calls, TOOLS)
    steps = [json.loads(line) for line in vllm_steps.read_text().splitlines()[before:]]
    assert len(steps) >= answer.usage.completion_tokens - 1  # one line per constrained step
    assert all(s["rows"] == 1 and s["apply"] >= s["wait"] >= 0 and s["work"] > 0 for s in steps)
    timed = [s for s in steps[1:] if s["interval"] is not None]
    assert timed and sum(s["interval"] for s in timed) > sum(s["apply"] for s in timed)  # steps hold their applies
