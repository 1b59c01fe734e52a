"""A free string in a call format with stop texts (Hermes keeps ``</tool_call>`` out of every
string) is a copy of one quoted-string template (``NFA.quoted_string``); its content states are
masked from a per-vocabulary table of the template (``LazyDFA.string_spot``, ``piece_table``)
instead of a walk of the whole vocabulary per new tool. The masks must stay exactly what trying
every token allows, in the states the stop text and escapes make too, with and without a budget.
"""

from __future__ import annotations

import numpy as np
import pytest

from tooldec.decoding import Grammar, Machine, Tail
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force


def note_tool(name: str) -> dict[str, object]:
    return {"name": name, "parameters": {"type": "object", "properties": {
        "note": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        "required": ["note", "tags"]}}


OPENING = '<tool_call>\n{"name": "keep", "arguments": {"note": "'
INSIDE = ["", "ab", "a </tool_c", "a </tool_call", "x\\", "x\\u00", "caf\u00e9 ", "<", "done\", \"tags\": [\"t"]


def machine_at(vocab: Vocabulary, grammar: Grammar, text: str) -> Machine:
    machine = Machine(grammar, tool_choice="required")
    for tid in vocab.longest_match(text.encode()):
        assert machine.advance(tid), text
    return machine


def is_piece_spot(machine: Machine) -> bool:
    pos = machine.advanced.position
    assert isinstance(pos, Tail)
    spot = machine.advanced.grammar.tail(pos.tool, pos.form, pos.chained).dfa.string_spot(pos.state)
    return spot is not None and spot.piece is not None


@pytest.mark.parametrize("inside", INSIDE)
@pytest.mark.parametrize("vocab_name", ["qwen", "smollm2"])
def test_a_template_string_mask_is_what_trying_every_token_allows(request: pytest.FixtureRequest, vocab_name: str,
                                                                   inside: str) -> None:
    vocab: Vocabulary = request.getfixturevalue(f"{vocab_name}_vocab")
    grammar = Grammar(ToolSet([note_tool("keep"), note_tool("drop")]), vocab, Hermes())
    machine = machine_at(vocab, grammar, OPENING + inside)
    assert is_piece_spot(machine)
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))
    needs: dict[int, int] = {}
    for tid in machine.allowed_token_ids().tolist():
        assert machine.advance(tid)
        needs[tid] = machine.min_tokens()
        machine.rollback()
    for budget in sorted({n + 1 for n in needs.values()})[:4]:  # the tightest cuts
        want = np.array(sorted(t for t, n in needs.items() if n <= budget - 1), dtype=np.int32)
        assert np.array_equal(machine.allowed_token_ids(budget=budget), want), budget


def test_a_new_tool_list_reuses_the_template_table(qwen_vocab: Vocabulary) -> None:
    """The table is per vocabulary: a second tool list's string content walks nothing new."""
    first = machine_at(qwen_vocab, Grammar(ToolSet([note_tool("keep")]), qwen_vocab, Hermes()), OPENING + "ab")
    first.allowed_token_ids()
    pos = first.advanced.position
    assert isinstance(pos, Tail)
    spot = first.advanced.grammar.tail(pos.tool, pos.form, pos.chained).dfa.string_spot(pos.state)
    assert spot is not None and spot.piece is not None
    table, content = first.advanced.grammar.compiler.string_place(Hermes().style, spot)
    walked = table.nbytes
    second = machine_at(qwen_vocab, Grammar(ToolSet([note_tool("keep"), note_tool("other")]), qwen_vocab, Hermes()),
                        OPENING + "cd")
    assert is_piece_spot(second)
    assert np.array_equal(second.allowed_token_ids(), first.allowed_token_ids())
    assert table.nbytes == walked and walked > 0
