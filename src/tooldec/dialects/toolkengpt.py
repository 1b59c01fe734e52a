"""ToolkenGPT calls as FuncQA writes them: ``<add>(3, 4)=7``, numbers in and a number out.

ToolkenGPT (Hao et al., 2023) predicts a tool as one token, then positional arguments and ``=``;
the result is written right after ``=`` and the model goes on reasoning with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler
from ..automata.nfa import NFA, Frag
from ..errors import UnsupportedSchemaError
from ..tools import Tool, ToolSet
from .base import Dialect, ToolCall, require_plain_properties

__all__ = ["ToolkenGPT"]

_CALL = re.compile(r"<([A-Za-z0-9_][A-Za-z0-9_.\-]*)>\(([^()<>=]*)\)=")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


class ToolkenGPT(Dialect):
    """``<name>(1, 2.5)=``: the tool-token format of ToolkenGPT and the FuncQA prompts.

    One JSON number per parameter in declared order, ``,`` and an optional space between
    (FuncQA's prompts write both); trailing optional parameters may be left out, and a last
    array parameter takes the remaining values (FuncQA's ``add``, ``gcd``). ``tools`` name the
    parsed arguments (a ``ToolSet`` is read live); an unknown tool's are keyed ``"0"``, ``"1"``...

    Examples:
        >>> add = Tool.from_dict({"name": "add", "parameters": {"type": "object", "properties": {
        ...     "numbers": {"type": "array", "items": {"type": "number"}, "minItems": 2}}}})
        >>> power = Tool.from_dict({"name": "power", "parameters": {"type": "object", "properties": {
        ...     "base": {"type": "number"}, "exponent": {"type": "number"}}}})
        >>> dialect = ToolkenGPT([add, power])
        >>> text = "2^8=<power>(2,8)=256 and 277+209+72=<add>(277, 209, 72)=558."
        >>> [(c.name, dict(c.arguments)) for c in dialect.parse_calls(text)]
        [('power', {'base': 2, 'exponent': 8}), ('add', {'numbers': [277, 209, 72]})]
        >>> dialect.format_call(ToolCall("power", {"base": 10, "exponent": 0.1}))
        '<power>(10, 0.1)='
        >>> dialect.render_result(ToolCall("power", {"base": 10, "exponent": 0.1}), "1.26")
        '1.26'
    """

    name: ClassVar[str] = "toolkengpt"
    trigger: ClassVar[str | None] = "<"
    head: ClassVar[bytes] = b""
    tail_literal: ClassVar[bytes] = b">("
    stop_after_call: ClassVar[bool] = True

    def __init__(self, tools: ToolSet | Iterable[Tool] = (), **options: Any) -> None:
        super().__init__(**options)
        self._tools: ToolSet | dict[str, Tool] = tools if isinstance(tools, ToolSet) else {t.name: t for t in tools}

    def check_tool(self, tool: Tool) -> None:
        """``UnsupportedSchemaError`` unless every parameter is a number (or, last, an array of them)."""
        _Signature.of(tool)

    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """``>(`` numbers ``)=``; ``next_call`` is ignored (one call per tool token)."""
        sig = _Signature.of(tool)
        properties = tool.parameters.get("properties", {})
        compiler = SchemaCompiler(nfa, tool.parameters, self.style)

        def sep() -> Frag:
            return nfa.seq(nfa.literal(b","), nfa.optional(nfa.literal(b" ")))

        # rest: what may follow once i of the fixed values are written, built from the end
        rest = nfa.empty()
        if sig.variadic is not None:
            array = properties[sig.variadic]
            low, high = int(array.get("minItems", 0)), array.get("maxItems")

            def item() -> Frag:
                return compiler.value(array.get("items", {}))

            if sig.fixed:
                rest = nfa.repeat(lambda: nfa.seq(sep(), item()), low, high)
            else:
                rest = nfa.separated(item, sep, low, high)
            if not sig.variadic_required:
                rest = nfa.optional(rest)
        for i in range(len(sig.fixed) - 1, -1, -1):
            value = compiler.value(properties[sig.fixed[i]])
            rest = nfa.seq(sep(), value, rest) if i else nfa.seq(value, rest)
            if i >= sig.must:
                rest = nfa.optional(rest)
        return nfa.seq(nfa.literal(b">("), rest, nfa.literal(b")="))

    def read_calls(self, text: str, tools: Mapping[str, Tool] | None = None) -> list[ToolCall]:
        calls = []
        for match in _CALL.finditer(text):
            inside = match.group(2).strip()
            pieces = [p.strip() for p in inside.split(",")] if inside else []
            if not all(_NUMBER.fullmatch(p) for p in pieces):
                continue
            arguments = self._bind(match.group(1), [json.loads(p) for p in pieces])
            if arguments is not None:
                calls.append(ToolCall(match.group(1), arguments))
        return calls

    def render_result(self, call: ToolCall, result: str) -> str:
        """The result as it follows ``=``: just the number's text (``125.6``)."""
        return result.strip()

    def format_call(self, call: ToolCall) -> str:
        """``<name>(a, b)=`` in the tool's declared order; ``ValueError`` for a value not a number."""
        values: list[Any] = []
        for key, value in self._ordered(call):
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ValueError(f"{self.name} writes numbers only; argument {key!r} is {v!r}")
                values.append(v)
        return f"<{call.name}>({', '.join(json.dumps(v) for v in values)})="

    # -- helpers ------------------------------------------------------------------------------

    def _tool(self, name: str) -> Tool | None:
        return self._tools[name] if name in self._tools else None

    def _bind(self, name: str, values: list[Any]) -> dict[str, Any] | None:
        """Positional values as named arguments; ``None`` when the count does not fit the tool."""
        tool = self._tool(name)
        if tool is None:
            return {str(i): v for i, v in enumerate(values)}
        try:
            sig = _Signature.of(tool)
        except UnsupportedSchemaError:
            return None
        n = len(sig.fixed)
        if len(values) < sig.must or (sig.variadic is None and len(values) > n):
            return None
        arguments: dict[str, Any] = dict(zip(sig.fixed, values))
        if sig.variadic is not None and (len(values) > n or (len(values) == n and sig.variadic_required)):
            arguments[sig.variadic] = values[n:]
        return arguments

    def _ordered(self, call: ToolCall) -> list[tuple[str, Any]]:
        tool = self._tool(call.name)
        args = dict(call.arguments)
        if tool is not None:
            order = list(tool.parameters.get("properties", {}))
            return [(k, args[k]) for k in order if k in args] + [(k, v) for k, v in args.items() if k not in order]
        if all(k.isdigit() for k in args):
            return sorted(args.items(), key=lambda kv: int(kv[0]))
        return list(args.items())


@dataclass(frozen=True)
class _Signature:
    """A tool's parameters as positions: ``fixed`` numbers, then an optional array of numbers."""

    fixed: list[str]
    must: int  # how many leading fixed values must be written
    variadic: str | None
    variadic_required: bool

    @classmethod
    def of(cls, tool: Tool) -> _Signature:
        """Raises ``UnsupportedSchemaError`` for what cannot be written as a list of numbers."""
        params = tool.parameters
        require_plain_properties(tool, "ToolkenGPT arguments are positional")
        properties: Mapping[str, Any] = params.get("properties", {})
        required = set(params.get("required", []))
        missing = sorted(required - set(properties))
        if missing:
            raise UnsupportedSchemaError(
                f"required parameters {missing} are not declared in 'properties', so they have no position",
                tool=tool.name, pointer="/required", keyword="required")
        names = list(properties)
        fixed: list[str] = []
        variadic: str | None = None
        for i, prop in enumerate(names):
            schema = properties[prop]
            pointer = f"/properties/{prop.replace('~', '~0').replace('/', '~1')}"
            if _is_numeric(schema, params):
                fixed.append(prop)
            elif isinstance(schema, Mapping) and schema.get("type") == "array" and i == len(names) - 1:
                if "prefixItems" in schema:
                    raise UnsupportedSchemaError(
                        "a trailing array parameter takes any count of numbers, not a tuple",
                        tool=tool.name, pointer=pointer, keyword="prefixItems")
                if not _is_numeric(schema.get("items", {}), params):
                    raise UnsupportedSchemaError(
                        "ToolkenGPT writes numbers only: a trailing array parameter must hold numbers",
                        tool=tool.name, pointer=f"{pointer}/items", keyword="type")
                variadic = prop
            else:
                raise UnsupportedSchemaError(
                    "ToolkenGPT writes numbers only: each parameter must be a number or an integer"
                    " (or, as the last parameter, an array of them)",
                    tool=tool.name, pointer=pointer, keyword="type")
        variadic_required = variadic is not None and variadic in required
        must = len(fixed) if variadic_required else max((i + 1 for i, p in enumerate(fixed) if p in required), default=0)
        return cls(fixed, must, variadic, variadic_required)


def _is_numeric(schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    """Whether every value ``schema`` admits is a JSON number (so it can be written bare)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return False
    declared = schema.get("type")
    if declared is not None:
        kinds = {declared} if isinstance(declared, str) else set(declared)
        return bool(kinds) and kinds <= {"number", "integer"}
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else list(schema["enum"])
        return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if "$ref" in schema:
        node: Any = root
        for part in schema["$ref"].lstrip("#").split("/")[1:]:
            node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, Mapping) else {}
        return _is_numeric(node, root, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            return all(_is_numeric(branch, root, depth + 1) for branch in schema[keyword])
    if "allOf" in schema:
        return any(_is_numeric(branch, root, depth + 1) for branch in schema["allOf"])
    return False
