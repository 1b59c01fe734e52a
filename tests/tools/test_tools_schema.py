"""normalize_schema: what is kept, mapped, dropped, and refused (with tool, pointer, keyword)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tooldec.errors import InvalidSchemaError, ToolRegistrationError, UnsupportedSchemaError
from tooldec.tools import MAX_REF_DEPTH, normalize_schema
from tooldec.tools.schema import (
    ANNOTATION_KEYWORDS,
    SUPPORTED_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
    _META_VALIDATOR,
    normalize_any_schema,
    _Normalizer,
    is_satisfiable,
    split_pattern_anchors,
)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# (input, expected output)
NORMALIZED = [
    pytest.param({"type": "dict", "properties": {"a": {"type": "float"}}}, obj(a={"type": "number"}), id="bfcl-dict-float"),
    pytest.param(obj(t={"type": "tuple", "items": {"type": "string"}}),
                 obj(t={"type": "array", "items": {"type": "string"}}), id="bfcl-tuple"),
    pytest.param(obj(x={"type": "any", "description": "anything"}), obj(x={}), id="bfcl-any"),
    pytest.param(obj(x={"type": ["float", "null"]}), obj(x={"type": ["number", "null"]}), id="bfcl-type-list"),
    pytest.param(obj(x={"type": ["any", "string"]}), obj(x={}), id="any-in-type-list"),
    pytest.param(obj(x={"type": ["string"]}), obj(x={"type": "string"}), id="single-type-list"),
    pytest.param(obj(x={"type": "string", "nullable": True}), obj(x={"type": ["string", "null"]}), id="nullable"),
    pytest.param(obj(x={"type": "string", "nullable": False}), obj(x={"type": "string"}), id="nullable-false"),
    pytest.param(obj(x={"type": "array", "items": [{"type": "integer"}, {"type": "string"}], "additionalItems": False}),
                 obj(x={"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}),
                 id="draft4-tuple-items"),
    pytest.param(obj(x={"type": "array", "items": {"type": "integer"}, "additionalItems": False}),
                 obj(x={"type": "array", "items": {"type": "integer"}}), id="additionalItems-ignored-like-draft4"),
    pytest.param({"properties": {"a": {"type": "integer"}}}, obj(a={"type": "integer"}), id="missing-top-type"),
    pytest.param(
        {"type": "object", "title": "T", "description": "d", "$schema": "http://json-schema.org/draft-07/schema#",
         "$id": "x", "$comment": "c", "properties": {"a": {"type": "string", "examples": ["e"], "example": "e",
         "default": "z", "deprecated": True, "readOnly": True, "writeOnly": False, "contentEncoding": "base64",
         "contentMediaType": "text/plain", "$anchor": "A"}}},
        obj(a={"type": "string"}), id="annotations-stripped"),
    pytest.param(obj(a={"type": "string", "optional": True, "example_value": 3, "x-vendor": {"not": {}}}),
                 obj(a={"type": "string"}), id="unknown-keywords-stripped"),
    pytest.param(obj(a={"type": "array", "uniqueItems": False}), obj(a={"type": "array"}), id="uniqueItems-false"),
    pytest.param(obj(n={"type": "integer", "minimum": 1.0, "maximum": 3.0, "exclusiveMaximum": 10}),
                 obj(n={"type": "integer", "minimum": 1, "maximum": 3, "exclusiveMaximum": 10}), id="integral-floats"),
    pytest.param(obj(n={"type": "integer", "format": "int32"}), obj(n={"type": "integer"}), id="format-on-non-string"),
    pytest.param(obj(d={"type": "string", "format": "date-time", "pattern": "^[0-9]"}),
                 obj(d={"type": "string", "format": "date-time", "pattern": "^[0-9]"}), id="format-pattern-kept"),
    pytest.param(obj(a={"allOf": [{"$ref": "#/$defs/E"}], "description": "x"}) | {"$defs": {"E": {"enum": [1, 2]}}},
                 obj(a={"$ref": "#/$defs/E"}) | {"$defs": {"E": {"enum": [1, 2]}}}, id="single-allOf-unwrapped"),
    pytest.param(obj(a={"$ref": "#/definitions/A"}) | {"definitions": {"A": {"type": "string"}}},
                 obj(a={"$ref": "#/definitions/A"}) | {"definitions": {"A": {"type": "string"}}}, id="definitions"),
    pytest.param(obj(a={"$ref": "#/x-defs/A"}) | {"x-defs": {"A": {"type": "string", "title": "A"}}},
                 obj(a={"$ref": "#/$defs/x-defs~1A"}) | {"$defs": {"x-defs/A": {"type": "string"}}},
                 id="ref-under-dropped-keyword-relocated"),
    pytest.param(obj(a={"anyOf": [{"type": "string", "maxLength": 3}, {"const": None}]}, b=True, c=False),
                 obj(a={"anyOf": [{"type": "string", "maxLength": 3}, {"const": None}]}, b=True, c=False),
                 id="anyOf-bool-schemas"),
    pytest.param({"type": "object", "properties": {"description": {"type": "string"}, "title": {"type": "integer"}},
                  "required": ["description"]},
                 {"type": "object", "properties": {"description": {"type": "string"}, "title": {"type": "integer"}},
                  "required": ["description"]}, id="properties-named-like-annotations"),
]


@pytest.mark.parametrize(("schema", "expected"), NORMALIZED)
def test_normalized(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    out = normalize_schema(schema, tool="t")
    assert out == expected
    assert schema == before, "the input must not be modified"
    assert normalize_schema(out, tool="t") == out, "normalizing is idempotent"


def test_output_shares_nothing_with_input() -> None:
    schema = obj(a={"type": "string", "enum": ["x", "y"]})
    out = normalize_schema(schema, tool="t")
    out["properties"]["a"]["enum"].append("z")
    assert schema["properties"]["a"]["enum"] == ["x", "y"]


# (schema, keyword, pointer)
UNSUPPORTED = [
    *[pytest.param(obj(a={kw: value}), kw, f"/properties/a/{kw.replace('/', '~1')}", id=kw) for kw, value in [
        ("not", {}), ("if", {}), ("then", {}), ("else", {}), ("dependentSchemas", {}), ("dependentRequired", {}),
        ("dependencies", {}), ("patternProperties", {}), ("propertyNames", {}), ("minProperties", 1),
        ("maxProperties", 1), ("contains", {}), ("minContains", 1), ("maxContains", 1), ("multipleOf", 2),
        ("unevaluatedProperties", False), ("unevaluatedItems", False), ("$dynamicRef", "#x"), ("$recursiveRef", "#"),
    ]],
    pytest.param(obj(a={"type": "array", "uniqueItems": True}), "uniqueItems", "/properties/a/uniqueItems", id="uniqueItems"),
    pytest.param(obj(a={"$ref": "https://example.com/s.json"}), "$ref", "/properties/a/$ref", id="remote-ref"),
    pytest.param(obj(a={"$ref": "#anchor"}), "$ref", "/properties/a/$ref", id="anchor-ref"),
    pytest.param(obj(when={"type": "string", "format": "hostname"}), "format", "/properties/when/format", id="format"),
    pytest.param(obj(when={"format": "ipv4"}), "format", "/properties/when/format", id="format-untyped"),
    pytest.param(obj(n={"type": "number", "minimum": 0.5}), "minimum", "/properties/n/minimum", id="float-minimum"),
    pytest.param(obj(n={"type": "number", "exclusiveMaximum": 2.5}), "exclusiveMaximum", "/properties/n/exclusiveMaximum",
                 id="float-exclusiveMaximum"),
    pytest.param(obj(n={"type": "number", "minimum": 0, "exclusiveMinimum": True}), "exclusiveMinimum",
                 "/properties/n/exclusiveMinimum", id="draft4-exclusive"),
    pytest.param(obj(s={"type": "string", "pattern": "^(a)\\1$"}), "pattern", "/properties/s/pattern", id="backreference"),
    pytest.param(obj(s={"type": "string", "pattern": "\\p{L}"}), "pattern", "/properties/s/pattern", id="unicode-property"),
    pytest.param({"type": "object", "allOf": [{"type": "string"}]}, "allOf", "/allOf/0", id="allOf-string-branch"),
    pytest.param({"type": "object", "allOf": [obj(a={"type": "string"}), {"$ref": "#/$defs/S"}], "$defs": {"S": {"minLength": 1}}},
                 "allOf", "/allOf/1", id="allOf-ref-to-non-object"),
    pytest.param({"type": "object", "allOf": [{"enum": [{}]}, {}]}, "allOf", "/allOf/0", id="allOf-non-object-keyword"),
    pytest.param(obj(a={"type": "object", "properties": {"b~/c": {"not": {}}}}), "not",
                 "/properties/a/properties/b~0~1c/not", id="pointer-escaping"),
    pytest.param({"type": "object", "$defs": {"A": {"if": {}}}}, "if", "/$defs/A/if", id="inside-defs"),
]


@pytest.mark.parametrize(("schema", "keyword", "pointer"), UNSUPPORTED)
def test_unsupported(schema: dict[str, Any], keyword: str, pointer: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        normalize_schema(schema, tool="my_tool")
    err = info.value
    assert (err.tool, err.keyword, err.pointer) == ("my_tool", keyword, pointer)
    for part in ("'my_tool'", pointer, repr(keyword)):
        assert part in str(err)
    assert isinstance(err, ToolRegistrationError) and isinstance(err, ValueError)


def test_unsupported_messages_say_what_to_do() -> None:
    for advice in UNSUPPORTED_KEYWORDS.values():
        assert "remove it" in advice or "use a local" in advice
    with pytest.raises(UnsupportedSchemaError, match="round it or enforce it in the tool"):
        normalize_schema(obj(n={"maximum": 0.5}), tool="t")
    with pytest.raises(UnsupportedSchemaError, match="supported: date, date-time, email, time, uri, uuid"):
        normalize_schema(obj(n={"type": "string", "format": "url"}), tool="t")


# (schema, pointer, words in the message)
INVALID = [
    pytest.param({"type": "string"}, "", "object schema", id="top-not-object"),
    pytest.param({"type": ["object", "null"]}, "", "object schema", id="top-type-list"),
    pytest.param({}, "", "neither 'type' nor 'properties'", id="top-empty"),
    pytest.param({"type": "object", "properties": {"a": {"type": "strin"}}}, "/properties/a/type", "not a valid JSON Schema",
                 id="bad-type"),
    pytest.param(obj(a=5), "/properties/a", "not a valid JSON Schema", id="non-schema-property"),
    pytest.param(obj(a={"type": "string", "minLength": -1}), "/properties/a/minLength", "not a valid", id="negative-length"),
    pytest.param(obj(a={"type": "string", "pattern": "("}), "/properties/a/pattern", "is not a regular expression", id="bad-regex"),
    pytest.param({"type": "object", "required": "a"}, "/required", "not a valid", id="required-not-list"),
    pytest.param(obj(a={"enum": []}), "/properties/a/enum", "'enum' is empty", id="empty-enum"),
    pytest.param(obj(a={"type": "string", "minLength": 3, "maxLength": 2}), "/properties/a/minLength", "minLength 3 > maxLength 2",
                 id="length"),
    pytest.param(obj(a={"type": "array", "minItems": 3, "maxItems": 2}), "/properties/a/minItems", "minItems 3 > maxItems 2",
                 id="items"),
    pytest.param(obj(n={"type": "integer", "minimum": 5, "maximum": 4}), "/properties/n", "numeric range is empty", id="range"),
    pytest.param(obj(n={"type": "integer", "exclusiveMinimum": 4, "exclusiveMaximum": 5}), "/properties/n",
                 "numeric range is empty", id="integer-exclusive-range"),
    pytest.param(obj(n={"type": "number", "minimum": 4, "exclusiveMaximum": 4}), "/properties/n",
                 "numeric range is empty", id="number-exclusive-range"),
    pytest.param({"type": "object", "properties": {}, "required": ["a"], "additionalProperties": False}, "/required",
                 "required property 'a' is not in 'properties'", id="required-missing"),
    pytest.param(obj(a={"$ref": "#/$defs/Missing"}), "/properties/a/$ref", "has no target", id="dangling-ref"),
    pytest.param(obj(a={"$ref": "#/properties"}), "/properties/a/$ref", "does not point to a schema", id="ref-to-non-schema"),
    pytest.param({"type": "object", "properties": {"a": False}, "required": ["a"]}, "/properties/a", "no value satisfies",
                 id="required-false"),
    pytest.param({"type": "object", "properties": {"n": {"$ref": "#"}}, "required": ["n"]}, "/properties/n/$ref",
                 f"MAX_REF_DEPTH={MAX_REF_DEPTH}", id="recursive-required"),
    pytest.param(obj(a={"anyOf": [False, {"type": "object", "required": ["x"], "properties": {"x": False}}]})
                 | {"required": ["a"]}, "/properties/a/anyOf/0", "no value satisfies", id="anyOf-all-unsatisfiable"),
    pytest.param(obj(a={"type": "array", "minItems": 2, "prefixItems": [True, False]}) | {"required": ["a"]},
                 "/properties/a/prefixItems/1", "no value satisfies", id="required-prefix-item"),
    pytest.param(obj(a={"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/N"}})
                 | {"required": ["a"], "$defs": {"N": {"type": "object", "required": ["n"], "properties": {"n": {"$ref": "#/$defs/N"}}}}},
                 "/$defs/N/properties/n/$ref", "no value satisfies", id="array-of-unsatisfiable"),
]


@pytest.mark.parametrize(("schema", "pointer", "words"), INVALID)
def test_invalid(schema: Any, pointer: str, words: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        normalize_schema(schema, tool="my_tool")
    err = info.value
    assert (err.tool, err.pointer) == ("my_tool", pointer)
    assert words in str(err) and "'my_tool'" in str(err) and f"at {pointer or '/'}:" in str(err)


@pytest.mark.parametrize("schema", [[], "object", None, True])
def test_not_a_mapping(schema: Any) -> None:
    with pytest.raises(InvalidSchemaError, match="object schema"):
        normalize_schema(schema, tool="t")


SATISFIABLE_RECURSION = [
    pytest.param({"type": "object", "properties": {"next": {"$ref": "#"}}}, id="optional-recursion"),
    pytest.param({"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["next"]},
                 id="nullable-recursion"),
    pytest.param({"type": "object", "properties": {"next": {"type": ["object", "null"], "required": ["x"], "properties": {"x": False}}},
                  "required": ["next"]}, id="type-list-escape"),
    pytest.param({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}, "required": ["kids"]},
                 id="empty-array-escape"),
]


@pytest.mark.parametrize("schema", SATISFIABLE_RECURSION)
def test_satisfiable_recursion_is_kept(schema: dict[str, Any]) -> None:
    assert normalize_schema(schema, tool="t") == schema


def test_ref_depth_bound() -> None:
    def chain(n: int) -> dict[str, Any]:  # D0 requires D1 requires ... D(n-1), a string
        defs = {f"D{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/D{i + 1}"}}, "required": ["x"]}
                for i in range(n - 1)}
        defs[f"D{n - 1}"] = {"type": "string"}
        return {"type": "object", "properties": {"a": {"$ref": "#/$defs/D0"}}, "required": ["a"], "$defs": defs}

    assert is_satisfiable(chain(MAX_REF_DEPTH), chain(MAX_REF_DEPTH))
    assert not is_satisfiable(chain(MAX_REF_DEPTH + 1), chain(MAX_REF_DEPTH + 1))
    normalize_schema(chain(MAX_REF_DEPTH), tool="t")
    with pytest.raises(InvalidSchemaError, match="MAX_REF_DEPTH"):
        normalize_schema(chain(MAX_REF_DEPTH + 1), tool="t")


def test_keyword_tables_are_disjoint() -> None:
    assert not SUPPORTED_KEYWORDS & ANNOTATION_KEYWORDS
    assert not SUPPORTED_KEYWORDS & set(UNSUPPORTED_KEYWORDS)
    assert not ANNOTATION_KEYWORDS & set(UNSUPPORTED_KEYWORDS)


@pytest.mark.parametrize(("pattern", "expected"), [
    ("^abc$", ("abc", True, True)), ("abc", ("abc", False, False)), ("a\\$", ("a\\$", False, False)),
    ("a\\\\$", ("a\\\\", False, True)), ("^", ("", True, False)),
])
def test_split_pattern_anchors(pattern: str, expected: tuple[str, bool, bool]) -> None:
    assert split_pattern_anchors(pattern) == expected


def testnormalize_any_schema_accepts_non_objects() -> None:
    assert normalize_any_schema({"type": "array", "items": {"type": "float"}}) == {"type": "array", "items": {"type": "number"}}
    assert normalize_any_schema(True) is True
    with pytest.raises(UnsupportedSchemaError) as info:
        normalize_any_schema({"not": {}})
    assert info.value.tool is None and info.value.pointer == "/not"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=10)
KEYWORDS = st.sampled_from(sorted(SUPPORTED_KEYWORDS | ANNOTATION_KEYWORDS | set(UNSUPPORTED_KEYWORDS)
                                  | {"nullable", "items", "uniqueItems", "x-any", "optional"}))
SCHEMAS = st.recursive(
    st.dictionaries(KEYWORDS, JSON, max_size=3),
    lambda inner: st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=3), inner, max_size=3)},
                                        optional={"required": st.lists(st.text(max_size=3), max_size=2), "anyOf": st.lists(inner, max_size=2),
                                                  "items": inner | st.lists(inner, max_size=2), "$defs": st.dictionaries(st.text(max_size=3), inner, max_size=2)}),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_random_schemas_give_typed_errors_or_idempotent_output(schema: dict[str, Any]) -> None:
    before = json.dumps(schema, sort_keys=True)
    try:
        out = normalize_any_schema(schema)
    except ToolRegistrationError:
        return
    finally:
        assert json.dumps(schema, sort_keys=True) == before
    assert normalize_any_schema(out) == out


FULL_META = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=None)


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_subset_meta_schema_agrees_with_the_full_one(schema: dict[str, Any]) -> None:
    """On first-pass output (kept keywords only) the fast meta-schema judges like check_schema."""
    try:
        kept = _Normalizer(schema, None).schema(schema, "")
    except ToolRegistrationError:
        return
    assert _META_VALIDATOR.is_valid(kept) == FULL_META.is_valid(kept)


def test_oneof_with_overlapping_branches_is_unsupported() -> None:
    """A generated value must match exactly one branch; overlapping branches cannot promise it
    (JSONSchemaBench: 37 schemas whose generated values matched two branches)."""
    overlapping = {"type": "object", "properties": {"x": {"oneOf": [{"type": "number"}, {"type": "integer"}]}}}
    with pytest.raises(UnsupportedSchemaError, match="oneOf") as err:
        normalize_schema(overlapping, tool="t")
    assert err.value.pointer == "/properties/x/oneOf" and err.value.keyword == "oneOf"
    disjoint = {"type": "object", "properties": {
        "x": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "y": {"oneOf": [{"const": "a"}, {"enum": ["b", "c"]}]},
    }}  # fmt: skip
    normalize_schema(disjoint, tool="t")
