"""Normalize a tool's JSON Schema to the exact subset the argument automaton enforces.

This module is the only judge of what a schema means and of what tooldec refuses. The contract:

* Anything :func:`normalize_schema` accepts, the automaton compiler
  (:mod:`tooldec.automata.json_schema`) compiles without raising, within bounded size.
* Every instance that automaton admits validates with ``jsonschema`` (Draft 2020-12, format
  checker on, the format packages installed) against the schema *as the user wrote it*, not
  only against the normalized copy. The normalized copy accepts a subset of what the original
  accepts (the documented restrictions below), never more.
* Anything unsatisfiable (within the bounds below) raises :class:`InvalidSchemaError`; anything
  that constrains values in a way tooldec cannot write exactly raises
  :class:`UnsupportedSchemaError`; anything too large raises :class:`SchemaTooComplexError`.
  Each names the tool, the JSON pointer and (for the last two) the keyword. After registration
  no schema error can surface while decoding.

How: a schema's keywords are the conjunction of all of them (2019-09+ semantics, ``$ref``
siblings included). ``allOf`` branches, ``$ref`` targets and the sibling keywords are intersected
keyword by keyword (:class:`~tooldec.tools.schema_algebra.Algebra`): bounds tightened, types
intersected, enums filtered by the rest of the schema, ``additionalProperties`` of one branch
applied to the keys of the others. ``anyOf`` has the rest of its schema distributed into every
branch; ``oneOf`` becomes an ``anyOf`` whose every value matches exactly one branch as written
(checked against a *wide* reading of the other branches, a superset of what each accepts): the
branches themselves when no two can match one value (told apart by type, const/enum, numeric or
length ranges, regexes, or a required key), else each branch with ways of violating the others
(:mod:`.schema_outside`). A branch none of whose values matches it alone is dropped; one for
which tooldec finds no such value it can write is refused. ``dependentRequired``,
``dependencies`` and ``dependentSchemas`` become an ``anyOf`` per key (absent, or present with
its dependents); ``not`` is supported for a type, a const/enum, ``required`` keys, boolean
schemas and ``anyOf`` of those. References are resolved by one resolver
(:mod:`tooldec.automata.pointers`) and unrolled: one ``$ref`` may be entered at most
``MAX_REF_DEPTH`` times inside its own expansion (a longer recursion is cut, as if ``false``);
chains of distinct references have no limit. The output (see :mod:`.schema_algebra` for its
exact form) has no ``$ref``, ``$defs`` or combinator other than ``anyOf``.

Documented restrictions (the grammar writes a subset of the valid values): an overlapping
``oneOf`` writes the values of each branch that one of its ways out of the others describes (at
most four per branch); a schema without
``type`` whose keywords concern only some types (``minLength``, ``properties``, ...) allows only
those types; ``number`` with ``multipleOf`` is written as integers; OpenAPI's ``nullable`` is read
only for tools from OpenAPI 3.0 (``openapi=True``). Dialect quirks are mapped (BFCL ``dict``,
``float``, ``tuple``, ``any``; draft-4 ``items`` lists). Annotations and unknown keywords are
dropped: they constrain nothing. Formats ``jsonschema`` never checks (``int32``, ``password``)
constrain nothing either, and are dropped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, cast

import interegular
from jsonschema import Draft202012Validator

from tooldec.automata.pointers import MISSING, join, ref_tokens, resolve_ref
from tooldec.automata.regex import (
    CHECKED_FORMATS,
    FORMAT_PATTERNS,
    anchored,
    fsm_of,
    split_pattern_anchors,
)
from tooldec.errors import (
    InvalidSchemaError,
    SchemaTooComplexError,
    UnsupportedSchemaError,
)
from tooldec.tools.schema_algebra import (
    ALL_TYPES,
    KIND_KEYS,
    Algebra,
    Schema,
    kinds,
    value_key,
)
from tooldec.tools.schema_outside import exclusive_branches
from tooldec.tools.schema_size import check_size

__all__ = [
    "ANNOTATION_KEYWORDS",
    "MAX_DEPTH",
    "MAX_REF_DEPTH",
    "SUPPORTED_FORMATS",
    "SUPPORTED_KEYWORDS",
    "UNSUPPORTED_KEYWORDS",
    "normalize_any_schema",
    "normalize_schema",
    "split_pattern_anchors",
]

MAX_REF_DEPTH = 4
"""How many times one ``$ref`` may be entered inside its own expansion (recursion depth)."""
MAX_DEPTH = 48
"""How deeply subschemas may nest (in the schema as written, and once references are unrolled)."""

SUPPORTED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "const", "anyOf", "oneOf",
    "allOf", "not", "$ref", "$defs", "definitions", "items", "prefixItems", "additionalItems", "minItems",
    "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "patternProperties", "minProperties",
    "maxProperties", "dependentRequired", "dependencies", "dependentSchemas",
})
"""Keywords that are read (some values of them are still refused, with the reason)."""

#: JSON Schema keywords that carry no constraint on values; they are dropped.
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "contentEncoding", "contentMediaType", "contentSchema",
    "$dynamicAnchor", "$recursiveAnchor", "$vocabulary",
})

_REMOVE = "remove it or enforce it in the tool"
#: Keywords that constrain values but that the compiler cannot enforce, with what to do instead.
UNSUPPORTED_KEYWORDS: Mapping[str, str] = {
    **{k: f"conditionals cannot be enforced while decoding; {_REMOVE}" for k in ("if", "then", "else")},
    "propertyNames": f"constraints on all property names cannot be enforced while decoding; {_REMOVE}",
    **{k: f"'contains' constraints cannot be enforced while decoding; {_REMOVE}"
       for k in ("contains", "minContains", "maxContains")},
    **{k: f"'unevaluated' keywords need annotation tracking tooldec does not do; {_REMOVE}"
       for k in ("unevaluatedProperties", "unevaluatedItems")},
    **{k: "dynamic references are not supported; use a local '$ref' to '#/$defs/...'"
       for k in ("$dynamicRef", "$recursiveRef")},
}

SUPPORTED_FORMATS = frozenset(FORMAT_PATTERNS)
"""String formats written exactly as ``jsonschema``'s checker reads them."""

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


