"""What one llama.cpp decode step costs with 1, 2, 4 ... rows in its batch: the premise of
stepping several requests together (``tooldec serve --parallel N``, ``SlotBatch``) on this machine.

Run from the repository root::

    python benchmarks/batch_decode.py --model .cache/models/qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4.gguf --rows 1 2 4 8 --steps 30 --threads 2

Every slot holds the same short prompt; then each step decodes one more token for each of the
first N slots (its greedy pick) in one ``llama_decode``, as the server's worker does. Reported per
N: the median milliseconds per step, tokens per second over all rows, and the speed-up in tokens
per second over one row. Where decoding is bound by reading the weights, N rows cost little more
than one; where it is bound by arithmetic (few cores), much more.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT / "src"))

from tooldec.backends.llamabatch import SlotBatch  # noqa: E402
from tooldec.backends.llamacpp import load_llama  # noqa: E402

PROMPT = ("You are a helpful assistant with tools for weather, maps and calendars. "
          "The user asks: what will the weather be in Paris and in Lyon tomorrow morning, "
          "and should I take an umbrella to the office?")


def timed_steps(batch: SlotBatch, ids: list[int], rows: int, steps: int) -> list[float]:
    """Seconds per step of ``rows`` slots, each slot's prompt evaluated first (not timed)."""
    picks = []
    for slot in range(rows):
        batch.begin(slot, ids)
        first = None
        while first is None:
            _, first = batch.step([], prompt=slot)
        picks.append(int(np.argmax(first)))
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        logits, _ = batch.step(list(enumerate(picks)))
        picks = [int(np.argmax(row)) for row in logits]
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a .gguf file")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per row count")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    parser.add_argument("--out", type=Path, default=_ROOT / "runs" / "batch-decode")
    args = parser.parse_args(argv)

    llm, tokenizer = load_llama(args.model, n_ctx=512, threads=args.threads)
    slots = max(args.rows)
    batch = SlotBatch(llm, slots, n_ctx=slots * 512)
    ids = list(tokenizer.encode(PROMPT, add_special_tokens=False))
    timed_steps(batch, ids, 1, 3)  # warm-up: first use of the context's buffers
    results: list[dict[str, Any]] = []
    for rows in tqdm(args.rows, unit="batch size"):
        seconds = timed_steps(batch, ids, rows, args.steps)
        median = statistics.median(seconds)
        results.append({"model": args.model.name, "rows": rows, "steps": args.steps, "threads": args.threads,
                        "median_ms": 1000 * median, "tokens_per_s": rows / median,
                        "load": os.getloadavg()[0], "step_ms": [1000 * s for s in seconds]})
    one = results[0]["tokens_per_s"] if results[0]["rows"] == 1 else None
    print(f"{args.model.name} on llama.cpp ({platform.machine()}, {args.threads or os.cpu_count()} threads), "
          f"{args.steps} steps per batch size, medians\n")
    print("| rows | ms per step | tokens/s | vs one row |")
    print("|---|---|---|---|")
    for r in results:
        gain = f"{r['tokens_per_s'] / one:.2f}x" if one else "-"
        print(f"| {r['rows']} | {r['median_ms']:.1f} | {r['tokens_per_s']:.1f} | {gain} |")
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "batch_decode.jsonl").open("a") as sink:
        for r in results:
            sink.write(json.dumps(r) + "\n")
    print(f"\nresults in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
