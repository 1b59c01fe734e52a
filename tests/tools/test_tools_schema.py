"""normalize_schema: what is kept, mapped, combined, dropped, and refused (tool, pointer, keyword).

Regression cases from JSONSchemaBench (``benchmarks/jsonschemabench.py``) are checked against the schema *as written*: every instance drawn
from the compiled automaton validates with jsonschema (Draft 2020-12, format checker on).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tooldec.automata.pattern_syntax import alternatives
from tooldec.errors import (
    InvalidSchemaError,
    SchemaTooComplexError,
    ToolDecError,
    ToolRegistrationError,
    UnsupportedSchemaError,
)
from tooldec.tools import MAX_REF_DEPTH, Tool, ToolSet, normalize_schema
from tooldec.tools.schema import (
    ANNOTATION_KEYWORDS,
    SUPPORTED_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
    normalize_any_schema,
    prepare_formats,
)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# (input, expected output)
NORMALIZED = [
    pytest.param({"type": "dict", "properties": {"a": {"type": "float"}}}, obj(a={"type": "number"}), id="bfcl-dict-float"),
    pytest.param(obj(t={"type": "tuple", "items": {"type": "string"}}),
                 obj(t={"type": "array", "items": {"type": "string"}}), id="bfcl-tuple"),
    pytest.param(obj(x={"type": "any", "description": "anything"}), obj(x=True), id="bfcl-any"),
    pytest.param(obj(x={"type": ["float", "null"]}), obj(x={"type": ["number", "null"]}), id="bfcl-type-list"),
    pytest.param(obj(x={"type": ["any", "string"]}), obj(x=True), id="any-in-type-list"),
    pytest.param(obj(x={"type": ["string"]}), obj(x={"type": "string"}), id="single-type-list"),
    pytest.param(obj(x={"type": "string", "nullable": True}), obj(x={"type": "string"}), id="nullable-only-in-openapi"),
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
                 obj(n={"type": "integer", "minimum": 1, "maximum": 3}), id="integral-floats"),
    pytest.param(obj(n={"type": "integer", "minimum": 0.5, "exclusiveMaximum": 3.5}),
                 obj(n={"type": "integer", "minimum": 1, "maximum": 3}), id="non-integral-integer-bounds"),
    pytest.param(obj(n={"type": "integer", "format": "int32"}), obj(n={"type": "integer"}), id="format-on-non-string"),
    pytest.param(obj(d={"type": "string", "format": "date-time", "pattern": "^[0-9]"}),
                 obj(d={"type": "string", "format": "date-time", "pattern": "^[0-9]"}), id="format-pattern-kept"),
    pytest.param(obj(a={"allOf": [{"$ref": "#/$defs/E"}], "description": "x"}) | {"$defs": {"E": {"enum": [1, 2]}}},
                 obj(a={"enum": [1, 2]}), id="single-allOf-resolved"),
    pytest.param(obj(a={"$ref": "#/definitions/A"}) | {"definitions": {"A": {"type": "string"}}},
                 obj(a={"type": "string"}), id="definitions"),
    pytest.param(obj(a={"$ref": "#/x-defs/A"}) | {"x-defs": {"A": {"type": "string", "title": "A"}}},
                 obj(a={"type": "string"}), id="ref-under-dropped-keyword"),
    pytest.param(obj(a={"$ref": "#/$defs/a%20b~1c"}) | {"$defs": {"a b/c": {"type": "integer"}}},
                 obj(a={"type": "integer"}), id="ref-percent-and-tilde-decoded"),
    pytest.param(obj(a={"anyOf": [{"type": "string", "maxLength": 3}, {"const": None}]}, b=True, c=False),
                 obj(a={"anyOf": [{"type": "string", "maxLength": 3}, {"enum": [None]}]}, b=True, c=False),
                 id="anyOf-bool-schemas"),
    pytest.param(obj(a={"anyOf": [{"type": "string"}, {"type": "null"}]}), obj(a={"type": ["string", "null"]}),
                 id="anyOf-of-types-is-a-type-list"),
    pytest.param(obj(a={"allOf": [{"type": "string", "maxLength": 3}, {"maxLength": 50, "minLength": 1}]}),
                 obj(a={"type": "string", "maxLength": 3, "minLength": 1}), id="allOf-bounds-tightened"),
    pytest.param(obj(a={"type": "string", "enum": ["x", 1, "yy"], "maxLength": 1}), obj(a={"enum": ["x"]}),
                 id="enum-filtered-by-the-rest"),
    pytest.param(obj(a={"not": {"type": ["string", "number", "object", "array"]}}), obj(a={"type": ["null", "boolean"]}),
                 id="not-type"),
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
        ("if", {}), ("then", {}), ("else", {}), ("propertyNames", {}), ("contains", {}), ("minContains", 1),
        ("maxContains", 1), ("unevaluatedProperties", False), ("unevaluatedItems", False), ("$dynamicRef", "#x"),
        ("$recursiveRef", "#"), ("multipleOf", 0.5), ("not", {"minimum": 3}),
    ]],
    pytest.param(obj(a={"type": "array", "uniqueItems": True}), "uniqueItems", "/properties/a/uniqueItems", id="uniqueItems"),
    pytest.param(obj(a={"$ref": "https://example.com/s.json"}), "$ref", "/properties/a/$ref", id="remote-ref"),
    pytest.param(obj(a={"$ref": "#anchor"}), "$ref", "/properties/a/$ref", id="anchor-ref"),
    pytest.param(obj(when={"type": "string", "format": "uri-template"}), "format", "/properties/when/format", id="format"),
    pytest.param(obj(when={"format": "regex"}), "format", "/properties/when/format", id="format-untyped"),
    pytest.param(obj(n={"type": "number", "minimum": 0, "exclusiveMinimum": True}), "exclusiveMinimum",
                 "/properties/n/exclusiveMinimum", id="draft4-exclusive"),
    pytest.param(obj(s={"type": "string", "pattern": "^(a)\\1$"}), "pattern", "/properties/s/pattern", id="backreference"),
    pytest.param(obj(s={"type": "string", "pattern": "[^\\w]"}), "pattern", "/properties/s/pattern", id="negated-word-class"),
    *[pytest.param(obj(s={"type": "string", "pattern": p}), "pattern", "/properties/s/pattern", id=f"pattern-{name}")
      for name, p in [("lookahead-inside", "^[a-z]+(?=@)"), ("lookahead-unanchored", "(?!@@)[a-z]+"),
                      ("lookbehind", "(?<=a)b"), ("word-boundary", "\\bcat\\b"), ("anchor-in-group", "(^a|b)c"),
                      ("anchor-mid", "a$b|c"), ("anchor-in-lookahead", "^(?!ab$)[a-z]+$"), ("inline-flag", "(?i)abc"),
                      ("scoped-flag", "a(?i:b)"), ("named-backreference", "(?P<x>a)(?P=x)"), ("string-anchor", "\\Aab\\Z"),
                      ("unicode-property", "^\\p{L}+$"), ("comment", "a(?#note)b"), ("possessive", "^a++$"),
                      ("lookahead-repeated", "^(?=a)*b")]],
    pytest.param({"type": "object", "patternProperties": {"^x(?!-)": {"type": "integer"}}, "additionalProperties": False},
                 "patternProperties", "/patternProperties/^x(?!-)", id="patternProperties-lookahead-inside"),
    pytest.param({"type": "object", "patternProperties": {"\\bid\\b": {"type": "integer"}}}, "patternProperties",
                 "/patternProperties/\\bid\\b", id="patternProperties-word-boundary"),
    pytest.param(obj(a={"type": "object", "properties": {"b~/c": {"if": {}}}}), "if",
                 "/properties/a/properties/b~0~1c/if", id="pointer-escaping"),
    pytest.param({"type": "object", "$defs": {"A": {"if": {}}}, "properties": {"a": {"$ref": "#/$defs/A"}}}, "if", "/$defs/A/if",
                 id="inside-defs"),
    pytest.param(obj(x={"oneOf": [{"type": "string", "pattern": "a"}, {"type": "string", "pattern": "b"}]}), "oneOf",
                 "/properties/x/oneOf", id="oneOf-overlapping-patterns"),

    pytest.param(obj(x={"oneOf": [{"type": "number"}, {"type": "integer"}]}), "oneOf", "/properties/x/oneOf",
                 id="oneOf-overlapping-types"),
    pytest.param({"type": "object", "allOf": [{"patternProperties": {"^a": {}}, "additionalProperties": False},
                                              {"patternProperties": {"^b": {}}}]}, "patternProperties", "",
                 id="allOf-patternProperties-with-additionalProperties"),
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
    with pytest.raises(UnsupportedSchemaError, match="supported: date, date-time, duration, email, hostname"):
        normalize_schema(obj(n={"type": "string", "format": "idn-hostname"}), tool="t")
    assert normalize_schema(obj(n={"type": "string", "format": "url"}), tool="t") == obj(n={"type": "string"}), \
        "a format jsonschema never checks constrains nothing"


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
    pytest.param(obj(a={"$ref": "#/required"}) | {"required": []}, "/properties/a/$ref", "does not point to a schema",
                 id="ref-to-non-schema"),
    pytest.param({"type": "object", "allOf": [{"type": "string"}]}, "", "do not meet", id="allOf-types-disjoint"),
    pytest.param({"type": "object", "properties": {"a": False}, "required": ["a"]}, "/properties/a", "no value satisfies",
                 id="required-false"),
    pytest.param({"type": "object", "properties": {"n": {"$ref": "#"}}, "required": ["n"]}, "/properties/n/$ref",
                 f"MAX_REF_DEPTH={MAX_REF_DEPTH}", id="recursive-required"),
    pytest.param(obj(a={"anyOf": [False, {"type": "object", "required": ["x"], "properties": {"x": False}}]})
                 | {"required": ["a"]}, "/properties/a/anyOf/1/properties/x", "no value satisfies", id="anyOf-all-unsatisfiable"),
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
def test_satisfiable_recursion_is_unrolled(schema: dict[str, Any]) -> None:
    out = normalize_schema(schema, tool="t")
    assert "$ref" not in json.dumps(out) and normalize_schema(out, tool="t") == out


def test_ref_depth_is_recursion_depth() -> None:
    """One meaning: a reference may be entered MAX_REF_DEPTH times inside itself; a chain of
    distinct references (a 6-level Pydantic model) has no limit."""
    def chain(n: int) -> dict[str, Any]:  # D0 requires D1 requires ... D(n-1), a string
        defs = {f"D{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/D{i + 1}"}}, "required": ["x"]}
                for i in range(n - 1)}
        defs[f"D{n - 1}"] = {"type": "string"}
        return {"type": "object", "properties": {"a": {"$ref": "#/$defs/D0"}}, "required": ["a"], "$defs": defs}

    for n in (MAX_REF_DEPTH, MAX_REF_DEPTH + 1, 12):
        normalize_schema(chain(n), tool="t")
    with pytest.raises(InvalidSchemaError, match="MAX_REF_DEPTH"):
        normalize_schema({"type": "object", "properties": {"n": {"$ref": "#"}}, "required": ["n"]}, tool="t")


def test_six_level_pydantic_model() -> None:
    import pydantic

    class L6(pydantic.BaseModel):
        v: int

    class L5(pydantic.BaseModel):
        c: L6

    class L4(pydantic.BaseModel):
        c: L5

    class L3(pydantic.BaseModel):
        c: L4

    class L2(pydantic.BaseModel):
        c: L3

    class L1(pydantic.BaseModel):
        c: L2

    tool = Tool.from_pydantic(L1)
    assert tool.validate_arguments({"c": {"c": {"c": {"c": {"c": {"v": 1}}}}}}) == []


def test_keyword_tables_are_disjoint() -> None:
    assert not SUPPORTED_KEYWORDS & ANNOTATION_KEYWORDS
    assert not SUPPORTED_KEYWORDS & set(UNSUPPORTED_KEYWORDS)
    assert not ANNOTATION_KEYWORDS & set(UNSUPPORTED_KEYWORDS)


@pytest.mark.parametrize(("pattern", "expected"), [
    ("^abc$", [("abc", True, True)]), ("abc", [("abc", False, False)]), ("a\\$", [("a\\$", False, False)]),
    ("a\\\\$", [("a\\\\", False, True)]), ("^", [("", True, False)]), ("[$^]", [("[$^]", False, False)]),
    ("^a|b$", [("a", True, False), ("b", False, True)]), ("^(a|b)$|c", [("(a|b)", True, True), ("c", False, False)]),
    ("[|]|x", [("[|]", False, False), ("x", False, False)]), ("[]|^]$", [("[]|^]", False, True)]),
])
def test_pattern_alternatives(pattern: str, expected: list[tuple[str, bool, bool]]) -> None:
    """Each top-level alternative of a pattern carries its own anchors, as ``re.search`` reads them."""
    assert [(a.body, a.at_start, a.at_end) for a in alternatives(pattern)] == expected


def testnormalize_any_schema_accepts_non_objects() -> None:
    assert normalize_any_schema({"type": "array", "items": {"type": "float"}}) == {"type": "array", "items": {"type": "number"}}
    assert normalize_any_schema(True) is True
    with pytest.raises(UnsupportedSchemaError) as info:
        normalize_any_schema({"if": {}})
    assert info.value.tool is None and info.value.pointer == "/if"


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
    except ToolDecError:
        return
    finally:
        assert json.dumps(schema, sort_keys=True) == before
    assert normalize_any_schema(out) == out


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


def test_overlapping_oneof_writes_each_branch_that_has_values_of_its_own() -> None:
    """Each branch is written with a way of violating the others; a branch all of whose values
    match another one is dropped (here every integer matches ``{"minLength": 3}``)."""
    schema = {"type": "object", "oneOf": [{"properties": {"dog": {"type": "string"}}},
                                          {"properties": {"cat": {"type": "string"}}}]}
    branches = [Draft202012Validator(b) for b in schema["oneOf"]]
    matched = {tuple(b.is_valid(v) for b in branches) for v in sampled(schema, 60)}
    assert matched == {(True, False), (False, True)}
    assert all(isinstance(v, str) and len(v) >= 3 for v in sampled({"oneOf": [{"type": "integer"}, {"minLength": 3}]}))


# -- JSONSchemaBench cases: each against the schema as written -----------------------------------

FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


def sampled(schema: dict[str, Any], count: int = 40, seed: int = 0) -> list[Any]:
    """Instances drawn from the automaton of ``schema`` (normalized, then compiled)."""
    import random

    from tooldec.automata.dfa import LazyDFA
    from tooldec.automata.json_schema import SchemaCompiler
    from tooldec.automata.nfa import NFA

    core = normalize_any_schema(schema)
    nfa = NFA()
    dfa = LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}).value(core))
    rng, out = random.Random(seed), []
    for _ in range(count):
        text = dfa.sample(rng, 150)
        out.append(json.loads(text))
    return out


AS_WRITTEN = [
    pytest.param({"$defs": {"s": {"type": "string", "maxLength": 2}}, "$ref": "#/$defs/s", "maxLength": 10},
                 id="ref-sibling-maxLength"),
    pytest.param({"type": "integer", "minimum": 100, "anyOf": [{"minimum": 0, "maximum": 1000}, {"maximum": 5}]},
                 id="integer-minimum-beside-anyOf"),
    pytest.param({"allOf": [{"type": "string", "maxLength": 3}, {"maxLength": 50}]}, id="allOf-looser-later-maxLength"),
    pytest.param({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
                            {"properties": {"b": {"type": "integer"}}}]}, id="allOf-additionalProperties-applies-to-all"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False,
                  "anyOf": [{"properties": {"b": {"type": "string"}}}, {"required": ["a"]}]},
                 id="root-additionalProperties-beside-anyOf"),
    pytest.param({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, True]},
                 id="allOf-object-and-true"),
    pytest.param({"type": "object", "properties": {"x": {"type": "string", "nullable": True}}, "required": ["x"]},
                 id="nullable-outside-openapi"),
    pytest.param({"type": "integer", "minimum": -2**63, "maximum": 2**63 - 1}, id="int64"),
    pytest.param({"type": "number", "maximum": 1e30, "exclusiveMinimum": -0.5}, id="float-bounds"),
    pytest.param({"type": "number", "minimum": 10**300}, id="number-minimum-1e300"),
    pytest.param({"type": "integer", "minimum": 0.5, "maximum": 7.5, "multipleOf": 3}, id="integer-bounds-non-integral"),
    pytest.param({"type": "object", "patternProperties": {"^x-": {"type": "integer"}, "^y": {"type": "string"}},
                  "properties": {"x-a": {"minimum": 5}}, "additionalProperties": False}, id="patternProperties"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                  "dependentRequired": {"a": ["b"]}}, id="dependentRequired"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                  "dependencies": {"b": {"properties": {"a": {"minimum": 3}}, "required": ["a"]}}}, id="dependencies-schema"),
    pytest.param({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "minProperties": 2, "maxProperties": 2},
                 id="min-maxProperties"),
    pytest.param({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 3},
                 id="minProperties-of-a-map"),
    pytest.param({"not": {"enum": ["a", 1, None]}, "type": ["string", "integer", "null"], "maxLength": 1,
                  "minimum": 0, "maximum": 2}, id="not-enum"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer"}}, "not": {"required": ["a"]}}, id="not-required"),
    pytest.param({"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                             "required": ["kind"]},
                            {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}]},
                 id="oneOf-required-key-discriminator"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                  "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, id="oneOf-exactly-one-of-two-keys"),
    pytest.param({"type": "object", "properties": {"c": {"type": "integer"}},
                  "oneOf": [{"properties": {"error": {"type": "string"}}, "required": ["error"]},
                            {"properties": {"id": {"type": "string"}, "ok": {"type": "boolean"}}, "required": ["id"]}]},
                 id="oneOf-disjoint-once-closed"),
    pytest.param({"type": "object", "properties": {"c": {"type": "integer"}},
                  "oneOf": [{"properties": {"error": {"type": "string"}}, "required": ["error"]},
                            {"properties": {"id": {"type": "string"}}, "required": ["id"]}],
                  "allOf": [{"properties": {"id": {"type": "string"}}}, {"required": ["c"]}]},
                 id="oneOf-each-branch-without-the-others-keys"),
    pytest.param({"oneOf": [{"type": "string"}, {"enum": ["x", 2, None]}]},
                 id="oneOf-overlapping-negatable-branches"),
    # oneOf whose branches overlap: each written with a way of violating the others (JSONSchemaBench)
    pytest.param({"type": "object", "oneOf": [{"additionalProperties": False, "properties": {"next": {"type": "string"}}},
                                              {"additionalProperties": False, "properties": {"previous": {"type": "string"}}}]},
                 id="oneOf-closed-objects-without-required"),
    pytest.param({"type": "object", "oneOf": [{"properties": {"dog": {"type": "string"}}},
                                              {"properties": {"cat": {"type": "string"}}}]}, id="oneOf-open-objects"),
    pytest.param({"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}, "a": {"type": "boolean"}},
                             "additionalProperties": False},
                            {"type": "object", "properties": {"kind": {"const": "b"}, "b": {"type": "boolean"}},
                             "additionalProperties": False}]}, id="oneOf-discriminator-not-required"),
    pytest.param({"type": "object", "required": ["items"], "oneOf": [
        {"properties": {"meta": {"type": "object", "required": ["system"], "properties": {"system": {"enum": ["rpm"]}}},
                        "items": {"type": "array", "items": {"type": "string", "pattern": "^[a-f0-9]+$"}}}},
        {"properties": {"meta": {"type": "object", "required": ["system"], "properties": {"system": {"enum": ["dpkg"]}}},
                        "items": {"type": "array", "items": {"type": "string", "pattern": "^[a-f0-9]*$"}}}}]},
                 id="oneOf-nested-discriminator"),
    pytest.param({"type": "number", "oneOf": [{"maximum": 2}, {"maximum": 5}]}, id="oneOf-nested-ranges"),
    pytest.param({"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "array", "items": {"type": "string"}}]},
                 id="oneOf-arrays-by-items"),
    pytest.param({"oneOf": [{"type": "string", "pattern": "^https?://.+$"}, {"type": "string", "pattern": "^\\./.+$"}]},
                 id="oneOf-disjoint-patterns"),
    pytest.param({"oneOf": [{"type": "string"}, {"minLength": 3}]}, id="oneOf-untyped-branch-string"),
    pytest.param({"oneOf": [{"type": "integer"}, {"minLength": 3}]}, id="oneOf-untyped-branch-accepts-integers"),
    pytest.param({"oneOf": [{"type": "integer"}, {"properties": {"a": {"type": "string"}}}]},
                 id="oneOf-untyped-object-branch-accepts-integers"),
    pytest.param({"type": "string", "pattern": "^[^:\\s]+$"}, id="negated-whitespace-class"),
    # a leading lookahead is enforced as a difference (or intersection) of automata
    pytest.param({"type": "string", "pattern": "^(?!@@)[\\w@]+$"}, id="pattern-leading-negative-lookahead"),
    pytest.param({"type": "string", "pattern": "^(?=[a-c])(?!ab)[\\w]{2,4}|^z"}, id="pattern-leading-lookaheads"),
    pytest.param({"type": "object", "patternProperties": {"^(?!@@)[\\w@]+$": {"type": "integer"}},
                  "additionalProperties": False, "minProperties": 1}, id="patternProperties-leading-negative-lookahead"),
    # anchors belong to their own alternative: "ax" matches ^a|b$ and must hold an integer
    pytest.param({"type": "object", "patternProperties": {"^a|b$": {"type": "integer"}},
                  "additionalProperties": {"type": "string"}, "minProperties": 1}, id="patternProperties-anchors-per-alternative"),
    pytest.param({"type": "string", "pattern": "^caf\\u00e9$|^\\u0041"}, id="pattern-unicode-escapes"),
    pytest.param({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"enum": [True]}, "minItems": 2,
                  "maxItems": 3}, id="prefixItems"),
    *[pytest.param({"type": "string", "format": f}, id=f"format-{f}") for f in
      ("date", "time", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid")],
]


@pytest.mark.parametrize("schema", AS_WRITTEN)
def test_instances_validate_against_the_schema_as_written(schema: dict[str, Any]) -> None:
    checker = Draft202012Validator(schema, format_checker=FORMAT_CHECKER)
    for value in sampled(schema):
        assert checker.is_valid(value), (value, next(checker.iter_errors(value)).message)


def compiled(schema: dict[str, Any]) -> Any:
    from tooldec.automata.dfa import LazyDFA
    from tooldec.automata.json_schema import SchemaCompiler
    from tooldec.automata.nfa import NFA

    core = normalize_any_schema(schema)
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}).value(core))


_LOOKAHEAD_KEYS = {"type": "object", "patternProperties": {"^(?!@@)[\\w@]+$": {"type": "integer"}},
                   "additionalProperties": False}
_ALTERNATIVE_KEYS = {"type": "object", "patternProperties": {"^a|b$": {"type": "integer"}},
                     "additionalProperties": {"type": "string"}}


@pytest.mark.parametrize(("schema", "instance"), [
    (_LOOKAHEAD_KEYS, {"a@": 1}), (_LOOKAHEAD_KEYS, {"@a": 1}), (_LOOKAHEAD_KEYS, {"@@a": 1}), (_LOOKAHEAD_KEYS, {"a)": 1}),
    (_ALTERNATIVE_KEYS, {"ax": 1}), (_ALTERNATIVE_KEYS, {"ax": "s"}), (_ALTERNATIVE_KEYS, {"xb": "s"}),
    (_ALTERNATIVE_KEYS, {"xb": 1}), (_ALTERNATIVE_KEYS, {"x": "s"}), (_ALTERNATIVE_KEYS, {"x": 1}),
    ({"type": "string", "pattern": "^(?!@@)[\\w@]+$"}, "@@x"), ({"type": "string", "pattern": "^(?!@@)[\\w@]+$"}, "@x@"),
    ({"type": "string", "pattern": "^(?!@@)[\\w@]+$"}, "x)"),
])
def test_patterns_are_read_as_re_search_reads_them(schema: dict[str, Any], instance: Any) -> None:
    """A key or string is written exactly when ``jsonschema`` (``re.search``) accepts it: a leading
    lookahead is enforced, and each alternative of ``^a|b$`` keeps its own anchor (a key "ax"
    matches it, so its value is an integer, never the additional properties' string)."""
    text = json.dumps(instance, separators=(",", ":")).encode()
    assert compiled(schema).accepts(text) is Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize(("schema", "error", "where"), [
    pytest.param({"type": "string", "const": 5}, InvalidSchemaError, "/properties/x", id="string-const-5"),
    pytest.param({"type": "string", "enum": [1, 2]}, InvalidSchemaError, "/properties/x", id="string-enum-1-2"),
    pytest.param({"type": "string", "format": "date", "maxLength": 5}, InvalidSchemaError, "/properties/x",
                 id="date-maxLength-5"),
    pytest.param({"oneOf": [{"enum": [1]}, {"enum": [1.0]}]}, InvalidSchemaError, "/properties/x/oneOf/0",
                 id="oneOf-1-and-1.0-match-the-same-values"),
    pytest.param({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "maxLength": 3}]},
                 InvalidSchemaError, "/properties/x/oneOf", id="oneOf-of-equal-branches"),
])
def test_unsatisfiable_required_arguments_are_refused_at_registration(
        schema: dict[str, Any], error: type[Exception], where: str) -> None:
    with pytest.raises(error) as info:
        Tool("t", "", {"type": "object", "properties": {"x": schema}, "required": ["x"]})
    assert info.value.pointer == where  # type: ignore[attr-defined]


