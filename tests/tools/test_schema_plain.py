"""The plain-schema shortcut writes exactly what the reader writes (key order included), and its
size estimate is the full estimate; anything it does not recognise goes to the reader."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tooldec.tools.schema as schema_module
from benchmarks.paper.datasets import bfcl_tools, funcqa_tools, kamel_tools, toolbench_tools
from tooldec.errors import ToolDecError
from tooldec.tools.dicts import dict_schema
from tooldec.tools.schema import normalize_schema
from tooldec.tools.schema_plain import plain_form, plain_form_cost, plain_form_cost_in_python
from tooldec.tools.schema_size import enum_cost, estimate, plain_cost


def read(schema: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The reader's normal form (the shortcut turned off), or the error's type."""
    with monkeypatch.context() as patch:
        patch.setattr(schema_module, "plain_form_cost", lambda _: None)
        try:
            return normalize_schema(schema, tool="t")
        except ToolDecError as error:
            return type(error)


def corpus(data_dir: Path) -> list[Any]:
    """The parameter schemas of the four inventories (full sets, or the fixtures) and JSONSchemaBench's."""
    schemas = [dict_schema(spec)[2] for load in (bfcl_tools, kamel_tools, toolbench_tools)
               for spec in load(data_dir)]
    schemas += [dict_schema(spec)[2] for spec in funcqa_tools()]
    for path in sorted((data_dir / "jsonschemabench").glob("*/*.json")):
        schemas.append(json.loads(path.read_text()))
    return schemas


def random_plain(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A plain schema with annotations, unknown keys, enums, nesting and key orders mixed."""
    kind = rng.choice(["string", "integer", "number", "boolean", "null", "array", "object"] if depth < 3 else ["string", "integer"])
    node: dict[str, Any] = {}
    keys = ["type", "description", "x-extra", "default"]
    rng.shuffle(keys)
    for key in keys:
        if key == "type":
            node["type"] = kind
        elif rng.random() < 0.5:
            node[key] = rng.choice(["d", 3, None, ["a"]])
    if kind == "string" and rng.random() < 0.3:
        node["enum"] = [rng.choice(["a", "b", "é", "\n"]) for _ in range(rng.randint(1, 4))]
    if kind == "integer" and rng.random() < 0.3:
        node["enum"] = [rng.randint(-3, 3) for _ in range(rng.randint(1, 4))]
    if kind == "array":
        node["items"] = random_plain(rng, depth + 1)
    if depth and rng.random() < 0.05:  # annotations only: any value
        return {key: value for key, value in node.items() if key in ("description", "x-extra", "default")}
    if kind == "object" and rng.random() < 0.1:  # any members
        return node
    if kind == "object":
        names = rng.sample(["a", "b", "c", "long_name", "ü"], rng.randint(0, 4))
        node["properties"] = {n: random_plain(rng, depth + 1) for n in names}
        if names and rng.random() < 0.7:
            node["required"] = rng.sample(names, rng.randint(0, len(names)))
    return node


def same_walks(schema: Any) -> tuple[dict[str, Any], int] | None:
    """The shortcut's answer, after checking that the compiled walk (where built) and the Python
    walk give it alike: the same form, key order and value types included, and the same cost."""
    found, python = plain_form_cost(schema), plain_form_cost_in_python(schema)
    assert (found is None) == (python is None), schema
    if found is not None and python is not None:
        assert json.dumps(found[0]) == json.dumps(python[0]) and found == python, schema
        assert [type(v) for v in found[0].values()] == [type(v) for v in python[0].values()]
    return found


def check(schema: Any, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the shortcut took ``schema``; if it did, its form and cost are the reader's."""
    same_walks(schema)
    form = plain_form(schema)
    if form is None:
        return False
    assert json.dumps(form) == json.dumps(read(schema, monkeypatch)), schema
    assert plain_cost(form) == estimate(form)[0], form
    assert plain_form_cost(schema) == (form, plain_cost(form))  # the cost summed while writing
    return True


def test_the_shortcut_agrees_with_the_reader_on_every_corpus_schema(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = corpus(data_dir)
    taken = sum(check(s, monkeypatch) for s in schemas)
    assert taken >= len(schemas) // 2  # most tool schemas are plain


def test_the_shortcut_agrees_with_the_reader_on_random_plain_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    roots = [{**random_plain(rng), "type": "object", "properties": random_plain(rng, 3).get("properties", {})}
             for _ in range(100)]
    roots += [{"type": "object", "properties": {"p": random_plain(rng)}} for _ in range(300)]
    assert sum(check(s, monkeypatch) for s in roots) >= 300


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"\ud800": {"type": "integer"}}},  # a key the grammar cannot write
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "\udfff"]}}},
    {"type": "object", "properties": {"é\udc00": {"type": "integer"}}},  # lone surrogates in wider strings
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["日本", "\U0001f600\ud800"]}}},
    {"type": "object", "properties": {"a": {"type": "string", "enum": [["a"]]}}},  # values of another type
    {"type": "object", "properties": {"a": {"type": "string", "enum": [{"a": "b"}]}}},
    {"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2.0]}}},
    {"type": "object", "properties": {"a": {"type": "boolean", "enum": [True, None]}}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},  # required, not listed
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},  # invalid
    {"type": "object", "properties": {"a": {"type": "integer", "enum": [1, True]}}},  # True is no integer
    {"type": "object", "properties": {"a": {"type": "number", "enum": [1, 1.0]}}},
    {"type": "object", "properties": {"a": {"type": "any"}}},  # BFCL's any type
    {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {"a": {"type": "array"}}},  # any items
    {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}},
    {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}},
    {"type": "object", "required": ["a"]},  # the reader lists a required name as a property
    {"type": "object", "properties": {"a": {"nullable": True}}},  # a keyword the reader acts on
    {"type": "object", "properties": {"a": {"const": 1, "description": "d"}}},
    {"description": "annotations only"},  # any value, but the top must be an object
    {},
    {"type": "string", "enum": ["a"]},
    {"type": "object", "properties": {1: {"type": "string"}}},
])
def test_what_is_not_plain_goes_to_the_reader(schema: dict[str, Any]) -> None:
    assert plain_form(schema) is None
    assert same_walks(schema) is None


