"""End-to-end cost of tooldec in real generation: tokens per second with and without the mask.

Run from the repository root::

    python benchmarks/end_to_end.py --model smollm2 --backend llamacpp
    python benchmarks/end_to_end.py --model qwen --backend llamacpp --items 30
    python benchmarks/end_to_end.py --model smollm2 --backend transformers --items 10

Work: BFCL ``simple_python`` and ``multiple`` questions (their own functions, given through the
chat template in the Hermes format), greedy, a call required, ``--max-new-tokens`` per answer.
Each question is answered unconstrained (the call's start written into the prompt) and with
tooldec, in two passes: the first with a new grammar per question (every mask cold: a server that
gets a new tool list with each request), the second with the same grammars again (masks cached).
On llama.cpp the prompt is evaluated from an empty cache before the clock starts, so decoding
alone is timed (transformers' ``generate`` includes its prompt pass). Reported per pass: tokens
per second each way, the time the generation loop spent masking per token (on llama.cpp: a mask
not cached is computed on a worker thread while the token is evaluated where a core is free
beside llama.cpp's threads, else after the evaluation, in the loop; ``--mask-worker`` forces
either; then picking, advancing; with ``--check-first on``, the default, a loop that makes masks
after the evaluation first tries the model's own pick and makes the mask only if the grammar
refuses it), the worker's own mask time per token (beside the forward pass), the share of steps
whose pick was taken without a mask, and the overhead = the loop's masking time / generation time. On llama.cpp each tooldec answer is
also decoded again without tooldec, token for token (the same forward passes, a plain pick):
*tooldec's cost (paired)* = tooldec's time / that time - 1, which the two systems' tokens per
second cannot show (their answers differ in length and content). Writes ``OUT/end_to_end.jsonl``
(one line per answer, appended), ``OUT/end_to_end.md`` and a PNG.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

import numpy as np  # noqa: E402

from benchmarks.paper.datasets import bfcl_items, data_dir  # noqa: E402
from benchmarks.paper.experiments.bfcl import bfcl_schema  # noqa: E402
from benchmarks.paper.experiments.common import Session  # noqa: E402
from tooldec.backends.step import pick_token  # noqa: E402
from tooldec.decoding import Grammar  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402
from tooldec.runtime import forced_start  # noqa: E402
from tooldec.tools import Tool, ToolSet  # noqa: E402

SUBSETS = ("simple_python", "multiple")


def questions(data: Path, count: int) -> list[tuple[str, ToolSet, list[dict[str, Any]]]]:
    """``count`` BFCL questions, alternating the subsets: (id, tools, messages)."""
    pools = [list(bfcl_items(subset, data)) for subset in SUBSETS]
    picked = []
    for i in range(count):
        item = pools[i % len(pools)][i // len(pools)]
        tools = ToolSet([Tool.from_dict({"name": f["name"], "description": f.get("description", ""),
                                         "parameters": bfcl_schema(f["parameters"])}) for f in item["function"]])
        picked.append((item["id"], tools, item["question"][0]))
    return picked


def answer(session: Session, generator: Any, prompt: str, grammar: Grammar | None, max_new_tokens: int) -> dict[str, Any]:
    """One greedy answer; the call's start is forced into the prompt unconstrained."""
    forced = "" if grammar is not None else forced_start(Hermes(), "required")
    ids = list(session.tokenizer.encode(prompt + forced, add_special_tokens=False))
    if session.backend == "llamacpp":  # the prompt is evaluated before the clock starts: decoding is timed
        session.model.reset()
        generator.next_logits(ids)
    start = time.perf_counter()
    generation = generator.generate(ids, max_new_tokens=max_new_tokens, grammar=grammar, tool_choice="required",
                                    stop_after_call=None)
    seconds = time.perf_counter() - start
    row = {"prompt_tokens": len(ids), "tokens": len(generation.ids), "seconds": seconds,
           "masking_seconds": generation.masking_seconds, "masked_steps": generation.masked_steps,
           "overlapped_seconds": generation.overlapped_seconds, "checked_steps": generation.checked_steps}
    if grammar is not None and session.backend == "llamacpp":
        row["replay_seconds"] = replay(session, generator, ids, generation.ids)
    return row


