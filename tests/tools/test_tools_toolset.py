"""ToolSet: adding, removing, duplicates, failed adds; the decoder's name index kept in step with the names."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldec.decoding.names import NameIndex
from tooldec.errors import (
    DuplicateToolError,
    InvalidSchemaError,
    ToolDecError,
    ToolNotFoundError,
    ToolRegistrationError,
)
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


@pytest.mark.parametrize(("bad", "error", "words"), [
    ({"name": "made_0", "parameters": {"type": "object"}}, DuplicateToolError, "tool 'made_0'"),
    ({"name": "bad name", "parameters": {"type": "object"}}, ToolRegistrationError, "'bad name' is not a valid tool name"),
    ({"name": "no_object", "parameters": {"type": "string"}}, InvalidSchemaError, "tool 'no_object'"),
    ({"name": 3, "parameters": {}}, ToolRegistrationError, "not a tool definition"),
])
def test_a_new_list_of_dicts_fails_at_its_first_bad_tool(bad: dict[str, Any], error: type[Exception], words: str) -> None:
    """A new list's dicts are made together, yet its error is the first bad tool's in the list's
    order, whatever comes after it (a bad schema, a bad name, a duplicate), and the tools
    before it are kept: the same ``Tool`` objects come back for them."""
    made = [{"name": f"made_{i}", "description": "d", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer", "description": "n"}}}} for i in range(3)]
    after = [{"name": "after_bad", "parameters": {"type": "object", "properties": {"n": {"type": "strin"}}}},
             {"name": "bad name after"}, {"name": "made_1"}]
    with pytest.raises(error, match=words):
        ToolSet([*made, bad, *after])
    again = [Tool.from_dict(json.loads(json.dumps(spec))) for spec in made]
    assert again[0] is Tool.from_dict(made[0]) and [t.name for t in again] == ["made_0", "made_1", "made_2"]
    assert again[1].parameters == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert again[1].parameters is again[2].parameters  # equal schemas in one list share their record
    assert again[2].source_parameters == made[2]["parameters"]


def test_a_new_list_of_dicts_makes_the_tools_the_per_tool_path_makes() -> None:
    """Every field of a tool made in a new list is what ``Tool.from_dict`` alone makes of it."""
    specs = [{"type": "function", "function": {"name": f"batch_{i}", "description": f"tool {i}", "parameters": {
        "type": "object", "properties": {"v": {"type": ["string", "integer"][i % 2], "description": "v"}},
        "required": ["v"]}}} for i in range(4)]
    specs.append({"name": "batch_read", "parameters": {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}}})
    specs.append({"name": "batch_empty"})
    made = ToolSet(json.loads(json.dumps(specs)))
    from tooldec.tools.tool import Tool as Made

    for spec in specs:
        one = Made._from_dict(spec, None)  # made by itself, not looked up
        got = made[one.name]
        assert (got.name, got.description, got.parameters, got.source_parameters, got.fn, got.openapi) == (
            one.name, one.description, one.parameters, one.source_parameters, one.fn, one.openapi)
        assert got.schema_hash == one.schema_hash and got.inventory_entry == one.inventory_entry
        assert got.__dict__.keys() == one.__dict__.keys()


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


def test_a_repeated_list_of_dicts_is_one_lookup_whatever_its_order() -> None:
    """A list of plain tool dicts seen before, in any order, is found by one key for the whole
    list; the set is the one the per-tool path makes: names in this list's order, the same
    ``Tool`` objects, the same inventory. A changed schema or a non-dict item misses."""
    from tooldec.tools.toolset import _registered_lists

    specs = [{"type": "function", "function": {"name": f"list_{i}", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer", "maximum": i}}}}} for i in range(6)]
    specs.append({"name": "plain_shape", "description": "top-level name", "parameters": {"type": "object"}})
    first = ToolSet(specs)
    shuffled = json.loads(json.dumps([specs[k] for k in (3, 6, 0, 5, 1, 4, 2)]))
    hits = _registered_lists.hits
    again = ToolSet(shuffled)
    assert _registered_lists.hits == hits + 1
    assert again.names == ["list_3", "plain_shape", "list_0", "list_5", "list_1", "list_4", "list_2"]
    assert all(again[name] is first[name] for name in first.names)
    assert again.inventory().digest == first.inventory().digest
    assert again.inventory().sorted_names == first.inventory().sorted_names and again.version == len(specs)
    again.add(add)  # the cached lists are copies: changing this set leaves the next one alone
    assert ToolSet(json.loads(json.dumps(specs))).names == first.names

    changed = json.loads(json.dumps(specs))
    changed[2]["function"]["parameters"]["properties"]["n"]["maximum"] = 99
    hits = _registered_lists.hits
    assert ToolSet(changed)["list_2"].parameters["properties"]["n"]["maximum"] == 99
    assert _registered_lists.hits == hits
    mixed = ToolSet([*json.loads(json.dumps(specs)), add])
    assert _registered_lists.hits == hits and mixed.names == [*first.names, "add"]


def test_a_list_filed_where_another_one_is_is_registered_as_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists are filed by a sample of their key; one that lands where another list is (forced
    here: every list in one slot) is compared in full, registered as itself, and both are kept."""
    from tooldec.tools import toolset

    monkeypatch.setattr(toolset._ListCache, "_slots_of", classmethod(lambda cls, key, sample: [(0, 0, p) for p in range(cls.PROBES)]))
    specs = [{"name": f"slot_{i}", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}
             for i in range(3)]
    other = json.loads(json.dumps(specs))
    other[1]["parameters"]["properties"]["n"]["maximum"] = 7
    first = ToolSet(specs)
    second = ToolSet(other)
    assert second["slot_1"].parameters["properties"]["n"]["maximum"] == 7
    assert "maximum" not in ToolSet(json.loads(json.dumps(specs)))["slot_1"].parameters["properties"]["n"]
    assert second.digest != first.digest
    hits = toolset._registered_lists.hits
    assert ToolSet(json.loads(json.dumps(other))).digest == second.digest
    assert ToolSet(json.loads(json.dumps(specs))).digest == first.digest
    assert toolset._registered_lists.hits == hits + 2


