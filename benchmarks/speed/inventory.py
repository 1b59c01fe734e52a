"""Tool inventories of 13, 234, 1,000 and 10,000 tools built from the real benchmark schemas.

Every engine gets the same plain tool dicts (``{"name", "description", "parameters"}``) with
standard JSON Schema: BFCL's ``dict``/``float``/``tuple``/``any`` types are mapped to
``object``/``number``/``array``/``{}`` because the peers reject them, and a fair comparison
needs one schema text for everyone. Names are sanitised to ``[A-Za-z0-9_.-]`` and made unique
with suffixes, so an inventory is also a valid input for tooldec's ``ToolSet``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BFCL_FILES",
    "Pool",
    "build_inventory",
    "data_dir",
    "funcqa_tools",
    "kamel_signature",
    "kamel_tools",
    "load_pool",
    "normalise_schema",
    "sanitise_name",
]

Tool = dict[str, Any]

BFCL_FILES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
TOOLEVAL_FILES = ("G2_category", "G3_instruction")
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONES = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def data_dir(explicit: str | None = None) -> Path:
    """The shared benchmark data: ``--data``, else ``TOOLDEC_DATA``, else ``../shared/data``.

    The default is relative to the repository root (two folders above this file's package), so
    the command works from any current directory.
    """
    if explicit:
        return Path(explicit)
    if os.environ.get("TOOLDEC_DATA"):
        return Path(os.environ["TOOLDEC_DATA"])
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def sanitise_name(name: str) -> str:
    """Keep ``[A-Za-z0-9_.-]``; anything else becomes ``_`` (call formats carry names raw)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip("_") or "tool"
    return cleaned


def normalise_schema(schema: Any) -> Any:
    """Map BFCL's non-standard types to JSON Schema, walking only schema positions.

    Property *names* are never touched (a property may well be called ``type``). BFCL's
    ``"type": "any"`` becomes the empty schema; type lists are mapped member by member.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            if value == "any":
                continue
            if isinstance(value, list):
                out[key] = [_BFCL_TYPES.get(v, v) for v in value if v != "any"] or None
                if out[key] is None:
                    del out[key]
            elif isinstance(value, str):
                out[key] = _BFCL_TYPES.get(value, value)
            else:
                out[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: normalise_schema(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalise_schema(v) for v in value]
        elif key in _SCHEMA_ONES:
            out[key] = normalise_schema(value)
        else:
            out[key] = value
    return out


@dataclass
class Pool:
    """Every distinct real tool, in a fixed order, with a way to find a BFCL record's tool.

    ``tools`` interleaves BFCL and ToolEval so that a 1,000-tool prefix holds both;
    ``by_record[(record_id, original_name)]`` is the unique name a gold call must use.
    """

    tools: list[Tool] = field(default_factory=list)
    by_record: dict[tuple[str, str], str] = field(default_factory=dict)
    by_name: dict[str, Tool] = field(default_factory=dict)


class _Namer:
    """Hands out unique sanitised names; identical (name, schema) pairs share one entry."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.seen: dict[tuple[str, str], str] = {}

    def unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def _iter_bfcl(data: Path) -> Iterator[tuple[str, Tool]]:
    for stem in BFCL_FILES:
        with open(data / "bfcl" / f"BFCL_v4_{stem}.json", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    for fn in record["function"]:
                        yield record["id"], fn


def _iter_tooleval(data: Path) -> Iterator[tuple[str, Tool]]:
    folder = data / "toolbench" / "toolbench_default_evalset_gpt35_CoT"
    for stem in TOOLEVAL_FILES:
        with open(folder / f"{stem}.json", encoding="utf-8") as fh:
            for qid, item in json.load(fh).items():
                for fn in item["available_tools"]:
                    yield f"{stem}:{qid}", fn


def _interleave(*streams: Iterable[tuple[str, Tool]]) -> Iterator[tuple[str, Tool]]:
    iters = [iter(s) for s in streams]
    while iters:
        for it in list(iters):
            try:
                yield next(it)
            except StopIteration:
                iters.remove(it)


def load_pool(data: Path) -> Pool:
    """Read BFCL and ToolEval once and deduplicate them into a :class:`Pool`."""
    pool, namer = Pool(), _Namer()
    for record_id, fn in _interleave(_iter_bfcl(data), _iter_tooleval(data)):
        params = normalise_schema(fn.get("parameters") or {"type": "object", "properties": {}})
        key = (fn["name"], json.dumps(params, sort_keys=True))
        name = namer.seen.get(key)
        if name is None:
            name = namer.unique(sanitise_name(fn["name"]))
            namer.seen[key] = name
            tool = {"name": name, "description": fn.get("description", ""), "parameters": params}
            pool.tools.append(tool)
            pool.by_name[name] = tool
        pool.by_record[(record_id, fn["name"])] = name
    return pool


def build_inventory(pool: Pool, size: int, required: Iterable[str] = ()) -> list[Tool]:
    """``size`` tools: the ``required`` ones (gold-call tools) first, then the pool in order.

    Past the pool's end, renamed copies (``name__cN``) are added in cycles, so 10,000 tools
    keep real schemas while every name stays unique.
    """
    chosen: list[Tool] = []
    names: set[str] = set()
    for name in required:
        if name not in names:
            chosen.append(pool.by_name[name])
            names.add(name)
    cycle = 1
    while len(chosen) < size:
        for tool in pool.tools:
            if len(chosen) >= size:
                break
            name = tool["name"] if cycle == 1 else f"{tool['name']}__c{cycle}"
            if name in names:
                continue
            names.add(name)
            chosen.append({**tool, "name": name})
        cycle += 1
    return chosen[:size] if len(chosen) > size else chosen


# FuncQA's 13 operators (funcqa/func_dict.json): which take a list, two operands, or one.
_FUNCQA_LISTS = {"add": "number", "gcd": "integer", "lcm": "integer"}
_FUNCQA_PAIRS = {
    "subtract": "number",
    "multiply": "number",
    "divide": "number",
    "power": "number",
    "remainder": "integer",
    "choose": "integer",
    "permutate": "integer",
}
_FUNCQA_ONE = ("sqrt", "log", "ln")


def funcqa_tools(data: Path) -> list[Tool]:
    """The 13 FuncQA math operators as tools with small, strict schemas."""
    with open(data / "funcqa" / "func_dict.json", encoding="utf-8") as fh:
        index: dict[str, int] = json.load(fh)
    ops = [op.strip("<>") for op in sorted(index, key=index.__getitem__)]
    tools: list[Tool] = []
    for op in ops:
        if op in _FUNCQA_LISTS:
            item = {"type": _FUNCQA_LISTS[op]}
            props: dict[str, Any] = {"numbers": {"type": "array", "items": item, "minItems": 2}}
        elif op in _FUNCQA_PAIRS:
            kind = _FUNCQA_PAIRS[op]
            props = {"a": {"type": kind}, "b": {"type": kind}}
        elif op in _FUNCQA_ONE:
            props = {"x": {"type": "number"}}
        else:
            raise ValueError(f"unknown FuncQA operator {op!r}")
        schema = {"type": "object", "properties": props, "required": list(props)}
        tools.append({"name": op, "description": f"FuncQA operator <{op}>", "parameters": schema})
    return tools


def kamel_signature(desc: str) -> tuple[str, list[str], str]:
    """Split KAMEL's ``name(arg, arg2): description`` into its parts (``a/b`` args become ``a_or_b``)."""
    match = re.match(r"\s*([\w.]+)\(([^)]*)\):?\s*(.*)", desc, re.S)
    if match is None:
        raise ValueError(f"cannot parse KAMEL description {desc!r}")
    args = [sanitise_name(a.strip().replace("/", "_or_")) for a in match.group(2).split(",") if a.strip()]
    return sanitise_name(match.group(1)), args or ["name"], match.group(3).strip()


def kamel_tools(data: Path) -> tuple[list[Tool], dict[str, str]]:
    """The 234 KAMEL relations as tools with string arguments.

    Returns:
        The tools, and a map from relation id (``P17``) to its unique tool name.
    """
    with open(data / "kamel" / "api_desc.json", encoding="utf-8") as fh:
        desc = json.load(fh)
    namer, tools, ids = _Namer(), [], {}
    for rel, text in desc.items():
        base, args, description = kamel_signature(text)
        name = namer.unique(base)
        props = {a: {"type": "string"} for a in args}
        schema = {"type": "object", "properties": props, "required": list(props)}
        tools.append({"name": name, "description": description, "parameters": schema})
        ids[rel] = name
    return tools, ids
