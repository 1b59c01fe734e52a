"""``tooldec train-trigger``: learn ToolDec's ``<T>`` (or ToolkenGPT's toolkens) for your tools.

    tooldec train-trigger --model model.gguf --demos demos.jsonl --out trigger.npz
    tooldec train-trigger --model model.gguf --demos demos.jsonl --out toolkens.npz --toolkens

``demos.jsonl``: one demonstration per line, ``{"text": "...", "calls": [{"at": 42, "end": 57,
"tool": "owner_entity"}]}``: ``at`` is the character offset where the call is made (the learned
token is the target there), ``end`` (default ``at``) where the text it stands for ends (its
result, not trained). The model is frozen; only the rows are learned. Decode with them through
``tooldec.learned.generator.LearnedGenerator`` and a dialect whose ``trigger`` is ``"<T>"``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .features import Demonstration, Mark, extract
from .tokens import TRIGGER, LearnedTokens
from .train import fit_rows, switch_scores

__all__ = ["main", "read_demos"]


def read_demos(path: Path) -> list[Demonstration]:
    """The demonstrations of a JSON Lines file (``ValueError`` naming a line that is none)."""
    demos = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            marks = tuple(Mark(int(c["at"]), int(c.get("end", c["at"])), str(c["tool"])) for c in item["calls"])
            demos.append(Demonstration(str(item["text"]), marks))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}:{number}: not a demonstration ({error}); expected "
                             '{"text": ..., "calls": [{"at": N, "end": M, "tool": NAME}]}') from None
    if not demos:
        raise ValueError(f"{path} holds no demonstration")
    return demos


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tooldec train-trigger", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a .gguf file or a transformers model folder (frozen)")
    parser.add_argument("--demos", required=True, type=Path, help="demonstrations, JSON Lines (see above)")
    parser.add_argument("--out", required=True, type=Path, help="the rows' file (.npz)")
    parser.add_argument("--toolkens", action="store_true", help="one row per tool (ToolkenGPT) instead of one <T>")
    parser.add_argument("--expansion", default="<{name}>(",
                        help="what the model reads after a toolken, with {name} (default '<{name}>(')")
    parser.add_argument("--backend", choices=["auto", "llamacpp", "transformers"], default="auto",
                        help="which runtime computes the hidden states (auto: llama.cpp for .gguf when installed)")
    parser.add_argument("--max-tokens", type=int, default=128, help="longest demonstration kept, in tokens")
    parser.add_argument("--l2", type=float, default=1e-4, help="weight decay of the rows")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Train, save, and print how often the rows fire at the demonstrations' calls."""
    args = _parser().parse_args(argv)
    from ..backends import load

    try:
        demos = read_demos(args.demos)
    except (OSError, ValueError) as error:
        print(f"tooldec train-trigger: {error}", file=sys.stderr)
        return 2
    tools = sorted({m.tool for d in demos for m in d.marks})
    labels = {tool: (i if args.toolkens else 0) for i, tool in enumerate(tools)}
    model, tokenizer, vocab, backend = load(args.model, args.backend, threads=args.threads, progress=print)
    features = extract(model, tokenizer, demos, labels, max_tokens=args.max_tokens, model_name=Path(args.model).name)
    rows = len(tools) if args.toolkens else 1
    weight, record = fit_rows(features, rows, l2=args.l2)
    scores = switch_scores(features, weight)
    meta = {"training": record, "demos": len(demos), "backend": backend, "switching_on_training_data": scores.as_dict()}
    names = tuple(f"<{t}>" for t in tools) if args.toolkens else (TRIGGER,)
    expansions = tuple(args.expansion.format(name=t) for t in tools) if args.toolkens else ("",)
    LearnedTokens(names, expansions, weight, Path(args.model).name, weight.shape[1], vocab.fingerprint, meta).save(args.out)
    print(f"{len(names)} row(s) from {len(demos)} demonstrations ({record['calls']} calls) -> {args.out}")
    print(f"on the training data: precision {scores.precision:.3f}, recall {scores.recall:.3f}, F1 {scores.f1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
