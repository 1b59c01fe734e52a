"""The core form of normalized schemas, and what the algebra compares them by.

A *core* schema (what :mod:`tooldec.tools.schema` outputs, and all the automaton compiler reads)
is ``true``, ``false``, ``{"anyOf": [core, ...]}`` (two or more branches, alone),
``{"enum": [value, ...]}`` (alone: the exact values, each valid against the rest of the schema
it came from), or a dict of these keywords, all of which hold at once:

* ``type``: a string or a list; absent means every JSON type. ``number`` includes integers.
* numbers: at most one lower bound (``minimum`` or ``exclusiveMinimum``) and one upper bound;
  for integers they are inclusive ints, and ``multipleOf`` is a positive int (> 1).
* strings: ``minLength``, ``maxLength``, ``pattern``, ``format``, and ``allOf`` holding only
  ``{"pattern": ...}`` or ``{"format": ...}`` dicts, the further regexes a string must match.
* arrays: ``prefixItems``, ``items``, ``minItems``, ``maxItems``.
* objects: ``properties`` (every ``required`` name is declared; a declared name's schema already
  includes the ``patternProperties`` it matches), ``required``, ``patternProperties``,
  ``additionalProperties``, ``minProperties``, ``maxProperties``.
* ``not``: ``{"enum": [...]}``, values excluded.

There is no ``$ref``, ``allOf`` of schemas, ``oneOf`` or ``dependentRequired``: they were resolved
into these by conjunction (:meth:`.schema_algebra.Algebra.conj`), keyword by keyword. A keyword that only concerns
types the schema excludes is dropped, so every kept keyword constrains something.

This module holds the vocabulary of that form (types, keyword groups, limits), JSON value
equality (:func:`value_key`), bounds and string lengths; :mod:`.schema_algebra` the operations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from tooldec.automata.regex import fsm_of, length_range

__all__ = [
    "ALL_TYPES", "KIND_KEYS", "MAX_BRANCHES", "MAX_NODES", "Schema", "dedupe", "has_number", "is_writable", "kinds",
    "lengths_meet", "lower_bound", "regex_items", "set_regexes", "tighter", "union_by_type", "upper_bound", "value_key",
]

Schema = dict[str, Any] | bool

ALL_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
_NUMBER_KEYS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format", "allOf")
_ARRAY_KEYS = ("prefixItems", "items", "minItems", "maxItems")
_OBJECT_KEYS = ("properties", "required", "patternProperties", "additionalProperties", "minProperties",
                "maxProperties")
KIND_KEYS = {"number": _NUMBER_KEYS, "string": _STRING_KEYS, "array": _ARRAY_KEYS, "object": _OBJECT_KEYS}

MAX_BRANCHES = 64
"""An ``anyOf`` (after distributing conjunctions over it) may not have more branches."""
MAX_NODES = 20_000
"""A normalized schema (recursion unrolled) may not have more subschemas."""


def kinds(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a core dict allows, ``integer`` listed apart when only integers are."""
    t = schema.get("type")
    if t is None:
        return [k for k in ALL_TYPES if k != "integer"]
    return [t] if isinstance(t, str) else list(t)


def has_number(ks: Iterable[str]) -> bool:
    return any(k in ("number", "integer") for k in ks)


def value_key(value: Any) -> Any:
    """A hashable key under which two JSON values are equal exactly when JSON Schema says so
    (``1 == 1.0``, ``true != 1``, objects compared without order)."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("num", Fraction(value))
    if isinstance(value, float):
        return ("num", Fraction(value)) if math.isfinite(value) else ("num", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("arr", tuple(value_key(v) for v in value))
    if isinstance(value, Mapping):
        return ("obj", frozenset((k, value_key(v)) for k, v in value.items()))
    return ("other", repr(value))


def is_writable(value: Any) -> bool:
    """Whether the grammar can write ``value``: finite numbers, strings without lone surrogates."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return all(is_writable(v) for v in value)
    if isinstance(value, Mapping):
        return all(is_writable(k) and is_writable(v) for k, v in value.items())
    return True


def dedupe(values: Iterable[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for v in values:
        key = value_key(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def regex_items(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (keyword, value) regex constraints on a string: pattern, format, then the allOf extras."""
    out = [(k, schema[k]) for k in ("pattern", "format") if k in schema]
    out += [next(iter(extra.items())) for extra in schema.get("allOf", [])]
    return list(dict.fromkeys(out))


def set_regexes(out: dict[str, Any], items: list[tuple[str, str]]) -> None:
    for key in ("pattern", "format", "allOf"):
        out.pop(key, None)
    extras = []
    for key, value in items:
        if key not in out:
            out[key] = value
        else:
            extras.append({key: value})
    if extras:
        out["allOf"] = extras


def lower_bound(schema: Mapping[str, Any]) -> tuple[Any, bool] | None:
    """The tightest lower bound (value, exclusive) of ``minimum`` and ``exclusiveMinimum``."""
    return tighter((schema["minimum"], False) if "minimum" in schema else None,
                   (schema["exclusiveMinimum"], True) if "exclusiveMinimum" in schema else None, lower=True)


def upper_bound(schema: Mapping[str, Any]) -> tuple[Any, bool] | None:
    """The tightest upper bound (value, exclusive) of ``maximum`` and ``exclusiveMaximum``."""
    return tighter((schema["maximum"], False) if "maximum" in schema else None,
                   (schema["exclusiveMaximum"], True) if "exclusiveMaximum" in schema else None, lower=False)


def tighter(a: tuple[Any, bool] | None, b: tuple[Any, bool] | None, lower: bool) -> tuple[Any, bool] | None:
    if a is None or b is None:
        return a if b is None else b
    if a[0] == b[0]:
        return a if a[1] else b
    return (a if a[0] > b[0] else b) if lower else (a if a[0] < b[0] else b)


def lengths_meet(regexes: tuple[str, ...], low: int, high: int | None) -> bool:
    """Whether some string fully matching ``regexes`` has ``low`` to ``high`` characters."""
    fsm = fsm_of(regexes)
    found = length_range(fsm)
    if found is None:
        return False
    fewest, most = found
    if fewest >= low and (high is None or (most is not None and most <= high)):
        return True
    if (high is not None and fewest > high) or (most is not None and most < low):
        return False
    states: frozenset[Any] = frozenset([fsm.initial])
    seen: set[frozenset[Any]] = set()
    length = 0
    while states:  # the set of states after exactly `length` characters
        if length >= low:
            if states & set(fsm.finals):
                return True
            if states in seen:
                return False
            seen.add(states)
        if high is not None and length >= high:
            return False
        states = frozenset(t for s in states for t in fsm.map.get(s, {}).values())
        length += 1
    return False


def union_by_type(branches: list[Schema]) -> Schema:
    """``anyOf`` branches of pairwise different types are one schema with a type list (each kept
    keyword concerns only its own type), as ``{"type": ["string", "null"]}``; else the ``anyOf``."""
    seen: list[str] = []
    merged: dict[str, Any] = {}
    for branch in branches:
        if not isinstance(branch, dict) or "type" not in branch or "enum" in branch or "not" in branch \
                or "anyOf" in branch:
            return {"anyOf": branches}
        ks = kinds(branch)
        if any(k in seen or (k in ("number", "integer") and has_number(seen)) for k in ks):
            return {"anyOf": branches}
        seen += ks
        merged.update({k: v for k, v in branch.items() if k != "type"})
    return {"type": seen, **merged}
