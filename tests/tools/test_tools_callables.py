"""Tools from typed Python functions: hints to JSON types, Google docstrings to descriptions."""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any, Literal, Optional, Union

import pydantic
import pytest

from tooldec.errors import ToolRegistrationError
from tooldec.tools import Tool
from tooldec.tools.callables import function_schema, parse_docstring


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def f_int(x: int) -> None: ...
def f_float(x: float) -> None: ...
def f_str(x: str) -> None: ...
def f_bool(x: bool) -> None: ...
def f_none(x: None) -> None: ...
def f_any(x: Any) -> None: ...
def f_list(x: list) -> None: ...  # type: ignore[type-arg]
def f_list_int(x: list[int]) -> None: ...
def f_nested(x: list[list[str]]) -> None: ...
def f_tuple(x: tuple[int, str]) -> None: ...
def f_tuple_var(x: tuple[float, ...]) -> None: ...
def f_dict(x: dict) -> None: ...  # type: ignore[type-arg]
def f_dict_str(x: dict[str, int]) -> None: ...
def f_literal(x: Literal["a", "b", 3]) -> None: ...
def f_enum(x: Color) -> None: ...
def f_int_enum(x: Level) -> None: ...
def f_optional(x: Optional[int]) -> None: ...  # noqa: UP045 - the spelling under test
def f_pipe_none(x: str | None) -> None: ...
def f_optional_list(x: list[int] | None) -> None: ...
def f_optional_literal(x: Literal["a", "b"] | None) -> None: ...
def f_union(x: Union[int, str]) -> None: ...
def f_union_complex(x: int | list[str]) -> None: ...


HINTS = [
    (f_int, {"type": "integer"}), (f_float, {"type": "number"}), (f_str, {"type": "string"}),
    (f_bool, {"type": "boolean"}), (f_none, {"type": "null"}), (f_any, True),
    (f_list, {"type": "array"}), (f_list_int, {"type": "array", "items": {"type": "integer"}}),
    (f_nested, {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}),
    (f_tuple, {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}),
    (f_tuple_var, {"type": "array", "items": {"type": "number"}}),
    (f_dict, {"type": "object"}), (f_dict_str, {"type": "object", "additionalProperties": {"type": "integer"}}),
    (f_literal, {"enum": ["a", "b", 3]}), (f_enum, {"enum": ["red", "green"]}), (f_int_enum, {"enum": [1, 2]}),
    (f_optional, {"type": ["integer", "null"]}), (f_pipe_none, {"type": ["string", "null"]}),
    (f_optional_list, {"type": ["array", "null"], "items": {"type": "integer"}}),
    (f_optional_literal, {"enum": ["a", "b", None]}),
    (f_union, {"type": ["integer", "string"]}),
    (f_union_complex, {"type": ["integer", "array"], "items": {"type": "string"}}),
]


@pytest.mark.parametrize(("fn", "expected"), HINTS, ids=[fn.__name__ for fn, _ in HINTS])
def test_type_hints(fn: Any, expected: dict[str, Any]) -> None:
    tool = Tool.from_function(fn)
    assert tool.parameters == {"type": "object", "properties": {"x": expected}, "required": ["x"]}


def search(query: str, limit: int = 10, *, lang: Literal["en", "fr"] = "en", tags: list[str] | None = None) -> list[str]:
    """Search the catalogue for items.

    Matches titles and bodies; this second paragraph is not part of the description.

    Args:
        query: The words to look for. Continuation lines
            are joined.
        limit (int): At most this many results.
        lang: The language.

    Returns:
        The matching titles.
    """
    return [query] * min(limit, 2)


def test_docstring_and_defaults() -> None:
    tool = Tool.from_function(search)
    assert tool.name == "search"
    assert tool.description == "Search the catalogue for items."
    assert tool.parameters["required"] == ["query"]
    source = tool.source_parameters
    assert source is not None
    props = source["properties"]
    assert props["query"]["description"] == "The words to look for. Continuation lines are joined."
    assert props["limit"] == {"type": "integer", "description": "At most this many results.", "default": 10}
    assert props["lang"] == {"enum": ["en", "fr"], "description": "The language.", "default": "en"}
    assert "description" not in props["tags"]
    assert tool(query="x", limit=5) == ["x", "x"]


def test_parse_docstring_sections() -> None:
    doc = """Short.

    Args:
        a: one
        b (list[int]): two
            more two
    Raises:
        ValueError: not an argument.
    """
    assert parse_docstring(doc) == ("Short.", {"a": "one", "b": "two more two"})
    assert parse_docstring("") == ("", {})
    assert parse_docstring("Line one\nline two.\n\nBody.") == ("Line one line two.", {})


def test_name_and_description_overrides() -> None:
    tool = Tool.from_function(search, name="find", description="Find things.")
    assert (tool.name, tool.description) == ("find", "Find things.")


def no_hint(x, y: int) -> None: ...  # type: ignore[no-untyped-def]
def star_args(*values: int) -> None: ...
def star_kwargs(**options: int) -> None: ...
def positional_only(x: int, /) -> None: ...
def int_keys(x: dict[int, str]) -> None: ...
class Opaque:
    pass


def bad_type(x: Opaque) -> None: ...
def unresolvable(x: NoSuchType) -> None: ...  # type: ignore[name-defined]  # noqa: F821


