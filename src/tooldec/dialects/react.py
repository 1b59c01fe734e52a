"""ReAct calls as ToolBench's ToolLLaMA writes them: ``Action: name\\nAction Input: {json}``.

A ReAct step (Yao et al., 2023) is ``Thought: ...``, ``Action: <tool name>``, ``Action Input:
<arguments>``; the tool runs and its result comes back as an observation, after which the model
writes the next thought. ToolBench (Qin et al., 2023) fixes the arguments as a JSON object and
parses a step with ``react_parser`` (``toolbench/inference/utils.py``): the name is the text
between ``Action: `` and ``\\nAction Input: ``, the arguments everything after ``Action Input: ``.
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

    The call is exactly ``Action: `` + name + ``\\nAction Input: `` + the arguments as one line
    of JSON (``json.dumps`` spacing) + ``\\n``; the runtime then writes ``Observation: ...\\n``
    and the model continues with its next ``Thought:``. Two differences from ToolLLaMA's
    training data are deliberate: ToolLLaMA saw arguments pretty-printed over several lines
    (``{\\n  "url": ...\\n}``), which ``parse_calls`` reads but the grammar does not write, and
    its chat template returns results as a ``Function:`` turn rather than an observation line;
    a runtime serving ToolLLaMA passes results in that role instead of ``render_result``.

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
