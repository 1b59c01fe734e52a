"""Table 2 (the paper's Figure 5): does tool choice hold up as tools are added, without their docs?

KAMEL: questions whose answer is one Wikidata relation, with 10, 30, 60, 100 and 234 relations
as tools (``test_first_N.json`` asks only about the first N). The baseline has every tool's
one-line doc in the prompt (``name(arg): description``, as ToolkenGPT's in-context baseline);
ToolDec has no tool list at all: the names live only in its trie. Both must call a tool
(``tool_choice="required"``, Hermes format); correct if the called tool is the gold relation.

FuncQA seen/unseen: one-hop problems with the multi-hop few-shot prompt, whose examples show
only some operators ("seen"); the others are "unseen". The baseline's instruction documents all
13 operators; ToolDec's names none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldec.tools import Tool, ToolSet

from ..datasets import FUNCQA_OPS, kamel_tools
from .common import Session, System, constrained, hermes_dialect, mean
from .funcqa import few_shot, funcqa_prompt, solve

__all__ = ["COLUMNS", "SUBSETS", "items", "score", "summarize"]

KAMEL_SIZES = (10, 30, 60, 100, 234)
SYSTEMS = ("baseline", "repair", "tooldec", "tooldec_beam", "tooldec_tag", "tooldec_any", "tooldec_beam_any")
"""``tooldec_tag`` (KAMEL only): ToolDec with Hermes restricted to its ``<tool_call>`` opener, the
opener the baseline's forced start writes (as in BFCL). ``tooldec_any`` (KAMEL only): the required
call may open with any Hermes opener, what ``tooldec`` did until 2026-11-25 (its rows before then).
``tooldec_beam_any`` (KAMEL only): the same for ``tooldec_beam`` (its rows run before 2026-11-25)."""
SUBSETS = (*(f"kamel_{n}" for n in KAMEL_SIZES), "funcqa_seen", "funcqa_unseen")
COLUMNS = ("accuracy", "prompt_tokens", "invalid_calls", "seconds", "n")
PLOT = ("accuracy", "prompt_tokens")
FORMAT = ("For each function call, return a json object with function name and arguments within "
          "<tool_call></tool_call> XML tags:\n"
          '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>')


def _seen_ops(data: Path) -> set[str]:
    _, examples = few_shot(data, "multi_hop")
    return {op for op in FUNCQA_OPS if any(f"<{op}>(" in answer for _, answer in examples)}


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    if subset.startswith("kamel_"):
        return list(json.loads((data / "kamel" / f"test_first_{subset[6:]}.json").read_text()))
    seen = _seen_ops(data)
    oh = json.loads((data / "funcqa" / "funcqa_oh.json").read_text())
    want_seen = subset == "funcqa_seen"
    return [it for it in oh if (it["func"].lstrip("-").split(">")[0].lstrip("<") in seen) == want_seen]


def _kamel(data: Path, n: int) -> tuple[ToolSet, dict[str, str], str]:
    """Tools, relation id -> tool name, and the docs block of the in-context baseline."""
    specs = kamel_tools(data, n)
    desc = json.loads((data / "kamel" / "api_desc.json").read_text())
    names = {rel: spec["name"] for rel, spec in zip(list(desc)[:n], specs)}
    docs = "\n".join(f"{spec['name']}({', '.join(spec['parameters']['properties'])}): "
                     f"{spec['description'].rsplit(' (', 1)[0]}" for spec in specs)
    return ToolSet([Tool.from_dict(s) for s in specs]), names, docs


def kamel_prompt(session: Session, system: System, docs: str, question: str) -> str:
    """With docs (baseline, repair) or without (ToolDec); the same question and call format."""
    task = "Answer the question by calling the one function that returns the answer."
    if constrained(system):
        content = f"{task}\n\n{FORMAT}"
    else:
        content = f"{task} The functions:\n{docs}\n\n{FORMAT}"
    return session.chat([{"role": "system", "content": content}, {"role": "user", "content": question}])


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    if subset.startswith("kamel_"):
        n = int(subset[6:])
        tools, names, docs = session.cached(("kamel", n), lambda: _kamel(data, n))
        dialect = hermes_dialect(system)
        decoder = session.cached(("kamel", n, system), lambda: session.decoder(
            system, tools, dialect, tool_choice="required", parallel_tool_calls=False))
        prompt = kamel_prompt(session, system, docs, item["question"])
        once = session.once(decoder, system, prompt, max_new_tokens=48, tool_choice="required")
        gold = names[item["api"]]
        chosen = once.calls[0].name if once.calls else None
        return {"question": item["question"], "gold": gold, "chosen": chosen, "correct": chosen == gold,
                "invalid_calls": len(once.errors), "invalid_kinds": once.errors, "prompt_tokens": once.prompt_tokens,
                "tokens": once.tokens, "seconds": once.seconds, "text": once.text}
    if system in ("tooldec_tag", "tooldec_any", "tooldec_beam_any"):
        raise ValueError(f"{system} is a KAMEL system (FuncQA's calls are not in Hermes format)")
    header, examples = session.cached(("funcqa_shots", "multi_hop"), lambda: few_shot(data, "multi_hop"))
    if constrained(system):
        header = "Answer the following questions with tools:"
    else:
        header += "\n" + "\n".join(f"<{op}>: {text}" for op, (text, _) in FUNCQA_OPS.items())
    prompt = funcqa_prompt(session, header, examples, item["question"])
    row = solve(session, system, "generalization", prompt, float(item["answer"]), 128)
    return {"question": item["question"], "gold_call": item["func"], **row}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    return {
        "accuracy": mean(float(r["correct"]) for r in rows),
        "prompt_tokens": mean(r["prompt_tokens"] for r in rows),
        "invalid_calls": float(sum(r["invalid_calls"] for r in rows)),
        "seconds": mean(r["seconds"] for r in rows),
        "n": float(len(rows)),
    }

