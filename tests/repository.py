"""The repository's own files, for the tests that check what the repository says about itself.

In a checkout, the files git tracks; in a copy without git (``scripts/test_fresh_copy.sh`` copies
exactly those files), every file under the root but environments, caches and build outputs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder."""

_NOT_SOURCE = {".git", ".venv", ".venv-vllm", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
               ".ruff_cache", ".hypothesis", ".cache", "build", "dist", "site", "runs"}
"""Folders that hold environments, caches and build outputs (git ignores them), never sources."""


def repository_files() -> list[str]:
    """Paths, relative to the root, of the files the repository holds (see the module docstring)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        listed = b""
    if listed:
        return sorted({p for p in listed.decode().split("\0") if p and (ROOT / p).is_file()
                       and not (ROOT / p).is_symlink()})
    found = []
    for folder, subfolders, files in os.walk(ROOT):  # symlinked folders are not entered
        subfolders[:] = [d for d in subfolders if d not in _NOT_SOURCE and not d.endswith(".egg-info")]
        for name in files:
            path = Path(folder, name)
            if not path.is_symlink() and path.suffix != ".so":
                found.append(path.relative_to(ROOT).as_posix())
    return sorted(found)
