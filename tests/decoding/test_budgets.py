"""Exact closing (DESIGN invariant 4): at every position, names included, a token is allowed only
if the call can still close within the budget left, counted in real tokens."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from benchmarks.paper.walks import check_walk, random_walk
from tooldec.decoding import Grammar, Machine, Mode
from tooldec.decoding.budget import shortest
from tooldec.dialects import Dialect, Hermes, Mistral, Pythonic
from tooldec.errors import BudgetError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .tools_zoo import EVERY_OPENER


def long_tool(name: str, size: int) -> dict[str, Any]:
    """A tool whose shortest call needs about ``size`` bytes: required properties with long names."""
    count = max(1, size // 60)
    props = {f"p{i:03d}_" + "x" * 50: {"type": "integer", "minimum": 0, "maximum": 9} for i in range(count)}
    return {"name": name, "parameters": {"type": "object", "properties": props, "required": list(props)}}


TOOLS = [
    {"name": "ping", "parameters": {"type": "object", "properties": {}}},
    long_tool("mid_tool", 100),
    long_tool("long_tool", 1000),
    long_tool("huge_tool", 5000),
    {"name": "wordy", "parameters": {"type": "object", "properties": {
        "text": {"type": "string", "minLength": 300, "maxLength": 320}}, "required": ["text"]}},
]


@pytest.fixture(scope="module")
def grammars(any_vocab: Vocabulary) -> Grammar:
    return Grammar(ToolSet(TOOLS), any_vocab, Hermes())


@pytest.mark.parametrize("tool", [t["name"] for t in TOOLS])
def test_the_minimum_budget_closes_and_one_less_is_refused(grammars: Grammar, tool: str) -> None:
    grammar = grammars
    if tool in ("long_tool", "huge_tool") and grammar.vocab.size > 100_000:
        pytest.skip("the long tools run on the two smaller vocabularies (the large ones add time, not cases)")
    probe = Machine(grammar, tool_choice=tool, parallel_tool_calls=False)
    need = probe.min_tokens()
    with pytest.raises(BudgetError, match=f"needs {need} tokens"):
        probe.check_budget(need - 1)
    probe.check_budget(need)
    rng = random.Random(f"{grammar.vocab.name}-{tool}")
    for extra in (0, 2) if tool in ("long_tool", "huge_tool") else (0, 0, 1, 3):  # long walks cost minutes
        machine = Machine(grammar, tool_choice=tool, parallel_tool_calls=False)
        result = random_walk(machine, rng, need + extra)
        assert result.closed, (need, extra, result.text[-80:])
        assert len(result.tokens) <= need + extra
        assert check_walk(result, Hermes(), ToolSet(TOOLS)) is None


def test_required_call_uses_the_cheapest_tool_at_the_minimum(grammars: Grammar) -> None:
    machine = Machine(grammars, tool_choice="required", parallel_tool_calls=False)
    need = machine.min_tokens()
    result = random_walk(machine, random.Random(1), need)
    assert result.closed and Hermes().parse_calls(result.text)[0].name == "ping"


def test_auto_mode_opens_no_call_it_cannot_close(grammars: Grammar) -> None:
    """The cheapest call, written token by token in auto mode: the token that opens it is allowed
    with a budget of exactly what the call needs, and refused with one token less."""
    grammar = grammars
    required = Machine(grammar, tool_choice="required")
    need = required.min_tokens()
    _, text = shortest(grammar, required.advanced.position, True)
    tokens = grammar.vocab.longest_match(text)
    assert len(tokens) == need
    for budget, can_open in ((need, True), (need - 1, False)):
        machine = Machine(grammar)
        for step, tid in enumerate(tokens):
            allowed = tid in set(machine.allowed_token_ids(budget=budget - step).tolist())
            before = machine.advanced.mode
            assert machine.advance(tid)
            if machine.advanced.mode is Mode.TOOL and before is Mode.TEXT:  # this token opens the call
                assert allowed is can_open, (budget, need, step)
                break
            assert allowed, (budget, step)
        else:
            raise AssertionError("the call never opened")


def test_names_are_filtered_by_what_their_tools_need(grammars: Grammar) -> None:
    """At the name, with a budget that fits ``mid_tool`` but not ``long_tool``, only the first is spelled."""
    grammar = grammars
    needs = {n: Machine(grammar, tool_choice=n, parallel_tool_calls=False).min_tokens() for n in ("mid_tool", "long_tool")}
    machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
    budget = needs["mid_tool"] + 2
    rng = random.Random(5)
    names = set()
    for _ in range(6):
        m = machine.fork()
        result = random_walk(m, rng, budget)
        assert result.closed
        names.add(Hermes().parse_calls(result.text)[0].name)
    assert "long_tool" not in names and "huge_tool" not in names
    assert needs["long_tool"] > budget


def test_a_budget_is_never_left_without_a_token(grammars: Grammar) -> None:
    rng = random.Random(9)
    for _ in range(5):
        machine = Machine(grammars, tool_choice="required")
        budget = machine.min_tokens() + rng.randint(0, 30)
        for step in range(budget):
            ids = machine.allowed_token_ids(budget=budget - step)
            assert ids.size, machine.advanced.position
            assert machine.advance(int(ids[rng.randrange(ids.size)]))
            if machine.advanced.calls_completed:
                break
        assert machine.advanced.calls_completed == 1
        assert np.all(machine.allowed_token_ids().size > 0)


def test_a_budget_below_the_need_is_refused_with_the_need_not_given_an_empty_mask(grammars: Grammar) -> None:
    """Every way of asking for a mask raises ``BudgetError`` naming the need when the budget is
    below it, at the opener and inside a call (``known`` and ``known_lists`` may instead say
    the answer is not at hand); at the need, the mask is not empty."""
    rng = random.Random(3)
    machine = Machine(grammars, tool_choice="mid_tool", parallel_tool_calls=False)
    width = grammars.vocab.size
    for step in range(16):
        need = machine.min_tokens()
        bitmask = np.full((1, (width + 31) // 32), 7, dtype=np.int32)
        for ask in (lambda b: machine.advanced.known(b), lambda b: machine.advanced.known_lists(b, width),
                    lambda b: machine.allowed_token_ids(budget=b), lambda b: machine.advanced.allowed(b),
                    lambda b: machine.advanced.lists(b, width),
                    lambda b, into=bitmask: machine.fill_bitmask(into, 0, b),
                    lambda b: machine.advanced.known(b), lambda b: machine.advanced.known_lists(b, width)):
            for budget in (need - 1, 1):
                try:
                    answer = ask(budget)
                except BudgetError as error:
                    assert f"needs {need} tokens but the budget is {budget}" in str(error)
                else:
                    assert answer is None, (step, budget, answer)  # only known*: not at hand
        assert (bitmask == 7).all(), "a refused fill leaves the bitmask as it was"
        ids = machine.allowed_token_ids(budget=need)
        assert ids.size
        assert machine.advance(int(ids[rng.randrange(ids.size)])), step


LIST_TOOLS = [
    {"name": "add", "description": "Add numbers.", "parameters": {"type": "object", "properties": {
        "numbers": {"type": "array", "items": {"type": "number"}, "maxItems": 8}}, "required": ["numbers"]}},
    {"name": "ping", "parameters": {"type": "object", "properties": {}}},
]


@pytest.mark.parametrize("dialect", [Pythonic(), Mistral()], ids=["pythonic", "mistral"])
def test_a_list_separator_is_counted_with_the_next_call(dialect: Dialect, any_vocab: Vocabulary) -> None:
    """In a list of calls, ``, `` (``, {"name": "``) is where another call begins, not an end: a
    token that writes it must leave room for a whole call more (a walk at the least budget once
    reached an empty mask after ``]),`` with one token left)."""
    grammar = Grammar(ToolSet(LIST_TOOLS), any_vocab, dialect)
    rng = random.Random(0)
    for walk in range(12):
        machine = Machine(grammar, tool_choice="required")
        budget = machine.min_tokens() + walk % 4
        for step in range(budget):
            ids = machine.allowed_token_ids(budget=budget - step)
            assert ids.size, (walk, step, machine.advanced.text, machine.advanced.position)
            # the walk leans on separators: a token with a comma whenever one is allowed
            commas = [int(t) for t in ids if b"," in (any_vocab.token_bytes[int(t)] or b"")]
            assert machine.advance(rng.choice(commas) if commas and walk % 2 else int(ids[rng.randrange(ids.size)]))
            if machine.advanced.is_accepting():
                break
        assert machine.advanced.calls_completed >= 1 and machine.advanced.is_accepting(), (walk, machine.advanced.text)


WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "code": {"type": "string", "minLength": 6}, "days": {"type": "integer"},
    "note": {"type": "string", "minLength": 90}}, "required": ["city", "code", "days", "note"]}}
ORACLE_PREFIXES = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "',  # string content
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris, Fr',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "code": "ab',  # characters owed
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "code": "abcdefgh", "days": 1',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "code": "abcdefgh", "days": 1, "note": "a',
    '<tool_call>\n{"name": "get_w',
    '',  # the openers (required mode): a token that stays inside needs what its end state needs
    '```\n{\n  "type": "function",\n  "function": {\n  ',  # a pretty-printed opener, in its whitespace
    # inside the arguments' whitespace runs (a run's counts share one table: LazyDFA.blank_spot)
    '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Oslo",\n    ',
    '```json\n{"name": "get_weather", "arguments": {"city": "Oslo", "code": "abcdefgh", "days": 1' + ' ' * 23,
    # the heads after an opener (``\n{"name": "``, ``: "``): a token that stays inside needs what its end needs
    '```json\n{\n  "name"',
    '```json\n{\n  "name": ',
]


@pytest.mark.parametrize("prefix", ORACLE_PREFIXES)
def test_a_budgeted_mask_is_what_trying_every_token_allows(smollm2_vocab: Vocabulary, prefix: str) -> None:
    """The oracle: every token ``advance`` takes, kept iff the cursor after it needs at most the
    budget left. String content takes a shortcut (the needs of a few keys and remainders, kept
    between steps, with the inside tokens as whole packed bits): it must agree, budget by budget,
    from one that allows every token to one that allows almost none."""
    grammar = Grammar(ToolSet([WEATHER, {"name": "get_wind", "parameters": {"type": "object", "properties": {}}}]),
                      smollm2_vocab, EVERY_OPENER)
    machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
    for tid in smollm2_vocab.longest_match(prefix.encode()):
        assert machine.advance(tid)
    needs: dict[int, int] = {}
    for tid in machine.allowed_token_ids().tolist():
        assert machine.advance(tid)
        needs[tid] = machine.min_tokens()
        machine.rollback()
    seen = set()
    for budget in sorted({n + 1 for n in needs.values()} | {200}, reverse=True):  # every cut, and none
        want = np.array(sorted(t for t, n in needs.items() if n <= budget - 1), dtype=np.int32)
        got = machine.allowed_token_ids(budget=budget)
        assert np.array_equal(got, want), (budget, np.setdiff1d(got, want)[:8], np.setdiff1d(want, got)[:8])
        bitmask = np.zeros((1, (smollm2_vocab.size + 31) // 32), dtype=np.int32)
        machine.fill_bitmask(bitmask, 0, budget)
        assert np.array_equal(np.flatnonzero(np.unpackbits(bitmask.view(np.uint8), bitorder="little")), want)
        seen.add(got.size)
    assert len(seen) >= 2  # the budgets cut the mask


def test_a_compiler_prepares_the_longest_match_tables(smollm2_vocab: Vocabulary) -> None:
    """Token budgets count a completion's longest-match cut; its tables are built with the
    vocabulary's other tables when a compiler is made (at load), not by a first budgeted request."""
    import dataclasses

    from tooldec.decoding import Compiler

    fresh = dataclasses.replace(smollm2_vocab)  # the same tokens, none of the lazily built tables
    assert "_sorted_tokens" not in vars(fresh)
    Compiler(fresh, Hermes())
    assert {"_sorted_tokens", "_first_id_of_bytes", "_longest_token"} <= vars(fresh).keys()
    assert fresh.longest_match(b'{"name": "ping"}') == smollm2_vocab.longest_match(b'{"name": "ping"}')


