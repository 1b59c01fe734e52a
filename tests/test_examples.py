"""The library page's example (docs/library.md), as a script, runs and says what the page says it does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_runs() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "tokens allowed" in out.stdout and "tokens to close the call:" in out.stdout