def test_surrogates_references_and_nesting_give_typed_errors_or_work() -> None:
    encoded = Tool("t", "", {"type": "object", "properties": {"x": {"$ref": "#/$defs/a%20b"}},
                             "$defs": {"a b": {"type": "integer"}}})
    assert encoded.parameters["properties"]["x"] == {"type": "integer"}
    lone = Tool("t", "", {"type": "object", "properties": {"\ud800": {"type": "integer"}}})
    assert len(lone.schema_hash) == 64 and lone.parameters["properties"]["\ud800"] is False
    with pytest.raises(InvalidSchemaError, match="can have no value"):
        Tool("t", "", {"type": "object", "properties": {"\ud800": {}}, "required": ["\ud800"]})
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(1000):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(SchemaTooComplexError) as info:
        Tool("t", "", deep)
    assert info.value.keyword == "properties"


def test_nullable_only_for_openapi() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "nullable": True},
                                               "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}}}
    assert Tool("t", "", schema, openapi=True).parameters["properties"] == {
        "x": {"type": ["string", "null"]}, "n": {"type": "integer", "minimum": 1}}
    with pytest.raises(UnsupportedSchemaError, match="draft-4"):
        Tool("t", "", schema)


def test_a_schema_read_as_openapi_and_as_json_schema_is_kept_as_two() -> None:
    """The same schema dict is two schemas (``nullable`` read only for OpenAPI), whichever is
    registered first, alone or in a tool list."""
    schema = {"type": "object", "properties": {"both_ways": {"type": "string", "nullable": True}}}
    plain, openapi = {"both_ways": {"type": "string"}}, {"both_ways": {"type": ["string", "null"]}}
    assert Tool("t", "", schema, openapi=True).parameters["properties"] == openapi
    assert Tool("t", "", schema).parameters["properties"] == plain
    assert ToolSet([{"name": "t", "parameters": schema}])["t"].parameters["properties"] == plain
    assert Tool("t", "", schema, openapi=True).parameters["properties"] == openapi
    other = {"type": "object", "properties": {"other_way": {"type": "integer", "nullable": True}}}
    assert ToolSet([{"name": "t", "parameters": other}])["t"].parameters["properties"] == {"other_way": {"type": "integer"}}
    assert Tool("t", "", other, openapi=True).parameters["properties"] == {"other_way": {"type": ["integer", "null"]}}


