"""``ToolSet``: the tool inventory, by name, in insertion order.

The decoder compiles it into a snapshot whose names are a sorted index read as a trie (the paper's
Fig. 3; ``tooldec.decoding.names``): adding or removing a tool costs its name, not a recompile.
The set keeps that sorted index itself (built once for the initial tools, then one insertion or
deletion per change), so compiling a registered set does not sort or hash its tools again. A
list of tool dicts seen before (any order) is one lookup, and its set is laid out only when read:
compiling it needs only its digest.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Union

from tooldec.automata.gcpause import collector_paused
from tooldec.caches import BoundedCache
from tooldec.errors import DuplicateToolError, ToolNotFoundError
from tooldec.tools.keys import list_key
from tooldec.tools.tool import Tool

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Inventory", "ToolLike", "ToolSet", "inventory_digest"]

#: Anything ``Tool.coerce`` turns into a tool.
ToolLike = Union[Tool, Callable[..., Any], Mapping[str, Any], "type[BaseModel]"]


def inventory_digest(entries: Iterable[str]) -> str:
    """SHA-256 of tools' ``inventory_entry`` strings given in name order: the same tools give
    the same digest whatever order they were registered in."""
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


@dataclass(frozen=True)
class _Registered:
    """A tool list registered before: its key (``keys.ListKey.data``), its tools in the key's
    order, the set's sorted entries and names, and their :func:`inventory_digest`."""

    key: bytes
    tools: tuple[Tool, ...]
    entries: tuple[str, ...]
    names: tuple[bytes, ...]
    digest: str

    @property
    def nbytes(self) -> int:
        """What the cache counts: the key's bytes (the tools are shared with ``Tool``'s caches)."""
        return len(self.key)


class _ListCache:
    """Tool lists of plain dicts registered before, by their canonical key: a server that gets
    the same list with every request (in any order) pays its dicts' keys and one lookup.

    A key is filed by its length and the hash of its ``ListKey.sample`` (every 64th byte: hashing
    all of a thousand tools' half megabyte took ~0.1 ms of such a request; a key of at most 4 kB
    is its own sample, as such keys all begin alike), in the first of :attr:`PROBES` slots
    that is free or holds it; lists that share a sample are told apart by comparing whole keys
    (the extension compares a new list's pieces with the keys :meth:`filed` gives and hands back
    the equal one, so :meth:`find` then compares an object with itself).
    A search ends at a free slot, so a list behind an evicted one is registered again (and filed
    again); a fifth list with the same sample is not kept. Bounded by the bytes of the keys (the
    tools are shared with ``Tool``'s own caches); only successes are kept. Thread-safe (the
    bounded cache's lock; the values are immutable; ``hits`` is a count for tests, not exact
    under threads)."""

    PROBES = 4

    def __init__(self, max_bytes: int) -> None:
        self._slots: BoundedCache[tuple[int, int, int], _Registered] = BoundedCache(
            max_bytes, sizer=lambda found: found.nbytes)
        self.hits = 0
        """Lists found (whole keys equal)."""

    def __len__(self) -> int:
        return len(self._slots)

    @classmethod
    def _slots_of(cls, length: int, sample: bytes) -> list[tuple[int, int, int]]:
        hashed = hash(sample)
        return [(length, hashed, probe) for probe in range(cls.PROBES)]

    def _lists_at(self, length: int, sample: bytes) -> Iterator[_Registered]:
        """The lists filed under a key's length and sample, up to the first free slot."""
        for slot in self._slots_of(length, sample):
            found = self._slots.get(slot)
            if found is None:
                return
            yield found

    def filed(self, length: int, sample: bytes) -> list[bytes]:
        """The keys filed under a key's length and sample (``keys.list_key`` compares with them)."""
        return [found.key for found in self._lists_at(length, sample)]

    def find(self, key: bytes, sample: bytes) -> _Registered | None:
        for found in self._lists_at(len(key), sample):
            if found.key == key:
                self.hits += 1
                return found
        return None

    def keep(self, made: _Registered, sample: bytes) -> None:
        for slot in self._slots_of(len(made.key), sample):
            if self._slots.put(slot, made).key == made.key:  # filed now, or by another thread
                return


_registered_lists = _ListCache(16 * 2**20)


@dataclass(frozen=True)
class Inventory:
    """A ``ToolSet`` at one version, as a compiler reads it. Immutable: any thread may share it.

    Attributes:
        version: The set's version it was taken at.
        tools: The tools by name (a read-only view of a private copy).
        sorted_names: The names as UTF-8 bytes, sorted (the name trie's leaves).
        digest: :func:`inventory_digest` of the tools (names and schema hashes).
    """

    version: int
    tools: Mapping[str, Tool]
    sorted_names: tuple[bytes, ...]
    digest: str


