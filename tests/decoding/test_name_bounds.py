"""The shortest call below a name prefix, found from lower bounds: the same text as the least over
every tool, and only a few tool automata built (a budget before the first name no longer builds
every tool's automaton in every form)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from tooldec.decoding import Compiler, Machine
from tooldec.decoding.name_bounds import least_bytes, shortest_below, tail_floor
from tooldec.dialects import DIALECTS, Dialect, Hermes
from tooldec.errors import ToolDecError
from tooldec.tokens import Vocabulary
from tooldec.tools import Tool, ToolSet

from .tools_zoo import ZOO


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


def naive(grammar, names, prefix, form, follow_ok):  # type: ignore[no-untyped-def]
    """The least over every tool, each tail built: the reference."""
    texts = []
    for name in names:
        tail = grammar.tail(name, form, follow_ok).dfa
        texts.append(name.encode()[len(prefix):] + tail.shortest(tail.start, {}))
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
    """The lower bound holds for every tool, form and chaining: the search may stop on it."""
    dialect = DIALECTS[dialect_name]()
    grammar = Compiler(qwen_vocab, dialect).compile(accepted(dialect, bfcl[:40] + ZOO))
    checked = 0
    for form in range(dialect.forms):
        for chained in (False, True):
            floor = tail_floor(grammar, form, chained)
            for name in grammar.names:
                tail = grammar.tail(name, form, chained).dfa
                length = len(tail.shortest(tail.start, {}))
                bound = 0 if floor is None else floor + least_bytes(grammar.tools[name].parameters)
                assert length >= bound, (dialect_name, form, chained, name, length, bound)
                checked += 1
    assert checked >= 2 * len(grammar.names)


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_the_search_finds_the_least_of_every_tool(dialect_name: str, qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]]) -> None:
    dialect = DIALECTS[dialect_name]()
    grammar = Compiler(qwen_vocab, dialect).compile(accepted(dialect, bfcl[:60] + ZOO))
    rng = random.Random(7)
    prefixes = [b""] + sorted({name.encode()[:k] for name in rng.sample(grammar.names, 10) for k in (1, 3)})
    for form in range(dialect.forms):
        for prefix in prefixes:
            names = grammar.name_index.below(prefix)
            assert shortest_below(grammar, names, prefix, form, False) == naive(grammar, names, prefix, form, False)


def test_a_budget_before_the_name_builds_few_tool_automata(qwen_vocab: Vocabulary, bfcl: list[dict[str, Any]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``required`` with a budget: the first mask needs the shortest call of each form; it is found
    without building every tool's automaton, and forbids the same tokens as the least over every
    tool (the search replaced by :func:`naive`)."""
    tools = bfcl[:150]
    lazy = Compiler(qwen_vocab, Hermes())
    least = Machine(lazy.compile(tools), tool_choice="required").min_tokens()
    budgets = (64, least + 3, least, least - 1)
    masks = [Machine(lazy.compile(tools), tool_choice="required").allowed_token_ids(budget=b) for b in budgets]
    assert len(lazy.tails) <= 3 * Hermes().forms < len(tools)
    monkeypatch.setattr("tooldec.decoding.budget.shortest_below", naive)
    eager = Compiler(qwen_vocab, Hermes())
    reference = [Machine(eager.compile(tools), tool_choice="required").allowed_token_ids(budget=b) for b in budgets]
    assert len(eager.tails) >= len(tools)
    for budget, got, want in zip(budgets, masks, reference):
        assert np.array_equal(got, want), budget
    assert masks[0].size > masks[2].size > 0 == masks[3].size


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