@pytest.mark.parametrize("schema", [
    {"type": "dict", "properties": {"a": {"type": "float"}, "b": {"type": "tuple", "items": {"type": "string"}}}},
    {"type": "object", "properties": {"é": {"type": "boolean", "enum": [True, False, True]}}, "required": ["é"]},
    {"type": "object", "properties": {"a": {"type": "integer", "enum": [3, 1, 3], "description": "x"}}},
    {"type": "object", "properties": {"a": {"description": "x", "type": "string", "enum": ["日本", "a"]}}},
    {"type": "object", "properties": {}, "required": []},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}, "x-note": [1]},
    {"required": ["a"], "properties": {"a": {"items": {"type": "null"}, "type": "array"}}, "type": "object"},
    {"type": "object", "properties": {"a": {"type": "string", "enum": []}}},  # an empty enum: the reader's
    {"type": "object", "properties": {"a": {"type": "number", "enum": [1.5]}}},
    {"type": "object", "properties": {"a": {"type": "number", "enum": [0.1, 1e300, float("nan")]}}},
    {"type": "object", "properties": {"a": {"type": "array", "enum": [[1, {"b": None}]], "items": {}}}},
    {"type": "object", "properties": {"é": {"type": "string"}, "日本": {"type": "string"}, "\U0001f600": {}}},
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["é", "日本", "\U0001f600", '"\\\b\f\n\r\t\x00\x1f \x7f~']}}},
    {"type": "object", "properties": {"a": {"type": "integer", "enum": [0, -1, 9, 10, -10, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**40]}}},
    {"type": "object", "properties": {"a": {"type": "boolean", "enum": [False, True]}}},
    {"type": "object", "properties": {"a": {"type": "string", "enum": "ab"}}},
    {"type": "object", "required": "a", "properties": {"a": {"type": "string"}}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": [1]},
    {"type": "object", "properties": [{"type": "string"}]},
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
    {"type": "object", "properties": {"a": {"type": "string", "items": {"type": "string"}}}},
    "object", None, [], {"type": 1},
])
def test_the_compiled_walk_answers_as_the_python_walk(schema: Any) -> None:
    same_walks(schema)


