"""Tool: names, vendor dict shapes, Pydantic models, argument validation, calling, coercion."""

from __future__ import annotations

import json
from typing import Any, Literal

import pydantic
import pytest

from tooldec.errors import (
    InvalidSchemaError,
    InvalidToolNameError,
    ToolDecError,
    ToolNotCallableError,
    ToolRegistrationError,
    UnsupportedSchemaError,
)
from tooldec.tools import Tool

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}
NORMAL = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

SHAPES = [
    pytest.param({"type": "function", "function": {"name": "weather", "description": "Get weather.", "parameters": WEATHER,
                                                   "strict": True}}, id="openai-chat"),
    pytest.param({"function": {"name": "weather", "description": "Get weather.", "parameters": WEATHER}}, id="openai-legacy"),
    pytest.param({"type": "function", "name": "weather", "description": "Get weather.", "parameters": WEATHER}, id="openai-responses"),
    pytest.param({"name": "weather", "description": "Get weather.", "inputSchema": WEATHER}, id="mcp"),
    pytest.param({"name": "weather", "description": "Get weather.", "input_schema": WEATHER}, id="anthropic"),
    pytest.param({"name": "weather", "description": "Get weather.", "parameters": WEATHER}, id="plain"),
]


@pytest.mark.parametrize("spec", SHAPES)
def test_dict_shapes(spec: dict[str, Any]) -> None:
    tool = Tool.from_dict(spec)
    assert (tool.name, tool.description, tool.parameters, tool.fn) == ("weather", "Get weather.", NORMAL, None)
    assert tool.source_parameters == WEATHER
    assert Tool.coerce(spec).parameters == NORMAL


@pytest.mark.parametrize("spec", [
    {"name": "now"}, {"name": "now", "parameters": None}, {"name": "now", "parameters": {}},
    {"type": "function", "function": {"name": "now"}}, {"name": "now", "inputSchema": {}},
])
def test_missing_parameters_mean_no_arguments(spec: dict[str, Any]) -> None:
    tool = Tool.from_dict(spec)
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.description == ""
    assert tool.validate_arguments({}) == []


@pytest.mark.parametrize(("spec", "words"), [
    ({"description": "no name"}, "keys ['description']"),
    ({"type": "web_search_preview"}, "with type 'web_search_preview'"),
    ({"type": "function", "function": {"description": "x"}}, "keys ['description']"),
    ({"name": "x", "parameters": WEATHER, "input_schema": WEATHER}, "keys ['input_schema', 'name', 'parameters']"),
    ({"name": 3}, "keys ['name']"),
])
def test_unrecognised_dicts(spec: dict[str, Any], words: str) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        Tool.from_dict(spec)
    message = str(info.value)
    assert words in message and "not a tool definition" in message
    for shape in ("Chat Completions", "Responses", "MCP", "Anthropic", "plain"):
        assert shape in message


def test_dict_description_must_be_text() -> None:
    with pytest.raises(ToolRegistrationError, match="tool 'x': description must be a string"):
        Tool.from_dict({"name": "x", "description": ["a"]})


def test_dict_schema_errors_name_the_tool() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        Tool.from_dict({"name": "book", "parameters": {"type": "object", "properties": {"when": {"type": "string", "format": "uri-template"}}}})
    assert (info.value.tool, info.value.pointer, info.value.keyword) == ("book", "/properties/when/format", "format")
    with pytest.raises(InvalidSchemaError, match="tool 'book': at /: parameters must be an object schema"):
        Tool.from_dict({"name": "book", "parameters": {"type": "array"}})


@pytest.mark.parametrize("name", ["a", "math.factorial", "get-an-album", "_x", "9lives", "A" * 128, "GET_movie-movie_id-keywords"])
def test_valid_names(name: str) -> None:
    assert Tool(name, "", {"type": "object"}).name == name


