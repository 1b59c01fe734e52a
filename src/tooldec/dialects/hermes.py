"""Hermes / Qwen 2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``,
and the two ways these models write calls without the tag."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Literal

from ..automata.json_schema import Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import Anchor, CallScan, Dialect, Opener, ToolCall, json_ws, loose_style, name_head
from .scanning import JsonForm, scan_json_calls

__all__ = ["Hermes", "json_object_opener"]

TAG, FENCED, BARE = 0, 1, 2
_WS = r"[ \t\r\n]*"
_FORMS = (
    JsonForm(re.compile(r"<tool_call>" + _WS + r"(?=\{)"), re.compile(_WS + r"</tool_call>"), lenient_end=True),
    JsonForm(re.compile(r"```(?:json|tool_call)?[ \t]*\n" + _WS + r'(?=\{\s*"name"\s*:)'), re.compile(_WS + r"```"),
             lenient_end=True),
    JsonForm(re.compile(r'(?:^|(?<=\n))[ \t]*(?=\{\s*"name"\s*:)')),
)


def json_object_opener(nfa: NFA, *, fenced: bool, first_key: bytes = b'"name"') -> Frag:
    """The bytes that commit to a JSON call object: ``{`` and its first key (any whitespace);
    ``fenced``: after a ````` ```json ````` (or ``tool_call``, or bare) fence line. The form's head
    (``: "``) follows."""
    def ws() -> Frag:
        return nfa.star(nfa.byte_ranges([(0x20, 0x20), (0x09, 0x0A), (0x0D, 0x0D)]))

    parts = []
    if fenced:
        lang = nfa.optional(nfa.alt(nfa.literal(b"json"), nfa.literal(b"tool_call")))
        parts += [nfa.literal(b"```"), lang, nfa.star(nfa.byte_ranges([(0x20, 0x20), (0x09, 0x09)])), nfa.literal(b"\n"),
                  ws()]
    else:  # indentation only: a line of whitespace is a line, and the next one starts afresh
        parts.append(nfa.star(nfa.byte_ranges([(0x20, 0x20), (0x09, 0x09)])))
    parts += [nfa.literal(b"{"), ws(), nfa.literal(first_key)]
    return nfa.seq(*parts)


class Hermes(Dialect):
    """The format of Qwen 2.5 and Hermes models; results go back as ``tool`` chat messages.

    Openers (``openers=`` keeps a subset):

    * ``tag``: ``<tool_call>``, then ``\\n{"name": "`` (``layout="inline"``: no newlines), the
      name, ``", "arguments": `` + the arguments (``json.dumps`` spacing) + ``}\\n</tool_call>``;
    * ``fenced``: a ````` ```json ````` (or ````` ```tool_call `````, or bare ````` ``` `````) line, then an
      object whose first key is ``"name"``: ``{"name": "`` commits, then ``"arguments"`` (or
      ``"parameters"``) and the arguments, any JSON whitespace (pretty printing), ``}``, the fence;
    * ``bare``: the same object without a fence, at the start of the answer or of a line.

    Examples:
        >>> text = '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
        >>> [(c.name, dict(c.arguments)) for c in Hermes().parse_calls(text)]
        [('get_weather', {'city': 'Paris'})]
        >>> Hermes().format_call(ToolCall("get_weather", {"city": "Paris"})) == text
        True
        >>> fenced = 'Sure:\\n```json\\n{\\n  "name": "get_weather",\\n  "arguments": {"city": "Oslo"}\\n}\\n```'
        >>> [c.name for c in Hermes().parse_calls(fenced)], Hermes(openers=["tag"]).parse_calls(fenced)
        (['get_weather'], [])
    """

    name: ClassVar[str] = "hermes"
    trigger: ClassVar[str | None] = "<tool_call>"
    head: ClassVar[bytes] = b'\n{"name": "'
    style: ClassVar[Style] = Style(whitespace=Whitespace.SPACED)
    tail_literal: ClassVar[bytes] = b'", "arguments": '

    def __init__(self, *, openers: list[str] | tuple[str, ...] | None = None,
                 layout: Literal["newlines", "inline"] = "newlines") -> None:
        if layout not in ("newlines", "inline"):
            raise ValueError(f"layout must be 'newlines' or 'inline', got {layout!r}")
        self.layout = layout
        super().__init__(openers=openers)

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
        )

    @property
    def _newline(self) -> bytes:
        return b"\n" if self.layout == "newlines" else b""

    def head_piece(self, nfa: NFA, form: int) -> Frag:
        return nfa.literal(self._newline + b'{"name": "') if form == TAG else name_head(nfa)

    def form_tail_literal(self, form: int) -> bytes:
        return self.tail_literal if form == TAG else b'"'

    def form_style(self, form: int) -> Style:
        return self.style if form == TAG else loose_style(self.style)

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        return nfa.seq(nfa.literal(b'", "arguments": '), self.arguments(nfa, tool),
                       nfa.literal(b"}" + self._newline + b"</tool_call>"))

    def call_tail(self, nfa: NFA, tool: Tool, *, form: int, next_call: bool) -> Frag:
        if form == TAG:
            return self.tail(nfa, tool, next_call=next_call)
        style = self.form_style(form)
        key = nfa.alt(nfa.literal(b'"arguments"'), nfa.literal(b'"parameters"'))
        parts = [nfa.literal(b'"'), json_ws(nfa), nfa.literal(b","), json_ws(nfa), key, json_ws(nfa),
                 nfa.literal(b":"), json_ws(nfa), self.arguments(nfa, tool, style), json_ws(nfa), nfa.literal(b"}")]
        if form == FENCED:
            parts += [json_ws(nfa), nfa.literal(b"```")]
        return nfa.seq(*parts)

    def _forms(self) -> list[JsonForm]:
        keep = {o.form for o in self.openers()}
        return [f for i, f in enumerate(_FORMS) if i in keep]

    def parse_calls(self, text: str) -> list[ToolCall]:
        """Calls in every form in use; a tagged call left unclosed when the output ends right after
        its JSON counts (Qwen models often stop there, and vLLM's Hermes parser accepts it).

        Examples:
            >>> [c.name for c in Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}}')]
            ['f']
            >>> Hermes().parse_calls('<tool_call>\\n{"name": "f", "arguments": {}} and more')
            []
        """
        return self.scan(text).calls

    def scan(self, text: str) -> CallScan:
        calls, broken = scan_json_calls(text, self._forms(), _call)
        return CallScan(calls, broken)

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
