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
        live = [sid for sid in range(1, dfa.n_states) if sid != SINK and dfa.arrays.dist[sid] >= 0]
        rng.shuffle(live)  # asked out of order, so a walk meets states another walk kept
        for sid in live:
            end = dfa.shortest_end(sid)
            assert end == dfa.shortest_to(sid)[1], (tool.name, sid)
            next_calls += dfa.marks.get(end) == NEXT_CALL
            checked += 1
    assert checked > 500
    assert next_calls > 0  # some shortest ways run into the next call (Mistral's and Pythonic's lists)


COUNTED = [
    {"type": "array", "items": {"type": "integer"}, "minItems": 300},
    {"type": "array", "items": {"type": "array", "items": {"enum": ["ab", 7]}, "minItems": 40}, "minItems": 12,
     "maxItems": 90},
    {"type": "string", "pattern": "^[a-c]*x?$", "minLength": 250},
    {"type": "string", "minLength": 400, "maxLength": 420},
    {"type": "object", "additionalProperties": {"type": "boolean"}, "minProperties": 1},
    {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "object", "properties": {
        "k": {"type": "string", "minLength": 3}}, "required": ["k"]}, "minItems": 150}, "tail": {"const": 1}},
     "required": ["xs", "tail"]},
    {"type": "array", "items": {"type": "number", "minimum": 10}, "minItems": 64, "maxItems": 64},
]


def _walked(dfa: LazyDFA, sid: int) -> tuple[bytes, int]:
    """The completion spelled one kept step at a time (the reference)."""
    out = bytearray()
    while (step := dfa.shortest_step(sid)) is not None:
        out.append(step[0])
        sid = step[1]
    return bytes(out), sid


def test_runs_spell_the_canonical_completion_and_skip_the_repeats() -> None:
    """From states met on random walks into counted regions, the runs spell exactly what the
    byte-by-byte walk spells and end in the same state; long repeats are one run each."""
    from tooldec.automata.json_schema import SchemaCompiler
    from tooldec.automata.shortest import shortest_runs, spell

    rng = random.Random(5)
    repeated = 0
    for schema in COUNTED:
        nfa = NFA()
        dfa = LazyDFA(nfa, SchemaCompiler(nfa, schema).value(schema), window=16)
        starts = [dfa.start]
        for _ in range(6):  # states part of the way in: a random prefix, counts exact
            sid, counts = dfa.start, {}
            for _ in range(rng.randint(1, 60)):
                live = [b for b in range(256) if dfa.next(sid, b) != SINK]
                if not live:
                    break
                sid, counts = dfa.advance_exact(sid, rng.choice(live), counts)
                sid = dfa.reclass(sid, counts)
            starts.append(sid)
        for sid in starts:
            runs, end = shortest_runs(dfa, sid)
            assert (spell(runs), end) == _walked(dfa, sid), schema
            assert dfa.shortest_end(sid) == end
            repeated += any(times > 10 for _, times in runs)
    assert repeated >= 10
