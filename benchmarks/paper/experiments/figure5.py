"""The paper's Figure 5 as it was run (Experiment II): tools seen in training against tools never seen.

Raw completion prompts, as ToolkenGPT's (no chat template; KAMEL few-shot excepted, below), and five
systems on the same model:

* ``zeroshot``: every tool's one-line doc in the prompt and the call syntax, no example.
* ``fewshot``: the same docs plus demonstrations of the seen tools (KAMEL: ToolkenGPT's own 30
  examples of ``kamel_first_30.txt``, given to the chat model as prior turns of its chat template,
  each a user question and the assistant's ``<tool_call>``, so the answer is the model's next
  turn; FuncQA: one ``train.json`` text per seen operator with its call written in, raw).
* ``toolkengpt``: no docs; one learned toolken per *seen* tool (unseen tools cannot be called).
* ``tooldec``: no docs; the learned ``<T>`` opens a call, whose name is decoded under the
  finite-state machine over *all* the tools, then its arguments.
* ``tooldec_beam``: ``tooldec`` with the name chosen by a beam over whole names.

FuncQA's learned systems run ToolkenGPT's two contexts (``toolmode.py``): the tool is chosen in
the reasoning context (toolken, or ``<T>`` and the name under the grammar), the arguments are
written with that operator's demonstrations, so only the choice of tool differs.

KAMEL with 30, 60, 100 and 234 relations as tools (30 seen; ``test_first_N.json`` asks about
the first N): correct if the call names the gold relation. Calls are written in Qwen's Hermes
format (``<tool_call>\n{"name": ...}``) by every system: after ``<T>`` the grammar writes that
opener, so the name is chosen where a tool-calling model expects one (after the bare ``[`` of
a Python-style call, Qwen2.5-Coder-0.5B chose far worse in a trial). FuncQA one-hop and multi-hop problems
split by whether their operators are all seen (``add``, ``subtract``, ``multiply``, ``divide``):
FuncQA's accuracy rule on the final text. The learned rows come from ``learn.learned_tokens``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Sequence
from math import comb
from pathlib import Path
from typing import Any

from tooldec.decoding import Grammar
from tooldec.dialects import Hermes, ToolCall, ToolkenGPT
from tooldec.learned import LearnedTokens
from tooldec.learned.generator import LearnedGenerator, learned_decoder
from tooldec.runtime.selection import NameSelector, Selection

from ..datasets import FUNCQA_OPS
from .common import Session, System, call_errors, mean, wilson
from .funcqa import extract_answer, funcqa_toolset, is_correct
from .generalization import _kamel
from .learn import FUNCQA_SEEN, KAMEL_SEEN, learned_tokens, switching_rows
from .toolmode import ToolMode
from .trigger_dialects import TriggerHermes

__all__ = ["COLUMNS", "SUBSETS", "SYSTEMS", "items", "score", "summarize"]

KAMEL_SIZES = (30, 60, 100, 234)
SUBSETS = (*(f"kamel_{n}" for n in KAMEL_SIZES), "funcqa_oh_seen", "funcqa_oh_unseen", "funcqa_mh_seen",
           "funcqa_mh_unseen")
SYSTEMS = ("zeroshot", "fewshot", "toolkengpt", "tooldec", "tooldec_beam")
COLUMNS = ("accuracy", "ci_low", "ci_high", "accuracy_seen", "accuracy_unseen", "tool_errors", "no_call", "fired",
           "prompt_tokens", "seconds", "n")
KAMEL_TASK = ("Your task is to call an API to answer a question. Return the call as a json object with the API's "
              'name and arguments within <tool_call></tool_call> XML tags: <tool_call>\n{"name": <api-name>, '
              '"arguments": <args-json-object>}\n</tool_call>')
FUNCQA_TASK = ("Answer the following questions with the operators below. Write a calculation as "
               "<operator>(number, number)= and its result will follow.")
FUNCQA_STOP = ("\n\n", "\nQ:", "\nQuestion:")
_NO_ROWS = "none"


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    if subset.startswith("kamel_"):
        return list(json.loads((data / "kamel" / f"test_first_{subset[6:]}.json").read_text()))
    one_hop = subset.startswith("funcqa_oh")
    rows = json.loads((data / "funcqa" / ("funcqa_oh.json" if one_hop else "funcqa_mh.json")).read_text())
    want_seen = subset.endswith("_seen")
    return [it for it in rows if all(op in FUNCQA_SEEN for op in _ops(it)) == want_seen]


def _ops(item: dict[str, Any]) -> list[str]:
    calls = [item["func"]] if "func" in item else item["calculation"]
    return [m.group(1) for m in (re.match(r"-?<(\w+)>", c) for c in calls) if m]


def _folder(session: Session) -> Path:
    return (session.out or Path("runs/bench")) / "figure5" / session.label / "learned"


def _generator(session: Session, data: Path, task: str, kind: str, **options: Any) -> LearnedGenerator:
    """A llama.cpp generator with the learned rows of ``kind`` (``none`` for the prompted systems)."""
    def make() -> LearnedGenerator:
        if kind == _NO_ROWS:
            learned = LearnedTokens((), (), _empty(session), session.path.name, _dim(session), session.vocab.fingerprint)
        else:
            learned = learned_tokens(session, task, kind, data, _folder(session))  # type: ignore[arg-type]
        return LearnedGenerator(session.model, session.tokenizer, session.vocab, learned, **options)

    return session.cached(("figure5", task, kind, tuple(sorted(options.items()))), make)  # type: ignore[no-any-return]


def _tool_context(session: Session) -> LearnedGenerator:
    """A generator on a second llama.cpp context of the same model file (weights shared by mmap),
    for one tool's arguments: its demonstrations stay in this context's KV cache."""
    from llama_cpp import Llama

    threads = int(session.model.context_params.n_threads)
    llm = Llama(model_path=str(session.path), n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False)
    empty = LearnedTokens((), (), _empty(session), session.path.name, _dim(session), session.vocab.fingerprint)
    return LearnedGenerator(llm, session.tokenizer, session.vocab, empty)


def _dim(session: Session) -> int:
    return int(session.model.n_embd())


def _empty(session: Session) -> Any:
    import numpy as np

    return np.zeros((0, _dim(session)), dtype=np.float32)


# -- KAMEL ------------------------------------------------------------------------------------


def _kamel_shots(data: Path, names: dict[str, str], specs: dict[str, list[str]]) -> list[tuple[str, str]]:
    """ToolkenGPT's 30 in-context examples (one per seen relation): (question, call in Hermes syntax)."""
    text = (data / "kamel" / "template" / "kamel_first_30.txt").read_text()
    shots = []
    for question, rel, arg in re.findall(r"Question: (.*)\nAnswer: The answer is <(P\d+)>\((.*?)\)=", text):
        name = names[rel]
        shots.append((question, Hermes().format_call(ToolCall(name, {specs[name][0]: arg}))))
    return shots


