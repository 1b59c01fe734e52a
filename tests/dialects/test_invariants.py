"""What the engine relies on, for every dialect and a spread of real BFCL and FuncQA tools.

* The tail's first byte is not a name character, so a name ends where its tail begins.
* The tail ends unambiguously: no accepting state has an outgoing byte.
* ``NEXT_CALL`` marks appear only where asked for, on accepting states, in list formats.
* ``check_tool`` refuses every schema the tail cannot be built for (names are checked apart).
"""

from __future__ import annotations

import string

import numpy as np
import pytest

from tooldec.automata.dfa import SINK
from tooldec.dialects import DIALECTS, NEXT_CALL, DeclaredDialect, Dialect, Mistral, Pythonic, ToolkenGPT
from tooldec.errors import InvalidToolNameError, ToolRegistrationError, UnsupportedSchemaError
from tooldec.tools import Tool

from .helpers import tail_dfa

NAME_BYTES = sorted((string.ascii_letters + string.digits + "_.-").encode())
LIST_FORMATS = (Mistral, Pythonic)
SAMPLE_EVERY = 8  # every 8th BFCL tool: 50 schemas of every shape BFCL has


def _sample(bfcl_tools: dict[str, Tool], funcqa: dict[str, Tool]) -> list[Tool]:
    return list(bfcl_tools.values())[::SAMPLE_EVERY] + list(funcqa.values())


@pytest.mark.parametrize("name", sorted(DIALECTS))
@pytest.mark.parametrize("next_call", [False, True])
def test_tail_shape(name: str, next_call: bool, bfcl_tools: dict[str, Tool], funcqa: dict[str, Tool]) -> None:
    dialect: Dialect = DIALECTS[name]()
    built = 0
    for tool in _sample(bfcl_tools, funcqa):
        try:
            dialect.check_tool(tool)
        except InvalidToolNameError:
            continue  # a name the format cannot carry; tails depend on the schema only
        except ToolRegistrationError:
            with pytest.raises(ToolRegistrationError):  # the schema is refused by the tail too
                tail_dfa(dialect, tool, next_call=next_call)
            continue
        dfa = tail_dfa(dialect, tool, next_call=next_call)
        built += 1
        assert not dfa.is_empty, tool.name
        assert (dfa.row(dfa.start)[NAME_BYTES] < 0).all(), f"{tool.name}: the tail starts with a name byte"
        expanded = dfa.nfa.size < 4000
        if expanded:
            dfa.expand_all()
        accepting = [s for s in range(1, dfa.n_states) if dfa.arrays.accepting[s]]
        assert all((dfa.row(s) < 0).all() for s in accepting), f"{tool.name}: an accepting state has outgoing bytes"
        assert SINK not in accepting
        marked = set(dfa.marks)
        assert set(dfa.marks.values()) <= {NEXT_CALL}
        if next_call and (isinstance(dialect, LIST_FORMATS) or (
                isinstance(dialect, DeclaredDialect) and dialect.format.next_call is not None)):
            assert (marked or not expanded) and all(dfa.arrays.accepting[s] for s in marked), tool.name
        else:
            assert not marked, tool.name
    assert built > 0


def test_toolkengpt_refuses_exactly_the_non_numeric_tools(bfcl_tools: dict[str, Tool], funcqa: dict[str, Tool]) -> None:
    dialect = ToolkenGPT()
    for tool in funcqa.values():
        dialect.check_tool(tool)
    numeric = {"integer", "number"}
    for tool in list(bfcl_tools.values())[::SAMPLE_EVERY]:
        kinds = [p.get("type") for p in tool.parameters.get("properties", {}).values()]
        if all(k in numeric for k in kinds):
            dialect.check_tool(tool)
        elif not (kinds and kinds[-1] == "array" and all(k in numeric for k in kinds[:-1])):
            with pytest.raises(ToolRegistrationError):
                dialect.check_tool(tool)


def test_tails_depend_on_the_schema_only(bfcl_tools: dict[str, Tool]) -> None:
    """The engine caches tails by schema hash, so two names with one schema share a tail."""
    tool = bfcl_tools["math.hypot"]
    twin = Tool("hypot_v2", "", tool.parameters)
    for cls in DIALECTS.values():
        a, b = tail_dfa(cls(), tool, next_call=True), tail_dfa(cls(), twin, next_call=True)
        a.expand_all(), b.expand_all()
        assert a.n_states == b.n_states
        assert np.array_equal(a.arrays.table[: a.n_states], b.arrays.table[: b.n_states])
        assert np.array_equal(a.arrays.accepting[: a.n_states], b.arrays.accepting[: b.n_states])


@pytest.mark.parametrize(
    ("dialect", "name", "parameters", "error", "pointer"),
    [
        (Pythonic(), "my-tool", {"type": "object", "properties": {}}, InvalidToolNameError, None),
        (Pythonic(), "lambda", {"type": "object", "properties": {}}, InvalidToolNameError, None),
        (Pythonic(), "math.import", {"type": "object", "properties": {}}, InvalidToolNameError, None),
        (Pythonic(), "9lives", {"type": "object", "properties": {}}, InvalidToolNameError, None),
        (Pythonic(), "f", {"type": "object", "properties": {"from": {"type": "string"}}}, UnsupportedSchemaError, "/properties/from"),
        (Pythonic(), "f", {"type": "object", "properties": {"max-age": {"type": "integer"}}}, UnsupportedSchemaError,
         "/properties/max-age"),
        (Pythonic(), "f", {"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                                                      {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
         UnsupportedSchemaError, ""),
        (Mistral(), "math.factorial", {"type": "object", "properties": {}}, InvalidToolNameError, None),
        (Mistral(), "x" * 65, {"type": "object", "properties": {}}, InvalidToolNameError, None),
    ],
)
def test_check_tool_refuses_what_the_format_cannot_carry(
    dialect: Dialect, name: str, parameters: dict[str, object], error: type[ToolRegistrationError], pointer: str | None
) -> None:
    tool = Tool.from_dict({"name": name, "parameters": parameters})
    with pytest.raises(error) as info:
        dialect.check_tool(tool)
    assert info.value.tool == name
    if pointer is not None:
        assert isinstance(info.value, UnsupportedSchemaError) and info.value.pointer == pointer


@pytest.mark.parametrize("dialect", [Pythonic(), Mistral()])
def test_check_tool_takes_ordinary_tools(dialect: Dialect) -> None:
    dialect.check_tool(Tool.from_dict({"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}))