ANY_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-1e3, 1e3) | st.text(max_size=4),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                        max_leaves=8)
ALL_KEYWORDS = st.sampled_from(sorted(SUPPORTED_KEYWORDS | ANNOTATION_KEYWORDS | set(UNSUPPORTED_KEYWORDS)
                                      | {"nullable", "x-any"}))


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyword_values = st.one_of(inner, ANY_JSON, st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3),
                               st.sampled_from(["#", "#/$defs/a", "#/$defs/a%20b", "#/properties/x", "#/$defs/~0"]))
    return st.dictionaries(ALL_KEYWORDS, keyword_values, max_size=4) | st.booleans()


FUZZ_SCHEMAS = st.recursive(st.dictionaries(ALL_KEYWORDS, ANY_JSON, max_size=3) | st.booleans(), _schemas, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(FUZZ_SCHEMAS)
def test_fuzzed_registration_succeeds_or_raises_a_tooldec_error(schema: Any) -> None:
    """Random JSON-ish schemas: registration works or raises a ToolDecError subclass, nothing else;
    what registers also compiles."""
    from tooldec.automata.json_schema import SchemaCompiler
    from tooldec.automata.nfa import NFA

    params = {"type": "object", "properties": {"x": schema, "y": schema}, "$defs": {"a": schema, "a b": schema, "~": schema}}
    try:
        tool = Tool("t", "", params)
    except ToolDecError:
        return
    nfa = NFA()
    SchemaCompiler(nfa, tool.parameters).value(tool.parameters)
    assert tool.schema_hash


def test_prepared_formats_leave_no_automaton_to_build() -> None:
    """After ``prepare_formats`` (which ``prepare_vocabulary`` runs at load), a schema that uses any
    supported format builds no regex automaton when it is read: the first request pays none."""
    from tooldec.automata.regex import FORMAT_PATTERNS, fsm_of

    fsm_of.cache_clear()  # as in a new process (the automata are rebuilt on demand)
    prepare_formats()
    before = fsm_of.cache_info()
    for name in FORMAT_PATTERNS:
        normalize_schema({"type": "object", "properties": {"when": {"type": "string", "format": name, "maxLength": 99}}},
                         tool="t")
    after = fsm_of.cache_info()
    assert after.misses == before.misses and after.hits > before.hits
