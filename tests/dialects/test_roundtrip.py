"""``format_call`` writes what the grammar accepts, and ``parse_calls`` reads it back.

The calls are BFCL's gold answers (simple_python, first allowed value of each argument): for
every dialect that can carry the tool, format -> the call grammar accepts the bytes after the
trigger and head -> parse gives the same call -> format again gives the same text.
"""

from __future__ import annotations

from typing import Any

import pytest

from tooldec.dialects import DIALECTS, Dialect, Mistral, ToolCall, ToolkenGPT
from tooldec.errors import ToolRegistrationError
from tooldec.tools import Tool

from .helpers import after_head, call_dfa

SAMPLE_EVERY = 4  # 100 of the 400 items


def _gold(item: dict[str, Any]) -> tuple[Tool, ToolCall] | None:
    """The item's tool and gold call, arguments in declared order; ``None`` if gold is not valid."""
    tool = Tool.from_dict(item["function"][0])
    ((name, allowed),) = item["answer"][0].items()
    arguments = {}
    for prop in tool.parameters.get("properties", {}):
        values = [v for v in allowed.get(prop, []) if v != ""]
        if values:
            arguments[prop] = values[0]
    if name != tool.name or tool.validate_arguments(arguments):
        return None
    return tool, ToolCall(name, arguments, id=item["id"][-9:].replace("_", "0"))  # a Mistral v3 id


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_bfcl_gold_calls_round_trip(name: str, bfcl_items: list[dict[str, Any]], full_data: bool) -> None:
    checked = 0
    for item in bfcl_items[::SAMPLE_EVERY]:
        gold = _gold(item)
        if gold is None:
            continue
        tool, call = gold
        dialect: Dialect = ToolkenGPT([tool]) if name == "toolkengpt" else DIALECTS[name]()
        try:
            dialect.check_tool(tool)
        except ToolRegistrationError:
            continue
        text = dialect.format_call(call)  # type: ignore[attr-defined]
        assert call_dfa(dialect, tool).accepts(after_head(dialect, text)), (item["id"], text)
        (parsed,) = dialect.parse_calls(text)
        assert (parsed.name, dict(parsed.arguments)) == (call.name, dict(call.arguments)), item["id"]
        assert dialect.format_call(parsed) == text  # type: ignore[attr-defined]
        checked += 1
    assert checked >= (10 if full_data else 5)  # the fixtures hold 43 of the 400 items


def test_mistral_writes_a_valid_id_and_the_grammar_takes_it(bfcl_tools: dict[str, Tool]) -> None:
    tool = bfcl_tools["math.factorial"]
    dialect = Mistral()
    text = dialect.format_call(ToolCall("math.factorial", {"number": 5}, id="A1b2C3d4E"))
    assert text == '[TOOL_CALLS] [{"name": "math.factorial", "arguments": {"number": 5}, "id": "A1b2C3d4E"}]'
    assert call_dfa(dialect, tool).accepts(after_head(dialect, text))
    assert dialect.parse_calls(text)[0].id == "A1b2C3d4E"
