"""Which local references of a schema document can reach themselves (recursive ``$ref``): the reader memoises
only the expansions of the others, which do not depend on the references above them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldec.automata.pointers import MISSING, join, ref_tokens, resolve_ref

__all__ = ["cyclic_refs", "refs_in"]


def cyclic_refs(root: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """The references that can reach themselves, found on the graph "target of A contains B"."""
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    pending = [(), *refs_in(root)]
    while pending:
        key = pending.pop()
        if key in graph:
            continue
        target = resolve_ref(root, "#" + join("", *key)) if key else root
        graph[key] = set(refs_in(target)) if target is not MISSING else set()
        pending.extend(graph[key])
    cyclic: set[tuple[str, ...]] = set()
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            node = todo.pop()
            if node == start:
                cyclic.add(start)
                break
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
    return cyclic


def refs_in(node: Any) -> list[tuple[str, ...]]:
    """Every local reference inside ``node`` (iteratively; the nesting was checked)."""
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            ref = item.get("$ref")
            tokens = ref_tokens(ref) if isinstance(ref, str) else None
            if tokens is not None:
                found.append(tuple(tokens))
            stack.extend(v for k, v in item.items() if k not in ("$defs", "definitions"))
        elif isinstance(item, list):
            stack.extend(item)
    return found
