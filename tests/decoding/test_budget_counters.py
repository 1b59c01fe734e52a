"""Token budgets inside large counters (``minItems``, ``minLength``): exact, and at a cost that does
not grow with the count.

A completion through a counter below its floor is counted from its runs
(:mod:`tooldec.automata.shortest`, :mod:`tooldec.decoding.run_tokens`); the reference here spells
it one kept step at a time and cuts it with ``Vocabulary.longest_match``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from tooldec.automata.shortest import Runs
from tooldec.decoding import Grammar, Machine
from tooldec.decoding.positions import Tail, Text
from tooldec.decoding.run_tokens import count_runs
from tooldec.dialects import Hermes
from tooldec.errors import TokenizerError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force


def _cut(vocab: Vocabulary, text: bytes) -> int | None:
    try:
        return len(vocab.longest_match(text))
    except TokenizerError:
        return None


PIECES = [b"0,", b",0", b'{"a":1},', b'"ab",', b" ", b"\xc3\xa9", b"aaa", b"\n  ", b"]}", b'"x": [', b"\xff\x00"]


def test_runs_are_counted_as_their_spelled_text_is_cut(any_vocab: Vocabulary) -> None:
    """Random runs of completion-like pieces (and bytes some vocabularies have no token for):
    the count from the runs is the cut of the spelled text, ``None`` where that cut fails."""
    rng = random.Random(any_vocab.name)
    failed = 0
    for _ in range(40):
        runs: Runs = tuple((rng.choice(PIECES) * rng.randint(1, 3), rng.choice([1, 1, 2, rng.randint(3, 4000)]))
                           for _ in range(rng.randint(1, 5)))
        text = b"".join(piece * times for piece, times in runs)
        expected = _cut(any_vocab, text)
        got = count_runs(runs, any_vocab.longest_prefix, any_vocab.longest_token, lambda t: _cut(any_vocab, t))
        assert got == expected, runs
        failed += expected is None
    assert failed < 40


def _walked_need(grammar: Grammar, pos: Any, memo: dict[Any, int]) -> int:
    """The need of a position spelled byte by byte (the reference): 0 in text. A tail's need
    depends on its state alone (below a floor the state holds the exact count)."""
    if isinstance(pos, Text):
        return 0
    assert isinstance(pos, Tail)
    key = (pos.tool, pos.form, pos.state)
    if key not in memo:
        dfa = grammar.tail(pos.tool, pos.form, pos.chained).dfa
        out, sid = bytearray(), pos.state
        while (step := dfa.shortest_step(sid)) is not None:
            out.append(step[0])
            sid = step[1]
        found = _cut(grammar.vocab, bytes(out))
        memo[key] = len(out) if found is None else found
    return memo[key]


LARGE = [
    {"name": "ints", "parameters": {"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "integer"}, "minItems": 3000}, "done": {"type": "boolean"}},
        "required": ["xs", "done"]}},
    {"name": "words", "parameters": {"type": "object", "properties": {
        "ws": {"type": "array", "items": {"type": "string", "minLength": 2}, "minItems": 1500}}, "required": ["ws"]}},
    {"name": "text", "parameters": {"type": "object", "properties": {
        "t": {"type": "string", "minLength": 6000}}, "required": ["t"]}},
]


@pytest.mark.parametrize("vocab_name", ["smollm2", "qwen"])
@pytest.mark.parametrize("tool", [t["name"] for t in LARGE])
def test_budgeted_masks_inside_a_large_counter_are_exact(vocab_name: str, tool: str,
                                                         request: pytest.FixtureRequest) -> None:
    """Inside a counter thousands of items below its floor, the budgeted mask is exactly the
    tokens ``advance`` takes after which the spelled completion fits the budget left (on the
    byte-level vocabulary with missing bytes and on the largest)."""
    vocab: Vocabulary = request.getfixturevalue(f"{vocab_name}_vocab")
    grammar = Grammar(ToolSet(LARGE), vocab, Hermes())
    machine = Machine(grammar, tool_choice=tool, parallel_tool_calls=False)
    rng = random.Random(f"{vocab_name}-{tool}")
    memo: dict[Any, int] = {}
    checked = inside = 0
    for step in range(80):
        need = machine.min_tokens()
        inside += isinstance(machine.advanced.position, Tail)
        if isinstance(machine.advanced.position, Tail) and inside % 11 == 3:  # 3, 14, 25 tokens into the arguments
            # every token where the mask is small, else (inside a string) a sample of the vocabulary
            unbudgeted = machine.allowed_token_ids()
            tried = brute_force(machine) if unbudgeted.size <= 2000 else \
                np.array(sorted(rng.sample(range(vocab.size), 3000)), dtype=np.int32)
            needs = {}
            for tid in tried.tolist():
                if machine.advance(tid):
                    needs[tid] = _walked_need(grammar, machine.advanced.position, memo)
                    machine.rollback()
            assert needs and need == _walked_need(grammar, machine.advanced.position, memo)
            for budget in sorted({need, need + 1, need + 2, *(n + 1 for n in needs.values())})[:5]:
                expected = np.array(sorted(t for t, n in needs.items() if n <= budget - 1), dtype=np.int32)
                got = np.intersect1d(machine.allowed_token_ids(budget=budget), tried)
                assert np.array_equal(got, expected), (step, budget, np.setdiff1d(got, expected)[:8],
                                                       np.setdiff1d(expected, got)[:8])
            checked += 1
            if checked == 3:
                break
        ids = machine.allowed_token_ids(budget=need + 3)
        assert machine.advance(int(ids[rng.randrange(ids.size)]))
    assert checked == 3


def test_a_budget_inside_a_counter_makes_as_many_states_at_any_count(smollm2_vocab: Vocabulary) -> None:
    """The completion through ``minItems`` 1,000 or 100,000 is the same few runs: a budget's
    steps make the same number of automaton states (spelling it made one state per byte)."""
    made = []
    for floor in (1_000, 100_000):
        spec = {"name": "ints", "parameters": {"type": "object", "properties": {
            "xs": {"type": "array", "items": {"type": "integer"}, "minItems": floor}}, "required": ["xs"]}}
        grammar = Grammar(ToolSet([spec]), smollm2_vocab, Hermes())
        machine = Machine(grammar, tool_choice="ints", parallel_tool_calls=False)
        rng = random.Random(0)
        for _ in range(30):
            ids = machine.allowed_token_ids(budget=machine.min_tokens() + 2)
            assert machine.advance(int(ids[rng.randrange(ids.size)]))
        pos = machine.advanced.position
        assert isinstance(pos, Tail)
        made.append(grammar.tail(pos.tool, pos.form, pos.chained).dfa.n_states)
    assert made[1] <= made[0] + 8, made