@pytest.mark.parametrize(("fn", "words"), [
    (no_hint, "parameter 'x' has no type hint"),
    (star_args, "parameter 'values': *args and **kwargs"),
    (star_kwargs, "parameter 'options': *args and **kwargs"),
    (positional_only, "parameter 'x' is positional-only"),
    (int_keys, "parameter 'x': JSON object keys are strings"),
    (bad_type, f"parameter 'x': type {Opaque} has no JSON Schema mapping"),  # its module's name depends on how pytest imports it
    (unresolvable, "cannot resolve the type hints"),
])
def test_refused_parameters(fn: Any, words: str) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        Tool.from_function(fn)
    assert words in str(info.value)
    assert info.value.tool == fn.__name__ and f"tool {fn.__name__!r}" in str(info.value)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point


def move(to: Point, via: list[Point] | None = None, along: Segment | None = None) -> str:
    """Move to a point."""
    return f"{to.x},{to.y}"


def test_dataclass_parameters_through_pydantic() -> None:
    tool = Tool.from_function(move)
    point = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
    props = tool.parameters["properties"]
    assert props["to"] == point
    assert props["via"] == {"type": ["array", "null"], "items": point}
    segment = {"type": "object", "properties": {"start": point, "end": point}, "required": ["start", "end"]}
    assert props["along"] == {**segment, "type": ["object", "null"]}, "nested models' references are resolved"
    assert tool.validate_arguments({"to": {"x": 1, "y": 2}, "via": [{"x": 1, "y": "no"}]}) == [
        "at /via/0/y: 'no' is not of type 'integer'"]
    assert tool.validate_arguments({"to": {"x": 1, "y": 2}, "along": {"start": {"x": 1, "y": 2}, "end": {}}}) == [
        "at /along/end: 'x' is a required property", "at /along/end: 'y' is a required property"]


class Adder:
    """Adds a fixed amount."""

    def __init__(self, amount: int) -> None:
        self.amount = amount

    def __call__(self, x: int) -> int:
        return x + self.amount


def test_callable_object_method_and_partial() -> None:
    tool = Tool.from_function(Adder(3))
    assert (tool.name, tool.description, tool(x=1)) == ("Adder", "Adds a fixed amount.", 4)

    def scale(x: float, factor: float) -> float:
        """Scale x."""
        return x * factor

    part = Tool.from_function(functools.partial(scale, factor=2.0))
    assert part.name == "scale" and part(x=2.0, factor=3.0) == 6.0
    assert part.parameters["required"] == ["x"]
    bound = Tool.from_function(Adder(1).__call__, name="add_one")
    assert list(bound.parameters["properties"]) == ["x"] and bound(x=1) == 2


def test_function_schema_direct() -> None:
    name, description, parameters = function_schema(f_int)
    assert (name, description) == ("f_int", "")
    assert parameters == {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def test_lambda_name_is_refused() -> None:
    from tooldec.errors import InvalidToolNameError

    with pytest.raises(InvalidToolNameError, match="'<lambda>' is not a valid tool name"):
        Tool.from_function(lambda: None)


# --- The way back: the JSON the model wrote, converted to each parameter's annotated type. ---

class Box(pydantic.BaseModel):
    width: float
    labels: set[str] = set()


def typed_tool(color: Color, where: Point, tags: set[str], pair: tuple[int, Color], level: Optional[Level] = None,  # noqa: UP045
               path: list[Point] = [], frozen: frozenset[int] = frozenset(), plain: list[int] = []) -> Any:  # noqa: B006
    """Returns what it was given, to see the types."""
    return {"color": color, "where": where, "tags": tags, "pair": pair, "level": level, "path": path,
            "frozen": frozen, "plain": plain}


def test_arguments_are_given_the_annotated_types() -> None:
    tool = Tool.from_function(typed_tool)
    got = tool(color="red", where={"x": 1, "y": 2}, tags=["a", "b", "a"], pair=[3, "green"], level=2,
               path=[{"x": 0, "y": 0}], frozen=[1, 1], plain=[5])
    assert got == {"color": Color.RED, "where": Point(1, 2), "tags": {"a", "b"}, "pair": (3, Color.GREEN),
                   "level": Level.HIGH, "path": [Point(0, 0)], "frozen": frozenset({1}), "plain": [5]}
    assert tool(color="green", where={"x": 0, "y": 0}, tags=[], pair=[0, "red"], level=None)["level"] is None


def test_a_pydantic_model_parameter_gets_the_model() -> None:
    def pack(box: Box, boxes: dict[str, Box]) -> Any:
        """Packs boxes."""
        return box, boxes

    tool = Tool.from_function(pack)
    labels = tool.parameters["properties"]["box"]
    assert "uniqueItems" not in str(tool.parameters), labels  # the set is a plain array: decoding can write it
    box, boxes = tool(box={"width": 2, "labels": ["x", "x"]}, boxes={"a": {"width": 1}})
    assert box == Box(width=2.0, labels={"x"}) and boxes == {"a": Box(width=1.0)}
    with pytest.raises(pydantic.ValidationError):
        tool(box={"width": "wide"}, boxes={})


def test_set_parameters_need_no_unique_items() -> None:
    def tag(items: set[int]) -> int:
        """Counts distinct items."""
        return len(items)

    tool = Tool.from_function(tag)
    assert tool.parameters["properties"]["items"] == {"type": "array", "items": {"type": "integer"}}
    assert tool(items=[1, 2, 2]) == 2


def test_functions_without_hints_get_the_json_values() -> None:
    tool = Tool.from_dict({"name": "echo", "parameters": {"type": "object", "properties": {"x": {}}}})
    tool = Tool(tool.name, tool.description, tool.parameters, lambda **kw: kw)
    assert tool(x={"a": [1]}) == {"x": {"a": [1]}}
