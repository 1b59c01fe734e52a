"""Dialects that write results inline (ToolkenGPT, ReAct): a call's last byte ends its token.

On FuncQA multi-hop (``python -m benchmarks.paper funcqa --model qwen15``), Qwen2.5-Coder-1.5B closed ``<multiply>(67,29`` with the single
token ``=<``. Generation stops as a call closes and the runtime writes the result right there,
so the text became ``<multiply>(67,29)=<1943/60)=...``: the ``<`` opened a call that never
closed (counted ``unparseable``), and tokens such as ``="`` or ``=-`` put a stray byte before
the result (``="56"``, ``=--4.0787``). The mask must end every token at the call's end.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.paper.experiments.funcqa import funcqa_toolset
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Dialect, ReAct, ToolkenGPT
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _cases() -> list[tuple[str, Dialect, ToolSet, bytes, bytes]]:
    """(label, dialect, tools, text up to just before the call's end, the call's last bytes)."""
    funcqa = funcqa_toolset()
    return [
        ("toolkengpt", ToolkenGPT(funcqa), funcqa, b"67*29/60=<multiply>(67,29", b")="),
        ("toolkengpt-eq", ToolkenGPT(funcqa), funcqa, b"67*29/60=<multiply>(67,29)", b")="),
        ("react", ReAct(), ToolSet([add]), b'Thought: add them.\nAction: add\nAction Input: {"a": 1, "b": 2}', b"}\n"),
    ]


@pytest.mark.parametrize("case", range(len(_cases())), ids=[c[0] for c in _cases()])
def test_no_token_runs_past_the_end_of_an_inline_call(any_vocab: Vocabulary, case: int) -> None:
    _, dialect, tools, before, end = _cases()[case]
    machine = Machine(Grammar(tools, any_vocab, dialect), max_calls=8)
    assert machine.accept_string(before)
    allowed = machine.allowed_token_ids()
    assert np.array_equal(allowed, brute_force(machine))  # invariant 1 holds with the rule
    closing = []
    for tid in allowed.tolist():
        assert machine.advance(tid)
        if machine.advanced.call_just_closed:
            closing.append(tid)
            assert machine.advanced.text.endswith(end), f"{any_vocab.token_bytes[tid]!r} runs past the call's end"
        machine.rollback()
    assert closing, "the call can still close"
    last = machine.allowed_token_ids(budget=1)  # one token left: only those that close the call
    assert set(last.tolist()) <= set(closing)
    assert last.size or not before.endswith(end[:-1])  # one byte to go: a token closes the call


def test_the_tokens_qwen_chose_are_refused(qwen_vocab: Vocabulary) -> None:
    """The tokens of the issue's rows (``=<``, ``="<``, ``="``, ``=-``, ``=$``) are in Qwen's
    vocabulary and allowed where the call is still open, but not where they would close it."""
    tools = funcqa_toolset()
    grammar = Grammar(tools, qwen_vocab, ToolkenGPT(tools))
    ids = {qwen_vocab.token_bytes[i]: i for i in range(qwen_vocab.size) if qwen_vocab.token_bytes[i]}
    machine = Machine(grammar, max_calls=8)
    assert machine.accept_string(b"67*29/60=<multiply>(67,29)")
    allowed = set(machine.allowed_token_ids().tolist())
    assert ids[b"="] in allowed
    for token in (b"=<", b'="<', b'="', b"=-", b"=$"):
        assert ids[token] not in allowed, token
    text = Machine(grammar, max_calls=8)
    assert text.advance(ids[b"=<"])  # in text, ``=<`` still opens a call: a name must follow
    assert text.advanced.mode.value == "tool" and not text.advanced.is_accepting()


def test_the_same_token_stays_allowed_where_no_result_follows(qwen_vocab: Vocabulary) -> None:
    """Only inline dialects end the token at the call: Hermes, whose results go in a message, lets
    a closing token carry on (``</tool_call>`` then ``\\n`` in one token) as before."""
    from tooldec.dialects import Hermes

    machine = Machine(Grammar(ToolSet([add]), qwen_vocab, Hermes()), max_calls=8)
    assert machine.accept_string(b'<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call')
    crossing = [t for t in machine.allowed_token_ids().tolist() if len(qwen_vocab.token_bytes[t] or b"") > 1]
    assert any(qwen_vocab.token_bytes[t] == b">\n" for t in crossing)
