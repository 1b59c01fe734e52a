"""Extreme numbers in every numeric keyword: a typed refusal at registration, or a grammar whose
every walk validates with ``jsonschema`` against the schema as written (never an untyped error).

JSON allows integers of any size and ``json.loads`` reads ``1e400`` as infinity and ``NaN`` as a
float, so a schema can hold all of these.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import SchemaCompiler
from tooldec.automata.nfa import NFA
from tooldec.errors import SchemaTooComplexError, ToolRegistrationError
from tooldec.tools import Tool
from tooldec.tools.schema import normalize_any_schema

EXTREMES: list[Any] = [
    10**400, -(10**400), 10**400 + 1, 10**4000, 2**63, -(2**63) - 1, 2**64 + 1, 9007199254740993, 1e308, -1e308,
    1.7976931348623157e308, float("inf"), float("-inf"), float("nan"), -0.0, 5e-324, -5e-324, 1e-300, 0.1, 1e16 + 2,
    json.loads("1e400"), json.loads("-1E400"),
]
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
COUNT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")


def _compiled(schema: Any) -> LazyDFA:
    core = normalize_any_schema(schema)
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}).value(core))


def _refused_or_sound(schema: dict[str, Any]) -> None:
    try:
        dfa = _compiled(schema)
    except ToolRegistrationError:
        return
    checker = Draft202012Validator(schema)
    rng = random.Random(repr(schema))
    writable = not dfa.is_empty and 0 <= int(dfa.arrays.dist[dfa.start]) < 10_000  # minLength 2**63 - 1: exact, never written
    for _ in range(4 if writable else 0):
        text = dfa.sample(rng, 40)
        assert checker.is_valid(json.loads(text)), (schema, text)


@pytest.mark.parametrize("kind", ["integer", "number"])
@pytest.mark.parametrize("keyword", [*NUMBER_KEYWORDS, "const", "enum", "not"])
def test_extreme_numbers_are_refused_or_enforced(kind: str, keyword: str) -> None:
    for value in EXTREMES:
        if keyword == "not":
            schema: dict[str, Any] = {"type": kind, "not": {"enum": [value]}, "minimum": -5, "maximum": 5}
        elif keyword == "enum":
            schema = {"type": kind, "enum": [value, 1]}
        else:
            schema = {"type": kind, keyword: value}
        _refused_or_sound(schema)
        _refused_or_sound({"type": "object", "properties": {"n": schema}, "required": ["n"]})


@pytest.mark.parametrize("keyword", COUNT_KEYWORDS)
def test_extreme_counts_are_refused_or_enforced(keyword: str) -> None:
    kind = {"Length": "string", "Items": "array", "Properties": "object"}[keyword[3:]]
    for value in EXTREMES:
        _refused_or_sound({"type": kind, keyword: value})


@pytest.mark.parametrize(("low", "high"), [(10**400 - 1, 10**400), (-(10**400), -(10**400) + 3), (2**64, 2**64 + 10**30)],
                         ids=["10**400", "-10**400", "2**64"])
def test_big_integer_bounds_are_exact(low: int, high: int) -> None:
    """``maximum: 10**400`` is an exact bound: the automaton takes it and refuses one more."""
    dfa = _compiled({"type": "integer", "minimum": low, "maximum": high})
    for value in (low - 1, low, high, high + 1):
        assert dfa.accepts(str(value).encode()) is (low <= value <= high), value
    numbers = _compiled({"type": "number", "exclusiveMaximum": 10**400})
    assert numbers.accepts(str(10**400 - 1).encode()) and not numbers.accepts(str(10**400).encode())


def test_a_tool_with_a_huge_bound_registers_and_one_beyond_the_digit_limit_is_refused() -> None:
    tool = Tool.from_dict({"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer", "maximum": 10**400}}, "required": ["n"]}})
    assert tool.validate_arguments({"n": 10**400}) == []
    with pytest.raises(SchemaTooComplexError) as info:
        Tool.from_dict({"name": "f", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 10**4000}}}})
    assert (info.value.pointer, info.value.keyword) == ("/properties/n/maximum", "maximum")
