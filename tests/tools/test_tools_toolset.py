"""ToolSet: adding, removing, duplicates, failed adds; the decoder's name index kept in step with the names."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldec.errors import DuplicateToolError, InvalidSchemaError, ToolDecError, ToolNotFoundError, ToolRegistrationError
from tooldec.decoding.names import NameIndex
from tooldec.tools import Tool, ToolSet


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_add_accepts_every_tool_like() -> None:
    tools = ToolSet()
    added = [tools.add(add), tools.add({"name": "math.factorial", "parameters": {"type": "dict", "properties": {}}}),
             tools.add(Tool("echo", "", {"type": "object"}))]
    assert [t.name for t in added] == tools.names == ["add", "math.factorial", "echo"]
    assert list(tools) == added and len(tools) == 3
    assert tools["add"] is added[0] and tools["add"](a=1, b=2) == 3
    assert "add" in tools and "sub" not in tools and 3 not in tools and ["add"] not in tools
    assert tools.version == 3
    assert repr(tools) == "ToolSet(['add', 'math.factorial', 'echo'])"


def test_duplicate_leaves_the_set_unchanged() -> None:
    tools = ToolSet([add])
    with pytest.raises(DuplicateToolError) as info:
        tools.add({"name": "add", "parameters": {"type": "object"}})
    assert info.value.tool == "add" and "tool 'add'" in str(info.value) and "already in the set" in str(info.value)
    assert isinstance(info.value, ToolRegistrationError)
    assert tools.names == ["add"] and tools.version == 1 and tools["add"].fn is add


def test_failed_add_leaves_the_set_unchanged() -> None:
    tools = ToolSet([add])
    with pytest.raises(InvalidSchemaError):
        tools.add({"name": "bad", "parameters": {"type": "string"}})
    with pytest.raises(ToolRegistrationError):
        tools.add(42)  # type: ignore[arg-type]
    assert tools.names == ["add"] and tools.version == 1


def test_constructor_stops_at_the_first_bad_tool() -> None:
    with pytest.raises(DuplicateToolError, match="tool 'add'"):
        ToolSet([add, mul, add])
    bad_schema = {"name": "bad", "parameters": {"type": "string"}}
    with pytest.raises(DuplicateToolError, match="tool 'add'"):  # tool dicts are looked up together, still in turn
        ToolSet([{"name": "add", "parameters": {"type": "object"}}, add, bad_schema])


def test_a_repeated_tool_list_gets_the_same_tools_in_its_own_order() -> None:
    """A request's tool list seen before (fresh dicts, another order) is looked up, not normalized
    again: the same ``Tool`` objects, in the order this list gives them."""
    specs = [{"type": "function", "function": {"name": f"repeat_{i}", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer", "maximum": i}}}}} for i in range(5)]
    first = ToolSet(specs)
    again = ToolSet(json.loads(json.dumps(specs[::-1])) + [add])
    assert again.names == [f"repeat_{i}" for i in range(4, -1, -1)] + ["add"]
    assert all(again[name] is first[name] for name in first.names)
    assert again["repeat_3"].parameters["properties"]["n"]["maximum"] == 3


def test_remove() -> None:
    tools = ToolSet([add, mul])
    removed = tools.remove("add")
    assert removed.fn is add and tools.names == ["mul"] and tools.version == 3
    assert "add" not in tools
    tools.add(add)
    assert tools.names == ["mul", "add"], "a re-added tool goes to the end"


def test_not_found() -> None:
    tools = ToolSet([add, mul])
    actions: list[Callable[[], Tool]] = [lambda: tools["sub"], lambda: tools.remove("sub")]
    for action in actions:
        with pytest.raises(ToolNotFoundError) as info:
            action()
        assert str(info.value) == "no tool named 'sub'; the set has 2 tools: 'add', 'mul'"
        assert isinstance(info.value, KeyError) and isinstance(info.value, ToolDecError)
    assert tools.version == 2
    with pytest.raises(ToolNotFoundError, match="the set has no tools"):
        ToolSet()["x"]


def test_iteration_is_a_snapshot() -> None:
    tools = ToolSet([add, mul])
    for tool in tools:
        tools.remove(tool.name)
    assert len(tools) == 0 and tools.names == []


NAMES = st.text(alphabet="ab_.", min_size=1, max_size=4).filter(lambda n: n[0] not in ".")
OPS = st.lists(st.tuples(st.booleans(), NAMES), max_size=40)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_random_add_remove_keeps_the_names_in_step(ops: list[tuple[bool, str]]) -> None:
    tools, expected, version, index = ToolSet(), [], 0, NameIndex()
    for adding, name in ops:
        if adding and name not in expected:
            tools.add({"name": name})
            expected.append(name)
            index = index.with_name(name)
            version += 1
        elif adding:
            with pytest.raises(DuplicateToolError):
                tools.add({"name": name})
        elif name in expected:
            tools.remove(name)
            expected.remove(name)
            index = index.without(name)
            version += 1
        else:
            with pytest.raises(ToolNotFoundError):
                tools.remove(name)
        assert tools.names == expected and tools.version == version
        assert list(index) == sorted(expected, key=str.encode) and len(index) == len(expected)
        inventory = tools.inventory()  # the set's own sorted index, kept one change at a time
        assert inventory.sorted_names == tuple(index.sorted_bytes()) and list(inventory.tools) == expected
        assert inventory.digest == ToolSet(list(tools)[::-1]).inventory().digest
        for n in expected:
            assert index.terminal(n.encode()) == n and index.has_prefix(n[:1].encode())
            assert all(n.encode()[len(p)] in index.children(p) for p in (n.encode()[:k] for k in range(len(n))))


def test_inventory_is_a_frozen_view_whose_digest_follows_names_and_schemas() -> None:
    tools = ToolSet([{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                     {"name": "b"}])
    before = tools.inventory()
    assert tools.inventory() is before  # one per version
    tools.remove("a")
    tools.add({"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}})
    after = tools.inventory()
    assert after.digest != before.digest and after.sorted_names == before.sorted_names
    assert list(before.tools) == ["a", "b"] and before.tools["a"] is not after.tools["a"]
    with pytest.raises(TypeError):
        before.tools["c"] = after.tools["a"]  # type: ignore[index]
    renamed = ToolSet([{"name": "b"}, {"name": "c", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}])
    assert renamed.inventory().digest != after.digest  # same schemas, other names
