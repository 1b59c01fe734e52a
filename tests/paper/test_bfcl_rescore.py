"""benchmarks/bfcl_rescore.py on real saved BFCL rows (tests/fixtures/bfcl_saved, copied from the kept BFCL record).

The runner read ``tooldec_tag``'s texts with the tag-only Hermes parser; reread with every opener,
the 1.5B's fenced irrelevance calls are calls (so wrong), and SmolLM2's JSON echoed after its
closed tag is a second call. Rows the runner already read with every opener do not change.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "tests" / "fixtures" / "bfcl_saved"


@pytest.fixture(scope="module")
def rescore() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bfcl_rescore", ROOT / "benchmarks" / "bfcl_rescore.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bfcl_rescore"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def by_file(rescore: ModuleType, data_dir: Path) -> dict[str, Any]:
    return {f"{r.model}/{r.system}/{r.subset}": r for r in rescore.rescore_root(SAVED, data_dir)}


def test_fenced_irrelevance_calls_are_read_and_scored_wrong(rescore: ModuleType, data_dir: Path) -> None:
    r = by_file(rescore, data_dir)["qwen15/tooldec_tag/irrelevance"]
    assert (r.n, r.correct_saved, r.correct_now) == (3, 3, 0)
    assert r.changed == ["irrelevance_0", "irrelevance_1", "irrelevance_2"]
    # irrelevance_0 calls calculate_area_of_triangle, which is not offered: a syntax error
    assert (r.syntax_saved, r.syntax_now, r.invalid_saved) == (0, 1, 0)
    assert r.calls_now == 3


def test_rows_read_with_every_opener_already_do_not_change(rescore: ModuleType, data_dir: Path) -> None:
    r = by_file(rescore, data_dir)["qwen15/baseline/irrelevance"]
    assert (r.correct_saved, r.correct_now, r.changed) == (0, 0, [])
    assert (r.syntax_saved, r.invalid_saved) == (r.syntax_now, r.invalid_now)
    # and the reread calls are the saved ones, row by row
    for line in (SAVED / "qwen15" / "baseline" / "irrelevance.jsonl").read_text().splitlines():
        row = json.loads(line)
        functions = {it["id"]: it["function"] for it in rescore.bfcl.items(data_dir, "irrelevance")}
        now = rescore.rescore_row(row, functions[row["id"]], "baseline")
        assert now["calls"] == row["calls"] and now["invalid_kinds"] == row["invalid_kinds"]


def test_text_after_a_closed_tag_is_read_as_calls(rescore: ModuleType, data_dir: Path) -> None:
    r = by_file(rescore, data_dir)["smollm2/tooldec_tag/simple_python"]
    assert (r.n, r.correct_saved, r.correct_now) == (3, 2, 1)
    assert r.changed == ["simple_python_25"]  # its call echoed in a fence
    assert r.right_now == [True, False, False]
    assert (r.syntax_now, r.invalid_now) == (1, 2)  # _16: two unknown names


def test_table_and_command(rescore: ModuleType, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert rescore.main(["--root", str(SAVED), "--data", str(data_dir), "--changed"]) == 0
    out = capsys.readouterr().out
    assert "| qwen15 | tooldec_tag | irrelevance | 3 | 3 | 0* [0.000, 0.562] | 0 -> 1 | 0 -> 1 | 1.00 | 3 |" in out
    assert "smollm2/tooldec_tag/simple_python: simple_python_25" in out
