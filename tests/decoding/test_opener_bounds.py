"""An opener's or head's budget bound, from a plan shared by every tool list: the same number as
bounding each token by walking it (the way it was found before plans), whichever list made the
plan."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.dialects.helpers import vocabulary_for
from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.decoding.budget import _after, _by_end, _most_upper, need
from tooldec.decoding.masking import FAR
from tooldec.decoding.opener_bounds import upper, upper_plan
from tooldec.decoding.positions import Head, Open, Position, Tail
from tooldec.dialects import DIALECTS, Dialect
from tooldec.errors import ToolDecError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .tools_zoo import EVERY_OPENER, ZOO

SHORT = [{"name": "go", "parameters": {"type": "object", "properties": {}}}]
"""A list whose name bound is small: its bounds differ from the zoo's, so a plan made for one and
read for the other is checked."""


def walked(grammar: Grammar, pos: Open | Head, start_ok: bool, follow_ok: bool) -> int:
    """The reference: every allowed token walked and bounded one by one."""
    ids = grammar.mask(pos, start_ok, follow_ok).ids

    def after_upper(after: Position) -> int:
        return need(grammar, after, follow_ok) if isinstance(after, Tail) else upper(grammar, after, follow_ok)

    found = _by_end(grammar, pos, ids, lambda inside: upper(grammar, inside, follow_ok), after_upper, start_ok, follow_ok)
    return min(int(found.max()), FAR) if found.size else 0


def opener_positions(grammar: Grammar, start: Position, start_ok: bool, follow_ok: bool, limit: int) -> list[Open | Head]:
    """The opener and head positions reached from ``start`` by allowed tokens (breadth first)."""
    seen: list[Open | Head] = []
    queue = [start]
    while queue and len(seen) < limit:
        pos = queue.pop(0)
        if not isinstance(pos, (Open, Head)) or pos in seen:
            continue
        seen.append(pos)
        for tid in grammar.mask(pos, start_ok, follow_ok).ids.tolist():
            after = _after(grammar, pos, tid, start_ok, follow_ok)
            if after is not None:
                queue.append(after)
    return seen


def accepted(dialect: Dialect, tools: list[dict[str, Any]]) -> ToolSet:
    kept = []
    for tool in ToolSet(tools):
        try:
            dialect.check_tool(tool)
        except ToolDecError:
            continue
        kept.append(tool)
    return ToolSet(kept)


@pytest.mark.parametrize("dialect_name", [*DIALECTS, "every-opener"])
def test_a_planned_bound_is_the_walked_bound(smollm2_vocab: Vocabulary, qwen_vocab: Vocabulary, mistral_vocab: Vocabulary,
                                             dialect_name: str) -> None:
    dialect = EVERY_OPENER if dialect_name == "every-opener" else DIALECTS[dialect_name]()
    for vocab in (smollm2_vocab, qwen_vocab, mistral_vocab):  # Mistral v3: [TOOL_CALLS] opens as a special
        compiler = Compiler(vocabulary_for(dialect, vocab), dialect)
        checked = 0
        for tools in (SHORT, ZOO, SHORT):  # the second list reads plans the first made, and so on
            grammar = compiler.compile(accepted(dialect, tools))
            for choice in ("required", grammar.name_index.below(b"")[0]):
                machine = Machine(grammar, tool_choice=choice)
                flags = machine._flags()
                for pos in opener_positions(grammar, machine._pos, *flags, limit=40):
                    assert _most_upper(grammar, pos, grammar.mask(pos, *flags), *flags) == walked(grammar, pos, *flags), (
                        vocab.name, tools[0]["name"], choice, pos)
                    checked += 1
        if not compiler.dialect.openers():
            continue
        assert checked, (dialect_name, vocab.name)


def test_a_plan_is_made_once_for_every_tool_list(qwen_vocab: Vocabulary) -> None:
    compiler = Compiler(qwen_vocab, EVERY_OPENER)
    plans = []
    bounds = []
    for tools in (SHORT, ZOO):
        grammar = compiler.compile(ToolSet(tools))
        machine = Machine(grammar, tool_choice="required")
        pos = machine._pos
        assert isinstance(pos, Open)
        mask = grammar.mask(pos, *machine._flags())
        plans.append(upper_plan(grammar, pos, mask, *machine._flags()))
        bounds.append(_most_upper(grammar, pos, mask, *machine._flags()))
    assert plans[0] is plans[1]
    assert plans[0].slots, "the opener's tokens are planned"
    assert bounds[0] < bounds[1] < FAR, bounds  # the zoo's shortest call is longer than go()'s
    assert np.all(np.fromiter(plans[0].slots, dtype=np.int64) >= 0)