TEXT_PREFIXES = [
    ("auto", "Let me look that up. <tool_call"),  # inside the tag: the tokens that finish it open a call
    ("required", '<tool_call>\n{"name": "get_wind", "arguments": {}}\n</tool_call>\n'),  # after a call, another may open
    ("required", '<tool_call>\n{"name": "get_wind", "arguments": {}}\n</tool_call>\n<tool_call'),
]


@pytest.mark.parametrize("vocab_name", ["smollm2", "qwen"])
@pytest.mark.parametrize("choice, prefix", TEXT_PREFIXES)
def test_a_budgeted_text_mask_is_what_trying_every_token_allows(vocab_name: str, choice: str, prefix: str,
                                                                request: pytest.FixtureRequest) -> None:
    """The oracle in text: every token ``advance`` takes, kept iff the cursor after it needs at most
    the budget left. Only the tokens that open a call leave one to finish, so a budget reads their
    needs alone and takes out of the text mask exactly those that do not fit, from a budget that
    allows every token to one that allows no opening at all; a cached answer (``known``) agrees."""
    vocab: Vocabulary = request.getfixturevalue(f"{vocab_name}_vocab")
    grammar = Grammar(ToolSet([WEATHER, {"name": "get_wind", "parameters": {"type": "object", "properties": {}}}]),
                      vocab, Hermes())
    machine = Machine(grammar, tool_choice=choice)
    for tid in vocab.longest_match(prefix.encode()):
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TEXT
    needs: dict[int, int] = {}
    for tid in machine.allowed_token_ids().tolist():
        assert machine.advance(tid)
        needs[tid] = machine.min_tokens()
        machine.rollback()
    if not any(needs.values()):  # no token opens a call here (a tag spelled in several of this vocabulary's tokens)
        assert vocab_name == "smollm2" and prefix.endswith("\n"), prefix
        return
    seen = set()
    for budget in sorted({n + 1 for n in needs.values()} | {1, 200}, reverse=True):  # every cut, and none
        want = np.array(sorted(t for t, n in needs.items() if n <= budget - 1), dtype=np.int32)
        got = machine.allowed_token_ids(budget=budget)
        assert np.array_equal(got, want), (budget, np.setdiff1d(got, want)[:8], np.setdiff1d(want, got)[:8])
        known = machine.advanced.known(budget)
        assert known is not None and np.array_equal(known.ids, want), budget
        seen.add(got.size)
    assert len(seen) >= 2  # the budgets cut the mask


