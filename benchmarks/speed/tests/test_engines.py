"""Each installed engine adapter accepts every gold token and really masks.

Peers are the optional ``bench`` extra: a missing one is skipped, not failed. No timing is
asserted anywhere (timings belong to the benchmark's output, not to tests).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from benchmarks.speed.cell import run_cell
from benchmarks.speed.engines import ENGINES, load_engine
from benchmarks.speed.inventory import data_dir
from benchmarks.speed.run import aggregate, format_table
from benchmarks.speed.tokenizers import load_hf_tokenizer, tokenizer_json_path
from benchmarks.speed.workload import cell_workload, tokenize_cases

DATA = data_dir()
PACKAGES = {"tooldec": "tooldec", "xgrammar": "xgrammar", "llguidance": "llguidance",
            "outlines-core": "outlines_core"}


def _need(engine: str, tokenizer: str) -> Path:
    if importlib.util.find_spec(PACKAGES[engine]) is None:
        pytest.skip(f"{engine} is not installed (pip install -r benchmarks/speed/requirements.txt)")
    if not (DATA / "bfcl").is_dir():
        pytest.skip(f"no benchmark data at {DATA}")
    try:
        return tokenizer_json_path(tokenizer)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("tokenizer", ["qwen3", "llama3"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_adapter_masks_and_accepts_gold_calls(engine: str, tokenizer: str) -> None:
    path = _need(engine, tokenizer)
    hf = load_hf_tokenizer(path)
    size = 13 if engine == "outlines-core" else 234  # outlines-core needs minutes for 234 tools
    tools, calls = cell_workload(DATA, size, 60)
    cases = tokenize_cases(hf, calls[:8])
    adapter = load_engine(engine)
    adapter.load_tokenizer(path, hf)
    adapter.compile(tools)
    bitmask = np.zeros((1, (adapter.vocab_size + 31) // 32), dtype=np.int32)
    for case in cases:
        adapter.start()
        if adapter.trigger_mode:
            prefix, body = case.tokens[: case.trigger_end], case.tokens[case.trigger_end :]
        else:
            prefix, body = [], case.call_tokens
        assert all(adapter.advance(t) for t in prefix)
        for i, tok in enumerate(body):
            bitmask[:] = 0
            adapter.fill(bitmask)
            allowed = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: adapter.vocab_size]
            assert allowed[tok], f"{engine} masked gold token {hf.decode([tok])!r} of {case.text!r}"
            if i == 0:  # right after the trigger only the call's fixed text may follow
                assert 0 < allowed.sum() < adapter.vocab_size // 100
            assert adapter.advance(tok)


def test_cell_record_and_table() -> None:
    path = _need("xgrammar", "qwen3")
    rec = run_cell("xgrammar", "qwen3", 13, data=DATA, tokenizer_json=path, n_calls=50)
    assert rec["status"] == "ok"
    assert rec["rejected_tokens"] == rec["rejected_calls"] == 0
    assert rec["masks"] > rec["tokens"] // 2 > 0
    assert set(rec["mask_us"]) == {"p50", "p99", "max", "mean"}
    failed = {"engine": "llguidance", "tokenizer": "qwen3", "tools": 13, "status": "decode: panic: x"}
    rows = aggregate([rec, {**rec, "repeat": 1}, failed])
    assert [(r["engine"], r["status"], r["repeats"]) for r in rows] == [
        ("llguidance", "decode: panic: x", 0), ("xgrammar", "ok", 2)]
    assert rows[1]["mask_p50_us"] == rec["mask_us"]["p50"]
    table = format_table(rows)
    assert "panic: x" in table and "xgrammar 0.2" in table
