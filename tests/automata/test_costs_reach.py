"""Which NFA states can reach acceptance is read off the distance tables (``Costs.reach``): it
must keep every state a walk respecting the counters can finish from, and it equals a plain
walk over every edge (guards ignored) wherever each counted region can be passed."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest

from tooldec.automata.costs import Costs
from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import SchemaCompiler, Style, Whitespace
from tooldec.automata.nfa import NFA, Frag
from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError
from tooldec.tools.schema import normalize_any_schema

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "data" / "jsonschemabench").glob("*/*.json"))


def walk_back(nfa: NFA, accept: int) -> list[bool]:
    """The states from which ``accept`` is reached over byte, epsilon and guarded edges alike."""
    reverse: list[list[int]] = [[] for _ in range(nfa.size)]
    for src in range(nfa.size):
        for _, _, dst in nfa.edges[src]:
            reverse[dst].append(src)
        for dst in nfa.eps[src]:
            reverse[dst].append(src)
        for dst, _, _ in nfa.guarded[src]:
            reverse[dst].append(src)
    seen = [False] * nfa.size
    seen[accept] = True
    queue = deque([accept])
    while queue:
        for src in reverse[queue.popleft()]:
            if not seen[src]:
                seen[src] = True
                queue.append(src)
    return seen


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reach_equals_a_walk_over_every_edge(path: Path) -> None:
    try:
        core = normalize_any_schema(json.loads(path.read_text()))
    except (InvalidSchemaError, UnsupportedSchemaError):
        pytest.skip("refused at registration")
    for style in (Style(), Style(whitespace=Whitespace.FLEXIBLE)):
        nfa = NFA()
        _, end = SchemaCompiler(nfa, core if isinstance(core, dict) else {}, style).value(core)
        assert [bool(x) for x in Costs(nfa, end, 256).reach] == walk_back(nfa, end)


def _dead_unit(nfa: NFA) -> Frag:
    """A unit that starts with a byte and can never end."""
    start, stuck = nfa.state(), nfa.state()
    nfa.edge(start, 0x61, 0x61, stuck)
    return start, nfa.state()


def test_region_that_cannot_be_passed_is_not_reached() -> None:
    nfa = NFA()
    frag = nfa.seq(nfa.literal(b"["), nfa.counted(lambda: _dead_unit(nfa), 1, 3), nfa.literal(b"]"))
    costs = Costs(nfa, frag[1], 256)
    assert not costs.reach[frag[0]]  # a walk ignoring the counter would reach "]" through decide
    assert walk_back(nfa, frag[1])[frag[0]]
    assert LazyDFA(nfa, frag).is_empty


def test_region_with_no_unit_needed_is_passed() -> None:
    nfa = NFA()
    frag = nfa.seq(nfa.literal(b"["), nfa.counted(lambda: _dead_unit(nfa), 0, 3), nfa.literal(b"]"))
    assert Costs(nfa, frag[1], 256).reach[frag[0]]
    dfa = LazyDFA(nfa, frag)
    assert dfa.accepts(b"[]") and not dfa.accepts(b"[a]")
