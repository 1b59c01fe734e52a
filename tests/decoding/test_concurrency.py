"""The concurrency contract: compilers and snapshots shared by threads give the same masks and
tokens as one thread; caches stay bounded; vocabularies are freed when unused."""

from __future__ import annotations

import gc
import hashlib
import json
import random
import shutil
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tooldec.decoding import Compiler, Grammar, Machine, Mode
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path
from tooldec.tokens import Vocabulary, from_gguf
from tooldec.tools import ToolSet

from .conftest import brute_force
from .tools_zoo import ZOO

THREADS = 4
SEQUENCES = 5
Record = list[tuple[str, int]]


def walk(grammar: Grammar, seed: int) -> Record:
    """A seeded random walk: the digest of every mask and the token taken after it."""
    rng = random.Random(seed)
    machine = Machine(grammar, tool_choice="required" if seed % 3 else "auto")
    out: Record = []
    for step in range(60):
        ids = machine.allowed_token_ids(budget=60 - step)
        out.append((hashlib.sha1(ids.tobytes()).hexdigest(), len(ids)))
        if not ids.size or machine.advanced.calls_completed:
            break
        token = int(ids[rng.randrange(ids.size)])
        assert machine.advance(token)
        out.append(("token", token))
    return out


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads every few microseconds so that interleavings are likely."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@pytest.mark.parametrize("shared", [True, False], ids=["shared-snapshot", "snapshot-per-thread"])
def test_threads_agree_with_one_thread(smollm2_vocab: Vocabulary, shared: bool, fast_switching: None) -> None:
    seeds = [[t * 100 + s for s in range(SEQUENCES)] for t in range(THREADS)]
    reference = {seed: walk(Compiler(smollm2_vocab, Hermes()).compile(ZOO), seed) for row in seeds for seed in row}
    common = Compiler(smollm2_vocab, Hermes()).compile(ZOO)
    results: dict[int, Record] = {}
    errors: list[BaseException] = []

    def work(row: list[int]) -> None:
        try:
            grammar = common if shared else Compiler(smollm2_vocab, Hermes()).compile(ZOO)
            for seed in row:
                results[seed] = walk(grammar, seed)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(row,)) for row in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    disagreements = [seed for seed in reference if results.get(seed) != reference[seed]]
    assert not disagreements, disagreements


def loop_walk(grammar: Grammar, seed: int) -> Record:
    """:func:`walk` as llama.cpp's loop takes it: the sampler's lists at hand or made
    (``known_lists``, ``lists``), so the snapshot's position records are made and followed."""
    rng = random.Random(seed)
    machine = Machine(grammar, tool_choice="required" if seed % 3 else "auto")
    width = grammar.vocab.size
    out: Record = []
    for step in range(60):
        lists = machine.advanced.known_lists(60 - step, width) or machine.advanced.lists(60 - step, width)
        ids = machine.allowed_token_ids(budget=60 - step)  # the mask the lists must give
        allowed = np.setdiff1d(np.arange(width), lists[1]) if lists[0] is None and lists[1] is not None else (
            np.arange(width) if lists[0] is None else lists[0])
        out.append((hashlib.sha1(ids.tobytes()).hexdigest(), len(ids)))
        out.append(("same lists", int(np.array_equal(allowed, ids))))
        if not ids.size or machine.advanced.calls_completed:
            break
        token = int(ids[rng.randrange(ids.size)])
        assert machine.advance(token)
        out.append(("token", token))
    return out


