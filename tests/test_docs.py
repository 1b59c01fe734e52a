"""The documentation site builds in strict mode (a broken link, anchor or API reference fails it),
and its home page and API page render in a real browser: headless Chromium, Debian's package,
which ``make setup`` installs (``scripts/setup.sh``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from tests.repository import ROOT

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
"""No sandbox (CI runs as root), no GPU, and nothing that reaches the network."""


class Page(HTMLParser):
    """What a rendered page shows: its title, its navigation links and its code blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.nav_links: list[str] = []
        self.code_blocks: list[str] = []
        self._in_title = False
        self._nav_depth = 0
        self._in_link = False
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "title":
            self._in_title = True
        elif tag == "nav" and "md-nav--primary" in classes:
            self._nav_depth = 1
        elif tag == "nav" and self._nav_depth:
            self._nav_depth += 1
        elif tag == "a" and self._nav_depth:
            self._in_link = True
            self.nav_links.append("")
        elif tag == "code" and self._open[-1:] == ["pre"]:
            self.code_blocks.append("")
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "nav" and self._nav_depth:
            self._nav_depth -= 1
        elif tag == "a":
            self._in_link = False
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._in_link:
            self.nav_links[-1] += data.strip()
        if "code" in self._open and "pre" in self._open and self.code_blocks:
            self.code_blocks[-1] += data


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    raise AssertionError("no chromium on PATH: `make setup` installs Debian's chromium package (scripts/setup.sh)")


def rendered(page: Path, profile: Path) -> Page:
    """The page's DOM after Chromium has loaded it and run its scripts."""
    dom = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=3000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True).stdout
    parsed = Page()
    parsed.feed(dom)
    return parsed


def test_the_site_builds_strictly_and_its_pages_render(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    for page, title, code in ((site / "index.html", "tooldec", "make demo"),
                              (site / "api" / "index.html", "API reference - tooldec", "Machine(")):
        shown = rendered(page, tmp_path / f"profile-{page.parent.name}")
        assert shown.title.strip() == title, shown.title
        assert {"Getting started", "The library", "API reference", "Results"} <= set(shown.nav_links), shown.nav_links
        assert any(code in block for block in shown.code_blocks), f"{page}: no code block with {code!r}"
