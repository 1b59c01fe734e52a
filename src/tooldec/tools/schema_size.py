"""How large the automaton of a normalized schema will be, checked before anything is compiled.

The estimate follows the compiler (:mod:`tooldec.automata.json_schema`) piece by piece, in NFA
states: a literal costs its bytes, a digit automaton its bounds' digits, a regex its automaton's
transitions, a counted repetition its body once (the cursor carries the count), an object's property once per member count ``minProperties`` or
``maxProperties`` make it track. A schema over :data:`MAX_STATES` is refused with
:class:`SchemaTooComplexError` naming the keyword that contributes most, so that a registered
tool always compiles in bounded time and memory.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from decimal import Decimal
from typing import Any

from tooldec.automata.regex import fsm_char_classes, fsm_of, string_regexes

__all__ = ["MAX_STATES", "PLAIN_ANY", "PLAIN_MEMBER", "PLAIN_NO_PROPERTIES", "PLAIN_OWN", "check_size", "enum_cost", "estimate", "plain_cost"]

MAX_STATES = 60_000
"""The most NFA states a tool's arguments may take (about 12 MB and 0.3 s to prepare)."""

_CHAR = 26  # one string character: raw UTF-8 or any escape
_ANY = 1900  # any JSON value, nested ANY_DEPTH levels (stamped)
_NARROW, _WIDE = 2, 30  # one regex transition on a class of at most 128 code points, or a wider one
_SCALAR = 8
_DIGIT = 12


def estimate(schema: Any) -> tuple[int, Counter[tuple[str, str]]]:
    """The estimated NFA states, and the share of each (pointer, keyword) that multiplies them."""
    shares: Counter[tuple[str, str]] = Counter()
    total = _cost(schema, "", shares)
    return total, shares


def check_size(schema: Any, algebra: Any) -> None:
    """Raise ``SchemaTooComplexError`` (through ``algebra``) if the automaton would be too large."""
    total, shares = estimate(schema)
    if total <= MAX_STATES:
        return
    (pointer, keyword), _ = shares.most_common(1)[0] if shares else (("", "properties"), 0)
    raise algebra.too_complex(
        f"the automaton would need about {total:,} states (at most {MAX_STATES:,}); {keyword!r} here"
        " contributes most: lower it or enforce it in the tool", pointer, keyword)


def plain_cost(schema: dict[str, Any] | bool) -> int:
    """``estimate(schema)[0]`` for a schema :func:`~tooldec.tools.schema_plain.plain_form` wrote,
    without the pointers and shares an error would need: a few times quicker (a test keeps the
    two equal). ``plain_form_cost`` sums the same terms while it writes the form."""
    if schema is True:
        return PLAIN_ANY
    assert isinstance(schema, dict)  # a plain form holds no False
    if "enum" in schema:
        return enum_cost(schema["enum"])
    kind = schema["type"]
    if kind == "object":
        props = schema.get("properties", {})
        own = PLAIN_OWN[kind] + sum(len(name) + PLAIN_MEMBER for name in props)
        return own + sum(plain_cost(sub) for sub in props.values()) if props else own + PLAIN_NO_PROPERTIES
    if kind == "array":
        return PLAIN_OWN[kind] + plain_cost(schema["items"])
    return PLAIN_OWN[kind]


def enum_cost(values: list[Any]) -> int:
    """An ``enum``: each value's JSON bytes, as alternatives."""
    total = 2
    for v in values:
        if type(v) is str and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
            total += len(v) + 3  # written as it is, in quotes
        else:
            total += len(json.dumps(v, ensure_ascii=False).encode()) + 1
    return total


def _repeat(body: int, low: int, high: int | None) -> int:
    """A counted repetition: one copy of the body, whatever the bounds."""
    return body + 4


PLAIN_OWN = {"null": 2 + _SCALAR, "boolean": 2 + _SCALAR, "number": 2 + _DIGIT * 2, "integer": 2 + _DIGIT * 2,
             "string": 2 + _CHAR + 4, "array": 10 + _repeat(0, 0, None), "object": 10}
"""What a node of a plain form adds to :func:`plain_cost` besides its subschemas (an object
also adds ``PLAIN_MEMBER`` and the name's length per property)."""
PLAIN_MEMBER = 6
PLAIN_NO_PROPERTIES = _repeat(_ANY + 100, 0, None) * 2
PLAIN_ANY = _ANY
"""A subschema of annotations only: any value."""
"""An object without properties takes any members."""


