"""Automata stay proportional to the schema: shared regex pieces, stamped any-value pieces, and
a sampler whose work does not grow with ``minItems`` copies of the item's states.

Each speed-up is checked for what it must not change (the language, read against ``re`` and
``jsonschema``) and for the size it saves, counted in states, never timed.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import jsonschema
import pytest

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import ANY_DEPTH, SchemaCompiler, Style, Whitespace, _any_value_template
from tooldec.automata.nfa import NFA, Frag
from tooldec.automata.regex import fsm_of, regex_fragment
from tooldec.tools.schema import normalize_any_schema

COMPACT = Style()


def compile_schema(schema: dict[str, Any], style: Style = COMPACT) -> tuple[LazyDFA, NFA]:
    core = normalize_any_schema(schema)
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, core if isinstance(core, dict) else {}, style).value(core)), nfa


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


# -- regex pieces: one per (ranges, target), not one per interegular symbol ----------------------

KEY_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "createdAt": {"type": "string"}},
    "patternProperties": {"^[0-9a-zA-Z_-]{1,255}$": {"type": ["boolean", "integer", "string"]}},
    "additionalProperties": False,
}


def test_key_pattern_minus_declared_names_is_small() -> None:
    # The declared names split interegular's alphabet into ~15 symbols per state; one piece per
    # symbol took over 7,000 pieces (14,000+ states) for this key, merged it is a few hundred.
    _, nfa = compile_schema(KEY_SCHEMA)
    assert nfa.size < 3000


@pytest.mark.parametrize("text, accepted", [
    ('{"id":1}', True),
    ('{"id":1,"idx":true}', True),
    ('{"id":1,"createdAt":"x","i":false,"cre":true}', True),
    ('{"id":1,"id":true}', False),  # a declared name is not a pattern key
    ('{"createdAt":true}', False),  # declared: its own schema applies (and the pattern's)
    ('{"b":[]}', False),
    ('{"ab.c":true}', False),  # '.' is outside the pattern
    ('{"' + "k" * 255 + '":true}', True),
    ('{"' + "k" * 256 + '":true}', False),
])
def test_key_pattern_language_unchanged(text: str, accepted: bool) -> None:
    dfa, _ = compile_schema(KEY_SCHEMA)
    assert dfa.accepts(text.encode()) is accepted
    if accepted:
        assert validator(KEY_SCHEMA).is_valid(json.loads(text))


@pytest.mark.parametrize("pattern", [r"[a-c]x|[d-f]x|[a-f]y", r"(ab|cd)*e{2,4}", r"[^a-z]+[0-9]", r"é|[à-ï]{2}"])
def test_merged_regex_pieces_match_re(pattern: str) -> None:
    nfa = NFA()
    compiler = SchemaCompiler(nfa, {})
    dfa = LazyDFA(nfa, regex_fragment(nfa, (pattern,), compiler.char_class))
    rng = random.Random(pattern)
    alphabet = "abcdefxy0129éàïZ-"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
        assert dfa.accepts(json.dumps(text, ensure_ascii=False)[1:-1].encode()) is bool(re.fullmatch(pattern, text)), text
    assert not fsm_of((pattern,)).empty()


# -- any value: stamped from a template, counted regions included ------------------------------

FREE = {"type": "object", "properties": {k: {} for k in "abcdefghijkl"}, "additionalProperties": False}


def test_stamped_any_values_keep_their_own_regions() -> None:
    template, _ = _any_value_template(Style(), ANY_DEPTH)
    size, regions = template.size, len(template.regions)
    dfa, nfa = compile_schema(FREE)
    assert (template.size, len(template.regions)) == (size, regions)  # the template is never modified
    assert len(nfa.regions) >= 12 * regions
    for rid, region in enumerate(nfa.regions):
        assert region.parent < rid
        assert all(nfa.scope[u] == rid for u in region.units)
    deep = {"a": [[1, {"x": "y"}]], "b": {"k": ["s", None, 2.5e3]}, "c": "\u00e9\\", "l": [[[]]]}
    assert dfa.accepts(json.dumps(deep, separators=(",", ":")).encode())
    assert not dfa.accepts(b'{"a":[[[[1]]]]}')  # deeper than ANY_DEPTH
    assert not dfa.accepts(b'{"a":[1,]}')
    assert not dfa.accepts(b'{"m":1}')


@pytest.mark.parametrize("style", [Style(), Style(whitespace=Whitespace.FLEXIBLE)])
def test_stamped_any_values_sample_valid(style: Style) -> None:
    dfa, _ = compile_schema(FREE, style)
    checker = validator(FREE)
    rng = random.Random(3)
    for _ in range(100):
        value = json.loads(dfa.sample(rng))
        assert checker.is_valid(value), value


# -- sampling a long minItems: repeats skipped, not 600 copies of the item's states ------------

MANY = {
    "type": "object",
    "properties": {"items": {"type": "array", "minItems": 600, "items": {
        "type": "object", "properties": {"name": {"type": "string"}, "uri": {"type": "string"}},
        "required": ["name", "uri"]}}},
    "required": ["items"],
}


@pytest.mark.parametrize("low, high", [(600, None), (600, 650), (40, 41), (7, None)])
def test_sample_of_long_min_items_is_valid_and_small(low: int, high: int | None) -> None:
    schema = json.loads(json.dumps(MANY))
    schema["properties"]["items"]["minItems"] = low
    if high is not None:
        schema["properties"]["items"]["maxItems"] = high
    dfa, _ = compile_schema(schema)
    checker = validator(schema)
    rng = random.Random(low)
    for _ in range(5):
        text = dfa.sample(rng, soft_limit=60)
        value = json.loads(text)
        assert checker.is_valid(value), next(checker.iter_errors(value)).message
        assert low <= len(value["items"]) <= (high or low + 5)
    # The walk interned the states of a few items, not one copy per item up to minItems.
    assert dfa.n_states < 2000
    assert dfa.accepts(text)


class _Unstamped(SchemaCompiler):
    """Builds every any-value piece afresh (what the compiler did before templates)."""

    def any_value(self, depth: int) -> Frag:
        return self._build_any_value(depth)


@pytest.mark.parametrize("schema", [
    FREE,
    {"type": "array", "items": {}, "minItems": 2, "maxItems": 5},
    {"type": "object", "properties": {"a": {"type": "array", "items": {}, "minItems": 3}, "b": {}}, "required": ["a"]},
    {"anyOf": [{"type": "integer"}, {"type": "object", "additionalProperties": {}, "minProperties": 1}]},
])
def test_stamped_tables_equal_built_ones(schema: dict[str, Any]) -> None:
    # Distances and pruning of stamped pieces come from the template's tables: along random
    # walks every state has the same distance to acceptance as in the automaton built afresh.
    core = normalize_any_schema(schema)
    root = core if isinstance(core, dict) else {}
    fresh_nfa, stamped_nfa = NFA(), NFA()
    fresh = LazyDFA(fresh_nfa, _Unstamped(fresh_nfa, root).value(core), window=8)
    stamped = LazyDFA(stamped_nfa, SchemaCompiler(stamped_nfa, root).value(core), window=8)
    assert stamped_nfa.stamps and not any(s.template.regions for s in fresh_nfa.stamps)
    assert fresh.shortest(fresh.start) == stamped.shortest(stamped.start)
    rng = random.Random(7)
    for _ in range(40):
        text = stamped.sample(rng, soft_limit=40)
        a, b, counts_a, counts_b = fresh.start, stamped.start, {}, {}
        for byte in text:
            assert fresh.arrays.dist[a] == stamped.arrays.dist[b]
            assert fresh.shortest(a) == stamped.shortest(b)
            a, counts_a = fresh.advance_exact(a, byte, counts_a)
            b, counts_b = stamped.advance_exact(b, byte, counts_b)
        assert fresh.arrays.accepting[a] and stamped.arrays.accepting[b]
