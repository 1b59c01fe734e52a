"""``Executor``: whatever a tool does, the loop gets a record back, in time."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tooldec.dialects import ToolCall
from tooldec.runtime import Executor, clean_text, describe_exception, serialize_result
from tooldec.tools import Tool

RELEASED = threading.Event()


def explode(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"boom {x}")


def nap(seconds: float) -> str:
    """Sleeps until released (or ``seconds`` passed)."""
    RELEASED.wait(seconds)
    return "awake"


def make_set(x: int) -> Any:
    """Returns something JSON cannot write."""
    return {x, x + 1}


def nested_object(x: int) -> Any:
    """A JSON-looking result with an object deep inside."""
    return {"values": [x, object()]}


def describe(x: int) -> Any:
    """Returns prose, a number, or structured data."""
    return {1: "one", 2: 2.5, 3: {"a": [1, None, True]}}[x]


def run(fn: Any, **arguments: Any) -> Any:
    return Executor(timeout=5).run(Tool.from_function(fn), ToolCall(fn.__name__, arguments))


def test_an_exception_becomes_the_observation() -> None:
    record = run(explode, x=3)
    assert not record.ok and record.result is None
    assert record.observation == "error: explode raised RuntimeError: boom 3"


def test_a_tool_that_sleeps_past_the_timeout_does_not_block() -> None:
    RELEASED.clear()
    start = time.perf_counter()
    record = Executor(timeout=0.2).run(Tool.from_function(nap), ToolCall("nap", {"seconds": 60}))
    took = time.perf_counter() - start
    assert not RELEASED.is_set()  # the tool is still sleeping: run returned without waiting for it
    RELEASED.set()
    assert record.error == "nap timed out after 0.2 s"
    assert record.seconds == pytest.approx(took, abs=0.05)


@pytest.mark.parametrize(("fn", "kind"), [(make_set, "set"), (nested_object, "object")])
def test_a_result_json_cannot_write_becomes_an_error(fn: Any, kind: str) -> None:
    record = run(fn, x=1)
    assert record.observation == f"error: result of {fn.__name__} is not JSON-serialisable (object of type {kind})"


@pytest.mark.parametrize(("x", "text"), [(1, "one"), (2, "2.5"), (3, '{"a": [1, null, true]}')])
def test_results_are_given_back_as_text(x: int, text: str) -> None:
    record = run(describe, x=x)
    assert record.ok and record.result == text == record.observation


@pytest.mark.parametrize("value", [float("nan"), [1.0, float("inf")]])
def test_nan_and_infinity_are_not_json(value: Any) -> None:
    assert serialize_result("f", value) == (None, "result of f is not JSON-serialisable (NaN or infinity)")


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


class Items(dict):  # type: ignore[type-arg]
    """A mapping whose items cannot be listed (json calls ``items()`` on a dict subclass)."""

    def items(self) -> Any:
        raise PermissionError("items are private")


def deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def circular() -> Any:
    value: dict[str, Any] = {"name": "loop"}
    value["self"] = value
    return value


def unprintable_error() -> Any:
    raise Unprintable()


def exits() -> Any:
    raise SystemExit(3)


@pytest.mark.parametrize(("make", "observation"), [
    (lambda: "bad \udc80 text", "bad \ufffd text"),  # a lone surrogate no tokenizer can encode
    (lambda: ["ok \ud83d\ude00", "\ud800"], '["ok \U0001f600", "\ufffd"]'),
    (lambda: deep(200_000), "error: result of hostile is not JSON-serialisable (nested too deeply)"),
    (circular, "error: result of hostile is not JSON-serialisable (it contains itself)"),
    (lambda: Items(a=1), "error: result of hostile is not JSON-serialisable (PermissionError: items are private)"),
    (lambda: 10**5000, "error: result of hostile is not JSON-serialisable (ValueError: Exceeds the limit (4300 digits) "
                       "for integer string conversion; use sys.set_int_max_str_digits() to increase the limit)"),
    (lambda: {(1, 2): "tuple key"}, "error: result of hostile is not JSON-serialisable (TypeError: keys must be str, "
                                    "int, float, bool or None, not tuple)"),
    (unprintable_error, "error: hostile raised Unprintable (its message cannot be read: RuntimeError)"),
    (exits, "error: hostile raised SystemExit: 3"),
])
def test_hostile_results_become_observations(make: Any, observation: str) -> None:
    def hostile() -> Any:
        """Returns or raises something awkward."""
        return make()

    record = Executor(timeout=30).run(Tool.from_function(hostile), ToolCall("hostile", {}))
    assert record.observation == observation
    record.observation.encode("utf-8")  # what the tokenizer will get is valid text


def test_a_tool_can_report_its_own_failure() -> None:
    from tooldec.errors import ToolCallError

    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ToolCallError(f"GET {url}: HTTP 503 Service Unavailable")

    record = run(fetch, url="http://127.0.0.1:9/")
    assert record.observation == "error: GET http://127.0.0.1:9/: HTTP 503 Service Unavailable"


def test_describe_exception_never_raises() -> None:
    assert describe_exception(Unprintable()) == "Unprintable (its message cannot be read: RuntimeError)"
    assert describe_exception(KeyError("k")) == "KeyError: 'k'"
    assert describe_exception(ValueError()) == "ValueError"
    assert clean_text("\udc80\ud83d\ude00") == "\ufffd\U0001f600"


def test_a_tool_without_a_function_is_an_error_not_a_crash() -> None:
    tool = Tool.from_dict({"name": "remote", "parameters": {"type": "object", "properties": {}}})
    record = Executor().run(tool, ToolCall("remote", {}))
    assert record.error is not None and "has no function to run" in record.error


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_the_timeout_must_be_positive(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        Executor(timeout=timeout)