BYTES = Vocabulary.from_tokens([bytes([b]) for b in range(256)], special={256: "</s>"}, eos_ids=[256], name="bytes")
"""One token per byte: a need is exactly its completion's bytes, so a byte bound one too low shows."""


@pytest.mark.parametrize("vocab_name", ["smollm2", "bytes"])
def test_a_token_taken_without_its_mask_lands_where_advance_takes_it(vocab_name: str,
                                                                     request: pytest.FixtureRequest) -> None:
    """``advance_within`` moves the cursor as ``advance`` does (position, calls closed, text), at
    every position of text, a whole call with counted strings, its close and the text after it:
    its shortcuts for free text and arguments must stop where a walk meets an exit."""
    vocab: Vocabulary = BYTES if vocab_name == "bytes" else request.getfixturevalue("smollm2_vocab")
    grammar = Grammar(ToolSet([WEATHER]), vocab, Hermes())
    text = ('Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "code": "abcdefgh", '
            '"days": 1, "note": "' + "n" * 90 + '"}}\n</tool_call>\nDone.')
    machine = Machine(grammar, tool_choice="auto")
    rng = random.Random(7)
    compared = closed = 0
    for tid in vocab.longest_match(text.encode()):
        allowed = machine.allowed_token_ids().tolist()
        for other in {tid, *rng.sample(allowed, min(12, len(allowed)))}:
            twin = machine.fork()
            assert twin.advance(other)
            assert machine.advanced.advance_within(other, 400), vocab.token_bytes[other]
            moved, forked = machine.advanced, twin.advanced
            assert (moved.position, moved.calls_completed, moved.call_just_closed, moved.text) == (
                forked.position, forked.calls_completed, forked.call_just_closed, forked.text), vocab.token_bytes[other]
            closed += machine.advanced.call_just_closed
            compared += 1
            machine.rollback()
        assert machine.advance(tid)
    assert machine.advanced.calls_completed == 1 and closed and compared > 200