def normalize_schema(schema: Mapping[str, Any], *, tool: str, openapi: bool = False) -> dict[str, Any]:
    """Return the normalized copy of a tool's parameter schema (an object schema).

    Args:
        schema: The parameters as given (JSON Schema, possibly in a BFCL or OpenAPI dialect).
        tool: The tool's name, for error messages.
        openapi: The schema comes from an OpenAPI 3.0 document: ``nullable: true`` adds ``null``
            and a boolean ``exclusiveMinimum``/``exclusiveMaximum`` makes its bound exclusive.

    Returns:
        A new dict whose values are all objects (``"type": "object"``, or an ``anyOf`` of objects).

    Raises:
        UnsupportedSchemaError: A keyword (or keyword value) the compiler cannot enforce.
        SchemaTooComplexError: A schema whose automaton would exceed tooldec's size bounds.
        InvalidSchemaError: Not an object schema, not valid JSON Schema, or no value satisfies it.
    """
    if not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"parameters must be an object schema, got {type(schema).__name__}", tool=tool)
    out = _normalize(schema, tool, openapi=openapi)
    branches = out["anyOf"] if isinstance(out, dict) and set(out) == {"anyOf"} else [out]
    if not all(isinstance(b, dict) and kinds(b) == ["object"] for b in branches):
        if out is True and not {"type", "properties"} & set(schema):
            found = "neither 'type' nor 'properties'"
        elif isinstance(out, dict) and "type" in out:
            found = f"type {out['type']!r}"
        else:
            found = "a schema that allows other values than objects"
        raise InvalidSchemaError(f"parameters must be an object schema (type 'object'), found {found}", tool=tool)
    return cast(dict[str, Any], out)


def normalize_any_schema(schema: Any, *, tool: str | None = None, openapi: bool = False) -> Schema:
    """Normalize any JSON Schema, not only an object one (for schema corpora and nested use)."""
    if schema is False:
        raise InvalidSchemaError("no value satisfies this schema (the schema is false)", tool=tool)
    if schema is True:
        return True
    if not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", tool=tool)
    return _normalize(schema, tool, openapi=openapi)


def _normalize(schema: Mapping[str, Any], tool: str | None, *, openapi: bool) -> Schema:
    _check_nesting(schema, tool)
    reader = _Reader(schema, tool, openapi)
    out = reader.read(schema, "", (), 0)
    if out is False:
        pointer, reason = reader.algebra.reasons[0] if reader.algebra.reasons else ("", "the schema is false")
        raise InvalidSchemaError(f"no value satisfies this schema ({reason})", tool=tool, pointer=pointer)
    check_size(out, reader.algebra)
    return cast(Schema, _unshared(out))


