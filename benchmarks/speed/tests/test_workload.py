"""The inventories and gold calls are what the benchmark claims: real, unique, valid.

Run from the repository root: ``python -m pytest benchmarks/speed/tests``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.speed.inventory import build_inventory, data_dir, load_pool, normalise_schema
from benchmarks.speed.tokenizers import load_hf_tokenizer, tokenizer_json_path
from benchmarks.speed.workload import TRIGGER, _closed, cell_workload, tokenize_cases

DATA = data_dir()
pytestmark = pytest.mark.skipif(not (DATA / "bfcl").is_dir(), reason=f"no benchmark data at {DATA}")
BFCL_ONLY = {"dict", "float", "tuple", "any"}


def _types(schema: Any) -> set[str]:
    """Every value of a ``type`` keyword at a schema position."""
    found: set[str] = set()
    if isinstance(schema, dict):
        kind = schema.get("type")
        found |= {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else set()
        for key in ("properties", "$defs", "definitions"):
            for sub in (schema.get(key) or {}).values():
                found |= _types(sub)
        for key in ("items", "additionalProperties"):
            found |= _types(schema.get(key))
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key) or []:
                found |= _types(sub)
    return found


def test_normalise_maps_bfcl_types_but_not_property_names() -> None:
    schema = {"type": "dict", "properties": {"type": {"type": "float"}, "any": {"type": "any"},
                                             "pair": {"type": "tuple", "items": {"type": "dict"}}}}
    assert normalise_schema(schema) == {
        "type": "object",
        "properties": {"type": {"type": "number"}, "any": {},
                       "pair": {"type": "array", "items": {"type": "object"}}},
    }


@pytest.mark.parametrize("size", [13, 234, 1000, 10000])
def test_inventory_is_unique_standard_and_holds_every_gold_tool(size: int) -> None:
    tools, calls = cell_workload(DATA, size, 60)
    names = [t["name"] for t in tools]
    assert len(names) == size == len(set(names))
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", n) for n in names)
    assert not set().union(*(_types(t["parameters"]) for t in tools)) & BFCL_ONLY
    by_name = {t["name"]: t for t in tools}
    assert len({(c.name, repr(c.arguments)) for c in calls}) == len(calls) == 60
    for call in calls:
        schema = by_name[call.name]["parameters"]
        jsonschema.validate(call.arguments, _closed(schema))
        order = list(schema.get("properties", {}))
        assert list(call.arguments) == sorted(call.arguments, key=order.index)


def test_big_inventories_mix_bfcl_and_tooleval() -> None:
    pool = load_pool(DATA)
    tools = build_inventory(pool, 1000)
    assert any("_for_" in t["name"] for t in tools)  # ToolEval's "<api>_for_<tool>" names
    assert any("." in t["name"] for t in tools)  # BFCL's dotted names
    assert len(pool.tools) < 10000 <= len({t["name"] for t in build_inventory(pool, 10000)})


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_trigger_split_points_right_after_the_trigger(name: str) -> None:
    try:
        path = tokenizer_json_path(name)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    hf = load_hf_tokenizer(Path(path))
    _, calls = cell_workload(DATA, 13, 60)
    for case in tokenize_cases(hf, calls[:20]):
        before = hf.decode(case.tokens[: case.trigger_end])
        last = hf.decode(case.tokens[: case.trigger_end - 1])
        assert TRIGGER in before and TRIGGER not in last
        assert hf.decode(case.call_tokens).startswith(TRIGGER)
