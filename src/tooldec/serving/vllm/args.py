"""What a request tells tooldec inside vLLM: its tools, tool choice, parallel calls, dialect.

It travels in ``SamplingParams.extra_args["tooldec"]`` as one JSON string (the OpenAI API's
``vllm_xargs`` only carries strings, numbers and lists of them). With the ``tooldec`` tool
parser (``--tool-call-parser tooldec``) the server copies the request's own ``tools`` and
``tool_choice`` there, so a client sends its tools once, as it would to OpenAI. Without it, or
offline, :func:`extra_body` and :func:`extra_args` build the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...dialects import DIALECTS, Hermes
from ..engine import tools_key

__all__ = ["KEY", "ToolDecArgs", "extra_args", "extra_body"]

KEY = "tooldec"
"""The key of ``SamplingParams.extra_args`` (and ``vllm_xargs``) that carries the arguments."""


@dataclass(frozen=True)
class ToolDecArgs:
    """One request's constraint, parsed and checked for shape (the tools are checked apart).

    Attributes:
        tools: Tool definitions (OpenAI, MCP, Anthropic or plain dicts).
        tool_choice: ``"auto"``, ``"required"``, ``"none"`` or a tool name.
        parallel_tool_calls: Several calls in one answer.
        dialect: How the model writes calls (a name in ``tooldec.dialects.DIALECTS``).
        key: Cache key of the tool list.
    """

    tools: tuple[Mapping[str, Any], ...]
    tool_choice: str
    parallel_tool_calls: bool
    dialect: str
    key: str

    @classmethod
    def parse(cls, value: Any) -> ToolDecArgs:
        """Read the ``tooldec`` extra argument (a JSON string or an already decoded mapping).

        Raises:
            ValueError: Malformed JSON or a field of the wrong type; the message names it.
        """
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(f"extra_args[{KEY!r}] is not valid JSON: {error}") from error
        if not isinstance(value, Mapping):
            raise ValueError(f"extra_args[{KEY!r}] must be a JSON object, got {type(value).__name__}")
        tools = value.get("tools") or []
        if not isinstance(tools, list) or not all(isinstance(t, Mapping) for t in tools):
            raise ValueError(f"extra_args[{KEY!r}]['tools'] must be a list of tool definitions")
        choice = _choice(value.get("tool_choice", "auto"))
        parallel = value.get("parallel_tool_calls", True)
        if not isinstance(parallel, bool):
            raise ValueError(f"extra_args[{KEY!r}]['parallel_tool_calls'] must be a boolean")
        dialect = value.get("dialect", Hermes.name)
        if dialect not in DIALECTS:
            raise ValueError(f"extra_args[{KEY!r}]['dialect'] {dialect!r} is unknown; known: {', '.join(sorted(DIALECTS))}")
        return cls(tuple(tools), choice, parallel, str(dialect), tools_key(tools))

    def to_json(self) -> str:
        return json.dumps({"tools": list(self.tools), "tool_choice": self.tool_choice,
                           "parallel_tool_calls": self.parallel_tool_calls, "dialect": self.dialect},
                          ensure_ascii=False)


def _choice(value: Any) -> str:
    """``"auto"``/``"required"``/``"none"``, a tool name, or OpenAI's named-function object."""
    if isinstance(value, Mapping):
        function = value.get("function")
        value = function.get("name") if isinstance(function, Mapping) else value.get("name")
    if not isinstance(value, str) or not value:
        raise ValueError(f"extra_args[{KEY!r}]['tool_choice'] must be auto, required, none or a tool name")
    return value


def extra_args(tools: Sequence[Mapping[str, Any]], tool_choice: Any = "auto", *,
               parallel_tool_calls: bool = True, dialect: str = Hermes.name) -> dict[str, str]:
    """``SamplingParams(extra_args=...)`` for vLLM's offline ``LLM``.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        >>> ToolDecArgs.parse(extra_args(tools, "required")[KEY]).tool_choice
        'required'
    """
    return {KEY: ToolDecArgs.parse({"tools": list(tools), "tool_choice": tool_choice,
                                    "parallel_tool_calls": parallel_tool_calls, "dialect": dialect}).to_json()}


def extra_body(tools: Sequence[Mapping[str, Any]], tool_choice: Any = "auto", *,
               parallel_tool_calls: bool = True, dialect: str = Hermes.name) -> dict[str, Any]:
    """The official ``openai`` client's ``extra_body`` for a vLLM server run without the
    ``tooldec`` tool parser: ``client.chat.completions.create(..., extra_body=extra_body(tools))``.
    """
    return {"vllm_xargs": extra_args(tools, tool_choice, parallel_tool_calls=parallel_tool_calls, dialect=dialect)}
