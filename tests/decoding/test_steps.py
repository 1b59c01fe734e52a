"""A loop's kept records of positions (``Machine.advanced.known_lists``, ``lists`` and the ``advance`` after
them): a position seen before answers from its record, and must answer exactly what a fresh
compiler computes, for every machine setting that shares the snapshot."""

from __future__ import annotations

import gc
import random
import weakref

import numpy as np
import pytest

from tooldec.decoding import Compiler, Machine
from tooldec.decoding.machine import _Step
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .tools_zoo import ZOO

TWO_CALLS = ('Let me check. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>\n'
             '<tool_call>\n{"name": "search_books", "arguments": {"query": "fjords", "tags": ["travel"]}}\n</tool_call>\nDone.')


def same(a: tuple[np.ndarray | None, np.ndarray | None], b: tuple[np.ndarray | None, np.ndarray | None]) -> bool:
    return all((x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y)) for x, y in zip(a, b))


def loop_lists(machine: Machine, budget: int, width: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """What llama.cpp's loop asks: the lists at hand, else made."""
    known = machine.advanced.known_lists(budget, width)
    return known if known is not None else machine.advanced.lists(budget, width)


def random_answer(vocab: Vocabulary, tools: ToolSet, seed: int, steps: int) -> list[int]:
    """Tokens a sampler could take under ``steps``' budget, from a machine of its own."""
    machine = Machine(Compiler(vocab, Hermes()).compile(tools), tool_choice="required")
    rng = random.Random(seed)
    ids: list[int] = []
    for i in range(steps):
        allowed = machine.advanced.allowed(steps - i).ids
        if not allowed.size or machine.is_done():
            break
        ids.append(int(allowed[rng.randrange(allowed.size)]))
        assert machine.advance(ids[-1])
        if machine.advanced.calls_completed:
            break
    return ids


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_records_answer_what_a_fresh_compiler_computes(qwen_vocab: Vocabulary, seed: int) -> None:
    """The same answer three times on one snapshot (cold, then from the records) against a fresh
    compiler: the same lists and positions at every token, the budget's cut included (the last
    tokens run under budgets that filter), and after the first pass every mask is at hand."""
    tools, width, steps = ToolSet(ZOO), qwen_vocab.size + 7, 40
    answer = random_answer(qwen_vocab, tools, seed, steps)
    assert len(answer) > 10
    compiler = Compiler(qwen_vocab, Hermes())
    grammar = compiler.compile(tools)
    for round_ in range(3):
        machine = Machine(grammar, tool_choice="required")
        plain = Machine(grammar, tool_choice="required")  # no records: state numbers are per compiler
        oracle = Machine(Compiler(qwen_vocab, Hermes()).compile(tools), tool_choice="required")
        for i, token in enumerate(answer):
            expected = oracle.advanced.allowed(steps - i).pick_lists(width)
            known = machine.advanced.known_lists(steps - i, width)
            if round_:
                assert known is not None or machine.advanced.known(steps - i) is None  # only a budget's cut is not at hand
            got = known if known is not None else machine.advanced.lists(steps - i, width)
            assert same(got, expected), (round_, i)
            assert machine.advance(token) and plain.advance(token) and oracle.advance(token)
            assert machine.advanced.position == plain.advanced.position and machine.advanced.text == oracle.advanced.text
            assert machine.advanced.calls_completed == oracle.advanced.calls_completed
    records = [value for value in compiler.masks.values() if isinstance(value, _Step)]
    assert len(records) >= len(answer) // 2 and any(record.token >= 0 and record.next is not None for record in records)


def test_machines_with_other_call_limits_share_a_snapshot(qwen_vocab: Vocabulary) -> None:
    """Machines of one snapshot whose call limits differ reach the same positions with other flags
    (after the first call, one may chain another and one may not): each follows only records of
    its own flags, and both agree with fresh compilers, through two calls and the text after."""
    tools, width = ToolSet(ZOO), qwen_vocab.size
    compiler = Compiler(qwen_vocab, Hermes())
    grammar = compiler.compile(tools)
    answer = qwen_vocab.longest_match(TWO_CALLS.encode())
    for limit in (None, 2, None, 2, 3):
        machine, plain = Machine(grammar, max_calls=limit), Machine(grammar, max_calls=limit)
        oracle = Machine(Compiler(qwen_vocab, Hermes()).compile(tools), max_calls=limit)
        for i, token in enumerate(answer):
            assert same(loop_lists(machine, 200 - i, width), oracle.advanced.allowed(200 - i).pick_lists(width)), (limit, i)
            assert machine.advance(token) and plain.advance(token) and oracle.advance(token)
            assert machine.advanced.position == plain.advanced.position, (limit, i)
        assert machine.advanced.calls_completed == 2
    assert same(loop_lists(Machine(grammar, max_calls=2), 200, width), loop_lists(Machine(grammar), 200, width))


def test_rollback_and_fork_leave_no_record_behind(qwen_vocab: Vocabulary) -> None:
    """A record belongs to a position: after a rollback, and in a fork, the lists and steps are
    those of the position the machine is at."""
    tools, width = ToolSet(ZOO), qwen_vocab.size
    grammar = Compiler(qwen_vocab, Hermes()).compile(tools)
    answer = qwen_vocab.longest_match(TWO_CALLS.encode())[:30]
    for _ in range(2):  # the second machine walks on records
        machine = Machine(grammar)
        for token in answer[:20]:
            loop_lists(machine, 100, width)
            assert machine.advance(token)
    twin = machine.fork()
    machine.rollback(5)
    oracle, plain = Machine(Compiler(qwen_vocab, Hermes()).compile(tools)), Machine(grammar)
    for i, token in enumerate(answer):
        if i >= 15:
            assert same(loop_lists(machine, 100, width), oracle.advanced.allowed(100).pick_lists(width)), i
            assert machine.advance(token)
        if i >= 20:
            assert same(loop_lists(twin, 100, width), oracle.advanced.allowed(100).pick_lists(width)), i
            assert twin.advance(token)
        assert oracle.advance(token) and plain.advance(token)
        assert i < 15 or machine.advanced.position == plain.advanced.position
        assert i < 20 or twin.advanced.position == plain.advanced.position


def test_records_stay_within_the_cache_bound(qwen_vocab: Vocabulary) -> None:
    """Records live in the compiler's bounded mask cache: with a small bound they are evicted like
    masks and freed, and the cache stays within its bound at every token."""
    compiler = Compiler(qwen_vocab, Hermes(), mask_cache_bytes=256 * 1024)
    grammar = compiler.compile(ToolSet(ZOO))
    answer = qwen_vocab.longest_match(TWO_CALLS.encode())
    seen: list[weakref.ref[_Step]] = []
    for _ in range(2):
        machine = Machine(grammar)
        for i, token in enumerate(answer):
            loop_lists(machine, 200 - i, qwen_vocab.size)
            if machine._step is not None:
                seen.append(weakref.ref(machine._step))
            assert machine.advance(token)
            assert compiler.masks.nbytes <= compiler.masks.max_bytes
    del machine
    gc.collect()
    kept = {id(value) for value in compiler.masks.values() if isinstance(value, _Step)}
    alive = [ref() for ref in seen if ref() is not None]
    assert len(kept) < len(answer) and alive and len(alive) < len(seen)  # some were evicted, and freed
    assert {id(step) for step in alive} <= kept


def test_a_kept_record_does_not_keep_the_records_after_it(qwen_vocab: Vocabulary) -> None:
    """Links to the next records are weak: once the cache has evicted every record but the
    first, the first one alone is alive (a strong link would keep the whole chain after it)."""
    compiler = Compiler(qwen_vocab, Hermes())
    grammar = compiler.compile(ToolSet(ZOO))
    answer = qwen_vocab.longest_match(TWO_CALLS.encode())
    machine = Machine(grammar)
    seen: list[weakref.ref[_Step]] = []
    for i, token in enumerate(answer):
        loop_lists(machine, 200 - i, qwen_vocab.size)
        if machine._step is not None:
            seen.append(weakref.ref(machine._step))
        assert machine.advance(token)
    del machine
    first = seen[0]()
    assert first is not None and first.next is not None and len(seen) > 20
    again = Machine(grammar)
    assert again.advanced.known_lists(200, qwen_vocab.size) is first.lists  # the first record, now the most recently used
    compiler.masks.max_bytes = first.nbytes + 64
    compiler.masks.put(("a probe that evicts the rest",), 0)
    del again
    gc.collect()
    assert [ref() for ref in seen if ref() is not None and ref() is not first] == []
