"""Random walks and round trips on real vocabularies.

* A walk samples uniformly among the allowed tokens, with a token budget, until the call closes:
  every result must parse, name a tool of the inventory and validate with ``jsonschema``.
* A round trip feeds a known-valid call (BFCL gold answers) token by token: every token must be
  allowed, and the call must close.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from benchmarks.paper.datasets import bfcl_items
from benchmarks.paper.walks import check_walk, random_walk
from tooldec.decoding import Grammar, Machine
from tooldec.dialects.hermes import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

WALKS = int(os.environ.get("TOOLDEC_WALKS", "40"))  # per vocabulary and inventory; a benchmark runs more


def greedy_ids(vocab: Vocabulary, text: str) -> list[int]:
    """A valid (not canonical) tokenization: longest vocabulary match first."""
    return vocab.longest_match(text.encode())


@pytest.mark.parametrize("inventory", ["funcqa", "kamel", "bfcl", "tooleval"])
def test_random_walks_produce_valid_calls(any_vocab: Vocabulary, inventories: dict[str, ToolSet], inventory: str) -> None:
    tools = inventories[inventory]
    dialect = Hermes()
    grammar = Grammar(tools, any_vocab, dialect)
    rng = random.Random(f"walk-{any_vocab.name}-{inventory}")
    for _ in range(WALKS):
        machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
        budget = machine.advanced.shortest_completion() + rng.randint(0, 100)
        result = random_walk(machine, rng, budget)
        assert check_walk(result, dialect, tools) is None, (check_walk(result, dialect, tools), budget)


def gold_calls(data: Path, limit: int) -> list[tuple[dict[str, Any], str]]:
    """(tool definition, Hermes call text) for BFCL simple_python gold answers, arguments in schema order."""
    out = []
    for item in bfcl_items("simple_python", data):
        fn = item["function"][0]
        ((name, params),) = item["ground_truth"][0].items()
        order = list(fn["parameters"].get("properties", {}))
        args = {k: params[k][0] for k in order if k in params and params[k] and params[k][0] != ""}
        body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
        out.append((fn, f"<tool_call>\n{body}\n</tool_call>"))
        if len(out) >= limit:
            break
    return out


def test_gold_calls_are_accepted_token_by_token(any_vocab: Vocabulary, data_dir: Path, full_data: bool) -> None:
    first: dict[str, dict[str, Any]] = {}
    calls = [(fn, text) for fn, text in gold_calls(data_dir, 130) if first.setdefault(fn["name"], fn) is fn]  # BFCL reuses names
    tools = ToolSet(first.values())
    grammar = Grammar(tools, any_vocab, Hermes())
    accepted = 0
    for fn, text in calls:
        args = json.loads(text.split("\n")[1])["arguments"]
        if tools[fn["name"]].validate_arguments(args):
            continue  # a gold value outside its own schema (BFCL has a few): not a grammar question
        machine = Machine(grammar)
        for tid in greedy_ids(any_vocab, "Let me call a tool. " + text):
            assert machine.advance(tid), f"{fn['name']}: refused {any_vocab.token_bytes[tid]!r} after {machine.advanced.text!r}"
        assert machine.advanced.calls_completed == 1 and machine.advanced.is_accepting()
        accepted += 1
    assert accepted >= (100 if full_data else len(calls) - 1)  # the fixtures hold one gold value outside its schema


def test_budget_counts_tokens_not_bytes(qwen_vocab: Vocabulary) -> None:
    """A budget smaller than the call in bytes but enough in tokens still allows the call, and
    every walk under it closes in time (the budget is counted in tokens of the real vocabulary)."""
    fact = {
        "name": "country_fact",
        "description": "A fact about a country.",
        "parameters": {
            "type": "object",
            "properties": {"country": {"type": "string"}, "fact": {"type": "string", "enum": ["capital", "population"]}},
            "required": ["country", "fact"],
        },
    }
    tools = ToolSet([fact])
    dialect = Hermes(openers=["tag"])  # the tag alone: then the trigger is the cheapest way in
    grammar = Grammar(tools, qwen_vocab, dialect)
    probe = Machine(grammar)
    required = Machine(grammar, tool_choice="required")
    need = required.min_tokens()
    assert need < required.advanced.shortest_completion() // 2  # far fewer tokens than bytes
    trigger = qwen_vocab.token_bytes.index(b"<tool_call>")
    assert trigger in set(probe.allowed_token_ids(budget=need + 1).tolist())
    assert trigger not in set(probe.allowed_token_ids(budget=need - 1).tolist())
    rng = random.Random(7)
    for _ in range(30):
        machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
        result = random_walk(machine, rng, need + rng.randint(0, 5))
        assert check_walk(result, dialect, tools) is None, result.text
