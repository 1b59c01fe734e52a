"""Snapshots: an inventory change makes a new snapshot; masks always match the current one."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.decoding.masking import _exit_verdict
from tooldec.dialects import Hermes, Mistral
from tooldec.errors import DuplicateToolError, ToolNotFoundError
from tooldec.tokens import Vocabulary
from tooldec.tools import Tool, ToolSet

from .conftest import brute_force
from .tools_zoo import ZOO

PREFIX = b'<tool_call>\n{"name": "get_weather", "arguments": {"'


def tool(name: str, prop: str) -> dict[str, object]:
    return {"name": name, "parameters": {"type": "object", "properties": {prop: {"type": "integer"}}, "required": [prop]}}


def at(grammar: Grammar, data: bytes) -> Machine:
    machine = Machine(grammar)
    for tid in grammar.vocab.longest_match(data):
        assert machine.advance(tid), (data, grammar.vocab.token_bytes[tid])
    return machine


def test_add_replace_remove_between_decodes(smollm2_vocab: Vocabulary) -> None:
    compiler = Compiler(smollm2_vocab, Hermes(openers=["tag"]))
    first = compiler.compile([tool("get_weather", "x")])
    machine = at(first, PREFIX)
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))
    assert {smollm2_vocab.token_bytes[i][:1] for i in machine.allowed_token_ids()} == {b"x"}
    replaced = first.with_tools(remove=["get_weather"], add=[tool("get_weather", "y")])  # same name, new schema
    assert replaced.key != first.key
    later = at(replaced, PREFIX)
    assert np.array_equal(later.allowed_token_ids(), brute_force(later))
    assert {smollm2_vocab.token_bytes[i][:1] for i in later.allowed_token_ids()} == {b"y"}
    assert {smollm2_vocab.token_bytes[i][:1] for i in machine.allowed_token_ids()} == {b"x"}  # the old snapshot is unchanged
    grown = replaced.with_tools(add=[tool("get_time", "tz")])
    names = at(grown, b'<tool_call>\n{"name": "get_')
    assert np.array_equal(names.allowed_token_ids(), brute_force(names))
    spelled = {smollm2_vocab.token_bytes[i] for i in names.allowed_token_ids()}
    assert any(b.startswith(b"t") for b in spelled) and any(b.startswith(b"w") for b in spelled)
    shrunk = grown.with_tools(remove=["get_weather"])
    names = at(shrunk, b'<tool_call>\n{"name": "get_')
    assert np.array_equal(names.allowed_token_ids(), brute_force(names))
    assert not any(smollm2_vocab.token_bytes[i].startswith(b"w") for i in names.allowed_token_ids())
    assert compiler.compile([tool("get_time", "tz")]) is shrunk  # with_tools and compile key alike
    with pytest.raises(DuplicateToolError):
        shrunk.with_tools(add=[tool("get_time", "other")])
    with pytest.raises(ToolNotFoundError):
        shrunk.with_tools(remove=["nope"])


def test_a_tool_list_seen_before_is_the_same_snapshot(smollm2_vocab: Vocabulary) -> None:
    compiler = Compiler(smollm2_vocab, Hermes())
    grammar = compiler.compile(ZOO)
    assert compiler.compile(list(reversed(ZOO))) is grammar
    assert Grammar(ZOO, smollm2_vocab, Hermes()).key == grammar.key  # the shared compiler, same key


def test_snapshot_keys_are_remembered_within_a_bound(smollm2_vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from tooldec.decoding import grammar as grammar_module

    monkeypatch.setattr(grammar_module, "_SNAPSHOT_KEYS_KEPT", 8)
    compiler = Compiler(smollm2_vocab, Hermes(openers=["tag"]))
    digests = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(20)]
    keys = [compiler._key_of(d) for d in digests]
    assert keys == [hashlib.sha256(f"{compiler.key}\0{d}".encode()).hexdigest() for d in digests]
    assert 0 < len(compiler._snapshot_keys) <= 8 and compiler._key_of(digests[-1]) == keys[-1]
    tools = [tool("get_weather", "x"), tool("get_time", "y")]
    assert compiler.compile(tools) is compiler.compile(tools[::-1])  # the key a snapshot is found by


def test_a_list_seen_before_compiles_in_a_new_compiler_as_any_list(smollm2_vocab: Vocabulary) -> None:
    """A set registered from a list seen before is laid out only when a compiler needs its tools:
    a compiler without its snapshot makes the same snapshot (key, names, masks) as from new dicts."""
    specs = [tool("get_weather", "x"), tool("get_time", "tz")]
    ToolSet(specs)
    seen = ToolSet(json.loads(json.dumps(specs[::-1])))
    grammar = Compiler(smollm2_vocab, Hermes(openers=["tag"])).compile(seen)
    fresh = Compiler(smollm2_vocab, Hermes(openers=["tag"])).compile([Tool.from_dict(s) for s in specs])
    assert grammar.key == fresh.key and grammar.names == fresh.names == ["get_time", "get_weather"]
    machine = at(grammar, PREFIX)
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))
    assert {smollm2_vocab.token_bytes[i][:1] for i in machine.allowed_token_ids()} == {b"x"}


def test_a_changed_tool_set_compiles_to_its_current_tools(smollm2_vocab: Vocabulary) -> None:
    compiler = Compiler(smollm2_vocab, Hermes(openers=["tag"]))
    tools = ToolSet([tool("get_weather", "x")])
    first = compiler.compile(tools)
    tools.remove("get_weather")
    tools.add(tool("get_weather", "y"))
    tools.add(tool("get_time", "tz"))
    later = compiler.compile(tools)
    assert later is not first and later.names == ["get_time", "get_weather"]
    assert later.key == compiler.inventory_key(later.tools) and first.key == compiler.inventory_key(first.tools)
    machine = at(later, PREFIX)
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))
    assert {smollm2_vocab.token_bytes[i][:1] for i in machine.allowed_token_ids()} == {b"y"}


def test_snapshots_pickle(smollm2_vocab: Vocabulary) -> None:
    grammar = Grammar(ZOO, smollm2_vocab, Hermes())
    copy = pickle.loads(pickle.dumps(grammar))
    assert copy.key == grammar.key and copy.names == grammar.names
    machine = at(copy, PREFIX)
    assert machine.allowed_token_ids().size > 0


def test_what_follows_a_call_is_judged_against_each_snapshots_names(mistral_vocab: Vocabulary) -> None:
    """A token that ends a call and runs into the next call's name is allowed by the names of
    the snapshot it is judged in: the compiler caches those verdicts per snapshot, and shares
    only the ones the names play no part in."""
    compiler = Compiler(mistral_vocab, Mistral())
    with_get = compiler.compile([tool("get_weather", "x"), tool("lookup", "y")])
    without = compiler.compile([tool("lookup", "y"), tool("set_alarm", "z")])
    for grammar, allowed in ((with_get, True), (without, False), (with_get, True)):
        ok, _, depends = _exit_verdict(grammar, True, 0, b"get_w", True)
        assert (ok, depends) == (allowed, True), grammar
    closing = [_exit_verdict(grammar, False, 0, b"", True) for grammar in (with_get, without)]
    assert closing[0] == closing[1] and not closing[0][2]  # nothing left: the same for every inventory
