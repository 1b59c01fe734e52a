"""The paper's A.6 and A.8: RestBench TMDB with tool names rewritten from the documentation.

TMDB's 54 operations as tools, planned as in the RestBench table (``restbench.py``: one message,
Hermes calls, correct path = the gold calls in order), under five namings (the subsets):
``method_path`` (``get_movie_movie_id_credits``) and four rewrites by the model itself from each
operation's documentation (``tooldec.runtime.naming``; ``rewrite_1`` greedy, ``rewrite_2..4``
sampled at temperature 0.8 with seeds 2-4: the paper's robustness check), cached in
``<out>/naming/<model>/names/`` so that a rerun uses the same names. ``baseline`` has every
operation's one-line doc in the prompt (unconstrained); ``tooldec`` and ``tooldec_beam`` none.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldec.dialects import Hermes
from tooldec.runtime.naming import name_distance, rewrite_names
from tooldec.tools import ToolSet
from tooldec.tools.openapi import Operation, openapi_operations

from .common import Session, System, constrained, markdown_table, mean, wilson
from .generalization import FORMAT
from .restbench import correct_path

__all__ = ["COLUMNS", "SUBSETS", "SYSTEMS", "items", "names_for", "score", "summarize"]

SUBSETS = ("method_path", "rewrite_1", "rewrite_2", "rewrite_3", "rewrite_4")
SYSTEMS = ("baseline", "tooldec", "tooldec_beam")
COLUMNS = ("correct_path", "ci_low", "ci_high", "prompt_tokens", "invalid_calls", "calls", "seconds", "n")
PLOT = ("correct_path", "prompt_tokens")
REWRITES = {"rewrite_1": (0.0, 1), "rewrite_2": (0.8, 2), "rewrite_3": (0.8, 3), "rewrite_4": (0.8, 4)}


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    return list(json.loads((data / "restbench" / "tmdb.json").read_text()))


def _spec(data: Path) -> dict[str, Any]:
    return json.loads((data / "restbench" / "tmdb_oas.json").read_text())  # type: ignore[no-any-return]


def _folder(session: Session) -> Path:
    return (session.out or Path("runs/bench")) / "naming" / session.label / "names"


def names_for(session: Session, subset: str, data: Path) -> dict[str, str] | None:
    """The rewritten names of ``subset`` (``None`` for method-path names), written once and cached."""
    if subset == "method_path":
        return None
    from tooldec.backends import generator_for

    temperature, seed = REWRITES[subset]
    operations = openapi_operations(_spec(data), naming="method_path")
    generator = session.cached(("plain_generator",), lambda: generator_for(session.model, session.tokenizer, session.vocab))
    return rewrite_names(operations, generator, temperature=temperature, seed=seed,
                         cache=_folder(session) / f"{subset}.json", model=session.path.name)


def _api(session: Session, subset: str, data: Path) -> tuple[ToolSet, dict[str, str], str]:
    ops: list[Operation] = openapi_operations(_spec(data), naming="method_path", names=names_for(session, subset, data))
    routes = {op.tool.name: f"{op.method.upper()} {op.path}" for op in ops}
    docs = "\n".join(f"{op.tool.name}({', '.join(op.tool.parameters.get('properties', {}))}): "
                     f"{op.tool.description.splitlines()[0] if op.tool.description else ''}" for op in ops)
    return ToolSet([op.tool for op in ops]), routes, docs


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    tools, routes, docs = session.cached(("naming", subset), lambda: _api(session, subset, data))
    decoder = session.cached(("naming", subset, system), lambda: session.decoder(
        system, tools, Hermes(), tool_choice="required", max_calls_per_turn=6))
    task = ("Plan the API calls that solve the user's task, in order, one call per step; use placeholder "
            "values for ids that an earlier call returns.")
    content = f"{task}\n\n{FORMAT}" if constrained(system) else f"{task} The API (TMDB):\n{docs}\n\n{FORMAT}"
    prompt = session.chat([{"role": "system", "content": content}, {"role": "user", "content": item["query"]}])
    once = session.once(decoder, system, prompt, max_new_tokens=160, tool_choice="required")
    planned = [routes.get(c.name, c.name) for c in once.calls]
    return {"query": item["query"], "gold": item["solution"], "planned": planned,
            "names": [c.name for c in once.calls], "correct": correct_path(planned, item["solution"]),
            "calls": len(once.calls), "invalid_calls": len(once.errors), "invalid_kinds": once.errors,
            "prompt_tokens": once.prompt_tokens, "tokens": once.tokens, "seconds": once.seconds, "text": once.text}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    hits = sum(float(r["correct"]) for r in rows)
    low, high = wilson(hits, len(rows))
    return {"correct_path": hits / len(rows) if rows else float("nan"), "ci_low": low, "ci_high": high,
            "prompt_tokens": mean(r["prompt_tokens"] for r in rows),
            "invalid_calls": float(sum(r["invalid_calls"] for r in rows)), "calls": mean(r["calls"] for r in rows),
            "seconds": mean(r["seconds"] for r in rows), "n": float(len(rows))}


def extra_tables(folder: Path) -> str:
    """How far the rewrites are from the route names and from each other (the paper's A.8)."""
    files = {s: folder / "names" / f"{s}.json" for s in REWRITES if (folder / "names" / f"{s}.json").exists()}
    if not files:
        return ""
    sets = {s: json.loads(p.read_text())["names"] for s, p in files.items()}
    routes = list(next(iter(sets.values())))
    route_names = {r: "_".join([r.split()[0].lower(), *[w for w in r.split()[1].replace("{", "/").replace("}", "/")
                                                         .split("/") if w]]) for r in routes}
    rows = []
    for subset, names in sets.items():
        others = [o for s, o in sets.items() if s != subset]
        rows.append({
            "names": subset,
            "distance_to_route_names": mean(name_distance(names[r], route_names[r]) for r in routes),
            "distance_to_other_rewrites": mean(name_distance(names[r], o[r]) for r in routes for o in others),
            "same_as_rewrite_1": mean(float(names[r] == sets.get("rewrite_1", names)[r]) for r in routes),
            "distinct": float(len(set(names.values()))),
            "GET /movie/{movie_id}/credits": names.get("GET /movie/{movie_id}/credits", ""),
        })
    pairs = [mean(name_distance(a[r], b[r]) for r in routes) for a, b in itertools.combinations(sets.values(), 2)]
    note = f"\n\nMean distance between two rewrites (all pairs): {mean(pairs):.3f}" if pairs else ""
    columns = ["names", "distance_to_route_names", "distance_to_other_rewrites", "same_as_rewrite_1", "distinct",
               "GET /movie/{movie_id}/credits"]
    return ("\n\nName distances (1 - difflib ratio, mean over the 54 operations):\n\n"
            + markdown_table(rows, columns) + note)