def replay(session: Session, generator: Any, prompt_ids: list[int], ids: list[int]) -> float:
    """The seconds to decode ``ids`` again without tooldec, as the unconstrained loop does (a pick
    from the logits, then the token evaluated), from the same prompt: the same forward passes as
    tooldec's answer, so the two times differ only by what tooldec adds."""
    session.model.reset()
    generator.next_logits(prompt_ids)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    logits = generator.start(prompt_ids)  # as generate() does: the prompt's last token evaluated again, for its logits
    for i, token in enumerate(ids):
        pick_token(logits, None, 0.0, rng)
        if i + 1 < len(ids):
            logits = generator.push(token)
    return time.perf_counter() - start


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per pass: tokens/s each way, masking ms per token (in the loop, and on the worker thread
    beside the forward pass), overhead in percent (the loop's masking time / generation time)."""
    out = []
    for pass_ in sorted({r["pass"] for r in rows}):
        free = [r for r in rows if r["pass"] == pass_ and r["system"] == "unconstrained"]
        held = [r for r in rows if r["pass"] == pass_ and r["system"] == "tooldec"]
        tokens = sum(r["tokens"] for r in held)
        masking = sum(r["masking_seconds"] for r in held)
        overlapped = sum(r.get("overlapped_seconds", 0.0) for r in held)  # rows before the field: none
        seconds = sum(r["seconds"] for r in held)
        replayed = [r["replay_seconds"] for r in held if "replay_seconds" in r]
        steps = sum(r["masked_steps"] for r in held)
        out.append({
            "pass": pass_, "answers": len(held),
            "unconstrained_tok_s": sum(r["tokens"] for r in free) / sum(r["seconds"] for r in free),
            "tooldec_tok_s": tokens / seconds,
            "masking_ms_per_token": 1000 * masking / max(tokens, 1),
            "overlapped_ms_per_token": 1000 * overlapped / max(tokens, 1),
            "overhead_pct": 100 * masking / seconds,
            # steps where the model's own pick was allowed and taken without a mask (check_first)
            "checked_pct": 100 * sum(r.get("checked_steps", 0) for r in held) / max(steps, 1),
            # the same answers decoded again without tooldec (llama.cpp): the paired cost of tooldec
            "replay_tok_s": tokens / sum(replayed) if len(replayed) == len(held) and held else None,
            "paired_overhead_pct": 100 * (seconds / sum(replayed) - 1) if len(replayed) == len(held) and held else None,
        })
    return out


def table(setup: dict[str, Any], summary: list[dict[str, Any]]) -> str:
    lines = [f"{setup['model']} on {setup['backend']} ({setup['machine']}), {setup['items']} BFCL questions, "
             f"greedy, up to {setup['max_new_tokens']} new tokens",
             "", "| pass | answers | unconstrained tok/s | tooldec tok/s | same tokens without tooldec tok/s | "
             "tooldec's cost (paired) | masking ms/token | on the worker ms/token | overhead (loop) | "
             "model's pick taken without a mask |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summary:
        replay = "–" if s.get("replay_tok_s") is None else f"{s['replay_tok_s']:.1f}"
        paired = "–" if s.get("paired_overhead_pct") is None else f"{s['paired_overhead_pct']:+.2f}%"
        lines.append(f"| {s['pass']} | {s['answers']} | {s['unconstrained_tok_s']:.1f} | {s['tooldec_tok_s']:.1f} | "
                     f"{replay} | {paired} | {s['masking_ms_per_token']:.2f} | {s['overlapped_ms_per_token']:.2f} | "
                     f"{s['overhead_pct']:.2f}% | {s['checked_pct']:.0f}% |")
    return "\n".join(lines)


def plot(all_rows: list[dict[str, Any]], path: Path) -> None:
    """tooldec's cost per (model, backend, pass), from every line of the JSON Lines file: the
    paired cost where the answers were replayed (llama.cpp), else the loop's masking share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, values, colours = [], [], []
    for key in sorted({(r["model"], r["backend"]) for r in all_rows}):
        rows = [r for r in all_rows if (r["model"], r["backend"]) == key]
        for s in summarize(rows):
            paired = s.get("paired_overhead_pct")
            labels.append(f"{key[0]}\n{key[1]}\n{s['pass']}\n{'paired' if paired is not None else 'loop'}")
            values.append(paired if paired is not None else s["overhead_pct"])
            colours.append("#4477aa" if paired is not None else "#bbbbbb")
    fig, ax = plt.subplots(figsize=(max(4, 1.3 * len(labels)), 3.6))
    ax.bar(range(len(values)), values, color=colours)
    ax.axhline(1, color="#cc6677", linestyle="--", label="goal: 1%")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    ax.set_ylabel("tooldec's cost (%)")
    ax.set_title("tooldec end-to-end cost (BFCL questions, greedy; every line of end_to_end.jsonl)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, qwen, or a .gguf file / HF folder")
    parser.add_argument("--backend", choices=["llamacpp", "transformers"], default="llamacpp")
    parser.add_argument("--items", type=int, default=20, help="questions (half simple_python, half multiple)")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: $TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=_ROOT / "runs" / "end-to-end")
    parser.add_argument("--mask-worker", choices=["auto", "on", "off"], default="auto",
                        help="llama.cpp: masks not cached on a worker thread beside the evaluation (on), after it "
                             "(off), or on the worker where a core is free beside llama.cpp's threads (auto)")
    parser.add_argument("--check-first", choices=["on", "off"], default="on",
                        help="llama.cpp, masks made after the evaluation: take the model's own pick when the grammar "
                             "allows it and make the mask only when it does not (on), or mask every step (off)")
    args = parser.parse_args(argv)

    session = Session(args.model, backend=args.backend)
    from tooldec.backends import generator_for

    generator = generator_for(session.model, session.tokenizer, session.vocab,
                              jump_forward=False)  # what masking costs per step (jump-forward: jump_forward.py)
    if args.mask_worker != "auto" and hasattr(generator, "mask_worker"):
        generator.mask_worker = args.mask_worker == "on"
    if hasattr(generator, "check_first"):
        generator.check_first = args.check_first == "on"
    picked = questions(data_dir(args.data), args.items)
    grammars = {qid: Grammar(tools, session.vocab, Hermes()) for qid, tools, _ in picked}
    prompts = {qid: session.chat(messages, tools=tools, dialect=Hermes()) for qid, tools, messages in picked}
    setup = {**session.describe(), "items": args.items, "max_new_tokens": args.max_new_tokens,
             "mask_worker": getattr(generator, "mask_worker", None), "check_first": getattr(generator, "check_first", None)}
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with (args.out / "end_to_end.jsonl").open("a") as sink:
        for pass_ in ("1 cold", "2 warm"):
            for qid, _, _ in tqdm(picked, desc=f"pass {pass_}", unit="question"):
                for system in ("unconstrained", "tooldec"):
                    grammar = grammars[qid] if system == "tooldec" else None
                    row = {"model": session.label, "backend": session.backend, "pass": pass_, "id": qid,
                           "system": system, "mask_worker": setup["mask_worker"], "check_first": setup["check_first"],
                           **answer(session, generator, prompts[qid], grammar, args.max_new_tokens)}
                    rows.append(row)
                    sink.write(json.dumps(row) + "\n")
    text = table(setup, summarize(rows))
    print(text)
    all_rows = [json.loads(line) for line in (args.out / "end_to_end.jsonl").open()]
    where = {None: "", True: "; masks not cached made on the worker beside the evaluation",
             False: "; masks not cached made after the evaluation"}[setup["mask_worker"]]
    with (args.out / "end_to_end.md").open("a") as md:
        md.write(f"\n`python benchmarks/end_to_end.py --model {args.model} --backend {args.backend} --items "
                 f"{args.items} --max-new-tokens {args.max_new_tokens} --mask-worker {args.mask_worker} "
                 f"--check-first {args.check_first}` "
                 f"({platform.python_version()}, {setup.get('cores')} cores{where})\n\n{text}\n")
    plot(all_rows, args.out / "end_to_end.png")
    print(f"results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
