"""Table 3 (the paper's Figure 4): ToolEval I2-Category and I3-Instruction, ReAct steps.

The real RapidAPI services cannot be called offline, so every tool answers with the same fixed
stub message for every system, and what is scored is each step's call: name errors (no such
tool), argument errors (missing, unexpected or mistyped), ReAct format errors (an ``Action:``
that does not parse), and whether the chosen tools are among the query's relevant APIs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldec.dialects import ReAct
from tooldec.tools import Tool, ToolSet

from .common import Session, System, mean

__all__ = ["COLUMNS", "STUB", "SUBSETS", "items", "relevant_names", "score", "standardize", "summarize"]

SUBSETS = ("i2_category", "i3_instruction")
COLUMNS = ("tool_error_rate", "name_errors", "argument_errors", "format_errors", "relevant_rate", "steps", "seconds", "n")
PLOT = ("tool_error_rate", "relevant_rate")
STUB = '{"error": "", "response": "(offline evaluation: the API was not called)"}'
_FILES = {"i2_category": ("G2_category.json", "i2_cat.json"), "i3_instruction": ("G3_instruction.json", "i3_inst.json")}
SYSTEM_PROMPT = (
    "You are AutoGPT, you can use many tools (functions) to do the following task.\n"
    "At each step, you need to give your thought to analyze the status now and what to do next, with a function "
    "call to actually execute your step. Your output should follow this format:\n"
    "Thought:\nAction:\nAction Input:\n\n"
    "After the call, you will get the call result. Remember: call the \"Finish\" function at the end to give the "
    "final answer.\nSpecifically, you have access to the following APIs: {tools}")


def standardize(name: str) -> str:
    """ToolBench's tool/API name normalisation (lowercase, non-alphanumerics to ``_``).

    Examples:
        >>> standardize("packages/track (Deprecated)")
        'packages_track_deprecated'
    """
    name = re.sub(r"[^a-z0-9_]+", "_", name.lower())
    return re.sub(r"_+", "_", name).strip("_")


def relevant_names(available: Sequence[str], relevant: Sequence[Sequence[str]]) -> set[str]:
    """The available tool names that stand for the query's relevant ``[tool, api]`` pairs
    (ToolBench names them ``<api>_for_<tool>``, each part standardised and possibly cut)."""
    out = set()
    for tool_name, api_name in relevant:
        tool, api = standardize(tool_name), standardize(api_name)
        for name in available:
            head, _, tail = name.rpartition("_for_")
            if tail == tool and head and (api.startswith(head) or head.startswith(api[: len(head)]) and
                                          api.replace("_", "")[:8] == head.replace("_", "")[:8]):
                out.add(name)
    return out


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    evalset, queries = _FILES[subset]
    folder = data / "toolbench"
    tools = json.loads((folder / "toolbench_default_evalset_gpt35_CoT" / evalset).read_text())
    relevant = {str(q["query_id"]): q["relevant APIs"] for q in json.loads((folder / "query" / queries).read_text())}
    return [{"query_id": qid, **item, "relevant": relevant.get(qid, [])} for qid, item in tools.items()]


def _clean(spec: dict[str, Any]) -> dict[str, Any]:
    """A ToolBench schema as strict JSON Schema: ToolBench's own keys dropped, no extra arguments."""
    params = {k: v for k, v in spec.get("parameters", {}).items() if k != "optional"}
    params["properties"] = {k: {kk: vv for kk, vv in v.items() if kk != "example_value"}
                            for k, v in params.get("properties", {}).items()}
    params["additionalProperties"] = False
    return {"name": spec["name"], "description": spec.get("description", ""), "parameters": params}


def _stub(**_: Any) -> str:
    return STUB


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    specs = list({s["name"]: _clean(s) for s in reversed(item["available_tools"])}.values())[::-1]  # first of duplicates
    tools = ToolSet([Tool(s["name"], s["description"], s["parameters"], _stub) for s in specs])
    decoder = session.decoder(system, tools, ReAct(), max_calls_per_turn=3, max_new_tokens=256)
    listing = json.dumps([{"name": s["name"], "description": s["description"][:300], "parameters": s["parameters"]}
                          for s in specs], ensure_ascii=False)
    prompt = session.chat([{"role": "system", "content": SYSTEM_PROMPT.format(tools=listing)},
                           {"role": "user", "content": item["query"]}]) + "Thought:"
    result = decoder.run(prompt)
    kinds = [entry.kind.value for entry in result.trace.invalid]
    relevant = relevant_names([s["name"] for s in specs], item["relevant"])
    chosen = [r.call.name for r in result.calls if r.call.name in tools and r.call.name != "Finish"]
    return {"query_id": item["query_id"], "steps": len(result.calls) + kinds.count("unparseable"),
            "name_errors": kinds.count("unknown_tool"), "argument_errors": kinds.count("invalid_arguments"),
            "format_errors": kinds.count("unparseable"), "chosen": chosen, "relevant": sorted(relevant),
            "relevant_hits": sum(c in relevant for c in chosen), "tokens": result.trace.tokens_generated,
            "seconds": result.trace.seconds, "prompt_tokens": session.count_tokens(prompt), "text": result.text}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Tool error rate = share of queries with at least one tool error (the paper's Figure 4)."""
    steps = sum(r["steps"] for r in rows)
    chosen = sum(len(r["chosen"]) for r in rows)
    return {
        "tool_error_rate": mean(float(r["name_errors"] + r["argument_errors"] + r["format_errors"] > 0) for r in rows),
        "name_errors": float(sum(r["name_errors"] for r in rows)),
        "argument_errors": float(sum(r["argument_errors"] for r in rows)),
        "format_errors": float(sum(r["format_errors"] for r in rows)),
        "relevant_rate": sum(r["relevant_hits"] for r in rows) / chosen if chosen else float("nan"),
        "steps": float(steps),
        "seconds": mean(r["seconds"] for r in rows),
        "n": float(len(rows)),
    }
