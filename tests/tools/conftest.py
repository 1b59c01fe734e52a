"""Where the benchmark data is: ``TOOLDEC_DATA``, else ``../shared/data`` beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = Path(os.environ.get("TOOLDEC_DATA", REPO.parent / "shared" / "data"))
    if not path.is_dir():
        pytest.skip(f"benchmark data not found at {path} (set TOOLDEC_DATA)")
    return path
