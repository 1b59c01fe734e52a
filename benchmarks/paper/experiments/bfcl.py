"""Table 5: BFCL (v4, non-live Python) in the model's own Hermes format, baseline vs. ToolDec.

One assistant message per question, with the functions given through the chat template (Qwen's
own tool prompt); no function is run. A call is required in the four call categories (the same
for both systems: unconstrained, the call's start is written into the prompt) and left to the
model in ``irrelevance``, where the right answer is no call: left free everywhere,
Qwen2.5-Coder-0.5B answers in a Markdown JSON block instead of its ``<tool_call>`` format. Scored by BFCL's AST rules (see the data README) and by
the rate of outputs that do not parse or call a function that does not exist.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tooldec.dialects import Hermes, ToolCall
from tooldec.tools import Tool, ToolSet

from ..datasets import bfcl_items
from .common import Session, System, mean
from .common import hermes_dialect as dialect

__all__ = ["COLUMNS", "SUBSETS", "SYSTEMS", "ast_match", "bfcl_schema", "call_matches", "dialect", "items", "normalize",
           "score", "summarize", "toolset"]

SUBSETS = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
SYSTEMS = ("baseline", "repair", "tooldec", "tooldec_beam", "tooldec_tag", "tooldec_any")
"""``tooldec_tag``: ToolDec with Hermes restricted to its ``<tool_call>`` opener (no fenced or bare
objects), to see what the opener the model picks costs the parallel subsets. ``tooldec_any``:
ToolDec whose required call may open with any Hermes opener, the default until 2026-11-25 (the
``tooldec`` rows run before then); ``tooldec`` now opens a required call with the tag and takes
every opener in auto mode and after the first call."""
COLUMNS = ("ast_accuracy", "syntax_error_rate", "invalid_calls", "seconds", "n")
PLOT = ("ast_accuracy", "syntax_error_rate")
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer",
          "str": "string", "bool": "boolean"}
_STRIP = re.compile(r"[ ,./\-_*^]")


def bfcl_schema(node: Any) -> Any:
    """BFCL's Python type names as JSON Schema (``dict`` -> ``object``, ``float`` -> ``number``,
    ``tuple`` -> ``array``; ``any`` drops the type).

    Examples:
        >>> bfcl_schema({"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "any"}}})
        {'type': 'object', 'properties': {'x': {'type': 'number'}, 'y': {}}}
    """
    if isinstance(node, list):
        return [bfcl_schema(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = _TYPES.get(value, value)
        elif key in ("properties",) and isinstance(value, Mapping):
            out[key] = {k: bfcl_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = bfcl_schema(value)
        elif key in ("enum", "default", "required", "description"):
            out[key] = value
        else:
            out[key] = bfcl_schema(value)
    return out


def normalize(value: Any) -> Any:
    """Strings as BFCL compares them: lowercased, without spaces and ``,./-_*^``; containers recursively."""
    if isinstance(value, str):
        return _STRIP.sub("", value.lower())
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, Mapping):
        return {k: normalize(v) for k, v in value.items()}
    return value


def _value_ok(value: Any, allowed: Sequence[Any]) -> bool:
    for candidate in allowed:
        if candidate == "":
            continue
        if isinstance(candidate, float) and isinstance(value, int) and not isinstance(value, bool):
            if float(value) == candidate:
                return True
        if isinstance(value, bool) != isinstance(candidate, bool):
            continue
        if isinstance(value, float) and isinstance(candidate, int):  # BFCL: no float for an integer
            continue
        if normalize(value) == normalize(candidate):
            return True
        if isinstance(value, Mapping) and isinstance(candidate, Mapping) and set(value) <= set(candidate):
            if all(_value_ok(v, candidate[k]) for k, v in value.items()) and all(
                    "" in c or k in value for k, c in candidate.items() if isinstance(c, list)):
                return True
    return False


def call_matches(call: ToolCall, gold: Mapping[str, Mapping[str, Sequence[Any]]],
                 functions: Sequence[Mapping[str, Any]]) -> bool:
    """One call against one gold call ``{name: {param: [allowed values]}}``, by BFCL's AST rules.

    Examples:
        >>> fn = [{"name": "area", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"},
        ...        "unit": {"type": "string"}}, "required": ["base"]}}]
        >>> gold = {"area": {"base": [10], "unit": ["units", ""]}}
        >>> call_matches(ToolCall("area", {"base": 10}), gold, fn)
        True
        >>> call_matches(ToolCall("area", {"base": 10, "unit": "Units"}), gold, fn)
        True
        >>> call_matches(ToolCall("area", {"base": 11}), gold, fn), call_matches(ToolCall("area", {"base": 10, "x": 1}), gold, fn)
        (False, False)
    """
    (name, params), = gold.items()
    if call.name != name:
        return False
    spec = next((f for f in functions if f["name"] == name), None)
    if spec is None:
        return False
    properties = spec.get("parameters", {}).get("properties", {})
    required = spec.get("parameters", {}).get("required", [])
    args = dict(call.arguments)
    if any(r not in args for r in required) or any(k not in properties for k in args):
        return False
    for key, allowed in params.items():
        if key not in args:
            if "" not in allowed:
                return False
        elif not _value_ok(args[key], allowed):
            return False
    return all(k in params for k in args)


def ast_match(calls: Sequence[ToolCall], ground_truth: Sequence[Mapping[str, Any]] | None,
              functions: Sequence[Mapping[str, Any]]) -> bool:
    """The whole answer: irrelevance (no gold) is correct when no call is made; otherwise the same
    number of calls as gold, matched one to one in any order."""
    if ground_truth is None:
        return not calls
    if len(calls) != len(ground_truth):
        return False
    return any(all(call_matches(c, g, functions) for c, g in zip(calls, perm))
               for perm in itertools.permutations(ground_truth))


def items(data: Path, subset: str) -> list[dict[str, Any]]:
    return list(bfcl_items(subset, data))


def toolset(functions: Sequence[Mapping[str, Any]]) -> ToolSet:
    """An item's BFCL functions as tools (their types as JSON Schema, by :func:`bfcl_schema`)."""
    return ToolSet([Tool.from_dict({"name": f["name"], "description": f.get("description", ""),
                                    "parameters": bfcl_schema(f["parameters"])}) for f in functions])


