"""Bounded repeats in ``pattern`` and ``minLength`` beside a pattern are built into the regex
automaton one state per repetition: small ones stay exact, large ones are refused at
registration with :class:`SchemaTooComplexError` naming the keyword (never a slow first mask).
Sizes are checked in parse-tree units and states, never timed."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import jsonschema
import pytest

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import SchemaCompiler
from tooldec.automata.nfa import NFA
from tooldec.automata.regex import anchored
from tooldec.automata.regex_fsm import MAX_PATTERN_UNITS, unrolled_units
from tooldec.errors import InvalidSchemaError, SchemaTooComplexError
from tooldec.tools.schema import normalize_any_schema


def compile_schema(schema: dict[str, Any]) -> LazyDFA:
    core = normalize_any_schema(schema)
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}).value(core))


@pytest.mark.parametrize("regex, units", [
    ("[a-z]{1,20000}", 20000),
    ("[a-z]{0,65535}", 65535),
    ("(ab){3}", 6),
    ("(ab|c){2,4}x*", 4 * 3 + 1),
    ("[a-z]{5,}", 6),  # the minimum and one looping copy
    ("a?b*c+", 1 + 1 + 2),
    ("()", 0),
])
def test_unrolled_units_read_from_the_tree(regex: str, units: int) -> None:
    assert unrolled_units(regex) == units


def test_formats_and_long_benchmark_patterns_are_under_the_bound() -> None:
    assert unrolled_units(anchored("^[0-9a-zA-Z_-]{1,255}$")) <= MAX_PATTERN_UNITS  # JSONSchemaBench o9817


@pytest.mark.parametrize("pattern", [r"^[a-z]{2,4}$", r"^x[0-9]{3}$", r"^(ab){1,3}$"])
def test_small_bounded_repeat_stays_exact(pattern: str) -> None:
    schema = {"type": "string", "pattern": pattern}
    dfa = compile_schema(schema)
    check = jsonschema.Draft202012Validator(schema)
    rng = random.Random(7)
    alphabet = "abxz019"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(400)]
    texts += ["ab", "abcd", "abcde", "x123", "x12", "abab", "ababab", "abababab"]
    for text in texts:
        assert dfa.accepts(json.dumps(text).encode()) == check.is_valid(text) == bool(re.fullmatch(pattern[1:-1], text)), text
    for _ in range(20):  # what the automaton writes is valid
        assert check.is_valid(json.loads(dfa.sample(rng)))


@pytest.mark.parametrize("schema, pointer", [
    ({"type": "string", "pattern": "^[a-z]{1,20000}$"}, "/pattern"),
    ({"type": "string", "pattern": "^[a-z]{0,65535}$"}, "/pattern"),
    ({"type": "object", "properties": {"s": {"type": "string", "pattern": "(ab){600}"}}}, "/properties/s/pattern"),
    ({"type": "object", "patternProperties": {"^[a-z]{1,20000}$": {"type": "integer"}}},
     "/patternProperties/^[a-z]{1,20000}$"),
])
def test_huge_bounded_repeat_is_refused_naming_the_pattern(schema: dict[str, Any], pointer: str) -> None:
    with pytest.raises(SchemaTooComplexError) as err:
        normalize_any_schema(schema)
    assert err.value.keyword == ("patternProperties" if pointer.startswith("/patternProperties") else "pattern")
    assert err.value.pointer == pointer
    assert "maxLength" in str(err.value)  # says what to write instead


def test_huge_length_without_pattern_is_counted_not_refused() -> None:
    dfa = compile_schema({"type": "string", "maxLength": 65535, "minLength": 65535})
    assert not dfa.accepts(b'"abc"')  # the count is exact, carried by the cursor
    dfa = compile_schema({"type": "string", "pattern": "^[a-z]*$", "maxLength": 65535})
    assert dfa.accepts(b'"abc"') and not dfa.accepts(b'"ab1"')


def test_min_length_beside_a_format_is_bounded() -> None:
    small = {"type": "string", "format": "email", "minLength": 10}
    dfa = compile_schema(small)
    assert dfa.accepts(b'"abcd@efghi"') and not dfa.accepts(b'"abc@efgh"')
    with pytest.raises(SchemaTooComplexError) as err:
        normalize_any_schema({"type": "string", "format": "email", "minLength": 20000})
    assert err.value.keyword == "minLength" and err.value.pointer == "/minLength"


def test_min_length_no_pattern_string_reaches_is_unsatisfiable_not_too_complex() -> None:
    with pytest.raises(InvalidSchemaError, match="no string matches"):
        normalize_any_schema({"type": "string", "pattern": "^[a-z]{0,20}$", "minLength": 20000})