def _cost(schema: Any, ptr: str, shares: Counter[tuple[str, str]]) -> int:
    if schema is True:
        return _ANY
    if not isinstance(schema, dict):
        return 2
    if "anyOf" in schema:
        return 2 + sum(_cost(b, f"{ptr}/anyOf/{i}", shares) for i, b in enumerate(schema["anyOf"]))
    if "enum" in schema:
        return enum_cost(schema["enum"])
    kinds = schema.get("type", ["null", "boolean", "object", "array", "number", "string"])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    excluded = len(schema.get("not", {}).get("enum", []))
    total = 2
    for kind in kinds:
        if kind in ("null", "boolean"):
            total += _SCALAR
        elif kind in ("number", "integer"):
            bounds = [k for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema]
            cost = _DIGIT * (sum(_digits(schema[k]) for k in bounds) + 2) * schema.get("multipleOf", 1) * (excluded + 1)
            total += cost
            if "multipleOf" in schema or bounds:
                shares[(ptr, "multipleOf" if "multipleOf" in schema else max(bounds, key=lambda k: _digits(schema[k])))] += cost
        elif kind == "string":
            total += _string(schema, ptr, shares, excluded)
        elif kind == "array":
            total += _array(schema, ptr, shares)
        elif kind == "object":
            total += _object(schema, ptr, shares)
    return total


def _digits(bound: int | float) -> int:
    """The digits a bound's automaton follows: an integer's, or a float's exact decimal (``1e300``
    is 301 digits, ``5e-324`` 324 after the point)."""
    return len(str(abs(bound))) if isinstance(bound, int) else len(format(Decimal(repr(bound)), "f"))


def _string(schema: dict[str, Any], ptr: str, shares: Counter[tuple[str, str]], excluded: int) -> int:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    regexes = string_regexes(schema)
    if not regexes and not excluded:
        cost = _repeat(_CHAR, low, high) if high is not None or low else _CHAR + 4
    else:
        unit = _regex_cost(regexes or (r"[\s\S]*",)) + excluded * 8
        span = 1
        cost = unit * span
    if high is not None or low:
        shares[(ptr, "maxLength" if high is not None else "minLength")] += cost
    return cost


@functools.lru_cache(maxsize=256)
def _regex_cost(regexes: tuple[str, ...]) -> int:
    fsm = fsm_of(regexes)
    classes = fsm_char_classes(fsm)
    width = {symbol: sum(hi - lo + 1 for lo, hi in ranges) for symbol, ranges in classes.items()}
    return sum(_NARROW if width[symbol] <= 128 else _WIDE for moves in fsm.map.values() for symbol in moves) + 4


def _array(schema: dict[str, Any], ptr: str, shares: Counter[tuple[str, str]]) -> int:
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    prefix = schema.get("prefixItems", [])
    cost = sum(_cost(p, f"{ptr}/prefixItems/{i}", shares) for i, p in enumerate(prefix))
    items = schema.get("items", True)
    if items is not False:
        body = _cost(items, f"{ptr}/items", shares)
        more = _repeat(body, max(low - len(prefix), 0), None if high is None else max(high - len(prefix), 0))
        shares[(ptr, "maxItems" if high is not None else "items")] += more
        cost += more
    return cost + 8


def _object(schema: dict[str, Any], ptr: str, shares: Counter[tuple[str, str]]) -> int:
    props = {n: s for n, s in schema.get("properties", {}).items() if s is not False}
    low, high = schema.get("minProperties", 0), schema.get("maxProperties")
    copies = min(len(props), max(low, high or 0)) + 1
    cost = 8
    for name, sub in props.items():
        one = _cost(sub, f"{ptr}/properties/{name}", shares) + len(name) + 6
        cost += one * copies
    if copies > 1:
        shares[(ptr, "maxProperties" if high is not None else "minProperties")] += cost
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    if patterns or (extra is not False and ("additionalProperties" in schema or not props)):
        member = sum(_cost(s, f"{ptr}/patternProperties/{p}", shares) + 200 for p, s in patterns.items())
        if extra is not False:
            member += _cost(extra, f"{ptr}/additionalProperties", shares) + 100 + 4 * len(props)
        more = _repeat(member, 0, high) * 2 * copies
        shares[(ptr, "maxProperties" if high is not None else "additionalProperties")] += more
        cost += more
    return cost
