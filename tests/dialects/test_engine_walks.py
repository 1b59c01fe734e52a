"""Each dialect inside the decoding engine: random constrained walks on a real vocabulary.

A walk samples uniformly among the tokens the engine allows until the call closes; the dialect's
own ``parse_calls`` must read the text back as one call that validates against its tool. This is
where a tail that ends ambiguously, or a parser that disagrees with the grammar, shows up.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.paper.datasets import bfcl_tools, funcqa_tools, toolbench_tools
from benchmarks.paper.walks import check_walk, random_walk
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Dialect, Llama3Json, Mistral, ReAct, ToolkenGPT
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

WALKS = 25


@pytest.mark.parametrize(
    ("make", "inventory"),
    [
        (ToolkenGPT, "funcqa"),
        (ReAct, "tooleval"),
        (Llama3Json, "bfcl"),
        (Mistral, "tooleval"),
    ],
)
def test_random_walks_parse_back_as_valid_calls(
    make: type[Dialect], inventory: str, smollm2_vocab: Vocabulary, data_dir: Path
) -> None:
    specs = {"funcqa": funcqa_tools, "tooleval": lambda: toolbench_tools(data_dir), "bfcl": lambda: bfcl_tools(data_dir)}
    tools = ToolSet(specs[inventory]())
    dialect = ToolkenGPT(tools) if make is ToolkenGPT else make()
    grammar = Grammar(tools, smollm2_vocab, dialect)
    rng = random.Random(f"dialect-walk-{dialect.name}")
    for _ in range(WALKS):
        machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
        result = random_walk(machine, rng, machine.advanced.shortest_completion() + rng.randint(0, 60))
        assert check_walk(result, dialect, tools) is None, (check_walk(result, dialect, tools), result.text)