@pytest.mark.parametrize("vocab_name", ["smollm2", "bytes"])
@pytest.mark.parametrize("prefix", [*ORACLE_PREFIXES, "Let me look that up. <tool_call"])
def test_a_token_taken_without_its_mask_is_one_the_budgeted_mask_allows(vocab_name: str, prefix: str,
                                                                        request: pytest.FixtureRequest) -> None:
    """``advance_within`` (a loop trying the model's own pick first) agrees with the budgeted mask
    token by token, at every cut of the budget, with and without the position's record: it takes
    exactly the tokens the mask allows, and a token it refuses leaves the cursor where it was."""
    vocab: Vocabulary = BYTES if vocab_name == "bytes" else request.getfixturevalue("smollm2_vocab")
    grammar = Grammar(ToolSet([WEATHER, {"name": "get_wind", "parameters": {"type": "object", "properties": {}}}]),
                      vocab, EVERY_OPENER)
    machine = Machine(grammar, tool_choice="auto" if prefix.startswith("Let") else "required", parallel_tool_calls=False)
    for tid in vocab.longest_match(prefix.encode()):
        assert machine.advance(tid)
    unbudgeted = machine.allowed_token_ids().tolist()
    needs: dict[int, int] = {}
    for tid in unbudgeted[:: max(1, len(unbudgeted) // 400)]:  # a spread of the allowed tokens
        assert machine.advance(tid)
        needs[tid] = machine.min_tokens()
        machine.rollback()
    rng = random.Random(prefix)
    tried = sorted(needs) + rng.sample(range(vocab.size), min(200, vocab.size)) + list(vocab.eos_ids)
    before = (machine.advanced.text, machine.advanced.calls_completed)
    cuts = 0
    for budget in sorted({n + 1 for n in needs.values()} | {1, 200}, reverse=True):
        below = budget < machine.min_tokens()  # then every mask is refused (BudgetError), and no token fits
        if below:
            with pytest.raises(BudgetError):
                machine.allowed_token_ids(budget=budget)
        allowed = set() if below else set(machine.allowed_token_ids(budget=budget).tolist())
        for k, tid in enumerate(tried):
            if k % 2 and not below:  # half the time from the position's record (a loop that listed its mask first)
                machine.advanced.lists(budget, vocab.size)
            took = machine.advanced.advance_within(tid, budget)
            assert took == (tid in allowed), (budget, tid, vocab.token_bytes[tid])
            if took:
                machine.rollback()
            assert (machine.advanced.text, machine.advanced.calls_completed) == before
        cuts += bool(allowed) and len(allowed) < len(unbudgeted)
    assert cuts or prefix.startswith("Let"), "some budget cuts the mask"
