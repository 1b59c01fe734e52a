"""Every tool schema of the benchmark data normalizes; schema corpora give only typed errors.

BFCL and ToolEval tools must all become ``Tool``s, and BFCL's gold arguments must validate
against the normalized schemas (so normalizing loses no allowed value). JSONSchemaBench schemas
are not all supported: the counts of normalized / unsupported / invalid are pinned (for the full
sets and for the fixtures) so a change of the supported subset shows up here; update them on purpose.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError
from tooldec.tools import Tool, ToolSet
from tooldec.tools.schema import normalize_any_schema

BFCL = ["BFCL_v4_simple_python", "BFCL_v4_multiple", "BFCL_v4_parallel", "BFCL_v4_parallel_multiple", "BFCL_v4_irrelevance"]

# BFCL gold arguments that contradict BFCL's own schema (checked by hand), with the reason.
GOLD_SCHEMA_MISMATCH = {
    ("parallel_multiple_21", "linear_regression_fit"): "x, y are Python expressions (strings) for arrays of numbers",
    ("parallel_multiple_94", "sort_list"): "sorts a list of words though 'elements' is an array of integers",
    ("simple_python_307", "game_result.get_winner"): "venue: true for a string parameter",
}

# ToolBench queries whose tool list repeats a tool (identical copies); ToolSet refuses duplicates.
TOOLBENCH_REPEATED_TOOLS = {"6911", "525"}


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pick(options: list[Any]) -> Any:
    """BFCL lists the accepted values of each argument; ``""`` and ``null`` mean it may be left out."""
    value = next(v for v in options if v not in ("", None))
    return unwrap(value)


def unwrap(value: Any) -> Any:
    if isinstance(value, dict):  # nested objects list accepted values per key too
        return {k: pick(o) for k, o in value.items() if any(v not in ("", None) for v in o)}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


@pytest.mark.parametrize("name", BFCL)
def test_bfcl_tools_and_gold_arguments(data_dir: Path, name: str) -> None:
    entries = jsonl(data_dir / "bfcl" / f"{name}.json")
    answers_path = data_dir / "bfcl" / "possible_answer" / f"{name}.json"
    answers = {a["id"]: a["ground_truth"] for a in jsonl(answers_path)} if answers_path.exists() else {}
    checked, mismatches = 0, set()
    for entry in entries:
        tools = ToolSet(entry["function"])
        assert len(tools) == len(entry["function"])
        for tool in tools:
            assert normalize_again(tool) == tool.parameters
        for call in answers.get(entry["id"], []):
            ((tool_name, params),) = call.items()
            arguments = {k: pick(o) for k, o in params.items() if any(v not in ("", None) for v in o)}
            errors = tools[tool_name].validate_arguments(arguments)
            checked += 1
            if errors and (entry["id"], tool_name) in GOLD_SCHEMA_MISMATCH:
                mismatches.add((entry["id"], tool_name))
            else:
                assert errors == [], (entry["id"], tool_name, arguments)
    assert checked == sum(len(calls) for calls in answers.values())
    ids = {entry["id"] for entry in entries}
    assert mismatches == {key for key in GOLD_SCHEMA_MISMATCH if key[0] in ids}, "a listed mismatch now validates"


def normalize_again(tool: Tool) -> dict[str, Any]:
    return Tool(tool.name, tool.description, tool.parameters).parameters


@pytest.mark.parametrize("name", ["G2_category", "G3_instruction"])
def test_toolbench_tools(data_dir: Path, name: str) -> None:
    items = json.loads((data_dir / "toolbench" / "toolbench_default_evalset_gpt35_CoT" / f"{name}.json").read_text())
    count = 0
    for qid, item in items.items():
        specs = {spec["name"]: spec for spec in item["available_tools"]}  # a few queries list a tool twice
        assert len(specs) == len(item["available_tools"]) or qid in TOOLBENCH_REPEATED_TOOLS
        tools = ToolSet(specs.values())
        count += len(tools)
        for spec in specs.values():
            tool = tools[spec["name"]]
            assert set(tool.parameters["properties"]) == set(spec["parameters"]["properties"])
            assert "example_value" not in json.dumps(tool.parameters), "vendor keywords are dropped"
    assert count >= len(items)


def test_funcqa_has_no_schemas(data_dir: Path) -> None:
    """FuncQA's ``func_dict.json`` maps ``<op>`` to a token id: names only. The ops are valid names."""
    funcs = json.loads((data_dir / "funcqa" / "func_dict.json").read_text())
    assert all(isinstance(v, int) for v in funcs.values())
    tools = ToolSet({"name": key.strip("<>"), "parameters": {"type": "object", "properties": {}}} for key in funcs)
    assert len(tools) == 13 and "permutate" in tools


# category -> (normalized, unsupported, invalid); see the module docstring.
FULL_META = Draft202012Validator(Draft202012Validator.META_SCHEMA)
JSONSCHEMABENCH = {"Glaiveai2K": (1693, 1, 13), "Github_trivial": (440, 4, 0), "Github_easy": (1916, 25, 2)}
# The fixtures hold three schemas per set that an older normalizer refused; the combined-keyword
# normalizer compiles most of them: one stays unsupported (Github_easy), one is unsatisfiable
# (a Glaive calculate_area whose oneOf no instance can match).
JSONSCHEMABENCH_FIXTURES = {"Glaiveai2K": (17, 0, 1), "Github_trivial": (18, 0, 0), "Github_easy": (17, 1, 0)}


@pytest.mark.parametrize("category", sorted(JSONSCHEMABENCH))
def test_jsonschemabench_only_typed_errors(data_dir: Path, full_data: bool, category: str) -> None:
    counts: collections.Counter[str] = collections.Counter()
    for i, path in enumerate(sorted((data_dir / "jsonschemabench" / category).glob("*.json"))):
        schema = json.loads(path.read_text())
        try:
            out = normalize_any_schema(schema)
        except UnsupportedSchemaError as err:
            assert err.keyword and err.keyword in str(err) and f"at {err.pointer or '/'}:" in str(err), path
            counts["unsupported"] += 1
            continue
        except InvalidSchemaError as err:
            assert f"at {err.pointer or '/'}:" in str(err), path
            counts["invalid"] += 1
            continue
        if i % 5 == 0:  # the full meta-schema is slow (~4 ms); a fifth of the files is enough
            assert FULL_META.is_valid(out), path
        assert normalize_any_schema(out) == out, path
        counts["normalized"] += 1
    print(category, dict(counts))
    expected = (JSONSCHEMABENCH if full_data else JSONSCHEMABENCH_FIXTURES)[category]
    assert (counts["normalized"], counts["unsupported"], counts["invalid"]) == expected
