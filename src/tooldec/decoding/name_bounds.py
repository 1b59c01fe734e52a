"""The shortest call below a name prefix without building every tool's automaton (one per tool
and form would take seconds for a new list of a thousand tools).

Tools are visited from the smallest lower bound up (the name, the form's fixed tail bytes and
:func:`least_bytes` of the schema) until the next bound exceeds the best text found, so only a
handful of automata are built. One valid arguments object (:func:`witness`) bounds a call from
above (:func:`name_most`), so a budget that is plainly enough needs no search.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from ..automata.dfa import LazyDFA
from ..automata.json_schema import Style, Syntax, dumps
from ..automata.nfa import NFA
from ..tools import Tool

if TYPE_CHECKING:
    from .grammar import Grammar

__all__ = ["least_bytes", "name_least", "name_most", "shortest_below", "tail_floor", "tail_start_text", "witness"]

_COMPACT = Style()
_EMPTY = Tool("bound_probe", "", parameters={"type": "object", "properties": {}, "additionalProperties": False})
_SCALAR = {"integer": 1, "number": 1, "boolean": 4, "null": 4}
_COMPOSED = ("anyOf", "oneOf", "allOf", "not", "if", "$ref", "$dynamicRef")


def least_bytes(schema: Any, style: Style = _COMPACT) -> int:
    """A lower bound of the bytes of any JSON text valid under ``schema``, with ``style``'s separators.

    Examples:
        >>> least_bytes({"type": "object", "properties": {"city": {"type": "string", "minLength": 2}},
        ...              "required": ["city"]})
        13
        >>> least_bytes({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        1
    """
    return _least(schema, len(style.item_sep), len(style.key_sep))


def _least(schema: Any, item: int, key: int) -> int:
    if not isinstance(schema, dict) or any(k in schema for k in _COMPOSED):
        return 1 if schema is not False else 0
    if "const" in schema:
        return _least_value(schema["const"], item, key)
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return min(_least_value(v, item, key) for v in schema["enum"])
    kinds = schema.get("type")
    if kinds is None:
        return 1
    options = kinds if isinstance(kinds, list) else [kinds]
    return min((_least_of_type(schema, kind, item, key) for kind in options), default=1)


def _least_of_type(schema: dict[str, Any], kind: Any, item: int, key: int) -> int:
    if kind in _SCALAR:
        return _SCALAR[kind]
    if kind == "string":
        low = schema.get("minLength", 0)
        return 2 + (low if isinstance(low, int) else 0)
    if kind == "array":
        low = schema.get("minItems", 0)
        return 2 + (low + item * (low - 1) if isinstance(low, int) and low > 0 else 0)
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        if not isinstance(required, list) or not isinstance(props, dict):
            return 2
        keys = [k for k in dict.fromkeys(required) if isinstance(k, str)]
        body = sum(2 + len(k.encode()) + key + _least(props.get(k, True), item, key) for k in keys)
        return 2 + body + item * max(len(keys) - 1, 0)
    return 1


WITNESS_REPEATS = 256
"""The most items or characters a witness writes (past that, the tool's shortest call bounds it)."""
NO_WITNESS: Any = object()
"""What :func:`witness` returns for a schema it does not read (then no upper bound is taken)."""
_WITNESS_KEYS = frozenset({"type", "enum", "const", "properties", "required", "additionalProperties", "items",
                           "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum"})


def witness(schema: Any, style: Style) -> Any:
    """One short value valid under a normalized ``schema`` (not always the shortest), or
    :data:`NO_WITNESS` for the keywords it does not read (patterns, formats, ``not``, ...).

    Examples:
        >>> witness({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3},
        ...     "s": {"type": "string", "minLength": 2}}, "required": ["n", "s"]}, Style())
        {'n': 3, 's': 'aa'}
    """
    if schema is True:
        return 0
    if not isinstance(schema, dict):
        return NO_WITNESS
    if set(schema) == {"anyOf"}:
        return _shortest_value([witness(b, style) for b in schema["anyOf"]], style)
    if not set(schema) <= _WITNESS_KEYS:
        return NO_WITNESS
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return _shortest_value(schema["enum"], style)
    if "type" not in schema:
        return NO_WITNESS
    kinds = schema["type"]
    return _shortest_value([_witness_of_type(schema, k, style) for k in (kinds if isinstance(kinds, list) else [kinds])],
                           style)


def _shortest_value(values: list[Any], style: Style) -> Any:
    """The value ``style`` writes in the fewest bytes (``NO_WITNESS`` ones left out)."""
    return min((v for v in values if v is not NO_WITNESS), key=lambda v: len(dumps(v, style).encode()),
               default=NO_WITNESS)


def _witness_of_type(schema: dict[str, Any], kind: str, style: Style) -> Any:
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        return 0 if (low is None or low <= 0) and (high is None or high >= 0) else (low if low is not None and low > 0 else high)
    if kind == "string":
        low = schema.get("minLength", 0)
        return "a" * low if low <= WITNESS_REPEATS else NO_WITNESS
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        count = schema.get("minItems", 0)
        item = witness(schema.get("items", True), style) if count else None
        return NO_WITNESS if item is NO_WITNESS or count > WITNESS_REPEATS else [item] * count
    if kind == "object":
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if not all(key in props for key in required):
            return NO_WITNESS
        members = {key: witness(props[key], style) for key in props if key in required}
        return NO_WITNESS if any(v is NO_WITNESS for v in members.values()) else members
    return NO_WITNESS


def name_most(grammar: Grammar, form: int, follow_ok: bool) -> np.ndarray | None:
    """For each name (sorted), an upper bound of the bytes of its shortest call from the name's
    start; ``None`` for dialects without a tail floor. Cached per snapshot."""
    compiler = grammar.compiler
    key = ("name-most", grammar.serial, form, follow_ok)
    found: np.ndarray | None = compiler.masks.get(key)  # type: ignore[assignment]
    if found is not None:
        return found
    floor = tail_floor(grammar, form, follow_ok)
    if floor is None:
        return None

    def make() -> np.ndarray:
        style = grammar.dialect.form_style(form)
        out = []
        for name in grammar.name_index:
            tool = grammar.tools[name]
            found = compiler.kept(("witness-bytes", tool.schema_hash, style), functools.partial(_witness_bytes, tool, style))
            if found < 0:
                out.append(len(name.encode()) + len(tail_start_text(grammar, name, form, follow_ok)))
            else:
                out.append(len(name.encode()) + floor + int(found))
        return np.asarray(out, dtype=np.int64)

    return compiler.kept(key, make)


def _witness_bytes(tool: Tool, style: Style) -> int:
    """Bytes of the tool's witness as ``style`` writes it; -1 without one."""
    value = witness(tool.parameters, style)
    if value is NO_WITNESS or not isinstance(value, dict):
        return -1
    return len(dumps(value, style).encode())


def _least_value(value: Any, item: int = 1, key: int = 1) -> int:
    """Bytes of the shortest spelling of ``value`` with these separator lengths (a number: 1)."""
    if isinstance(value, bool) or value is None:
        return 4
    if isinstance(value, (int, float)):
        return 1
    if isinstance(value, str):
        return 2 + len(value.encode())
    if isinstance(value, list):
        return 2 + sum(_least_value(v, item, key) for v in value) + item * max(len(value) - 1, 0)
    if isinstance(value, dict):
        return (2 + sum(2 + len(str(k).encode()) + key + _least_value(v, item, key) for k, v in value.items())
                + item * max(len(value) - 1, 0))
    return len(json.dumps(value))


def tail_floor(grammar: Grammar, form: int, chained: bool) -> int | None:
    """Bytes every tail of ``form`` has besides its arguments (``None``: not bytes around JSON arguments)."""
    empty = _empty_tail(grammar, form, chained)
    return None if empty is None else max(0, len(empty[0]) - len(empty[1]))


def _empty_tail(grammar: Grammar, form: int, chained: bool) -> tuple[bytes, bytes] | None:
    """An empty schema's shortest tail in ``form`` and its shortest arguments (cached; ``None`` as above)."""
    compiler = grammar.compiler

    def make() -> tuple[bytes, bytes] | tuple[()]:
        dialect = grammar.dialect
        style = dialect.form_style(form)
        if not dialect.arguments_in_tail or style.syntax is not Syntax.JSON:
            return ()
        nfa = NFA()
        tail = LazyDFA(nfa, dialect.call_tail(nfa, _EMPTY, form=form, next_call=chained), window=compiler.index.longest)
        return tail.shortest(tail.start), _shortest_arguments(grammar, _EMPTY, style)

    found = compiler.kept(("empty-tail", compiler.key, form, chained), lambda: _Pair(make()))
    return (found[0], found[1]) if found else None


def tail_start_text(grammar: Grammar, name: str, form: int, chained: bool) -> bytes:
    """The shortest text of the tool's tail after the name, kept per schema (it outlives the
    automaton); where the form has a :func:`tail_frame`, the frame around arguments made once per
    schema and style."""
    tool = grammar.tools[name]
    compiler = grammar.compiler

    def make() -> bytes:
        frame = tail_frame(grammar, form, chained)
        if frame is None:
            return _tail_shortest(grammar, name, form, chained)
        style = grammar.dialect.form_style(form)
        arguments = compiler.kept(("arguments-short", tool.schema_hash, style),
                                  lambda: _arguments_in_tail(grammar, name, form, chained, frame))
        return frame[0] + arguments + frame[1]

    return compiler.kept(("tail-start", tool.schema_hash, form, chained), make)


def _tail_shortest(grammar: Grammar, name: str, form: int, chained: bool) -> bytes:
    tail = grammar.tail(name, form, chained).dfa
    return tail.shortest(tail.start)


def _arguments_in_tail(grammar: Grammar, name: str, form: int, chained: bool, frame: tuple[bytes, bytes]) -> bytes:
    """The shortest arguments, cut from the tool's shortest tail between the form's frame."""
    text = _tail_shortest(grammar, name, form, chained)
    before, after = frame
    if len(text) >= len(before) + len(after) and text.startswith(before) and text.endswith(after):
        return text[len(before) : len(text) - len(after)]
    return _shortest_arguments(grammar, grammar.tools[name], grammar.dialect.form_style(form))


def _shortest_arguments(grammar: Grammar, tool: Tool, style: Style) -> bytes:
    nfa = NFA()
    args = LazyDFA(nfa, grammar.dialect.arguments(nfa, tool, style), window=grammar.compiler.index.longest)
    return args.shortest(args.start)


def tail_frame(grammar: Grammar, form: int, chained: bool) -> tuple[bytes, bytes] | None:
    """The bytes before and after the arguments in every shortest tail of ``form`` (``None``: no plain split)."""
    empty = _empty_tail(grammar, form, chained)
    if empty is None or empty[0].count(empty[1]) != 1:
        return None
    before, after = empty[0].split(empty[1])
    return before, after


class _Pair(tuple):  # type: ignore[type-arg]
    nbytes = 200


def name_least(grammar: Grammar, form: int, follow_ok: bool) -> np.ndarray:
    """For each name (sorted), a lower bound of the bytes of its shortest call. Cached per snapshot."""
    compiler = grammar.compiler
    floor = tail_floor(grammar, form, follow_ok)

    def make() -> np.ndarray:
        style = grammar.dialect.form_style(form)
        out = []
        for name in grammar.name_index:
            bound = len(name.encode())
            if floor is not None:
                tool = grammar.tools[name]
                bound += floor + compiler.kept(("least-bytes", tool.schema_hash, style),
                                               functools.partial(least_bytes, tool.parameters, style))
            out.append(bound)
        return np.asarray(out, dtype=np.int64)

    return compiler.kept(("name-least", grammar.serial, form, follow_ok), make)


def shortest_below(grammar: Grammar, prefix: bytes, form: int, follow_ok: bool, only: str | None = None) -> bytes:
    """The shortest (then smallest) text from ``prefix`` finishing a call through a tool below it
    (or ``only``); ``ValueError`` where there is none."""
    index = grammar.name_index
    least = name_least(grammar, form, follow_ok)
    if only is not None:
        if index.terminal(only.encode()) is None:
            raise ValueError(f"{only!r} is not a tool of this snapshot")
        order = np.array([index.span(only.encode())[0]])
    else:
        a, z = index.span(prefix)
        order = a + np.argsort(least[a:z], kind="stable")
    if not order.size:
        raise ValueError(f"no tool below {prefix!r}")
    best: bytes | None = None
    for i in order.tolist():
        if best is not None and int(least[i]) - len(prefix) > len(best):
            break
        name = index.at(i)
        text = name.encode()[len(prefix):] + tail_start_text(grammar, name, form, follow_ok)
        if best is None or (len(text), text) < (len(best), best):
            best = text
    assert best is not None
    return best
