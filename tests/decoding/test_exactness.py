"""Invariant 1: the mask is exactly the set of tokens ``advance`` accepts, on real vocabularies.

``brute_force`` tries every vocabulary token at the position; the mask comes from the fast paths
(the name-trie walk over sorted tokens, the vectorised tail automaton, the text-mode trigger
table), so the two are computed independently.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force
from .tools_zoo import ZOO

CHECKS_PER_WALK = 4


@pytest.mark.parametrize("inventory", ["funcqa", "kamel", "bfcl", "tooleval"])
def test_mask_equals_brute_force(any_vocab: Vocabulary, inventories: dict[str, ToolSet], inventory: str) -> None:
    grammar = Grammar(inventories[inventory], any_vocab, Hermes())
    rng = random.Random(f"{any_vocab.name}-{inventory}")
    machine = Machine(grammar, tool_choice="required")
    # positions: the start, then random points of a random call, biased towards its beginning
    steps = sorted(rng.sample(range(1, 40), CHECKS_PER_WALK - 1))
    checked = 0
    for step in range(max(steps) + 1):
        if step == 0 or step in steps:
            expected = brute_force(machine)
            got = machine.allowed_token_ids()
            assert np.array_equal(got, expected), (
                f"{machine.advanced.position}: extra {np.setdiff1d(got, expected)[:10]} missing {np.setdiff1d(expected, got)[:10]}"
            )
            checked += 1
        allowed = machine.allowed_token_ids(budget=60 - step)
        if machine.advanced.calls_completed or not allowed.size:
            break
        assert machine.advance(int(allowed[rng.randrange(allowed.size)]))
    assert checked >= 1


def test_text_mode_with_text_trigger_is_exact(qwen_vocab: Vocabulary, inventories: dict[str, ToolSet]) -> None:
    """Qwen writes ``<tool_call>`` as a normal added token, so the trigger is text: tokens that
    complete it must continue into a valid call, everything else stays allowed."""
    grammar = Grammar(inventories["funcqa"], qwen_vocab, Hermes())
    machine = Machine(grammar)
    for tid in qwen_vocab.longest_match(b"I will call <tool_call"):
        assert machine.advance(tid)
    expected = brute_force(machine)
    assert np.array_equal(machine.allowed_token_ids(), expected)
    allowed, refused = machine.advanced.allowed().pick_lists(qwen_vocab.size)  # what a sampler reads: the shorter list
    assert allowed is None and refused is not None
    assert np.array_equal(refused, np.setdiff1d(np.arange(qwen_vocab.size), expected))
    rejected = [qwen_vocab.token_bytes[i] for i in np.setdiff1d(np.arange(qwen_vocab.size), expected)]
    assert rejected and all(b is not None and b">" in b for b in rejected), rejected[:5]
    allowed = {qwen_vocab.token_bytes[i] for i in expected}
    assert b">" in allowed and b">\n" in allowed and b">," not in allowed


WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "note": {"type": "string", "maxLength": 5},
        },
        "required": ["city"],
    },
}

PREFIXES = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "',  # string content, canonical start
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "S\\u00e3o \\',  # inside an escape
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich', # after a multi-byte character
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "X", "days": 1',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "X", "unit": "c',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "X", "note": "ab',  # bounded string
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "X"}}\n</tool_',
    # inside whitespace runs: the start of one, within it, one byte and no byte from its bound
    '```json\n{\n  "name":  ',  # a head's whitespace run
    '```json\n{\n  "name": "get_weather",\n  "arguments": {',
    '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "X",\n    ',
    '```json\n{"name": "get_weather", "arguments": {"city": "X"' + ' ' * 23,
    '```json\n{"name": "get_weather", "arguments": {"city": "X"' + ' ' * 24,
    '```json\n{"name": "get_weather", "arguments": {"city": "X"}' + '\n' * 7,
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_masks_inside_arguments(any_vocab: Vocabulary, prefix: str) -> None:
    from .test_walks import greedy_ids

    grammar = Grammar(ToolSet([WEATHER]), any_vocab, Hermes())
    machine = Machine(grammar)
    for tid in greedy_ids(any_vocab, prefix):
        assert machine.advance(tid), (prefix, any_vocab.token_bytes[tid])
    expected = brute_force(machine)
    got = machine.allowed_token_ids()
    assert np.array_equal(got, expected), f"extra {np.setdiff1d(got, expected)[:10]} missing {np.setdiff1d(expected, got)[:10]}"
    assert expected.size > 0


@pytest.mark.parametrize("prefix", PREFIXES)
def test_bitmask_rows_hold_the_allowed_ids_on_every_write(any_vocab: Vocabulary, prefix: str) -> None:
    """``fill_bitmask`` writes the whole row: every write (the first computes the mask, later ones
    reuse it) leaves exactly the allowed tokens, whatever the row held before, padding masked."""
    from tooldec.decoding.masks import bitmask_words, unpack_bitmask

    from .test_walks import greedy_ids

    machine = Machine(Grammar(ToolSet([WEATHER]), any_vocab, Hermes()))
    for tid in greedy_ids(any_vocab, prefix):
        assert machine.advance(tid)
    expected = machine.allowed_token_ids()
    words = bitmask_words(any_vocab.size) + 3  # wider than the vocabulary: the padding is masked
    rows = np.random.default_rng(0).integers(-2**31, 2**31, size=(3, words), dtype=np.int64).astype(np.int32)
    for write in range(3):
        machine.fill_bitmask(rows, row=write)
        got = np.flatnonzero(unpack_bitmask(rows[write], words * 32))
        assert np.array_equal(got, expected), f"write {write}: {got.size} allowed instead of {expected.size}"


@pytest.mark.parametrize("parallel", [False, True])
def test_the_turn_is_over_after_the_last_call_allowed(qwen_vocab: Vocabulary, parallel: bool) -> None:
    from .test_walks import greedy_ids

    machine = Machine(Grammar(ToolSet([WEATHER]), qwen_vocab, Hermes()), tool_choice="required",
                      parallel_tool_calls=parallel)
    assert not machine.advanced.turn_over
    for tid in greedy_ids(qwen_vocab, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "X"}}\n</tool_call>'):
        assert not machine.advanced.turn_over
        assert machine.advance(tid)
    assert machine.advanced.calls_completed == 1 and machine.advanced.turn_over is not parallel


def test_exits_met_again_are_one_lookup_and_exact(llama3_vocab: Vocabulary) -> None:
    """Llama-3 has 266 tokens that start with ``>``; the verdicts on them, met at the end of every
    call's closing tag, are kept for the next tool that ends the same way (masking._cross)."""
    compiler = Compiler(llama3_vocab, Hermes())
    grammar = compiler.compile(ToolSet(ZOO))
    masks = []
    for text in ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call',
                 '<tool_call>\n{"name": "search_books", "arguments": {"query": "ab", "tags": ["x"]}}\n</tool_call'):
        machine = Machine(grammar, tool_choice="required")
        for tid in llama3_vocab.longest_match(text.encode()):
            assert machine.advance(tid)
        hits = compiler.crossings.hits
        masks.append(machine.allowed_token_ids())
        assert np.array_equal(masks[-1], brute_force(machine))
    assert compiler.crossings.hits > hits  # the second tool's closing tokens were judged before
    closing = [i for i, b in enumerate(llama3_vocab.token_bytes) if b and b.startswith(b">")]
    assert len(closing) > 100 and np.isin(closing, masks[1]).sum() > 0
