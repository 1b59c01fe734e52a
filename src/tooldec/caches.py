"""A least-recently-used cache bounded by bytes, safe to share between threads.

Every cache a server may share (compiled tools, masks, snapshots) is one of these, so memory
stays bounded however many distinct schemas or tool lists arrive.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

import numpy as np

__all__ = ["BoundedCache", "size_of"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_ABSENT = object()
"""What a store finds under a key it does not hold (a value may be ``None``)."""


def size_of(value: object) -> int:
    """Bytes held by a cached value: its own ``nbytes`` if it reports one, else a shallow estimate."""
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, int):  # counts and lengths kept beside the masks
        return 64
    if isinstance(value, (bytes, str)):
        return sys.getsizeof(value)
    return 256


class BoundedCache(Generic[K, V]):
    """Values by key, least recently used evicted first once ``max_bytes`` is exceeded.

    Thread-safe: every operation holds one lock. A value computed by two threads at once is
    kept once (the first to finish wins; both are equal by construction of the callers).

    Args:
        max_bytes: The bound; ``0`` disables caching (every ``get_or_make`` computes).
        sizer: Bytes of one value (default :func:`size_of`).

    Examples:
        >>> cache = BoundedCache[str, bytes](max_bytes=200)
        >>> cache.get_or_make("a", lambda: b"x" * 100)  # doctest: +ELLIPSIS
        b'xxx...'

        >>> len(cache), cache.get("b") is None
        (1, True)
    """

    def __init__(self, max_bytes: int, sizer: Callable[[V], int] = size_of) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self._sizer = sizer
        # Values and their sizes apart: no (value, size) pair per item for the collector to walk
        # (a new tool list stores thousands of items).
        self._items: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def values(self) -> list[V]:
        """The values held now, least recently used first (a copy: for reports and checks)."""
        with self._lock:
            return list(self._items.values())

    def get_many(self, keys: list[K]) -> list[V | None]:
        """``get`` for each key under one lock (a request's tool list: a thousand lookups).

        Examples:
            >>> cache: BoundedCache[str, int] = BoundedCache(1024)
            >>> cache.put("a", 1), cache.get_many(["a", "b"])
            (1, [1, None])
        """
        items = self._items
        with self._lock:
            out = [items.get(key) for key in keys]
            found = 0
            for key, value in zip(keys, out):
                if value is not None:
                    items.move_to_end(key)
                    found += 1
            self.hits += found
            self.misses += len(keys) - found
        return out

    def put(self, key: K, value: V, size: int | None = None) -> V:
        """Store ``value`` (or return the one stored meanwhile under ``key``); ``size``: its
        bytes where the caller knows them (the sizer is then not asked)."""
        size = self._sizer(value) if size is None else size
        with self._lock:
            return self._put_held(key, value, size)

    def put_many(self, items: list[tuple[K, V]], sizes: list[int] | None = None) -> list[V]:
        """``put`` of each pair under one lock (a new tool list: a thousand stores); returns what
        each key holds afterwards, the value given or the one stored meanwhile. ``sizes``: the
        values' bytes where the caller knows them.

        Examples:
            >>> cache: BoundedCache[str, int] = BoundedCache(1024)
            >>> cache.put("a", 1), cache.put_many([("a", 2), ("b", 3)]), len(cache)
            (1, [1, 3], 2)
        """
        if sizes is None:
            sizer = self._sizer
            sizes = [sizer(value) for _, value in items]
        put = self._put_held
        with self._lock:
            return [put(key, value, size) for (key, value), size in zip(items, sizes)]

    def _put_held(self, key: K, value: V, size: int) -> V:
        """``put`` with the lock held: what ``key`` holds afterwards (the bound kept after each
        store, so a key given again later in one ``put_many`` is stored again)."""
        found = self._items.get(key, _ABSENT)
        if found is not _ABSENT:
            self._items.move_to_end(key)
            return cast(V, found)
        self._store(key, value, size)
        if self._bytes > self.max_bytes:
            self._evict(keep=0)
        return value

    def _store(self, key: K, value: V, size: int) -> None:
        """Keep a new item, unless it alone is over the bound (the lock is held)."""
        if self.max_bytes == 0 or size > self.max_bytes:
            return
        self._items[key] = value
        self._sizes[key] = size
        self._bytes += size

    def get_or_make(self, key: K, make: Callable[[], V], keep: Callable[[V], bool] | None = None) -> V:
        """The cached value, or ``make()`` stored (computed outside the lock); with ``keep``, a
        made value is stored only if ``keep(value)``.

        Examples:
            >>> cache: BoundedCache[str, int] = BoundedCache(1024)
            >>> cache.get_or_make("a", lambda: 1, keep=lambda v: v > 1), len(cache)
            (1, 0)
            >>> cache.get_or_make("b", lambda: 2, keep=lambda v: v > 1), len(cache)
            (2, 1)
        """
        found = self.get(key)
        if found is not None:
            return found
        made = make()
        return made if keep is not None and not keep(made) else self.put(key, made)

    def resize(self, key: K) -> None:
        """Account again for a value that grew in place (a lazily expanded automaton): it becomes
        the most recently used, and the least recently used others go while over the bound."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                return
            new = self._sizer(value)
            self._bytes += new - self._sizes[key]
            self._sizes[key] = new
            self._items.move_to_end(key)
            self._evict(keep=1)

    def _evict(self, keep: int) -> None:
        """Drop least recently used items while over the bound, keeping the ``keep`` newest."""
        while self._bytes > self.max_bytes and len(self._items) > keep:
            key, _ = self._items.popitem(last=False)
            self._bytes -= self._sizes.pop(key)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._sizes.clear()
            self._bytes = 0
