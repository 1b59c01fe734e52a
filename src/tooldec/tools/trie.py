"""The byte trie of tool names (the paper's Fig. 3).

Adding or removing a tool costs the length of its name; nothing else is rebuilt. Each node keeps
a version number that changes whenever a name below it is added or removed, so a mask cached for
a node (``decoding``) knows when it is stale without the trie knowing about masks.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["ROOT", "NameTrie"]

ROOT = 0



class NameTrie:
    """Tool names as a byte trie with integer node ids; the root is node 0.

    Examples:
        >>> trie = NameTrie()
        >>> trie.add("add"); trie.add("add_numbers")
        >>> node = trie.walk(ROOT, b"add")
        >>> trie.terminal(node), sorted(chr(b) for b in trie.children(node))
        ('add', ['_'])
        >>> trie.remove("add_numbers"); trie.children(node)
        {}
    """

    def __init__(self) -> None:
        self._children: list[dict[int, int]] = [{}]
        self._terminal: list[str | None] = [None]
        self._parent: list[int] = [-1]
        self._below: list[int] = [0]  # names ending at or below the node
        self._version: list[int] = [0]
        self._free: list[int] = []

    def __len__(self) -> int:
        return self._below[ROOT]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        node = self.walk(ROOT, name.encode())
        return node is not None and self._terminal[node] == name

    def add(self, name: str) -> None:
        """Insert ``name``; the caller has checked that it is new."""
        node = ROOT
        path = [ROOT]
        for byte in name.encode():
            nxt = self._children[node].get(byte)
            if nxt is None:
                nxt = self._new_node(node)
                self._children[node][byte] = nxt
            node = nxt
            path.append(node)
        self._terminal[node] = name
        for n in path:
            self._below[n] += 1
            self._version[n] += 1

    def remove(self, name: str) -> None:
        """Delete ``name`` and every node that no longer leads to a name."""
        data = name.encode()
        path = [ROOT]
        for byte in data:
            path.append(self._children[path[-1]][byte])
        self._terminal[path[-1]] = None
        for n in path:
            self._below[n] -= 1
            self._version[n] += 1
        for depth in range(len(data), 0, -1):
            node = path[depth]
            if self._below[node]:
                break
            del self._children[path[depth - 1]][data[depth - 1]]
            self._free.append(node)

    def walk(self, node: int, data: bytes) -> int | None:
        """The node reached from ``node`` by ``data``, or ``None`` if no name continues that way."""
        for byte in data:
            nxt = self._children[node].get(byte)
            if nxt is None:
                return None
            node = nxt
        return node

    def child(self, node: int, byte: int) -> int | None:
        return self._children[node].get(byte)

    def children(self, node: int) -> dict[int, int]:
        """Byte -> child node; do not modify."""
        return self._children[node]

    def terminal(self, node: int) -> str | None:
        """The name that ends exactly at ``node``."""
        return self._terminal[node]

    def depth(self, node: int) -> int:
        """How many bytes of a name lead to ``node``."""
        depth = 0
        while node != ROOT:
            node = self._parent[node]
            depth += 1
        return depth

    def version(self, node: int) -> int:
        return self._version[node]

    def names_below(self, node: int) -> Iterator[str]:
        stack = [node]
        while stack:
            n = stack.pop()
            if self._terminal[n] is not None:
                yield self._terminal[n]  # type: ignore[misc]
            stack.extend(self._children[n].values())

    def min_suffix_length(self, node: int) -> int:
        """Fewest bytes from ``node`` to the end of some name (for shortest completions)."""
        frontier, depth = [node], 0
        while frontier:
            if any(self._terminal[n] is not None for n in frontier):
                return depth
            frontier = [c for n in frontier for c in self._children[n].values()]
            depth += 1
        raise ValueError("no name below this node")

    def _new_node(self, parent: int) -> int:
        if self._free:
            node = self._free.pop()
            self._children[node] = {}
            self._terminal[node] = None
            self._parent[node] = parent
            self._below[node] = 0
            self._version[node] += 1
            return node
        self._children.append({})
        self._terminal.append(None)
        self._parent.append(parent)
        self._below.append(0)
        self._version.append(0)
        return len(self._children) - 1
