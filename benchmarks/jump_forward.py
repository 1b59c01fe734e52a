"""Jump-forward on llama.cpp: forward passes, fast-forwarded tokens and wall time per answer.

Run from the repository root::

    python benchmarks/jump_forward.py --model smollm2 --items 40
    python benchmarks/jump_forward.py --model qwen --items 40

Work: BFCL ``simple_python`` and ``multiple`` questions (``benchmarks/end_to_end.py``'s, the
Hermes format through the chat template), greedy, up to ``--max-new-tokens``, generation stopped
once a call closes, with ``tool_choice`` required and auto. Each question is answered three ways
in the same run, paired: tooldec with jump-forward (the tokens the grammar forces evaluated in one
batch), tooldec without it, and unconstrained (for required, the call's start written into the
prompt, as ``end_to_end.py`` does). The prompt is evaluated before the clock starts, and the
answers after a question's first keep its whole chunks, which hold what a fresh evaluation would
(``PROMPT_CHUNK``), so every answer decodes from the same state; the loop evaluates the prompt's
last chunk again, with the unconstrained answer's written call start in it, so each answer pays
its first pass as a real loop does. The two tooldec answers take turns going first, so each pays a new tool list's first masks
for half the questions.

Reported per mode: forward passes per call (tokens the model evaluated one pass each, plus one
pass per forced span), the share of call tokens fast-forwarded, wall time per answer each way,
and how many jump-forward answers differ from the answer without it (text and token ids).
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

from benchmarks.end_to_end import questions  # noqa: E402
from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.paper.experiments.common import Session  # noqa: E402
from tooldec.decoding import Grammar, Machine, Mode  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402
from tooldec.runtime import forced_start  # noqa: E402

SYSTEMS = ("jump-forward", "tooldec", "unconstrained")
TURNS = ("tooldec", "jump-forward", "unconstrained")
"""The order for every other question."""


def answer(session: Session, generator: Any, prompt: str, grammar: Grammar | None, choice: str,
           jump: bool, max_new_tokens: int) -> dict[str, Any]:
    """One greedy answer, stopped at the first closed call; the prompt evaluated before the clock
    (what the cache holds of it in whole chunks kept)."""
    forced = forced_start(Hermes(), choice) if grammar is None else ""
    ids = list(session.tokenizer.encode(prompt + forced, add_special_tokens=False))
    generator.jump_forward = jump
    generator.next_logits(ids)
    start = time.perf_counter()
    out = generator.generate(ids, max_new_tokens=max_new_tokens, grammar=grammar, tool_choice=choice,
                             stop_after_call=Hermes())
    seconds = time.perf_counter() - start
    row = {"tokens": len(out.ids), "seconds": seconds, "forced": out.forced_steps, "jumps": out.jumps,
           "passes": len(out.ids) - out.forced_steps, "ids": out.ids,
           "text": session.vocab.decode(out.ids).decode("utf-8", errors="replace")}
    if grammar is not None:
        row["call_tokens"], row["calls"] = call_tokens(grammar, choice, out.ids)
    return row


def call_tokens(grammar: Grammar, choice: str, ids: list[int]) -> tuple[int, int]:
    """Tokens written inside calls (from the opener to the close) and the calls closed."""
    machine = Machine(grammar, tool_choice=choice)
    inside = 0
    for token in ids:
        before = machine.advanced.mode is Mode.TOOL
        if not machine.advance(token):
            break
        inside += before or machine.advanced.mode is Mode.TOOL or machine.advanced.call_just_closed
    return inside, machine.advanced.calls_completed


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for choice in ("required", "auto"):
        by = {s: {r["id"]: r for r in rows if r["choice"] == choice and r["system"] == s} for s in SYSTEMS}
        jf, off, free = by["jump-forward"], by["tooldec"], by["unconstrained"]
        if not jf:
            continue
        calls = sum(r["calls"] for r in jf.values())
        out.append({
            "choice": choice, "answers": len(jf), "calls": calls,
            "passes_per_call_jf": sum(r["passes"] for r in jf.values() if r["calls"]) / max(calls, 1),
            "passes_per_call_off": sum(r["passes"] for r in off.values() if r["calls"]) / max(
                sum(r["calls"] for r in off.values()), 1),
            "ff_share": sum(r["forced"] for r in jf.values()) / max(sum(r["call_tokens"] for r in jf.values()), 1),
            "ms_jf": 1000 * sum(r["seconds"] for r in jf.values()) / len(jf),
            "ms_off": 1000 * sum(r["seconds"] for r in off.values()) / len(off),
            "ms_free": 1000 * sum(r["seconds"] for r in free.values()) / len(free),
            "text_differs": sum(jf[q]["text"] != off[q]["text"] for q in jf),
            "ids_differ": sum(jf[q]["ids"] != off[q]["ids"] for q in jf),
        })
    return out


def table(setup: dict[str, Any], summary: list[dict[str, Any]]) -> str:
    lines = [f"{setup['model']} on llama.cpp ({setup['machine']}), {setup['items']} BFCL questions, greedy, "
             f"up to {setup['max_new_tokens']} new tokens, stopped at the first closed call", "",
             "| tool_choice | answers | calls | passes/call JF | passes/call no JF | call tokens fast-forwarded | "
             "ms/answer JF | ms/answer no JF | ms/answer unconstrained | JF vs unconstrained | text differs from no JF | ids differ |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summary:
        lines.append(
            f"| {s['choice']} | {s['answers']} | {s['calls']} | {s['passes_per_call_jf']:.1f} | "
            f"{s['passes_per_call_off']:.1f} | {100 * s['ff_share']:.0f}% | {s['ms_jf']:.0f} | {s['ms_off']:.0f} | "
            f"{s['ms_free']:.0f} | {100 * (s['ms_jf'] / s['ms_free'] - 1):+.1f}% | "
            f"{s['text_differs']}/{s['answers']} | {s['ids_differ']}/{s['answers']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, qwen, or a .gguf file")
    parser.add_argument("--items", type=int, default=40, help="questions (half simple_python, half multiple)")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: $TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=_ROOT / "runs" / "jump-forward")
    parser.add_argument("--summary", type=Path, default=None,
                        help="print the table of a jump_forward.jsonl written before (questions answered every way)")
    args = parser.parse_args(argv)
    if args.summary is not None:
        rows = [json.loads(line) for line in args.summary.open()]
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["id"]] = counts.get(r["id"], 0) + 1
        rows = [r for r in rows if counts[r["id"]] == 2 * len(SYSTEMS)]
        setup = {"model": rows[0]["model"], "machine": "from " + args.summary.name, "items": len(rows) // 6,
                 "max_new_tokens": "?"}
        print(table(setup, summarize(rows)))
        return 0

    session = Session(args.model, backend="llamacpp")
    from tooldec.backends import generator_for

    generator = generator_for(session.model, session.tokenizer, session.vocab)
    picked = questions(data_dir(args.data), args.items)
    setup = {**session.describe(), "items": args.items, "max_new_tokens": args.max_new_tokens}
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with (args.out / "jump_forward.jsonl").open("a") as sink:
        for number, (qid, tools, messages) in enumerate(tqdm(picked, unit="question")):
            grammar = Grammar(tools, session.vocab, Hermes())
            prompt = session.chat(messages, tools=tools, dialect=Hermes())
            for choice in ("required", "auto"):
                for system in SYSTEMS if number % 2 == 0 else TURNS:
                    row = {"model": session.label, "id": qid, "choice": choice, "system": system,
                           **answer(session, generator, prompt, None if system == "unconstrained" else grammar,
                                    choice, system == "jump-forward", args.max_new_tokens)}
                    rows.append(row)
                    sink.write(json.dumps(row) + "\n")
    text = table(setup, summarize(rows))
    print(text)
    with (args.out / "jump_forward.md").open("a") as md:
        md.write(f"\n`python benchmarks/jump_forward.py --model {args.model} --items {args.items} --max-new-tokens "
                 f"{args.max_new_tokens}` ({platform.python_version()}, {setup.get('cores')} cores)\n\n{text}\n")
    print(f"results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
