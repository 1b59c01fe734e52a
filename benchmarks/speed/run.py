"""Side-by-side speed of tooldec, XGrammar, llguidance and outlines-core on Hermes tool calls.

Run from the repository root::

    python -m benchmarks.speed.run                 # every cell, 3 repeats
    python -m benchmarks.speed.run --quick         # smoke test: the 13-tool cell once
    python -m benchmarks.speed.run --engines xgrammar,llguidance --sizes 13,1000 --tokenizers qwen3

Each (engine, tokenizer, size, repeat) runs in a fresh process with a time limit; raw records
go to ``OUT/speed.jsonl`` (``--append`` keeps those of the cells not run again), the table of
medians over repeats to stdout and ``OUT/speed.md``, the plot to ``OUT/speed.png``. A cell that times out
stops the larger sizes of the same engine and tokenizer; a cell that fails is not repeated
(its failure is deterministic).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .engines import ENGINES

__all__ = ["aggregate", "format_table", "main"]

_ROOT = Path(__file__).resolve().parents[2]
SIZES = (13, 234, 1000, 10000)
TOKENIZERS = ("llama3", "qwen3")


def _run_one(engine: str, tokenizer: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.speed.cell", "--engine", engine,
           "--tokenizer", tokenizer, "--size", str(size), "--calls", str(args.calls)]
    if args.data:
        cmd += ["--data", args.data]
    if tokenizer in args.tokenizer_json:
        cmd += ["--tokenizer-json", args.tokenizer_json[tokenizer]]
    base = {"engine": engine, "tokenizer": tokenizer, "tools": size}
    try:
        proc = subprocess.run(cmd, cwd=_ROOT, capture_output=True, text=True,
                              timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        return {**base, "status": f"timeout (> {args.timeout:g} s)"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {**base, "status": f"crash (exit {proc.returncode}): {tail[:200]}"}
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def _cells(args: argparse.Namespace) -> list[tuple[int, str, int, str]]:
    return [(r, tok, size, eng) for r in range(args.repeats) for tok in args.tokenizers
            for size in sorted(args.sizes) for eng in args.engines]


def aggregate(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medians over the successful repeats of each (engine, tokenizer, tools) cell.

    A cell with no successful repeat keeps the status of its first failure.
    """
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for rec in records:
        groups.setdefault((rec["engine"], rec["tokenizer"], rec["tools"]), []).append(rec)
    rows = []
    for (engine, tokenizer, tools), recs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        ok = [r for r in recs if r.get("status") == "ok"]
        row: dict[str, Any] = {"engine": engine, "tokenizer": tokenizer, "tools": tools,
                               "repeats": len(ok), "status": "ok" if ok else recs[0]["status"]}
        src = ok or recs
        row["version"] = next((r["version"] for r in src if r.get("version")), "")
        row["mode"] = next((r["mode"] for r in src if r.get("mode")), "")

        def med(get: Any, rows: list[dict[str, Any]] = ok) -> float | None:
            vals = [v for v in (get(r) for r in rows) if v is not None]
            return float(np.median(vals)) if vals else None

        for key in ("tokenizer_s", "register_s", "compile_s", "ttfm_s", "ttfm_cpu_s", "ttfm_warm_ms",
                    "peak_mem_mb", "tokenizer_mem_mb", "rejected_tokens", "rejected_calls",
                    "tokens", "load_before", "load_after", "again_ms"):
            row[key] = med(lambda r, k=key: r.get(k))
        # From the tool list: registration (validation, normalisation) + compile + the first mask.
        row["from_list_s"] = med(lambda r: None if r.get("ttfm_s") is None else (r.get("register_s") or 0.0) + r["ttfm_s"])
        for stat in ("p50", "p99", "max"):
            row[f"mask_{stat}_us"] = med(lambda r, s=stat: (r.get("mask_us") or {}).get(s))
            row[f"warm_{stat}_us"] = med(lambda r, s=stat: (r.get("mask_warm_us") or {}).get(s))
        if not ok:  # keep what a failed cell measured before failing (e.g. tokenizer time)
            for key in ("tokenizer_s", "compile_s"):
                row[key] = src[0].get(key)
        rows.append(row)
    return rows


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 1:
        return f"{value:.2f} s"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    return f"{value * 1000:.1f} ms" if value >= 0.01 else f"{value * 1000:.2f} ms"


def _fmt_us(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.1f} µs"


