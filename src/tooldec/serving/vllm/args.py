"""What a request tells tooldec inside vLLM: its tools, tool choice, parallel calls, dialect, as
one JSON string in ``SamplingParams.extra_args["tooldec"]`` (``vllm_xargs`` carries only strings,
numbers and lists). The tool parser writes it; without it, :func:`extra_body` and :func:`extra_args`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...dialects import DIALECTS, Dialect, Hermes, get_dialect
from ..engine import tools_key

__all__ = ["KEY", "ToolDecArgs", "extra_args", "extra_body", "opener_names", "text_key"]

KEY = "tooldec"
"""The key of ``SamplingParams.extra_args`` (and ``vllm_xargs``) that carries the arguments."""


@dataclass(frozen=True)
class ToolDecArgs:
    """One request's constraint, parsed and checked for shape (the tools are checked apart).

    Attributes:
        dialect: A name in ``tooldec.dialects.DIALECTS``.
        key: Cache key: :func:`text_key` when it came as JSON text, else
            :func:`~tooldec.serving.engine.tools_key` of the tools.
        openers, forced: The openers in auto mode, and those a required or named call opens with
            (``None``: the dialect's own).
    """

    tools: tuple[Mapping[str, Any], ...]
    tool_choice: str
    parallel_tool_calls: bool
    dialect: str
    key: str
    openers: tuple[str, ...] | None = None
    forced: tuple[str, ...] | None = None

    @property
    def dialect_key(self) -> str:
        """The dialect and its openers, as one cache key."""
        key = self.dialect if self.openers is None else f"{self.dialect}:{','.join(self.openers)}"
        return key if self.forced is None else f"{key}:forced={','.join(self.forced)}"

    def make_dialect(self) -> Dialect:
        return get_dialect(self.dialect, openers=None if self.openers is None else list(self.openers),
                           forced=None if self.forced is None else list(self.forced))

    @classmethod
    def parse(cls, value: Any) -> ToolDecArgs:
        """Read the ``tooldec`` extra argument (JSON text or a mapping); a ``ValueError`` names a bad field."""
        key = None
        if isinstance(value, (str, bytes)):
            key = text_key(value)
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
        openers = _openers(value.get("openers"), str(dialect))
        forced = _openers(value.get("forced"), str(dialect), openers, field="forced")
        return cls(tuple(tools), choice, parallel, str(dialect), key or tools_key(tools), openers, forced)

    def to_json(self) -> str:
        value: dict[str, Any] = {"tools": list(self.tools), "tool_choice": self.tool_choice,
                                 "parallel_tool_calls": self.parallel_tool_calls, "dialect": self.dialect}
        if self.openers is not None:
            value["openers"] = list(self.openers)
        if self.forced is not None:
            value["forced"] = list(self.forced)
        return json.dumps(value, ensure_ascii=False)


def text_key(value: str | bytes) -> str:
    """The key of arguments sent as JSON text: a hash of the text, cheaper than writing a thousand
    tools out again in canonical JSON; the same tools in another text meet again in the compiler's cache."""
    data = value.encode() if isinstance(value, str) else value
    return "text:" + hashlib.sha256(data).hexdigest()


def opener_names(text: str | None) -> list[str] | None:
    """Opener names written comma-separated (``"start,call"``: an option or environment
    variable), ``None`` when none are given (the dialect's default openers)."""
    names = [name for name in (text or "").split(",") if name]
    return names or None


def _openers(value: Any, dialect: str, in_use: tuple[str, ...] | None = None, *,
             field: str = "openers") -> tuple[str, ...] | None:
    """A list of the dialect's opener names, or ``None``; a name it does not declare (for
    ``forced``: one not among ``in_use``) is refused."""
    if value is None:
        return None
    if isinstance(value, str):
        value = opener_names(value) or []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"extra_args[{KEY!r}][{field!r}] must be a non-empty list of opener names")
    try:
        if field == "forced":
            get_dialect(dialect, openers=None if in_use is None else list(in_use), forced=value)
        else:
            get_dialect(dialect, openers=value)
    except ValueError as error:
        raise ValueError(f"extra_args[{KEY!r}][{field!r}]: {error}") from error
    return tuple(value)


def _choice(value: Any) -> str:
    """``"auto"``/``"required"``/``"none"``, a tool name, or OpenAI's named-function object."""
    if isinstance(value, Mapping):
        function = value.get("function")
        value = function.get("name") if isinstance(function, Mapping) else value.get("name")
    if not isinstance(value, str) or not value:
        raise ValueError(f"extra_args[{KEY!r}]['tool_choice'] must be auto, required, none or a tool name")
    return value


def extra_args(tools: Sequence[Mapping[str, Any]], tool_choice: Any = "auto", *,
               parallel_tool_calls: bool = True, dialect: str = Hermes.name,
               openers: Sequence[str] | None = None, forced: Sequence[str] | None = None) -> dict[str, str]:
    """``SamplingParams(extra_args=...)`` for vLLM's offline ``LLM``.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        >>> ToolDecArgs.parse(extra_args(tools, "required")[KEY]).tool_choice
        'required'
    """
    return {KEY: ToolDecArgs.parse({"tools": list(tools), "tool_choice": tool_choice,
                                    "parallel_tool_calls": parallel_tool_calls, "dialect": dialect,
                                    "openers": None if openers is None else list(openers),
                                    "forced": None if forced is None else list(forced)}).to_json()}


def extra_body(tools: Sequence[Mapping[str, Any]], tool_choice: Any = "auto", *,
               parallel_tool_calls: bool = True, dialect: str = Hermes.name,
               openers: Sequence[str] | None = None, forced: Sequence[str] | None = None) -> dict[str, Any]:
    """The official ``openai`` client's ``extra_body`` for a vLLM server run without the
    ``tooldec`` tool parser: ``client.chat.completions.create(..., extra_body=extra_body(tools))``.
    """
    return {"vllm_xargs": extra_args(tools, tool_choice, parallel_tool_calls=parallel_tool_calls, dialect=dialect,
                                     openers=openers, forced=forced)}
