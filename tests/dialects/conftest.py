"""Real tools for the dialect tests: BFCL's simple_python functions and FuncQA's 13 operators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.paper.datasets import funcqa_tools
from tooldec.tools import Tool


@pytest.fixture(scope="session")
def bfcl_items(data_dir: Path) -> list[dict[str, object]]:
    """BFCL v4 simple_python items, each with its gold answer under ``"answer"``."""
    answers = {}
    for line in (data_dir / "bfcl" / "possible_answer" / "BFCL_v4_simple_python.json").read_text().splitlines():
        item = json.loads(line)
        answers[item["id"]] = item["ground_truth"]
    items = []
    for line in (data_dir / "bfcl" / "BFCL_v4_simple_python.json").read_text().splitlines():
        item = json.loads(line)
        items.append({**item, "answer": answers[item["id"]]})
    return items


@pytest.fixture(scope="session")
def bfcl_tools(bfcl_items: list[dict[str, object]]) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for item in bfcl_items:
        for spec in item["function"]:  # type: ignore[attr-defined]
            tools.setdefault(spec["name"], Tool.from_dict(spec))
    return tools


@pytest.fixture(scope="session")
def funcqa() -> dict[str, Tool]:
    """FuncQA's operators as the benchmark defines them (``add`` and ``multiply`` take any count)."""
    return {spec["name"]: Tool.from_dict(spec) for spec in funcqa_tools()}
