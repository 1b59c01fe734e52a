"""Every dialect inside the engine: its declared tail start holds, and its masks are exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchmarks.paper.datasets import funcqa_tools
from benchmarks.paper.walks import check_walk, random_walk
from tests.dialects.helpers import vocabulary_for
from tooldec.automata.dfa import SINK, LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import DIALECTS, Dialect, Pythonic, ToolkenGPT
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force


def make(name: str, tools: ToolSet) -> Dialect:
    cls = DIALECTS[name]
    return cls(tools) if cls is ToolkenGPT else cls()  # type: ignore[call-arg]


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_tail_literal_starts_every_tail(name: str) -> None:
    tools = ToolSet(funcqa_tools())
    dialect = make(name, tools)
    for tool in tools:
        for next_call in (False, True):
            nfa = NFA()
            dfa = LazyDFA(nfa, dialect.tail(nfa, tool, next_call=next_call))
            state = dfa.start
            for byte in dialect.tail_literal:
                row = dfa.row(state)
                assert list(np.flatnonzero(row >= 0)) == [byte], (tool.name, dialect.tail_literal)
                state = dfa.next(state, byte)
            assert state != SINK


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_masks_are_exact_in_every_dialect(name: str, mistral_vocab: Vocabulary) -> None:
    tools = ToolSet(funcqa_tools())
    dialect = make(name, tools)
    grammar = Grammar(tools, vocabulary_for(dialect, mistral_vocab), dialect)
    rng = random.Random(name)
    machine = Machine(grammar, tool_choice="required")
    for step in range(30):
        if step % 6 == 0:
            assert np.array_equal(machine.allowed_token_ids(), brute_force(machine)), machine.advanced.position
        allowed = machine.allowed_token_ids(budget=60 - step)
        if machine.advanced.calls_completed or not allowed.size:
            break
        assert machine.advance(int(allowed[rng.randrange(allowed.size)]))


def test_pythonic_calls_open_the_output(smollm2_vocab: Vocabulary) -> None:
    tools = ToolSet(funcqa_tools())
    dialect = Pythonic()
    grammar = Grammar(tools, smollm2_vocab, dialect)
    with pytest.raises(ValueError, match="can only open the output"):
        Machine(grammar)
    rng = random.Random(0)
    for _ in range(20):
        machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
        result = random_walk(machine, rng, machine.advanced.shortest_completion() + rng.randint(0, 40))
        assert result.text.startswith("[")
        assert check_walk(result, dialect, tools) is None, result.text
