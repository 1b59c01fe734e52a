"""Argument automata: table of schema / text / accepted, and sampled instances that must validate."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import SchemaCompiler, Style, Syntax, Whitespace
from tooldec.automata.nfa import NFA
from tooldec.automata.numbers import integer_fragment, number_fragment
from tooldec.automata.utf8 import utf8_sequences
from tooldec.errors import InvalidSchemaError
from tooldec.tools import MAX_REF_DEPTH
from tooldec.tools.schema import normalize_any_schema

SPACED = Style(whitespace=Whitespace.SPACED)


COMPACT = Style()


def compile_schema(schema: dict[str, Any], style: Style = COMPACT) -> LazyDFA:
    """The automaton of a schema as written: normalized, then compiled (as a tool's would be)."""
    core = normalize_any_schema(schema)
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}, style).value(core))


OBJ = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}, "c": {"type": "boolean"}},
    "required": ["b"],
}

CASES: list[tuple[dict[str, Any], str, bool]] = [
    (OBJ, '{"b":"x"}', True),
    (OBJ, '{"a":1,"b":""}', True),
    (OBJ, '{"a":1,"b":"xy","c":true}', True),
    (OBJ, '{"b":"x","c":false}', True),
    (OBJ, '{"a":1}', False),  # b is required
    (OBJ, '{"b":"xyz"}', False),  # maxLength
    (OBJ, '{"b":"x","a":1}', False),  # declared order
    (OBJ, '{"b":"x","d":1}', False),  # no additional properties
    (OBJ, '{"b":"x",}', False),
    ({"type": "string"}, '"a\\"b\\\\c\\n\\u00e9\\/"', True),
    ({"type": "string"}, '"\\ud800"', False),  # lone surrogate escape
    ({"type": "string"}, '"é😀"', True),
    ({"type": "string"}, '"\n"', False),  # raw control character
    ({"type": "string", "minLength": 2}, '"😀"', False),
    ({"type": "string", "minLength": 2}, '"😀\\n"', True),
    ({"type": "string", "enum": ["red", "green"]}, '"red"', True),
    ({"type": "string", "enum": ["red", "green"]}, '"blue"', False),
    ({"const": {"k": [1, None]}}, '{"k":[1,null]}', True),
    ({"type": "string", "pattern": "^[a-z]+-\\d{2}$"}, '"ab-12"', True),
    ({"type": "string", "pattern": "^[a-z]+-\\d{2}$"}, '"ab-1"', False),
    ({"type": "string", "pattern": "\\d"}, '"x1y"', True),  # unanchored: search semantics
    ({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}, '"abc"', True),
    ({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}, '"abcd"', False),  # both constraints hold
    ({"type": "string", "format": "email", "pattern": "org$"}, '"a@b.org"', True),
    ({"type": "string", "format": "email", "pattern": "org$"}, '"a@b.com"', False),
    ({"type": "string", "format": "date"}, '"2024-02-29"', True),
    ({"type": "string", "format": "date"}, '"2023-02-29"', False),
    ({"type": "string", "format": "date-time"}, '"2024-05-01T10:20:30Z"', True),
    ({"type": "string", "format": "uuid"}, '"123e4567-e89b-12d3-a456-426614174000"', True),
    ({"type": "string", "format": "email"}, '"a.b@example.org"', True),
    ({"type": "integer", "minimum": -3, "maximum": 250}, "250", True),
    ({"type": "integer", "minimum": -3, "maximum": 250}, "251", False),
    ({"type": "integer", "minimum": -3, "maximum": 250}, "-4", False),
    ({"type": "integer", "exclusiveMinimum": 0}, "0", False),
    ({"type": "number"}, "-1.5e+10", True),
    ({"type": "number"}, "01", False),
    ({"type": "number"}, "1e999", False),  # would read back as infinity
    ({"type": "number", "minimum": 0, "maximum": 1}, "0.75", True),
    ({"type": "number", "minimum": 0, "maximum": 1}, "1.5", False),
    ({"type": ["integer", "null"]}, "null", True),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, "[1,2]", True),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, "[]", False),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, "[1,2,3]", False),
    ({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}, '[1,"a"]', True),
    ({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}, '[1,"a",2]', False),
    ({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]}, '"a"', True),
    ({"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}, {"properties": {"y": {"type": "null"}}}]}, '{"x":1,"y":null}', True),
    ({}, '{"any":[1,{"x":null}],"b":"c"}', True),
    ({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": {"type": "string"}}, '{"n":1,"extra_1":"v"}', True),
    ({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": {"type": "string"}}, '{"n":1,"n":"v"}', False),
]


@pytest.mark.parametrize(("schema", "text", "accepted"), CASES)
def test_schema_accepts_exactly(schema: dict[str, Any], text: str, accepted: bool) -> None:
    assert compile_schema(schema).accepts(text.encode()) is accepted


def test_spaced_and_python_styles() -> None:
    assert compile_schema(OBJ, SPACED).accepts(b'{"a": 1, "b": "x", "c": true}')
    assert not compile_schema(OBJ, SPACED).accepts(b'{"a":1,"b":"x"}')
    python = Style(syntax=Syntax.PYTHON, whitespace=Whitespace.SPACED)
    assert compile_schema(OBJ, python).accepts(b'{"b": "x", "c": True}')
    flexible = compile_schema(OBJ, Style(whitespace=Whitespace.FLEXIBLE))
    assert flexible.accepts(b'{ "b" :\n"x" }') and not flexible.accepts(b'{   "b":"x"}')


def test_recursive_allof_through_ref_is_refused() -> None:
    """JSONSchemaBench Github_easy/o17683 recursed forever through allOf + $ref: no value is
    ever reached (jsonschema itself recurses without end), so it is refused, typed."""
    schema = {
        "$defs": {"node": {"allOf": [{"$ref": "#/$defs/node"}], "type": "object", "properties": {"v": {"type": "integer"}}}},
        "$ref": "#/$defs/node",
    }
    with pytest.raises(InvalidSchemaError, match="MAX_REF_DEPTH"):
        compile_schema(schema)


def test_recursive_ref_is_bounded() -> None:
    tree = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["kids"],
    }
    dfa = compile_schema(tree)

    def nested(levels: int) -> bytes:
        return b'{"kids":[' * (levels - 1) + b'{"kids":[]}' + b"]}" * (levels - 1)

    assert dfa.accepts(nested(MAX_REF_DEPTH + 1))  # the root plus MAX_REF_DEPTH references
    assert not dfa.accepts(nested(MAX_REF_DEPTH + 2))


@pytest.mark.parametrize(("low", "high"), [(None, None), (0, None), (1, 12), (-5, 5), (-20, -3), (None, 7), (100, 1000)])
def test_integer_ranges_against_python(low: int | None, high: int | None) -> None:
    nfa = NFA()
    dfa = LazyDFA(nfa, integer_fragment(nfa, low, high))
    for value in range(-1100, 1100):
        inside = (low is None or value >= low) and (high is None or value <= high)
        assert dfa.accepts(str(value).encode()) is inside, value
    assert not dfa.accepts(b"007") and not dfa.accepts(b"-0")


def test_number_bounds_with_fractions() -> None:
    nfa = NFA()
    dfa = LazyDFA(nfa, number_fragment(nfa, -2, 3, low_open=True))
    rng = random.Random(0)
    for _ in range(3000):
        text = f"{rng.choice(['-', ''])}{rng.randint(0, 6)}{rng.choice(['', '.0', '.5', '.001', '.00'])}"
        if float(text) == 0 and text.startswith("-"):
            continue
        assert dfa.accepts(text.encode()) is (-2 < float(text) <= 3), text


def test_utf8_sequences_cover_every_scalar_value() -> None:
    seqs = utf8_sequences(0, 0x10FFFF)
    rng = random.Random(1)
    for cp in list(range(0x900)) + rng.sample(range(0x900, 0x110000), 3000):
        data = chr(cp).encode("utf-8", "surrogatepass")
        ok = any(len(s) == len(data) and all(lo <= b <= hi for b, (lo, hi) in zip(data, s)) for s in seqs)
        assert ok is not (0xD800 <= cp <= 0xDFFF), hex(cp)


def sample(dfa: LazyDFA, rng: random.Random, soft_limit: int = 120) -> bytes:
    """A random accepted string: random live bytes, steering to the end once past the limit."""
    return dfa.sample(rng, soft_limit)


@pytest.mark.parametrize("schema", [s for s, _, _ in CASES[::5]] + [OBJ])
def test_sampled_instances_validate(schema: dict[str, Any]) -> None:
    dfa = compile_schema(schema, SPACED)
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    rng = random.Random(json.dumps(schema))
    for _ in range(200):
        text = sample(dfa, rng)
        value = json.loads(text)
        assert checker.is_valid(value), (text, next(checker.iter_errors(value)).message)
