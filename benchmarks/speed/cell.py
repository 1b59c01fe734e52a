"""One cell of the speed benchmark (engine x tokenizer x inventory size), in this process.

``run.py`` starts this module in a fresh interpreter per cell and repeat, so no cache, lexer or
allocator state leaks from one measurement into the next; the last line of stdout is the
result as JSON. What is timed, per cell:

* ``tokenizer_s``: the engine's vocabulary object (apart, since a server builds it once).
* ``ttfm_s``: from the start of compiling to the first tool-mode mask of the first call:
  compile, matcher, advancing through the free text and the trigger, first mask.
* ``ttfm_warm_ms``: the same for the later calls, from the compiled grammar (median).
* ``mask_us``: every later mask of every call (p50 / p99 / max): the per-token cost.
* ``ttfm_cpu_s``: the CPU time of the same span, all threads: a check on ``ttfm_s`` when
  the machine is shared (``load_before``/``load_after`` give the 1-minute load average).
* ``peak_mem_mb``: peak resident memory above the level after the tokenizer set-up
  (Linux ``VmHWM``, reset through ``/proc/self/clear_refs``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from .engines import load_engine
from .inventory import data_dir
from .tokenizers import load_hf_tokenizer, tokenizer_json_path
from .workload import cell_workload, tokenize_cases

__all__ = ["main", "run_cell"]


def _status_kb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return float(line.split()[1])
    raise KeyError(field)


def rss_mb() -> float:
    """Resident memory now, in MiB."""
    return _status_kb("VmRSS") / 1024


def peak_mb() -> float:
    """Peak resident memory since the last :func:`reset_peak`, in MiB."""
    return _status_kb("VmHWM") / 1024


def reset_peak() -> None:
    """Reset the kernel's peak-RSS counter to the current RSS (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def _percentiles(values_ns: list[int]) -> dict[str, float]:
    if not values_ns:
        return {}
    arr = np.asarray(values_ns, dtype=np.float64) / 1000.0
    return {"p50": float(np.percentile(arr, 50)), "p99": float(np.percentile(arr, 99)),
            "max": float(arr.max()), "mean": float(arr.mean())}


def _failure(exc: BaseException) -> str:
    kind = type(exc).__name__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if kind == "PanicException":  # pyo3's Rust panic; a BaseException
        return f"panic: {text}"[:300]
    return f"{kind}: {text}"[:300]


