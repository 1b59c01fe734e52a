"""The shortest call below a name prefix, found from lower bounds: the same text as the least over
every tool, and only a few tool automata built (a budget before the first name no longer builds
every tool's automaton in every form)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from tests.dialects.helpers import vocabulary_for
from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import dumps
from tooldec.automata.nfa import NFA
from tooldec.decoding import Compiler, Machine
from tooldec.decoding.budget import _name_needs, token_needs
from tooldec.decoding.name_bounds import (
    NO_WITNESS,
    _shortest_arguments,
    least_bytes,
    name_most,
    shortest_below,
    tail_floor,
    tail_frame,
    tail_start_text,
    witness,
)
from tooldec.decoding.positions import Name
from tooldec.dialects import DIALECTS, DeclaredDialect, Dialect, Hermes
from tooldec.dialects.key_values import KeyValueArguments
from tooldec.errors import BudgetError, ToolDecError
from tooldec.tokens import Vocabulary
from tooldec.tools import Tool, ToolSet

from .tools_zoo import EVERY_OPENER, ZOO


def accepted(dialect: Dialect, tools: list[dict[str, Any]]) -> list[Tool]:
    """The tools ``dialect`` can write calls to (Pythonic refuses keyword-named arguments)."""
    kept = []
    for tool in ToolSet(tools):
        try:
            dialect.check_tool(tool)
        except ToolDecError:
            continue
        kept.append(tool)
    return kept


def naive(grammar, prefix, form, follow_ok, only=None):  # type: ignore[no-untyped-def]
    """The least over every tool, each tail built: the reference."""
    names = [only] if only is not None else grammar.name_index.below(prefix)
    texts = []
    for name in names:
        tail = grammar.tail(name, form, follow_ok).dfa
        texts.append(name.encode()[len(prefix):] + tail.shortest(tail.start))
    return min(texts, key=lambda t: (len(t), t))


@pytest.fixture(scope="module")
def bfcl(inventories: dict[str, ToolSet]) -> list[dict[str, Any]]:
    """BFCL's tools with names every dialect takes (Mistral refuses ``.``)."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in inventories["bfcl"]:
        name = tool.name.replace(".", "_")[:64]
        tools.setdefault(name, {"name": name, "description": tool.description, "parameters": tool.parameters})
    return list(tools.values())


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_every_tail_is_at_least_its_bound(dialect_name: str, qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]]) -> None:
    """The lower bound holds for every tool, form and chaining: the search may stop on it. And
    where a form's tails are fixed bytes around the arguments, ``tail_start_text`` (the arguments
    cut from one form's tail, framed for the others of their style) is the whole tail's, and the
    arguments are what their own automaton finds shortest."""
    dialect = DIALECTS[dialect_name]()
    grammar = Compiler(vocabulary_for(dialect, qwen_vocab), dialect).compile(accepted(dialect, bfcl[:40] + ZOO))
    checked = framed = 0
    for form in range(dialect.forms):
        for chained in (False, True):
            floor = tail_floor(grammar, form, chained)
            framed += tail_frame(grammar, form, chained) is not None
            for name in grammar.names:
                tail = grammar.tail(name, form, chained).dfa
                shortest = tail.shortest(tail.start)
                assert tail_start_text(grammar, name, form, chained) == shortest, (form, chained, name)
                frame = tail_frame(grammar, form, chained)
                if frame is not None:  # what the tail's text is cut into: the arguments' own automaton's
                    arguments = _shortest_arguments(grammar, grammar.tools[name], dialect.form_style(form))
                    assert shortest == frame[0] + arguments + frame[1], (form, chained, name)
                length = len(shortest)
                bound = 0 if floor is None else floor + least_bytes(grammar.tools[name].parameters,
                                                                    dialect.form_style(form))
                assert length >= bound, (dialect_name, form, chained, name, length, bound)
                checked += 1
    assert checked >= 2 * len(grammar.names)
    assert framed == (2 * dialect.forms if dialect.arguments_in_tail else 0)


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_the_search_finds_the_least_of_every_tool(dialect_name: str, qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]]) -> None:
    dialect = DIALECTS[dialect_name]()
    grammar = Compiler(vocabulary_for(dialect, qwen_vocab), dialect).compile(accepted(dialect, bfcl[:60] + ZOO))
    rng = random.Random(7)
    prefixes = [b""] + sorted({name.encode()[:k] for name in rng.sample(grammar.names, 10) for k in (1, 3)})
    for form in range(dialect.forms):
        for prefix in prefixes:
            assert shortest_below(grammar, prefix, form, False) == naive(grammar, prefix, form, False)
        only = grammar.names[0]
        assert shortest_below(grammar, b"", form, False, only) == naive(grammar, b"", form, False, only)
    with pytest.raises(ValueError, match="not a tool"):
        shortest_below(grammar, b"", 0, False, "no_such_tool")