def test_a_set_from_a_list_seen_before_reads_as_the_set_the_per_tool_path_makes() -> None:
    """The set of a list seen before is laid out when first read (compiling needs only its
    digest): every way of reading or changing it gives what a set made tool by tool gives."""
    specs = [{"name": f"seen_{i}", "description": f"tool {i}", "parameters": {
        "type": "object", "properties": {"v": {"type": "string", "maxLength": i + 1}}}} for i in range(5)]
    first = ToolSet(specs)
    from tooldec.tools.toolset import _registered_lists

    order = [2, 0, 4, 1, 3]
    hits = _registered_lists.hits
    made = [ToolSet(json.loads(json.dumps([specs[k] for k in order]))) for _ in range(6)]
    assert _registered_lists.hits == hits + 6
    slow = ToolSet([Tool.from_dict(specs[k]) for k in order])  # Tools, not dicts: never the list cache
    assert all(s.digest == slow.digest == first.digest for s in made)  # without laying them out
    assert [len(s) for s in made] == [5] * 6 and all(s.version == slow.version for s in made)
    reads: list[Callable[[ToolSet], object]] = [
        lambda s: s.names, lambda s: [t.name for t in s], lambda s: s["seen_4"].parameters, lambda s: "seen_3" in s,
        lambda s: (list(s.inventory().tools), s.inventory().sorted_names, s.inventory().digest), repr]
    for s, read in zip(made, reads):
        assert read(s) == read(slow)
        assert read(s) == read(slow)  # and again, laid out
        assert s.inventory().sorted_names == slow.inventory().sorted_names and s.names == slow.names
    changed, other = made[0], ToolSet(json.loads(json.dumps([specs[k] for k in order])))
    changed.remove("seen_0")
    other.add({"name": "extra"})
    slow_removed, slow_added = ToolSet(list(slow)), ToolSet(list(slow))
    slow_removed.remove("seen_0")
    slow_added.add({"name": "extra"})
    for got, want in ((changed, slow_removed), (other, slow_added)):
        assert got.names == want.names and got.version == want.version and got.digest == want.digest
        assert got.inventory().sorted_names == want.inventory().sorted_names
    assert ToolSet(json.loads(json.dumps(specs))).names == first.names  # the cached list is unchanged


