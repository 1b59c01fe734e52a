"""Tool names as an immutable sorted list, read as a byte trie (the paper's Fig. 3): the names
below a prefix are one range found by bisection, and a change makes a new list.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Sequence

__all__ = ["NameIndex"]


class NameIndex:
    """Sorted tool names (as UTF-8 bytes) with prefix-range queries. Immutable.

    Examples:
        >>> names = NameIndex(["add", "add_numbers", "sub"])
        >>> names.children(b"add"), names.terminal(b"add"), names.terminal(b"ad")
        ([95], 'add', None)
        >>> names.without("add_numbers").children(b"add")
        []
    """

    __slots__ = ("_bytes",)

    def __init__(self, names: Iterable[str] = (), *, presorted: Sequence[bytes] | None = None) -> None:
        self._bytes: Sequence[bytes] = presorted if presorted is not None else sorted(n.encode() for n in names)

    def __len__(self) -> int:
        return len(self._bytes)

    def __iter__(self) -> Iterator[str]:
        return (b.decode() for b in self._bytes)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        data = name.encode()
        i = bisect_left(self._bytes, data)
        return i < len(self._bytes) and self._bytes[i] == data

    def with_name(self, name: str) -> NameIndex:
        """A new index with ``name`` added (the caller checked it is new)."""
        out = list(self._bytes)
        insort(out, name.encode())
        return NameIndex(presorted=out)

    def without(self, name: str) -> NameIndex:
        """A new index without ``name``."""
        data = name.encode()
        i = bisect_left(self._bytes, data)
        out = list(self._bytes)
        if i < len(out) and out[i] == data:
            del out[i]
        return NameIndex(presorted=out)

    def span(self, prefix: bytes) -> tuple[int, int]:
        """The index range of the names starting with ``prefix``."""
        names = self._bytes
        a = bisect_left(names, prefix)
        stem = prefix.rstrip(b"\xff")  # the names that start with ``prefix`` sort below its successor
        return a, bisect_left(names, stem[:-1] + bytes([stem[-1] + 1]), a) if stem else len(names)

    def has_prefix(self, prefix: bytes) -> bool:
        names = self._bytes
        i = bisect_left(names, prefix)
        return i < len(names) and names[i].startswith(prefix)

    def children(self, prefix: bytes) -> list[int]:
        """The bytes that extend ``prefix`` towards some name, sorted."""
        names = self._bytes
        a, z = self.span(prefix)
        depth = len(prefix)
        out: list[int] = []
        i = a
        while i < z:
            name = names[i]
            if len(name) == depth:
                i += 1
                continue
            byte = name[depth]
            out.append(byte)
            if byte == 255:
                break
            i = bisect_left(names, prefix + bytes([byte + 1]), i, z)
        return out

    def terminal(self, prefix: bytes) -> str | None:
        """The name equal to ``prefix``, if there is one."""
        names = self._bytes
        i = bisect_left(names, prefix)
        return prefix.decode() if i < len(names) and names[i] == prefix else None

    def below(self, prefix: bytes) -> list[str]:
        """The names that start with ``prefix``."""
        a, z = self.span(prefix)
        return [b.decode() for b in self._bytes[a:z]]

    def at(self, i: int) -> str:
        """The ``i``-th name in sorted order."""
        return self._bytes[i].decode()

    @property
    def sorted_names(self) -> Sequence[bytes]:
        """The names as sorted bytes, not copied (read only)."""
        return self._bytes
