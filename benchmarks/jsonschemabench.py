"""JSONSchemaBench coverage: every schema compiles or is refused with a typed error, the
instances tooldec generates validate, and compile time and memory stay bounded.

For each schema file: normalise it (or record the typed error and its keyword), build its
automaton (NFA, then the lazy DFA's start: what a tool costs before its first mask), timing
that, then sample instances by random walks over
bytes (``LazyDFA.sample``: exact counters, steering to the end after a soft length limit) and validate each with jsonschema (draft
2020-12, format checks on) against the schema as written; the time limit covers compile and
samples. Then it compiles the schema again under tracemalloc for its peak memory (outside the
time limit; regex automata are cached by then). Writes JSON Lines per schema, prints
a summary per set, the refusals by keyword and the ten slowest compiles.

    .venv/bin/python benchmarks/jsonschemabench.py [--data DIR] [--samples 5] [--limit N] [--timeout 5]
    .venv/bin/python benchmarks/jsonschemabench.py --rerun runs/jsonschemabench.jsonl --over-ms 50 --out runs/slow.jsonl

``--rerun`` checks again only the schemas a previous run's records list as compiled in over
``--over-ms`` milliseconds (wall clock or CPU), in the same order: the slow subset, with fewer
schemas compiled before each one (so caches shared between schemas are colder than in a full run).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import jsonschema
from tqdm import tqdm

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import data_dir  # noqa: E402
from tooldec.automata.dfa import LazyDFA  # noqa: E402
from tooldec.automata.json_schema import SchemaCompiler  # noqa: E402
from tooldec.automata.nfa import NFA  # noqa: E402
from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError  # noqa: E402
from tooldec.tools.schema import normalize_any_schema  # noqa: E402

SETS = ("Glaiveai2K", "Github_trivial", "Github_easy")


def compile_schema(schema: Any) -> tuple[LazyDFA, NFA]:
    """What registering and first using a tool costs: normalise, build the NFA, start the DFA."""
    normalized = normalize_any_schema(schema)
    nfa = NFA()
    root = normalized if isinstance(normalized, dict) else {}
    return LazyDFA(nfa, SchemaCompiler(nfa, root).value(normalized)), nfa


def check(schema: Any, samples: int, rng: random.Random) -> dict[str, Any]:
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        dfa, nfa = compile_schema(schema)
    except UnsupportedSchemaError as err:
        return {"status": "unsupported", "keyword": err.keyword, "error": str(err)[:200],
                "kind": type(err).__name__}
    except InvalidSchemaError as err:
        return {"status": "invalid", "error": str(err)[:200]}
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started  # this process's CPU: what other jobs on the machine do not inflate
    if dfa.is_empty:
        return {"status": "empty"}
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    bad = []
    for _ in range(samples):
        text = dfa.sample(rng, soft_limit=200)  # exact counters; a long minItems is skipped through
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            bad.append(f"not JSON: {err}: {text[:80]!r}")
            continue
        errors = list(checker.iter_errors(value))
        if errors:
            bad.append(f"{errors[0].message[:120]}: {text[:80]!r}")
    return {
        "status": "compiled" if not bad else "wrong",
        "seconds": round(seconds, 4),
        "cpu_seconds": round(cpu_seconds, 4),
        "nfa_states": len(nfa.edges),
        "bad": bad[:2],
    }


def peak_memory(schema: Any) -> float:
    """Peak MB allocated by a second compile, under tracemalloc (which slows it down: it runs
    outside the time limit; regex automata are cached by then)."""
    tracemalloc.start()
    try:
        compile_schema(schema)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _slow_files(records: Path, seconds: float) -> set[str]:
    """The schemas a previous run compiled in over ``seconds`` (wall clock or CPU)."""
    rows = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    return {row["file"] for row in rows if max(row.get("seconds", 0), row.get("cpu_seconds", 0)) > seconds}


def _raise_timeout(signum: int, frame: object) -> None:
    raise TimeoutError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="schemas per set")
    parser.add_argument("--out", default="runs/jsonschemabench.jsonl")
    parser.add_argument("--timeout", type=int, default=5, help="seconds per schema (compile and samples)")
    parser.add_argument("--rerun", default=None, help="a previous run's JSON Lines: check only its slow schemas")
    parser.add_argument("--over-ms", type=float, default=50.0, help="with --rerun: compile time (wall or CPU) over this")
    args = parser.parse_args(argv)
    chosen = None if args.rerun is None else _slow_files(Path(args.rerun), args.over_ms / 1000)
    signal.signal(signal.SIGALRM, _raise_timeout)
    root = data_dir(args.data) / "jsonschemabench"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    totals: dict[str, collections.Counter[str]] = {}
    keywords: collections.Counter[tuple[str, str]] = collections.Counter()
    compiled: list[tuple[float, float, str, float]] = []
    rng = random.Random(0)
    with out.open("w") as sink:
        for name in SETS:
            files = sorted((root / name).glob("*.json"))[: args.limit]
            if chosen is not None:
                files = [f for f in files if f"{name}/{f.name}" in chosen]
            counts: collections.Counter[str] = collections.Counter()
            for path in tqdm(files, desc=name, leave=False):
                schema = json.loads(path.read_text())
                try:
                    signal.alarm(args.timeout)
                    try:
                        row = check(schema, args.samples, rng)
                    finally:
                        signal.alarm(0)
                except TimeoutError:  # also when the alarm lands just as the check ends
                    row = {"status": "timeout"}
                except Exception as err:  # a crash is a finding, recorded and counted
                    row = {"status": "crash", "error": f"{type(err).__name__}: {err}"[:200]}
                if "seconds" in row:
                    row["peak_mb"] = round(peak_memory(schema), 2)
                row["file"] = f"{name}/{path.name}"
                counts[row["status"]] += 1
                if row["status"] == "unsupported":
                    keywords[(row["keyword"], row["kind"])] += 1
                if "seconds" in row:
                    compiled.append((row["seconds"], row["peak_mb"], row["file"], row["cpu_seconds"]))
                sink.write(json.dumps(row) + "\n")
            totals[name] = counts
    print(f"{'set':15} {'schemas':>7} {'compiled':>8} {'unsupported':>11} {'invalid':>7} {'empty':>5} {'wrong':>5} {'crash':>5} {'timeout':>7}")
    for name, c in totals.items():
        print(
            f"{name:15} {sum(c.values()):>7} {c['compiled']:>8} {c['unsupported']:>11} {c['invalid']:>7} {c['empty']:>5}"
            f" {c['wrong']:>5} {c['crash']:>5} {c['timeout']:>7}"
        )
    print("\nrefusals by keyword (UnsupportedSchemaError; SchemaTooComplexError marked):")
    for (keyword, kind), n in keywords.most_common():
        print(f"  {keyword:25} {n:4} {'too complex' if kind == 'SchemaTooComplexError' else ''}")
    if compiled:
        times = sorted(t for t, _, _, _ in compiled)
        cpus = sorted(c for _, _, _, c in compiled)
        mems = sorted(m for _, m, _, _ in compiled)
        def pick(values: list[float], q: float) -> float:
            return values[min(len(values) - 1, int(q * len(values)))]

        print(f"\ncompile (normalise + NFA + lazy DFA start), {len(compiled)} schemas: median {pick(times, 0.5) * 1000:.1f} ms,"
              f" p90 {pick(times, 0.9) * 1000:.0f} ms, p99 {pick(times, 0.99) * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms,"
              f" {sum(t < 0.05 for t in times)} under 50 ms; peak memory median {pick(mems, 0.5):.2f} MB,"
              f" p99 {pick(mems, 0.99):.1f} MB, max {mems[-1]:.1f} MB, {sum(m < 20 for m in mems)} under 20 MB")
        print(f"the same in CPU time of this process: median {pick(cpus, 0.5) * 1000:.1f} ms, p90 {pick(cpus, 0.9) * 1000:.0f} ms,"
              f" p99 {pick(cpus, 0.99) * 1000:.0f} ms, max {cpus[-1] * 1000:.0f} ms, {sum(c < 0.05 for c in cpus)} under 50 ms")
        print("slowest ten (wall clock, then CPU):")
        for seconds, mb, file, cpu in sorted(compiled, reverse=True)[:10]:
            print(f"  {file:60} {seconds * 1000:8.1f} ms {cpu * 1000:8.1f} ms {mb:8.2f} MB")
        print("slowest ten by CPU time (wall clock, then CPU):")
        for seconds, mb, file, cpu in sorted(compiled, key=lambda row: row[3], reverse=True)[:10]:
            print(f"  {file:60} {seconds * 1000:8.1f} ms {cpu * 1000:8.1f} ms {mb:8.2f} MB")
    return 1 if any(c["wrong"] or c["crash"] for c in totals.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
