"""The schema as written, read keyword by keyword into core form (see :mod:`.schema`).

:class:`Reader` validates each keyword of one document, reads subschemas recursively, unrolls references, and
combines what it reads with :class:`.schema_algebra.Algebra` (``allOf``, ``$ref`` siblings, ``anyOf``, ``oneOf``,
``not``, dependencies).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

import interegular
from jsonschema import Draft202012Validator

from tooldec.automata.pattern_syntax import UnenforcedConstruct
from tooldec.automata.pointers import MISSING, join, ref_tokens, resolve_ref
from tooldec.automata.regex import CHECKED_FORMATS, FORMAT_PATTERNS, anchored, fsm_of
from tooldec.automata.regex_fsm import MAX_PATTERN_UNITS, unrolled_units
from tooldec.errors import InvalidSchemaError, SchemaTooComplexError, UnsupportedSchemaError
from tooldec.tools.schema_algebra import Algebra
from tooldec.tools.schema_core import ALL_TYPES, KIND_KEYS, Schema, value_key
from tooldec.tools.schema_keywords import (
    ANNOTATION_KEYWORDS,
    BFCL_TYPES,
    BOUND_KEYWORDS,
    COUNT_KEYWORDS,
    MAX_DEPTH,
    MAX_REF_DEPTH,
    REMOVE_ADVICE,
    SUPPORTED_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
)
from tooldec.tools.schema_outside import exclusive_branches
from tooldec.tools.schema_refs import cyclic_refs

__all__ = ["Reader"]

_FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


MAX_NUMBER_DIGITS = 1000
"""The most digits of an integer in a schema (a bound, a constant): ``10**400`` is read exactly,
but the digit automaton grows with the digits and Python writes no integer of over 4,300."""
MAX_COUNT = 2**63 - 1
"""The largest length or count (the counters are 64-bit)."""


def _is_number(value: Any) -> bool:
    """A JSON number as ``json.loads`` gives it: any int, a finite float (``1e400`` reads as infinity)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_whole(value: int | float) -> bool:
    return isinstance(value, int) or value.is_integer()


def _is_count(value: Any) -> bool:
    return _is_number(value) and value >= 0 and _is_whole(value)


