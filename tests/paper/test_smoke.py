"""Each paper experiment end to end on SmolLM2 with a couple of items: ToolDec writes no bad call.

The real 135M model, greedy; what is checked is the claim, not a score: every tooldec row has
0 tool syntax errors (unparseable calls, unknown tools, invalid arguments).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.paper.cli import main
from benchmarks.paper.experiments.common import Session
from benchmarks.paper.experiments.runner import run
from tests.backends.smollm2 import smollm2


@pytest.fixture(scope="module")
def session() -> Session:
    return Session("smollm2", loaded=smollm2())


@pytest.mark.parametrize(
    ("name", "subsets", "limit"),
    [
        ("funcqa", ("one_hop",), 2),
        ("generalization", ("kamel_30",), 2),
        ("restbench", ("tmdb",), 2),
        ("bfcl", ("simple_python", "parallel_multiple"), 2),
        ("tooleval", ("i3_instruction",), 1),
    ],
)
def test_tooldec_rows_have_no_tool_syntax_errors(session: Session, tmp_path: Path, data_dir: Path, name: str,
                                                 subsets: tuple[str, ...], limit: int) -> None:
    summary = run(name, session, "tooldec", data=data_dir, out=tmp_path, limit=limit, subsets=subsets)
    for subset in subsets:
        rows = [json.loads(line) for line in (tmp_path / name / "smollm2" / "tooldec" / f"{subset}.jsonl").open()]
        assert len(rows) == limit
        for row in rows:
            errors = row.get("invalid_kinds", []) + ["tool error"] * sum(
                row.get(k, 0) for k in ("name_errors", "argument_errors", "format_errors"))
            assert errors == [], (subset, row["text"])
        assert summary["subsets"][subset]["n"] == limit


def test_the_command_writes_results_table_and_plot(tmp_path: Path, data_dir: Path) -> None:
    code = main(["bfcl", "--model", "smollm2", "--system", "tooldec", "--subset", "irrelevance", "--limit", "1",
                 "--data", str(data_dir), "--out", str(tmp_path)])
    folder = tmp_path / "bfcl" / "smollm2"
    assert code == 0
    assert len((folder / "tooldec" / "irrelevance.jsonl").read_text().splitlines()) == 1
    assert json.loads((folder / "tooldec" / "summary.json").read_text())["setup"]["decoding"] == "greedy"
    assert (folder / "table.md").read_text().startswith("| subset | system |")
    assert (folder / "bfcl.png").read_bytes()[:4] == b"\x89PNG"


def test_unknown_benchmark_is_refused() -> None:
    with pytest.raises(SystemExit):
        main(["tablex"])


def test_generalization_tooldec_tag_opens_every_kamel_call_with_the_tag(session: Session, tmp_path: Path,
                                                                        data_dir: Path) -> None:
    run("generalization", session, "tooldec_tag", data=data_dir, out=tmp_path, limit=2, subsets=("kamel_30",))
    rows = [json.loads(line) for line in (tmp_path / "generalization" / "smollm2" / "tooldec_tag" / "kamel_30.jsonl").open()]
    assert len(rows) == 2
    for row in rows:
        assert row["text"].lstrip().startswith("<tool_call>") and row["invalid_kinds"] == [], row["text"]
        assert row["chosen"] is not None
    with pytest.raises(ValueError, match="KAMEL"):
        run("generalization", session, "tooldec_tag", data=data_dir, out=tmp_path, limit=1, subsets=("funcqa_seen",))
