"""``LazyDFA.shortest_end`` (kept per state) is where ``shortest_to`` ends, asked in any order:
the tails of dialects whose calls come in lists, where some shortest ways go on into the next call."""

from __future__ import annotations

import random

from decoding.tools_zoo import ZOO

from tooldec.automata.dfa import SINK, LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.dialects import Hermes, Mistral, Pythonic
from tooldec.dialects.base import NEXT_CALL
from tooldec.errors import ToolDecError
from tooldec.tools import Tool


def test_the_kept_end_is_the_end_of_the_shortest_way() -> None:
    rng = random.Random(3)
    checked = next_calls = 0
    for dialect, spec in [(d, spec) for d in (Hermes(), Mistral(), Pythonic()) for spec in ZOO]:
        tool = Tool.coerce(spec)
        nfa = NFA()
        try:
            dfa = LazyDFA(nfa, dialect.call_tail(nfa, tool, form=0, next_call=True), window=16)
        except ToolDecError:  # a schema the dialect cannot write (Pythonic: nested objects)
            continue
        for sid in range(1, 200):  # expand a few hundred states (each expansion may intern more)
            if sid >= dfa.n_states:
                break
            dfa.expand(sid)
        live = [sid for sid in range(1, dfa.n_states) if sid != SINK and dfa.dist[sid] >= 0]
        rng.shuffle(live)  # asked out of order, so a walk meets states another walk kept
        for sid in live:
            end = dfa.shortest_end(sid)
            assert end == dfa.shortest_to(sid)[1], (tool.name, sid)
            next_calls += dfa.marks.get(end) == NEXT_CALL
            checked += 1
    assert checked > 500
    assert next_calls > 0  # some shortest ways run into the next call (Mistral's and Pythonic's lists)