def _long_integer(value: Any) -> int | None:
    """An integer of more than :data:`MAX_NUMBER_DIGITS` digits in ``value`` (a JSON value), if any."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value.bit_length() > MAX_NUMBER_DIGITS * 3.33 else None
    items = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    return next((found for v in items if (found := _long_integer(v)) is not None), None)


def _numeric_only(types: Any) -> bool:
    listed = [types] if isinstance(types, str) else types
    return all(t in ("number", "integer") for t in listed)


class Reader:
    """Reads the schema as written into core form, keyword by keyword (see the module docstring)."""

    def __init__(self, root: Mapping[str, Any], tool: str | None, openapi: bool) -> None:
        self.root = root
        self.tool = tool
        self.openapi = openapi
        self.validators: dict[str, Draft202012Validator] = {}  # by repr (see ``validator``)
        self.algebra = Algebra(tool, self.validator, self.matches)
        self.wide = False  # reading a superset of the values instead (see ``wide``)
        self.memos: dict[bool, dict[tuple[str, ...], Schema]] = {False: {}, True: {}}  # by self.wide
        self.cyclic: set[tuple[str, ...]] | None = None

    def invalid(self, message: str, pointer: str) -> InvalidSchemaError:
        return InvalidSchemaError(message, tool=self.tool, pointer=pointer)

    def unsupported(self, message: str, pointer: str, keyword: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    def validator(self, schema: Schema) -> Draft202012Validator:
        """A validator of ``schema``; a flat one is made once per reading, on a copy (a schema's enums are filtered
        by the same few: GeoJSON has 435 ``type: string``)."""
        if not isinstance(schema, Mapping) or any(isinstance(v, Mapping) for v in schema.values()):
            return Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
        key = repr(schema)
        found = self.validators.get(key)
        if found is None:
            found = self.validators[key] = Draft202012Validator(copy.deepcopy(schema), format_checker=_FORMAT_CHECKER)
        return found

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
            self.check_digits(values, kp, key)
            if key == "enum" and not value:
                raise self.invalid("'enum' is empty, so no value is allowed", kp)
            if "enum" in own:
                keys = {value_key(v) for v in values}
                values = [v for v in own["enum"] if value_key(v) in keys]
            own["enum"] = list(values)
        elif key in COUNT_KEYWORDS:
            if not _is_count(value):
                raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be a non-negative integer", kp)
            if value > MAX_COUNT:
                raise SchemaTooComplexError(f"{key} is above 2**63 - 1, the most a counter holds; no"
                                            " value that long can be written: leave it out", tool=self.tool, pointer=kp,
                                            keyword=key)
            own[key] = int(value)
        elif key in BOUND_KEYWORDS:
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
                raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {key} must be a finite number", kp)
            self.check_digits(value, kp, key)
            if key in own:  # an OpenAPI exclusive bound already put here is tighter
                return
            own[key] = int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**63 else value
        elif key == "multipleOf":
            if not _is_number(value) or value <= 0:
                raise self.invalid("not a valid JSON Schema (draft 2020-12): multipleOf must be a positive finite"
                                   " number", kp)
            if not _is_whole(value):
                raise self.unsupported(f"multipleOf {value!r}: only whole divisors can be enforced exactly (binary"
                                       f" floats make other multiples inexact); {REMOVE_ADVICE}", kp, key)
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
                    self.pattern(pattern, join(kp, pattern), key)
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
                raise self.unsupported(f"uniqueness cannot be enforced while decoding; {REMOVE_ADVICE}", kp, key)

    def check_digits(self, value: Any, kp: str, key: str) -> None:
        """Refuse integers too long to write (see :data:`MAX_NUMBER_DIGITS`)."""
        found = _long_integer(value)
        if found is not None:
            raise SchemaTooComplexError(
                f"an integer of about {int(found.bit_length() * 0.30103) + 1} digits (at most {MAX_NUMBER_DIGITS}):"
                " its digits would be states of the automaton", tool=self.tool, pointer=kp, keyword=key)

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
                bounds = ", ".join(f"{k} {own[k]}" for k in BOUND_KEYWORDS if k in own)
                raise self.invalid(f"the numeric range is empty ({bounds})", ptr or "/")

    def type(self, value: Any, kp: str) -> list[str] | None:
        """The listed types (BFCL names mapped), ``None`` for any type."""
        listed = [value] if isinstance(value, str) else value
        if not isinstance(listed, list) or not listed or not all(isinstance(t, str) for t in listed):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): type must be a type name or a non-empty"
                               " array of them", kp)
        mapped: list[str] = [BFCL_TYPES.get(t) or t for t in listed]
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

    def pattern(self, pattern: Any, ptr: str, keyword: str = "pattern") -> str:
        """Invalid if Python's ``re`` (``jsonschema``'s judge) cannot read it; unsupported if ``interegular``
        cannot, or it holds a construct the automaton would read differently (:mod:`.pattern_syntax`)."""
        if not isinstance(pattern, str):
            raise self.invalid("not a valid JSON Schema (draft 2020-12): pattern must be a string", ptr)
        try:
            re.compile(pattern)
        except re.error as err:
            if re.search(r"\\[pP]\{", pattern):  # ECMA-262's Unicode properties, which ``re`` lacks
                raise self.unsupported(f"pattern {pattern!r} uses a Unicode property escape \\p{{...}}, which is"
                                       " not enforced; list the characters in a class instead", ptr, keyword) from None
            raise self.invalid(f"pattern {pattern!r} is not a regular expression: {err}", ptr) from None
        try:
            units = unrolled_units(anchored(pattern))
            if units <= MAX_PATTERN_UNITS:
                fsm_of((anchored(pattern),))
        except UnenforcedConstruct as err:
            raise self.unsupported(f"pattern {pattern!r} uses {err.construct}, which tooldec does not enforce"
                                   " exactly; rewrite it without that construct or enforce it in the tool",
                                   ptr, keyword) from None
        except (interegular.patterns.Unsupported, interegular.patterns.InvalidSyntax, ValueError, KeyError) as err:
            raise self.unsupported(f"pattern {pattern!r} cannot be compiled ({type(err).__name__}: {err});"
                                   f" simplify it or enforce it in the tool", ptr, keyword) from None
        if units > MAX_PATTERN_UNITS:
            raise SchemaTooComplexError(
                f"pattern {pattern[:80]!r} is {units} character pieces once its bounded repeats are unrolled (at"
                f" most {MAX_PATTERN_UNITS}); for a long string use maxLength/minLength with a pattern such as"
                " '^[a-z]*$' (lengths are counted, not unrolled)", tool=self.tool, pointer=ptr, keyword=keyword)
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
        if self.cyclic is None:
            self.cyclic = cyclic_refs(self.root)
        if key not in self.cyclic:  # its expansion does not depend on the references above it
            memo[key] = out
        return out

    def one_of(self, rest: Schema, raw: list[Any], branches: list[Schema], stack: tuple[tuple[str, ...], ...],
               depth: int, ptr: str) -> Schema:
        """``oneOf`` as an ``anyOf`` of branches no written value can take together, each checked against the
        others' wide reading (:meth:`wide_branches`) with the rest applied. Tried in turn: the branches as they are;
        object branches barred from the keys the others require; the exact negation of the others (type,
        const/enum, required keys); for every other, a way of violating it (:func:`.schema_outside.outside`)."""
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
        """Each branch read *wide*, a superset of what it accepts as written (no type inferred for untyped schemas,
        a recursion cut as ``true``, a nested ``oneOf`` as ``anyOf``)."""
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
        raise self.unsupported(f"{why}; {REMOVE_ADVICE}", kp, "not")

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
