"""What ``pip install tooldec`` ships: the library, the CLI and the server; the paper's experiments
and the benchmark records stay in the repository (``benchmarks/``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.repository import ROOT, repository_files


def test_the_wheel_holds_the_library_and_no_experiments(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a clean copy: no build/ left over from an older layout
    for path in repository_files():
        if path in ("pyproject.toml", "setup.py", "README.md") or path.startswith("src/"):
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, source / path)
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check", "--wheel",
                    "--outdir", str(tmp_path / "dist"), str(source)], check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("tooldec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    packages = {n.split("/")[1] for n in names if n.startswith("tooldec/") and n.count("/") > 1}
    assert {"decoding", "dialects", "runtime", "serving", "tools"} <= packages, packages
    assert "tooldec/cli.py" in names
    assert "tooldec/py.typed" in names, "a user's mypy would not read tooldec's types"
    assert not [n for n in names if n.startswith(("tooldec/bench/", "benchmarks/"))], "the wheel ships experiments"


def test_the_repository_tracks_no_environment_or_installed_packages() -> None:
    """A committed ``node_modules`` or ``.venv`` (a worktree's link to the installed copy, say) is
    checked out over the installed packages of every clone."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return  # a copy without git: scripts/test_fresh_copy.sh copies only what git tracks
    installed = ("node_modules", ".venv", ".venv-vllm", ".cache")
    found = [p for p in listed.splitlines() if p.split("/")[0] in installed]
    assert not found, found
