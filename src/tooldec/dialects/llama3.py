"""Llama 3.1 / 3.3 JSON tool calls: ``{"name": "f", "parameters": {...}}``.

Meta's chat template asks for custom tools "in the format {"name": function name, "parameters":
dictionary of argument name and its value}"; the model writes that object (sometimes after
``<|python_tag|>``) and ends the turn, and results come back as ``ipython`` messages. The
``<|python_tag|>`` code calls of the built-in tools (``brave_search.call(query=...)``) are a
different format and are not covered here.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import Dialect, ToolCall

__all__ = ["Llama3Json"]

_START = re.compile(r'\{\s*"name"\s*:')
_DECODER = json.JSONDecoder()


class Llama3Json(Dialect):
    """``{"name": "f", "parameters": {"a": 1}}`` anywhere in the output; results as ``ipython`` turns.

    The trigger is the text ``{"name": "`` itself: it is matched in the byte stream, so the call
    may open the reply, follow ``<|python_tag|>``, or follow some words. After the name the
    grammar is ``", "parameters": `` + the arguments (``json.dumps`` spacing) + ``}``.
    ``parse_calls`` also accepts ``"arguments"`` for ``"parameters"``, which fine-tunes write.

    Examples:
        >>> text = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
        >>> [(c.name, dict(c.arguments)) for c in Llama3Json().parse_calls(text)]
        [('get_weather', {'city': 'Paris'})]
        >>> Llama3Json().format_call(ToolCall("get_weather", {"city": "Paris"}))
        '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    """

    name: ClassVar[str] = "llama3_json"
    trigger: ClassVar[str | None] = '{"name": "'
    head: ClassVar[bytes] = b""
    tail_literal: ClassVar[bytes] = b'", "parameters": '
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``", "parameters": {...}}``; ``next_call`` is ignored (one call per object)."""
        return nfa.seq(nfa.literal(b'", "parameters": '), self.arguments(nfa, tool), nfa.literal(b"}"))

    def parse_calls(self, text: str) -> list[ToolCall]:
        calls = []
        position = 0
        while (match := _START.search(text, position)) is not None:
            try:
                data, end = _DECODER.raw_decode(text, match.start())
            except json.JSONDecodeError:
                position = match.end()
                continue
            position = end
            arguments = data.get("parameters", data.get("arguments")) if isinstance(data, dict) else None
            if isinstance(data, dict) and isinstance(data["name"], str) and isinstance(arguments, dict):
                calls.append(ToolCall(data["name"], arguments))
        return calls

    def render_result(self, call: ToolCall, result: str) -> str:
        """The result text as the ``ipython`` message content (the template adds the header)."""
        return result

    def format_call(self, call: ToolCall) -> str:
        return json.dumps({"name": call.name, "parameters": dict(call.arguments)}, ensure_ascii=False)
