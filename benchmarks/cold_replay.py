"""What tooldec's masks cost per question when every tool list is new: real answers replayed.

Run from the repository root::

    python benchmarks/cold_replay.py --model qwen
    python benchmarks/cold_replay.py --model qwen --sweep-mb 64 --profile 25

The questions are ``end_to_end.py``'s (BFCL ``simple_python`` and ``multiple``, Hermes, a call
required). Their answers are generated once with tooldec on llama.cpp and kept in
``OUT/answers-MODEL.json``; then each answer is replayed through a fresh compiler (a new tool list
per question, as in end_to_end's cold pass): per token, the mask the loop would use
(``allowed(budget).pick_lists``) and the step (``advance``), timed in this thread's CPU time. The
vocabulary is prepared before the clock, as a server does at load. ``--sweep-mb`` reads that many
megabytes between tokens, outside the clock, as a forward pass streams the model's weights through
the CPU caches: the masks then run with the caches cold, as they do beside llama.cpp.
``--profile N`` prints the N functions with the most own time (cProfile); ``--profile -N`` the N
with the most time including their callees. ``--no-budget`` asks every mask without a token budget
(``allowed(None)``, and no ``check_budget`` first): against the default, what budgets cost a token
(the loop always passes one, so this is a measurement, not another way to decode). ``--phases``
then replays the answers once more on the same grammars (every mask cached, as in end_to_end's
warm pass) and times each call the loop makes per token apart: the cached lookup (``known``), the
sampler's lists, the pick (from a logits row written just before, as llama.cpp writes it) and the
step (``advance``). ``--check-first`` replays each token as llama.cpp's loop does by default
when no core is free beside it: the token taken if the grammar allows it under the budget
(``advance_within``), no mask made; answered twice, the second time on the same grammars (the
warm pass), each timed per position kind. The answers were made with masks, so every token passes
the check: a model's refused picks (and their masks) are end_to_end's to count.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper
sys.path.insert(0, str(_ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from end_to_end import questions  # noqa: E402

from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.paper.experiments.common import Session  # noqa: E402
from tooldec.backends import generator_for  # noqa: E402
from tooldec.backends.step import pick_token  # noqa: E402
from tooldec.decoding import Compiler, Machine  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen", help="smollm2, qwen, or a .gguf file")
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--sweep-mb", type=int, default=0, help="megabytes read between tokens (cold CPU caches)")
    parser.add_argument("--profile", type=int, default=0, help="functions to list by own time (negative: by time with callees; 0: no profile)")
    parser.add_argument("--phases", action="store_true", help="then time the loop's calls per token with every mask cached")
    parser.add_argument("--no-budget", action="store_true", help="masks without a token budget (what the budgets cost)")
    parser.add_argument("--check-first", action="store_true",
                        help="each token checked against the grammar (advance_within), no mask made: cold, then warm")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=_ROOT / "benchmarks" / "results" / "end-to-end")
    args = parser.parse_args(argv)

    session = Session(args.model, backend="llamacpp")
    picked = questions(data_dir(args.data), args.items)
    args.out.mkdir(parents=True, exist_ok=True)
    kept = args.out / f"answers-{session.label}-{args.items}-{args.max_new_tokens}.json"
    if not kept.exists():
        generator = generator_for(session.model, session.tokenizer, session.vocab)
        compiler = Compiler(session.vocab, Hermes())
        answers = {}
        for qid, tools, messages in picked:
            prompt = session.chat(messages, tools=tools, dialect=Hermes())
            session.model.reset()
            answers[qid] = generator.generate(list(session.tokenizer.encode(prompt, add_special_tokens=False)),
                                              max_new_tokens=args.max_new_tokens, grammar=compiler.compile(tools),
                                              tool_choice="required", stop_after_call=None).ids
        kept.write_text(json.dumps(answers))
    answers = json.loads(kept.read_text())

    width = session.model.n_vocab()
    sweep = np.ones(args.sweep_mb << 20, dtype=np.uint8) if args.sweep_mb else None
    profile = cProfile.Profile() if args.profile else None
    if args.check_first:
        check_first(picked, session.vocab, answers, sweep, args.max_new_tokens, profile)
        if profile is not None:
            pstats.Stats(profile).sort_stats("cumulative" if args.profile < 0 else "tottime").print_stats(abs(args.profile))
        return 0
    compiler = Compiler(session.vocab, Hermes())  # fresh caches; the vocabulary's tables are prepared here
    grammars = {}
    spent = tokens = 0
    per_question = []
    for qid, tools, _ in picked:
        before = spent
        start = time.thread_time_ns()
        grammars[qid] = compiler.compile(tools)
        machine = Machine(grammars[qid], tool_choice="required")
        if not args.no_budget:
            machine.check_budget(args.max_new_tokens)  # as generate() does before the prompt
        spent += time.thread_time_ns() - start
        for i, token in enumerate(answers[qid]):
            if sweep is not None:
                sweep[::64].sum()  # one byte per cache line
            start = time.thread_time_ns()
            if profile is not None:
                profile.enable()
            if args.no_budget:
                machine.advanced.allowed(None).pick_lists(width)
            else:
                machine.advanced.lists(args.max_new_tokens - i, width)
            machine.advance(token)
            if profile is not None:
                profile.disable()
            spent += time.thread_time_ns() - start
            tokens += 1
        per_question.append((spent - before) / 1e6)
    print(f"{session.label}, {len(picked)} questions, {tokens} answer tokens, {args.sweep_mb} MB read between tokens"
          f"{', no budget' if args.no_budget else ''}: "
          f"{spent / 1e6 / len(picked):.2f} ms of CPU per question, {spent / 1e3 / max(tokens, 1):.0f} µs per token")
    print("per question (ms of CPU):", " ".join(f"{ms:.1f}" for ms in per_question))
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative" if args.profile < 0 else "tottime").print_stats(abs(args.profile))
    if args.phases:
        phases(picked, grammars, answers, width, sweep, args.max_new_tokens)
    return 0


def check_first(picked: list[Any], vocab: Any, answers: dict[str, list[int]], sweep: np.ndarray | None,
                budget: int, profile: cProfile.Profile | None) -> None:
    """Each answer's tokens through ``advance_within`` on a fresh compiler, then again on the same
    grammars: CPU per token, by the kind of position it was taken at (the profile: both passes)."""
    compiler = Compiler(vocab, Hermes())
    grammars: dict[str, Any] = {}
    for pass_ in ("cold", "warm"):
        spent: dict[str, list[int]] = {}
        setup = 0
        for qid, tools, _ in picked:
            start = time.thread_time_ns()
            grammar = grammars.setdefault(qid, compiler.compile(tools))
            machine = Machine(grammar, tool_choice="required")
            machine.check_budget(budget)
            setup += time.thread_time_ns() - start
            for i, token in enumerate(answers[qid]):
                if sweep is not None:
                    sweep[::64].sum()
                kind = type(machine._pos).__name__
                start = time.thread_time_ns()
                if profile is not None:
                    profile.enable()
                taken = machine.advanced.advance_within(token, budget - i)
                if profile is not None:
                    profile.disable()
                spent.setdefault(kind, []).append(time.thread_time_ns() - start)
                assert taken, (qid, i)
        tokens = sum(len(v) for v in spent.values())
        total = setup + sum(sum(v) for v in spent.values())
        kinds = ", ".join(f"{kind} {len(v)} at {np.mean(v) / 1e3:.1f}" for kind, v in spent.items())
        print(f"check first, {pass_}: {total / 1e3 / tokens:.1f} µs of CPU per token ({setup / 1e3 / tokens:.1f} of it "
              f"compiling and checking the budget); per position kind, tokens at µs each: {kinds}")


def phases(picked: list[Any], grammars: dict[str, Any], answers: dict[str, list[int]], width: int,
           sweep: np.ndarray | None, max_new_tokens: int) -> None:
    """Replay the answers on grammars whose masks are all cached and print the loop's calls per
    token, each timed apart (this thread's CPU): what every token costs besides new masks."""
    rng = np.random.default_rng(0)
    fresh = rng.standard_normal(width).astype(np.float32)
    logits = np.empty_like(fresh)
    spent = dict.fromkeys(("known", "lists", "pick", "advance"), 0)
    tokens = missed = 0
    for qid, _, _ in picked:
        machine = Machine(grammars[qid], tool_choice="required")
        for i, token in enumerate(answers[qid]):
            if sweep is not None:
                sweep[::64].sum()
            logits[:] = fresh  # as llama.cpp writes the row before the loop reads it
            t0 = time.thread_time_ns()
            known = machine.advanced.known_lists(max_new_tokens - i, width)
            t1 = time.thread_time_ns()
            allowed, refused = known if known is not None else machine.advanced.lists(max_new_tokens - i, width)
            t2 = time.thread_time_ns()
            pick_token(logits, allowed, 0.0, rng, refused)
            t3 = time.thread_time_ns()
            machine.advance(token)
            t4 = time.thread_time_ns()
            for name, took in zip(spent, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                spent[name] += took
            tokens += 1
            missed += known is None
    print(f"every mask cached ({missed} of {tokens} tokens not at hand): per token, µs of CPU: "
          + ", ".join(f"{name} {took / 1e3 / max(tokens, 1):.1f}" for name, took in spent.items())
          + f"; together {sum(spent.values()) / 1e3 / max(tokens, 1):.1f}")


if __name__ == "__main__":
    sys.exit(main())
