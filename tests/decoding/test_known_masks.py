"""``Machine.advanced.known``: a mask at hand without computing it (a decoding loop asks it on its own thread
and hands only the misses to a worker). It must never compute, never differ from ``allowed``,
and say ``None`` where a budget would filter the mask."""

from __future__ import annotations

import random

import numpy as np

from tooldec.decoding import Compiler, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .tools_zoo import ZOO


def test_known_is_allowed_once_made_and_none_before(qwen_vocab: Vocabulary) -> None:
    compiler = Compiler(qwen_vocab, Hermes())
    machine = Machine(compiler.compile(ToolSet(ZOO)), tool_choice="required")
    rng = random.Random(0)
    misses = 0
    for _ in range(40):
        cached, listed = len(compiler.masks), len(compiler.openers._open_walks)
        before = machine.advanced.known()
        assert len(compiler.masks) == cached and len(compiler.openers._open_walks) == listed  # nothing was computed
        mask = machine.advanced.allowed()
        if before is None:
            misses += 1
        else:
            assert before is mask
        again = machine.advanced.known()
        assert again is mask and np.array_equal(again.ids, mask.ids)
        ids = mask.ids
        if machine.advanced.calls_completed or not ids.size:
            break
        assert machine.advance(int(ids[rng.randrange(ids.size)]))
    assert misses >= 5


def test_known_is_none_where_a_budget_filters(qwen_vocab: Vocabulary) -> None:
    """With a budget below what the mask's tokens may leave to finish, the budget's filter is not
    at hand: ``known`` says None, and a budget that leaves room gets the mask itself."""
    machine = Machine(Compiler(qwen_vocab, Hermes()).compile(ToolSet(ZOO)), tool_choice="required")
    assert machine.accept_string('<tool_call>\n{"name": "get_weather", "arguments": {"city": "')
    mask = machine.advanced.allowed()
    assert mask.max_after > 2
    assert machine.advanced.known(budget=2) is None
    assert machine.advanced.known(budget=mask.max_after + 1) is mask


def test_known_takes_a_kept_budget_filter(qwen_vocab: Vocabulary) -> None:
    """At a name (whose tokens may lead into other calls: their need is counted exactly), a budget
    that once made the bounds finds them kept: ``known`` gives what ``allowed`` gives, with a
    budget every token clears and with one that filters."""
    machine = Machine(Compiler(qwen_vocab, Hermes()).compile(ToolSet(ZOO)), tool_choice="required")
    assert machine.accept_string('<tool_call>\n{"name": "')
    assert machine.advanced.known(budget=500) is None  # nothing made yet
    roomy = machine.advanced.allowed(budget=500)
    assert machine.advanced.known(budget=500) is roomy
    tight = machine.advanced.allowed(budget=12)
    known = machine.advanced.known(budget=12)
    assert tight.count < roomy.count
    assert known is None or np.array_equal(known.ids, tight.ids)
