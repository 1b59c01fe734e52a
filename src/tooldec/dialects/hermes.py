"""Hermes / Qwen 2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``,
and the ways these models write calls without the tag (fenced or bare objects, the OpenAI tool shape)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import (
    DEFAULT,
    Anchor,
    DefaultType,
    JsonObjectDialect,
    Opener,
    Reasoning,
    Refusal,
    ToolCall,
    json_space,
    json_ws,
    line_indent,
    near_miss,
)
from .scanning import NAME_KEY, JsonForm
from .scanning import WS as _WS

__all__ = ["Hermes", "json_object_opener", "typed_opener"]

TAG, FENCED, BARE, FENCED_OPENAI, OPENAI = 0, 1, 2, 3, 4
_FENCE = r"```(?:json|tool_call)?[ \t]*\n" + _WS
_NAME = "(" + NAME_KEY + ")"  # the text the object openers commit at
_OPENAI = r'(\{' + _WS.join(['', '"type"', ':', '"function"', ',', '"function"', ':', r'\{', '"name"']) + ')'


def _unwrap(item: Any) -> ToolCall | None:
    """``{"type": "function", "function": {"name": ..., "arguments": {...}}}`` as a call."""
    if not isinstance(item, dict) or item.get("type") != "function" or set(item) != {"type", "function"}:
        return None
    return _call(item["function"])


def _form(start: str, *, fenced: bool = False, make: Callable[[Any], Any | None] | None = None) -> JsonForm:
    end = re.compile(_WS + r"```") if fenced else None
    return JsonForm(re.compile(start), end, lenient_end=fenced, make=make)


_FORMS = {  # per opener: where its object starts (the group: the text that commits to it)
    # the tag commits alone (the mask then writes the head): a tag followed by prose, or by
    # nothing, is a broken call too
    "tag": JsonForm(re.compile(r"<tool_call>(?=(" + _WS + "(?:" + NAME_KEY + ")?))"), re.compile(_WS + r"</tool_call>"),
                    lenient_end=True),
    "fenced": _form(_FENCE + "(?=" + _NAME + ")", fenced=True),
    "bare": _form(r"(?:^|(?<=\n))[ \t]*(?=" + _NAME + ")"),
    "fenced_openai": _form(_FENCE + "(?=" + _OPENAI + ")", fenced=True, make=_unwrap),
    "openai": _form("(?=" + _OPENAI + ")", make=_unwrap),
    "inline": _form("(?=" + _NAME + ")"),
}


def _fence(nfa: NFA) -> list[Frag]:
    """A ````` ```json ````` (or ``tool_call``, or bare) fence line and any whitespace after it."""
    lang = nfa.optional(nfa.alt(nfa.literal(b"json"), nfa.literal(b"tool_call")))
    return [nfa.literal(b"```"), lang, line_indent(nfa), nfa.literal(b"\n"), json_space(nfa)]


def json_object_opener(nfa: NFA, *, fenced: bool, indent: bool = True) -> Frag:
    """``{"name"`` (any whitespace), the bytes that commit to a JSON call object; after a fence
    line when ``fenced``, else after indentation when ``indent``."""
    parts = []
    if fenced:
        parts += _fence(nfa)
    elif indent:  # indentation only: a line of whitespace is a line, and the next one starts afresh
        parts.append(line_indent(nfa))
    parts += [nfa.literal(b"{"), json_space(nfa), nfa.literal(b'"name"')]
    return nfa.seq(*parts)


def typed_opener(nfa: NFA, *, fenced: bool = False, nested: bool = True) -> Frag:
    """``{"type": "function", "function": {"name"`` (the OpenAI tool shape; ``nested=False``:
    Llama 3's flat one), any JSON whitespace, after a fence line when ``fenced``."""
    parts = _fence(nfa) if fenced else []
    for piece in (b"{", b'"type"', b":", b'"function"', b","):
        parts += [nfa.literal(piece), json_space(nfa)]
    if nested:
        for piece in (b'"function"', b":", b"{"):
            parts += [nfa.literal(piece), json_space(nfa)]
    parts.append(nfa.literal(b'"name"'))
    return nfa.seq(*parts)


