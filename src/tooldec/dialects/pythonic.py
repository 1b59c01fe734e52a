"""Pythonic tool calls of Llama 3.2 and Llama 4: ``[f(a=1, b="x"), g()]``, the reply Meta's
templates ask for; small models also write the list on a line after a sentence (``call``)."""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler, Style, Syntax, Whitespace, dumps
from ..automata.nfa import NFA, Frag
from ..errors import InvalidToolNameError, UnsupportedSchemaError
from ..tools import Tool
from .base import NEXT_CALL, Anchor, CallScan, Dialect, Opener, ToolCall, line_indent, require_plain_properties
from .scanning import NAME_OBJECT

__all__ = ["Pythonic"]


class Pythonic(Dialect):
    """``[f(a=1, b="x"), g()]``: a list of keyword calls.

    Openers: ``start`` (``[`` at the start of the output, the default), ``call`` (``[``, a whole
    tool name and ``(`` at a line start) and ``inline_call`` (the same anywhere). A bare ``[``
    never commits in free text, as prose is full of brackets; a prefix of a name cannot tell
    ``[get_weather(`` from ``[get a coffee]`` (docs/call-formats.md, "What counts as a call in
    auto mode").

    Examples:
        >>> text = '[get_weather(city="Paris", days=3), math.factorial(number=5)]'
        >>> [(c.name, dict(c.arguments)) for c in Pythonic().parse_calls(text)]
        [('get_weather', {'city': 'Paris', 'days': 3}), ('math.factorial', {'number': 5})]
        >>> Pythonic().format_call(ToolCall("set_alarm", {"on": True, "label": None}))
        '[set_alarm(on=True, label=None)]'
        >>> scan = Pythonic().scan('Checking.\\n[get_weather(city="Oslo")]\\n[get_time(tz=Oslo)]\\n[see](url)')
        >>> [c.name for c in scan.calls], scan.broken
        (['get_weather'], ['[get_time(tz=Oslo)]\\n[see](url)'])
    """

    name: ClassVar[str] = "pythonic"
    trigger: ClassVar[str | None] = None
    head: ClassVar[bytes] = b"["
    tail_literal: ClassVar[bytes] = b"("
    style: ClassVar[Style] = Style(syntax=Syntax.PYTHON, whitespace=Whitespace.SPACED)
    default_openers: ClassVar[tuple[str, ...] | None] = ("start",)

    def declared_openers(self) -> tuple[Opener, ...]:
        return (
            Opener("start", 0, text=lambda nfa: nfa.literal(b"["), anchor=Anchor.START),
            Opener("call", 0, text=lambda nfa: nfa.seq(line_indent(nfa), nfa.literal(b"[")), anchor=Anchor.LINE,
                   named=True),
            Opener("inline_call", 0, text=lambda nfa: nfa.literal(b"["), named=True),
        )

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``(a=1, b="x")`` then ``]`` or ``, `` before the next name."""
        _check_parameters(tool)
        members = SchemaCompiler(nfa, tool.parameters, self.style).object_members(tool.parameters, kwargs=True)
        end = nfa.literal(b"]")
        if next_call:
            more = nfa.literal(b", ")
            nfa.mark(more[1], NEXT_CALL)
            end = nfa.alt(end, more)
        return nfa.seq(nfa.literal(b"("), members, nfa.literal(b")"), end)

    def check_tool(self, tool: Tool) -> None:
        """Python must be able to read the call: ``InvalidToolNameError`` for a name it cannot
        call (``my-tool``, ``class``), ``UnsupportedSchemaError`` for a parameter it cannot pass."""
        if not all(part.isidentifier() and not keyword.iskeyword(part) for part in tool.name.split(".")):
            raise InvalidToolNameError(
                "a pythonic call needs a Python name (identifiers joined by '.', no keywords)", tool=tool.name)
        _check_parameters(tool)

    def scan_answer(self, text: str, tools: Mapping[str, Tool] | None = None) -> CallScan:
        """Broken: each ``[name(`` where the openers may commit that became no list of calls (a
        comprehension excepted), a first ``[`` under ``start``, and ``"name"`` objects outside calls."""
        lists = _call_lists(text)
        spans = [(a, b) for a, b, _ in lists]
        anywhere = any(o.name == "inline_call" for o in self.openers())
        broken = []
        counted = set()
        for match in (_ANY_OPENER if anywhere else _LINE_OPENER).finditer(text):
            at = match.start(1)
            if any(a <= at < b for a, b in spans) or _is_comprehension(text, at):
                continue
            counted.add(at)
            broken.append(text[at:at + 200])
        starts = any(o.name == "start" for o in self.openers())
        if starts and text.startswith("[") and 0 not in counted and not (spans and spans[0][0] == 0):
            broken.append(text[:200])  # ``start`` commits at a first ``[``: anything else there is broken
        broken += [text[m.start():m.start() + 200] for m in NAME_OBJECT.finditer(text)
                   if not any(a <= m.start() < b for a, b in spans)]
        return CallScan([call for _, _, found in lists for call in found], broken)

    def render_result(self, call: ToolCall, result: str) -> str:
        """The result text as the tool message content (``ipython`` role for Llama)."""
        return result

    def format_call(self, call: ToolCall) -> str:
        args = ", ".join(f"{key}={dumps(value, self.style)}" for key, value in call.arguments.items())
        return f"[{call.name}({args})]"


_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_LINE_OPENER = re.compile(r"(?:^|(?<=\n))[ \t]*(\[" + _NAME + r"\()")
_ANY_OPENER = re.compile(r"(\[" + _NAME + r"\()")


def _call_lists(text: str) -> list[tuple[int, int, list[ToolCall]]]:
    """Each list of keyword calls in ``text``: ``(start, end, calls)``, ``text[start:end]`` the list."""
    out: list[tuple[int, int, list[ToolCall]]] = []
    position = 0
    while (start := text.find("[", position)) >= 0:
        end = _closing_bracket(text, start)
        found = None if end is None else _calls(text[start:end + 1])
        if end is None or found is None:
            position = start + 1
            continue
        out.append((start, end + 1, found))
        position = end + 1
    return out


def _is_comprehension(text: str, start: int) -> bool:
    """Whether the bracket at ``start`` holds a list comprehension (code, not a call)."""
    end = _closing_bracket(text, start)
    if end is None:
        return False
    try:
        return isinstance(ast.parse(text[start:end + 1], mode="eval").body, ast.ListComp)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False


def _check_parameters(tool: Tool) -> None:
    params = tool.parameters
    require_plain_properties(tool, "pythonic arguments are keywords")
    names = [*params.get("properties", {}), *params.get("required", [])]
    for prop in names:
        if not prop.isidentifier() or keyword.iskeyword(prop):
            raise UnsupportedSchemaError(
                f"{prop!r} cannot be a Python keyword argument", tool=tool.name,
                pointer=f"/properties/{prop.replace('~', '~0').replace('/', '~1')}", keyword="properties")


def _closing_bracket(text: str, start: int) -> int | None:
    """Index of the ``]`` matching ``text[start]``, skipping brackets inside string literals."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
            if depth == 0:
                return i if char == "]" else None
        i += 1
    return None


def _calls(source: str) -> list[ToolCall] | None:
    """The calls of a list literal such as ``[f(a=1), g()]``; ``None`` if it is anything else."""
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.List) or not tree.elts:
        return None
    calls = []
    for node in tree.elts:
        if not isinstance(node, ast.Call) or node.args or any(k.arg is None for k in node.keywords):
            return None
        name = _dotted(node.func)
        if name is None:
            return None
        arguments: dict[str, Any] = {}
        for kw in node.keywords:
            try:
                arguments[str(kw.arg)] = _json_value(ast.literal_eval(kw.value))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
        calls.append(ToolCall(name, arguments))
    return calls


def _json_value(value: Any) -> Any:
    """A literal as JSON data (tuples become lists); ``TypeError`` for what JSON cannot hold."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _json_value(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None
