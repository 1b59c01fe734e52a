"""Batched masks: one ``fill_bitmasks`` call for many cursors per decoding step.

A server decodes many sequences at once and needs every row's mask before each step. This
command runs ``--batch`` cursors in lockstep, each writing a different gold call (BFCL workload,
``--tools`` in the inventory, Hermes after free text), and times one ``fill_bitmasks`` over all
rows per step: first with every tool's automaton new (cold: a server getting new requests), then
the same calls again (warm). Rows whose call has ended are ``None`` (left unmasked), as in a batch
where sequences finish at different steps. Prints p50 / p99 / max per pass and writes a JSON line.

    python -m benchmarks.speed.batch --tokenizer qwen3 --tools 1000 --batch 64
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from tooldec.decoding import Compiler, Machine, fill_bitmasks
from tooldec.dialects import Hermes
from tooldec.tokens import from_tokenizer_json
from tooldec.tools import ToolSet

from .inventory import data_dir
from .tokenizers import load_hf_tokenizer, tokenizer_json_path
from .workload import Case, cell_workload, tokenize_cases


def _percentiles(values_ns: list[int]) -> dict[str, float]:
    us = np.asarray(values_ns, dtype=np.float64) / 1e3
    return {"p50": float(np.percentile(us, 50)), "p99": float(np.percentile(us, 99)), "max": float(us.max())}


def run_pass(compiler: Compiler, tools: ToolSet, cases: list[Case], bitmask: np.ndarray) -> tuple[list[int], int]:
    """One lockstep pass over ``cases``; returns the time of each step's fill and the rejected gold tokens."""
    grammar = compiler.compile(tools)
    machines: list[Machine | None] = []
    for case in cases:
        machine = Machine(grammar)
        if not all(machine.advance(tok) for tok in case.tokens[: case.trigger_end]):
            raise RuntimeError(f"the free text or trigger was refused: {case.text[:80]!r}")
        machines.append(machine)
    bodies = [case.tokens[case.trigger_end:] for case in cases]
    steps: list[int] = []
    rejected = 0
    for step in range(max(len(body) for body in bodies)):
        rows: list[Machine | None] = [m if step < len(bodies[i]) else None for i, m in enumerate(machines)]
        start = time.perf_counter_ns()
        fill_bitmasks(rows, bitmask)
        steps.append(time.perf_counter_ns() - start)
        for i, machine in enumerate(rows):
            if machine is None:
                continue
            tok = bodies[i][step]
            if not (int(bitmask[i, tok >> 5]) >> (tok & 31)) & 1 or not machine.advance(tok):
                rejected += 1
                machines[i] = None
                bodies[i] = bodies[i][:step]
    return steps, rejected


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", default="qwen3", help="qwen3 or llama3")
    parser.add_argument("--tools", type=int, default=1000, help="inventory size")
    parser.add_argument("--batch", type=int, default=64, help="cursors filled per step")
    parser.add_argument("--data", default=None, help="benchmark data (default: TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=None, help="append the JSON record to this file")
    args = parser.parse_args(argv)

    tokenizer_json = tokenizer_json_path(args.tokenizer)
    tools, calls = cell_workload(data_dir(args.data), args.tools, args.batch)
    cases = tokenize_cases(load_hf_tokenizer(tokenizer_json), calls)
    vocab = from_tokenizer_json(tokenizer_json)
    compiler = Compiler(vocab, Hermes(openers=["tag"]))
    toolset = ToolSet(tools)
    bitmask = np.zeros((len(cases), (vocab.size + 31) // 32), dtype=np.int32)
    load = os.getloadavg()[0]
    cold, rejected_cold = run_pass(compiler, toolset, cases, bitmask)
    warm, rejected_warm = run_pass(compiler, toolset, cases, bitmask)
    record = {"tokenizer": args.tokenizer, "tools": args.tools, "batch": len(cases), "steps": len(cold),
              "cold_us": _percentiles(cold), "warm_us": _percentiles(warm),
              "rejected_gold_tokens": rejected_cold + rejected_warm,
              "load_before": load, "load_after": os.getloadavg()[0]}
    for name in ("cold", "warm"):
        p = record[f"{name}_us"]
        print(f"{name}: one fill of {len(cases)} rows, p50 {p['p50'] / 1e3:.2f} ms, p99 {p['p99'] / 1e3:.2f} ms,"
              f" max {p['max'] / 1e3:.2f} ms over {len(cold)} steps")
    print(f"rejected gold tokens: {record['rejected_gold_tokens']}; load {load:.1f} -> {record['load_after']:.1f}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as f:
            f.write(json.dumps(record) + "\n")
    return record


if __name__ == "__main__":
    main()