def run_cell(engine_name: str, tokenizer: str, size: int, *, data: Path,
             tokenizer_json: Path, n_calls: int) -> dict[str, Any]:
    """Measure one cell and return its record (``status`` is ``ok`` or what failed)."""
    rec: dict[str, Any] = {"engine": engine_name, "tokenizer": tokenizer, "tools": size,
                           "calls": n_calls, "status": "ok"}
    hf = load_hf_tokenizer(tokenizer_json)
    tools, calls = cell_workload(data, size, n_calls)
    cases = tokenize_cases(hf, calls)
    engine = load_engine(engine_name)
    rec["version"] = engine.version()
    rec["mode"] = "trigger" if engine.trigger_mode else "tool-only"
    gc.collect()
    rec["load_before"] = os.getloadavg()[0]
    base = after_tok = rss_mb()
    phase = "tokenizer"
    fills: list[int] = []
    advances: list[int] = []
    warm: list[int] = []
    warm_fills: list[int] = []
    rejected_tokens = rejected_calls = n_tokens = 0
    try:
        t = time.perf_counter_ns()
        engine.load_tokenizer(tokenizer_json, hf)
        rec["tokenizer_s"] = (time.perf_counter_ns() - t) / 1e9
        rec["vocab"] = engine.vocab_size
        after_tok = rss_mb()
        rec["tokenizer_mem_mb"] = after_tok - base
        reset_peak()
        bitmask = np.zeros((1, (engine.vocab_size + 31) // 32), dtype=np.int32)
        phase = "register"
        t = time.perf_counter_ns()
        engine.register(tools)
        rec["register_s"] = (time.perf_counter_ns() - t) / 1e9
        phase = "compile"
        t0 = time.perf_counter_ns()
        cpu0 = time.process_time()
        engine.compile(tools)
        rec["compile_s"] = (time.perf_counter_ns() - t0) / 1e9
        phase = "decode"
        for i, case in enumerate(cases):
            if engine.trigger_mode:
                prefix, body = case.tokens[: case.trigger_end], case.tokens[case.trigger_end :]
            else:
                prefix, body = [], case.call_tokens
            start = time.perf_counter_ns()
            engine.start()
            if not all(engine.advance(tok) for tok in prefix):
                rejected_calls += 1
                continue
            bitmask[:] = 0
            engine.fill(bitmask)
            first = time.perf_counter_ns()
            if i == 0:
                rec["ttfm_s"] = (first - t0) / 1e9
                rec["ttfm_cpu_s"] = time.process_time() - cpu0
            else:
                warm.append(first - start)
            for j, tok in enumerate(body):
                if j:
                    bitmask[:] = 0
                    a = time.perf_counter_ns()
                    engine.fill(bitmask)
                    fills.append(time.perf_counter_ns() - a)
                n_tokens += 1
                if not (int(bitmask[0, tok >> 5]) >> (tok & 31)) & 1:
                    rejected_tokens += 1
                a = time.perf_counter_ns()
                accepted = engine.advance(tok)
                advances.append(time.perf_counter_ns() - a)
                if not accepted:
                    rejected_calls += 1
                    break
        phase = "warm"  # the same calls again: every mask is now cached (or as cached as it gets)
        for case in cases:
            prefix, body = (case.tokens[: case.trigger_end], case.tokens[case.trigger_end :]) if engine.trigger_mode else ([], case.call_tokens)
            engine.start()
            if not all(engine.advance(tok) for tok in prefix):
                continue
            for tok in body:
                a = time.perf_counter_ns()
                engine.fill(bitmask)
                warm_fills.append(time.perf_counter_ns() - a)
                if not engine.advance(tok):
                    break
        phase = "again"  # a later request with the same tools in another order: from the tool list to its first mask
        shuffled = json.loads(json.dumps(list(reversed(tools))))  # fresh dicts, as a request's parsed JSON
        t = time.perf_counter_ns()
        engine.register(shuffled)
        engine.compile(shuffled)
        engine.start()
        case = cases[0]
        if all(engine.advance(tok) for tok in (case.tokens[: case.trigger_end] if engine.trigger_mode else [])):
            engine.fill(bitmask)
            rec["again_ms"] = (time.perf_counter_ns() - t) / 1e6
    except Exception as exc:  # a peer's failure is a result, not a crash
        rec["status"] = f"{phase}: {_failure(exc)}"
    except BaseException as exc:  # pyo3 PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        rec["status"] = f"{phase}: {_failure(exc)}"
    rec["load_after"] = os.getloadavg()[0]
    rec["peak_mem_mb"] = peak_mb() - after_tok
    rec["ttfm_warm_ms"] = float(np.median(warm)) / 1e6 if warm else None
    rec["mask_us"] = _percentiles(fills)
    rec["mask_warm_us"] = _percentiles(warm_fills)
    rec["advance_us"] = _percentiles(advances)
    rec.update(tokens=n_tokens, masks=len(fills) + len(cases) - rejected_calls,
               rejected_tokens=rejected_tokens, rejected_calls=rejected_calls)
    rec["python"] = platform.python_version()
    return rec


def main(argv: list[str] | None = None) -> int:
    """Command line: measure one cell and print its record as the last line of stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--data", default=None)
    parser.add_argument("--tokenizer-json", default=None)
    args = parser.parse_args(argv)
    try:
        rec = run_cell(args.engine, args.tokenizer, args.size, data=data_dir(args.data),
                       tokenizer_json=tokenizer_json_path(args.tokenizer, args.tokenizer_json),
                       n_calls=args.calls)
    except Exception as exc:  # set-up failed (missing engine, data, tokenizer): still one record
        traceback.print_exc()
        rec = {"engine": args.engine, "tokenizer": args.tokenizer, "tools": args.size,
               "status": f"setup: {_failure(exc)}"}
    sys.stdout.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
