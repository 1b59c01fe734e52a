"""ToolkenGPT on FuncQA's own text: the calls in its prompts and answers, and what it refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tooldec.dialects import ToolkenGPT
from tooldec.errors import UnsupportedSchemaError
from tooldec.tools import Tool

from .helpers import call_dfa

CALL = re.compile(r"<([a-z]+)>\(([^)]*)\)=")


def _funcqa_texts(data_dir: Path) -> list[str]:
    root = data_dir / "funcqa"
    texts = [p.read_text() for p in sorted(root.glob("template_*/*.txt"))]
    texts += [c for item in json.loads((root / "funcqa_mh.json").read_text()) for c in item["calculation"]]
    texts += [item["func"] for item in json.loads((root / "funcqa_oh.json").read_text())]
    return texts


def test_funcqa_calls_grammar_and_schema_agree(data_dir: Path, full_data: bool, funcqa: dict[str, Tool]) -> None:
    """Every call FuncQA writes is accepted by the grammar exactly when its arguments fit the tool."""
    dialect = ToolkenGPT(funcqa.values())
    seen = accepted = 0
    for text in _funcqa_texts(data_dir):
        for match in CALL.finditer(text):
            tool = funcqa[match.group(1)]
            ok = call_dfa(dialect, tool).accepts(match.group(0)[1:].encode())
            parsed = dialect.parse_calls(match.group(0))
            valid = len(parsed) == 1 and not tool.validate_arguments(parsed[0].arguments)
            assert ok == valid, match.group(0)
            seen += 1
            accepted += ok
    assert seen > (300 if full_data else 100) and accepted > 0  # the fixtures hold 8 items of each set


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "choose", "permutate", "remainder"])
def test_per_tool_prompts_parse_to_their_tool(op: str, data_dir: Path, funcqa: dict[str, Tool]) -> None:
    """The one-tool prompts (``llama__<op>_.txt``) show calls the grammar must allow as written.

    Half of them separate numbers with ``", "``, the other half with ``","``.
    """
    text = (data_dir / "funcqa" / "template_oh" / f"llama__{op}_.txt").read_text()
    dialect = ToolkenGPT(funcqa.values())
    calls = dialect.parse_calls(text)
    assert calls and all(c.name == op for c in calls)
    for call in calls:
        written = dialect.format_call(call)
        assert written in text or written.replace(", ", ",") in text  # FuncQA writes both
        assert call_dfa(dialect, funcqa[op]).accepts(written[1:].encode())


@pytest.mark.parametrize(
    ("parameters", "pointer", "keyword"),
    [
        ({"type": "object", "properties": {"x": {"type": "number"}, "unit": {"type": "string"}}}, "/properties/unit", "type"),
        ({"type": "object", "properties": {"x": {}}}, "/properties/x", "type"),
        ({"type": "object", "properties": {"x": {"type": ["number", "null"]}}}, "/properties/x", "type"),
        ({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}, "y": {"type": "number"}}},
         "/properties/xs", "type"),
        ({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string"}}}}, "/properties/xs/items", "type"),
        ({"type": "object", "properties": {"xs": {"type": "array", "prefixItems": [{"type": "number"}]}}},
         "/properties/xs", "prefixItems"),
        ({"type": "object", "properties": {"a/b": {"type": "boolean"}}}, "/properties/a~1b", "type"),
    ],
)
def test_non_numeric_parameters_are_refused_with_their_pointer(parameters: dict[str, object], pointer: str, keyword: str) -> None:
    tool = Tool.from_dict({"name": "f", "parameters": parameters})
    with pytest.raises(UnsupportedSchemaError) as info:
        ToolkenGPT().check_tool(tool)
    assert (info.value.tool, info.value.pointer, info.value.keyword) == ("f", pointer, keyword)


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"x": {"enum": [1, 2.5]}}},
        {"type": "object", "properties": {"x": {"anyOf": [{"type": "integer"}, {"const": 0.5}]}}},
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "number"}}},
        {"type": "object", "properties": {}},
    ],
)
def test_numeric_schemas_in_other_spellings_are_accepted(parameters: dict[str, object]) -> None:
    ToolkenGPT().check_tool(Tool.from_dict({"name": "f", "parameters": parameters}))
