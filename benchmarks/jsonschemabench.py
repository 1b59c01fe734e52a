"""JSONSchemaBench coverage: every schema compiles or is refused with a typed error, and the
instances tooldec generates validate.

For each schema file: normalise it (or record the typed error: unsupported keyword or invalid
schema), build its automaton, sample instances by random walks over bytes (steering to the end
after a soft length limit), and validate each with jsonschema (draft 2020-12, format checks on)
against the schema as written. Writes JSON Lines per schema and prints a summary per set.

    .venv/bin/python benchmarks/jsonschemabench.py [--data DIR] [--samples 5] [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import signal
import json
import random
import time
from pathlib import Path
from typing import Any

import jsonschema
from tqdm import tqdm

from tooldec.automata.json_schema import SchemaCompiler
from tooldec.automata.dfa import SINK, LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.bench.datasets import data_dir
from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError
from tooldec.tools.schema import normalize_any_schema

SETS = ("Glaiveai2K", "Github_trivial", "Github_easy")


def sample(dfa: LazyDFA, rng: random.Random, soft_limit: int = 200) -> bytes:
    """A random string of the language: random live bytes, then the shortest way to the end."""
    state, out = dfa.start, bytearray()
    while True:
        row = dfa.row(state)
        live = [b for b in range(256) if row[b] >= 0]
        if dfa.accepting[state] and (not live or rng.random() < 0.2 or len(out) > soft_limit):
            return bytes(out)
        if len(out) > soft_limit:
            live = [min(live, key=lambda b: dfa.dist[dfa.next(state, b)])]
        byte = rng.choice(live)
        out.append(byte)
        state = dfa.next(state, byte)
        if state == SINK:
            raise AssertionError("walked into the sink")


def check(schema: Any, samples: int, rng: random.Random) -> dict[str, Any]:
    try:
        normalized = normalize_any_schema(schema)
    except UnsupportedSchemaError as err:
        return {"status": "unsupported", "keyword": err.keyword, "error": str(err)[:200]}
    except InvalidSchemaError as err:
        return {"status": "invalid", "error": str(err)[:200]}
    started = time.perf_counter()
    nfa = NFA()
    root = normalized if isinstance(normalized, dict) else {}
    dfa = LazyDFA(nfa, SchemaCompiler(nfa, root).value(normalized))
    if dfa.is_empty:
        return {"status": "empty"}
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    bad = []
    for _ in range(samples):
        text = sample(dfa, rng)
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
        "seconds": round(time.perf_counter() - started, 4),
        "states": dfa.n_states,
        "bad": bad[:2],
    }


def _raise_timeout(signum: int, frame: object) -> None:
    raise TimeoutError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="schemas per set")
    parser.add_argument("--out", default="runs/jsonschemabench.jsonl")
    parser.add_argument("--timeout", type=int, default=30, help="seconds per schema")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _raise_timeout)
    root = data_dir(args.data) / "jsonschemabench"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    totals: dict[str, collections.Counter[str]] = {}
    rng = random.Random(0)
    with out.open("w") as sink:
        for name in SETS:
            files = sorted((root / name).glob("*.json"))[: args.limit]
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
                row["file"] = f"{name}/{path.name}"
                counts[row["status"]] += 1
                sink.write(json.dumps(row) + "\n")
            totals[name] = counts
    print(f"{'set':15} {'schemas':>7} {'compiled':>8} {'unsupported':>11} {'invalid':>7} {'empty':>5} {'wrong':>5} {'crash':>5} {'timeout':>7}")
    for name, c in totals.items():
        print(
            f"{name:15} {sum(c.values()):>7} {c['compiled']:>8} {c['unsupported']:>11} {c['invalid']:>7} {c['empty']:>5}"
            f" {c['wrong']:>5} {c['crash']:>5} {c['timeout']:>7}"
        )
    return 1 if any(c["wrong"] or c["crash"] for c in totals.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