@pytest.mark.parametrize("name", ["", "a b", 'say"', "f(x)", "a>b", "a\nb", "a\n", ".hidden", "-x", "A" * 129, "é", "a/b"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidToolNameError) as info:
        Tool(name, "", {"type": "object"})
    message = str(info.value)
    assert repr(name) in message and "^[A-Za-z0-9_][A-Za-z0-9_.\\-]{0,127}$" in message
    assert info.value.tool == name


def test_non_string_name_and_description() -> None:
    with pytest.raises(InvalidToolNameError, match="None is not a valid tool name"):
        Tool(None, "", {"type": "object"})  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError, match="description must be a string"):
        Tool("x", None, {"type": "object"})  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError, match="fn must be callable"):
        Tool("x", "", {"type": "object"}, fn=3)  # type: ignore[arg-type]


def test_construction_normalizes() -> None:
    raw = {"type": "dict", "properties": {"x": {"type": "float", "description": "d"}}}
    tool = Tool("t", "", raw)
    assert tool.parameters == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert tool.source_parameters == raw and tool.source_parameters is not raw
    assert raw["type"] == "dict"


def test_schema_hash() -> None:
    """Equal normalized schemas share a hash; property order counts (arguments are written in it)."""
    a = Tool("a", "first", {"type": "object", "properties": {"x": {"type": "integer", "description": "one"}, "y": {"type": "string"}}})
    b = Tool("b", "second", {"type": "dict", "properties": {"x": {"type": "integer"}, "y": {"type": "string", "title": "Y"}}})
    swapped = Tool("c", "", {"type": "object", "properties": {"y": {"type": "string"}, "x": {"type": "integer"}}})
    other = Tool("d", "", {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "string"}}})
    assert a.schema_hash == b.schema_hash
    assert len({a.schema_hash, swapped.schema_hash, other.schema_hash}) == 3
    assert len(a.schema_hash) == 64 and int(a.schema_hash, 16) >= 0


FORMATS = Tool("book", "", {"type": "object", "properties": {
    "day": {"type": "string", "format": "date"}, "at": {"type": "string", "format": "time"},
    "when": {"type": "string", "format": "date-time"}, "id": {"type": "string", "format": "uuid"},
    "mail": {"type": "string", "format": "email"}, "site": {"type": "string", "format": "uri"}}})


@pytest.mark.parametrize(("field", "good", "bad"), [
    ("day", "2024-02-29", "2023-02-29"), ("at", "12:30:00Z", "25:00:00Z"), ("when", "2024-01-01T10:00:00+02:00", "2024-01-01 10:00"),
    ("id", "123e4567-e89b-12d3-a456-426614174000", "123e4567"), ("mail", "a@b.org", "ab.org"), ("site", "https://x.org/p?q=1", "x.org"),
])
def test_validate_arguments_checks_every_supported_format(field: str, good: str, bad: str) -> None:
    assert FORMATS.validate_arguments({field: good}) == []
    assert FORMATS.validate_arguments({field: bad}) == [f"at /{field}: {bad!r} is not a {FORMATS.parameters['properties'][field]['format']!r}"]


def test_validate_arguments_lists_every_error() -> None:
    tool = Tool("t", "", {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}, "s": {"enum": ["a"]}},
                         "required": ["n"], "additionalProperties": False})
    assert tool.validate_arguments({"n": 2, "s": "a"}) == []
    assert tool.validate_arguments({"n": 4, "s": "b", "z": 1}) == [
        "at /: Additional properties are not allowed ('z' was unexpected)",
        "at /n: 4 is greater than the maximum of 3",
        "at /s: 'b' is not one of ['a']",
    ]
    assert tool.validate_arguments({}) == ["at /: 'n' is a required property"]


def test_call() -> None:
    tool = Tool("double", "", {"type": "object", "properties": {"x": {"type": "integer"}}}, fn=lambda x: 2 * x)
    assert tool(x=4) == 8
    schema_only = Tool.from_dict({"name": "remote"})
    with pytest.raises(ToolNotCallableError, match="tool 'remote' has no function") as info:
        schema_only()
    assert isinstance(info.value, ToolDecError) and isinstance(info.value, TypeError)