class ToolSet:
    """Tools by name, in insertion order.

    Args:
        tools: Initial tools; each is added as by :meth:`add`.

    Raises:
        ToolRegistrationError: From :meth:`add`, for the first tool that cannot be added.

    A ``ToolSet`` is not locked: change it from one thread, and share what
    :meth:`inventory` or a compiler makes of it (both immutable).

    Examples:
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> tools = ToolSet([add, {"name": "math.factorial", "parameters": {"type": "dict",
        ...     "properties": {"n": {"type": "integer"}}, "required": ["n"]}}])
        >>> tools.names, len(tools), "add" in tools
        (['add', 'math.factorial'], 2, True)
        >>> tools.add(add)
        Traceback (most recent call last):
        ...
        tooldec.errors.DuplicateToolError: tool 'add': a tool with this name is already in the set; remove it first or rename one
        >>> removed = tools.remove("add")
        >>> tools.names, tools.version
        (['math.factorial'], 3)
    """

    def __init__(self, tools: Iterable[ToolLike] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._version = 0
        self._inventory: Inventory | None = None
        self._digest: tuple[int, str] | None = None  # (version, digest) made before the inventory
        self._entries: list[str] = []
        self._names: list[bytes] = []
        self._seen: tuple[_Registered, Sequence[int]] | None = None
        objs = list(tools)
        listed = list_key(objs, _registered_lists.filed)  # None unless every item is a plain tool dict
        found = _registered_lists.find(listed.data, listed.sample) if listed is not None else None
        if listed is not None and found is not None:  # seen before: the same tools, in this list's order,
            self._seen = (found, listed.order)  # laid out on first use (see _own): compiling needs
            self._version = len(objs)  # only the digest, and touching a thousand tools is most of
            self._digest = (self._version, found.digest)  # a millisecond of cache misses
            return
        keys = listed.keys() if listed is not None else Tool.dict_keys(objs)
        by_name = self._tools
        with collector_paused():  # thousands of small dicts, no cycles: the collector's passes
            for tool in Tool.coerce_all(objs, keys):  # would walk the growing heap again and again
                if tool.name in by_name:
                    self._put(tool)  # raises
                by_name[tool.name] = tool  # as _put does, the version counted once below
        self._version = len(by_name)
        entries = sorted(tool.inventory_entry for tool in self._tools.values())  # one sort for all
        self._entries = entries
        self._names = [entry[: entry.index("\0")].encode() for entry in entries]
        if listed is not None and objs:
            made = list(self._tools.values())
            digest = inventory_digest(entries)
            self._digest = (self._version, digest)
            _registered_lists.keep(_Registered(
                listed.data, tuple(made[i] for i in listed.order), tuple(entries), tuple(self._names), digest),
                listed.sample)

    def _own(self) -> dict[str, Tool]:
        """The tools by name; a set made from a list seen before lays them out here, once.

        Reads may lay out the set too: from several threads at once each makes the same dict,
        entries and names, and ``_seen`` is cleared after they are in place.
        """
        seen = self._seen
        if seen is not None:
            found, order = seen
            made: list[Tool] = [found.tools[0]] * len(order)
            for tool, i in zip(found.tools, order):
                made[i] = tool
            self._tools = {tool.name: tool for tool in made}
            self._entries, self._names = list(found.entries), list(found.names)
            self._seen = None
        return self._tools

    def _put(self, made: Tool) -> None:
        """Add ``made`` to a set laid out already (see :meth:`_own`)."""
        if made.name in self._tools:
            raise DuplicateToolError(
                "a tool with this name is already in the set; remove it first or rename one", tool=made.name)
        self._tools[made.name] = made
        self._version += 1

    def add(self, tool: ToolLike) -> Tool:
        """Add a tool (anything ``Tool.coerce`` accepts); the set is unchanged if this raises.

        Returns:
            The ``Tool`` that was added.

        Raises:
            DuplicateToolError: A tool with the same name is in the set.
            ToolRegistrationError: ``tool`` cannot be made into a ``Tool`` (bad name or schema, ...).
        """
        made = Tool.coerce(tool)
        entry = made.inventory_entry
        self._own()
        self._put(made)
        data = made.name.encode()
        i = bisect_left(self._names, data)
        self._names.insert(i, data)
        self._entries.insert(i, entry)
        return made

    def remove(self, name: str) -> Tool:
        """Remove and return the tool called ``name``.

        Raises:
            ToolNotFoundError: No tool has that name.
        """
        tool = self[name]
        del self._own()[name]
        i = bisect_left(self._names, name.encode())
        del self._names[i], self._entries[i]
        self._version += 1
        return tool

    def inventory(self) -> Inventory:
        """The set as it is now, immutable (made once per version: copies, no sorting)."""
        found = self._inventory
        if found is None or found.version != self._version:
            tools = self._own()
            found = Inventory(self._version, MappingProxyType(dict(tools)), tuple(self._names), self.digest)
            self._inventory = found
        return found

    @property
    def digest(self) -> str:
        """:func:`inventory_digest` of the set as it is now (what a compiler keys its snapshot by),
        without making the inventory when the set was registered as a list seen before."""
        made = self._digest
        if made is None or made[0] != self._version:
            made = (self._version, inventory_digest(self._entries) if self._seen is None else self._seen[0].digest)
            self._digest = made
        return made[1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._own()

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._own()[name]
        except KeyError:
            raise ToolNotFoundError(f"no tool named {name!r}; the set has {self._describe_names()}") from None

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._own().values()))

    def __len__(self) -> int:
        return len(self._own())

    def __repr__(self) -> str:
        return f"ToolSet({self.names!r})"

    @property
    def names(self) -> list[str]:
        """Tool names in insertion order."""
        return list(self._own())

    @property
    def version(self) -> int:
        """Goes up by one on every add and remove, so caches can key on it."""
        return self._version

    def _describe_names(self) -> str:
        names = self.names
        if not names:
            return "no tools"
        shown = ", ".join(repr(n) for n in names[:10])
        return f"{len(names)} tools: {shown}" + (", ..." if len(names) > 10 else "")
