"""Reread BFCL's saved outputs with every Hermes opener and score them again.

``python -m benchmarks.paper bfcl`` scores each system with its own dialect's parser (``Session.once``
calls ``dialect.parse_calls``): ``tooldec_tag`` decodes with ``Hermes(openers=["tag"])``, so its
texts were read by a parser that sees ``<tool_call>`` only, and a call it wrote in a Markdown fence
(the text is free where the mask did not engage, e.g. in auto mode on ``irrelevance``) was never
read. Rows saved by older code may also have been read by an older Hermes parser. This command
rereads the ``text`` of every saved row of every Hermes-format system (all of BFCL's:
``baseline``, ``repair``, ``tooldec``, ``tooldec_beam``, ``tooldec_tag``) with the every-opener
``Hermes()`` and scores it with the runner's own rules: ``bfcl.ast_match`` for correctness,
``call_errors`` for invalid calls and syntax errors (``repair`` rows get their names repaired
first, as the runner does). No model is run. Run from the repository root::

    TOOLDEC_DATA=../shared/data .venv/bin/python benchmarks/bfcl_rescore.py
    .venv/bin/python benchmarks/bfcl_rescore.py --root runs/bench/bfcl --changed   # a run of your own; list the items that change

Reads ``ROOT/<model>/<system>/<subset>.jsonl`` under each ``--root`` (default: the kept record,
``benchmarks/results/paper/bfcl.tar.gz``: its ``bfcl`` and ``rerun_2026-11-25/bfcl`` folders) and
prints one Markdown row per file: items, correct as saved and as reread (with the 95% Wilson
interval), syntax errors and invalid calls both ways, calls per item as reread, and how many items
changed their score. Writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.paper.experiments import bfcl  # noqa: E402
from benchmarks.paper.experiments.common import call_errors, wilson  # noqa: E402
from benchmarks.paper.records import RECORDS, unpacked  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402

RECORD = RECORDS / "bfcl.tar.gz"
ROOTS = ("bfcl", "rerun_2026-11-25/bfcl")
"""The folders of ``RECORD`` read by default."""


@dataclass
class Rescored:
    """One saved file, as saved and as reread with every Hermes opener."""

    model: str
    system: str
    subset: str
    n: int = 0
    correct_saved: int = 0
    correct_now: int = 0
    syntax_saved: int = 0
    syntax_now: int = 0
    invalid_saved: int = 0
    invalid_now: int = 0
    calls_now: int = 0
    changed: list[str] = field(default_factory=list)
    """Ids of the items whose score differs (right -> wrong or wrong -> right)."""
    right_now: list[bool] = field(default_factory=list)
    """The reread score of every row, in file order (for pairing)."""


def rescore_row(row: Mapping[str, Any], functions: Sequence[Mapping[str, Any]], system: str,
                dialect: Hermes | None = None) -> dict[str, Any]:
    """One saved row's text parsed with every Hermes opener and scored by the runner's rules.

    Returns ``{"correct", "syntax_error", "invalid_calls", "invalid_kinds", "calls"}`` as
    ``bfcl.score`` would have written them had it parsed with ``Hermes()``.
    """
    dialect = dialect or Hermes()
    tools = bfcl.toolset(functions)
    text = row["text"]
    calls = dialect.parse_calls(text)
    if system == "repair":
        from benchmarks.paper.experiments.repair import repair_call

        calls = [repair_call(c, tools, dialect) for c in calls]
    errors = call_errors(text, calls, tools, dialect)
    return {"correct": bfcl.ast_match(calls, row["ground_truth"], functions),
            "syntax_error": any(e in ("unknown_tool", "unparseable") for e in errors),
            "invalid_calls": len(errors), "invalid_kinds": errors,
            "calls": [[c.name, dict(c.arguments)] for c in calls]}


def rescore_file(path: Path, functions: Mapping[str, Sequence[Mapping[str, Any]]], *, model: str, system: str,
                 subset: str) -> Rescored:
    """Every row of one ``<subset>.jsonl``; ``functions`` maps an item id to its BFCL functions."""
    out = Rescored(model, system, subset)
    dialect = Hermes()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        now = rescore_row(row, functions[row["id"]], system, dialect)
        out.n += 1
        out.correct_saved += bool(row["correct"])
        out.correct_now += now["correct"]
        out.syntax_saved += bool(row["syntax_error"])
        out.syntax_now += now["syntax_error"]
        out.invalid_saved += int(row["invalid_calls"])
        out.invalid_now += now["invalid_calls"]
        out.calls_now += len(now["calls"])
        out.right_now.append(now["correct"])
        if now["correct"] != bool(row["correct"]):
            out.changed.append(row["id"])
    return out


def saved_files(root: Path) -> Iterator[tuple[str, str, str, Path]]:
    """``(model, system, subset, path)`` of every saved BFCL file under ``root``, in a fixed order
    (models by name, then the experiment's systems and subsets in their order)."""
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for system in bfcl.SYSTEMS:
            for subset in bfcl.SUBSETS:
                path = model_dir / system / f"{subset}.jsonl"
                if path.exists():
                    yield model_dir.name, system, subset, path


def rescore_root(root: Path, data: Path) -> list[Rescored]:
    """Every saved file under ``root`` (``<model>/<system>/<subset>.jsonl``), reread and rescored."""
    functions: dict[str, dict[str, Sequence[Mapping[str, Any]]]] = {}
    found = []
    for model, system, subset, path in saved_files(root):
        if subset not in functions:
            functions[subset] = {it["id"]: it["function"] for it in bfcl.items(data, subset)}
        found.append(rescore_file(path, functions[subset], model=model, system=system, subset=subset))
    return found


def table(results: Sequence[Rescored], *, root: str | None = None) -> str:
    """The Markdown table of :func:`rescore_root`'s results (a ``*`` marks a changed count)."""
    head = ("| model | system | subset | n | correct, saved | correct, every opener [95%] | syntax errors, "
            "saved -> reread | invalid calls, saved -> reread | calls / item, reread | items changed |")
    lines = [f"{root}:" if root else "", head, "|" + " --- |" * 10]
    for r in results:
        lo, hi = wilson(r.correct_now, r.n)
        star = "*" if r.correct_now != r.correct_saved else ""
        lines.append(f"| {r.model} | {r.system} | {r.subset} | {r.n} | {r.correct_saved} | "
                     f"{r.correct_now}{star} [{lo:.3f}, {hi:.3f}] | {r.syntax_saved} -> {r.syntax_now} | "
                     f"{r.invalid_saved} -> {r.invalid_now} | {r.calls_now / max(r.n, 1):.2f} | "
                     f"{len(r.changed)} |")
    return "\n".join(line for line in lines if line)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, action="append", default=None,
                        help="a folder of <model>/<system>/<subset>.jsonl (repeatable; default: "
                             + ", ".join(ROOTS) + " in " + str(RECORD.relative_to(_ROOT)) + ")")
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: $TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--changed", action="store_true", help="also list the ids of the items whose score changes")
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    with unpacked(RECORD) if not args.root else contextlib.nullcontext(Path()) as kept:
        for root in args.root or [kept / r for r in ROOTS]:
            results = rescore_root(root, data)
            print(table(results, root=str(root.relative_to(kept)) if not args.root else str(root)))
            if args.changed:
                for r in results:
                    if r.changed:
                        print(f"  {r.model}/{r.system}/{r.subset}: {', '.join(r.changed)}")
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