def test_threads_sharing_position_records_agree_with_one_thread(smollm2_vocab: Vocabulary, fast_switching: None) -> None:
    """Every thread walks the same seeds twice on one snapshot, so its position records are made,
    linked and followed by several threads at once: the masks, lists and tokens are those of one
    thread on a fresh compiler."""
    seeds = list(range(SEQUENCES))
    reference = {seed: loop_walk(Compiler(smollm2_vocab, Hermes()).compile(ZOO), seed) for seed in seeds}
    assert all(("same lists", 1) in record and ("same lists", 0) not in record for record in reference.values())
    common = Compiler(smollm2_vocab, Hermes()).compile(ZOO)
    wrong: list[str] = []

    def work(thread: int) -> None:
        try:
            for seed in [*seeds, *reversed(seeds)]:
                if loop_walk(common, seed) != reference[seed]:
                    wrong.append(f"thread {thread}, seed {seed}")
        except BaseException as err:  # reported below
            wrong.append(f"thread {thread}: {err!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong


@pytest.mark.parametrize("one_slot", [False, True], ids=["own-slots", "one-slot"])
def test_repeated_tool_lists_registered_from_threads_are_each_their_own(
        one_slot: bool, fast_switching: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's filed keys are looked up between the list key's two extension calls, so other
    threads run meanwhile: each thread still gets its own list's tools, whatever others register,
    also when every list is filed in one slot (each new list then compared with the others)."""
    if one_slot:
        from tooldec.tools import toolset

        monkeypatch.setattr(toolset._ListCache, "_slots_of",
                            classmethod(lambda cls, length, sample: [(-1, 0, p) for p in range(cls.PROBES)]))

    def tool_list(variant: int) -> list[dict[str, Any]]:  # a key of more than 4 kB: the in-place compare
        return [{"type": "function", "function": {
            "name": f"tool_{i}", "description": f"Tool {i} of list {variant}. " * 3,
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}} for i in range(40)]

    expected = {v: [f"Tool {i} of list {v}. " * 3 for i in range(40)] for v in range(3)}
    wrong: list[str] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(25):
                variant = rng.randrange(3)
                listed = json.loads(json.dumps(tool_list(variant)))
                rng.shuffle(listed)
                got = ToolSet(listed)
                if [got[f"tool_{i}"].description for i in range(40)] != expected[variant]:
                    wrong.append(f"thread {seed}: list {variant} came back as another")
        except Exception as err:  # a thread's error is a failure, not a message on stderr
            wrong.append(f"thread {seed}: {err!r}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_caches_stay_bounded(smollm2_vocab: Vocabulary) -> None:
    """Many distinct schemas through one compiler: every cache stays under its bound."""
    compiler = Compiler(smollm2_vocab, Hermes(), tail_cache_bytes=4 << 20, mask_cache_bytes=2 << 20, snapshot_cache=8)
    rng = random.Random(3)
    for i in range(150):
        tool = {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {
            f"field_{i}": {"type": "string", "maxLength": 10 + i}, "n": {"type": "integer", "maximum": i}},
            "required": [f"field_{i}"]}}
        machine = Machine(compiler.compile([tool]), tool_choice="required")
        budget = machine.min_tokens() + 4
        for step in range(budget):
            ids = machine.allowed_token_ids(budget=budget - step)
            assert machine.advance(int(ids[rng.randrange(ids.size)]))
            if machine.advanced.calls_completed:
                break
        assert machine.advanced.calls_completed == 1
        assert compiler.tails.nbytes <= 4 << 20 and compiler.masks.nbytes <= 2 << 20
        assert len(compiler.snapshots) <= 8


def test_cursors_survive_evicted_automata(smollm2_vocab: Vocabulary) -> None:
    """Tail automata number their states lazily, so one built again numbers them differently: with
    no room in the tail cache, cursors, masks and budgets must keep to the automaton they started
    with (the snapshot pins it), and a snapshot made later must not read the first one's masks."""
    compiler = Compiler(smollm2_vocab, Hermes(), tail_cache_bytes=0)
    reference = {seed: walk(Grammar(ZOO, smollm2_vocab, Hermes()), seed) for seed in range(6)}
    for seed in range(6):
        assert walk(compiler.compile(ZOO), seed) == reference[seed]
        compiler.snapshots.clear()
        gc.collect()  # the snapshot and its automata go; the next one builds them again
    rng = random.Random(4)
    grammar = compiler.compile(ZOO)
    for _ in range(6):
        machine = Machine(grammar, tool_choice="required")
        budget = machine.min_tokens() + 20
        for step in range(budget):
            ids = machine.allowed_token_ids(budget=budget - step)
            if machine.advanced.mode is Mode.TOOL and rng.random() < 0.08:
                assert np.array_equal(machine.allowed_token_ids(), brute_force(machine)), machine.advanced.position
            assert machine.advance(int(ids[rng.randrange(ids.size)]))
            if machine.advanced.calls_completed:
                break
        assert machine.advanced.calls_completed == 1


def test_vocabularies_are_freed_when_unused(tmp_path: Path) -> None:
    # A copy no fixture holds: loaders share a live vocabulary per file, and the suite's fixtures keep
    # SmolLM2's alive, so the original path would hand back theirs.
    gguf = tmp_path / "model.gguf"
    shutil.copyfile(smollm2_gguf_path(), gguf)
    refs = []
    for _ in range(5):
        vocab = from_gguf(gguf)
        grammar = Grammar(ZOO[:2], vocab, Hermes())
        machine = Machine(grammar, tool_choice="required")
        assert machine.advance(int(machine.allowed_token_ids()[0]))
        refs.append(weakref.ref(vocab))
        del vocab, grammar, machine
    gc.collect()
    assert [r() for r in refs] == [None] * 5
