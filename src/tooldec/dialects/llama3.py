"""Llama 3.1 / 3.3 JSON tool calls: ``{"name": "f", "parameters": {...}}``, as Meta's chat
template asks for custom tools (the built-in tools' ``<|python_tag|>`` code calls are not covered)."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import JsonObjectDialect, Opener, Refusal, ToolCall, json_ws, near_miss
from .hermes import json_object_opener, typed_opener
from .scanning import NAME_KEY, JsonForm
from .scanning import WS as _WS

__all__ = ["Llama3Json"]

TAG, OBJECT, TYPED = 0, 1, 2
_FORMS = {  # per opener, the group: the text that commits to it (JSON whitespace, as the openers take it)
    "python_tag": JsonForm(re.compile(r"<\|python_tag\|>(?=(" + _WS + "(?:" + NAME_KEY + ")?))")),  # the tag alone
    "object": JsonForm(re.compile("(?=(" + NAME_KEY + "))")),
    "typed": JsonForm(re.compile(r'(?=(\{' + _WS.join(['', '"type"', ':', '"function"', ',', '"name"']) + "))")),
}


class Llama3Json(JsonObjectDialect):
    """``{"name": "f", "parameters": {"a": 1}}`` anywhere in the output; results as ``ipython`` turns.

    Openers: ``python_tag``, ``object`` (``{"name": "`` anywhere) and ``typed``
    (``{"type": "function", "name": "``); after the tag, ``json.dumps`` spacing.

    Examples:
        >>> text = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
        >>> [(c.name, dict(c.arguments)) for c in Llama3Json().parse_calls(text)]
        [('get_weather', {'city': 'Paris'})]
        >>> Llama3Json().format_call(ToolCall("get_weather", {"city": "Paris"}))
        '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    """

    name: ClassVar[str] = "llama3_json"
    arguments_in_tail: ClassVar[bool] = True
    trigger: ClassVar[str | None] = '{"name": "'
    head: ClassVar[bytes] = b""
    tail_literal: ClassVar[bytes] = b'", "parameters": '
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    json_forms = _FORMS

    def refusals(self) -> tuple[Refusal, ...]:
        """The near miss of the ``object`` opener (``{"name}``), where it is in use."""
        if any(o.name == "object" for o in self.openers()):
            return (Refusal("near_miss", lambda nfa: near_miss(nfa, indent=False)),)
        return ()

    def declared_openers(self) -> tuple[Opener, ...]:
        return (
            Opener("python_tag", TAG, tag="<|python_tag|>"),
            Opener("object", OBJECT, text=lambda nfa: json_object_opener(nfa, fenced=False), head=True),
            Opener("typed", TYPED, text=lambda nfa: typed_opener(nfa, nested=False), head=True),
        )

    def tag_head(self) -> bytes:
        return b'{"name": "'

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``", "parameters": {...}}``; ``next_call`` is ignored (one call per object)."""
        return nfa.seq(nfa.literal(b'", "parameters": '), self.arguments(nfa, tool), nfa.literal(b"}"))

    def call_tail(self, nfa: NFA, tool: Tool, *, form: int, next_call: bool) -> Frag:
        if form == TAG:
            return self.tail(nfa, tool, next_call=next_call)
        key = nfa.alt(nfa.literal(b'"parameters"'), nfa.literal(b'"arguments"'))
        return nfa.seq(*self.loose_arguments(nfa, tool, form, key), json_ws(nfa), nfa.literal(b"}"))

    def make_call(self, item: Any) -> ToolCall | None:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        arguments = item.get("parameters", item.get("arguments"))
        if not isinstance(arguments, dict):
            return None
        return ToolCall(item["name"], arguments)

    def render_result(self, call: ToolCall, result: str) -> str:
        """The result text as the ``ipython`` message content (the template adds the header)."""
        return result

    def format_call(self, call: ToolCall) -> str:
        return json.dumps({"name": call.name, "parameters": dict(call.arguments)}, ensure_ascii=False)
