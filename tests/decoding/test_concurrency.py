"""The concurrency contract: compilers and snapshots shared by threads give the same masks and
tokens as one thread; caches stay bounded; vocabularies are freed when unused."""

from __future__ import annotations

import gc
import hashlib
import random
import sys
import threading
import weakref
from collections.abc import Iterator

import pytest

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path
from tooldec.tokens import Vocabulary, from_gguf

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
        if not ids.size or machine.calls_completed:
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
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(row,)) for row in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    disagreements = [seed for seed in reference if results.get(seed) != reference[seed]]
    assert not disagreements, disagreements


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
            if machine.calls_completed:
                break
        assert machine.calls_completed == 1
        assert compiler.tails.nbytes <= 4 << 20 and compiler.masks.nbytes <= 2 << 20
        assert len(compiler.snapshots) <= 8


def test_vocabularies_are_freed_when_unused() -> None:
    refs = []
    for _ in range(5):
        vocab = from_gguf(smollm2_gguf_path())
        grammar = Grammar(ZOO[:2], vocab, Hermes())
        machine = Machine(grammar, tool_choice="required")
        assert machine.advance(int(machine.allowed_token_ids()[0]))
        refs.append(weakref.ref(vocab))
        del vocab, grammar, machine
    gc.collect()
    assert [r() for r in refs] == [None] * 5
