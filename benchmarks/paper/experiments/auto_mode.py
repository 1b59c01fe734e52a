"""Auto mode on BFCL, counted the same way for every system.

The model decides whether to call (``tool_choice="auto"``, the OpenAI default). Every answer is
read by the Hermes dialect's :meth:`~tooldec.dialects.Dialect.scan`, whatever produced it:

* **calls parsed**: the calls a client gets. For a tooldec loop (constrained or not) those are
  the calls the dialect parses in the text, in any declared form (tag, fenced block, bare
  object); for an OpenAI server they are the returned ``tool_calls`` (whose arguments decode to
  a JSON object).
* **broken calls**: call-like text a client does not get as a call: each declared opener that
  did not become a call and each JSON object whose first key is ``"name"`` outside a call, as
  ``scan`` reports them; for a server, also every call ``scan`` finds in ``content`` (a client
  gets it as text) and every ``tool_calls`` entry whose arguments are not a JSON object.
* **calls made** = parsed + broken; **invalid**: parsed calls to an unknown tool or with
  arguments that break the schema.

AST accuracy follows BFCL's rules (:func:`.bfcl.ast_match`) on the parsed calls; irrelevance
accuracy is the share of ``irrelevance`` answers that make no call at all (none parsed, none
broken).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooldec.dialects import Dialect, ToolCall
from tooldec.tools import Tool, ToolSet

from .bfcl import ast_match, bfcl_schema

__all__ = ["CATEGORIES", "Request", "count_answer", "request", "server_calls", "summarize"]

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")


@dataclass(frozen=True)
class Request:
    """One BFCL question as every system gets it: the chat messages and the functions as tools."""

    id: str
    category: str
    messages: list[dict[str, Any]]
    specs: list[dict[str, Any]]
    """``{"name", "description", "parameters"}`` with BFCL's types mapped to JSON Schema."""
    functions: list[dict[str, Any]]
    """The functions as BFCL wrote them (the AST checker reads them)."""
    ground_truth: list[dict[str, Any]] | None

    def toolset(self) -> ToolSet:
        return ToolSet([Tool.from_dict(s) for s in self.specs])

    def openai_tools(self) -> list[dict[str, Any]]:
        """The ``tools`` field of an OpenAI chat request."""
        return [{"type": "function", "function": s} for s in self.specs]


def request(item: Mapping[str, Any], category: str) -> Request:
    """A BFCL item (question file line with its ``ground_truth`` joined) as a :class:`Request`.

    Examples:
        >>> item = {"id": "simple_python_0", "question": [[{"role": "user", "content": "Area?"}]],
        ...         "function": [{"name": "area", "description": "d", "parameters": {"type": "dict",
        ...                       "properties": {"b": {"type": "float"}}, "required": ["b"]}}],
        ...         "ground_truth": [{"area": {"b": [1.0]}}]}
        >>> r = request(item, "simple_python")
        >>> r.openai_tools()[0]["function"]["parameters"]["type"], r.messages[0]["role"]
        ('object', 'user')
    """
    functions = list(item["function"])
    specs = [{"name": f["name"], "description": f.get("description", ""), "parameters": bfcl_schema(f["parameters"])}
             for f in functions]
    messages = [dict(m) for m in item["question"][0]]
    return Request(str(item["id"]), category, messages, specs, functions, item.get("ground_truth"))


def server_calls(tool_calls: Sequence[Mapping[str, Any]] | None) -> tuple[list[ToolCall], int]:
    """An OpenAI response's ``tool_calls`` (as dicts) as calls, and how many did not decode.

    Examples:
        >>> server_calls([{"function": {"name": "f", "arguments": '{"x": 1}'}},
        ...               {"function": {"name": "g", "arguments": "{bad"}}])
        ([ToolCall(name='f', arguments={'x': 1}, id='call_0')], 1)
    """
    calls: list[ToolCall] = []
    bad = 0
    for index, entry in enumerate(tool_calls or ()):
        function = entry.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = None
        if isinstance(arguments, dict) and isinstance(function.get("name"), str):
            calls.append(ToolCall(function["name"], arguments, id=str(entry.get("id") or f"call_{index}")))
        else:
            bad += 1
    return calls, bad


def count_answer(req: Request, dialect: Dialect, tools: ToolSet, text: str,
                 tool_calls: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Count one answer and score it.

    Args:
        req: The question.
        dialect: The dialect whose ``scan`` reads the text (Hermes, with every opener).
        tools: ``req``'s tools (to tell invalid calls).
        text: The generated text (a server's ``content``).
        tool_calls: A server's ``tool_calls`` as dicts; ``None`` for a tooldec loop, whose calls
            are the ones parsed in ``text``.

    Returns:
        ``calls_made``, ``calls_parsed``, ``broken``, ``invalid``, ``correct`` (BFCL AST; for
        irrelevance: no call made), the parsed calls and the broken snippets.
    """
    found = dialect.scan(text)
    if tool_calls is None:
        calls, broken = list(found.calls), list(found.broken)
    else:
        calls, undecoded = server_calls(tool_calls)
        in_content = [json.dumps(c.to_openai()["function"], ensure_ascii=False)[:200] for c in found.calls]
        broken = in_content + list(found.broken) + ["<tool_calls entry with undecodable arguments>"] * undecoded
    invalid = sum(1 for c in calls if c.name not in tools or tools[c.name].validate_arguments(c.arguments))
    made = len(calls) + len(broken)
    if req.ground_truth is None:
        correct = made == 0
    else:
        correct = ast_match(calls, req.ground_truth, req.functions)
    return {"calls_made": made, "calls_parsed": len(calls), "broken": len(broken), "invalid": invalid,
            "correct": correct, "calls": [[c.name, dict(c.arguments)] for c in calls], "broken_text": broken}


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Totals and accuracies over the rows of one system (any mix of categories).

    ``ast_accuracy`` is over the call categories, ``irrelevance_accuracy`` over ``irrelevance``,
    ``tokens_per_second`` is generated tokens over wall time (prompt processing included).
    """
    calls = [r for r in rows if r["category"] != "irrelevance"]
    irrelevant = [r for r in rows if r["category"] == "irrelevance"]
    seconds = sum(float(r["seconds"]) for r in rows)
    out = {
        "n": float(len(rows)),
        "calls_made": float(sum(r["calls_made"] for r in rows)),
        "calls_parsed": float(sum(r["calls_parsed"] for r in rows)),
        "broken": float(sum(r["broken"] for r in rows)),
        "invalid": float(sum(r["invalid"] for r in rows)),
        "answers_with_broken": float(sum(1 for r in rows if r["broken"])),
        "ast_accuracy": _share(r["correct"] for r in calls),
        "irrelevance_accuracy": _share(r["correct"] for r in irrelevant),
        "tokens_per_second": sum(float(r["tokens"]) for r in rows) / seconds if seconds else float("nan"),
    }
    for category in CATEGORIES[:-1]:
        out[f"ast_{category}"] = _share(r["correct"] for r in calls if r["category"] == category)
    return out


def _share(flags: Any) -> float:
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else float("nan")
