"""Tool inventories from the benchmark data, and the brute-force oracle the masks are checked against."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tooldec.bench.datasets import bfcl_tools, data_dir, funcqa_tools, kamel_tools, toolbench_tools
from tooldec.decoding import Machine
from tooldec.tools import ToolSet

INVENTORIES: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "funcqa": funcqa_tools,
    "kamel": kamel_tools,
    "bfcl": bfcl_tools,
    "tooleval": toolbench_tools,
}


@pytest.fixture(scope="session")
def inventories() -> dict[str, ToolSet]:
    if not (data_dir() / "bfcl").is_dir():
        pytest.skip(f"benchmark data not found at {data_dir()} (set TOOLDEC_DATA)")
    return {name: ToolSet(load()) for name, load in INVENTORIES.items()}


def brute_force(machine: Machine) -> np.ndarray:
    """Every token id that ``advance`` accepts, found by trying each one (the reference)."""
    size = machine.grammar.vocab.size
    allowed = []
    for tid in range(size):
        if machine.advance(tid):
            allowed.append(tid)
            machine.rollback()
    return np.array(allowed, dtype=np.int32)
