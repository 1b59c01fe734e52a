"""The compiled subset construction builds the same DFA as the Python one, state by state.

Two lazy DFAs of one NFA, one expanded in C and one in Python, are expanded in the same order; the
Python-side lookups that intern states of their own (string and whitespace spots, shortest
completions) are interleaved, as a decoder interleaves them. Both must give the same state keys
in the same order, the same rows, flags, distances, labels and counter steps. The automata are the
zoo's tool tails, the benchmark inventories' tools and the JSONSchemaBench schemas in both
whitespace styles. The Python construction itself is what ``make test-fresh`` runs everywhere
(its copy of the checkout has no compiled module).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from decoding.tools_zoo import ZOO

from benchmarks.paper.datasets import bfcl_tools, toolbench_tools
from tooldec.automata import dfa as dfa_module
from tooldec.automata.dfa import LazyDFA
from tooldec.automata.json_schema import SchemaCompiler, Style, Whitespace
from tooldec.automata.nfa import NFA, Frag
from tooldec.dialects import Hermes, Llama3Json
from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError
from tooldec.tools import Tool
from tooldec.tools.schema import normalize_any_schema

pytestmark = pytest.mark.skipif(not dfa_module.NATIVE, reason="the compiled expansion is not built here (the copy "
                                                              "of make test-fresh, or no C compiler at install)")

SCHEMAS = sorted((Path(__file__).parents[1] / "fixtures" / "data" / "jsonschemabench").glob("*/*.json"))
STATES = 400
"""States expanded per automaton (a string-heavy schema has thousands)."""


def _pair(make: object) -> tuple[LazyDFA, LazyDFA]:
    """Two DFAs of two equal NFAs: the first expands in C, the second in Python."""
    dfas = []
    compiled = dfa_module._native
    for native in (True, False):
        nfa = NFA()
        frag: Frag = make(nfa)  # type: ignore[operator]
        dfa_module._native = compiled if native else None  # read when a DFA is made
        try:
            dfas.append(LazyDFA(nfa, frag, window=16))
        finally:
            dfa_module._native = compiled
    assert dfas[0]._tables is not None and dfas[1]._tables is None
    return dfas[0], dfas[1]


def _same(native: LazyDFA, python: LazyDFA, what: str) -> tuple[int, int]:
    """Expand both in the same order (with their string and whitespace spots, and some shortest
    completions) and compare everything they hold; returns the states compared and the spots found."""
    sid = 1
    spots = 0
    while sid < min(native.n_states, STATES):
        found = []
        for dfa in (native, python):
            dfa.expand(sid)
            shortest = dfa.shortest_to(sid) if dfa.arrays.dist[sid] >= 0 and sid % 7 == 0 else None  # interns states
            both = dfa.spots(sid)
            found.append((dfa.string_spot(sid), dfa.blank_spot(sid), shortest, both))
            assert both == (found[-1][0], found[-1][1] if found[-1][0] is None else None)
        assert found[0] == found[1], f"{what}: the spots and shortest completion of state {sid}"
        spots += found[0][:2] != (None, None)
        assert native.n_states == python.n_states, f"{what}: state {sid}"
        sid += 1
    n = native.n_states
    assert [native._states[i] for i in range(n)] == [python._states[i] for i in range(n)], what
    for field in ("table", "expanded", "accepting", "exits", "dist"):
        assert np.array_equal(getattr(native.arrays, field)[:n], getattr(python.arrays, field)[:n]), f"{what}: {field}"
    assert native.marks == python.marks, what
    assert native._tables is not None
    for sid in range(1, n):  # the counter steps (kept in C until asked)
        if not native.arrays.expanded[sid]:
            continue
        got, want = native._tables.steps(sid), python._steps.get(sid)
        assert (got is None) == (want is None), f"{what}: state {sid}"
        if got is not None and want is not None:
            steps = [(step.incs, step.resets, step.tracked) for step in want[1]]
            assert list(memoryview(got[0]).cast("h")) == list(want[0]) and got[1] == steps[1:], f"{what}: state {sid}"
    for sid in range(1, min(n, 50)):
        assert np.array_equal(native.row(sid), python.row(sid)), f"{what}: row {sid}"
    return n, spots


def _tail_pairs(tool: Tool) -> list[tuple[str, tuple[LazyDFA, LazyDFA]]]:
    out = []
    for dialect in (Hermes(), Llama3Json()):
        for chained in (False, True):
            def make(nfa: NFA, dialect: object = dialect, chained: bool = chained) -> Frag:
                return dialect.call_tail(nfa, tool, form=0, next_call=chained)  # type: ignore[attr-defined]
            out.append((f"{tool.name} {type(dialect).__name__} chained={chained}", _pair(make)))
    return out


BOUNDS = [  # counted regions whose distances depend on the count: items and characters still owed
    {"name": "lists", "description": "", "parameters": {"type": "object", "properties": {
        "pairs": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2,
                                             "maxItems": 2}, "minItems": 3, "maxItems": 5},
        "codes": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4},
                  "minItems": 2}},
        "required": ["pairs", "codes"]}},
    {"name": "texts", "description": "", "parameters": {"type": "object", "properties": {
        "word": {"type": "string", "minLength": 3, "maxLength": 6},
        "id": {"type": "string", "pattern": "^(ab|c)+$", "minLength": 4, "maxLength": 7}},
        "required": ["word", "id"]}},
]


def test_zoo_tails() -> None:
    for item in ZOO + BOUNDS:  # (one test, not one per tool: the copy without the extension skips it once)
        for what, (native, python) in _tail_pairs(Tool.from_dict(item)):
            assert _same(native, python, what)[0] > 5


def test_benchmark_tools(data_dir: Path) -> None:
    tools = [Tool.from_dict(t) for t in bfcl_tools(data_dir)[:60] + toolbench_tools(data_dir)[:40]]
    compared = [_same(native, python, what) for tool in tools for what, (native, python) in _tail_pairs(tool)]
    assert sum(states for states, _ in compared) > 1000 and sum(spots for _, spots in compared) > 100


def test_jsonschemabench_schemas() -> None:
    compared = 0
    for path in SCHEMAS:
        try:
            core = normalize_any_schema(json.loads(path.read_text()))
        except (InvalidSchemaError, UnsupportedSchemaError):
            continue  # refused at registration
        for style in (Style(), Style(whitespace=Whitespace.FLEXIBLE)):
            def make(nfa: NFA, style: Style = style, core: object = core) -> Frag:
                return SchemaCompiler(nfa, core if isinstance(core, dict) else {}, style).value(core)
            compared += _same(*_pair(make), f"{path.parent.name}/{path.name} {style}")[0]
    assert compared > 1000


def test_walks_with_counts() -> None:
    """``walk_counted`` (the compiled walk while no counter is counted, then exact) ends where the
    Python walk byte by byte ends, with the same counts: on sampled calls, their prefixes, and
    with a byte changed."""
    for item in ZOO + BOUNDS:
        _compare_counted_walks(item)


def _compare_counted_walks(item: dict[str, object]) -> None:
    rng = random.Random(str(item["name"]))
    for what, (native, python) in _tail_pairs(Tool.from_dict(item)):
        for _ in range(30):
            text = native.sample(rng)
            if rng.random() < 0.3 and text:
                at = rng.randrange(len(text))
                text = text[:at] + bytes([rng.randrange(256)]) + text[at + 1:]
            for data in (text, text[: rng.randrange(len(text) + 1)]):
                got = native.walk_counted(native.start, {}, data, 0)
                want = python.walk_counted(python.start, {}, data, 0)
                assert (got[1], got[2]) == (want[1], want[2]), f"{what}: {data!r}"
                assert native._states[got[0]] == python._states[want[0]], f"{what}: {data!r}"


def _run_or(other: bytes) -> object:
    """A whitespace run then ``a``, or ``other`` (which may itself start with whitespace)."""
    def make(nfa: NFA) -> Frag:
        return nfa.alt(nfa.seq(nfa.blank_run(4), nfa.literal(b"a")), nfa.literal(other))
    return make


def test_whitespace_spots() -> None:
    """A run is a spot only where nothing else takes a whitespace byte: hand-made automata where
    another branch starts with each whitespace byte (or none)."""
    for other in (b" b", b"\tb", b"\nb", b"\rb", b"b"):
        native, python = _pair(_run_or(other))
        _same(native, python, repr(other))
        assert (native.blank_spot(native.start) is None) == (other != b"b"), repr(other)


def test_bad_input_is_a_clear_error() -> None:
    native = dfa_module._native
    assert native is not None
    nfa = NFA()
    frag = nfa.literal(b"ab")
    dfa = LazyDFA(nfa, frag)
    assert dfa._tables is not None
    with pytest.raises(ValueError, match="no such state"):
        dfa._tables.expand(99)
    with pytest.raises(ValueError, match="accept out of range"):
        dfa_module._compiled_tables(nfa, dfa._costs, 99, True, {})
    fresh = dfa_module._compiled_tables(nfa, dfa._costs, frag[1], True, {})
    with pytest.raises(RuntimeError, match="arrays were not handed over"):
        fresh.blank_spot(0)
    arrays = dfa_module.Arrays.empty(4)
    with pytest.raises(ValueError, match="mismatched sizes"):
        fresh.use(arrays.table, arrays.expanded, arrays.accepting, arrays.exits, arrays.dist[:2])
    nfa.edges[0] = [(0x61, 0x61, 999)]  # an edge to a state that does not exist
    with pytest.raises(ValueError, match="out of range"):
        dfa_module._compiled_tables(nfa, dfa._costs, frag[1], True, {})
