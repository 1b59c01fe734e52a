"""Call formats as data: one declaration per model family, one engine for all of them
(docs/call-formats.md, "Formats as data"), so a new format is one declaration in
``tooldec.dialects.families`` and its tests.

The opener commits alone, as Hermes' ``<tool_call>`` does. Everything between two markers is
exact text: the formats' chat templates write it one way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler, Style, Whitespace
from ..automata.nfa import NFA, Frag
from ..tools import Tool
from .base import NEXT_CALL, Anchor, CallScan, Dialect, Opener, Reasoning, Refusal, ToolCall, spelled_text
from .key_values import KeyValueArguments

__all__ = ["CallFormat", "CallIndex", "DeclaredDialect", "JsonArguments"]

_DECODER = json.JSONDecoder()
_DIGITS = [(0x30, 0x39)]


@dataclass(frozen=True)
class JsonArguments:
    """The arguments as one JSON object, spaced as ``style`` says."""

    style: Style = field(default_factory=lambda: Style(whitespace=Whitespace.SPACED))


@dataclass(frozen=True)
class CallIndex:
    """A call's number in its output, after its name (Kimi K2's ``functions.f:0``)."""


@dataclass(frozen=True)
class CallFormat:
    """How one model family writes tool calls (docs/call-formats.md, "Formats as data").

    Attributes:
        after_name: After each name, before its arguments (pieces: text, or a :class:`CallIndex`).
        next_call: Within a block, between one call's end and the next name (``None``: one call
            per block).
        result: How a tool's result goes back: ``{result}``, ``{name}``, ``{id}`` are filled in.
        refused: Texts free text may never write (the family's result markers).
    """

    name: str
    families: str
    opener: str
    head: str
    after_name: tuple[str | CallIndex, ...]
    arguments: JsonArguments | KeyValueArguments
    call_end: str
    next_call: str | None = None
    block_end: str = ""
    call_ends_output: bool = False
    answer_prefix: str = ""
    markers: tuple[str, ...] = ()
    reasoning: Reasoning | None = None
    result: str = "{result}"
    refused: tuple[str, ...] = ()
    vllm_parser: str | None = None

    def __post_init__(self) -> None:
        pieces = [self.opener, self.head, self.call_end, self.next_call or "", self.block_end,
                  *(p for p in self.after_name if isinstance(p, str))]
        if not self.opener:
            raise ValueError(f"{self.name}: a format needs an opener")
        if not isinstance(self.after_name[0], str) or not self.after_name[0]:
            raise ValueError(f"{self.name}: the text after a name must start with fixed text (it ends the name)")
        if any("\xff" in p for p in pieces):
            raise ValueError(f"{self.name}: pieces cannot hold U+00FF")


class DeclaredDialect(Dialect):
    """A dialect made from a :class:`CallFormat` (subclass it and set ``format``).

    ``reasoning=`` overrides the declared section (``None``: the model was told not to reason).
    """

    format: ClassVar[CallFormat]
    default_forced: ClassVar[tuple[str, ...] | None] = ("tag",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("format")
        if isinstance(declared, CallFormat):
            cls.name = declared.name
            cls.trigger = declared.opener
            cls.markers = declared.markers
            cls.reasoning = declared.reasoning
            cls.call_ends_output = declared.call_ends_output
            cls.answer_prefix = declared.answer_prefix
            cls.arguments_in_tail = isinstance(declared.arguments, JsonArguments) and all(
                isinstance(p, str) for p in declared.after_name)
            cls.style = declared.arguments.style
            cls.head = spelled_text(declared.markers, declared.head)  # reasoning markers come after the format's
            first = declared.after_name[0]
            assert isinstance(first, str)  # checked by the declaration
            cls.tail_literal = spelled_text(declared.markers, first)
            if declared.next_call is not None:  # a block's shortest way out must end it (budgets count on that)
                ending = spelled_text(declared.markers, declared.block_end)
                going_on = spelled_text(declared.markers, declared.next_call)
                if (len(ending), ending) >= (len(going_on), going_on):
                    raise ValueError(f"{declared.name}: the block end must be shorter in the grammar than the "
                                     "text before a next call (list the block end's marker first)")

    # -- grammar ---------------------------------------------------------------------------------

    def declared_openers(self) -> tuple[Opener, ...]:
        return (Opener("tag", 0, tag=self.format.opener, anchor=Anchor.ANYWHERE),)

    def refusals(self) -> tuple[Refusal, ...]:
        """The refused texts, and also as ordinary text each of them and the opener that is
        written with markers (text readers cannot tell the two apart)."""
        found = [Refusal(f"refused {text!r}", tag=text) for text in self.format.refused]
        for text in (*self.format.refused, self.format.opener):
            plain = text.encode()
            if self.spelled(text) != plain:
                found.append(Refusal(f"{text!r} as text", text=_literal(plain)))
        return tuple(found)

    def head_piece(self, nfa: NFA, form: int) -> Frag:
        return nfa.literal(self.head)

    def check_tool(self, tool: Tool) -> None:
        """``UnsupportedSchemaError`` where key/value arguments cannot carry the tool's values."""
        arguments = self.format.arguments
        if isinstance(arguments, KeyValueArguments):
            arguments.check(tool, self.name)

    def arguments(self, nfa: NFA, tool: Tool, style: Style | None = None) -> Frag:
        arguments = self.format.arguments
        if isinstance(arguments, KeyValueArguments):
            return arguments.fragment(nfa, tool, self.spelled, self.value_stops())
        return SchemaCompiler(nfa, tool.parameters, style or arguments.style, forbidden=self.value_stops()).value(tool.parameters)

    def value_stops(self) -> tuple[str, ...]:
        """The format's markers and opener too: a text reader takes them for structure anywhere."""
        return tuple(dict.fromkeys((*self.markers_in_use, self.format.opener, *super().value_stops())))

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        fmt = self.format
        pieces = [nfa.literal(self.spelled(p)) if isinstance(p, str) else _number(nfa) for p in fmt.after_name]
        pieces += [self.arguments(nfa, tool), nfa.literal(self.spelled(fmt.call_end))]
        end = nfa.literal(self.spelled(fmt.block_end))
        if next_call and fmt.next_call is not None:
            more = nfa.literal(self.spelled(fmt.next_call))
            nfa.mark(more[1], NEXT_CALL)
            end = nfa.alt(end, more)
        return nfa.seq(*pieces, end)

    # -- text ------------------------------------------------------------------------------------

    def scan_answer(self, text: str, tools: Mapping[str, Tool] | None = None) -> CallScan:
        """Each block's calls; broken: each opener that became no whole block (one left open at
        the end of the output after a call's end counts: models stop there)."""
        fmt = self.format
        calls: list[ToolCall] = []
        broken: list[str] = []
        at = text.find(fmt.opener)
        while at >= 0:
            found, end = self._read_block(text, at + len(fmt.opener), tools)
            if found is None:
                broken.append(text[at:at + 200])
                at = text.find(fmt.opener, at + len(fmt.opener))
                continue
            calls += found
            at = text.find(fmt.opener, end)
        return CallScan(calls, broken)

    def _read_block(self, text: str, at: int, tools: Mapping[str, Tool] | None) -> tuple[list[ToolCall] | None, int]:
        fmt = self.format
        if not text.startswith(fmt.head, at):
            return None, at
        at += len(fmt.head)
        calls: list[ToolCall] = []
        while True:
            found, at = self._read_call(text, at, tools)
            if found is None:
                return None, at
            calls.append(found)
            if fmt.next_call is not None and text.startswith(fmt.next_call, at) and not (
                    fmt.block_end and text.startswith(fmt.block_end, at)):
                at += len(fmt.next_call)
                continue
            if text.startswith(fmt.block_end, at):
                at += len(fmt.block_end)
            elif text[at:].strip():  # a block left open where the output ends is read as closed
                return None, at
            return calls, at

    def _read_call(self, text: str, at: int, tools: Mapping[str, Tool] | None) -> tuple[ToolCall | None, int]:
        fmt = self.format
        first = fmt.after_name[0]
        assert isinstance(first, str)
        ends = text.find(first, at)
        if ends < 0:
            return None, at
        name = text[at:ends]
        at = ends
        for piece in fmt.after_name:
            if isinstance(piece, str):
                if not text.startswith(piece, at):
                    return None, at
                at += len(piece)
            else:
                digits = re.match(r"\d+", text[at:])
                if digits is None:
                    return None, at
                at += digits.end()
        arguments = fmt.arguments
        if isinstance(arguments, KeyValueArguments):
            close = text.find(fmt.call_end, at)
            if close < 0:
                return None, at
            values = arguments.read(text[at:close], None if tools is None else tools.get(name))
            at = close
        else:
            try:
                values, at = _DECODER.raw_decode(text, at)
            except json.JSONDecodeError:
                return None, at
        if not isinstance(values, dict) or not text.startswith(fmt.call_end, at):
            return None, at
        return ToolCall(name, values), at + len(fmt.call_end)

    def format_call(self, call: ToolCall) -> str:
        """The call as the family's chat template writes it (a block of one call)."""
        fmt = self.format
        after = "".join(p if isinstance(p, str) else "0" for p in fmt.after_name)
        arguments = fmt.arguments
        if isinstance(arguments, KeyValueArguments):
            body = arguments.write(call.arguments)
        else:
            style = arguments.style
            body = json.dumps(dict(call.arguments), ensure_ascii=False,
                              separators=(style.item_sep.decode(), style.key_sep.decode()))
        return f"{fmt.opener}{fmt.head}{call.name}{after}{body}{fmt.call_end}{fmt.block_end}"

    def render_result(self, call: ToolCall, result: str) -> str:
        return self.format.result.format(result=result, name=call.name, id=call.id)


def _literal(data: bytes) -> Callable[[NFA], Frag]:
    """The piece that writes ``data`` (a refused text)."""
    return lambda nfa: nfa.literal(data)


def _number(nfa: NFA) -> Frag:
    """A call index: one or more digits."""
    return nfa.seq(nfa.byte_ranges(_DIGITS), nfa.star(nfa.byte_ranges(_DIGITS)))
