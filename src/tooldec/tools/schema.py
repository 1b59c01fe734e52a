"""Normalize a tool's JSON Schema to the exact subset the argument automaton enforces.

The automaton compiler reads only the output of :func:`normalize_schema`, so everything a schema
could mean is settled here, once, at registration: dialect quirks are mapped (BFCL ``dict`` /
``float`` / ``tuple`` / ``any``, OpenAPI ``nullable``, draft-4 ``items`` lists), and every keyword
is either kept, dropped, or rejected with a typed error naming the tool, the JSON pointer and the
keyword. Nothing is silently ignored that would let the model produce invalid arguments.

Annotation keywords (:data:`ANNOTATION_KEYWORDS`) and any keyword that is not a JSON Schema keyword
at all (vendor extras such as ``optional``, ``example_value``, ``x-...``) are dropped: JSON Schema
itself ignores unknown keywords and annotations, so they constrain nothing, and the compiler need
not know about them. The tool keeps its original schema for prompts (``Tool.source_parameters``).

The output is a new dict (the input is never modified) in which every subschema is a dict or a
bool, single-element ``type`` lists are written as a string, and integral float bounds (``3.0``)
are written as ints. It is idempotent: normalizing the output again returns an equal dict.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, cast
from urllib.parse import unquote

import interegular
import fastjsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError

__all__ = [
    "ANNOTATION_KEYWORDS",
    "MAX_REF_DEPTH",
    "normalize_any_schema",
    "SUPPORTED_FORMATS",
    "SUPPORTED_KEYWORDS",
    "UNSUPPORTED_KEYWORDS",
    "is_satisfiable",
    "normalize_schema",
    "split_pattern_anchors",
]

#: A ``$ref`` chain longer than this counts as unsatisfiable (it is how recursion is bounded).
MAX_REF_DEPTH = 4

#: Keywords the compiler enforces; they are kept (subschemas normalized recursively).
SUPPORTED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "const", "anyOf", "oneOf",
    "allOf", "$ref", "$defs", "definitions", "items", "prefixItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum",
})

#: JSON Schema keywords that carry no constraint on values; they are dropped. ``$dynamicAnchor``,
#: ``$recursiveAnchor`` and ``$vocabulary`` only matter to dynamic references, which are rejected.
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "contentEncoding", "contentMediaType", "contentSchema",
    "$dynamicAnchor", "$recursiveAnchor", "$vocabulary",
})

_REMOVE = "remove it or enforce it in the tool"
#: Keywords that constrain values but that the compiler cannot enforce, with what to do instead.
UNSUPPORTED_KEYWORDS: Mapping[str, str] = {
    **{k: f"negation and conditionals cannot be enforced while decoding; {_REMOVE}"
       for k in ("not", "if", "then", "else")},
    **{k: f"property dependencies cannot be enforced while decoding; {_REMOVE}"
       for k in ("dependentSchemas", "dependentRequired", "dependencies")},
    **{k: f"constraints on property names or counts cannot be enforced while decoding; {_REMOVE}"
       for k in ("patternProperties", "propertyNames", "minProperties", "maxProperties")},
    **{k: f"'contains' constraints cannot be enforced while decoding; {_REMOVE}"
       for k in ("contains", "minContains", "maxContains")},
    "multipleOf": f"divisibility cannot be enforced while decoding; {_REMOVE}",
    **{k: f"'unevaluated' keywords need annotation tracking tooldec does not do; {_REMOVE}"
       for k in ("unevaluatedProperties", "unevaluatedItems")},
    **{k: "dynamic references are not supported; use a local '$ref' to '#/$defs/...'"
       for k in ("$dynamicRef", "$recursiveRef")},
}

#: String formats the compiler can express (``format`` on a non-string type constrains nothing).
SUPPORTED_FORMATS = frozenset({"date", "time", "date-time", "uuid", "email", "uri"})

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_LISTS = ("prefixItems", "anyOf", "oneOf", "allOf")
_ALLOF_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "$ref", "allOf"})
_MISSING: Any = object()

_NON_NEGATIVE = {"type": "integer", "minimum": 0}
_SCHEMA_ARRAY = {"type": "array", "minItems": 1, "items": {"$ref": "#"}}
_SCHEMA_MAP = {"type": "object", "additionalProperties": {"$ref": "#"}}
_SIMPLE_TYPE = {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]}
#: The draft 2020-12 meta-schema restricted to the kept keywords (the normalized output has no
#: others). Same checks as ``Draft202012Validator.check_schema`` there, without the
#: ``$dynamicRef`` machinery that makes the full meta-schema several times slower to apply.
#: ``pattern`` is checked by ``_Checker.check_pattern``; ``uniqueItems`` only survives when it is
#: not a boolean, which this reports.
_META_SCHEMA = {
    "type": ["object", "boolean"],
    "properties": {
        "type": {"anyOf": [_SIMPLE_TYPE, {"type": "array", "items": _SIMPLE_TYPE, "minItems": 1, "uniqueItems": True}]},
        **dict.fromkeys(_SCHEMA_MAPS, _SCHEMA_MAP),
        **dict.fromkeys(_SCHEMA_LISTS, _SCHEMA_ARRAY),
        **dict.fromkeys(("items", "additionalProperties"), {"$ref": "#"}),
        "required": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "enum": {"type": "array"},
        **dict.fromkeys(_COUNTS, _NON_NEGATIVE),
        **dict.fromkeys(_BOUNDS, {"type": "number"}),
        **dict.fromkeys(("pattern", "format", "$ref"), {"type": "string"}),
        "uniqueItems": {"type": "boolean"},
    },
}
_META_VALIDATOR = Draft202012Validator(_META_SCHEMA)
# The restricted meta-schema uses only draft-07 keywords, so fastjsonschema can compile it.
_FAST_META_CHECK = fastjsonschema.compile({"$schema": "http://json-schema.org/draft-07/schema#", **_META_SCHEMA})


Schema = dict[str, Any] | bool


def normalize_schema(schema: Mapping[str, Any], *, tool: str) -> dict[str, Any]:
    """Return the normalized copy of a tool's parameter schema (an object schema).

    Args:
        schema: The parameters as given (JSON Schema, possibly in a BFCL or OpenAPI dialect).
        tool: The tool's name, for error messages.

    Returns:
        A new dict with ``"type": "object"`` at the top (added when only ``properties`` is given).

    Raises:
        UnsupportedSchemaError: A keyword (or keyword value) the compiler cannot enforce.
        InvalidSchemaError: Not an object schema, not valid JSON Schema, or no value satisfies it.
    """
    if not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"parameters must be an object schema, got {type(schema).__name__}", tool=tool)
    return cast(dict[str, Any], _normalize(schema, tool, top_object=True))  # a dict, or it raised


def normalize_any_schema(schema: Any, *, tool: str | None = None) -> Schema:
    """Normalize any JSON Schema, not only an object one (for schema corpora and nested use)."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", tool=tool)
    return _normalize(schema, tool, top_object=False)


