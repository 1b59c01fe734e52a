"""The compiled cache key writes marshal's format-2 bytes exactly, and leaves to marshal what it
does not write, so a key never depends on whether the extension was built."""

from __future__ import annotations

import json
import marshal
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tooldec.tools.keys as keys
from benchmarks.paper.datasets import bfcl_tools, funcqa_tools, kamel_tools, toolbench_tools

native_only = pytest.mark.skipif(not keys.NATIVE, reason="the compiled keys are not built (TOOLDEC_NATIVE=0 or no compiler)")

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


def native(value: Any) -> bytes | None:
    assert keys._native is not None
    return keys._native(value)


@native_only
def test_every_tool_dict_of_the_inventories_is_keyed_as_marshal_keys_it(data_dir: Path) -> None:
    specs = [spec for load in (bfcl_tools, kamel_tools, toolbench_tools) for spec in load(data_dir)]
    specs += funcqa_tools()
    for spec in specs:
        assert native(spec) == marshal.dumps(spec, 2)
    parsed = json.loads(json.dumps(specs))  # other objects, other sharing: the same bytes
    assert [native(spec) for spec in parsed] == [marshal.dumps(spec, 2) for spec in specs]


@native_only
@settings(max_examples=300, deadline=None)
@given(JSON)
def test_json_values_are_keyed_as_marshal_keys_them(value: Any) -> None:
    found = native(value)
    assert found is None or found == marshal.dumps(value, 2)
    assert keys.value_key(value) == marshal.dumps(value, 2)


EDGES: list[Any] = [
    "", "ascii", "é", "日本", "\ud800 lone surrogate", "\x00", "x" * 70_000,
    0, -1, 2**31 - 1, -2**31, 1.5, -0.0, float("inf"), float("nan"), True, False, None,
    [], {}, [[[]]], {"a": {"b": [1, "c", None]}}, {"": 0, "é": [True, 1, 1.0]},
]


@native_only
def test_edge_values_are_written_by_the_extension_as_marshal_writes_them() -> None:
    for value in EDGES:  # (one test, not one per value: the copy without the extension skips it once)
        assert native(value) == marshal.dumps(value, 2), repr(value)[:80]


class Text(str):
    pass


@native_only
def test_values_outside_json_are_left_to_marshal() -> None:
    for value in [2**31, -2**31 - 1, 2**80, (1, 2), b"bytes", {1, 2}, Text("s"), {"a": (1,)}, [1, 2**40],
                  {"k": Text("v")}, 1j]:
        assert native(value) is None, repr(value)
        try:
            want: bytes | None = marshal.dumps(value, 2)
        except ValueError:
            want = None
        assert keys.value_key(value) == want, repr(value)


@native_only
def test_deep_and_cyclic_values_are_left_to_marshal() -> None:
    deep: list[Any] = []
    node = deep
    for _ in range(1500):  # deeper than the extension goes, not as deep as marshal refuses
        node.append([])
        node = node[0]
    assert native(deep) is None and keys.value_key(deep) == marshal.dumps(deep, 2)
    cycle: list[Any] = []
    cycle.append(cycle)
    assert native(cycle) is None and keys.value_key(cycle) is None


def test_without_the_extension_keys_are_marshal_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "_native", None)
    value = {"name": "f", "parameters": {"type": "object", "properties": {"é": {"type": "integer"}}}}
    assert keys.value_key(value) == marshal.dumps(value, 2)
    assert keys.value_key({"a": Text("s")}) is None


def python_list_key(values: list[Any], monkeypatch: pytest.MonkeyPatch) -> keys.ListKey | None:
    with monkeypatch.context() as patch:
        patch.setattr(keys, "_native", None)
        patch.setattr(keys, "_native_list", None)
        return keys.list_key(values)


