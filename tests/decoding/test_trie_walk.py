"""The compiled trie walk gives the pure-Python walk's answer, on real vocabularies and tool automata.

Each walk runs on its own lazily expanded copy of a tool's DFA, so the two number their states in
the order each expands them; states are compared by what they are (NFA states and counter classes),
following the tokens' end states outward from the start. The fallback itself is what the suite
runs in ``make test-fresh`` (its copy of the checkout has no compiled module).
"""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from benchmarks.paper.datasets import bfcl_tools
from tooldec.automata.dfa import LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.decoding import Compiler, Machine, masking
from tooldec.decoding import trie_walk as tw
from tooldec.decoding import vector_walk as vw
from tooldec.decoding.positions import Name, Tail
from tooldec.dialects import Hermes, Pythonic
from tooldec.errors import TokenizerError
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .tools_zoo import EVERY_OPENER, ZOO

pytestmark = pytest.mark.skipif(not tw.NATIVE, reason="the compiled walk is not built here (the copy of make "
                                                      "test-fresh, or no C compiler at install)")

STATES_PER_TOOL = 60


def _key(dfa: LazyDFA, state: int) -> tuple[object, ...]:
    return (dfa.nfa_states(state), dfa.classes(state))


def _walks(index: object, dfa: LazyDFA, state: int, blanks: vw.BlankTable | None, native: bool,
           monkeypatch: pytest.MonkeyPatch) -> vw.Walk:
    monkeypatch.setattr(vw, "NATIVE", native)
    return vw.walk_state(index, dfa, state, blanks)  # type: ignore[arg-type]


def _fresh_tail(vocab: Vocabulary, name: str) -> LazyDFA:
    compiler = Compiler(vocab, Hermes())  # its own caches: a DFA no other walk has expanded
    return compiler.compile(ToolSet(ZOO)).tail(name, 0, False).dfa


