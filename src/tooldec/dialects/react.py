"""ReAct calls as ToolBench's ToolLLaMA writes them: ``Action: name\\nAction Input: {json}``.

A ReAct step (Yao et al., 2023) is a thought, an action and its input; ToolBench (Qin et al.,
2023) fixes the input as a JSON object, read as its ``react_parser`` reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import ClassVar

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import Dialect, ToolCall

__all__ = ["ReAct"]

_ACTION = re.compile(r"Action:[ \t]*([^\n]*?)[ \t]*\nAction Input:[ \t]*")
_DECODER = json.JSONDecoder()


class ReAct(Dialect):
    """``Action: name\\nAction Input: {"a": 1}\\n``, then ``Observation: result\\n``.

    The arguments are one line of JSON (``json.dumps`` spacing). ToolLLaMA saw them pretty-printed,
    which ``parse_calls`` reads but the grammar does not write, and its template returns results
    as a ``Function:`` turn, which a runtime serving it passes instead of ``render_result``.

    Examples:
        >>> text = ('Thought: I need the weather.\\nAction: get_weather\\n'
        ...         'Action Input: {"city": "Paris", "unit": "celsius"}\\n')
        >>> [(c.name, dict(c.arguments)) for c in ReAct().parse_calls(text)]
        [('get_weather', {'city': 'Paris', 'unit': 'celsius'})]
        >>> ReAct().render_result(ReAct().parse_calls(text)[0], '{"temperature": 21}')
        'Observation: {"temperature": 21}\\n'
    """

    name: ClassVar[str] = "react"
    trigger: ClassVar[str | None] = "Action: "
    head: ClassVar[bytes] = b""
    tail_literal: ClassVar[bytes] = b"\nAction Input: "
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    stop_after_call: ClassVar[bool] = True

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``\\nAction Input: {...}\\n``; ``next_call`` is ignored (one action per step)."""
        return nfa.seq(nfa.literal(b"\nAction Input: "), self.arguments(nfa, tool), nfa.literal(b"\n"))

    def read_calls(self, text: str, tools: Mapping[str, Tool] | None = None) -> list[ToolCall]:
        calls = []
        for match in _ACTION.finditer(text):
            try:
                arguments, _ = _DECODER.raw_decode(text, match.end())
            except json.JSONDecodeError:
                continue
            if match.group(1) and isinstance(arguments, dict):
                calls.append(ToolCall(match.group(1), arguments))
        return calls

    def render_result(self, call: ToolCall, result: str) -> str:
        return f"Observation: {result}\n"

    def format_call(self, call: ToolCall) -> str:
        """The call as the grammar writes it (arguments in the order of ``call.arguments``)."""
        return f"Action: {call.name}\nAction Input: {json.dumps(dict(call.arguments), ensure_ascii=False)}\n"