def test_a_list_key_is_its_dicts_keys_sorted_and_joined_whatever_the_order(data_dir: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    specs = [spec for load in (bfcl_tools, kamel_tools) for spec in load(data_dir)][:300]
    specs += [dict(specs[0])]  # an equal dict twice: ties keep the list's order
    listed = keys.list_key(specs)
    assert listed is not None and listed == python_list_key(specs, monkeypatch)
    assert listed.keys() == keys.dict_keys(specs) == [marshal.dumps(spec, 2) for spec in specs]
    assert listed.data == b"".join(sorted(marshal.dumps(spec, 2) for spec in specs))
    assert sorted(listed.order) == list(range(len(specs))) and listed.ends[-1] == len(listed.data)
    shuffled = json.loads(json.dumps(specs[::-1]))
    again = keys.list_key(shuffled)
    assert again is not None and again.data == listed.data and again.keys() == keys.dict_keys(shuffled)
    assert again.sample == listed.sample == listed.data[::64] and len(listed.data) > 4096
    assert keys.list_key([]) == keys.ListKey(b"", array("q"), array("q"), b"")
    small = keys.list_key(specs[:2])
    assert small is not None and small.sample == small.data and len(small.data) <= 4096


@pytest.mark.skipif(not keys.NATIVE, reason="the extension compares with filed keys; marshal's path does not")
def test_a_list_key_equal_to_a_filed_one_is_that_very_bytes_object(data_dir: Path) -> None:
    specs = [spec for load in (bfcl_tools, kamel_tools) for spec in load(data_dir)][:300]
    first = keys.list_key(specs)
    assert first is not None and len(first.data) > keys.SAMPLE_WHOLE
    asked: list[tuple[int, bytes]] = []

    def filed(*others: bytes) -> keys.Filed:
        def give(length: int, sample: bytes) -> list[bytes]:
            asked.append((length, sample))
            return list(others)
        return give

    one_byte_off = first.data[:-1] + bytes([first.data[-1] ^ 1])
    again = keys.list_key(json.loads(json.dumps(specs[::-1])), filed(b"short", one_byte_off, first.data))
    assert again is not None and again.data is first.data and again.sample == first.sample
    assert asked == [(len(first.data), first.sample)]
    other = keys.list_key(json.loads(json.dumps(specs)), filed(one_byte_off))
    assert other is not None and other.data == first.data and other.data is not first.data
    small = keys.list_key(specs[:2], filed(first.data))  # a short key is its own sample: not asked
    assert small is not None and len(asked) == 2 and small == keys.list_key(specs[:2])


@native_only
def test_a_long_list_key_comes_as_pieces_that_own_their_buffer(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension hands a long key back unjoined and runs no Python code: its pieces keep the
    buffer they lie in while another list is keyed, and are joined (or matched) by a second call
    given plain bytes."""
    from tooldec.tools import _value_key

    specs = [spec for load in (bfcl_tools, kamel_tools) for spec in load(data_dir)][:300]
    want = python_list_key(specs, monkeypatch)
    other = python_list_key(specs[100:], monkeypatch)
    assert want is not None and other is not None
    first = _value_key.list_key(json.loads(json.dumps(specs)))
    second = _value_key.list_key(specs[100:])  # keyed while the first pieces hold their buffer
    assert first is not None and second is not None and type(first[0]) is not bytes
    assert _value_key.list_join(second[0], ()) == other.data
    assert _value_key.list_join(first[0], [b"x", want.data[:-1] + b"?"]) == want.data
    assert _value_key.list_join(first[0], (other.data, want.data)) is want.data
    assert first[1:] == (want.order.tobytes(), want.ends.tobytes(), want.sample)
    with pytest.raises(TypeError):
        _value_key.list_join(first[0], iter([want.data]))  # only a list or tuple: iterating could run Python
    with pytest.raises(ValueError):
        _value_key.list_join(want.data, [])  # type: ignore[arg-type]
    del first, second
    again = _value_key.list_key(specs)  # the buffer given back is written again
    assert again is not None and _value_key.list_join(again[0], []) == want.data
    small = _value_key.list_key(specs[:2])
    assert small is not None and type(small[0]) is bytes and small[0] is small[3]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=3), JSON, max_size=3), max_size=6))
def test_list_keys_of_random_dicts_agree_with_and_without_the_extension(values: list[dict[str, Any]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        listed = keys.list_key(values)
        patch.setattr(keys, "_native", None)
        patch.setattr(keys, "_native_list", None)
        assert listed == keys.list_key(values)
    assert listed is not None and listed.keys() == [marshal.dumps(v, 2) for v in values]


def test_a_list_with_anything_but_plain_dicts_has_no_list_key(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = {"name": "f", "parameters": {"type": "object"}}
    for values in ([tool, "f"], [tool, Text("s")], [tool, {"x": Text("s")}], [tool, {"x": cycle()}]):
        assert keys.list_key(values) is None and python_list_key(values, monkeypatch) is None
    with_tuple = [tool, {"name": "g", "enum": (1, 2)}]  # not JSON, but marshal writes it: keyed by marshal
    listed = keys.list_key(with_tuple)
    assert listed is not None and listed.keys() == [marshal.dumps(v, 2) for v in with_tuple]


def cycle() -> list[Any]:
    found: list[Any] = []
    found.append(found)
    return found
