"""The kept records of the paper's experiments, read back.

A run writes ``<out>/<experiment>/<model>/<system>/<subset>.jsonl`` (one row per item) with a
``summary.json`` per system and the experiment's ``table.md``. The runs behind the report are
kept as one archive per experiment under ``benchmarks/results/paper/`` (``<experiment>.tar.gz``,
the ``<out>`` folder of its runs, made with ``tar``); this module reads an archive or a run's
folder alike.
"""

from __future__ import annotations

import contextlib
import json
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["RECORDS", "rows", "unpacked"]

RECORDS = Path(__file__).resolve().parents[1] / "results" / "paper"
"""Where the kept archives are: ``<experiment>.tar.gz``."""


@contextlib.contextmanager
def unpacked(record: Path) -> Iterator[Path]:
    """A folder that holds ``record``: the folder itself, or an archive extracted for the block.

    Raises:
        FileNotFoundError: ``record`` does not exist.
    """
    if record.is_dir():
        yield record
        return
    if not record.is_file():
        raise FileNotFoundError(f"no record at {record}")
    with tempfile.TemporaryDirectory(prefix="tooldec-record-") as folder, tarfile.open(record) as archive:
        archive.extractall(folder, filter="data")
        yield Path(folder)


def rows(folder: Path, run: str, system: str, subset: str) -> list[dict[str, Any]]:
    """The rows of one system on one subset, in item order (empty when it did not run).

    ``run`` is the ``<experiment>/<model>`` part of the path, e.g. ``"bfcl/qwen15"``.

    >>> rows(Path("/nonexistent"), "bfcl/qwen", "tooldec", "multiple")
    []
    """
    path = folder / run / system / f"{subset}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
