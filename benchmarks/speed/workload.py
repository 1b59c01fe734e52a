"""The calls every engine is fed: real gold calls in the Hermes format, tokenised per tokenizer.

A case is free text, then ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.
Arguments are written in the schema's property order, the way models write them, so an engine
that fixes the key order (XGrammar's default) is not charged for an artefact of the data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from .inventory import Pool, Tool, build_inventory, funcqa_tools, kamel_tools, load_pool

__all__ = [
    "TRIGGER",
    "Call",
    "Case",
    "bfcl_calls",
    "cell_workload",
    "funcqa_calls",
    "kamel_calls",
    "render",
    "tokenize_cases",
]

TRIGGER = "<tool_call>"
END = "</tool_call>"
PREFIXES = (
    "Let me check that for you.",
    "I'll look this up with a tool.",
    "Sure, one moment while I call the right function.",
    "To answer this I need some data first.",
    "Calling the tool now.",
    "Good question! Let me compute it.",
    "I will use the available function to get the result.",
    "Okay, fetching the information.",
)
_BFCL_ANSWERS = ("simple_python", "multiple", "parallel", "parallel_multiple")


@dataclass(frozen=True)
class Call:
    """One gold call: a tool name of the inventory and arguments that validate."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One text to decode, tokenised.

    ``tokens[:trigger_end]`` is the free text up to and including the trigger; the rest is the
    call. ``call_tokens`` tokenises the call alone, for engines without a trigger mode.
    """

    text: str
    tokens: list[int]
    trigger_end: int
    call_tokens: list[int]


def render(call: Call, prefix: str) -> tuple[str, str]:
    """The full text and the call part, in the Hermes format (UTF-8 kept, not ``\\u`` escaped)."""
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    call_text = f"{TRIGGER}\n{body}\n{END}"
    return f"{prefix}\n{call_text}", call_text


def _ordered(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    order = list(schema.get("properties", {}))
    rank = {k: i for i, k in enumerate(order)}
    return dict(sorted(arguments.items(), key=lambda kv: rank.get(kv[0], len(order))))


def _closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` wherever properties are listed.

    A gold call is kept only if it uses no parameter outside the schema (BFCL's own rule), so
    an engine that closes objects (XGrammar's strict mode) is not charged for a data quirk.
    """
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) if k != "properties" else {p: _closed(q) for p, q in v.items()}
           for k, v in schema.items()}
    if "properties" in schema and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out