def score(session: Session, system: System, subset: str, item: dict[str, Any], data: Path) -> dict[str, Any]:
    functions = item["function"]
    tools = toolset(functions)
    decoder = session.decoder(system, tools, dialect(system))
    messages = item["question"][0]
    prompt = session.chat(messages, tools=tools, dialect=Hermes())  # the same prompt for every system
    choice = "auto" if subset == "irrelevance" else "required"
    once = session.once(decoder, system, prompt, max_new_tokens=160, tool_choice=choice)
    unknown = sum(e == "unknown_tool" for e in once.errors)
    unparseable = sum(e == "unparseable" for e in once.errors)
    return {"id": item["id"], "correct": ast_match(once.calls, item["ground_truth"], functions),
            "syntax_error": bool(unknown or unparseable), "invalid_calls": len(once.errors),
            "invalid_kinds": once.errors, "calls": [[c.name, dict(c.arguments)] for c in once.calls],
            "ground_truth": item["ground_truth"], "tokens": once.tokens, "seconds": once.seconds,
            "prompt_tokens": once.prompt_tokens, "text": once.text}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """AST accuracy; syntax error rate = outputs with an unparseable call or a non-existent function."""
    return {
        "ast_accuracy": mean(float(r["correct"]) for r in rows),
        "syntax_error_rate": mean(float(r["syntax_error"]) for r in rows),
        "invalid_calls": float(sum(r["invalid_calls"] for r in rows)),
        "seconds": mean(r["seconds"] for r in rows),
        "n": float(len(rows)),
    }
