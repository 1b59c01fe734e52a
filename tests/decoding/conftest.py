"""Tool inventories from the benchmark data, and the brute-force oracle the masks are checked against."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.paper.datasets import bfcl_tools, funcqa_tools, kamel_tools, toolbench_tools
from tooldec.decoding import Machine
from tooldec.tools import ToolSet

INVENTORIES: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    "funcqa": lambda data: funcqa_tools(),
    "kamel": kamel_tools,
    "bfcl": bfcl_tools,
    "tooleval": toolbench_tools,
}


@pytest.fixture(scope="session")
def inventories(data_dir: Path) -> dict[str, ToolSet]:
    """The four benchmark inventories (of the full sets, or of the fixtures: see tests/conftest.py)."""
    return {name: ToolSet(load(data_dir)) for name, load in INVENTORIES.items()}


def brute_force(machine: Machine) -> np.ndarray:
    """Every token id that ``advance`` accepts, found by trying each one (the reference)."""
    size = machine.advanced.grammar.vocab.size
    allowed = []
    for tid in range(size):
        if machine.advance(tid):
            allowed.append(tid)
            machine.rollback()
    return np.array(allowed, dtype=np.int32)
