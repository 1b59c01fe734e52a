"""A Python function's signature and Google-style docstring as a tool schema, and back.

As transformers' ``get_json_schema``: type hints give the JSON types, the docstring's first paragraph the
description and its ``Args:`` section the parameters'. Every parameter must be passable by keyword with a JSON
value (the model writes arguments by name); anything else is refused at registration, naming the parameter.

The way back, :func:`argument_converters`, gives a parameter annotated with an Enum, a dataclass, a Pydantic model,
a set or a tuple that type when the tool runs. A ``set[X]`` is a JSON array whose duplicates collapse into the set
(``uniqueItems`` cannot be enforced while decoding).
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import importlib.util
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tooldec.errors import ToolRegistrationError

__all__ = ["argument_converters", "function_schema", "parse_docstring"]

Converter = Callable[[Any], Any]
_SCALARS: dict[Any, str] = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
_SETS: dict[Any, type] = {set: set, frozenset: frozenset, collections.abc.Set: frozenset,
                          collections.abc.MutableSet: set}
_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_SECTIONS = frozenset({"args", "arguments", "parameters", "params"})
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def function_schema(fn: Callable[..., Any]) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, parameters)`` of a callable, parameters as an object JSON Schema;
    :class:`ToolRegistrationError` naming the parameter for ``*args``, a positional-only one or a bad hint."""
    name, target = _target(fn)
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as err:  # a hint that does not resolve: any NameError, TypeError, ...
        raise ToolRegistrationError(f"cannot resolve the type hints: {err}", tool=name) from err
    description, arg_docs = parse_docstring(inspect.getdoc(fn.func if isinstance(fn, functools.partial) else fn) or "")
    converter = _Hints(name)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        where = f"parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolRegistrationError(
                f"{where}: *args and **kwargs have no schema; list the arguments explicitly", tool=name)
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolRegistrationError(f"{where} is positional-only but tools are called by keyword", tool=name)
        if param.name not in hints:
            raise ToolRegistrationError(f"{where} has no type hint; annotate it (e.g. '{param.name}: str')", tool=name)
        schema = converter.schema(hints[param.name], where)
        if param.name in arg_docs:
            schema = {**schema, "description": arg_docs[param.name]}
        if param.default is param.empty:
            required.append(param.name)
        elif _is_json(param.default):
            schema = {**schema, "default": param.default}
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if converter.defs:
        parameters["$defs"] = converter.defs
    return name, description, parameters


def _target(fn: Callable[..., Any]) -> tuple[str, Any]:
    """The name of a callable and the object whose type hints describe its parameters."""
    inner = fn.func if isinstance(fn, functools.partial) else fn
    name = getattr(inner, "__name__", type(inner).__name__)
    target = inner if inspect.isfunction(inner) or inspect.ismethod(inner) else getattr(inner, "__call__", inner)  # noqa: B004 - the bound __call__ carries the hints
    return name, target


def argument_converters(fn: Callable[..., Any]) -> dict[str, Converter]:
    """For each parameter of ``fn`` whose hint is not a plain JSON type, the function turning the JSON value the
    model wrote into that type (inside lists, dicts and unions too). A callable whose hints cannot be read (the
    function of a tool made from a schema) gets none: ``{}``.

    Examples:
        >>> class Unit(enum.Enum):
        ...     C = "celsius"
        >>> def f(unit: Unit, tags: set[str], n: int) -> None: ...
        >>> convert = argument_converters(f)
        >>> sorted(convert), convert["unit"]("celsius"), sorted(convert["tags"](["a", "b", "a"]))
        (['tags', 'unit'], <Unit.C: 'celsius'>, ['a', 'b'])
    """
    _, target = _target(fn)
    try:
        hints = typing.get_type_hints(target, include_extras=True)
        names = list(inspect.signature(fn).parameters)
    except Exception:
        return {}
    out: dict[str, Converter] = {}
    for name in names:
        converter = _converter(hints[name]) if name in hints else None
        if converter is not None:
            out[name] = converter
    return out