def _check_nesting(schema: Any, tool: str | None) -> None:
    """Refuse documents nested deeper than the recursive passes can go (before they start).

    Each entry keeps its parent and key, and the JSON pointer is spelled only for the error:
    building one per node was a third of a typical tool's registration.
    """
    Entry = tuple[Any, int, Any]  # (node, depth, (parent entry, key) or None)
    stack: list[Entry] = [(schema, 0, None)]
    while stack:
        entry = stack.pop()
        node, depth, _ = entry
        if depth > 2 * MAX_DEPTH:
            tokens: list[str | int] = []
            link = entry[2]
            while link is not None:
                tokens.append(link[1] if isinstance(link[1], int) else str(link[1]))
                link = link[0][2]
            ptr = join("", *reversed(tokens))
            raise SchemaTooComplexError(
                f"the schema nests deeper than {MAX_DEPTH} subschemas", tool=tool, pointer=ptr,
                keyword=ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
        if isinstance(node, dict):
            stack.extend([(v, depth + 1, (entry, k)) for k, v in node.items()])
        elif isinstance(node, list):
            stack.extend([(v, depth + 1, (entry, i)) for i, v in enumerate(node)])
        elif isinstance(node, Mapping):
            stack.extend([(v, depth + 1, (entry, k)) for k, v in node.items()])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: Any) -> bool:
    return _is_number(value) and value >= 0 and float(value).is_integer()