@pytest.mark.parametrize("dialect", [Hermes(), EVERY_OPENER], ids=["tag", "every-opener"])
def test_a_budget_before_the_name_builds_few_tool_automata(qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]],
                                                          monkeypatch: pytest.MonkeyPatch, dialect: Hermes) -> None:
    """``required`` with a budget: the first mask needs the shortest call of each form the call
    may open with; it is found without building every tool's automaton, and forbids the same
    tokens as the least over every tool (the search replaced by :func:`naive`)."""
    tools = bfcl[:150]
    lazy = Compiler(vocabulary_for(dialect, qwen_vocab), dialect)
    least = Machine(lazy.compile(tools), tool_choice="required").min_tokens()
    budgets = (64, least + 3, least)
    masks = [Machine(lazy.compile(tools), tool_choice="required").allowed_token_ids(budget=b) for b in budgets]
    with pytest.raises(BudgetError, match=f"needs {least} tokens"):  # one less: no token, said so
        Machine(lazy.compile(tools), tool_choice="required").allowed_token_ids(budget=least - 1)
    assert len(lazy.tails) <= 3 * Hermes().forms < len(tools)
    monkeypatch.setattr("tooldec.decoding.budget.shortest_below", naive)
    eager = Compiler(vocabulary_for(dialect, qwen_vocab), dialect, tail_cache_bytes=1 << 30)  # keeps every tail it builds
    reference = [Machine(eager.compile(tools), tool_choice="required").allowed_token_ids(budget=b) for b in budgets]
    assert len(eager.tails) > len(tools) // 2 > len(lazy.tails)  # the reference built most tools' automata
    for budget, got, want in zip(budgets, masks, reference):
        assert np.array_equal(got, want), budget
    assert masks[0].size > masks[2].size > 0


@pytest.mark.parametrize("schema, text", [
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, '{"a":0}'),
    ({"type": "array", "minItems": 3, "items": {"type": "integer"}}, "[0,0,0]"),
    ({"type": "string", "minLength": 4}, '"abcd"'),
    ({"enum": ["xy", 10, None]}, "1"),
    ({"type": ["boolean", "null"]}, "true"),
    ({"const": {"k": [1, 2]}}, '{"k":[1,2]}'),
])
def test_least_bytes_is_the_shortest_compact_text(schema: dict, text: str) -> None:
    assert least_bytes(schema) == len(text.encode())


