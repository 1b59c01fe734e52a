"""Shared pieces of the serving tests: tool definitions, HTTP without extra packages, server
processes on free ports of 127.0.0.1, and the validation every returned call must pass."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "The city name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}
ADD = {"type": "function", "function": {
    "name": "add", "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}
TOOLS = [WEATHER, ADD]


SERVED = "SmolLM2-135M-Instruct.Q4_1"
"""The model id of the in-process servers (``served``)."""


def service_on(llama: tuple[Any, Any], *, max_queue: int = 8, parallel: int = 1, prompt_cache: Any = None,
               jump_forward: bool = True, **settings: Any) -> Any:
    """``tooldec serve``'s :class:`Service` over the session's SmolLM2 (the ``smollm2_llama``
    fixture), ``parallel`` > 1: in a context of its own of 1024 positions per slot, as
    ``--parallel``, its slots' prompts kept in ``prompt_cache`` if given; without
    ``jump_forward``: as ``--no-jump-forward``; ``settings``: :class:`Settings` fields."""
    from tooldec.backends.llamabatch import SlotBatch
    from tooldec.backends.llamacpp import LlamaCppGenerator
    from tooldec.dialects import Hermes
    from tooldec.serving.app import Service, Settings
    from tooldec.serving.batching import BatchWorker
    from tooldec.serving.engine import Constraints
    from tooldec.serving.worker import Worker

    generator, tokenizer = llama
    if not jump_forward:
        generator = LlamaCppGenerator(generator.model, tokenizer, generator.vocab, mask_worker=generator.mask_worker,
                                      jump_forward=False)
    constraints = Constraints(generator.vocab, Hermes())
    worker = (BatchWorker(generator, SlotBatch(generator.model, parallel, 1024 * parallel, prompt_cache), constraints,
                          max_queue=max_queue) if parallel > 1 else Worker(generator, constraints, max_queue=max_queue))
    return Service(SERVED, tokenizer, worker, constraints, Settings(**settings))


@contextmanager
def served(llama: tuple[Any, Any], *, api_key: str | None = None, **options: Any) -> Iterator[Any]:
    """A Starlette ``TestClient`` on the app of ``service_on(llama, **options)``, its worker
    running; the service is ``client.service``."""
    from starlette.testclient import TestClient

    from tooldec.serving.app import create_app

    service = service_on(llama, **options)
    with TestClient(create_app(service, api_key=api_key), raise_server_exceptions=False) as client:
        client.service = service
        yield client


@contextmanager
def served_on_a_port(llama: tuple[Any, Any], shutdown_timeout: float | None = None,
                     **options: Any) -> Iterator[tuple[str, Any, Any]]:
    """The same app under uvicorn on a free port of 127.0.0.1, in a thread of this process (real
    sockets: a client can hang up); ``(host:port, service, uvicorn server)``."""
    import threading

    import uvicorn

    from tooldec.serving.app import create_app

    service = service_on(llama, **options)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=shutdown_timeout))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < end:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield f"127.0.0.1:{port}", service, server
    finally:
        server.should_exit = True
        thread.join(60)


def wait_until(check: Any, timeout: float = 30.0) -> None:
    """Poll ``check()`` until it is true; fail after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "the condition did not come true in time"
        time.sleep(0.01)


def assert_openai_error(response: Any, status: int, words: str) -> dict[str, Any]:
    """``response`` is OpenAI's error object with ``status``, its message containing ``words``."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert words in error["message"], error
    assert error["type"] == ("invalid_request_error" if status < 500 else "server_error"), error
    return dict(error)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(method: str, url: str, body: bytes | None = None, timeout: float = 60) -> tuple[int, Any]:
    """One HTTP request with the standard library: ``(status, decoded JSON body or text)``."""
    request = urllib.request.Request(url, data=body, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, data = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, data = error.code, error.read()
    try:
        return status, json.loads(data)
    except json.JSONDecodeError:
        return status, data.decode(errors="replace")


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Poll ``url`` until it answers 200; fail with the server's log if it dies or times out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if http("GET", url, timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    process.terminate()
    pytest.fail(f"the server did not answer {url} within {timeout} s:\n{log.read_text()[-4000:]}")


def start_process(argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    return subprocess.Popen(list(argv), stdout=handle, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})}, cwd=Path(__file__).parents[2])


def stop_process(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def check_calls(calls: Sequence[Any] | None, tools: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every call names a tool of ``tools`` and its arguments parse and validate; returns them."""
    known = schemas(tools)
    out = []
    for call in calls or []:
        assert call.type == "function"
        assert call.id
        assert call.function.name in known, f"unknown tool {call.function.name!r}"
        arguments = json.loads(call.function.arguments)
        jsonschema.validate(arguments, known[call.function.name])
        out.append((call.function.name, arguments))
    return out


def assert_no_call_text(content: str | None) -> None:
    """A call never comes back as content (docs/DESIGN.md, invariant 3)."""
    text = content or ""
    assert "<tool_call>" not in text and '{"name"' not in text, text


REPO = Path(__file__).parents[2]
VLLM_MODEL = REPO / ".cache" / "models" / "smollm2-135m-instruct-hf"
"""SmolLM2-135M-Instruct as safetensors, written by ``make vllm`` (scripts/convert_gguf.py)."""


def vllm_model() -> Path:
    if not (VLLM_MODEL / "model.safetensors").is_file():
        pytest.fail(f"{VLLM_MODEL} is missing: run `make vllm`")
    return VLLM_MODEL


def calls_in_text(text: str, tools: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The Hermes calls written in ``text``, each checked: a tool of ``tools``, arguments valid."""
    from tooldec.dialects import Hermes

    known = schemas(tools)
    out = []
    scan = Hermes().scan(text)  # every form the dialect declares: tagged, fenced, bare
    for call in scan.calls:
        assert call.name in known, f"unknown tool {call.name!r} in {text!r}"
        jsonschema.validate(dict(call.arguments), known[call.name])
        out.append((call.name, dict(call.arguments)))
    assert not scan.broken, f"a call did not parse: {text!r}"
    return out


def distinct_tools(index: int) -> list[dict[str, Any]]:
    """A tool list of its own for request ``index``: its names exist in no other list."""
    return [
        {"type": "function", "function": {"name": f"weather_{index}", "description": "Current weather in a city.",
                                          "parameters": {"type": "object", "properties": {
                                              "city": {"type": "string", "maxLength": 20}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": f"add_{index}", "description": "Add two integers.",
                                          "parameters": {"type": "object", "properties": {
                                              "a": {"type": "integer"}, "b": {"type": "integer"}},
                                              "required": ["a", "b"]}}},
        *({"type": "function", "function": {"name": f"extra_{index}_{k}", "description": f"Tool {k}.",
                                            "parameters": {"type": "object", "properties": {
                                                "flag": {"type": "boolean"}}}}} for k in range(index % 4)),
    ]
