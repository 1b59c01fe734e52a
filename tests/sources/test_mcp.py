"""``MCPSource`` against a real MCP server written with the SDK (tests/sources/mcp_server.py),
over stdio and over streamable HTTP on 127.0.0.1, and in a turn of the real SmolLM2."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tooldec.dialects import ToolCall
from tooldec.errors import ToolCallError, ToolSourceError, UnsupportedSchemaError
from tooldec.runtime import Executor, ToolDecoder
from tooldec.sources import MCPSource

from .conftest import MCP_SERVER

USABLE = ["add", "capital", "weather", "only_structured", "divide", "sleepy", "shout", "show_variable"]


@pytest.fixture(scope="module")
def stdio() -> Iterator[MCPSource]:
    with MCPSource(MCP_SERVER, timeout=20) as source:
        yield source


def observe(source: MCPSource, name: str, **arguments: Any) -> str:
    tool = next(t for t in source.tools if t.name == name)
    return Executor(timeout=30).run(tool, ToolCall(name, arguments)).observation


def test_tools_are_listed_and_a_refused_schema_is_reported_alone(stdio: MCPSource) -> None:
    assert [tool.name for tool in stdio.tools] == USABLE
    (refused,) = stdio.refused
    assert refused.name == "expand" and isinstance(refused.error, UnsupportedSchemaError)
    assert (refused.error.pointer, refused.error.keyword) == ("/properties/template/format", "format")
    add = stdio.tools[0]
    assert add.description == "Add two integers."
    assert add.parameters == {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                              "required": ["a", "b"]}


@pytest.mark.parametrize(("name", "arguments", "observation"), [
    ("add", {"a": 2, "b": 3}, "5"),
    ("capital", {"country": "Japan"}, "Tokyo"),
    ("weather", {"city": "Paris"}, '{"city": "Paris", "temperature": 21, "sky": "clear"}'),  # structured, compact
    ("only_structured", {"n": 4}, '{"n": 4, "square": 16}'),
    ("shout", {"text": "hi"}, "HI\n!"),
    ("divide", {"a": 1, "b": 0}, "error: Error executing tool divide: cannot divide by zero"),  # isError, as the SDK words it
])
def test_results_become_observations(stdio: MCPSource, name: str, arguments: dict[str, Any], observation: str) -> None:
    assert observe(stdio, name, **arguments) == observation


def test_a_call_the_server_rejects_is_an_error(stdio: MCPSource) -> None:
    with pytest.raises(ToolCallError, match="validation error"):
        stdio.call("add", {"a": "two"})
    with pytest.raises(ToolCallError, match="Unknown tool: missing"):
        stdio.call("missing", {})


def test_over_streamable_http(mcp_http_url: str) -> None:
    with MCPSource(mcp_http_url, timeout=20) as source:
        assert [tool.name for tool in source.tools] == USABLE
        assert observe(source, "add", a=40, b=2) == "42"
        assert observe(source, "divide", a=1, b=0) == "error: Error executing tool divide: cannot divide by zero"


def test_a_slow_call_times_out_and_the_session_goes_on() -> None:
    with MCPSource(MCP_SERVER, timeout=1, connect_timeout=30) as source:
        with pytest.raises(ToolCallError, match="no answer within 1 s"):
            source.call("sleepy", {"seconds": 5})
        assert source.call("add", {"a": 1, "b": 1}) == "2"


def test_a_server_that_does_not_start() -> None:
    with pytest.raises(ToolSourceError, match="No such file or directory"):
        MCPSource("/no/such/mcp-server --flag")
    crash = [sys.executable, "-c", "import sys; print('missing API token', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(ToolSourceError, match="its stderr ends with:\nmissing API token"):
        MCPSource(crash, timeout=20)
    with pytest.raises(ToolSourceError, match="no answer within 1 s"):
        MCPSource([sys.executable, "-c", "import time; time.sleep(30)"], connect_timeout=1)


def test_a_stdio_server_gets_the_sdk_environment_and_the_env_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library passes what ``env`` names over the SDK's minimal environment, as Claude
    Desktop does: a variable set only in this process does not reach the server."""
    monkeypatch.setenv("TOOLDEC_TEST_VARIABLE", "from-the-shell")
    with MCPSource(MCP_SERVER, timeout=20) as source:
        assert source.call("show_variable", {}) == "unset unset"
    with MCPSource(MCP_SERVER, env={"TOOLDEC_TEST_OTHER": "given"}, timeout=20) as source:
        assert source.call("show_variable", {}) == "unset given"


def test_a_closed_source_reports_calls_as_errors() -> None:
    source = MCPSource(MCP_SERVER, timeout=20)
    add = source.tools[0]
    source.close()
    record = Executor(timeout=5).run(add, ToolCall("add", {"a": 1, "b": 2}))
    assert record.error is not None and "is not connected" in record.error


def test_a_turn_calls_the_server(stdio: MCPSource, smollm2_model: tuple[Any, Any, Any]) -> None:
    model, tokenizer, vocab = smollm2_model
    decoder = ToolDecoder(model, tokenizer, stdio.tools, vocab=vocab, tool_choice="capital", max_calls_per_turn=1,
                          max_new_tokens=48)
    result = decoder.run([{"role": "user", "content": "What is the capital of Kenya?"}])
    (record,) = result.calls
    assert record.call.name == "capital" and record.ok
    assert record.result == {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}[record.call.arguments["country"]]
