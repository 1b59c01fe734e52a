"""``python -m benchmarks.paper.compare``: two systems of a kept record, item by item.

For each subset: how many items each system got right (with the 95% Wilson interval), how many
only one of them got right, and the exact sign test on those (McNemar's exact test). Both
systems are compared on the same items, in order: the first ``--limit`` both have::

    python -m benchmarks.paper.compare benchmarks/results/paper/bfcl.tar.gz bfcl/qwen15 tooldec_tag tooldec \\
        --subset parallel --subset parallel_multiple --limit 100

A record is an archive of ``benchmarks/results/paper`` or a run's ``--out`` folder.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .experiments.common import wilson
from .experiments.figure5 import sign_test
from .records import rows, unpacked

__all__ = ["Paired", "compare", "main"]


class Paired(NamedTuple):
    """Two systems on the same ``n`` items."""

    n: int
    first: int
    """Items the first system got right."""
    second: int
    only_first: int
    """Items only the first system got right."""
    only_second: int
    p: float
    """The exact two-sided sign test on ``only_first`` against ``only_second``."""


def compare(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> Paired:
    """Right counts and the sign test of two systems' rows on the same items (Wilson intervals:
    ``wilson(paired.first, paired.n)``).

    Raises:
        ValueError: the rows are not of the same items in the same order.

    Examples:
        >>> a = [{"id": 1, "correct": True}, {"id": 2, "correct": True}, {"id": 3, "correct": False}]
        >>> b = [{"id": 1, "correct": True}, {"id": 2, "correct": False}, {"id": 3, "correct": False}]
        >>> compare(a, b)
        Paired(n=3, first=2, second=1, only_first=1, only_second=0, p=1.0)
    """
    n = min(len(first), len(second))
    x, y = first[:n], second[:n]
    if [r.get("id", r.get("question")) for r in x] != [r.get("id", r.get("question")) for r in y]:
        raise ValueError("the two systems' rows are not the same items in the same order")
    right_x = [bool(r["correct"]) for r in x]
    right_y = [bool(r["correct"]) for r in y]
    only_x = sum(a and not b for a, b in zip(right_x, right_y))
    only_y = sum(b and not a for a, b in zip(right_x, right_y))
    return Paired(n, sum(right_x), sum(right_y), only_x, only_y, sign_test(only_x, only_y))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paper.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("record", type=Path, help="an archive of benchmarks/results/paper, or a run's --out folder")
    parser.add_argument("run", help="<experiment>/<model>, e.g. bfcl/qwen15")
    parser.add_argument("first", help="a system, e.g. tooldec")
    parser.add_argument("second", help="another system, e.g. baseline")
    parser.add_argument("--subset", action="append", required=True, help="a subset (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="the first N items only")
    args = parser.parse_args(argv)
    print(f"| subset | n | {args.first} right [95%] | {args.second} right [95%] | only {args.first} "
          f"| only {args.second} | sign test p |\n" + "| --- " * 7 + "|")
    with unpacked(args.record) as folder:
        for subset in args.subset:
            a = rows(folder, args.run, args.first, subset)[:args.limit]
            b = rows(folder, args.run, args.second, subset)[:args.limit]
            if not a or not b:
                print(f"| {subset} | no rows for {args.first if not a else args.second} | | | | | |")
                continue
            r = compare(a, b)
            (lo1, hi1), (lo2, hi2) = wilson(r.first, r.n), wilson(r.second, r.n)
            print(f"| {subset} | {r.n} | {r.first} [{lo1:.3f}, {hi1:.3f}] | {r.second} [{lo2:.3f}, {hi2:.3f}] "
                  f"| {r.only_first} | {r.only_second} | {r.p:.2g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
