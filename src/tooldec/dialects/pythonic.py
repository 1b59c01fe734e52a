"""Pythonic tool calls of Llama 3.2 and Llama 4: ``[f(a=1, b="x"), g()]``.

Meta's templates for these models ask for the reply ``[func_name1(param_name1=value1, ...),
func_name2(...)]``: a Python list of calls with keyword arguments and literal values, and
nothing else in the reply. vLLM's ``pythonic`` parser accordingly treats a reply as calls only
when the whole of it is such a list.
"""

from __future__ import annotations

import ast
import keyword
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler, Style, Syntax, Whitespace, dumps
from ..automata.nfa import NFA, Frag
from ..errors import InvalidToolNameError, UnsupportedSchemaError
from ..tools import Tool
from .base import NEXT_CALL, Dialect, ToolCall, require_plain_properties

__all__ = ["Pythonic"]



class Pythonic(Dialect):
    """``[f(a=1, b="x"), g()]``: a list of keyword calls that starts the reply.

    There is no trigger (``trigger`` is ``None``): the call list can only open the output. A
    text trigger ``[`` would turn every bracket of ordinary prose (markdown links, citations,
    lists) into a forced tool call, and the models have no special token for the list;
    Llama 4's optional ``<|python_start|>`` wrapper is left to the prompt. The grammar after the
    name is ``(`` + ``name=value`` pairs in declared order (Python ``True``/``False``/``None``,
    double-quoted strings, ``, `` between pairs) + ``)``, then ``]`` or, when ``next_call`` is
    asked for, ``, `` and the next name.

    Examples:
        >>> text = '[get_weather(city="Paris", days=3), math.factorial(number=5)]'
        >>> [(c.name, dict(c.arguments)) for c in Pythonic().parse_calls(text)]
        [('get_weather', {'city': 'Paris', 'days': 3}), ('math.factorial', {'number': 5})]
        >>> Pythonic().format_call(ToolCall("set_alarm", {"on": True, "label": None}))
        '[set_alarm(on=True, label=None)]'
    """

    name: ClassVar[str] = "pythonic"
    trigger: ClassVar[str | None] = None
    head: ClassVar[bytes] = b"["
    tail_literal: ClassVar[bytes] = b"("
    style: ClassVar[Style] = Style(syntax=Syntax.PYTHON, whitespace=Whitespace.SPACED)

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``(a=1, b="x")`` then ``]`` or ``, `` before the next name.

        Raises:
            UnsupportedSchemaError: As :meth:`check_tool`.
        """
        _check_parameters(tool)
        members = SchemaCompiler(nfa, tool.parameters, self.style).object_members(tool.parameters, kwargs=True)
        end = nfa.literal(b"]")
        if next_call:
            more = nfa.literal(b", ")
            nfa.mark(more[1], NEXT_CALL)
            end = nfa.alt(end, more)
        return nfa.seq(nfa.literal(b"("), members, nfa.literal(b")"), end)

    def check_tool(self, tool: Tool) -> None:
        """Python must be able to read the call.

        Raises:
            InvalidToolNameError: A name Python cannot call (``my-tool``, ``class``).
            UnsupportedSchemaError: A parameter name that is not a Python identifier, or a schema
                whose parameters are not a plain ``properties`` list.
        """
        if not all(part.isidentifier() and not keyword.iskeyword(part) for part in tool.name.split(".")):
            raise InvalidToolNameError(
                "a pythonic call needs a Python name (identifiers joined by '.', no keywords)", tool=tool.name)
        _check_parameters(tool)

    def parse_calls(self, text: str) -> list[ToolCall]:
        calls: list[ToolCall] = []
        position = 0
        while (start := text.find("[", position)) >= 0:
            end = _closing_bracket(text, start)
            found = None if end is None else _calls(text[start:end + 1])
            if end is None or found is None:
                position = start + 1
                continue
            calls += found
            position = end + 1
        return calls

    def render_result(self, call: ToolCall, result: str) -> str:
        """The result text as the tool message content (``ipython`` role for Llama)."""
        return result

    def format_call(self, call: ToolCall) -> str:
        args = ", ".join(f"{key}={dumps(value, self.style)}" for key, value in call.arguments.items())
        return f"[{call.name}({args})]"


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
    """A literal as JSON data (tuples become lists).

    Raises:
        TypeError: A set, bytes, complex number or a dict key that is not a string.
    """
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
