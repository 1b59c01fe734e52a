"""Running one tool call so that nothing the tool does can stop the loop (DESIGN invariant 6).

Each call runs in its own daemon thread, waited for at most ``timeout`` seconds: a thread, not a
process, because tools are closures, lambdas and bound methods a process pool would have to
pickle; a tool that overruns is abandoned, never killed. Serialising the result and reading an
exception's message (either can hang or raise) happen in that thread, under the same timeout.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..dialects.base import ToolCall
from ..errors import ToolCallError
from ..tools import Tool
from .trace import CallRecord

__all__ = ["Executor", "clean_text", "describe_exception", "serialize_result"]

_TYPE_IN_MESSAGE = re.compile(r"Object of type (\S+) is not JSON serializable")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (pairs of surrogates are joined).

    Examples:
        >>> clean_text("bad \\udc80 but fine \\ud83d\\ude00")
        'bad \\ufffd but fine 😀'
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def describe_exception(err: BaseException) -> str:
    """``Type: message`` of an exception, even one whose ``__str__`` raises.

    Examples:
        >>> describe_exception(ZeroDivisionError("division by zero"))
        'ZeroDivisionError: division by zero'
        >>> class Broken(Exception):
        ...     def __str__(self) -> str:
        ...         raise RuntimeError("no message")
        >>> describe_exception(Broken())
        'Broken (its message cannot be read: RuntimeError)'
    """
    name = type(err).__name__
    try:
        message = str(err)
    except BaseException as inner:
        return f"{name} (its message cannot be read: {type(inner).__name__})"
    if not isinstance(message, str):  # a str subclass with tricks, or worse
        return name
    return clean_text(f"{name}: {message}" if message else name)


def serialize_result(name: str, value: Any) -> tuple[str | None, str | None]:
    """Turn a tool's return value into the text the model reads: ``(text, None)``, or ``(None,
    error)`` when the value has no JSON form. A string is given back as it is (a tool that returns
    prose should not see it quoted); anything else as JSON.

    Examples:
        >>> serialize_result("add", 5)
        ('5', None)
        >>> serialize_result("add", {1, 2})
        (None, 'result of add is not JSON-serialisable (object of type set)')
        >>> loop: list[object] = []
        >>> loop.append(loop)
        >>> serialize_result("f", loop)
        (None, 'result of f is not JSON-serialisable (it contains itself)')
    """
    if isinstance(value, str):
        return clean_text(str.__str__(value)), None
    what = f"result of {name} is not JSON-serialisable"
    try:
        return clean_text(json.dumps(value, ensure_ascii=False, allow_nan=False)), None
    except RecursionError:
        return None, f"{what} (nested too deeply)"
    except ValueError as err:
        message = str(err)
        if "Circular reference" in message:
            return None, f"{what} (it contains itself)"
        if "Out of range float" in message:  # allow_nan=False: JSON has no NaN or infinity
            return None, f"{what} (NaN or infinity)"
        return None, f"{what} ({describe_exception(err)})"
    except TypeError as err:
        match = _TYPE_IN_MESSAGE.search(str(err))
        return None, f"{what} ({f'object of type {match.group(1)}' if match else describe_exception(err)})"
    except Exception as err:
        return None, f"{what} ({describe_exception(err)})"


class Executor:
    """Runs tools with a ``timeout`` (seconds) and turns every outcome into a :class:`CallRecord`.

    Raises:
        ValueError: ``timeout`` is not positive.

    Examples:
        >>> def divide(a: float, b: float) -> float:
        ...     '''Divide a by b.'''
        ...     return a / b
        >>> executor = Executor(timeout=5)
        >>> executor.run(Tool.from_function(divide), ToolCall("divide", {"a": 1, "b": 4})).observation
        '0.25'
        >>> executor.run(Tool.from_function(divide), ToolCall("divide", {"a": 1, "b": 0})).observation
        'error: divide raised ZeroDivisionError: division by zero'
    """

    def __init__(self, timeout: float = 10.0) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout

    def run(self, tool: Tool, call: ToolCall) -> CallRecord:
        """Run ``tool`` with the call's arguments; never raises for what the tool does. A
        :class:`ToolCallError` (a tool reporting its own failure) gives its message as the error,
        without the "raised" prefix."""
        outcome: list[tuple[str | None, str | None]] = []
        arguments: Mapping[str, Any] = call.arguments

        def work() -> None:
            try:
                value = tool(**arguments)
            except ToolCallError as err:
                outcome.append((None, describe_exception(err).partition(": ")[2] or type(err).__name__))
                return
            except BaseException as err:
                outcome.append((None, f"{tool.name} raised {describe_exception(err)}"))
                return
            outcome.append(serialize_result(tool.name, value))

        start = time.perf_counter()
        worker = threading.Thread(target=work, name=f"tooldec-tool-{tool.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        seconds = time.perf_counter() - start
        if worker.is_alive():
            return CallRecord(call, None, f"{tool.name} timed out after {self.timeout:g} s", seconds)
        if not outcome:  # the thread died on the way out (out of memory, say)
            return CallRecord(call, None, f"{tool.name} ended without a result", seconds)
        text, error = outcome[0]
        return CallRecord(call, text, error, seconds)
