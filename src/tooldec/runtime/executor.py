"""Running one tool call so that nothing the tool does can stop the loop.

Each call runs in its own daemon thread, and the loop waits at most ``timeout`` seconds for it.
A thread is used rather than a process because tools are arbitrary Python callables (closures,
lambdas, bound methods) that a process pool would have to pickle; the price is that a tool that
overruns cannot be killed, only abandoned: it keeps running in the background, and, being a
daemon thread, never keeps the interpreter from exiting.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..dialects.base import ToolCall
from ..tools import Tool
from .trace import CallRecord

__all__ = ["Executor", "serialize_result"]

_TYPE_IN_MESSAGE = re.compile(r"Object of type (\S+) is not JSON serializable")


def serialize_result(name: str, value: Any) -> tuple[str | None, str | None]:
    """Turn a tool's return value into the text the model reads.

    A string is given back as it is (a tool that returns prose should not see it quoted);
    anything else as JSON.

    Args:
        name: The tool's name, for the error message.
        value: What the tool returned.

    Returns:
        ``(text, None)``, or ``(None, error)`` when the value has no JSON form.

    Examples:
        >>> serialize_result("add", 5)
        ('5', None)
        >>> serialize_result("add", {1, 2})
        (None, 'result of add is not JSON-serialisable (object of type set)')
    """
    if isinstance(value, str):
        return value, None
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False), None
    except ValueError:  # allow_nan=False: JSON has no NaN or infinity
        return None, f"result of {name} is not JSON-serialisable (NaN or infinity)"
    except TypeError as err:
        match = _TYPE_IN_MESSAGE.search(str(err))
        what = f"object of type {match.group(1)}" if match else str(err)
        return None, f"result of {name} is not JSON-serialisable ({what})"


class Executor:
    """Runs tools with a timeout and turns every outcome into a :class:`CallRecord`.

    Args:
        timeout: Seconds to wait for a tool before giving up on it (must be > 0).

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
        """Run ``tool`` with the call's arguments; never raises for what the tool does.

        Args:
            tool: The tool to run (its ``fn`` is called with the arguments by keyword).
            call: The parsed call.

        Returns:
            The record: the serialised result, or the error (exception, timeout, a result that
            is not JSON-serialisable, a tool without a function).
        """
        outcome: dict[str, Any] = {}
        arguments: Mapping[str, Any] = call.arguments

        def work() -> None:
            try:
                outcome["value"] = tool(**arguments)
            except BaseException as err:  # noqa: BLE001 - a tool's failure is an observation
                outcome["error"] = err

        start = time.perf_counter()
        worker = threading.Thread(target=work, name=f"tooldec-tool-{tool.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        seconds = time.perf_counter() - start
        if worker.is_alive():
            return CallRecord(call, None, f"{tool.name} timed out after {self.timeout:g} s", seconds)
        if "error" in outcome:
            err = outcome["error"]
            return CallRecord(call, None, f"{tool.name} raised {type(err).__name__}: {err}", seconds)
        text, error = serialize_result(tool.name, outcome.get("value"))
        return CallRecord(call, text, error, seconds)