def kamel_prompt(system: System, question: str, docs: str = "") -> str:
    """ToolkenGPT's ``kamel_general.txt`` frame, raw; zero-shot gets the docs first."""
    frame = f"Question: {question}\nAnswer: The answer is"
    if system == "zeroshot":
        return f"{KAMEL_TASK}\nAPI list:\n{docs}\n\n{frame}"
    return frame


def kamel_chat_prompt(session: Session, question: str, docs: str, shots: Sequence[tuple[str, str]]) -> str:
    """Few-shot through the chat template: the task and docs as system message, each example a
    user turn and the assistant's call. In the raw frame, after 30 calls that open with Qwen's
    ``<tool_call>``, the instruct model wrote its end-of-turn token first on every question."""
    messages: list[dict[str, str]] = [{"role": "system", "content": f"{KAMEL_TASK}\nAPI list:\n{docs}"}]
    for shot, call in shots:
        messages += [{"role": "user", "content": shot}, {"role": "assistant", "content": call}]
    messages.append({"role": "user", "content": question})
    return session.chat(messages)


def _score_kamel(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    n = int(subset[6:])
    tools, names, docs = session.cached(("kamel", n), lambda: _kamel(data, n))
    rels = list(names)
    gold, seen = names[item["api"]], rels.index(item["api"]) < KAMEL_SEEN
    specs = {t.name: list(t.parameters.get("properties", {})) for t in tools}
    if system == "fewshot":
        shots = session.cached(("kamel_shots",), lambda: _kamel_shots(data, names, specs))
        prompt = kamel_chat_prompt(session, item["question"], docs, shots)
    else:
        prompt = kamel_prompt(system, item["question"], docs)
    ids = list(session.tokenizer.encode(prompt, add_special_tokens=False))
    errors: list[str] = []
    runner: Any = None
    if system in ("zeroshot", "fewshot"):  # a chat turn ends with its end-of-turn token (its call spans lines)
        generator = _generator(session, data, "kamel", _NO_ROWS, stop=("\n",) if system == "zeroshot" else ())
        generation, seconds = _timed(lambda: generator.generate(ids, max_new_tokens=64, stop_after_call=Hermes()))
        text = _decode(generator, generation.ids)
        calls = Hermes().parse_calls(text)[:1]
        errors = call_errors(text[: text.find("</tool_call>") + 12] if calls else text, calls, tools, Hermes())
        chosen = calls[0].name if calls else None
        fired = 0
    elif system == "toolkengpt":
        generator = _generator(session, data, "kamel", "toolkens", stop=("\n",), stop_after_learned=True)
        generator.events.clear()
        generation, seconds = _timed(lambda: generator.generate(ids, max_new_tokens=48))
        text = _decode(generator, generation.ids)
        chosen = generator.events[0].name[1:-1] if generator.events else None  # "<name>" -> name
        fired = len(generator.events)
    else:
        generator = _generator(session, data, "kamel", "trigger", stop=("\n",))
        dialect = TriggerHermes()
        grammar = session.cached(("figure5_grammar", n), lambda: Grammar(tools, generator.vocab, dialect))
        runner = generator
        if system == "tooldec_beam":
            runner = session.cached(("figure5_beam", "kamel"), lambda: NameSelector(generator, width=session.beam_width))
        generator.events.clear()
        generation, seconds = _timed(lambda: runner.generate(
            ids, max_new_tokens=96, grammar=grammar, tool_choice="auto", parallel_tool_calls=False, max_calls=1,
            stop_after_call=dialect))
        text = _decode(generator, generation.ids)
        calls = dialect.parse_calls(text)[:1]
        fired = len(generator.events)
        errors = call_errors(text, calls, tools, dialect) + ["unparseable"] * max(0, min(fired, 1) - len(calls))
        chosen = calls[0].name if calls else None
    beam = _selection(runner if system == "tooldec_beam" else None)
    if beam:
        fired = len(beam["beam"])  # the selector's own loop: each name chosen followed a <T>
    return {"question": item["question"], "gold": gold, "seen": seen, "chosen": chosen, "correct": chosen == gold,
            "no_call": chosen is None, "fired": fired, "invalid_calls": len(errors), "invalid_kinds": errors,
            "prompt_tokens": len(ids), "tokens": len(generation.ids), "seconds": seconds, **beam, "text": text}


def _timed(call: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def _decode(generator: LearnedGenerator, ids: Sequence[int]) -> str:
    kept = [t for t in ids if t not in generator.eos_ids]
    return generator.vocab.decode(kept).decode("utf-8", errors="replace")


def _selection(selector: NameSelector | None) -> dict[str, Any]:
    """The beam's choices for this item (and clear them)."""
    if selector is None:
        return {}
    made = list(selector.selections)
    selector.selections.clear()
    return _selections(made)


def _selections(made: Sequence[Selection]) -> dict[str, Any]:
    return {"beam": [{"name": s.name, "logprob": round(s.logprob, 4), "candidates": s.candidates,
                      "evaluations": s.evaluations, "seconds": round(s.seconds, 4)} for s in made]}


# -- FuncQA -----------------------------------------------------------------------------------


def _funcqa_shots(data: Path) -> list[tuple[str, str]]:
    """One ``train.json`` text per seen operator, its call written before the result."""
    shots: dict[str, tuple[str, str]] = {}
    for item in json.loads((data / "funcqa" / "train.json").read_text()):
        if len(item["tar_eq"]) != 1:
            continue
        eq, number = item["tar_eq"][0], item["tar_number"][0]
        op = re.match(r"<(\w+)>", eq)
        at = item["text"].rfind("=" + number)
        if op is None or op.group(1) not in FUNCQA_SEEN or op.group(1) in shots or at < 0:
            continue
        call = eq.split("=")[0] + "="
        text = item["text"][: at + 1] + call + item["text"][at + 1:]
        question, _, answer = text.partition("\nA: ")
        shots[op.group(1)] = (question.removeprefix("Q: "), answer)
    return [shots[op] for op in FUNCQA_SEEN if op in shots]


def funcqa_prompt(system: System, question: str, one_hop: bool, data: Path) -> str:
    """The general template (no tools) for the learned systems; docs (and examples) for the prompted."""
    q, a = ("Q", "A") if one_hop else ("Question", "Answer")
    if system not in ("zeroshot", "fewshot"):
        general = (data / "funcqa" / ("template_oh" if one_hop else "template_mh") / "llama_general.txt").read_text()
        return general.replace("[QUESTION]", question)
    docs = "\n".join(f"<{op}>: {text}" for op, (text, _) in FUNCQA_OPS.items())
    shots = "".join(f"{q}: {sq}\n{a}: {sa}\n\n" for sq, sa in _funcqa_shots(data)) if system == "fewshot" else ""
    return f"{FUNCQA_TASK}\n{docs}\n\n{shots}{q}: {question}\n{a}:"


def _score_funcqa(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    one_hop = subset.startswith("funcqa_oh")
    budget = 128 if one_hop else 192
    tools = session.cached("funcqa_tools", funcqa_toolset)
    prompt = funcqa_prompt(system, item["question"], one_hop, data)
    if system in ("zeroshot", "fewshot"):  # one context, calls written as the prompt shows
        decoder = session.cached(("figure5_funcqa", system, one_hop), lambda: learned_decoder(
            _generator(session, data, "funcqa", _NO_ROWS, stop=FUNCQA_STOP), tools, dialect=ToolkenGPT(tools),
            constrained=False, max_new_tokens=budget, max_calls_per_turn=8, temperature=0.0))
        result, seconds = _timed(lambda: decoder.run(prompt))
        text, records = result.text, result.calls
        kinds = [entry.kind.value for entry in result.trace.invalid]
        fired, tokens, beam = 0, result.trace.tokens_generated, {}
    else:  # ToolkenGPT's two contexts: reasoning, then tool mode for the arguments
        def make() -> ToolMode:
            kind = "toolkens" if system == "toolkengpt" else "trigger"
            reasoning = _generator(session, data, "funcqa", kind, stop=FUNCQA_STOP, stop_after_learned=True)

            def plain(tool: str) -> LearnedGenerator:
                return session.cached(("tool_context", tool), lambda: _tool_context(session))  # type: ignore[no-any-return]

            width = None if system == "toolkengpt" else (session.beam_width if system == "tooldec_beam" else 1)
            folder = data / "funcqa" / ("template_oh" if one_hop else "template_mh")
            return ToolMode(reasoning, plain, tools, folder, width=width)

        mode = session.cached(("figure5_toolmode", system, one_hop), make)
        outcome, seconds = _timed(lambda: mode.solve(prompt, item["question"], budget))
        text, records, kinds, fired, tokens = outcome.text, outcome.calls, outcome.errors, outcome.fired, outcome.tokens
        beam = _selections(outcome.selections) if system == "tooldec_beam" else {}
    pred = extract_answer(_cut(text))
    gold = float(item["answer"])
    return {"question": item["question"], "seen": subset.endswith("_seen"), "gold": gold, "pred": pred,
            "correct": is_correct(pred, gold), "calls": len(records), "called": [r.call.name for r in records],
            "no_call": not records, "fired": fired, "invalid_calls": len(kinds), "invalid_kinds": kinds,
            "tokens": tokens, "seconds": seconds, "prompt_tokens": session.count_tokens(prompt), **beam, "text": text}


def _cut(text: str) -> str:
    """The answer to this question only: a raw prompt's model may go on with the next one."""
    ends = [i for i in (text.find(s) for s in FUNCQA_STOP) if i >= 0]
    return text[: min(ends)] if ends else text


# -- the experiment ----------------------------------------------------------------------------


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    if session.backend != "llamacpp":
        raise ValueError("figure5 decodes learned tokens with llama.cpp: give a .gguf model (--backend llamacpp)")
    if subset.startswith("kamel_"):
        return _score_kamel(session, system, subset, item, data)
    return _score_funcqa(session, system, subset, item, data)


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Accuracy with its 95% Wilson interval; by seen/unseen gold tool; tool errors; calls not made."""
    n = len(rows)
    hits = sum(float(r["correct"]) for r in rows)
    low, high = wilson(hits, n)
    return {
        "accuracy": hits / n if n else float("nan"), "ci_low": low, "ci_high": high,
        "accuracy_seen": mean(float(r["correct"]) for r in rows if r.get("seen")),
        "accuracy_unseen": mean(float(r["correct"]) for r in rows if not r.get("seen")),
        "tool_errors": float(sum(r["invalid_calls"] for r in rows)),
        "no_call": float(sum(bool(r["no_call"]) for r in rows)),
        "fired": mean(r["fired"] for r in rows),
        "prompt_tokens": mean(r["prompt_tokens"] for r in rows),
        "seconds": mean(r["seconds"] for r in rows),
        "n": float(n),
    }


def extra_tables(folder: Path) -> str:
    """The mode-switching table (the paper's A.7), from the learned rows' metadata."""
    from .common import markdown_table

    out = ""
    rows = switching_rows(folder / "learned")
    if rows:
        columns = ["task", "tokens", "tools", "precision", "recall", "f1", "calls", "fired", "tool_accuracy"]
        out += "\n\nMode switching on held-out demonstrations (teacher forcing, greedy):\n\n" + markdown_table(rows, columns)
    paired = [row for subset in SUBSETS if (row := paired_names(folder, subset))]
    if paired:
        out += ("\n\nName choice, greedy (`tooldec`) against the beam (`tooldec_beam`) on the same questions "
                "(p: exact two-sided sign test on the questions only one gets right):\n\n"
                + markdown_table(paired, list(paired[0])))
    return out


def paired_names(folder: Path, subset: str) -> dict[str, Any] | None:
    """``tooldec`` and ``tooldec_beam`` on the questions both ran (the first ``n`` of ``subset``)."""
    files = [folder / system / f"{subset}.jsonl" for system in ("tooldec", "tooldec_beam")]
    if not all(f.exists() for f in files):
        return None
    greedy, beam = ([json.loads(line) for line in f.open()] for f in files)
    pairs = list(zip(greedy, beam, strict=False))
    if not pairs or any(g["question"] != b["question"] for g, b in pairs):
        return None
    only_greedy = sum(g["correct"] and not b["correct"] for g, b in pairs)
    only_beam = sum(b["correct"] and not g["correct"] for g, b in pairs)
    return {"subset": subset, "greedy": mean(float(g["correct"]) for g, _ in pairs),
            "beam": mean(float(b["correct"]) for _, b in pairs), "only_greedy": only_greedy, "only_beam": only_beam,
            "p": sign_test(only_greedy, only_beam), "other_name": sum(_names(g) != _names(b) for g, b in pairs),
            "greedy_errors": sum(g["invalid_calls"] for g, _ in pairs),
            "beam_errors": sum(b["invalid_calls"] for _, b in pairs),
            "name_evaluations": mean(s["evaluations"] for _, b in pairs for s in b.get("beam", [])),
            "name_seconds": mean(s["seconds"] for _, b in pairs for s in b.get("beam", [])),
            "greedy_s": mean(g["seconds"] for g, _ in pairs), "beam_s": mean(b["seconds"] for _, b in pairs),
            "n": len(pairs)}


def _names(row: dict[str, Any]) -> Any:
    """The tool a KAMEL row chose, or the tools a FuncQA row called."""
    return row["chosen"] if "chosen" in row else row.get("called")


def sign_test(a: int, b: int) -> float:
    """Exact two-sided p-value that ``a`` and ``b`` discordant pairs came from a fair coin (McNemar's exact test).

    Examples:
        >>> round(sign_test(10, 2), 4)
        0.0386
        >>> sign_test(3, 3)
        1.0
    """
    n, k = a + b, min(a, b)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / float(2**n))


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """KAMEL accuracy against the number of tools (with 95% intervals); FuncQA as bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    systems = [s for s in SYSTEMS if any(r["system"] == s for r in rows)]
    for system in systems:
        kamel = sorted(((int(r["subset"][6:]), r) for r in rows if r["system"] == system and r["subset"].startswith("kamel_")),
                       key=lambda kv: kv[0])
        if kamel:
            xs = [k for k, _ in kamel]
            ys = [r["accuracy"] for _, r in kamel]
            err = [[r["accuracy"] - r["ci_low"] for _, r in kamel], [r["ci_high"] - r["accuracy"] for _, r in kamel]]
            left.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=system)
    left.set_xscale("log")
    left.set_xticks(list(KAMEL_SIZES), [str(k) for k in KAMEL_SIZES])
    left.set_xticks([], minor=True)  # a log axis labels its minor ticks too (4x10^1 over 30..234)
    left.set_xlim(KAMEL_SIZES[0] * 0.85, KAMEL_SIZES[-1] * 1.15)
    n_kamel = _counts(r for r in rows if r["subset"].startswith("kamel_"))
    left.set_xlabel("tools (30 seen)")
    left.set_ylabel("accuracy")
    left.set_ylim(0, 1.05)
    left.set_title("KAMEL (n: " + ", ".join(f"{s[6:]}={k}" for s, k in n_kamel.items()) + ")", fontsize=9)
    left.legend(fontsize=7)
    subsets = [s for s in SUBSETS if s.startswith("funcqa") and any(r["subset"] == s for r in rows)]
    width = 0.8 / max(len(systems), 1)
    for j, system in enumerate(systems):
        vals = [next((r for r in rows if r["subset"] == s and r["system"] == system), None) for s in subsets]
        ys = [v["accuracy"] if v else float("nan") for v in vals]
        err = [[v["accuracy"] - v["ci_low"] if v else 0 for v in vals], [v["ci_high"] - v["accuracy"] if v else 0 for v in vals]]
        right.bar([i + j * width for i in range(len(subsets))], ys, width, yerr=err, capsize=2, label=system)
    right.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(subsets))],
                     [s.removeprefix("funcqa_") for s in subsets], fontsize=8)
    right.set_ylim(0, 1.05)
    n = _counts(rows)
    right.set_title("FuncQA (n: " + ", ".join(f"{s.removeprefix('funcqa_')}={n[s]}" for s in subsets) + ")", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _counts(rows: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Questions per subset for a plot title: ``100/200`` when the systems ran different counts."""
    seen: dict[str, set[int]] = {}
    for row in rows:
        seen.setdefault(row["subset"], set()).add(int(row["n"]))
    return {subset: "/".join(str(k) for k in sorted(ks)) for subset, ks in seen.items()}