class Hermes(JsonObjectDialect):
    """The format of Qwen 2.5 and Hermes models; results go back as ``tool`` chat messages.

    Openers, all in use by default, the first listed winning a tie: ``tag`` (``<tool_call>``;
    ``layout="inline"``: no newlines), ``fenced``, ``bare`` (at a line start), ``fenced_openai``,
    ``openai`` (the OpenAI tool shape) and ``inline`` (a ``{"name"`` object anywhere), as
    docs/call-formats.md, "What counts as a call in auto mode", lists them.

    A call that must come first opens with the tag alone (``forced=`` picks others): offered the
    fence, the Qwen2.5-Coder models write one call where the tag leads them to write several
    (docs/RESULTS.md, "BFCL"). A tagged call left unclosed at the end of the output counts (Qwen
    models often stop there, and vLLM's Hermes parser accepts it).

    Examples:
        >>> text = '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
        >>> [(c.name, dict(c.arguments)) for c in Hermes().parse_calls(text)]
        [('get_weather', {'city': 'Paris'})]
        >>> Hermes().format_call(ToolCall("get_weather", {"city": "Paris"})) == text
        True
        >>> fenced = 'Sure:\\n```json\\n{\\n  "name": "get_weather",\\n  "arguments": {"city": "Oslo"}\\n}\\n```'
        >>> [c.name for c in Hermes().parse_calls(fenced)], Hermes(openers=["tag"]).parse_calls(fenced)
        (['get_weather'], [])
        >>> typed = '{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}'
        >>> [(c.name, dict(c.arguments)) for c in Hermes().parse_calls("return " + typed)]
        [('f', {'x': 1})]
        >>> [c.name for c in Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}}')]
        ['f']
        >>> Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}} and more')
        []
    """

    name: ClassVar[str] = "hermes"
    arguments_in_tail: ClassVar[bool] = True
    trigger: ClassVar[str | None] = "<tool_call>"
    head: ClassVar[bytes] = b'\n{"name": "'
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    tail_literal: ClassVar[bytes] = b'", "arguments": '
    default_forced: ClassVar[tuple[str, ...] | None] = ("tag",)
    json_forms = _FORMS

    def __init__(self, *, openers: list[str] | tuple[str, ...] | None = None,
                 forced: list[str] | tuple[str, ...] | None = None,
                 layout: Literal["newlines", "inline"] = "newlines",
                 reasoning: Reasoning | None | DefaultType = DEFAULT) -> None:
        if layout not in ("newlines", "inline"):
            raise ValueError(f"layout must be 'newlines' or 'inline', got {layout!r}")
        self.layout = layout
        super().__init__(openers=openers, forced=forced, reasoning=reasoning)

    def options(self) -> dict[str, Any]:
        out = super().options()
        if self.layout != "newlines":
            out["layout"] = self.layout
        return out

    def declared_openers(self) -> tuple[Opener, ...]:
        return (
            Opener("tag", TAG, tag="<tool_call>"),
            Opener("fenced", FENCED, text=lambda nfa: json_object_opener(nfa, fenced=True), head=True),
            Opener("bare", BARE, text=lambda nfa: json_object_opener(nfa, fenced=False), anchor=Anchor.LINE, head=True),
            Opener("fenced_openai", FENCED_OPENAI, text=lambda nfa: typed_opener(nfa, fenced=True), head=True),
            Opener("openai", OPENAI, text=lambda nfa: typed_opener(nfa), head=True),
            Opener("inline", BARE, text=lambda nfa: json_object_opener(nfa, fenced=False, indent=False), head=True),
        )

    def refusals(self) -> tuple[Refusal, ...]:
        """``<tool_response>`` (only a tool writes a result), and the object openers' near misses."""
        found = [Refusal("result", tag="<tool_response>")]
        names = {o.name for o in self.openers()}
        if "inline" in names:
            found.append(Refusal("near_miss", lambda nfa: near_miss(nfa, indent=False)))
        elif "bare" in names:
            found.append(Refusal("near_miss", lambda nfa: near_miss(nfa, indent=True), anchor=Anchor.LINE))
        return tuple(found)

    @property
    def _newline(self) -> bytes:
        return b"\n" if self.layout == "newlines" else b""

    def tag_head(self) -> bytes:
        return self._newline + b'{"name": "'

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        return nfa.seq(nfa.literal(b'", "arguments": '), self.arguments(nfa, tool),
                       nfa.literal(b"}" + self._newline + b"</tool_call>"))

    def call_tail(self, nfa: NFA, tool: Tool, *, form: int, next_call: bool) -> Frag:
        if form == TAG:
            return self.tail(nfa, tool, next_call=next_call)
        key = nfa.alt(nfa.literal(b'"arguments"'), nfa.literal(b'"parameters"'))
        parts = [*self.loose_arguments(nfa, tool, form, key), json_ws(nfa), nfa.literal(b"}")]
        if form in (FENCED_OPENAI, OPENAI):  # the outer object
            parts += [json_ws(nfa), nfa.literal(b"}")]
        if form in (FENCED, FENCED_OPENAI):
            parts += [json_ws(nfa), nfa.literal(b"```")]
        return nfa.seq(*parts)

    def value_stops(self) -> tuple[str, ...]:
        """``</tool_call>`` too: vLLM's parser ends a call at the first one, even inside a string."""
        return ("</tool_call>", *super().value_stops())

    def make_call(self, item: Any) -> ToolCall | None:
        return _call(item)

    def render_result(self, call: ToolCall, result: str) -> str:
        return f"<tool_response>\n{result}\n</tool_response>"

    def format_call(self, call: ToolCall) -> str:
        """The call as Qwen's chat template writes it (and as the grammar does)."""
        data = json.dumps({"name": call.name, "arguments": dict(call.arguments)}, ensure_ascii=False)
        newline = self._newline.decode()
        return f"<tool_call>{newline}{data}{newline}</tool_call>"


def _call(item: Any) -> ToolCall | None:
    """A decoded ``{"name": ..., "arguments": {...}}`` (or ``"parameters"``) as a call."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    arguments = item.get("arguments", item.get("parameters"))
    if arguments is None and set(item) == {"name"}:
        arguments = {}
    if not isinstance(arguments, dict):
        return None
    return ToolCall(item["name"], arguments)
