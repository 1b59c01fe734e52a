"""The product speaks only of itself: no file or folder name, and no line of a text file, names a
step of its development, a ticket, or the people and sittings that made it.

A figure is cited by the command that made it, a behaviour by a section of docs/DESIGN.md; the
history stays in git. The patterns include those of the check CI runs before a change lands.
"""

from __future__ import annotations

import re

import pytest

from tests.repository import ROOT, repository_files

_NUMBER = r"[0-9]"
LINE_PATTERNS = {
    "a step number": re.compile(rf"\b[Ss]tops? ?{_NUMBER}{{2}}\b|\bstop{_NUMBER}+"),
    "a ticket number": re.compile(rf"\b[Ii]ssues? #?{_NUMBER}{{1,3}}\b"),
    "a working sitting": re.compile(
        r"\b(?:[Tt]his|[Tt]hat|[Tt]he same|[Aa]n earlier|[Ee]arlier|[Aa] later|[Pp]revious|[Tt]he last|[Tt]he next"
        r"|[Aa]nother|[Aa] developer's|[Aa] helper's) sessions?\b|\bsession's deadline\b"),
    "the team at work": re.compile(r"\b[Oo]ther agents?'?(?: jobs?| benchmarks?)?\b|\b[Aa] helper's\b"),
}
"""What no line of a text file may contain, by what it names."""

PATH_PATTERN = re.compile(rf"stop{_NUMBER}+|issue-?{_NUMBER}+", re.IGNORECASE)
"""What no file or folder name may contain."""

BINARY = (".png", ".jpg", ".gguf", ".bin", ".npz", ".gz", ".so")


def hits() -> list[str]:
    """Every line and path that names the development rather than the product, as ``path:line: text``."""
    found = []
    for path in repository_files():
        if PATH_PATTERN.search(path):
            found.append(f"{path}: the path names a development step or ticket")
        if path.endswith(BINARY):
            continue
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in LINE_PATTERNS.items():
                if pattern.search(line):
                    found.append(f"{path}:{number}: {what}: {line.strip()[:120]}")
    return found


def test_no_file_names_the_development() -> None:
    found = hits()
    assert not found, f"{len(found)} lines or paths name the development, not the product:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("line", [
    "measured at st" + "op 36, see below",
    "records in end_to_end-st" + "op39-qwen-after-1",
    "fixed in iss" + "ue 12 (the budgets)",
    "an earlier sess" + "ion ran it at load 4",
    "load 2 from other ag" + "ents' jobs",
])
def test_the_patterns_catch_what_they_are_for(line: str) -> None:
    assert any(p.search(line) for p in LINE_PATTERNS.values()), line


@pytest.mark.parametrize("line", [
    "session = Session(args.model)",
    "@pytest.fixture(scope=\"session\")",
    "the MCP server's session, from connect to close",
    "a token that stops the request",
    "the tools stop 1 s later",
])
def test_the_patterns_leave_the_product_alone(line: str) -> None:
    assert not any(p.search(line) for p in LINE_PATTERNS.values()), line


def test_test_modules_outside_packages_have_unique_names() -> None:
    """pytest imports a test module from a folder without ``__init__.py`` by its bare file name, so two such
    modules with one name make the whole run fail at collection."""
    by_name: dict[str, list[str]] = {}
    for path in repository_files():
        parts = path.split("/")
        if parts[0] != "tests" or not parts[-1].startswith("test_") or not path.endswith(".py"):
            continue
        folder = ROOT.joinpath(*parts[:-1])
        key = parts[-1] if not (folder / "__init__.py").exists() else path
        by_name.setdefault(key, []).append(path)
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, clashes
