"""The masks of a model's own answers, replayed: the end-to-end benchmark's mask work, on its own.

``benchmarks/end_to_end.py`` times tokens per second with llama.cpp, where the next mask is
computed on a worker thread beside the forward pass, so its cost shows only as the worker's time
and moves with the load. This command records once (``--record``, needs llama-cpp-python) the
token ids SmolLM2 writes for the same questions (BFCL simple_python and multiple with their own
functions, Hermes, greedy, a call required, the budget of ``--max-new-tokens``), then replays them
without the model: a fresh grammar per question (every mask cold, as for a server that gets a new
tool list with each request), every mask asked for as the loop asks for it (with the budget
left), its CPU time taken. ``--no-budget`` leaves the budget out; ``--profile`` lists where the
time goes (a second, profiled pass on a fresh compiler).

    python -m benchmarks.speed.replay --record        # writes runs/replay/smollm2.json
    python -m benchmarks.speed.replay                 # total, mean, p50 / p90 / p99 / max of one mask
    python -m benchmarks.speed.replay --no-budget --profile
    python -m benchmarks.speed.replay --states         # and how many argument states were built
    python -m benchmarks.speed.replay --answers runs/replay/smollm2-fenced.json

``smollm2.json`` holds the answers of today's default (a required call opens with ``<tool_call>``);
``smollm2-fenced.json`` the answers recorded when a required call could open with any opener
(SmolLM2 then fenced and pretty-printed every call: the loose style's whitespace runs).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import json
import pstats
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.paper.datasets import data_dir
from tooldec.decoding import Compiler, Machine
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path
from tooldec.tokens import Vocabulary, load_vocabulary
from tooldec.tools import ToolSet

from ..end_to_end import questions
from .cold_profile import cpu_ns

RECORD = Path(__file__).resolve().parents[2] / "runs" / "replay" / "smollm2.json"


def record(items: int, max_new_tokens: int, data: Path | None, path: Path) -> None:
    """Generate each question's tooldec answer with SmolLM2 on llama.cpp and keep its token ids."""
    from benchmarks.paper.experiments.common import Session
    from tooldec.backends import generator_for
    from tooldec.decoding import Grammar

    session = Session("smollm2", backend="llamacpp")
    generator = generator_for(session.model, session.tokenizer, session.vocab)
    answers = {}
    for qid, tools, messages in questions(data_dir(data), items):
        prompt = session.chat(messages, tools=tools, dialect=Hermes())
        ids = list(session.tokenizer.encode(prompt, add_special_tokens=False))
        session.model.reset()
        generation = generator.generate(ids, max_new_tokens=max_new_tokens, grammar=Grammar(tools, session.vocab, Hermes()),
                                        tool_choice="required", stop_after_call=None)
        answers[qid] = generation.ids
    path.parent.mkdir(parents=True, exist_ok=True)
    forced = [o.name for o in Hermes().forced_openers()]
    path.write_text(json.dumps({"model": session.label, "max_new_tokens": max_new_tokens, "forced": forced,
                                "answers": answers}) + "\n")
    print(f"recorded {len(answers)} answers, {sum(map(len, answers.values()))} tokens -> {path}")


def replay(compiler: Compiler, picked: list[tuple[str, ToolSet]], answers: dict[str, list[int]], budget: int | None,
           profile: cProfile.Profile | None) -> list[int]:
    """Every mask of every answer once, on a fresh snapshot per question; CPU ns of each."""
    times = []
    size = compiler.vocab.size
    for qid, tools in picked:
        machine = Machine(compiler.compile(tools), tool_choice="required")
        for step, token in enumerate(answers[qid]):
            left = None if budget is None else budget - step
            times.append(cpu_ns(functools.partial(_pickable, machine, left, size), profile))
            if not machine.advance(token):
                raise RuntimeError(f"{qid}: token {token} at step {step} was refused")
    return times


def _pickable(machine: Machine, budget: int | None, size: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The mask as llama.cpp's loop asks for it: the shorter of its allowed and refused ids."""
    return machine.advanced.allowed(budget).pick_lists(size)


def _argument_states(compiler: Compiler) -> str:
    """How many states the replay's argument automata built, and how many of those share their
    NFA states with another one (they differ only in a counter, such as a whitespace run's)."""
    built = expanded = twins = 0
    for tail in compiler.tails.values():
        dfa = tail.dfa
        sets = Counter(dfa.nfa_states(sid) for sid in range(1, dfa.n_states))
        for sid in range(1, dfa.n_states):
            if dfa.arrays.expanded[sid]:
                expanded += 1
                twins += sets[dfa.nfa_states(sid)] > 1
            built += 1
    return (f"argument automata: {built} states made, {expanded} expanded, {twins} of those share their NFA states "
            f"with another state ({twins / max(expanded, 1):.0%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="generate the answers with SmolLM2 first")
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--no-budget", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--states", action="store_true", help="count the argument automata's states built")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--answers", type=Path, default=RECORD)
    args = parser.parse_args(argv)
    if args.record:
        record(args.items, args.max_new_tokens, args.data, args.answers)
    saved = json.loads(args.answers.read_text())
    answers = saved["answers"]
    picked = [(qid, tools) for qid, tools, _ in questions(data_dir(args.data), len(answers))]
    vocab: Vocabulary = load_vocabulary(smollm2_gguf_path())
    budget = None if args.no_budget else int(saved["max_new_tokens"])
    dialect = Hermes(forced=saved.get("forced"))  # the openers the answers' calls were recorded with
    timed, profiled = (Compiler(vocab, dialect) for _ in range(2))  # separate caches: both passes cold
    gc.collect()
    gc.freeze()
    ns = np.asarray(replay(timed, picked, answers, budget, None), dtype=np.float64) / 1e3
    print(f"{saved['model']}, {len(picked)} answers, budget {budget}: {ns.size} masks, {ns.sum() / 1e3:.1f} ms CPU, "
          f"mean {ns.mean():.0f} µs, p50 {np.percentile(ns, 50):.0f} µs, p90 {np.percentile(ns, 90):.0f} µs, "
          f"p99 {np.percentile(ns, 99):.0f} µs, max {ns.max() / 1e3:.2f} ms")
    if args.states:
        print(_argument_states(timed))
    if args.profile:
        profile = cProfile.Profile()
        replay(profiled, picked, answers, budget, profile)
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