@pytest.mark.parametrize("change", ["bound", "key order", "bool for int", "float for int", "description", "extra key"])
def test_a_list_seen_before_with_one_change_anywhere_misses(change: str) -> None:
    """Any change in any dict of a list (deep in a schema, the order of its keys, ``True`` for
    ``1``, a description) is another list: its tools are made from it, never the cached ones."""
    def specs() -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": f"change_{i}", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"enum": [1, "x"]}}}}}
            for i in range(4)]

    first = ToolSet(specs())
    edited = specs()[::-1]
    inner = edited[2]["function"]
    props = inner["parameters"]["properties"]
    if change == "bound":
        props["a"]["minimum"] = 2
    elif change == "key order":
        inner["parameters"]["properties"] = {"b": props["b"], "a": props["a"]}
    elif change == "bool for int":
        props["b"]["enum"] = [True, "x"]
    elif change == "float for int":
        props["b"]["enum"] = [1.0, "x"]
    elif change == "description":
        inner["description"] = "other"
    else:
        props["a"]["x-note"] = 1
    tools = ToolSet(json.loads(json.dumps(edited)))
    got = tools["change_1"]
    assert got is not first["change_1"] and all(tools[n] is first[n] for n in ("change_0", "change_2", "change_3"))
    assert got.source_parameters == inner["parameters"] and got.description == inner["description"]
    if change == "key order":
        assert list(got.parameters["properties"]) == ["b", "a"]
    if change in ("bool for int", "float for int"):
        assert [type(v) for v in got.parameters["properties"]["b"]["enum"]] == [type(inner["parameters"]["properties"]["b"]["enum"][0]), str]
    if change in ("description", "extra key"):  # the same normalized schema: the same snapshot
        assert got.schema_hash == first["change_1"].schema_hash and tools.digest == first.digest
    else:
        assert got.schema_hash != first["change_1"].schema_hash and tools.digest != first.digest


def test_a_failed_list_is_not_kept() -> None:
    from tooldec.tools.toolset import _registered_lists

    specs = [{"name": "fails_later", "parameters": {"type": "object"}}, {"name": "fails_later", "parameters": {}}]
    held = len(_registered_lists)
    for _ in range(2):
        with pytest.raises(DuplicateToolError, match="fails_later"):
            ToolSet(json.loads(json.dumps(specs)))
    assert len(_registered_lists) == held


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
        assert inventory.sorted_names == tuple(index.sorted_names) and list(inventory.tools) == expected
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


def test_a_dict_whose_schema_has_no_key_is_made_with_the_others() -> None:
    """A schema ``value_key`` cannot write (a dict subclass here; with the dict's key given) is
    normalized by itself, as ``Tool`` does, between the others of the list."""
    from collections import OrderedDict

    schema = OrderedDict(type="object", properties={"q": {"type": "string", "description": "d"}})
    specs: list[dict[str, Any]] = [{"name": "keyed_before", "parameters": {"type": "object"}},
                                   {"name": "unkeyed", "parameters": schema},
                                   {"name": "keyed_after", "parameters": {"type": "object"}}]
    made = list(Tool.coerce_all(specs, [b"keyed-before", b"unkeyed-schema", b"keyed-after"]))
    assert [t.name for t in made] == ["keyed_before", "unkeyed", "keyed_after"]
    assert made[1].parameters == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert made[1].source_parameters == dict(schema) and made[1].schema_hash == Tool("x", "", schema).schema_hash
    bad = {"name": "unkeyed_bad", "parameters": OrderedDict(type="string")}
    with pytest.raises(InvalidSchemaError, match="unkeyed_bad"):
        list(Tool.coerce_all([specs[0], bad, {"name": "bad name"}], [b"k0", b"k1", b"k2"]))
