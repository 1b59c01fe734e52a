"""JSON pointers (RFC 6901) and local ``$ref`` values: the one resolver every module uses.

A local ``$ref`` is ``#`` + a pointer percent-encoded as URI fragments are (``#/$defs/a%20b`` names ``a b``), each
token then unescaping ``~1`` to ``/`` and ``~0`` to ``~``, in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

__all__ = ["MISSING", "escape", "join", "ref_tokens", "resolve_ref"]

MISSING: Any = object()
"""What :func:`resolve_ref` returns when a reference points nowhere."""


def escape(token: str | int) -> str:
    """One pointer token, escaped (``~`` first, then ``/``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join(parent: str, *tokens: str | int) -> str:
    """``parent`` extended by ``tokens`` (each escaped); one plain token, the common case, takes a short way."""
    if len(tokens) == 1:
        token = tokens[0]
        if isinstance(token, int) or ("~" not in token and "/" not in token):
            return f"{parent}/{token}"
    return parent + "".join(f"/{escape(t)}" for t in tokens)


def ref_tokens(ref: str) -> list[str] | None:
    """The unescaped tokens of a local reference (``#`` or ``#/...``), ``None`` if not local."""
    if ref == "#":
        return []
    if not ref.startswith("#/"):
        return None
    return [unquote(raw).replace("~1", "/").replace("~0", "~") for raw in ref[2:].split("/")]


def resolve_ref(root: Any, ref: str) -> Any:
    """The value a local reference points to in ``root``, or :data:`MISSING`.

    Examples:
        >>> resolve_ref({"$defs": {"a b": {"type": "string"}}}, "#/$defs/a%20b")
        {'type': 'string'}
        >>> resolve_ref({"x": {"a/b": 1}}, "#/x/a~1b")
        1
        >>> resolve_ref({}, "#/nowhere") is MISSING
        True
    """
    tokens = ref_tokens(ref)
    if tokens is None:
        return MISSING
    node = root
    for token in tokens:
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and (token == "0" or not token.startswith("0")) \
                and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node
