"""Random-walk property benchmark: many uniformly sampled calls, each checked for validity.

Every walk samples uniformly among the tokens the engine allows (Hermes format, tool_choice
required, a random token budget above the shortest completion) until the call closes; the call
must parse, name a tool of the inventory and validate with jsonschema. Prints one row per
vocabulary and inventory and writes the rows as JSON Lines.

    .venv/bin/python benchmarks/walks.py --walks 1000 [--data DIR] [--out runs/walks.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from tqdm import tqdm

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import bfcl_tools, data_dir, funcqa_tools, kamel_tools, toolbench_tools  # noqa: E402
from benchmarks.paper.walks import check_walk, random_walk  # noqa: E402
from tooldec.decoding import Grammar, Machine  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402
from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path  # noqa: E402
from tooldec.tokens import from_gguf, from_sentencepiece, from_tokenizer_json  # noqa: E402
from tooldec.tools import ToolSet  # noqa: E402

VOCABS = {
    "smollm2": lambda: from_gguf(smollm2_gguf_path()),
    "mistral": lambda: from_sentencepiece(mistral_tokenizer_path("v3")),
    "llama3": lambda: from_tokenizer_json(tokenizer_json_path("llama3")),
    "qwen3": lambda: from_tokenizer_json(tokenizer_json_path("qwen3")),
}
INVENTORIES = {"funcqa": funcqa_tools, "kamel": kamel_tools, "bfcl": bfcl_tools, "tooleval": toolbench_tools}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walks", type=int, default=1000, help="walks per vocabulary and inventory")
    parser.add_argument("--vocabs", nargs="*", default=list(VOCABS))
    parser.add_argument("--inventories", nargs="*", default=list(INVENTORIES))
    parser.add_argument("--data", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/walks.jsonl")
    args = parser.parse_args(argv)
    import os

    if args.data:
        os.environ["TOOLDEC_DATA"] = args.data
    print(f"data: {data_dir()}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    dialect = Hermes()
    with out.open("w") as sink:
        for vocab_name in args.vocabs:
            vocab = VOCABS[vocab_name]()
            for inv in args.inventories:
                tools = ToolSet(INVENTORIES[inv]())
                grammar = Grammar(tools, vocab, dialect)
                rng = random.Random(f"{args.seed}-{vocab_name}-{inv}")
                invalid, tokens, started = 0, 0, time.perf_counter()
                examples: list[str] = []
                for _ in tqdm(range(args.walks), desc=f"{vocab_name}/{inv}", leave=False):
                    machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
                    result = random_walk(machine, rng, machine.advanced.shortest_completion() + rng.randint(0, 100))
                    tokens += len(result.tokens)
                    problem = check_walk(result, dialect, tools)
                    if problem is not None:
                        invalid += 1
                        examples.append(problem)
                row = {
                    "vocab": vocab_name, "vocab_size": vocab.size, "inventory": inv, "tools": len(tools),
                    "walks": args.walks, "invalid": invalid, "tokens": tokens,
                    "seconds": round(time.perf_counter() - started, 2), "examples": examples[:3],
                }  # fmt: skip
                rows.append(row)
                sink.write(json.dumps(row) + "\n")
    print(f"{'vocab':8} {'inventory':9} {'tools':>5} {'walks':>6} {'invalid':>7} {'tokens/walk':>11} {'s':>7}")
    for r in rows:
        print(f"{r['vocab']:8} {r['inventory']:9} {r['tools']:>5} {r['walks']:>6} {r['invalid']:>7} {r['tokens'] / r['walks']:>11.1f} {r['seconds']:>7}")
    return 1 if any(r["invalid"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