def _normalize(schema: Mapping[str, Any], tool: str | None, *, top_object: bool) -> Schema:
    normalizer = _Normalizer(schema, tool)
    out: Schema = normalizer.schema(schema, "")
    _relocate_dropped_targets(out, schema, normalizer)
    if top_object:
        if not isinstance(out, dict):
            raise InvalidSchemaError("parameters must be an object schema, got a boolean schema", tool=tool)
        if "type" not in out and "properties" in out:
            out = {"type": "object", **out}
        if out.get("type") != "object":
            found = f"type {out['type']!r}" if "type" in out else "neither 'type' nor 'properties'"
            raise InvalidSchemaError(f"parameters must be an object schema (type 'object'), found {found}", tool=tool)
    if isinstance(out, dict):
        _Checker(out, schema, tool).check()
    return out


def is_satisfiable(schema: Schema, root: Schema, depth: int = 0) -> bool:
    """Whether some JSON value can satisfy ``schema`` (a normalized subschema of ``root``).

    A sound approximation for what matters here: an object whose required property is
    unsatisfiable, an ``anyOf``/``oneOf`` whose branches all are, an ``allOf`` with one that is, an
    array whose required items are. Following more than ``MAX_REF_DEPTH - depth`` ``$ref`` in a
    chain counts as unsatisfiable, which is how recursive schemas without a base case are caught.
    """
    return _unsatisfiable(schema, root, "", depth) is None


def split_pattern_anchors(pattern: str) -> tuple[str, bool, bool]:
    """Split a leading ``^`` and a trailing unescaped ``$`` off a JSON Schema pattern.

    JSON Schema patterns match anywhere in the string and ``interegular`` parses no anchors, so
    the pattern check parses the body, and ``automata.regex.anchored`` builds on it.

    Returns:
        ``(body, anchored_at_start, anchored_at_end)``.
    """
    start = pattern.startswith("^")
    body = pattern[1:] if start else pattern
    backslashes = len(body[:-1]) - len(body[:-1].rstrip("\\"))
    end = body.endswith("$") and backslashes % 2 == 0
    return (body[:-1] if end else body), start, end