def test_native_walk_equals_python_walk(any_vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    for blanks in (False, True):  # plain, and with whitespace runs read from the table
        _compare_walks(any_vocab, blanks, monkeypatch)


def _compare_walks(any_vocab: Vocabulary, blanks: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    compiler = Compiler(any_vocab, Hermes())
    index = compiler.index
    table = compiler.blank_table if blanks else None
    compared = 0
    for tool in ZOO:
        native_dfa, python_dfa = _fresh_tail(any_vocab, tool["name"]), _fresh_tail(any_vocab, tool["name"])
        todo = deque([(native_dfa.start, python_dfa.start)])
        seen = {native_dfa.start}
        while todo and len(seen) <= STATES_PER_TOOL:
            a, b = todo.popleft()
            assert _key(native_dfa, a) == _key(python_dfa, b)
            got = _walks(index, native_dfa, a, table, True, monkeypatch)
            want = _walks(index, python_dfa, b, table, False, monkeypatch)
            assert sorted(got.rows.tolist()) == sorted(want.rows.tolist()), tool["name"]
            exits_got = sorted(zip(got.exit_rows.tolist(), got.exit_offsets.tolist()))
            assert exits_got == sorted(zip(want.exit_rows.tolist(), want.exit_offsets.tolist())), tool["name"]
            ends = dict(zip(want.rows.tolist(), want.finals.tolist()))
            for row, final in zip(got.rows.tolist(), got.finals.tolist()):
                assert _key(native_dfa, final) == _key(python_dfa, ends[row])
                if final not in seen and not native_dfa.arrays.exits[final]:
                    seen.add(final)
                    todo.append((final, ends[row]))
            exit_states = dict(zip(want.exit_rows.tolist(), want.exit_states.tolist()))
            for row, state in zip(got.exit_rows.tolist(), got.exit_states.tolist()):
                assert _key(native_dfa, state) == _key(python_dfa, exit_states[row])
            compared += 1
    assert compared >= 2 * len(ZOO)


def test_trie_lists_every_token_once(qwen_vocab: Vocabulary) -> None:
    compiler = Compiler(qwen_vocab, Hermes())
    index = compiler.index
    trie = tw.trie(index)
    ends = np.frombuffer(trie.ends, np.int32)
    los = np.frombuffer(trie.los, np.int32)
    nends = np.frombuffer(trie.nends, np.int32)
    assert ends[0] == ends.size and int(nends.sum()) == len(index.sorted_bytes)
    # a node's first token starts with the node's bytes, and its subtree ends where its tokens do
    node = 1 + int(np.flatnonzero(nends[1:] > 0)[500])
    path = []
    walk = 0
    while walk != node:  # descend from the root to ``node``
        child = walk + 1
        while ends[child] <= node:
            child = ends[child]
        path.append(trie.labels[child])
        walk = child
    assert index.sorted_bytes[los[node]] == bytes(path)


def _children(ends: np.ndarray, labels: bytes, node: int) -> dict[int, int]:
    """A node's children by byte, found by chaining through the subtree ends."""
    found, child = {}, node + 1
    while child < ends[node]:
        found[labels[child]] = child
        child = int(ends[child])
    return found


def test_child_tables_hold_the_children_chaining_finds(qwen_vocab: Vocabulary) -> None:
    trie = tw.trie(Compiler(qwen_vocab, Hermes()).index)
    ends = np.frombuffer(trie.ends, np.int32)
    tables = np.frombuffer(trie.tables, np.int32).reshape(-1, 256)
    wide = np.frombuffer(trie.wide, np.int32)
    roots = _children(ends, trie.labels, 0)
    assert {b: int(c) for b, c in enumerate(tables[0]) if c} == roots and len(roots) == 256
    widened = 0
    for byte, child in roots.items():
        kids = _children(ends, trie.labels, child)
        if len(kids) >= 16:  # the C side's WIDE
            assert {b: int(c) for b, c in enumerate(tables[wide[byte]]) if c} == kids
            widened += 1
        else:
            assert wide[byte] == 0
    assert widened == tables.shape[0] - 1 >= 1  # the space, at least


def test_bad_input_is_a_clear_error() -> None:
    native = tw._native
    assert native is not None
    with pytest.raises(ValueError, match="not sorted"):
        native.build_trie(b"ba", np.array([0, 1, 2], np.int64))
    with pytest.raises(ValueError, match="not sorted"):  # a prefix after a longer token
        native.build_trie(b"aba", np.array([0, 2, 3], np.int64))
    with pytest.raises(ValueError, match="non-empty"):
        native.build_trie(b"a", np.array([0, 0, 1], np.int64))
    trie = native.build_trie(b"ab", np.array([0, 1, 2], np.int64))
    nfa = NFA()
    dfa = LazyDFA(nfa, nfa.literal(b"ab")).compiled_view()
    with pytest.raises(ValueError, match="mismatched"):
        native.walk((trie[0], trie[1][:4], *trie[2:]), np.zeros(2, np.int64), dfa, 0, None)
    with pytest.raises(ValueError, match="blocks of 256"):
        native.walk((*trie[:4], trie[4][:8], trie[5]), np.zeros(2, np.int64), dfa, 0, None)
    with pytest.raises(ValueError, match="the DFA's arrays have mismatched sizes"):
        native.walk(trie, np.zeros(2, np.int64), (dfa[0][:1], *dfa[1:]), 0, None)


PREFIXED = [dict(tool, name=tool["name"] + suffix) for tool in ZOO[:3] for suffix in ("_v2", "_v2x")]
"""Names that extend others (get_weather, get_weather_v2, get_weather_v2x): complete names inside names."""


CASES = [(0, "required", "tag"), (1, "required", "any"), (2, "get_weather_v2", "tag"), (3, "required", "tag"),
         (4, "search_books", "pythonic"), (5, "get_weather", "pythonic")]
"""(seed, tool_choice, forms) of the walks below."""


def test_masks_from_the_compiled_walk_equal_the_python_ones(any_vocab: Vocabulary, data_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cursors, each on its own compiler, take the same random call: at every position the
    compiled masks (tail masks with bits set by the walk; name masks from the walk along the
    sorted names) and the pure-Python ones allow the same tokens, with the same count, listed ids
    and bytes owed (``max_after``). The inventory has names inside names; the last case adds 300
    benchmark tools; ``any`` lets the call open with every Hermes opener (tails without a fixed
    start); in the Pythonic form a string's closing quote can be followed by the call's end."""
    for case in CASES:
        _compare_masks(any_vocab, *case, data_dir, monkeypatch)


def _compare_masks(any_vocab: Vocabulary, seed: int, choice: str, forms: str, data_dir: Path,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(f"{any_vocab.name}-{seed}")
    tools = ZOO + PREFIXED + (bfcl_tools(data_dir)[:300] if seed == 3 else [])
    if forms == "pythonic":  # 'from' is no keyword argument
        tools = [tool for tool in tools if not tool["name"].startswith("book_flight")]
    dialect = EVERY_OPENER if forms == "any" else Pythonic() if forms == "pythonic" else Hermes()
    machines = [Machine(Compiler(any_vocab, dialect).compile(ToolSet(tools)), tool_choice=choice) for _ in range(2)]
    if forms == "any":  # a bare object opens the call (a random walk may dwell in the openers' whitespace)
        assert all(machine.accept_string('{"name": "') for machine in machines)
    seen: set[type] = set()
    for _ in range(80):
        masks = []
        for machine, native in zip(machines, (True, False)):
            monkeypatch.setattr(masking, "NATIVE", native)
            masks.append(machine.advanced.allowed())
        got, want = masks
        assert np.array_equal(got.packed, want.packed), machines[1].advanced.position
        assert (got.count, got.max_after) == (want.count, want.max_after)
        assert np.array_equal(got.ids, want.ids)
        seen.add(type(machines[0].advanced.position))
        ids = want.ids
        if machines[1].advanced.calls_completed or not ids.size:
            break
        token = int(ids[rng.randrange(ids.size)])
        assert all(machine.advance(token) for machine in machines)
    assert {Name, Tail} <= seen


def test_longest_count_is_the_length_of_longest_match(any_vocab: Vocabulary) -> None:
    index = Compiler(any_vocab, Hermes()).index
    rng = random.Random(7)
    texts = [b'{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>',
             "  caf\u00e9 na\u00efve \u65e5\u672c\u8a9e\n\t{}".encode(), b"\x00\x01\xff ", b"a"]
    tokens = [t for t in any_vocab.token_bytes if t]
    texts += [b"".join(rng.choice(tokens) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    texts += [bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))) for _ in range(100)]
    for text in texts:
        try:
            want: int | None = len(any_vocab.longest_match(text))
        except TokenizerError:
            want = None
        assert tw.native_count(index, text) == want, text


def test_longest_count_says_where_a_byte_has_no_token() -> None:
    vocab = Vocabulary.from_tokens([b"a", b"ab", b"abc", b"b"])
    index = Compiler(vocab, Hermes()).index
    assert tw.native_count(index, b"abcab") == 2 and tw.native_count(index, b"abba") == 3
    assert tw.native_count(index, b"abx") is None