@pytest.mark.parametrize("schema", [
    {"type": "object"},
    {"type": "dict", "description": "d", "required": []},
    {"type": "object", "properties": {"a": {}}},
    {"type": "object", "properties": {"a": {"description": "d", "default": 3, "x-foo": 1, "title": "t"}}, "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "object", "description": "x"}, "b": {"type": "integer"}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"title": "anything"}}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "dict"}}}},
])
def test_objects_of_any_members_and_subschemas_of_any_value_are_plain(schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """An object without ``properties`` (BFCL's bare ``dict``) and a subschema of annotations only
    (BFCL's ``any``, its type dropped) are written as the reader writes them, at its cost."""
    assert check(schema, monkeypatch)


def test_the_walks_agree_at_the_nesting_limit() -> None:
    for depth in (15, 16, 17, 18):
        node: dict[str, Any] = {"type": "string"}
        for _ in range(depth):
            node = {"type": "object", "properties": {"a": node}}
        same_walks(node)


@pytest.mark.parametrize("kind", ["string", "float", "boolean"])
def test_plain_nesting_stops_at_sixteen_levels_whatever_the_leaf(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scalar property is written without a call of its own; it still counts as a level."""
    def nested(levels: int) -> dict[str, Any]:
        node: dict[str, Any] = {"type": kind, "description": "leaf"}
        for _ in range(levels):
            node = {"type": "object", "properties": {"p": node}}
        return node

    assert check(nested(16), monkeypatch)
    assert plain_form(nested(17)) is None
    assert check({"type": "object", "properties": {"a": {"type": "array", "items": nested(14)}}}, monkeypatch)
    assert plain_form({"type": "object", "properties": {"a": {"type": "array", "items": nested(15)}}}) is None


def test_a_plain_schema_too_large_is_refused_by_the_reader() -> None:
    huge = {"type": "object", "properties": {f"p{i}": {"type": "object", "properties": {}} for i in range(20)}}
    assert plain_form(huge) is not None and plain_cost(plain_form(huge)) > schema_module.MAX_STATES  # type: ignore[arg-type]
    with pytest.raises(ToolDecError, match="states"):
        normalize_schema(huge, tool="t")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text() | st.integers() | st.booleans(), min_size=1, max_size=5))
def test_an_enum_costs_its_values_json_bytes(values: list[Any]) -> None:
    """The quick count of a plain string (its length and two quotes) is its JSON's."""
    assert enum_cost(values) == 2 + sum(len(json.dumps(v, ensure_ascii=False).encode()) + 1 for v in values)


JSON_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)
"""Any code points, lone surrogates and control characters included."""


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(JSON_TEXT, st.sampled_from(["string", "integer", "boolean"]), max_size=3),
       st.lists(JSON_TEXT, min_size=1, max_size=5), st.lists(st.integers(-2**70, 2**70), min_size=1, max_size=5),
       st.lists(st.booleans(), min_size=1, max_size=3))
def test_the_walks_agree_on_names_and_enums_of_any_text_and_integers(
        names: dict[str, str], texts: list[str], numbers: list[int], flags: list[bool]) -> None:
    """The compiled walk checks strings for lone surrogates and counts enums' JSON bytes itself:
    the Python walk's answer (``is_writable``, ``enum_cost``) on every name and value."""
    enums = {"string": texts, "integer": numbers, "boolean": flags}
    same_walks({"type": "object", "properties": {name: {"type": kind, "enum": enums[kind]} for name, kind in names.items()}})


def test_an_integer_past_the_digit_limit_fails_alike_in_both_walks() -> None:
    """Both walks write an enum's integers with CPython's own conversion, which refuses past its
    digit limit (json.dumps's own error)."""
    schema = {"type": "object", "properties": {"a": {"type": "integer", "enum": [10**5000]}}}
    for walk in (plain_form_cost, plain_form_cost_in_python):
        with pytest.raises(ValueError, match="digits"):
            walk(schema)
