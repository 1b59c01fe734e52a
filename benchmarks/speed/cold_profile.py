"""Where the cold masks' time goes: the cold pass of one speed cell, timed and profiled.

Runs the BFCL workload of ``benchmarks.speed.cell`` for tooldec (``--tools`` in the inventory,
``--calls`` gold calls to as many tools, Hermes after free text), fills every mask of every call
once (the cold pass: each tool's automaton is built as the model reaches it) and prints the
pass's CPU time, the p50 / p99 of one fill, and the functions that took the most time (cProfile,
in a second, profiled run of the same pass in a fresh process state). The heap built during
set-up is frozen first (``gc.freeze``), so full collections do not land on one mask.

    python -m benchmarks.speed.cold_profile --tokenizer qwen3 --tools 1000
    python -m benchmarks.speed.cold_profile --tokenizer llama3 --tools 1000 --top 15
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import pstats
import time
from collections.abc import Callable

import numpy as np

from tooldec.decoding import Compiler, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import from_tokenizer_json
from tooldec.tools import ToolSet

from .inventory import data_dir
from .tokenizers import load_hf_tokenizer, tokenizer_json_path
from .workload import Case, cell_workload, tokenize_cases


def cpu_ns(call: Callable[[], object], profile: cProfile.Profile | None) -> int:
    """This thread's CPU time of one ``call`` in ns, with ``profile`` on around it if given."""
    start = time.thread_time_ns()
    if profile is not None:
        profile.enable()
    call()
    if profile is not None:
        profile.disable()
    return time.thread_time_ns() - start


def cold_pass(compiler: Compiler, tools: ToolSet, cases: list[Case], profile: cProfile.Profile | None) -> list[int]:
    """Every mask of every call once, on a fresh snapshot; the CPU time of each fill in ns."""
    grammar = compiler.compile(tools)
    bitmask = np.zeros((1, (compiler.vocab.size + 31) // 32), dtype=np.int32)
    times = []
    for case in cases:
        machine = Machine(grammar)
        for token in case.tokens[: case.trigger_end]:
            machine.advance(token)
        for token in case.tokens[case.trigger_end:]:
            times.append(cpu_ns(functools.partial(machine.fill_bitmask, bitmask), profile))
            if not machine.advance(token):
                raise RuntimeError(f"a gold token was refused: {token}")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", default="qwen3")
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--top", type=int, default=25, help="functions to list, by time spent in their own code")
    parser.add_argument("--data", default=None)
    args = parser.parse_args(argv)

    path = tokenizer_json_path(args.tokenizer, None)
    tool_dicts, calls = cell_workload(data_dir(args.data), args.tools, args.calls)
    cases = tokenize_cases(load_hf_tokenizer(path), calls)
    vocab = from_tokenizer_json(path)
    timed, profiled = (Compiler(vocab, Hermes(openers=["tag"])) for _ in range(2))  # separate caches
    tools = ToolSet(tool_dicts)
    gc.collect()
    gc.freeze()
    fills = np.asarray(cold_pass(timed, tools, cases, None), dtype=np.float64) / 1e3
    print(f"{args.tokenizer}, {args.tools} tools, {len(cases)} calls: cold pass {fills.sum() / 1e3:.1f} ms CPU over "
          f"{fills.size} masks; one mask p50 {np.percentile(fills, 50):.1f} µs, p99 {np.percentile(fills, 99):.1f} µs, "
          f"max {fills.max() / 1e3:.2f} ms")
    profile = cProfile.Profile()
    cold_pass(profiled, tools, cases, profile)
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
