"""Masks under a token budget: required mode, as a server with ``max_tokens`` computes them.

A server that must return a call within ``max_tokens`` masks every token with the budget left, so
only tokens after which the call can still close are allowed. This command writes each gold call
(BFCL workload, ``--tools`` in the inventory, Hermes, ``tool_choice="required"``) with a budget of
``--budget`` minus the tokens already written, and times every mask by the kind of position it is
at (opener, head, name, arguments): first with every tool new (cold), then the same calls again
(warm). Prints p50 / mean per kind and pass, and writes a JSON line with them.

    python -m benchmarks.speed.budgets --tokenizer qwen3 --tools 1000 --budget 128

With ``--counters 100,10000,1000000`` it times instead the masks inside a counter: one tool whose
argument is an array of integers with ``minItems`` N, a call written token by token (a random
allowed token each step, seeded) with a budget of the call's need plus ``--slack`` minus what is
written, up to ``--steps`` steps per N, stopping where the call closes (N = 100 closes sooner); each
step's ``fill_bitmask`` with the budget, then without it (the same position). Prints per N the
steps timed, the median, p99 and mean per step, and the first step.

    python -m benchmarks.speed.budgets --tokenizer qwen3 --counters 100,1000,10000,100000,1000000 --steps 1000
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary, from_tokenizer_json
from tooldec.tools import ToolSet

from .inventory import data_dir
from .tokenizers import load_hf_tokenizer, tokenizer_json_path
from .workload import Case, cell_workload, tokenize_cases

KINDS = ("Open", "Head", "Name", "Tail")


def run_pass(grammar: Grammar, cases: list[Case], budget: int, bitmask: np.ndarray) -> tuple[dict[str, list[int]], int]:
    """Every gold call once under the budget; the fill times by position kind, and rejected gold tokens."""
    times: dict[str, list[int]] = {kind: [] for kind in KINDS}
    rejected = 0
    for case in cases:
        machine = Machine(grammar, tool_choice="required")
        for written, tok in enumerate(case.call_tokens):
            kind = type(machine.advanced.position).__name__
            start = time.perf_counter_ns()
            machine.fill_bitmask(bitmask, 0, budget - written)
            times.setdefault(kind, []).append(time.perf_counter_ns() - start)
            if not (int(bitmask[0, tok >> 5]) >> (tok & 31)) & 1 or not machine.advance(tok):
                rejected += 1
                break
    return times, rejected


def _summary(times: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    out = {kind: {"p50_us": float(np.median(v)) / 1e3, "mean_us": float(np.mean(v)) / 1e3, "n": len(v)}
           for kind, v in times.items() if v}
    every = [t for v in times.values() for t in v]
    out["all"] = {"p50_us": float(np.median(every)) / 1e3, "mean_us": float(np.mean(every)) / 1e3, "n": len(every)}
    return out


def counter_steps(vocab: Vocabulary, floor: int, steps: int, slack: int, seed: int = 0) -> dict[str, Any]:
    """Mask times (ns) per step inside an array of at least ``floor`` integers, with and without a budget."""
    spec = {"name": "fill", "parameters": {"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "integer"}, "minItems": floor}}, "required": ["xs"]}}
    grammar = Grammar(ToolSet([spec]), vocab, Hermes())
    machine = Machine(grammar, tool_choice="fill", parallel_tool_calls=False)
    start = time.perf_counter_ns()
    budget = machine.min_tokens() + slack
    first_need = time.perf_counter_ns() - start
    bitmask = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    rng = np.random.default_rng(seed)
    budgeted: list[int] = []
    free: list[int] = []
    for written in range(steps):
        start = time.perf_counter_ns()
        machine.fill_bitmask(bitmask, 0, budget - written)
        budgeted.append(time.perf_counter_ns() - start)
        ids = np.flatnonzero(np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[: vocab.size])
        start = time.perf_counter_ns()
        machine.fill_bitmask(bitmask, 0, None)
        free.append(time.perf_counter_ns() - start)
        assert machine.advance(int(ids[rng.integers(ids.size)]))
        if machine.advanced.calls_completed:  # past the call: text masks, not the counter's
            break
    return {"floor": floor, "steps": len(budgeted), "need_ms": first_need / 1e6,
            "budget": _stats(budgeted), "no_budget": _stats(free)}


def _stats(ns: list[int]) -> dict[str, float]:
    ms = np.array(ns) / 1e6
    return {"median_ms": float(np.median(ms)), "p99_ms": float(np.percentile(ms, 99)), "mean_ms": float(ms.mean()),
            "first_ms": float(ms[0])}


def run_counters(args: argparse.Namespace) -> int:
    vocab = from_tokenizer_json(tokenizer_json_path(args.tokenizer, None))
    vocab.prepare_matching()  # once per vocabulary: not part of the first N's need
    print(f"{args.tokenizer}: masks inside minItems N, up to {args.steps} steps, budget = need + {args.slack} - written "
          f"(load {os.getloadavg()[0]:.1f}); ms per step")
    print("| N | steps | need at start | budget: median / p99 / mean / first step | no budget: median / p99 / mean |")
    print("|---|---|---|---|---|")
    for floor in (int(n) for n in args.counters.split(",")):
        record = {"tokenizer": args.tokenizer, **counter_steps(vocab, floor, args.steps, args.slack),
                  "load": os.getloadavg()[0]}
        b, f = record["budget"], record["no_budget"]
        print(f"| {floor:,} | {record['steps']} | {record['need_ms']:.1f} | {b['median_ms']:.3f} / {b['p99_ms']:.2f} / {b['mean_ms']:.3f} / "
              f"{b['first_ms']:.1f} | {f['median_ms']:.3f} / {f['p99_ms']:.2f} / {f['mean_ms']:.3f} |", flush=True)
        if args.out:
            with Path(args.out).open("a") as out:
                out.write(json.dumps(record) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", default="qwen3")
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--budget", type=int, default=128, help="tokens for the whole call (max_tokens)")
    parser.add_argument("--data", default=None)
    parser.add_argument("--out", default=None, help="append the JSON line to this file")
    parser.add_argument("--counters", default=None, help="time masks inside minItems N instead (comma-separated Ns)")
    parser.add_argument("--steps", type=int, default=1000, help="with --counters: steps per N")
    parser.add_argument("--slack", type=int, default=64, help="with --counters: budget above the call's need")
    args = parser.parse_args(argv)
    if args.counters:
        return run_counters(args)

    path = tokenizer_json_path(args.tokenizer, None)
    hf = load_hf_tokenizer(path)
    tools, calls = cell_workload(data_dir(args.data), args.tools, args.calls)
    cases = [c for c in tokenize_cases(hf, calls) if len(c.call_tokens) < args.budget]
    vocab = from_tokenizer_json(path)
    grammar = Compiler(vocab, Hermes()).compile(ToolSet(tools))
    bitmask = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    record: dict[str, Any] = {"tokenizer": args.tokenizer, "tools": args.tools, "calls": len(cases),
                              "budget": args.budget, "load_before": os.getloadavg()[0]}
    for name in ("cold", "warm"):
        times, rejected = run_pass(grammar, cases, args.budget, bitmask)
        record[name] = _summary(times)
        record[f"{name}_rejected"] = rejected
    record["load_after"] = os.getloadavg()[0]
    print(f"{args.tokenizer}, {args.tools} tools, {len(cases)} calls, budget {args.budget} - written "
          f"(load {record['load_before']:.1f} -> {record['load_after']:.1f}); p50 / mean in us")
    print("| pass | " + " | ".join(k for k in (*KINDS, "all")) + " | rejected gold tokens |")
    print("|---|" + "---|" * (len(KINDS) + 2))
    for name in ("cold", "warm"):
        cells = [f"{record[name][k]['p50_us']:.1f} / {record[name][k]['mean_us']:.0f}" if k in record[name] else "-"
                 for k in (*KINDS, "all")]
        print(f"| {name} | " + " | ".join(cells) + f" | {record[f'{name}_rejected']} |")
    if args.out:
        with Path(args.out).open("a") as out:
            out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
