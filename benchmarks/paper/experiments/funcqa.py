"""Table 1 (the paper's Table 4): FuncQA multi-hop (68) and one-hop (60) math word problems.

ToolkenGPT-style calls ``<op>(args)=result`` with FuncQA's own few-shot prompts
(``template_{mh,oh}/llama_func.txt``), given to the chat model as few-shot chat turns so it stops
at the end of its answer. The tool's result is written right after ``=`` and the model goes on.
Scored by FuncQA's rule: the last number of the output (after ``####`` if present), within 0.1%.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tooldec.dialects import ToolkenGPT
from tooldec.tools import Tool, ToolSet

from ..datasets import funcqa_tools
from .common import Session, System, mean

__all__ = ["COLUMNS", "SUBSETS", "extract_answer", "funcqa_prompt", "funcqa_toolset", "is_correct", "items",
           "score", "summarize"]

SUBSETS = ("multi_hop", "one_hop")
COLUMNS = ("accuracy", "tool_error_rate", "invalid_calls", "calls", "seconds", "tokens", "n")
MAX_NEW_TOKENS = {"multi_hop": 192, "one_hop": 128}
_FILES = {"multi_hop": ("funcqa_mh.json", "template_mh"), "one_hop": ("funcqa_oh.json", "template_oh")}
_NUMBER = re.compile(r"[-+]?\d*\.\d+|\d+")


def extract_answer(text: str) -> float | None:
    """FuncQA's answer: the last number, after the last ``####`` if there is one, commas removed.

    Examples:
        >>> extract_answer("so 2^8=<power>(2,8)=256. #### 256")
        256.0
        >>> extract_answer("The cost is 1,250.5 dollars.")
        1250.5
        >>> extract_answer("no idea") is None
        True
    """
    tail = text.split("####")[-1].replace(",", "")
    numbers = _NUMBER.findall(tail)
    return float(numbers[-1]) if numbers else None


def is_correct(pred: float | None, gold: float) -> bool:
    """Within 0.1% of the gold answer (exact when the gold answer is 0).

    Examples:
        >>> is_correct(32.38, 32.38), is_correct(32.41, 32.38), is_correct(32.42, 32.38)
        (True, True, False)
        >>> is_correct(0.0, 0), is_correct(0.0001, 0), is_correct(None, 1)
        (True, False, False)
    """
    if pred is None:
        return False
    return pred == gold if gold == 0 else abs(pred - gold) <= 0.001 * abs(gold)


def _number(value: float) -> float | int:
    """Results as FuncQA's prompts write them: integers bare, others rounded to 4 decimals."""
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return int(value)
    return round(value, 4)


def _operations() -> dict[str, Callable[..., Any]]:
    def variadic(fold: Callable[[list[float]], float]) -> Callable[..., Any]:
        return lambda numbers: _number(fold(numbers))

    def integers(values: Sequence[float]) -> list[int]:
        if not all(float(v).is_integer() for v in values):
            raise ValueError("needs integers")
        return [int(v) for v in values]

    return {
        "add": variadic(sum),
        "subtract": lambda a, b: _number(a - b),
        "multiply": variadic(math.prod),
        "divide": lambda a, b: _number(a / b),
        "power": lambda a, b: _number(float(a) ** b),
        "sqrt": lambda a: _number(math.sqrt(a)),
        "log": lambda a, b=10: _number(math.log(a, b)),
        "ln": lambda a: _number(math.log(a)),
        "lcm": variadic(lambda ns: float(math.lcm(*integers(ns)))),
        "gcd": variadic(lambda ns: float(math.gcd(*integers(ns)))),
        "remainder": lambda a, b: _number(math.remainder(a, b) % b if b else a % b),
        "choose": lambda a, b: _number(math.comb(*integers([a, b]))),
        "permutate": lambda a, b: _number(math.perm(*integers([a, b]))),
    }


def funcqa_toolset() -> ToolSet:
    """FuncQA's 13 operators, runnable."""
    ops = _operations()
    return ToolSet([Tool(d["name"], d["description"], d["parameters"], ops[d["name"]]) for d in funcqa_tools()])


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    return list(json.loads((data / "funcqa" / _FILES[subset][0]).read_text()))


def few_shot(data: Path, subset: str) -> tuple[str, list[tuple[str, str]]]:
    """The template's instruction line and its (question, answer) examples."""
    text = (data / "funcqa" / _FILES[subset][1] / "llama_func.txt").read_text()
    header, _, body = text.partition("\n\n")
    pairs = re.findall(r"(?:Question|Q): (.*?)\n(?:Answer|A): (.*?)(?:\n\n|$)", body, re.DOTALL)
    return header.strip(), [(q.strip(), a.strip()) for q, a in pairs if "[QUESTION]" not in q]


def funcqa_prompt(session: Session, header: str, examples: Sequence[tuple[str, str]], question: str) -> str:
    """Few-shot chat turns: the instruction as system message, each example a user/assistant pair."""
    messages: list[dict[str, str]] = [{"role": "system", "content": header}]
    for q, a in examples:
        messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    messages.append({"role": "user", "content": question})
    return session.chat(messages)


def solve(session: Session, system: System, key: str, prompt: str, gold: float, max_new_tokens: int) -> dict[str, Any]:
    """Run one problem through ``system``; the row every FuncQA-style table reports."""
    tools = session.cached("funcqa_tools", funcqa_toolset)
    decoder = session.cached(("funcqa", key, system), lambda: session.decoder(
        system, tools, ToolkenGPT(tools), max_new_tokens=max_new_tokens, max_calls_per_turn=8))
    result = decoder.run(prompt)
    pred = extract_answer(result.text)
    kinds = [entry.kind.value for entry in result.trace.invalid]
    return {
        "gold": gold, "pred": pred, "correct": is_correct(pred, gold),
        "calls": len(result.calls), "invalid_calls": len(kinds), "invalid_kinds": kinds,
        "tool_failures": sum(not r.ok for r in result.calls),
        "tokens": result.trace.tokens_generated, "seconds": result.trace.seconds,
        "prompt_tokens": session.count_tokens(prompt), "text": result.text,
        "called": [r.call.name for r in result.calls],
    }


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    header, examples = session.cached(("funcqa_shots", subset), lambda: few_shot(data, subset))
    prompt = funcqa_prompt(session, header, examples, item["question"])
    row = solve(session, system, subset, prompt, float(item["answer"]), MAX_NEW_TOKENS[subset])
    return {"question": item["question"], **row}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Accuracy; tool error rate = share of problems with at least one invalid call (the paper's)."""
    return {
        "accuracy": mean(float(r["correct"]) for r in rows),
        "tool_error_rate": mean(float(r["invalid_calls"] > 0) for r in rows),
        "invalid_calls": float(sum(r["invalid_calls"] for r in rows)),
        "calls": float(sum(r["calls"] for r in rows)),
        "seconds": mean(r["seconds"] for r in rows),
        "tokens": mean(r["tokens"] for r in rows),
        "n": float(len(rows)),
    }
