"""``python -m benchmarks.paper NAME``: one of the paper's experiments, for one or more systems.

Run from the repository root (the experiments are not part of the installed package)::

    python -m benchmarks.paper funcqa --model qwen --system tooldec --limit 10
    python -m benchmarks.paper bfcl --model smollm2 --system baseline --system tooldec --limit 5

Per run: a progress bar, ``<out>/<bench>/<model>/<system>/<subset>.jsonl`` (one line per item),
``summary.json``; then ``table.md`` and ``<bench>.png`` over every system run so far.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .datasets import data_dir
from .experiments.runner import EXPERIMENTS, systems_of

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paper", description="Reproduce one of the ToolDec paper's tables.")
    parser.add_argument("name", choices=EXPERIMENTS, help="which table")
    parser.add_argument("--model", default="smollm2",
                        help="'smollm2' (installed), 'qwen' (after `make qwen`), 'qwen15' (after `make qwen15`), "
                             "or a local HF folder or .gguf file")
    parser.add_argument("--backend", choices=["auto", "llamacpp", "transformers"], default="auto",
                        help="llama.cpp runs a GGUF file as quantised (fast on a CPU); auto (default) takes it "
                             "when llama-cpp-python is installed and the model is a .gguf file")
    known = sorted({s for name in EXPERIMENTS for s in systems_of(name)})
    parser.add_argument("--system", action="append", choices=[*known, "all"],
                        help="baseline, repair (fuzzy names + backtrace), tooldec, tooldec_beam (names chosen by a "
                             "beam over whole names), tooldec_tag (bfcl: Hermes' <tool_call> opener only), tooldec_any (bfcl: a "
                             "required call may open with any Hermes opener, tooldec before 2026-11-25), tooldec_beam_any "
                             "(generalization's KAMEL: the beam with any opener, tooldec_beam before 2026-11-25); "
                             "figure5: zeroshot, fewshot, toolkengpt, tooldec, tooldec_beam; "
                             "repeat, or 'all' (default: the experiment's systems)")
    parser.add_argument("--beam", type=int, default=5, help="beam width of tooldec_beam (default 5)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows already written for a subset and score only the rest")
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: $TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--limit", type=int, default=None, help="items per subset (default: all)")
    parser.add_argument("--subset", action="append", default=None, help="only these subsets (repeatable)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench"), help="where results go (default: runs/bench)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print each system's summary and the table over all systems run so far."""
    args = _parser().parse_args(argv)
    from .experiments.common import Session
    from .experiments.runner import report, run

    allowed = systems_of(args.name)
    systems = list(allowed) if not args.system or "all" in args.system else list(dict.fromkeys(args.system))
    wrong = [s for s in systems if s not in allowed]
    if wrong:
        print(f"benchmarks.paper: {args.name} runs the systems {', '.join(allowed)}, not {', '.join(wrong)}", file=sys.stderr)
        return 2
    data = data_dir(args.data)
    if not data.is_dir():
        print(f"benchmarks.paper: no benchmark data at {data}; pass --data or set TOOLDEC_DATA", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print("benchmarks.paper: --limit must be >= 1", file=sys.stderr)
        return 2
    if args.beam < 1:
        print("benchmarks.paper: --beam must be >= 1", file=sys.stderr)
        return 2
    session = Session(args.model, backend=args.backend, beam_width=args.beam)
    for system in systems:
        run(args.name, session, system, data=data, out=args.out, limit=args.limit,
            subsets=tuple(args.subset) if args.subset else None, resume=args.resume)
    print(report(args.name, args.out / args.name / session.label))
    print(f"results in {args.out / args.name / session.label}")
    return 0
