"""Table 4 (the paper's Table 5): RestBench TMDB, OpenAPI operations as tools, docs vs. no docs.

Each of TMDB's 54 operations is a tool named from its method and path (``get_search_person``).
The model plans the calls of a task in one message (Hermes format, several calls allowed); no
API is called. Baseline and repair have a one-line doc per operation in the prompt; ToolDec has
none. Correct path: the gold call sequence appears, in order, among the planned calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldec.dialects import Hermes
from tooldec.tools import ToolSet
from tooldec.tools.openapi import openapi_operations

from .common import Session, System, constrained, mean
from .generalization import FORMAT

__all__ = ["COLUMNS", "SUBSETS", "correct_path", "items", "score", "summarize"]

SUBSETS = ("tmdb",)
COLUMNS = ("correct_path", "prompt_tokens", "invalid_calls", "calls", "seconds", "n")
PLOT = ("correct_path", "prompt_tokens")


def correct_path(planned: Sequence[str], gold: Sequence[str]) -> bool:
    """Whether ``gold`` is a subsequence of ``planned`` (RestBench's correct-path rule).

    Examples:
        >>> gold = ["GET /search/person", "GET /person/{person_id}/movie_credits"]
        >>> correct_path(["GET /search/person", "GET /person/{person_id}", "GET /person/{person_id}/movie_credits"], gold)
        True
        >>> correct_path(["GET /person/{person_id}/movie_credits", "GET /search/person"], gold)
        False
    """
    it = iter(planned)
    return all(any(step == p for p in it) for step in gold)


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    return list(json.loads((data / "restbench" / f"{subset}.json").read_text()))


def _api(data: Path, subset: str) -> tuple[ToolSet, dict[str, str], str]:
    """Tools, tool name -> ``METHOD /path``, and the one-line docs of the in-context prompt."""
    spec = json.loads((data / "restbench" / f"{subset}_oas.json").read_text())
    ops = openapi_operations(spec, naming="method_path")
    routes = {op.tool.name: f"{op.method.upper()} {op.path}" for op in ops}
    docs = "\n".join(f"{op.tool.name}({', '.join(op.tool.parameters.get('properties', {}))}): "
                     f"{op.tool.description.splitlines()[0] if op.tool.description else ''}" for op in ops)
    return ToolSet([op.tool for op in ops]), routes, docs


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    tools, routes, docs = session.cached(("restbench", subset), lambda: _api(data, subset))
    decoder = session.cached(("restbench", subset, system), lambda: session.decoder(
        system, tools, Hermes(), tool_choice="required", max_calls_per_turn=6))
    task = ("Plan the API calls that solve the user's task, in order, one call per step; use placeholder "
            "values for ids that an earlier call returns.")
    content = f"{task}\n\n{FORMAT}" if constrained(system) else f"{task} The API (TMDB):\n{docs}\n\n{FORMAT}"
    prompt = session.chat([{"role": "system", "content": content}, {"role": "user", "content": item["query"]}])
    once = session.once(decoder, system, prompt, max_new_tokens=160, tool_choice="required")
    planned = [routes.get(c.name, c.name) for c in once.calls]
    return {"query": item["query"], "gold": item["solution"], "planned": planned,
            "correct": correct_path(planned, item["solution"]), "calls": len(once.calls),
            "invalid_calls": len(once.errors), "invalid_kinds": once.errors, "prompt_tokens": once.prompt_tokens,
            "tokens": once.tokens, "seconds": once.seconds, "text": once.text}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    return {
        "correct_path": mean(float(r["correct"]) for r in rows),
        "prompt_tokens": mean(r["prompt_tokens"] for r in rows),
        "invalid_calls": float(sum(r["invalid_calls"] for r in rows)),
        "calls": mean(r["calls"] for r in rows),
        "seconds": mean(r["seconds"] for r in rows),
        "n": float(len(rows)),
    }