def test_tool_is_frozen_and_compared_by_identity() -> None:
    a = Tool("a", "", {"type": "object"})
    with pytest.raises(AttributeError):
        a.name = "b"  # type: ignore[misc]
    assert a != Tool("a", "", {"type": "object"}) and a == a
    assert len({a, a}) == 1


class Address(pydantic.BaseModel):
    street: str
    zip_code: str = pydantic.Field(pattern=r"^\d{5}$")


class CreateUser(pydantic.BaseModel):
    """Create a user account."""

    name: str = pydantic.Field(description="Full name", min_length=1)
    age: int = pydantic.Field(ge=0, le=150)
    role: Literal["admin", "user"] = "user"
    address: Address
    previous: list[Address] = []
    nickname: str | None = None


def test_from_pydantic_with_nested_model() -> None:
    tool = Tool.from_pydantic(CreateUser)
    assert (tool.name, tool.description) == ("CreateUser", "Create a user account.")
    address = {"type": "object", "properties": {"street": {"type": "string"}, "zip_code": {"type": "string", "pattern": r"^\d{5}$"}},
               "required": ["street", "zip_code"]}
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "role": {"enum": ["admin", "user"]},
            "address": address,
            "previous": {"type": "array", "items": address},
            "nickname": {"type": ["string", "null"]},
        },
        "required": ["name", "age", "address"],
    }
    good = {"name": "Ada", "age": 36, "address": {"street": "Main", "zip_code": "12345"}}
    assert tool.validate_arguments(good) == []
    assert tool.validate_arguments({**good, "address": {"street": "Main", "zip_code": "1"}}) == [
        "at /address/zip_code: '1' does not match '^\\\\d{5}$'"]
    assert Tool.coerce(CreateUser).parameters == tool.parameters


def test_from_pydantic_options_and_errors() -> None:
    made: list[dict[str, Any]] = []
    tool = Tool.from_pydantic(Address, name="set_address", description="Set it.", fn=lambda **kw: made.append(kw))
    tool(street="Main", zip_code="12345")
    assert (tool.name, tool.description, made) == ("set_address", "Set it.", [{"street": "Main", "zip_code": "12345"}])

    class Bad(pydantic.BaseModel):
        tags: set[str]

    with pytest.raises(UnsupportedSchemaError) as info:
        Tool.from_pydantic(Bad)
    assert (info.value.tool, info.value.pointer, info.value.keyword) == ("Bad", "/properties/tags/uniqueItems", "uniqueItems")


def test_coerce() -> None:
    tool = Tool("t", "", {"type": "object"})
    assert Tool.coerce(tool) is tool

    def ping(host: str) -> bool:
        """Ping a host."""
        return True

    assert Tool.coerce(ping).description == "Ping a host."
    assert Tool.coerce({"name": "n"}).name == "n"
    with pytest.raises(ToolRegistrationError, match="cannot make a tool from int: pass a Tool, a function"):
        Tool.coerce(3)


