"""``ToolSet``: the tool inventory, by name, in insertion order.

The decoder compiles it into a snapshot whose names are a sorted index read as a trie (the paper's
Fig. 3; ``tooldec.decoding.names``): adding or removing a tool costs its name, not a recompile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Union

from tooldec.errors import DuplicateToolError, ToolNotFoundError
from tooldec.tools.tool import Tool

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ToolLike", "ToolSet"]

#: Anything ``Tool.coerce`` turns into a tool.
ToolLike = Union[Tool, Callable[..., Any], Mapping[str, Any], "type[BaseModel]"]


class ToolSet:
    """Tools by name, in insertion order.

    Args:
        tools: Initial tools; each is added as by :meth:`add`.

    Raises:
        ToolRegistrationError: From :meth:`add`, for the first tool that cannot be added.

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
        for tool in tools:
            self.add(tool)

    def add(self, tool: ToolLike) -> Tool:
        """Add a tool (anything ``Tool.coerce`` accepts); the set is unchanged if this raises.

        Returns:
            The ``Tool`` that was added.

        Raises:
            DuplicateToolError: A tool with the same name is in the set.
            ToolRegistrationError: ``tool`` cannot be made into a ``Tool`` (bad name or schema, ...).
        """
        made = Tool.coerce(tool)
        if made.name in self._tools:
            raise DuplicateToolError(
                "a tool with this name is already in the set; remove it first or rename one", tool=made.name)
        self._tools[made.name] = made
        self._version += 1
        return made

    def remove(self, name: str) -> Tool:
        """Remove and return the tool called ``name``.

        Raises:
            ToolNotFoundError: No tool has that name.
        """
        tool = self[name]
        del self._tools[name]
        self._version += 1
        return tool

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._tools

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise ToolNotFoundError(f"no tool named {name!r}; the set has {self._describe_names()}") from None

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolSet({self.names!r})"

    @property
    def names(self) -> list[str]:
        """Tool names in insertion order."""
        return list(self._tools)

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