@pytest.mark.parametrize("schema, text", [
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]},
     '{"a": 0, "b": ""}'),
    ({"type": "array", "minItems": 3, "items": {"type": "integer"}}, "[0, 0, 0]"),
    ({"const": {"k": [1, 2], "j": None}}, '{"k": [1, 2], "j": null}'),
])
def test_least_bytes_counts_the_separators_a_spaced_style_writes(schema: dict, text: str) -> None:
    """Hermes writes ``", "`` and ``": "``: counting them makes the bound of BFCL's tools exact,
    so the search builds the automaton of the tool it returns and few others."""
    assert Hermes().style.item_sep == b", "
    assert least_bytes(schema, Hermes().style) == len(text.encode())


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_every_witness_is_valid_and_bounds_its_tail(dialect_name: str, qwen_vocab: Vocabulary,
                                                   bfcl: list[dict[str, Any]], inventories: dict[str, ToolSet]) -> None:
    """A witness is valid under its schema, the tool's own argument automaton writes it, and its
    tail is no longer than the floor plus the witness: the upper bound the budget trusts."""
    dialect = DIALECTS[dialect_name]()
    given = bfcl + ZOO + [{"name": x.name.replace(".", "_"), "parameters": x.parameters}
                          for inventory in ("funcqa", "kamel", "tooleval") for x in inventories[inventory]]
    tools = accepted(dialect, list({t["name"]: t for t in given}.values()))
    grammar = Compiler(vocabulary_for(dialect, qwen_vocab), dialect).compile(tools)
    writes_key_values = isinstance(dialect, DeclaredDialect) and isinstance(dialect.format.arguments, KeyValueArguments)
    written = 0
    for form in range(dialect.forms):
        style = dialect.form_style(form)
        floor = tail_floor(grammar, form, False)
        for name in grammar.names:
            tool = grammar.tools[name]
            value = witness(tool.parameters, style)
            if value is NO_WITNESS:
                continue
            assert tool.validate_arguments(value) == [], (name, value)
            if not writes_key_values:  # a witness is a JSON object; key/value formats write arguments one by one
                nfa = NFA()
                args = LazyDFA(nfa, dialect.arguments(nfa, tool, style), window=grammar.compiler.index.longest)
                assert args.accepts(dumps(value, style).encode()), (name, dumps(value, style))
            if floor is not None:
                tail = grammar.tail(name, form, False).dfa
                assert len(tail.shortest(tail.start)) <= floor + len(dumps(value, style).encode()), name
                bounds = name_most(grammar, form, False)
                assert bounds is not None
                assert bounds[grammar.name_index.span(name.encode())[0]] >= len(name) + len(tail.shortest(tail.start))
            written += 1
    assert written >= 0.8 * dialect.forms * len(grammar.names)  # most real schemas have one


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^[a-z]+$"},
    {"type": "string", "format": "date"},
    {"not": {"type": "string"}},
    {"type": "object", "properties": {}, "required": ["x"]},
    False,
])
def test_no_witness_where_the_schema_is_not_read(schema: Any) -> None:
    assert witness(schema, Hermes().style) is NO_WITNESS


@pytest.mark.parametrize("dialect_name", ["hermes", "mistral", "llama3_json"])
def test_a_name_mask_passed_whole_under_a_budget_is_what_the_exact_needs_allow(
        dialect_name: str, qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]]) -> None:
    """Under a budget, a name's tokens are filtered by upper bounds of their needs, made exact
    only where a budget does not clear them: the same tokens as the exact needs, from tight
    budgets to loose, and every bound at least the exact need."""
    dialect = DIALECTS[dialect_name]()
    grammar = Compiler(vocabulary_for(dialect, qwen_vocab), dialect).compile(accepted(dialect, bfcl[:80] + ZOO))
    rng = random.Random(3)
    prefixes = [b""] + sorted({name.encode()[:k] for name in rng.sample(grammar.names, 12) for k in (1, 2, 4)})
    whole = 0
    for prefix in prefixes:
        for form in range(dialect.forms):
            pos = Name(form, prefix, None)
            machine = Machine(grammar, tool_choice="required")
            machine._pos = pos  # a cursor at that name prefix (the mask is what the position allows)
            mask = grammar.mask(pos, True, True)
            ids, needs = token_needs(grammar, pos, mask, True, True)
            bounds = _name_needs(grammar, pos, mask, True, True)
            assert bounds is not None and np.array_equal(bounds.ids, ids)
            assert np.all(bounds.upper >= needs), (prefix, form)
            for budget in (128, 64, 48, 32, 24, 16, 8):  # loose first: bounds are made exact as budgets tighten
                want = np.sort(ids[needs <= budget - 1])
                if not want.size:  # below the need: refused, with the need
                    with pytest.raises(BudgetError):
                        machine.allowed_token_ids(budget=budget)
                    continue
                got = machine.allowed_token_ids(budget=budget)
                assert np.array_equal(got, want), (prefix, form, budget)
                whole += got.size == ids.size
    assert whole > 0  # the bounds let whole masks through somewhere