def test_equal_tool_dicts_share_one_tool_and_its_checks() -> None:
    """A server's repeated tool list (fresh dicts, same JSON) costs a lookup per tool: the same
    ``Tool`` object comes back."""
    spec = {"type": "function", "function": {"name": "shared_lookup", "description": "Look up.",
                                             "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
    first = Tool.from_dict(spec)
    again = Tool.from_dict(json.loads(json.dumps(spec)))
    assert again is first
    assert first.source_parameters == spec["function"]["parameters"]
    assert first.source_parameters is not spec["function"]["parameters"]  # a copy, not the caller's dict
    other = Tool.from_dict({**spec, "function": {**spec["function"], "description": "Look it up."}})
    assert other is not first and other.description == "Look it up."
    # another tool with an equal schema shares its two schemas (read-only), made from a snapshot
    # of the first caller's dict: changing that dict afterwards changes no tool
    spec["function"]["parameters"]["properties"]["q"]["type"] = "integer"
    renamed = Tool("shared_lookup_2", "", {"type": "object", "properties": {"q": {"type": "string"}}})
    assert renamed.parameters is first.parameters and renamed.source_parameters is first.source_parameters
    assert renamed.parameters["properties"]["q"] == {"type": "string"} == first.source_parameters["properties"]["q"]


def test_tool_dicts_that_differ_only_in_types_are_different_tools() -> None:
    """The shared-tool cache tells ``true`` from ``1`` (Python's ``True == 1``): a constant of
    another type is another schema, and the machine must write the one the dict says."""
    def spec(const: object) -> dict[str, object]:
        return {"name": "set_flag", "parameters": {"type": "object", "properties": {"v": {"const": const}},
                                                   "required": ["v"]}}

    def value(tool: Tool) -> object:
        (only,) = tool.parameters["properties"]["v"]["enum"]
        return only

    as_bool, as_int, as_float = Tool.from_dict(spec(True)), Tool.from_dict(spec(1)), Tool.from_dict(spec(1.5))
    assert as_bool is not as_int and value(as_bool) is True and type(value(as_int)) is int
    assert Tool.from_dict(spec(True)) is as_bool and Tool.from_dict(spec(1.5)) is as_float

    class Spec(dict):  # type: ignore[type-arg]
        pass

    subclassed = Spec(spec(True))  # not a plain dict: made afresh each time, still right
    assert Tool.from_dict(subclassed) is not as_bool and Tool.from_dict(subclassed).parameters == as_bool.parameters


def test_a_bad_tool_dict_fails_every_time() -> None:
    """Only successes are cached: the same bad dict raises on every registration."""
    bad = {"name": "bad_enum", "parameters": {"type": "object", "properties": {"x": {"enum": []}},
                                              "required": ["x"]}}
    for _ in range(2):
        with pytest.raises(ToolRegistrationError):
            Tool.from_dict(bad)


def test_a_tool_that_has_validated_arguments_still_pickles() -> None:
    import pickle

    tool = Tool.coerce({"name": "f", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}},
                                                    "$defs": {"x": {"type": "integer"}}}})
    assert tool.validate_arguments({"a": "s"})  # resolving the reference builds local functions
    copy = pickle.loads(pickle.dumps(tool))
    assert copy.schema_hash == tool.schema_hash and copy.validate_arguments({"a": 1}) == []
    assert copy.validate_arguments({"a": "s"}) == tool.validate_arguments({"a": "s"})


def test_the_schema_as_written_is_a_snapshot_taken_at_registration() -> None:
    """The source schema is read from the bytes the cache key was made of, when first asked for:
    changing the caller's dict after registration changes nothing, and tools with equal schemas
    share one copy (pickled, a tool carries the dict itself)."""
    import dataclasses
    import pickle

    spec = {"name": "snapshot_source", "description": "d", "parameters": {
        "type": "object", "properties": {"q": {"type": "string", "description": "the query"}}}}
    tool = Tool.from_dict(spec)
    written = json.loads(json.dumps(spec["parameters"]))
    spec["parameters"]["properties"]["q"]["description"] = "changed"
    del spec["parameters"]["properties"]["q"]["type"]
    assert tool.source_parameters == written and "the query" not in repr(tool)
    twin = Tool("snapshot_twin", "", json.loads(json.dumps(written)))
    assert twin.source_parameters is tool.source_parameters
    copy = pickle.loads(pickle.dumps(tool))
    assert copy.source_parameters == written and copy.parameters == tool.parameters
    assert dataclasses.replace(tool, name="snapshot_other").source_parameters == written
    given = Tool("snapshot_given", "", {"type": "object"}, source_parameters={"type": "object", "title": "t"})
    assert given.source_parameters == {"type": "object", "title": "t"}