def _converter(hint: Any) -> Converter | None:
    """JSON value -> ``hint``; ``None`` when the JSON value already is one (no work to do)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _converter(args[0])
    if hint is Any or hint is None or hint in _SCALARS or origin is typing.Literal:
        return None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    if origin in (typing.Union, types.UnionType):
        return _union_converter(hint, args)
    if hint in (list, Sequence, dict, Mapping, tuple) and not args:
        return tuple if hint is tuple else None
    if origin in (list, Sequence):
        return _each(_converter(args[0]), list)
    if hint in _SETS or origin in _SETS:
        return _each(_converter(args[0]) if args else None, _SETS[origin or hint], always=True)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _each(_converter(args[0]), tuple, always=True)
        parts = [_converter(a) or _same for a in args if a != ()]
        return lambda value: tuple(part(v) for part, v in zip(parts, value))
    if origin in (dict, Mapping):
        value_converter = _converter(args[1])
        if value_converter is None:
            return None
        return lambda value: {k: value_converter(v) for k, v in value.items()}
    import pydantic  # dataclasses, models, TypedDicts: their schema came from pydantic too

    return pydantic.TypeAdapter(hint).validate_python


def _same(value: Any) -> Any:
    return value


def _each(item: Converter | None, kind: Callable[[Any], Any], *, always: bool = False) -> Converter | None:
    """Convert every item of an array and collect them into ``kind`` (``None``: nothing to do)."""
    if item is None and not always:
        return None
    convert = item or _same
    return lambda value: kind(convert(v) for v in value)


def _union_converter(hint: Any, args: tuple[Any, ...]) -> Converter | None:
    """``X | None`` converts X unless the value is null; pydantic picks the member of other unions."""
    options = [a for a in args if a is not type(None)]
    converters = [_converter(a) for a in options]
    if all(c is None for c in converters):
        return None
    only = converters[0]
    if len(options) == 1 and only is not None:
        return lambda value: None if value is None else only(value)
    import pydantic

    return pydantic.TypeAdapter(hint).validate_python


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})``: a Google-style docstring's first paragraph and ``Args:``."""
    lines = inspect.cleandoc(doc).splitlines()
    first: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            if first or _SECTION.match(line.strip()):
                break
            continue
        first.append(line.strip())
    args: dict[str, str] = {}
    section, indent, current = "", 0, ""
    for line in lines:
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        if _SECTION.match(line):  # a header at the left margin
            section, current = _SECTION.match(line).group(1).lower(), ""  # type: ignore[union-attr]
            indent = 0
            continue
        if section not in _ARG_SECTIONS or not stripped:
            continue
        match = _ARG_LINE.match(stripped)
        if match and (not indent or depth <= indent):
            indent, current = depth, match.group(1).lstrip("*")
            args[current] = match.group(3).strip()
        elif current:
            args[current] = f"{args[current]} {stripped}".strip()
    return " ".join(first), args


class _Hints:
    """Type hints to JSON Schemas for one tool; pydantic-made ``$defs`` are gathered for the top."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.defs: dict[str, Any] = {}

    def schema(self, hint: Any, where: str) -> dict[str, Any]:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Annotated:
            return self.schema(args[0], where)
        if hint is Any:
            return {}
        if hint in _SCALARS or hint is None:
            return {"type": _SCALARS[type(None) if hint is None else hint]}
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return {"enum": [member.value for member in hint]}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if origin in (typing.Union, types.UnionType):
            return _union_schema([self.schema(a, where) for a in args])
        if hint in (list, Sequence) or origin in (list, Sequence) or hint in _SETS or origin in _SETS:
            return {"type": "array", **({"items": self.schema(args[0], where)} if args else {})}
        if hint is tuple or origin is tuple:
            return self.tuple(args, where)
        if hint in (dict, Mapping) or origin in (dict, Mapping):
            if args and args[0] is not str:
                raise ToolRegistrationError(f"{where}: JSON object keys are strings, not {args[0]!r}", tool=self.tool)
            return {"type": "object", **({"additionalProperties": self.schema(args[1], where)} if args else {})}
        return self.pydantic(hint, where)

    def tuple(self, args: tuple[Any, ...], where: str) -> dict[str, Any]:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0], where)}
        if args == ((),):  # tuple[()]
            return {"type": "array", "maxItems": 0}
        return {"type": "array", "prefixItems": [self.schema(a, where) for a in args],
                "minItems": len(args), "maxItems": len(args)}

    def pydantic(self, hint: Any, where: str) -> dict[str, Any]:
        """Models, dataclasses and TypedDicts through pydantic, if it is installed."""
        unsupported = ToolRegistrationError(
            f"{where}: type {hint!r} has no JSON Schema mapping; use int, float, str, bool, None, list, tuple,"
            f" dict, Literal, an Enum, a union of these, or a pydantic model / dataclass / TypedDict", tool=self.tool)
        if "pydantic" not in sys.modules and importlib.util.find_spec("pydantic") is None:
            raise unsupported
        import pydantic

        try:
            schema: dict[str, Any] = _without_unique_items(pydantic.TypeAdapter(hint).json_schema())
        except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, TypeError) as err:
            raise unsupported from err
        for key, value in schema.pop("$defs", {}).items():
            if self.defs.get(key, value) != value:
                raise ToolRegistrationError(
                    f"{where}: two different types are both called {key!r}; rename one", tool=self.tool)
            self.defs[key] = value
        return schema


def _without_unique_items(node: Any) -> Any:
    """``node`` without pydantic's ``uniqueItems`` for set fields, which decoding cannot enforce: the set collapses
    duplicates when the arguments are converted."""
    if isinstance(node, dict):
        return {k: _without_unique_items(v) for k, v in node.items() if not (k == "uniqueItems" and v is True)}
    if isinstance(node, list):
        return [_without_unique_items(v) for v in node]
    return node


def _union_schema(options: list[dict[str, Any]]) -> dict[str, Any]:
    """``X | Y``: a type list when every option is a bare type, else ``anyOf``."""
    if all(set(o) == {"type"} and isinstance(o["type"], str) for o in options):
        return {"type": [o["type"] for o in options]}
    rest = [o for o in options if o != {"type": "null"}]
    if len(rest) == 1 and len(options) == 2:  # Optional[X]
        (only,) = rest
        if isinstance(only.get("type"), str) and "enum" not in only:
            return {**only, "type": [only["type"], "null"]}
        if set(only) == {"enum"}:
            return {"enum": [*only["enum"], None]}
    return {"anyOf": options}


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_json(v) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _is_json(v) for k, v in value.items())