def _pointer(parent: str, token: str | int) -> str:
    return f"{parent}/{str(token).replace('~', '~0').replace('/', '~1')}"


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    return {x for x in t if isinstance(x, str)} if isinstance(t, list) else None


def _resolve(root: Any, ref: str) -> Any:
    """The value a local ``#/...`` reference points to in ``root``, or ``_MISSING``."""
    node = root
    for raw in ref[2:].split("/") if ref != "#" else []:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


class _Normalizer:
    """First pass: rebuild the schema, mapping dialects and rejecting unsupported keywords."""

    def __init__(self, root: Mapping[str, Any], tool: str | None) -> None:
        self.root = root
        self.tool = tool

    def unsupported(self, message: str, pointer: str, keyword: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    def schema(self, node: Any, ptr: str) -> Any:
        if not isinstance(node, Mapping):
            return copy.deepcopy(node)  # a bool schema, or garbage that check_schema reports
        out: dict[str, Any] = {}
        for key, value in node.items():
            kp = _pointer(ptr, key)
            if key in UNSUPPORTED_KEYWORDS:
                raise self.unsupported(UNSUPPORTED_KEYWORDS[key], kp, key)
            if key == "uniqueItems" and value is True:
                raise self.unsupported(f"uniqueness cannot be enforced while decoding; {_REMOVE}", kp, key)
            if key == "uniqueItems" and value is not False:
                out[key] = copy.deepcopy(value)  # not a boolean: check_schema reports it
            elif key == "items" and isinstance(value, list):  # draft-4 tuple form
                out["prefixItems"] = [self.schema(v, _pointer(kp, i)) for i, v in enumerate(value)]
                if "additionalItems" in node:
                    out["items"] = self.schema(node["additionalItems"], _pointer(ptr, "additionalItems"))
            elif key in SUPPORTED_KEYWORDS:
                out[key] = self.keyword(key, value, kp)
        if out.get("type") == "any":
            del out["type"]  # BFCL's any type: any JSON value
        if node.get("nullable") is True and "type" in out:
            listed = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
            out["type"] = listed + ["null"] if "null" not in listed else out["type"]
        if "format" in out:
            types = _types(out)
            if types is not None and "string" not in types:
                del out["format"]  # format only constrains strings
            elif isinstance(out["format"], str) and out["format"] not in SUPPORTED_FORMATS:
                raise self.unsupported(
                    f"format {out['format']!r} is not supported (supported: {', '.join(sorted(SUPPORTED_FORMATS))});"
                    f" remove it, use a 'pattern', or check it in the tool", _pointer(ptr, "format"), "format")
        if list(out) == ["allOf"] and isinstance(out["allOf"], list) and len(out["allOf"]) == 1 \
                and isinstance(out["allOf"][0], (dict, bool)):
            return out["allOf"][0]  # {"allOf": [S]} is S (pydantic v1 wraps described $refs so)
        return out

    def keyword(self, key: str, value: Any, kp: str) -> Any:
        if key == "type":
            return self.type(value)
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            return {name: self.schema(sub, _pointer(kp, name)) for name, sub in value.items()}
        if key in _SCHEMA_LISTS and isinstance(value, list):
            return [self.schema(sub, _pointer(kp, i)) for i, sub in enumerate(value)]
        if key in ("items", "additionalProperties"):
            return self.schema(value, kp)
        if key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            raise self.unsupported(
                f"a boolean {key} is draft-4 syntax; write '{key}': <number> instead of"
                f" '{'minimum' if key == 'exclusiveMinimum' else 'maximum'}' plus '{key}': true", kp, key)
        if key in _BOUNDS and isinstance(value, float) and not value.is_integer():
            raise self.unsupported(
                f"bound {value!r} is not an integer and the compiler enforces integer bounds only;"
                f" round it or enforce it in the tool", kp, key)
        if key in _BOUNDS + _COUNTS and isinstance(value, float) and value.is_integer():
            return int(value)
        if key == "$ref" and isinstance(value, str) and not (value == "#" or value.startswith("#/")):
            what = "anchor references are not supported" if value.startswith("#") else \
                "only local references ('#/...') are supported"
            raise self.unsupported(f"{value!r}: {what}; inline the referenced schema or put it under '$defs'", kp, key)
        return copy.deepcopy(value)

    @staticmethod
    def type(value: Any) -> Any:
        if isinstance(value, str):
            return _BFCL_TYPES.get(value, value)
        if not isinstance(value, list):
            return copy.deepcopy(value)
        mapped = [_BFCL_TYPES.get(t, t) if isinstance(t, str) else t for t in value]
        if "any" in mapped:
            return "any"  # any JSON value; the caller drops it below
        deduped = [t for i, t in enumerate(mapped) if t not in mapped[:i]]
        return deduped[0] if len(deduped) == 1 else deduped


class _Checker:
    """Second pass on the normalized schema: validity, value-level support, satisfiability."""

    def __init__(self, root: dict[str, Any], original: Mapping[str, Any], tool: str | None) -> None:
        self.root = root
        self.original = original
        self.tool = tool

    def invalid(self, message: str, pointer: str) -> InvalidSchemaError:
        return InvalidSchemaError(message, tool=self.tool, pointer=pointer)

    def unsupported(self, message: str, pointer: str, keyword: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    def check(self) -> None:
        error = None
        try:
            _FAST_META_CHECK(self.root)  # compiled: ~50x faster on the common, valid case
        except fastjsonschema.JsonSchemaException:
            error = best_match(_META_VALIDATOR.iter_errors(self.root))  # precise message and path
        if error is not None:
            pointer = "".join(_pointer("", p) for p in error.absolute_path)
            raise self.invalid(f"not a valid JSON Schema (draft 2020-12): {error.message}", pointer)
        self.schema_pointers = {ptr for _, ptr in _walk_all(self.root, "")}
        for schema, ptr in _walk(self.root, ""):
            self.check_one(schema, ptr)
        found = _unsatisfiable(self.root, self.root, "", 0)
        if found is not None:
            raise self.invalid(
                f"no value satisfies this schema ({found[1]}); a required property, every anyOf/oneOf"
                f" branch, an allOf branch or a required array item is unsatisfiable", found[0])

    def check_one(self, s: dict[str, Any], ptr: str) -> None:
        if "pattern" in s:
            self.check_pattern(s["pattern"], _pointer(ptr, "pattern"))
        if "enum" in s and not s["enum"]:
            raise self.invalid("'enum' is empty, so no value is allowed", _pointer(ptr, "enum"))
        for lo, hi in (("minLength", "maxLength"), ("minItems", "maxItems")):
            if lo in s and hi in s and s[lo] > s[hi]:
                raise self.invalid(f"{lo} {s[lo]} > {hi} {s[hi]}, so no value is allowed", _pointer(ptr, lo))
        self.check_range(s, ptr)
        if s.get("additionalProperties") is False:
            props = s.get("properties", {})
            for name in s.get("required", []):
                if name not in props:
                    raise self.invalid(
                        f"required property {name!r} is not in 'properties' and additionalProperties is false",
                        _pointer(ptr, "required"))
        if "$ref" in s:
            ref = s["$ref"]
            if _resolve(self.root, ref) is _MISSING:
                raise self.invalid(f"$ref {ref!r} has no target", _pointer(ptr, "$ref"))
            if unquote(ref[1:]) not in self.schema_pointers:
                raise self.invalid(f"$ref {ref!r} does not point to a schema", _pointer(ptr, "$ref"))
        for i, branch in enumerate(s.get("allOf", [])):
            self.check_allof_branch(branch, _pointer(_pointer(ptr, "allOf"), i), 0)
        if "oneOf" in s:
            self.check_oneof(s, ptr)

    def check_oneof(self, s: dict[str, Any], ptr: str) -> None:
        """oneOf needs exactly one branch to match; the compiler can only promise that when no
        value can match two branches: their JSON types differ, or they list different constants.
        Otherwise generation could produce a value that matches two branches, which is invalid."""
        parent = _types(s) or set(_ALL_TYPES)
        branches = s["oneOf"]
        for i in range(len(branches)):
            for j in range(i + 1, len(branches)):
                a, b = branches[i], branches[j]
                if not (_type_set(a, self.root, parent) & _type_set(b, self.root, parent)):
                    continue
                va, vb = _constants(a, self.root), _constants(b, self.root)
                if va is not None and vb is not None and not (va & vb):
                    continue
                raise self.unsupported(
                    f"branches {i} and {j} may both match one value, and tooldec cannot promise that"
                    f" exactly one does: use anyOf if overlap is fine, or make the branches differ in"
                    f" type or constant values", _pointer(ptr, "oneOf"), "oneOf")

    def check_pattern(self, pattern: str, ptr: str) -> None:
        """Invalid if it is no regex at all; unsupported if ``interegular`` cannot compile it.

        Python's ``re`` is not the judge of validity: JSON Schema patterns are ECMA-262 regexes,
        and some valid ones (``\\p{L}``) are not Python regexes.
        """
        try:
            interegular.parse_pattern(split_pattern_anchors(pattern)[0])
        except (interegular.patterns.Unsupported, interegular.patterns.InvalidSyntax, ValueError) as err:
            try:
                re.compile(pattern)
            except re.error as re_err:
                if isinstance(err, interegular.patterns.InvalidSyntax):
                    raise self.invalid(f"pattern {pattern!r} is not a regular expression: {re_err}", ptr) from None
            raise self.unsupported(f"pattern {pattern!r} cannot be compiled ({type(err).__name__}: {err});"
                                   f" simplify it or enforce it in the tool", ptr, "pattern") from None

    def check_range(self, s: dict[str, Any], ptr: str) -> None:
        lows = [(s[k], k == "exclusiveMinimum") for k in ("minimum", "exclusiveMinimum") if k in s]
        highs = [(s[k], k == "exclusiveMaximum") for k in ("maximum", "exclusiveMaximum") if k in s]
        if not lows or not highs:
            return
        if _types(s) == {"integer"}:
            lo = max(v + 1 if strict else v for v, strict in lows)
            hi = min(v - 1 if strict else v for v, strict in highs)
            empty = lo > hi
        else:
            lo, lo_strict = max(lows, key=lambda b: (b[0], b[1]))
            hi, hi_strict = min(highs, key=lambda b: (b[0], not b[1]))
            empty = lo > hi or (lo == hi and (lo_strict or hi_strict))
        if empty:
            bounds = ", ".join(f"{k} {s[k]}" for k in _BOUNDS if k in s)
            raise self.invalid(f"the numeric range is empty ({bounds})", ptr or "/")

    def check_allof_branch(self, branch: Schema, ptr: str, depth: int) -> None:
        """The compiler merges allOf branches as objects, so each must be an object schema."""
        if isinstance(branch, bool) or depth > MAX_REF_DEPTH:
            return
        extra = sorted(set(branch) - _ALLOF_OBJECT_KEYWORDS)
        if extra or branch.get("type", "object") != "object":
            what = f"keyword {extra[0]!r}" if extra else f"type {branch['type']!r}"
            raise self.unsupported(
                f"branch {ptr} is not an object schema (it has {what}); the compiler merges object"
                f" branches only: write the schema without allOf", ptr, "allOf")
        if "$ref" in branch:
            target = _resolve(self.root, branch["$ref"])
            if isinstance(target, (dict, bool)):
                self.check_allof_branch(target, ptr, depth + 1)
        for i, sub in enumerate(branch.get("allOf", [])):
            self.check_allof_branch(sub, _pointer(_pointer(ptr, "allOf"), i), depth)


_ALL_TYPES = ("string", "number", "integer", "boolean", "null", "array", "object")


def _type_set(schema: Schema, root: Schema, parent: set[str], depth: int = 0) -> set[str]:
    """The JSON types a branch can match (integer counts as a number)."""
    if schema is True:
        return set(parent)
    if schema is False or not isinstance(schema, dict):
        return set()
    if "$ref" in schema and depth < MAX_REF_DEPTH:
        target = _resolve(root, schema["$ref"])
        if isinstance(target, (dict, bool)):
            return _type_set(target, root, parent, depth + 1)
    if "type" in schema:
        found = {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
    elif "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        found = {_json_type(v) for v in values}
    else:
        found = set(_ALL_TYPES)
    if "number" in found:
        found.add("integer")
    if "integer" in found:
        found.add("number")
    return found & (parent | ({"number", "integer"} if parent & {"number", "integer"} else set()))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "object")


def _constants(schema: Schema, root: Schema, depth: int = 0) -> set[str] | None:
    """The values a branch allows (JSON text), when it lists them (const or enum)."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema and depth < MAX_REF_DEPTH:
        target = _resolve(root, schema["$ref"])
        return _constants(target, root, depth + 1) if isinstance(target, (dict, bool)) else None
    if "const" in schema:
        return {json.dumps(schema["const"], sort_keys=True)}
    if "enum" in schema:
        return {json.dumps(v, sort_keys=True) for v in schema["enum"]}
    return None


def _relocate_dropped_targets(out: Schema, original: Mapping[str, Any], normalizer: _Normalizer) -> None:
    """Copy ``$ref`` targets that the first pass dropped under ``$defs`` and point the refs there.

    A reference may point anywhere in a document, also under a vendor keyword that is dropped
    (``"#/resourceDefinitions/x"``) or into a draft-4 ``items`` list that became ``prefixItems``.
    """
    if not isinstance(out, dict):
        return
    moved: dict[str, str] = {}
    while True:
        pending = [s for s, _ in _walk(out, "") if isinstance(s.get("$ref"), str) and s["$ref"].startswith("#/")
                   and (s["$ref"] in moved or _resolve(out, s["$ref"]) is _MISSING)]
        if not pending:
            return
        for schema in pending:
            ref = schema["$ref"]
            if ref not in moved:
                target = _resolve(original, ref)
                defs = out.setdefault("$defs", {})
                if not isinstance(target, (Mapping, bool)) or not isinstance(defs, dict):
                    return  # the checker reports the dangling reference
                name = unquote(ref[2:])
                while name in defs:
                    name += "_"
                moved[ref] = "#" + _pointer("/$defs", name)
                defs[name] = normalizer.schema(target, ref[1:])
            schema["$ref"] = moved[ref]


def _walk(node: Any, ptr: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every subschema (dict) of a normalized schema with its pointer; ``$ref`` is not followed."""
    return ((sub, p) for sub, p in _walk_all(node, ptr) if isinstance(sub, dict))


def _walk_all(node: Any, ptr: str) -> Iterator[tuple[Schema, str]]:
    """Like :func:`_walk`, boolean subschemas included."""
    if isinstance(node, bool):
        yield node, ptr
    if not isinstance(node, dict):
        return
    yield node, ptr
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                yield from _walk_all(sub, _pointer(_pointer(ptr, key), name))
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                yield from _walk_all(sub, _pointer(_pointer(ptr, key), i))
    for key in ("items", "additionalProperties"):
        if key in node:
            yield from _walk_all(node[key], _pointer(ptr, key))


def _unsatisfiable(schema: Schema, root: Schema, ptr: str, depth: int) -> tuple[str, str] | None:
    """``(pointer, reason)`` of a subschema no value satisfies, or ``None`` if satisfiable."""
    if schema is True or schema is False:
        return None if schema else (ptr, "the schema is false")
    if "$ref" in schema:
        if depth >= MAX_REF_DEPTH:
            return _pointer(ptr, "$ref"), f"$ref chain deeper than MAX_REF_DEPTH={MAX_REF_DEPTH}"
        ref = schema["$ref"]
        found = _unsatisfiable(_resolve(root, ref), root, ref[1:], depth + 1)
        if found is not None:
            return found
    for i, sub in enumerate(schema.get("allOf", [])):
        found = _unsatisfiable(sub, root, _pointer(_pointer(ptr, "allOf"), i), depth)
        if found is not None:
            return found
    for key in ("anyOf", "oneOf"):
        if key in schema:
            failures = [_unsatisfiable(sub, root, _pointer(_pointer(ptr, key), i), depth)
                        for i, sub in enumerate(schema[key])]
            if all(failures):
                return failures[0] or (_pointer(ptr, key), f"every {key} branch is unsatisfiable")
    types = _types(schema)
    failed: dict[str, tuple[str, str]] = {}
    if types is None or "object" in types:
        props, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
        for name in schema.get("required", []):
            sub_ptr = _pointer(_pointer(ptr, "properties"), name) if name in props else _pointer(ptr, "additionalProperties")
            found = _unsatisfiable(props.get(name, extra), root, sub_ptr, depth)
            if found is not None:
                failed["object"] = found
                break
    if types is None or "array" in types:
        prefix, rest = schema.get("prefixItems", []), schema.get("items", True)
        for i in range(min(schema.get("minItems", 0), len(prefix) + 1)):
            sub, sub_ptr = ((prefix[i], _pointer(_pointer(ptr, "prefixItems"), i)) if i < len(prefix)
                            else (rest, _pointer(ptr, "items")))
            found = _unsatisfiable(sub, root, sub_ptr, depth)
            if found is not None:
                failed["array"] = found
                break
    if types is not None and types <= set(failed):
        return next(iter(failed.values()))
    return None
