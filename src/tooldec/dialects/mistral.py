"""Mistral tool calls (SentencePiece tokenizers v3 and v7): ``[TOOL_CALLS] [{"name": "f", "arguments": {...}}]``.

``[TOOL_CALLS]`` is a control token with no bytes; SentencePiece's leading ``▁`` makes the JSON
list after it start with a space, as ``mistral-common`` encodes it. The Tekken tokenizers'
``[TOOL_CALLS]name[ARGS]{...}`` (v11 on) is a different format.
"""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any, ClassVar

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..errors import InvalidToolNameError
from ..tools import Tool
from .base import NEXT_CALL, Anchor, JsonObjectDialect, Opener, Refusal, ToolCall, json_space, json_ws, line_indent
from .scanning import NAME_KEY, JsonForm
from .scanning import WS as _WS

__all__ = ["Mistral"]

_ID = re.compile(r"[A-Za-z0-9]{9}")
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ID_CHARS = [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)]
_TRIGGER = "[TOOL_CALLS]"
TAG, LIST = 0, 1
_LIST = r"\[" + _WS + NAME_KEY  # ``[{"name"``: where the list opener commits
_FORMS = {  # per opener, the group: the text that commits to it
    "tag": JsonForm(re.compile(re.escape(_TRIGGER) + "(?=(" + _WS + "(?:" + _LIST + ")?))"), list_of_calls=True),  # alone
    "list": JsonForm(re.compile(r"(?:^|(?<=\n))[ \t]*(?=(" + _LIST + "))"), list_of_calls=True),
}


def _list_opener(nfa: NFA) -> Frag:
    """``[{"name"`` at the start of a line, any JSON whitespace: a bare list of calls (``: "`` follows)."""
    return nfa.seq(line_indent(nfa), nfa.literal(b"["), json_space(nfa),
                   nfa.literal(b"{"), json_space(nfa), nfa.literal(b'"name"'))


def _new_id() -> str:
    """A call id as the v3 tokenizer requires: nine ASCII letters or digits."""
    return "".join(random.choices(string.ascii_letters + string.digits, k=9))


class Mistral(JsonObjectDialect):
    """``[TOOL_CALLS] [{"name": "f", "arguments": {...}}, ...]``: one list, one or more calls.

    A call may end with ``, "id": "<9 letters or digits>"``, as ``mistral-common`` writes the
    history; calls parsed without a valid id get a fresh one, as v3 results name their call.

    Examples:
        >>> text = ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        ...         '{"name": "get_time", "arguments": {"tz": "CET"}, "id": "a1b2c3d4e"}]')
        >>> calls = Mistral().parse_calls(text)
        >>> [(c.name, dict(c.arguments)) for c in calls], calls[1].id
        ([('get_weather', {'city': 'Paris'}), ('get_time', {'tz': 'CET'})], 'a1b2c3d4e')
        >>> Mistral().render_result(calls[1], '{"time": "12:00"}')
        '[TOOL_RESULTS] {"content": {"time": "12:00"}, "call_id": "a1b2c3d4e"}[/TOOL_RESULTS]'
    """

    name: ClassVar[str] = "mistral"
    arguments_in_tail: ClassVar[bool] = True
    trigger: ClassVar[str | None] = _TRIGGER
    head: ClassVar[bytes] = b' [{"name": "'
    tail_literal: ClassVar[bytes] = b'", "arguments": '
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    json_forms = _FORMS

    def check_tool(self, tool: Tool) -> None:
        """``InvalidToolNameError`` for a name mistral-common refuses (``math.factorial``: rename it)."""
        if _NAME.fullmatch(tool.name) is None:
            raise InvalidToolNameError(
                "Mistral tool names must match ^[a-zA-Z0-9_-]{1,64}$ (mistral-common refuses others)", tool=tool.name)

    def refusals(self) -> tuple[Refusal, ...]:
        """``[TOOL_RESULTS]``: only a tool's result comes after it."""
        return (Refusal("result", tag="[TOOL_RESULTS]"),)

    def value_stops(self) -> tuple[str, ...]:
        """``[TOOL_CALLS]`` too: vLLM's parser splits the output at it, even inside a string."""
        return (_TRIGGER, *super().value_stops())

    def declared_openers(self) -> tuple[Opener, ...]:
        return (
            Opener("tag", TAG, tag=_TRIGGER),
            Opener("list", LIST, text=_list_opener, anchor=Anchor.LINE, head=True),
        )

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        call_id = nfa.seq(
            nfa.literal(b', "id": "'), nfa.repeat(lambda: nfa.byte_ranges(_ID_CHARS), 9, 9), nfa.literal(b'"'))
        end = nfa.literal(b"]")
        if next_call:
            more = nfa.literal(b', {"name": "')
            nfa.mark(more[1], NEXT_CALL)
            end = nfa.alt(end, more)
        return nfa.seq(
            nfa.literal(b'", "arguments": '), self.arguments(nfa, tool), nfa.optional(call_id), nfa.literal(b"}"), end)

    def call_tail(self, nfa: NFA, tool: Tool, *, form: int, next_call: bool) -> Frag:
        if form == TAG:
            return self.tail(nfa, tool, next_call=next_call)

        def ws() -> Frag:
            return json_ws(nfa)

        call_id = nfa.seq(ws(), nfa.literal(b","), ws(), nfa.literal(b'"id"'), ws(), nfa.literal(b":"), ws(),
                          nfa.literal(b'"'), nfa.repeat(lambda: nfa.byte_ranges(_ID_CHARS), 9, 9), nfa.literal(b'"'))
        end = nfa.seq(ws(), nfa.literal(b"]"))
        if next_call:
            more = nfa.seq(ws(), nfa.literal(b","), ws(), nfa.literal(b"{"), ws(), nfa.literal(b'"name"'), ws(),
                           nfa.literal(b":"), ws(), nfa.literal(b'"'))
            nfa.mark(more[1], NEXT_CALL)
            end = nfa.alt(end, more)
        return nfa.seq(*self.loose_arguments(nfa, tool, form, nfa.literal(b'"arguments"')), nfa.optional(call_id),
                       ws(), nfa.literal(b"}"), end)

    def make_call(self, item: Any) -> ToolCall | None:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        arguments = item.get("arguments", {})
        if not isinstance(arguments, dict):
            return None
        call_id = item.get("id")
        if not isinstance(call_id, str) or _ID.fullmatch(call_id) is None:
            call_id = _new_id()
        return ToolCall(item["name"], arguments, id=call_id)

    def render_result(self, call: ToolCall, result: str) -> str:
        """The v3 result block; JSON results are embedded as values, as ``mistral-common`` does."""
        try:
            content: Any = json.loads(result)
        except json.JSONDecodeError:
            content = result
        block = json.dumps({"content": content, "call_id": call.id}, ensure_ascii=False)
        return f"[TOOL_RESULTS] {block}[/TOOL_RESULTS]"

    def format_call(self, call: ToolCall) -> str:
        """The call as a one-item list; the id is written when it is a valid v3 id."""
        item: dict[str, Any] = {"name": call.name, "arguments": dict(call.arguments)}
        if _ID.fullmatch(call.id):
            item["id"] = call.id
        return f"{_TRIGGER} {json.dumps([item], ensure_ascii=False)}"