def _fmt(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def format_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of the aggregated rows (one line per cell)."""
    head = ["tokenizer", "tools", "engine", "status", "tokenizer set-up", "tool registration", "first mask",
            "(CPU)", "first mask from tool list", "same tools again", "first mask (warm)", "mask p50", "mask p99", "mask max", "warm p50", "warm p99", "peak mem", "rejected"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        engine = f"{r['engine']} {r['version']}".strip() + (" (tool mode only)" if r["mode"] == "tool-only" else "")
        status = "ok" if r["status"] == "ok" else r["status"].replace("|", "/")
        rejected = "–" if r["tokens"] is None else f"{r['rejected_tokens']:.0f}/{r['tokens']:.0f}"
        warm = "–" if r["ttfm_warm_ms"] is None else _fmt_s(r["ttfm_warm_ms"] / 1000)
        out.append("| " + " | ".join([
            r["tokenizer"], f"{r['tools']:,}", engine, status, _fmt_s(r["tokenizer_s"]),
            _fmt_s(r.get("register_s")) if r.get("register_s") is not None and r["register_s"] > 1e-4 else "(in compile)",
            _fmt_s(r["ttfm_s"]), _fmt_s(r.get("ttfm_cpu_s")), _fmt_s(r.get("from_list_s")),
            "–" if r.get("again_ms") is None else _fmt_s(r["again_ms"] / 1000), warm, _fmt_us(r["mask_p50_us"]),
            _fmt_us(r["mask_p99_us"]), _fmt_us(r["mask_max_us"]), _fmt_us(r.get("warm_p50_us")), _fmt_us(r.get("warm_p99_us")),
            "–" if r["peak_mem_mb"] is None else f"+{r['peak_mem_mb']:.0f} MB", rejected,
        ]) + " |")
    loads = [r[k] for r in rows for k in ("load_before", "load_after") if r.get(k) is not None]
    if loads:
        out.append(f"\n1-minute load average during the cells: {min(loads):.1f} to {max(loads):.1f} "
                   f"on {os.cpu_count()} cores (wall times above ~1 per core are inflated; "
                   "the CPU column is the process's CPU time, all threads).")
    return "\n".join(out)


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records), encoding="utf-8")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated, from {', '.join(ENGINES)}")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="inventory sizes")
    parser.add_argument("--tokenizers", default=",".join(TOKENIZERS), help="llama3, qwen3")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per cell")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell")
    parser.add_argument("--calls", type=int, default=60, help="gold calls per cell (>= 50)")
    parser.add_argument("--out", default=str(_ROOT / "runs" / "speed"))
    parser.add_argument("--data", default=None, help="benchmark data (default TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--tokenizer-json", action="append", default=[], metavar="NAME=PATH",
                        help="use this tokenizer.json for NAME")
    parser.add_argument("--quick", action="store_true", help="smoke test: 13 tools, one repeat")
    parser.add_argument("--append", action="store_true",
                        help="keep the records of other cells in OUT/speed.jsonl (cells run now replace theirs)")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    args.engines = [e for e in args.engines.split(",") if e]
    unknown = [e for e in args.engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {unknown}; choose from {list(ENGINES)}")
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.tokenizers = [t for t in args.tokenizers.split(",") if t]
    if args.quick:
        args.sizes, args.repeats = [13], 1
    pairs = [item.split("=", 1) for item in args.tokenizer_json]
    if any(len(p) != 2 for p in pairs):
        parser.error("--tokenizer-json takes NAME=PATH")
    args.tokenizer_json = dict(pairs)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the cells, write the raw records, print the table, draw the plot."""
    args = _parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    raw_path = out / "speed.jsonl"
    records: list[dict[str, Any]] = []
    cells = _cells(args)
    if args.append and raw_path.is_file():
        with open(raw_path, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
    fresh: set[tuple[str, str, int]] = set()  # cells whose old records are dropped (on their first new one)
    stopped: dict[tuple[str, str], int] = {}  # (engine, tokenizer) -> size that timed out
    failed: set[tuple[str, str, int]] = set()
    with tqdm(cells, unit="cell", file=sys.stderr) as bar:
        for repeat, tok, size, eng in bar:
            bar.set_postfix_str(f"{eng} {tok} {size} tools #{repeat + 1}")
            limit = stopped.get((eng, tok))
            if (eng, tok, size) in failed or (limit is not None and size > limit):
                continue
            rec = _run_one(eng, tok, size, args)
            rec["repeat"] = repeat
            rec["machine"] = {"cpu": platform.processor() or platform.machine(),
                              "cores": os.cpu_count()}
            if (eng, tok, size) not in fresh:
                fresh.add((eng, tok, size))
                records = [r for r in records if (r["engine"], r["tokenizer"], r["tools"]) != (eng, tok, size)]
            records.append(rec)
            _write_records(raw_path, records)  # whole file each time: a stopped run loses nothing
            status = rec.get("status", "")
            if status.startswith("timeout"):
                stopped[(eng, tok)] = size
                failed.add((eng, tok, size))
            elif status != "ok":
                failed.add((eng, tok, size))
    for (eng, tok), size in sorted(stopped.items()):
        for bigger in (s for s in sorted(args.sizes) if s > size):
            records = [r for r in records if (r["engine"], r["tokenizer"], r["tools"]) != (eng, tok, bigger)]
            records.append({"engine": eng, "tokenizer": tok, "tools": bigger,
                            "status": f"skipped (timeout at {size:,} tools)"})
    _write_records(raw_path, records)
    rows = aggregate(records)
    table = format_table(rows)
    print(table)
    (out / "speed.md").write_text(table + "\n", encoding="utf-8")
    with open(out / "speed_summary.json", "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1)
    print(f"\nraw records: {raw_path}", file=sys.stderr)
    if not args.no_plot:
        from .plot import plot

        png = plot(rows, out / "speed.png")
        print(f"plot: {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
