"""What the schema normalizer reads, drops and refuses: keyword lists and nesting limits, one short module a user
may consult, importable without the reader's dependencies."""

from __future__ import annotations

from collections.abc import Mapping

from tooldec.automata.regex import FORMAT_PATTERNS

__all__ = ["ANNOTATION_KEYWORDS", "BFCL_TYPES", "BOUND_KEYWORDS", "COUNT_KEYWORDS", "MAX_DEPTH", "MAX_REF_DEPTH",
           "REMOVE_ADVICE", "SUPPORTED_FORMATS", "SUPPORTED_KEYWORDS", "UNSUPPORTED_KEYWORDS"]

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

REMOVE_ADVICE = "remove it or enforce it in the tool"
"""The advice closing a refusal whose constraint the tool can check itself."""
#: Keywords that constrain values but that the compiler cannot enforce, with what to do instead.
UNSUPPORTED_KEYWORDS: Mapping[str, str] = {
    **{k: f"conditionals cannot be enforced while decoding; {REMOVE_ADVICE}" for k in ("if", "then", "else")},
    "propertyNames": f"constraints on all property names cannot be enforced while decoding; {REMOVE_ADVICE}",
    **{k: f"'contains' constraints cannot be enforced while decoding; {REMOVE_ADVICE}"
       for k in ("contains", "minContains", "maxContains")},
    **{k: f"'unevaluated' keywords need annotation tracking tooldec does not do; {REMOVE_ADVICE}"
       for k in ("unevaluatedProperties", "unevaluatedItems")},
    **{k: "dynamic references are not supported; use a local '$ref' to '#/$defs/...'"
       for k in ("$dynamicRef", "$recursiveRef")},
}

SUPPORTED_FORMATS = frozenset(FORMAT_PATTERNS)
"""String formats written exactly as ``jsonschema``'s checker reads them."""

BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
COUNT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
