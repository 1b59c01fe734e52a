"""BoundedCache: bounded by the bytes it holds, least recently used out first, one value per key."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldec.caches import BoundedCache


def held(cache: BoundedCache[str, bytes]) -> list[tuple[str, bytes]]:
    """The items held, least recently used first (keys read back with ``get_many``, which keeps the order)."""
    values = cache.values()
    keys = [value.decode().split(":")[0] for value in values]
    assert cache.get_many(keys) == values
    return list(zip(keys, values))


def test_the_least_recently_used_go_first_once_over_the_bound() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(30, sizer=len)
    for key in "abc":
        cache.put(key, f"{key}:".encode() + b"x" * 8)  # 10 bytes each
    assert cache.get("a") is not None  # now the most recently used
    cache.put("d", b"d:" + b"x" * 8)
    assert [key for key, _ in held(cache)] == ["c", "a", "d"] and cache.nbytes == 30
    assert cache.put("a", b"a:other") == b"a:xxxxxxxx"  # the value stored first stays
    cache.put("e", b"e:" + b"x" * 40)  # larger than the bound: returned, not kept
    assert cache.get("e") is None and cache.nbytes == 30


def test_a_given_size_is_what_the_bound_counts() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(100, sizer=len)
    cache.put("a", b"a:", size=60)
    cache.put_many([("b", b"b:"), ("c", b"c:")], [30, 30])
    assert [key for key, _ in held(cache)] == ["b", "c"] and cache.nbytes == 60


def test_a_none_value_is_held_once() -> None:
    cache: BoundedCache[str, object] = BoundedCache(1000)
    cache.put("a", None, size=10)
    cache.put("a", None, size=10)
    cache.put_many([("a", None)], [10])
    assert len(cache) == 1 and cache.nbytes == 10


def test_resize_counts_a_value_grown_in_place() -> None:
    cache: BoundedCache[str, bytearray] = BoundedCache(30, sizer=len)
    cache.put("a", bytearray(b"a:xxxxxx"))
    grown = bytearray(b"b:")
    cache.put("b", grown)
    grown.extend(b"x" * 26)
    cache.resize("b")
    assert cache.get("a") is None and cache.get("b") is grown and cache.nbytes == 28


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(1, 40)), max_size=30), st.integers(0, 120))
def test_put_many_keeps_what_puts_one_by_one_keep(items: list[tuple[str, int]], bound: int) -> None:
    one: BoundedCache[str, bytes] = BoundedCache(bound, sizer=len)
    many: BoundedCache[str, bytes] = BoundedCache(bound, sizer=len)
    pairs = [(key, f"{key}:{i}:".encode().ljust(size, b"x")) for i, (key, size) in enumerate(items)]
    returned = [one.put(key, value) for key, value in pairs]
    assert many.put_many(pairs) == returned
    assert held(many) == held(one) and many.nbytes == one.nbytes <= bound