class _Reader:
    """Reads the schema as written into core form, keyword by keyword (see the module docstring)."""

    def __init__(self, root: Mapping[str, Any], tool: str | None, openapi: bool) -> None:
        self.root = root
        self.tool = tool
        self.openapi = openapi
        self.algebra = Algebra(tool, self.validator, self.matches)
        self.wide = False  # reading a superset of the values instead (see ``wide``)
        self.memos: dict[bool, dict[tuple[str, ...], Schema]] = {False: {}, True: {}}  # by self.wide
        self.cyclic: set[tuple[str, ...]] | None = None

    def invalid(self, message: str, pointer: str) -> InvalidSchemaError:
        return InvalidSchemaError(message, tool=self.tool, pointer=pointer)

    def unsupported(self, message: str, pointer: str, keyword: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    @staticmethod
    def validator(schema: Schema) -> Draft202012Validator:
        return Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)

    @staticmethod
    def matches(pattern: str, name: str) -> bool:
        return re.search(pattern, name) is not None  # what jsonschema does for patternProperties

    # -- one subschema ------------------------------------------------------------------------

    def read(self, node: Any, ptr: str, stack: tuple[tuple[str, ...], ...], depth: int) -> Schema:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise self.invalid(f"not a valid JSON Schema (draft 2020-12): a schema must be an object or a"
                               f" boolean, got {type(node).__name__}", ptr)
        if depth > MAX_DEPTH:
            raise SchemaTooComplexError(f"subschemas nest deeper than {MAX_DEPTH} levels once references are"
                                        " unrolled", tool=self.tool, pointer=ptr, keyword="$ref")
        own: dict[str, Any] = {}
        parts: list[Schema] = []
        one_of: tuple[list[Any], list[Schema], tuple[tuple[str, ...], ...], int] | None = None
        for key, value in node.items():
            kp = join(ptr, key)
            if key in UNSUPPORTED_KEYWORDS:
                raise self.unsupported(UNSUPPORTED_KEYWORDS[key], kp, key)
            if key == "$ref":
                parts.append(self.ref(value, kp, stack, depth))
            elif key == "allOf":
                parts.extend(self.read(sub, join(kp, i), stack, depth + 1) for i, sub in enumerate(self.list_of(value, kp)))
            elif key == "anyOf":
                branches = [self.read(sub, join(kp, i), stack, depth + 1) for i, sub in enumerate(self.list_of(value, kp))]
                parts.append(self.algebra.any_of(branches, kp))
            elif key == "oneOf":
                raw = self.list_of(value, kp)
                one_of = raw, [self.read(sub, join(kp, i), stack, depth + 1) for i, sub in enumerate(raw)], stack, depth
            elif key == "not":
                parts.append(self.negate(value, kp))
            elif key in ("dependentRequired", "dependencies", "dependentSchemas"):
                parts.extend(self.dependencies(key, value, kp, stack, depth))
            else:
                self.keyword(key, value, kp, node, own, stack, depth)
        if node.get("nullable") is True and self.openapi and "type" in own and "null" not in own["type"]:
            own["type"] = [*own["type"], "null"]
        if "type" not in own and not self.wide:
            inferred = [k for k in ("number", "string", "array", "object") if set(own) & set(KIND_KEYS[k])]
            if inferred:
                own["type"] = inferred
        self.check_written(own, ptr)
        result = self.algebra.canonical(own, ptr) if own else True
        for part in parts:
            result = self.algebra.conj(result, part, ptr)
        if one_of is not None:
            result = self.one_of(result, *one_of, join(ptr, "oneOf"))
        return result

    def keyword(self, key: str, value: Any, kp: str, node: Mapping[str, Any], own: dict[str, Any],
                stack: tuple[tuple[str, ...], ...], depth: int) -> None:
        """One plain keyword into ``own`` (validated; subschemas read recursively)."""
        if key == "type":
            types = self.type(value, kp)
            if types is not None:
                own["type"] = types
        elif key in ("enum", "const"):
            values = [value] if key == "const" else value
            if key == "enum" and not isinstance(value, list):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): 'enum' must be an array", kp)
            if key == "enum" and not value:
                raise self.invalid("'enum' is empty, so no value is allowed", kp)
            if "enum" in own:
                keys = {value_key(v) for v in values}
                values = [v for v in own["enum"] if value_key(v) in keys]
            own["enum"] = list(values)
        elif key in _COUNTS:
            if not _is_count(value):
                raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be a non-negative integer", kp)
            own[key] = int(value)
        elif key in _BOUNDS:
            if isinstance(value, bool) and key.startswith("exclusive"):
                if self.openapi:  # OpenAPI 3.0: the bound of minimum/maximum is exclusive
                    plain = "minimum" if key == "exclusiveMinimum" else "maximum"
                    if value and _is_number(node.get(plain)):
                        own[key] = node[plain]
                    return
                raise self.unsupported(
                    f"a boolean {key} is draft-4 syntax; write '{key}': <number> instead of"
                    f" '{'minimum' if key == 'exclusiveMinimum' else 'maximum'}' plus '{key}': true", kp, key)
            if not _is_number(value):
                raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be a number", kp)
            if key in own:  # an OpenAPI exclusive bound already put here is tighter
                return
            own[key] = int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**63 else value
        elif key == "multipleOf":
            if not _is_number(value) or value <= 0:
                raise self.invalid("not a valid JSON Schema (draft 2020-12): multipleOf must be a positive number", kp)
            if not float(value).is_integer():
                raise self.unsupported(f"multipleOf {value!r}: only whole divisors can be enforced exactly (binary"
                                       f" floats make other multiples inexact); {_REMOVE}", kp, key)
            own[key] = int(value)
        elif key == "pattern":
            own[key] = self.pattern(value, kp)
        elif key == "format":
            if not isinstance(value, str):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): format must be a string", kp)
            if value in FORMAT_PATTERNS:
                own[key] = value
            elif value in CHECKED_FORMATS:
                raise self.unsupported(
                    f"format {value!r} is not supported (supported: {', '.join(sorted(FORMAT_PATTERNS))});"
                    " remove it, use a 'pattern', or check it in the tool", kp, key)
        elif key in ("properties", "patternProperties"):
            if not isinstance(value, Mapping):
                raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be an object", kp)
            if key == "patternProperties":
                for pattern in value:
                    self.pattern(pattern, join(kp, pattern))
            own[key] = {name: self.read(sub, join(kp, name), stack, depth + 1) for name, sub in value.items()}
        elif key == "additionalProperties":
            own[key] = self.read(value, kp, stack, depth + 1)
        elif key == "required":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(set(value)) < len(value):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): required must be an array of unique strings", kp)
            if value:
                own[key] = list(value)
        elif key == "items":
            if isinstance(value, list):  # draft-4 tuple form
                own["prefixItems"] = [self.read(v, join(kp, i), stack, depth + 1) for i, v in enumerate(value)]
                if "additionalItems" in node:
                    own["items"] = self.read(node["additionalItems"], join(kp[: -len("/items")], "additionalItems"),
                                             stack, depth + 1)
            else:
                own["items"] = self.read(value, kp, stack, depth + 1)
        elif key == "prefixItems":
            own[key] = [self.read(v, join(kp, i), stack, depth + 1) for i, v in enumerate(self.list_of(value, kp))]
        elif key == "uniqueItems":
            if not isinstance(value, bool):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): uniqueItems must be a boolean", kp)
            types = self.type(node.get("type"), kp) if "type" in node else None
            if value and not (types is not None and "array" not in types) and not (
                    _is_count(node.get("maxItems")) and node["maxItems"] <= 1):
                raise self.unsupported(f"uniqueness cannot be enforced while decoding; {_REMOVE}", kp, key)

    def check_written(self, own: Mapping[str, Any], ptr: str) -> None:
        """Contradictions inside one schema as written are mistakes: report them as such."""
        for lo, hi in (("minLength", "maxLength"), ("minItems", "maxItems"), ("minProperties", "maxProperties")):
            if lo in own and hi in own and own[lo] > own[hi]:
                raise self.invalid(f"{lo} {own[lo]} > {hi} {own[hi]}, so no value is allowed", join(ptr, lo))
        lows = [(own[k], k == "exclusiveMinimum") for k in ("minimum", "exclusiveMinimum") if k in own]
        highs = [(own[k], k == "exclusiveMaximum") for k in ("maximum", "exclusiveMaximum") if k in own]
        if lows and highs and own.get("type") is not None and _numeric_only(own["type"]):
            integer = "number" not in own["type"]
            lo = max((math.floor(v) + 1 if x else math.ceil(v)) if integer else v for v, x in lows)
            hi = min((math.ceil(v) - 1 if x else math.floor(v)) if integer else v for v, x in highs)
            strict = not integer and (any(x for v, x in lows if v == lo) or any(x for v, x in highs if v == hi))
            if lo > hi or (lo == hi and strict):
                bounds = ", ".join(f"{k} {own[k]}" for k in _BOUNDS if k in own)
                raise self.invalid(f"the numeric range is empty ({bounds})", ptr or "/")

    def type(self, value: Any, kp: str) -> list[str] | None:
        """The listed types (BFCL names mapped), ``None`` for any type."""
        listed = [value] if isinstance(value, str) else value
        if not isinstance(listed, list) or not listed or not all(isinstance(t, str) for t in listed):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): type must be a type name or a non-empty"
                               " array of them", kp)
        mapped: list[str] = [_BFCL_TYPES.get(t) or t for t in listed]
        if "any" in mapped:
            return None
        bad = [t for t in mapped if t not in ALL_TYPES]
        if bad:
            raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {bad[0]!r} is not a type", kp)
        return list(dict.fromkeys(mapped))

    def list_of(self, value: Any, kp: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {kp.rsplit('/', 1)[-1]} must be a"
                               " non-empty array of schemas", kp)
        return value

    def pattern(self, pattern: Any, ptr: str) -> str:
        """Invalid if no regex at all; unsupported if it cannot be compiled exactly.

        ``jsonschema`` checks patterns with Python's ``re`` (the judge of validity here), and the
        automaton is built with ``interegular``: a pattern must pass both.
        """
        if not isinstance(pattern, str):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): pattern must be a string", ptr)
        try:
            re.compile(pattern)
        except re.error as err:
            raise self.invalid(f"pattern {pattern!r} is not a regular expression: {err}", ptr) from None
        try:
            fsm_of((anchored(pattern),))
        except (interegular.patterns.Unsupported, interegular.patterns.InvalidSyntax, ValueError, KeyError) as err:
            raise self.unsupported(f"pattern {pattern!r} cannot be compiled ({type(err).__name__}: {err});"
                                   f" simplify it or enforce it in the tool", ptr, "pattern") from None
        return pattern

    # -- references and combinators -----------------------------------------------------------

    def ref(self, value: Any, kp: str, stack: tuple[tuple[str, ...], ...], depth: int) -> Schema:
        if not isinstance(value, str):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): $ref must be a string", kp)
        tokens = ref_tokens(value)
        if tokens is None:
            what = "anchor references are not supported" if value.startswith("#") else \
                "only local references ('#/...') are supported"
            raise self.unsupported(f"{value!r}: {what}; inline the referenced schema or put it under '$defs'", kp, "$ref")
        target = resolve_ref(self.root, value)
        if target is MISSING:
            raise self.invalid(f"$ref {value!r} has no target", kp)
        if not isinstance(target, (Mapping, bool)):
            raise self.invalid(f"$ref {value!r} does not point to a schema", kp)
        key = tuple(tokens)
        if stack.count(key) >= MAX_REF_DEPTH:
            if self.wide:
                return True
            return self.algebra.empty(kp, f"$ref {value!r} recurses deeper than MAX_REF_DEPTH={MAX_REF_DEPTH}")
        memo = self.memos[self.wide]
        if key in memo:
            return memo[key]
        out = self.read(target, join("", *tokens), stack + (key,), depth + 1)
        if not self.is_cyclic(key):  # its expansion does not depend on the references above it
            memo[key] = out
        return out

    def is_cyclic(self, key: tuple[str, ...]) -> bool:
        """Whether the reference ``key`` can reach itself (through other references)."""
        if self.cyclic is None:
            self.cyclic = _cyclic_refs(self.root)
        return key in self.cyclic

    def one_of(self, rest: Schema, raw: list[Any], branches: list[Schema], stack: tuple[tuple[str, ...], ...],
               depth: int, ptr: str) -> Schema:
        """``oneOf`` as an ``anyOf`` of branches that no written value can take together.

        A written value comes from one branch (with the rest of the schema applied) and must be
        rejected by every other branch *as written*: it is checked against each other branch's
        wide reading (:meth:`wide_branches`, a superset of what that branch accepts) with the rest
        applied (the value meets the rest anyway). In turn: the
        branches as they are; each object branch barred from the keys the others require; each
        branch with the exact negation of the others (type, const/enum, required keys); each
        branch with, for every other, a way of violating it (:func:`.schema_outside.outside`).
        """
        if self.wide:  # a superset: any branch
            return self.algebra.any_of([self.algebra.conj(rest, b, join(ptr, i)) for i, b in enumerate(branches)],
                                       ptr, "oneOf")
        merged = [self.algebra.conj(rest, b, join(ptr, i)) for i, b in enumerate(branches)]
        live = [(i, m) for i, m in enumerate(merged) if m is not False]
        mark = len(self.algebra.reasons)
        wide = [self.algebra.conj(rest, w, join(ptr, j)) for j, w in enumerate(self.wide_branches(raw, stack, depth, ptr))]
        del self.algebra.reasons[mark:]  # a branch the rest excludes is no news

        def alone(i: int, schema: Schema) -> bool:  # no value of ``schema`` matches another branch
            return all(self.algebra.disjoint(schema, w, ptr) for j, w in enumerate(wide) if j != i)

        if all(alone(i, m) for i, m in live):
            return self.algebra.any_of([m for _, m in live], ptr, "oneOf")
        needs = [self.algebra.required_keys(w) for w in wide]
        closed = [(i, self.algebra.without(m, set().union(*(needs[j] for j in range(len(wide)) if j != i)) - needs[i],
                                           join(ptr, i))) for i, m in live]
        if all(alone(i, c) for i, c in closed):
            return self.algebra.any_of([c for _, c in closed], ptr, "oneOf")  # what each writes matches it alone
        try:
            negations = [self.negate(b, join(ptr, i)) for i, b in enumerate(raw)]
        except UnsupportedSchemaError:
            return exclusive_branches(live, wide, self.algebra, ptr)
        exclusive = [self.algebra.conj_all([m, *(n for k, n in enumerate(negations) if k != i)], join(ptr, i))
                     for i, m in live]
        return self.algebra.any_of(exclusive, ptr, "oneOf")

    def wide_branches(self, raw: list[Any], stack: tuple[tuple[str, ...], ...], depth: int, ptr: str) -> list[Schema]:
        """Each branch read *wide*: a superset of the values it accepts as written (no type inferred
        for untyped schemas, a recursion cut as ``true``, a nested ``oneOf`` as ``anyOf``)."""
        saved, mark = self.wide, len(self.algebra.reasons)
        self.wide = True
        try:
            return [self.read(sub, join(ptr, i), stack, depth + 1) for i, sub in enumerate(raw)]
        finally:
            self.wide = saved
            del self.algebra.reasons[mark:]

    def negate(self, value: Any, kp: str) -> Schema:
        """``not`` of a type, const/enum, required keys, boolean, or anyOf of those."""
        if isinstance(value, bool):
            return not value
        if not isinstance(value, Mapping):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): not must be a schema", kp)
        keys = {k for k in value if k not in ANNOTATION_KEYWORDS and k in SUPPORTED_KEYWORDS | set(UNSUPPORTED_KEYWORDS)}
        if not keys:
            return False
        if keys == {"type"}:
            types = self.type(value["type"], join(kp, "type"))
            if types is None:
                return False
            left = [k for k in ALL_TYPES if k != "integer" and k not in types and not (k == "number" and "integer" in types)]
            if "integer" in types and "number" not in types:  # non-integral numbers stay
                return self.unsupported_not(kp, "'not' of type integer (numbers that are not whole) cannot be written exactly")
            return self.algebra.canonical({"type": left}, kp) if left else False
        if keys in ({"enum"}, {"const"}):
            values = [value["const"]] if "const" in value else value["enum"]
            if not isinstance(values, list):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): 'enum' must be an array", join(kp, "enum"))
            if any(isinstance(v, (list, Mapping)) for v in values):
                return self.unsupported_not(kp, "'not' of an array or object constant cannot be written exactly")
            return {"not": {"enum": list(values)}}
        if keys == {"required"}:
            names = value["required"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise self.invalid("not a valid JSON Schema (draft 2020-12): required must be an array of strings", kp)
            if not names:
                return False
            return self.algebra.any_of([{"type": "object", "properties": {n: False}} for n in names], kp, "not")
        if keys == {"anyOf"}:
            return self.algebra.conj_all([self.negate(b, join(kp, "anyOf", i))
                                          for i, b in enumerate(self.list_of(value["anyOf"], join(kp, "anyOf")))], kp)
        return self.unsupported_not(kp, "only 'not' of a type, a const or enum, required keys or an anyOf of those"
                                        " can be enforced while decoding")

    def unsupported_not(self, kp: str, why: str) -> Schema:
        raise self.unsupported(f"{why}; {_REMOVE}", kp, "not")

    def dependencies(self, key: str, value: Any, kp: str, stack: tuple[tuple[str, ...], ...],
                     depth: int) -> list[Schema]:
        """Each dependency as ``anyOf``: the key absent, or present with what it needs."""
        if not isinstance(value, Mapping):
            raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be an object", kp)
        out: list[Schema] = []
        for name, need in value.items():
            np = join(kp, name)
            absent: dict[str, Any] = {"type": "object", "properties": {name: False}}
            others = ["null", "boolean", "number", "string", "array"]
            if isinstance(need, list) and key != "dependentSchemas":
                if not all(isinstance(n, str) for n in need):
                    raise self.invalid("not a valid JSON Schema (draft 2020-12): dependencies must list property names", np)
                present: Schema = self.algebra.canonical(
                    {"type": "object", "required": list(dict.fromkeys([name, *need]))}, np)
            elif key != "dependentRequired":
                present = self.algebra.conj(
                    self.algebra.canonical({"type": "object", "required": [name]}, np),
                    self.read(need, np, stack, depth + 1), np)
            else:
                raise self.invalid("not a valid JSON Schema (draft 2020-12): dependentRequired values must be arrays", np)
            out.append(self.algebra.any_of([{"type": others}, self.algebra.canonical(absent, np), present], np, key))
        return out


def _numeric_only(types: Any) -> bool:
    listed = [types] if isinstance(types, str) else types
    return all(t in ("number", "integer") for t in listed)


def _cyclic_refs(root: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """The references that can reach themselves, found on the graph "target of A contains B"."""
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    pending = [(), *_refs_in(root)]
    while pending:
        key = pending.pop()
        if key in graph:
            continue
        target = resolve_ref(root, "#" + join("", *key)) if key else root
        graph[key] = set(_refs_in(target)) if target is not MISSING else set()
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


def _refs_in(node: Any) -> list[tuple[str, ...]]:
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


def _unshared(schema: Any) -> Any:
    """A copy in which no dict or list appears twice (references were expanded by sharing)."""
    if isinstance(schema, dict):
        return {k: _unshared(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_unshared(v) for v in schema]
    return schema
