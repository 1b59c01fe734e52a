"""MkDocs hooks: the results page shows plots that live with their records in benchmarks/results.

docs/RESULTS.md links them as ``../benchmarks/results/...`` (right from the docs folder, as a
repository browser reads it); the site gets them at ``benchmarks/results/...`` beside its pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
PLOTS = "benchmarks/results"


def on_files(files: Files, config: Any) -> Files:
    """Add every plot of the kept records to the site."""
    for plot in sorted((ROOT / PLOTS).rglob("*.png")):
        files.append(File(plot.relative_to(ROOT).as_posix(), src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Point the results page's plot links at the plots' place in the site."""
    return markdown.replace(f"](../{PLOTS}/", f"]({PLOTS}/")
