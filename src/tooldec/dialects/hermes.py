"""Hermes / Qwen 2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``."""

from __future__ import annotations

import json
import re
from typing import ClassVar

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import Dialect, ToolCall

__all__ = ["Hermes"]

_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


class Hermes(Dialect):
    """The format of Qwen 2.5 and Hermes models; results go back as ``tool`` chat messages.

    Arguments are written as Qwen's chat template writes them (``json.dumps`` spacing).

    Examples:
        >>> text = '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
        >>> [(c.name, dict(c.arguments)) for c in Hermes().parse_calls(text)]
        [('get_weather', {'city': 'Paris'})]
        >>> Hermes().format_call(ToolCall("get_weather", {"city": "Paris"})) == text
        True
    """

    name: ClassVar[str] = "hermes"
    trigger: ClassVar[str | None] = "<tool_call>"
    head: ClassVar[bytes] = b'\n{"name": "'
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    tail_literal: ClassVar[bytes] = b'", "arguments": '

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        return nfa.seq(nfa.literal(b'", "arguments": '), self.arguments(nfa, tool), nfa.literal(b"}\n</tool_call>"))

    def parse_calls(self, text: str) -> list[ToolCall]:
        """Every ``<tool_call>`` with a JSON object and its closing tag; also a last call left
        unclosed when the output ends right after its JSON, as Qwen models often do and as
        vLLM's Hermes parser accepts.

        Examples:
            >>> [c.name for c in Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}}')]
            ['f']
            >>> Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}} and more')
            []
        """
        bodies = [match.group(1) for match in _CALL.finditer(text)]
        closed = text.rfind("</tool_call>")
        last = text.rfind("<tool_call>")
        if last > closed:
            bodies.append(text[last + len("<tool_call>"):].strip())
        calls = []
        for body in bodies:
            try:
                data = json.loads(body)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                args = data.get("arguments", {})
                calls.append(ToolCall(data["name"], args if isinstance(args, dict) else {}))
        return calls

    def render_result(self, call: ToolCall, result: str) -> str:
        return f"<tool_response>\n{result}\n</tool_response>"

    def format_call(self, call: ToolCall) -> str:
        """The call as Qwen's chat template writes it (and as the grammar does)."""
        data = json.dumps({"name": call.name, "arguments": dict(call.arguments)}, ensure_ascii=False)
        return f"<tool_call>\n{data}\n</tool_call>"
