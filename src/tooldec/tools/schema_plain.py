"""The normal form of a plain schema, written out without the reader.

Most tool schemas in the wild (BFCL, ToolBench, OpenAI examples) are plain: typed properties,
``required``, array ``items``, descriptions. The reader (:mod:`.schema_reader`) takes ~100 us for
one, since it checks every keyword JSON Schema has, resolves references and canonicalises through
the schema algebra; for a plain schema its answer is the schema with its annotations dropped. So
:func:`plain_form` recognises a plain schema (conservatively: anything else returns ``None`` and
goes to the reader) and writes that answer in a few microseconds. A test compares the two on
every schema of the fixtures and benchmark inventories, key order included. The walk is compiled
where the extension ``_plain_form`` is built (the same steps, a tenth of the time, no call into
Python; tests compare it with the Python walk here, which runs without it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tooldec.native import compiled
from tooldec.tools.schema_core import is_writable
from tooldec.tools.schema_keywords import BFCL_TYPES, SUPPORTED_KEYWORDS, UNSUPPORTED_KEYWORDS
from tooldec.tools.schema_size import PLAIN_ANY, PLAIN_MEMBER, PLAIN_NO_PROPERTIES, PLAIN_OWN, enum_cost

__all__ = ["NATIVE", "plain_form", "plain_form_cost", "plain_form_cost_in_python"]

_ENUM_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool}
"""Kinds whose ``enum`` is plain when every value has exactly this Python type: the reader then
keeps the values, first occurrences in order, and drops the type."""
_READ = SUPPORTED_KEYWORDS | frozenset(UNSUPPORTED_KEYWORDS) | {"nullable"}
"""Keywords the reader acts on: a plain schema holds none but the four below. Every other key
(annotations, unknown extensions such as ToolBench's ``example_value``) the reader drops."""
_DEPTH = 16
_READ_BUT_TYPE = _READ - {"type"}
_SCALARS = frozenset({"string", "integer", "number", "boolean", "null"})


def plain_form_cost_in_python(schema: Any) -> tuple[dict[str, Any], int] | None:
    """:func:`plain_form_cost` without the extension (what it is compared with)."""
    cost = [0]
    out = _node(schema, 0, cost)
    return (out, cost[0]) if type(out) is dict and out.get("type") == "object" else None


_module = compiled("tooldec.tools._plain_form")
_native: Callable[[Any], tuple[dict[str, Any], int] | None] | None = None
if _module is not None:
    _module.configure(_READ, _READ_BUT_TYPE, _SCALARS, BFCL_TYPES, PLAIN_OWN, PLAIN_MEMBER,
                      PLAIN_NO_PROPERTIES, PLAIN_ANY, _DEPTH)
    _native = _module.plain_form_cost
NATIVE = _native is not None
"""Whether plain forms are written by the compiled walk (decided once, at import)."""


def plain_form(schema: Any) -> dict[str, Any] | None:
    """The normal form of a plain object schema, or ``None`` if it is not plain.

    Plain: every subschema is a dict with a ``type`` string (BFCL's names mapped) and,
    besides annotations, only ``properties`` and ``required`` (objects, ``required`` naming
    unique listed properties, both absent for an object of any members), ``items`` (arrays) or
    an ``enum`` of strings, integers or booleans of that type; or, below the top, annotations
    only (any value: ``True``, as BFCL's ``any`` type is often written); nesting at most 16 deep.

    Examples:
        >>> plain_form({"type": "object", "properties": {"x": {"type": "integer", "description": "d"}},
        ...             "required": ["x"], "example_value": 1})
        {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x']}
        >>> plain_form({"type": "object", "properties": {"x": {"type": "string", "maxLength": 3}}}) is None
        True
    """
    found = plain_form_cost(schema)
    return found[0] if found is not None else None


def plain_form_cost(schema: Any) -> tuple[dict[str, Any], int] | None:
    """:func:`plain_form` and its :func:`~tooldec.tools.schema_size.plain_cost`, summed while
    it is written (one pass over the schema instead of two)."""
    if _native is not None:
        return _native(schema)
    return plain_form_cost_in_python(schema)


def _writable(text: Any) -> bool:
    """A string the grammar can write (a lone surrogate cannot be: the reader's business)."""
    return type(text) is str and (text.isascii() or is_writable(text))


_SCALAR_FORMS: dict[str, tuple[str, int]] = {
    name: (kind, PLAIN_OWN[kind]) for name, kind in {**{k: k for k in _SCALARS}, **BFCL_TYPES}.items()
    if kind in _SCALARS}
"""Each ``type`` string (BFCL's included) that names a scalar kind: the kind and its own cost.
Most subschemas are one of these with annotations only, written without a call of :func:`_node`."""


def _node(node: Any, depth: int, cost: list[int]) -> dict[str, Any] | bool | None:
    """The normal form of one plain subschema (``None``: not plain); adds its size to ``cost[0]``."""
    if type(node) is not dict or depth > _DEPTH:
        return None
    kind = node.get("type")
    if type(kind) is not str:
        if not _READ.isdisjoint(node):
            return None
        cost[0] += PLAIN_ANY  # annotations only: any value
        return True
    kind = BFCL_TYPES.get(kind, kind)  # BFCL's "dict", "float", "tuple", as the reader maps them
    own = PLAIN_OWN.get(kind)
    if own is None:
        return None
    if kind in _SCALARS and _READ_BUT_TYPE.isdisjoint(node):  # most subschemas: a type and annotations
        cost[0] += own
        return {"type": kind}
    out: dict[str, Any] = {}
    enum: list[Any] | None = None
    for key, value in node.items():
        if key not in _READ:
            continue
        if key == "type":
            out[key] = kind
        elif key == "properties" and kind == "object" and type(value) is dict:
            props: dict[str, Any] = {}
            leaves = 0
            for name, sub in value.items():
                if not (type(name) is str and (name.isascii() or is_writable(name))):
                    return None
                written = sub.get("type") if type(sub) is dict else None
                scalar = _SCALAR_FORMS.get(written) if type(written) is str else None
                if scalar is not None and depth < _DEPTH and _READ_BUT_TYPE.isdisjoint(sub):
                    props[name] = {"type": scalar[0]}  # what _node writes for it, without the call
                    leaves += scalar[1]
                else:
                    read = _node(sub, depth + 1, cost)
                    if read is None:
                        return None
                    props[name] = read
                own += len(name) + PLAIN_MEMBER
            cost[0] += leaves
            out[key] = props
        elif key == "required" and kind == "object" and type(value) is list:
            if value:
                out[key] = value[:]
        elif key == "items" and kind == "array":
            read = _node(value, depth + 1, cost)
            if read is None:
                return None
            out[key] = read
        elif key == "enum" and kind in _ENUM_TYPES and type(value) is list and value:
            want = _ENUM_TYPES[kind]
            if any(type(v) is not want for v in value) or (want is str and not all(map(_writable, value))):
                return None
            enum = value
        else:
            return None
    if enum is not None:
        values = list(dict.fromkeys(enum))
        cost[0] += enum_cost(values)
        return {"enum": values}
    if kind == "object":
        listed = out.get("properties")
        if listed is None:  # any members (counted below), unless some are required: the reader lists them
            if "required" in out:
                return None
            listed = {}
        required = out.get("required")
        if required is not None:  # unique listed names (the names are strings: no other value is one)
            try:
                names = set(required)
            except TypeError:  # an unhashable value
                return None
            if len(names) < len(required) or not names <= listed.keys():
                return None
        if not listed:
            own += PLAIN_NO_PROPERTIES
    elif kind == "array" and "items" not in out:
        return None
    cost[0] += own
    return out
