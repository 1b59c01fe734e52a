"""tooldec ships its types (PEP 561): a user's ``mypy --strict`` reads them from the installed package.

The package is laid out as a wheel of this checkout installs it (its modules and the package data
``pyproject.toml`` names) in a folder on the path of a fresh ``mypy`` run, in a folder of its
own: mypy treats it as an installed package, which it reads only when ``py.typed`` is there
(``tests/test_packaging.py`` checks that the wheel holds it). Where the checkout is installed
editable, a copy without the marker is passed over for the checkout's own, so the marker's absence
is not tested here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "tooldec"

USER_SCRIPT = '''
from tooldec import Grammar, Machine, ToolSet, Vocabulary
from tooldec.backends import Generation, Generator
from tooldec.dialects import Hermes


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)])
machine = Machine(Grammar(ToolSet([add]), vocab, Hermes()), tool_choice="required")
accepted: bool = machine.advance(60)


def first_call(generator: Generator, prompt: list[int]) -> Generation:
    return generator.generate(prompt, max_new_tokens=32, grammar=machine.advanced.grammar, tool_choice="required")
'''


def installed(site: Path) -> None:
    """Write ``site/tooldec`` as a wheel of this checkout holds it."""
    found = re.search(r"^\[tool\.setuptools\.package-data\]\ntooldec = (\[.*\])$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert found is not None, "pyproject.toml names no package data"
    data: list[str] = json.loads(found.group(1))
    for pattern in ["**/*.py", *data]:
        for path in PACKAGE.glob(pattern):
            target = site / "tooldec" / path.relative_to(PACKAGE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def mypy(folder: Path, site: Path, script: str) -> subprocess.CompletedProcess[str]:
    (folder / "user.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("MYPYPATH", None)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                           sys.executable, "user.py"], cwd=folder, env=env, capture_output=True, text=True,
                          check=False, timeout=600)


def test_a_user_script_type_checks_against_the_installed_package(tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed(site)
    assert (site / "tooldec" / "py.typed").is_file()
    script = USER_SCRIPT + "machine.advance('<')  # a str where a token id goes\n"
    checked = mypy(tmp_path, site, script)
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    last = len(script.splitlines())  # the one error: the types are read, not Any, and the rest checks
    assert len(errors) == 1 and errors[0].startswith(f"user.py:{last}:") and "[arg-type]" in errors[0], checked.stdout