def _valid(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether ``arguments`` fit the closed ``schema`` (a broken schema fits nothing)."""
    closed = _closed(schema)
    try:
        validator = jsonschema.validators.validator_for(closed)(closed)
        return bool(validator.is_valid(arguments))
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType, TypeError):
        return False


def bfcl_calls(data: Path, pool: Pool, limit: int) -> list[Call]:
    """``limit`` distinct BFCL gold calls, spread over the answer files, that validate.

    Each parameter takes its first allowed value; ``""`` (BFCL's "may be omitted" marker) is
    skipped, and a parameter whose only value is ``""`` is left out.
    """
    found: list[Call] = []
    seen: set[str] = set()
    for stem in _BFCL_ANSWERS:
        with open(data / "bfcl" / "possible_answer" / f"BFCL_v4_{stem}.json", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                record = json.loads(line)
                for gold in record["ground_truth"]:
                    (orig, params), = gold.items()
                    name = pool.by_record.get((record["id"], orig))
                    if name is None:
                        continue
                    schema = pool.by_name[name]["parameters"]
                    args = {k: next(v for v in vals if v != "") for k, vals in params.items()
                            if any(v != "" for v in vals)}
                    args = _ordered(args, schema)
                    key = json.dumps([name, args], sort_keys=True)
                    if key not in seen and _valid(args, schema):
                        seen.add(key)
                        found.append(Call(name, args))
    if len(found) < limit:
        raise ValueError(f"only {len(found)} valid BFCL gold calls, {limit} asked")
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def funcqa_calls(data: Path, tools: list[Tool], limit: int) -> list[Call]:
    """FuncQA one-hop gold operations (``<power>(0.89, 8)``) as calls to the 13 operator tools."""
    by_name = {t["name"]: t for t in tools}
    calls: list[Call] = []
    for path in ("funcqa_oh.json", "funcqa_mh.json"):
        with open(data / "funcqa" / path, encoding="utf-8") as fh:
            items = json.load(fh)
        for item in items:
            text = str(item.get("func", "")) + str(item.get("calculation", ""))
            for op, argstr in re.findall(r"<(\w+)>\(([^)]*)\)", text):
                if op not in by_name:
                    continue
                try:
                    nums = json.loads(f"[{argstr}]")
                except json.JSONDecodeError:
                    continue
                props = list(by_name[op]["parameters"]["properties"])
                args: dict[str, Any] = ({"numbers": nums} if props == ["numbers"]
                                        else dict(zip(props, nums)) if len(nums) == len(props) else {})
                if args and _valid(args, by_name[op]["parameters"]):
                    calls.append(Call(op, args))
    if len(calls) < limit:
        raise ValueError(f"only {len(calls)} valid FuncQA calls, {limit} asked")
    return calls[:limit]


def kamel_calls(data: Path, tools: list[Tool], ids: dict[str, str], limit: int) -> list[Call]:
    """KAMEL training calls (``P127("Nike")``) as calls to the relation tools, one per relation first."""
    by_name = {t["name"]: t for t in tools}
    with open(data / "kamel" / "train_clean.json", encoding="utf-8") as fh:
        items = json.load(fh)
    first: list[Call] = []
    rest: list[Call] = []
    used: set[str] = set()
    for item in items:
        for call in item.get("call", []):
            match = re.match(r"<f>(P\d+)\((.*?)\)=", call)
            if match is None or match.group(1) not in ids:
                continue
            try:
                values = json.loads(f"[{match.group(2)}]")
            except json.JSONDecodeError:
                continue
            name = ids[match.group(1)]
            props = list(by_name[name]["parameters"]["properties"])
            if len(values) != len(props):
                continue
            args = dict(zip(props, values))
            if _valid(args, by_name[name]["parameters"]):
                (rest if name in used else first).append(Call(name, args))
                used.add(name)
        if len(first) >= limit:
            break
    calls = (first + rest)[:limit]
    if len(calls) < limit:
        raise ValueError(f"only {len(calls)} valid KAMEL calls, {limit} asked")
    return calls


def cell_workload(data: Path, size: int, n_calls: int) -> tuple[list[Tool], list[Call]]:
    """The inventory and the gold calls of one cell: 13 is FuncQA, 234 KAMEL, else BFCL+ToolEval."""
    if size == 13:
        tools = funcqa_tools(data)
        return tools, funcqa_calls(data, tools, n_calls)
    if size == 234:
        tools, ids = kamel_tools(data)
        return tools, kamel_calls(data, tools, ids, n_calls)
    pool = load_pool(data)
    calls = bfcl_calls(data, pool, n_calls)
    return build_inventory(pool, size, [c.name for c in calls]), calls


def tokenize_cases(tokenizer: Any, calls: list[Call]) -> list[Case]:
    """Tokenise each call after a rotating free-text prefix.

    Args:
        tokenizer: a ``transformers.PreTrainedTokenizerFast``.
        calls: the gold calls.

    Returns:
        One :class:`Case` per call; the trigger ends at the first token reaching past it (a
        byte-level BPE may merge the trigger's last byte with the newline after it).

    Raises:
        ValueError: a tokenisation does not decode back to its text.
    """
    cases: list[Case] = []
    for i, call in enumerate(calls):
        prefix = PREFIXES[i % len(PREFIXES)]
        text, call_text = render(call, prefix)
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        tokens, offsets = list(enc["input_ids"]), enc["offset_mapping"]
        cut = len(prefix) + 1 + len(TRIGGER)
        trigger_end = next(j for j, (_, end) in enumerate(offsets) if end >= cut) + 1
        call_tokens = list(tokenizer(call_text, add_special_tokens=False)["input_ids"])
        for ids, want in ((tokens, text), (call_tokens, call_text)):
            got = tokenizer.decode(ids, clean_up_tokenization_spaces=False)
            if got != want:
                raise ValueError(f"tokenisation does not round-trip: {want!r} -> {got!r}")
        cases.append(Case(text, tokens, trigger_end, call_tokens))
    return cases
