"""A server's life in miniature: one compiler (as ``tooldec serve`` and the vLLM processor keep),
thousands of requests, each with a schema never seen before, compiled and decoded one after
another with the default cache limits. Memory must level off (every cache is bounded) instead of
keeping every automaton, as it did before the compiled core."""

from __future__ import annotations

import gc
import random
from pathlib import Path

from tooldec.decoding import Compiler, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary

REQUESTS = 3000
MAX_GROWTH_MB = 100


def rss_mb() -> float:
    """Resident set size of this process (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def request(compiler: Compiler, i: int, rng: random.Random) -> None:
    """One request: a new tool schema, compiled, and a required call written to its end."""
    tool = {"name": f"lookup_{i}", "parameters": {"type": "object", "properties": {
        f"key_{i}": {"type": "string", "maxLength": 5 + i % 40},
        "limit": {"type": "integer", "minimum": 0, "maximum": 10 + i},
        "mode": {"enum": [f"m{i}", f"n{i}"]}}, "required": [f"key_{i}", "mode"]}}
    machine = Machine(compiler.compile([tool]), tool_choice="required", parallel_tool_calls=False)
    vocab = compiler.vocab
    for _ in range(400):  # values are bounded (maxLength, maximum, enum); JSON whitespace is not: skip it
        ids = machine.allowed_token_ids()
        token = int(ids[rng.randrange(ids.size)])
        for _ in range(8):
            if (vocab.token_bytes[token] or b"x").strip():
                break
            token = int(ids[rng.randrange(ids.size)])
        assert machine.advance(token)
        if machine.advanced.calls_completed:
            return
    raise AssertionError(f"request {i}: the call did not close in 400 tokens")


def test_three_thousand_new_schemas_stay_within_bounded_memory(smollm2_vocab: Vocabulary) -> None:
    rng = random.Random(11)
    compiler = Compiler(smollm2_vocab, Hermes())
    for i in range(100):  # warm-up: the vocabulary's tables and the first snapshots
        request(compiler, i, rng)
    gc.collect()
    before = rss_mb()
    for i in range(100, REQUESTS):
        request(compiler, i, rng)
    gc.collect()
    growth = rss_mb() - before
    print(f"RSS growth over {REQUESTS - 100} requests: {growth:.1f} MB")
    assert growth <= MAX_GROWTH_MB, growth
