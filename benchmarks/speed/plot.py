"""The speed benchmark's figure: time to first mask, per-token mask time and memory vs tools.

One row of panels per tokenizer; one colour per engine. A cell that failed or timed out is
drawn as a cross at the top of the panel with its reason, so a missing point is never silent.
Usage: ``python -m benchmarks.speed.plot benchmarks/results/speed/peers.jsonl [OUT.png]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

__all__ = ["main", "plot"]

COLOURS = {"tooldec": "tab:red", "xgrammar": "tab:blue", "llguidance": "tab:green",
           "outlines-core": "tab:purple"}
PANELS = (
    ("from_list_s", "first tool-mode mask from the tool list (s)\n(registration + compile + prefix + trigger + mask)"),
    ("mask_p50_us", "next-token mask (µs)\np50 solid, p99 dashed"),
    ("peak_mem_mb", "peak memory above tokenizer (MB)"),
)


_REASONS = (("timeout", "timeout"), ("panic", "panic"), ("skipped", "skipped"),
            ("crash", "crash"), ("setup", "not installed?"), ("Unsupported", "unsupported schema"),
            ("too big", "grammar too big"))


def _short(status: str) -> str:
    """A two-word reason for a failed cell, to print beside its cross."""
    return next((label for key, label in _REASONS if key in status), "error")


def _panel(ax: Axes, rows: list[dict[str, Any]], key: str) -> None:
    failures: list[tuple[str, int, str]] = []
    for engine, colour in COLOURS.items():
        mine = sorted((r for r in rows if r["engine"] == engine), key=lambda r: r["tools"])
        ok = [r for r in mine if r["status"] == "ok" and r.get(key) is not None]
        failures += [(engine, r["tools"], _short(r["status"])) for r in mine if r["status"] != "ok"]
        if not ok:
            continue
        xs = [r["tools"] for r in ok]
        ax.plot(xs, [max(r[key], 1e-6) for r in ok], "o-", color=colour, label=engine)
        if key == "mask_p50_us":
            ax.plot(xs, [r["mask_p99_us"] for r in ok], "o--", color=colour, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    sizes = sorted({r["tools"] for r in rows})
    ax.set_xlim(min(sizes) / 1.8, max(sizes) * 1.8)
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.minorticks_off()
    if failures:  # room above the points for the crosses
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * (high / low) ** 0.25)
    for i, (engine, tools, why) in enumerate(failures):
        ax.plot([tools], [0.97], "x", color=COLOURS.get(engine, "k"), markersize=9,
                transform=ax.get_xaxis_transform(), clip_on=False)
        ax.annotate(why, (tools, 0.97 - 0.05 * (i % 4 + 1)), xycoords=("data", "axes fraction"),
                    color=COLOURS.get(engine, "k"), fontsize=7, ha="center")
    ax.grid(True, which="both", alpha=0.3)


def plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """Draw the aggregated rows (see ``run.aggregate``) into ``path`` as a PNG."""
    tokenizers = sorted({r["tokenizer"] for r in rows})
    fig, axes = plt.subplots(len(tokenizers), len(PANELS), figsize=(15, 4.2 * len(tokenizers)),
                             squeeze=False)
    for i, tok in enumerate(tokenizers):
        mine = [r for r in rows if r["tokenizer"] == tok]
        for j, (key, title) in enumerate(PANELS):
            ax = axes[i][j]
            _panel(ax, mine, key)
            ax.set_title(f"{tok}: {title}", fontsize=9)
            ax.set_xlabel("tools in the inventory")
        axes[i][0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Hermes tool calls: constrained-decoding speed (medians over fresh processes)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    """Re-draw the figure from a raw ``speed.jsonl``."""
    from .run import aggregate

    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    raw = Path(args[0])
    with open(raw, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    out = Path(args[1]) if len(args) > 1 else raw.with_suffix(".png")
    print(plot(aggregate(records), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
