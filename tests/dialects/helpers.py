"""Grammar helpers shared by the dialect tests: a call's automaton and the bytes it must accept."""

from __future__ import annotations

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.dialects import Dialect
from tooldec.tokens import Vocabulary
from tooldec.tools import Tool


def tail_dfa(dialect: Dialect, tool: Tool, *, next_call: bool = False) -> LazyDFA:
    """The tail alone, as the engine compiles it."""
    nfa = NFA()
    return LazyDFA(nfa, dialect.tail(nfa, tool, next_call=next_call))


def call_dfa(dialect: Dialect, tool: Tool, *, next_call: bool = False) -> LazyDFA:
    """The tool's name followed by its tail: what comes after the trigger and the head."""
    nfa = NFA()
    return LazyDFA(nfa, nfa.seq(nfa.literal(tool.name.encode()), dialect.tail(nfa, tool, next_call=next_call)))


def after_head(dialect: Dialect, text: str) -> bytes:
    """``text`` as the grammar spells it (markers included), without the dialect's trigger and
    head (which the tests check are there)."""
    data = dialect.spelled(text)
    prefix = dialect.spelled(dialect.trigger or "") + dialect.head
    assert data.startswith(prefix), (data, prefix)
    return data[len(prefix):]


def with_specials(vocab: Vocabulary, texts: list[str]) -> Vocabulary:
    """``vocab`` with ``texts`` added as special tokens after its last id (as a model family that
    writes them has them), those it has no single token for only."""
    ordinary = {data for data in vocab.token_bytes if data is not None}
    missing = [t for t in texts if vocab.special_id(t) is None and t.encode() not in ordinary]
    special = {**vocab.special, **{vocab.size + i: t for i, t in enumerate(missing)}}
    return Vocabulary(vocab.token_bytes + (None,) * len(missing), special, vocab.eos_ids, vocab.kind,
                      vocab.name + "+specials")


def vocabulary_for(dialect: Dialect, vocab: Vocabulary) -> Vocabulary:
    """``vocab`` with the dialect's markers added where it lacks them."""
    return with_specials(vocab, list(dialect.markers_in_use)) if dialect.markers_in_use else vocab
