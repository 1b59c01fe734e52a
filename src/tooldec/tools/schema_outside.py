"""Values a core schema rejects: the under-approximated complement that lets ``oneOf`` compile.

Where ``oneOf`` branches may overlap and none can be negated exactly, each branch is written with, for every
other, one way of violating it: a value outside its types, past a bound, missing a required key, with a property
outside its schema, a key its closed object refuses, an excluded constant. Each *piece* holds only values that
branch rejects, so the result is a subset of what ``oneOf`` accepts, never more.

The pieces are computed on schemas read *wide* (supersets of the branches as written: ``{"minLength": 3}`` accepts
every number, so its pieces must not claim numbers violate it). Integer-only branches are never said to reject
numbers: the grammar cannot write only the non-integral ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tooldec.automata.pointers import join
from tooldec.tools.schema_algebra import Algebra
from tooldec.tools.schema_core import ALL_TYPES, Schema, kinds

__all__ = ["MAX_OUTSIDE_BRANCHES", "MAX_OUTSIDE_DEPTH", "MAX_PIECES", "exclusive_branches", "outside"]

MAX_OUTSIDE_BRANCHES = 4
"""A ``oneOf`` branch written with ways of violating the others keeps at most this many alternatives."""
MAX_OUTSIDE_DEPTH = 3
"""How deep into properties and items a violation is looked for."""
MAX_PIECES = 16
"""At most this many ways of violating one schema are kept (the first found)."""


def exclusive_branches(live: Sequence[tuple[int, Schema]], wide: list[Schema], algebra: Algebra, ptr: str) -> Schema:
    """The ``oneOf`` at ``ptr``: each live branch with the ways found of violating every other (``wide``). A branch
    left with no value is dropped when those ways were all there are, else refused (values may match it alone)."""
    out: list[Schema] = []
    mark = len(algebra.reasons)  # pieces that do not meet are no news
    for i, m in live:
        acc, exact = [m], True
        for j, w in enumerate(wide):
            if j == i:
                continue
            found: list[Schema] = []
            for a in acc:
                pieces, done = outside(w, a, algebra, join(ptr, i))
                found += [a] if a in pieces else pieces  # ``a`` may lie outside ``w`` as it is
                exact = exact and done
            exact = exact and len(found) <= MAX_OUTSIDE_BRANCHES
            found.sort(key=lambda piece: len(json.dumps(piece)))  # the least added first
            acc = found[:MAX_OUTSIDE_BRANCHES]  # fewer ways: a subset, still matching branch i alone
        if acc:
            out.append(algebra.any_of(acc, join(ptr, i), "oneOf"))
        elif not exact:
            others = [j for j in range(len(wide)) if j != i]
            raise algebra.unsupported(
                f"branch {i} may match the same values as branch{'es' if len(others) > 1 else ''}"
                f" {', '.join(map(str, others))}, and tooldec finds no value it can write that matches branch"
                f" {i} alone: use anyOf if overlap is fine, or make the branches differ in type, constant"
                " values, ranges or a required property", ptr, "oneOf")
    del algebra.reasons[mark:]
    if not out:
        return algebra.empty(ptr, "every value of each branch matches another branch too")
    return algebra.any_of(out, ptr, "oneOf")


def outside(schema: Schema, within: Schema, algebra: Algebra, ptr: str, depth: int = 0) -> tuple[list[Schema], bool]:
    """Schemas of values inside ``within`` (the branch being written) that ``schema`` (read wide) rejects, and
    whether together they are all such values; ``depth`` counts properties or items (:data:`MAX_OUTSIDE_DEPTH`)."""
    if schema is True or within is False:
        return [], True
    if schema is False:
        return [within], True
    if "anyOf" in schema:  # outside every alternative at once: the ways out of one, then the next
        found: list[Schema] = [within]
        exact = True
        for branch in schema["anyOf"]:
            ways: list[Schema] = []
            for host in found:
                more, done = outside(branch, host, algebra, ptr, depth)
                ways += more
                exact = exact and done
            found, exact = ways[:MAX_PIECES], exact and len(ways) <= MAX_PIECES
        return found, exact
    if "enum" in schema:
        values = schema["enum"]
        if all(v is None or isinstance(v, (bool, int, float, str)) for v in values):
            return _live([{"not": {"enum": list(values)}}], within, algebra, ptr, True)
        present = {_kind_of(v) for v in values}
        return _live([{"type": [k for k in ALL_TYPES if k != "integer" and k not in present]}], within, algebra, ptr,
                     False)
    ks = kinds(schema)
    exact = not any(k in schema for k in ("pattern", "format", "allOf", "multipleOf", "patternProperties"))
    pieces: list[dict[str, Any]] = []
    others = [k for k in ALL_TYPES if k != "integer" and k not in ks and not (k == "number" and "integer" in ks)]
    exact = exact and not ("integer" in ks and "number" not in ks)  # non-integral numbers are not written
    if others:
        pieces.append({"type": others})
    if "not" in schema:
        pieces.append({"enum": list(schema["not"]["enum"])})
    if "number" in ks or "integer" in ks:
        pieces += _numbers(schema, "number" if "number" in ks else "integer")
    if "string" in ks:
        pieces += _counts(schema, "string", "minLength", "maxLength")
    if "array" in ks:
        pieces += _counts(schema, "array", "minItems", "maxItems")
        parts, done = _items(schema, within, algebra, ptr, depth)
        pieces += parts
        exact = exact and done
    if "object" in ks:
        parts, done = _objects(schema, within, algebra, ptr, depth)
        pieces += parts
        exact = exact and done
    return _live(pieces, within, algebra, ptr, exact)


def _live(pieces: list[dict[str, Any]], within: Schema, algebra: Algebra, ptr: str,
          exact: bool) -> tuple[list[Schema], bool]:
    """The pieces that meet ``within`` (met with it), at most :data:`MAX_PIECES` of them."""
    out: list[Schema] = []
    for piece in pieces:
        live = algebra.conj(within, algebra.canonical(piece, ptr), ptr)
        if live is not False:
            if len(out) == MAX_PIECES:
                return out, False
            out.append(live)
    return out, exact


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _numbers(schema: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """Numbers past one bound (integers past it, for an integer-only schema)."""
    out: list[dict[str, Any]] = []
    if kind == "integer":  # core integer bounds are inclusive integers
        if "minimum" in schema:
            out.append({"type": "integer", "maximum": schema["minimum"] - 1})
        if "maximum" in schema:
            out.append({"type": "integer", "minimum": schema["maximum"] + 1})
        return out
    for key, flip in (("minimum", "exclusiveMaximum"), ("exclusiveMinimum", "maximum"),
                      ("maximum", "exclusiveMinimum"), ("exclusiveMaximum", "minimum")):
        if key in schema:
            out.append({"type": "number", flip: schema[key]})
    return out


def _counts(schema: dict[str, Any], kind: str, low: str, high: str) -> list[dict[str, Any]]:
    """Strings, arrays or objects shorter than the minimum or longer than the maximum."""
    out: list[dict[str, Any]] = []
    if schema.get(low, 0) > 0:
        out.append({"type": kind, high: schema[low] - 1})
    if high in schema:
        out.append({"type": kind, low: schema[high] + 1})
    return out


def _sub(within: Schema, kind: str) -> Schema:
    """``within`` narrowed to one kind (an object or array schema whose parts can be read)."""
    if not isinstance(within, dict) or "anyOf" in within or "enum" in within or kind not in kinds(within):
        return True if within is not False else False
    return within


def _items(schema: dict[str, Any], within: Schema, algebra: Algebra, ptr: str,
           depth: int) -> tuple[list[dict[str, Any]], bool]:
    """Arrays with one item outside its schema (the first four positions are tried)."""
    prefix = schema.get("prefixItems", [])
    rest = schema.get("items", True)
    if depth >= MAX_OUTSIDE_DEPTH:
        return [], not prefix and rest is True
    host = _sub(within, "array")
    host_prefix = host.get("prefixItems", []) if isinstance(host, dict) else []
    host_rest = host.get("items", True) if isinstance(host, dict) else True
    out: list[dict[str, Any]] = []
    for i, item in enumerate([*prefix, rest][:4]):
        mine = host_prefix[i] if i < len(host_prefix) else host_rest
        found, _ = outside(item, mine, algebra, ptr, depth + 1)
        out += [{"type": "array", "prefixItems": [*([True] * i), bad], "minItems": i + 1} for bad in found[:2]]
    return out, not prefix and rest is True


def _objects(schema: dict[str, Any], within: Schema, algebra: Algebra, ptr: str,
             depth: int) -> tuple[list[dict[str, Any]], bool]:
    """Objects missing a required key, with a property outside its schema, with a key a closed
    object does not allow, or with too few or too many keys."""
    props: dict[str, Schema] = schema.get("properties", {})
    out: list[dict[str, Any]] = [{"type": "object", "properties": {name: False}} for name in schema.get("required", [])]
    out += _counts(schema, "object", "minProperties", "maxProperties")
    exact = schema.get("additionalProperties", True) is True
    if schema.get("additionalProperties", True) is False and not schema.get("patternProperties"):
        out.append({"type": "object", "properties": dict.fromkeys(props, False), "minProperties": 1})
    if depth >= MAX_OUTSIDE_DEPTH:
        return out, exact and all(s is True for s in props.values())
    host = _sub(within, "object")
    declared = host.get("properties", {}) if isinstance(host, dict) else {}
    for name in dict.fromkeys([*props, *declared]):  # the keys the branch written may have, too
        mine = algebra.key_schema(host, name, ptr) if isinstance(host, dict) else host
        found, done = outside(algebra.key_schema(schema, name, ptr), mine, algebra, ptr, depth + 1)
        exact = exact and (done and len(found) <= 2 or name not in props)
        out += [{"type": "object", "properties": {name: bad}, "required": [name]} for bad in found[:2]]
    return out, exact
